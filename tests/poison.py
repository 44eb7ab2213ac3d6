"""Poisoned inputs for the adversarial tests, generated small in tmp folders.

Written for this project: made-up items (none is an EduArt exam question). Every poison is a few
bytes or kilobytes: the "20000 x 20000" PNG only declares its size, the deep JSON is 200 kB.
"""
from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path

from PIL import Image

MODEL_DIR = "acme_made-up-vision-1"


def png_bytes(size: tuple[int, int] = (24, 16), colour: tuple[int, int, int] = (180, 40, 40)) -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise(size, 60).convert("RGB").save(buffer, format="PNG")  # noise: not compressible to nothing
    return buffer.getvalue()


def png_declaring(width: int, height: int) -> bytes:
    """A tiny PNG whose header declares ``width`` x ``height`` pixels (an image bomb's header)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
            + chunk(b"IEND", b""))


def truncated_png() -> bytes:
    data = png_bytes((64, 64))
    return data[: len(data) // 2]


def deep_json(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def radio(item_id: str, image: str | None = None, text: str | None = None) -> dict:
    """A made-up single-answer item."""
    return {"type": "multiple_choice_radio", "item_id": item_id,
            "question_text": text or f"Which invented colour does made-up panel {item_id} use?",
            "choices": [{"id": "A", "text": "ochre"}, {"id": "B", "text": "teal"}],
            "answers": [{"id": "A", "description": "ochre"}], "language": "en",
            "source": "made-up/hardening", "has_image": image is not None, "image": image}


def answer(item_id: str, tokens_in=100, tokens_out=20, raw: str | None = None) -> dict:
    raw = raw if raw is not None else json.dumps({"Answers": [{"id": "A"}]})
    return {"question_id": item_id, "question_type": "multiple_choice_radio", "model_name": MODEL_DIR,
            "prompt_condition": "default", "llm_answer": [{"id": "A"}], "raw_response": raw,
            "input_tokens": tokens_in, "output_tokens": tokens_out, "processing_time": 1.0}


def write_json(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def poisoned_layout(root: Path) -> dict[str, str]:
    """A published-layout folder with good files and one poisoned file per kind.

    Returns {poisoned path relative to root: the words its skip reason must contain}. Items
    0001-0004 and their answers are good; everything listed is bad.
    """
    meta = root / "dataset" / "metadata"
    imgs = root / "dataset" / "imgs"
    answers = root / "answers" / MODEL_DIR / "default"
    imgs.mkdir(parents=True)
    (imgs / "good.png").write_bytes(png_bytes())
    (imgs / "bomb.png").write_bytes(png_declaring(20000, 20000))
    (imgs / "truncated.png").write_bytes(truncated_png())
    (imgs / "text.png").write_bytes(b"this is not an image at all")
    good = {"0001": "imgs/good.png", "0002": None, "0003": None, "0004": None}
    for item_id, image in good.items():
        write_json(meta / f"{item_id}.json", radio(item_id, image))
        write_json(answers / f"{item_id}.json", answer(item_id))
    # items whose record is fine but whose image file is poisoned: kept, flagged, image refused
    for item_id, image in (("0010", "imgs/bomb.png"), ("0011", "imgs/truncated.png"), ("0012", "imgs/text.png")):
        write_json(meta / f"{item_id}.json", radio(item_id, image))
    bad = {
        "dataset/metadata/0005.json": "nested too deeply",
        "dataset/metadata/0006.json": "lone surrogate",
        "dataset/metadata/0007.json": "not UTF-8",
        "dataset/metadata/0008.json": "characters exceeds the limit",
        "dataset/metadata/0013.json": "exceeds the limit of 0.5 MB (EDUART_MAX_FILE_MB)",
        "answers/" + MODEL_DIR + "/default/0009.json": "no item 0009",
        "dataset/imgs/bomb.png": "exceeds the limit",
        "dataset/imgs/truncated.png": "broken image data",
        "dataset/imgs/text.png": "not a readable image",
        "answers/" + MODEL_DIR + "/default/abc.json": "not <item id>.json",
        "answers/" + MODEL_DIR + "/default/0001 copy.json": "not <item id>.json",
        "answers/" + MODEL_DIR + "/default/notes.txt": "not an answer file",
        "answers/" + MODEL_DIR + "/Default": "unknown condition folder",
    }
    write_json(meta / "0005.json", deep_json())
    (meta / "0006.json").write_text(json.dumps(radio("0006", text="ok \ud800 broken"), ensure_ascii=True),
                                    encoding="utf-8")
    (meta / "0007.json").write_bytes(b'{"type": "true_false", "question_text": "caf\xe9"}')
    write_json(meta / "0008.json", radio("0008", text="x" * 5_000))  # over the test's EDUART_MAX_TEXT_CHARS
    write_json(meta / "0013.json", json.dumps(radio("0013")) + " " * 700_000)  # over the test's EDUART_MAX_FILE_MB
    write_json(answers / "0009.json", answer("0009"))
    write_json(answers / "abc.json", answer("0001"))
    write_json(answers / "0001 copy.json", answer("0001"))
    (answers / "notes.txt").write_text("not an answer", encoding="utf-8")
    write_json(root / "answers" / MODEL_DIR / "Default" / "0001.json", answer("0001"))
    # answers to good items with impossible token counts: the answer file is skipped and named
    motivation = root / "answers" / MODEL_DIR / "motivation"
    write_json(motivation / "0001.json", '{"input_tokens": Infinity, "output_tokens": 3, "raw_response": "x"}')
    write_json(motivation / "0002.json", dict(answer("0002"), input_tokens=1e30))
    write_json(motivation / "0003.json", dict(answer("0003"), output_tokens=2**70))
    write_json(motivation / "0004.json", answer("0004"))  # good
    bad.update({
        "answers/" + MODEL_DIR + "/motivation/0001.json": "Infinity",
        "answers/" + MODEL_DIR + "/motivation/0002.json": "not a token count",
        "answers/" + MODEL_DIR + "/motivation/0003.json": "out of range",
    })
    # bookkeeping that is silently ignored (formats doc section 2)
    write_json(answers / "_evaluation.json", {})
    (root / "answers" / MODEL_DIR / "run.log").write_text("log", encoding="utf-8")
    (root / "answers" / MODEL_DIR / "reproducibility").mkdir()
    return bad
