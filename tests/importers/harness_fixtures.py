"""Harness logs written from the documented fields (lm-evaluation-harness and lmms-eval
``--log_samples`` output): a text task with likelihood multiple choice, a generation task logged
under two filters, and a multimodal lmms-eval task (no document: the prompt, a letter target).
Every value is made up here; nothing is copied from the harnesses' repositories."""
from __future__ import annotations

import json
from pathlib import Path

LM_DATE = "2026-01-02T03-04-05.678901"
LMMS_DATE = "20260102_030405"


def _jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _mc(doc_id: int, question: str, options: list[str], gold: int, lls: list[float]) -> dict:
    """A loglikelihood multiple-choice sample (arc-style document, one request per option) as the
    current lm-eval writes it: arguments as ``gen_args_<i>`` / ``arg_<j>``, responses and target as text."""
    context = f"Question: {question}\nAnswer:"
    picked = max(range(len(lls)), key=lls.__getitem__)
    acc = float(picked == gold)
    return {"doc_id": doc_id,
            "doc": {"id": f"q{doc_id}", "question": question,
                    "choices": {"text": options, "label": ["A", "B", "C", "D"][:len(options)]},
                    "answerKey": "ABCD"[gold]},
            "target": str(gold),
            "arguments": {f"gen_args_{k}": {"arg_0": context, "arg_1": f" {o}"} for k, o in enumerate(options)},
            "resps": [[[str(ll), "False"]] for ll in lls], "filtered_resps": [[str(ll), "False"] for ll in lls],
            "filter": "none", "metrics": ["acc", "acc_norm"], "doc_hash": "d", "prompt_hash": "p",
            "target_hash": "t", "acc": acc, "acc_norm": acc}


def lm_eval_text(folder: Path) -> list[Path]:
    """lm-eval output for one model: art_mc (4 likelihood MC docs, 3 right) and art_gen (2 docs,
    generation, two filters; exact_match per filter) with their results file."""
    out = folder / "EleutherAI__pythia-160m"
    out.mkdir(parents=True)
    mc = [
        _mc(0, "Who painted the Mona Lisa?", ["Leonardo", "Raphael", "Titian", "Giotto"], 0, [-1.0, -3.0, -4.0, -5.0]),
        _mc(1, "Where is the Pantheon?", ["Paris", "Rome", "Athens", "Madrid"], 1, [-2.0, -0.5, -3.0, -4.0]),
        _mc(2, "Which style is the Chartres cathedral?", ["Gothic", "Baroque", "Rococo", "Modern"], 0,
            [-0.2, -2.0, -2.5, -3.0]),
        _mc(3, "How many figures are in the Burghers of Calais?", ["2", "4", "6", "8"], 2,
            [-0.1, -2.0, -1.5, -3.0]),
    ]
    gen = []
    for doc_id, (question, target, said, strict, flexible) in enumerate([
            ("In which city is the Uffizi gallery?", "Florence", "The answer is Florence.", 0.0, 1.0),
            ("Which painter cut off part of his ear?", "Van Gogh", "Van Gogh", 1.0, 1.0)]):
        for name, value in (("strict-match", strict), ("flexible-extract", flexible)):
            gen.append({"doc_id": doc_id, "doc": {"question": question, "answer": target}, "target": target,
                        "arguments": {"gen_args_0": {"arg_0": f"Q: {question}\nA:", "arg_1": {"until": ["\n"]}}},
                        "resps": [[said]], "filtered_resps": [said if name == "flexible-extract" else "[invalid]"],
                        "filter": name, "metrics": ["exact_match"], "exact_match": value,
                        "doc_hash": "d", "prompt_hash": "p", "target_hash": "t"})
    results = {"results": {"art_mc": {"alias": "art_mc", "acc,none": 0.75, "acc_norm,none": 0.75},
                           "art_gen": {"alias": "art_gen", "exact_match,strict-match": 0.5,
                                       "exact_match,flexible-extract": 1.0}},
               "configs": {"art_mc": {"task": "art_mc", "output_type": "multiple_choice"},
                           "art_gen": {"task": "art_gen", "output_type": "generate_until"}},
               "config": {"model": "hf", "model_args": "pretrained=EleutherAI/pythia-160m,dtype=float32"},
               "model_name": "EleutherAI/pythia-160m", "model_name_sanitized": "EleutherAI__pythia-160m",
               "lm_eval_version": "0.4.9", "date": 1767323045.0}
    (out / f"results_{LM_DATE}.json").write_text(json.dumps(results), encoding="utf-8")
    return [_jsonl(out / f"samples_art_mc_{LM_DATE}.jsonl", mc), _jsonl(out / f"samples_art_gen_{LM_DATE}.jsonl", gen)]


def lmms_eval_multimodal(folder: Path) -> Path:
    """lmms-eval output for one vision model: art_vqa_mc, 3 image questions logged without the
    document (lmms-eval drops it and the images: the prompt is ``input``), targets letters, the
    generated answer in resps; exact_match per sample (2 right)."""
    out = folder / "llava-hf__llava-1.5-7b-hf"
    out.mkdir(parents=True)
    rows = []
    for doc_id, (question, options, target, said) in enumerate([
            ("Which movement is this painting from?", ["Impressionism", "Cubism", "Baroque"], "A", "A"),
            ("What material is the statue made of?", ["Bronze", "Marble", "Wood"], "B", "(B) Marble"),
            ("Which century is this fresco from?", ["14th", "17th", "20th"], "A", "The answer is C.")]):
        prompt = "<image>\n" + question + "\n" + "\n".join(f"{'ABC'[k]}. {o}" for k, o in enumerate(options)) \
            + "\nAnswer with the option's letter from the given choices directly."
        picked = said.replace("(", "").replace("The answer is ", "")[0]
        rows.append({"doc_id": doc_id, "target": target, "input": prompt, "resps": [[said]],
                     "filtered_resps": [said], "doc_hash": "d", "prompt_hash": "p", "target_hash": "t",
                     "exact_match": float(picked == target)})
    results = {"results": {"art_vqa_mc": {"alias": "art_vqa_mc", "exact_match,none": 2 / 3}},
               "configs": {"art_vqa_mc": {"task": "art_vqa_mc"}},
               "config": {"model": "llava_hf", "model_args": "pretrained=llava-hf/llava-1.5-7b-hf"},
               "model_name": "llava-hf/llava-1.5-7b-hf", "lmms_eval_version": "0.3.0"}
    (out / f"{LMMS_DATE}_results.json").write_text(json.dumps(results), encoding="utf-8")
    return _jsonl(out / f"{LMMS_DATE}_samples_art_vqa_mc.jsonl", rows)
