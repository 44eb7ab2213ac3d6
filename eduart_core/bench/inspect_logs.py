"""`bench import --inspect`: wall time, CPU time and peak memory of `import-inspect` on a large log.

The log is made from a real one: Inspect itself runs a one-sample multiple-choice task offline
(``mockllm/model`` with ``custom_outputs``, usage set so no tokenizer is downloaded), and its
``.eval`` archive is the template whose sample entry is repeated with new ids, questions, answers
and scores, the header listing them. Only the sample count is ours; every byte layout is Inspect's,
and the import reads it back with Inspect's own reader. Placeholder text, never exam content. Needs
``inspect-ai`` (requirements-harness.txt). Target: 100,000 samples in under 1 GB peak memory, with a
progress line per batch.
"""
from __future__ import annotations

import json
import random
import statistics
import tempfile
import zipfile
from pathlib import Path

LETTERS = "ABCD"


def _template(folder: Path) -> Path:
    """A one-sample .eval log written by Inspect itself (offline)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice

    output = ModelOutput.from_content(model="mockllm/model", content="ANSWER: A")
    output.usage = ModelUsage(input_tokens=30, output_tokens=3, total_tokens=33)
    task = Task(name="bench_mc", dataset=[Sample(id="1", input="Placeholder question 1?",
                                                 choices=["One", "Two", "Three", "Four"], target="A")],
                solver=multiple_choice(), scorer=choice())
    logs = eval(task, model=get_model("mockllm/model", custom_outputs=[output]), log_dir=str(folder),
                display="none")
    if logs[0].status != "success":
        raise SystemExit(f"Inspect could not write the template log: {logs[0].error}")
    return Path(logs[0].location)


def write_log(path: Path, samples: int, epochs: int, seed: int = 0) -> int:
    """An Inspect .eval log of ``samples`` x ``epochs`` entries cloned from Inspect's own template."""
    rng = random.Random(f"inspect|{seed}")
    with tempfile.TemporaryDirectory() as tmp:
        template = _template(Path(tmp))
        with zipfile.ZipFile(template) as archive:
            header = json.loads(archive.read("header.json"))
            sample = json.loads(archive.read("samples/1_epoch_1.json"))
            start = archive.read("_journal/start.json")
    ids = [str(n + 1) for n in range(samples)]
    header["eval"]["dataset"].update(samples=samples, sample_ids=ids)
    header["eval"]["config"]["epochs"] = epochs
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as out:
        out.writestr("_journal/start.json", start)
        for sample_id in ids:
            key = LETTERS[int(sample_id) % 4]
            for epoch in range(1, epochs + 1):
                letter = key if rng.random() < 0.6 else rng.choice(LETTERS)
                entry = dict(sample, id=sample_id, epoch=epoch, input=f"Placeholder question {sample_id}?",
                             target=key)
                entry["output"] = json.loads(json.dumps(sample["output"]).replace("ANSWER: A", f"ANSWER: {letter}"))
                entry["scores"] = {"choice": dict(sample["scores"]["choice"], value="C" if letter == key else "I",
                                                  answer=letter)}
                out.writestr(f"samples/{sample_id}_epoch_{epoch}.json", json.dumps(entry))
        out.writestr("header.json", json.dumps(header))
    return path.stat().st_size


def bench_inspect(args, work: Path, child, code: Path) -> int:
    """Write the log once, import it ``args.repeat`` times (each a process on a new store)."""
    samples, epochs = int(args.inspect), int(args.inspect_epochs)
    per_epoch = max(1, samples // epochs)
    log = work / "bench.eval"
    size = write_log(log, per_epoch, epochs, args.seed)
    print(f"import-inspect: {per_epoch:,} samples x {epochs} epochs = {per_epoch * epochs:,} entries, "
          f"{size / 1e6:.0f} MB .eval", flush=True)
    runs = []
    for rep in range(args.repeat):
        db = work / f"inspect-{rep}" / "eduart.duckdb"
        db.parent.mkdir(parents=True)
        run = child(["import-inspect", str(log), "--db", str(db)], code)
        progress = sum(1 for line in run["stderr"].splitlines() if line.startswith("import-inspect:"))
        if run["rc"] != 0:
            print(f"  exit {run['rc']}: {run['stderr'].strip().splitlines()[-1:]}")
        runs.append(run)
        print(f"  run {rep + 1} CPU {run['cpu_s']:7.1f} s  wall {run['wall_s']:7.1f} s  peak {run['peak_mb']:6.0f} MB"
              f"  ({progress} progress lines)", flush=True)
    med = {k: statistics.median(r[k] for r in runs) for k in ("cpu_s", "wall_s", "peak_mb")}
    peak = max(r["peak_mb"] for r in runs)
    print(f"medians: import-inspect {per_epoch * epochs:,} entries  CPU {med['cpu_s']:.1f} s  wall {med['wall_s']:.1f} s"
          f"  peak {med['peak_mb']:.0f} MB; rate {per_epoch * epochs / med['wall_s']:,.0f} samples/s")
    print(f"import-inspect peak memory {peak:.0f} MB; target (< 1024 MB): {'meets' if peak < 1024 else 'misses'}")
    return 0 if all(r["rc"] == 0 for r in runs) else 1
