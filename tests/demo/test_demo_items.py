"""The demo benchmark: every item valid, quotas held, plates stable, image answers true to plates.

These are the items an art historian sees first, and the image questions are only honest if the
gold answer is what the generated plate actually shows; so the gold is checked against the
generator's own parameters (and, for grids and perspective, against the rendered pixels).
"""
from __future__ import annotations

import io
import json
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from eduart_core.items import validate_item
from eduart_core.plates import HORIZON_FRACTION, PLATES, PRIMARY, VP_FRACTION, render_plate, value_words, write_plates
from eduart_core.vocab import EDUART_FORMATS as ITEM_TYPES

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
CHOICE_TYPES = {"multiple_choice_radio", "multiple_choice_check", "true_false"}
BLANK_TYPES = {"positioning", "completion_closed", "completion_open"}


def _load() -> list[dict]:
    lines = (DEMO / "items.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


ITEMS = _load()
PLATE_FILES = {f"plates/{spec.filename}": name for name, spec in PLATES.items()}


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFD", str(text).strip().lower())
    return "".join(ch for ch in text if not unicodedata.combining(ch))


def test_every_demo_item_validates_with_its_image():
    for record in ITEMS:
        validate_item(record, image_exists=PLATE_FILES.__contains__)


def test_item_ids_are_unique_and_numbered():
    ids = [r["item_id"] for r in ITEMS]
    assert len(ids) == len(set(ids))
    assert all(i.startswith("demo-") and len(i) == 9 for i in ids)


def test_quotas_hold():
    types = Counter(r["type"] for r in ITEMS)
    langs = Counter(r["language"] for r in ITEMS)
    italian_types = {r["type"] for r in ITEMS if r["language"] == "it"}
    radio_langs = {r["language"] for r in ITEMS if r["type"] == "multiple_choice_radio"}
    assert len(ITEMS) >= 72
    assert all(types[t] >= 8 for t in ITEM_TYPES), types
    assert langs["en"] >= 20 and langs["it"] >= 40, langs
    assert italian_types == set(ITEM_TYPES)
    assert radio_langs == {"it", "en"}


def test_images_quota_shared_and_decorative():
    with_image = [r for r in ITEMS if r["has_image"]]
    assert len(with_image) >= 25
    shared = [img for img, n in Counter(r["image"] for r in with_image).items() if n > 1]
    assert len(shared) >= 3 and all(img in PLATE_FILES for img in shared)
    assert sum(r.get("image_role") == "decorative" for r in with_image) >= 3


def test_every_image_points_to_a_generated_plate():
    for record in ITEMS:
        if record["has_image"]:
            assert record["image"] in PLATE_FILES, record["item_id"]
            assert PLATE_FILES[record["image"]] == record["plate"], record["item_id"]
        else:
            assert record["image"] is None and "plate" not in record


def test_source_and_numbering_follow_the_exercise():
    for record in ITEMS:
        assert record["source"] == f"demo/{record['exercise']}"
        assert isinstance(record["question"], int) and record["instructions"]


def test_closed_blanks_have_two_options_and_word_banks_have_distractors():
    for record in ITEMS:
        if record["type"] == "completion_closed":
            assert all(len(c["options"]) == 2 for c in record["choices"])
        if record["type"] == "positioning":
            assert len(record["choices"]) > len(record["answers"]), record["item_id"]


def test_select_errors_plant_two_to_four_errors_with_corrections():
    for record in ITEMS:
        if record["type"] == "select_errors":
            assert 2 <= len(record["answers"]) <= 4, record["item_id"]
            for entry in record["answers"]:
                assert record["question_text"].count(entry["error"]) == 1, entry
                assert entry["correct"] and entry["correct"] != entry["error"]


def test_true_false_items_mix_verdicts():
    for record in ITEMS:
        if record["type"] == "true_false":
            verdicts = {a["text"] for a in record["answers"]}
            assert 3 <= len(record["answers"]) <= 5 and verdicts == {"True", "False"}


def test_image_questions_have_a_check_against_the_plate():
    questions = [r for r in ITEMS if r["has_image"] and r.get("image_role") != "decorative"]
    assert len(questions) >= 22
    assert all(r.get("plate_check") for r in questions)


def _matches(params: dict, param: str, value) -> bool:
    return params[param] == value


@pytest.mark.parametrize("record", [r for r in ITEMS if r.get("plate_check")],
                         ids=lambda r: r["item_id"])
def test_image_answer_matches_plate_parameters(record):
    params = PLATES[record["plate"]].params
    check = record["plate_check"]
    if record["type"] in CHOICE_TYPES:
        if record["type"] == "true_false":
            gold = {a["id"] for a in record["answers"] if a["text"] == "True"}
        else:
            gold = {a["id"] for a in record["answers"]}
        for ident, (param, value) in check.items():
            assert (ident in gold) == _matches(params, param, value), (ident, param, value)
    elif record["type"] in BLANK_TYPES:
        gold = {a["id"]: a["description"] for a in record["answers"]}
        for ident, (param,) in check.items():
            words = {_fold(w) for w in value_words(params[param], record["language"])}
            assert _fold(gold[ident]) in words, (ident, gold[ident], params[param])
    else:
        pytest.fail(f"plate_check is not defined for {record['type']}")


@pytest.mark.parametrize("name", sorted(PLATES))
def test_plates_regenerate_byte_identically(name):
    first, second = render_plate(name), render_plate(name)
    assert first == second
    spec = PLATES[name]
    image = Image.open(io.BytesIO(first))
    assert image.format == spec.format and image.size == spec.size
    assert 400 <= min(spec.size) and max(spec.size) <= 1600


def test_write_plates_writes_every_file(tmp_path):
    written = write_plates(tmp_path / "plates")
    assert set(written) == set(PLATES)
    for name, path in written.items():
        assert path.name == PLATES[name].filename and path.read_bytes() == render_plate(name)


def _pixel_share(image: Image.Image, colour: tuple[int, int, int]) -> int:
    return sum(1 for px in image.getdata() if px == colour)


@pytest.mark.parametrize("name", [n for n, s in PLATES.items() if s.kind == "primary_grid"])
def test_grid_dominant_colour_is_what_the_pixels_show(name):
    image = Image.open(io.BytesIO(render_plate(name))).convert("RGB")
    counts = {c: _pixel_share(image, rgb) for c, rgb in PRIMARY.items()}
    assert max(counts, key=counts.__getitem__) == PLATES[name].params["dominant"]


@pytest.mark.parametrize("name", [n for n, s in PLATES.items() if s.kind == "horizon"])
def test_horizon_larger_area_follows_horizon_height(name):
    params = PLATES[name].params
    sky_share = HORIZON_FRACTION[params["horizon"]]
    assert params["larger_area"] == ("sky" if sky_share > 0.5 else "land")


@pytest.mark.parametrize("name", [n for n, s in PLATES.items() if s.kind == "light_direction"])
def test_sphere_is_brighter_on_the_lit_side(name):
    image = Image.open(io.BytesIO(render_plate(name))).convert("L")
    w, h = image.size
    r = round(min(w, h) * 0.2)
    cx, cy = round(w * 0.36), round(h * 0.72) - r
    left, right = image.getpixel((cx - r // 2, cy)), image.getpixel((cx + r // 2, cy))
    lit = "left" if left > right else "right"
    assert lit == PLATES[name].params["light"]


@pytest.mark.parametrize("name", [n for n, s in PLATES.items() if s.kind == "one_point_perspective"])
def test_vanishing_point_marker_sits_where_params_say(name):
    spec = PLATES[name]
    w, h = spec.size
    vx = round(w * VP_FRACTION[spec.params["vanishing_point"]])
    hy = round(h * HORIZON_FRACTION[spec.params["horizon"]])
    image = Image.open(io.BytesIO(render_plate(name))).convert("RGB")
    r = max(8, w // 90)
    ring = [image.getpixel((vx + dx, hy)) for dx in (-r, r)]
    assert all(px[0] > 150 and px[1] < 110 for px in ring), ring


def test_demo_items_import_into_a_real_store_with_their_plates(store, tmp_path):
    from eduart_core.scoring.item_writes import upsert_items
    from eduart_core.store.items import load_items

    write_plates(tmp_path / "demo" / "plates")
    upsert_items(store, ITEMS, dataset="demo", origin="demo", images_root=tmp_path / "demo")
    frame = load_items(store, "demo")
    assert len(frame) == len(ITEMS)
    with_image = frame[frame["has_image"]]
    assert len(with_image) == sum(r["has_image"] for r in ITEMS)
    assert with_image["image_hash"].notna().all()
    used_plates = {r["plate"] for r in ITEMS if r["has_image"]}
    assert with_image["image_hash"].nunique() == len(used_plates)


def test_plates_are_identical_in_a_fresh_process():
    """Same bytes on every run, not only within one process (no hidden state or randomness)."""
    import hashlib
    import subprocess
    import sys

    code = ("import hashlib; from eduart_core.plates import PLATES, render_plate; "
            "print('\\n'.join(n + ' ' + hashlib.sha256(render_plate(n)).hexdigest() for n in PLATES))")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    here = [f"{n} {hashlib.sha256(render_plate(n)).hexdigest()}" for n in PLATES]
    assert out == here
