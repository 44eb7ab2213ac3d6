"""Custom ids: the key that joins a batch result to its request, never the line order.

A custom id is a hash of what identifies the question: dataset, item, model, condition, the
run's prompt hash (templates) and the turn (plus the repetition for ``--repeat`` runs, so the
repeats of one item can share a batch). The same launch always computes the same ids, so a
resumed launch recognises the requests it already submitted. Ids are upper-case base32
(letters and digits 2-7), which every provider accepts, Bedrock's 11-character alphanumeric
record ids included (see ``providers.batch_bedrock.record_id``).
"""
from __future__ import annotations

import base64
import hashlib
import json

ID_LENGTH = 24  # 120 bits


def custom_id(dataset: str, item_id: str, model: str, condition: str, prompt_hash: str | None,
              turn: int = 0, repetition: int = 0) -> str:
    parts = {"dataset": dataset, "item": str(item_id), "model": model, "condition": condition,
             "prompt": prompt_hash or "", "turn": int(turn or 0)}
    if repetition:
        parts["repetition"] = int(repetition)
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")).digest()
    return base64.b32encode(digest).decode("ascii")[:ID_LENGTH]


def job_tag(launch_id: str, job_key: str) -> str:
    """The short name a job carries at the provider (metadata, display name, job name, idempotency
    token): lets a restarted runner find a job whose creation it did not get to record."""
    return "ea-" + hashlib.sha256(f"{launch_id}\x00{job_key}".encode()).hexdigest()[:20]
