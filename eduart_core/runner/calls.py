"""What the pool does per request of a launch: answer from the cache or ask the model.

Order matters, because an answer that arrived has been paid for: the reply goes to the journal
first (the pool writes it), and only then to the response cache (``after_journal``), whose
failure (a full disk) is logged and never turns a received answer into an error. An empty or
``null`` reply is an error, not an answer: it is recorded as failed (tokens kept, since they were
paid), never cached, and asked again by ``--retry-errors``.

A later turn of a dialogue resends the conversation so far (``prior_messages``); its cache key
includes the model's own earlier answers, so the same question after different answers is a
different request.
"""
from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

from ..providers.base import ASSISTANT_ROLE, USER_ROLE, Message, ProviderError, ProviderRequest, RequestImage
from .cache import ResponseCache, cache_key
from .pool import Job

logger = logging.getLogger(__name__)

_EMPTY_TEXTS = ("", "null")


class EmptyReply(ProviderError):
    """The model answered with nothing (empty text or ``null``). Carries the paid tokens."""

    def __init__(self, model: str, finish_reason: str | None, fields: dict):
        reason = f" (finish reason: {finish_reason})" if finish_reason else ""
        super().__init__(f"empty reply from {model}{reason}: recorded as an error, not as an answer",
                         retryable=False)
        self.fields = fields


def is_empty(text: str | None) -> bool:
    return text is None or text.strip().lower() in _EMPTY_TEXTS


def prior_messages(prior: list[dict], history: tuple[dict, ...]) -> tuple[Message, ...]:
    """The earlier turns of a dialogue as messages: each question, then the model's own answer."""
    if len(history) != len(prior):
        raise ProviderError(f"dialogue history incomplete: {len(history)} of {len(prior)} earlier answers found")
    messages: list[Message] = []
    for turn, record in zip(prior, history):
        image = Path(turn["image_path"]).read_bytes() if turn["image_path"] else None
        messages.append(Message(USER_ROLE, turn["text"], image, turn["image_mime"] if image else None))
        messages.append(Message(ASSISTANT_ROLE, record.get("raw_text") or ""))
    return tuple(messages)


def job_cache_key(job: Job, name: str = "cache_key") -> str | None:
    """The cache key of a job (``name="legacy_cache_key"``: the key entries had before keys were
    per format); a later dialogue turn adds the model's earlier answers to it."""
    key = job.payload.get(name)
    if key is not None and job.payload.get("prior"):
        key = cache_key(request=key, answers=[r.get("raw_text") for r in job.history])
    return key


def cached_reply(cache: ResponseCache, job: Job, *, copy: bool = True) -> dict | None:
    """The cached reply to a job, under its key or, for entries written before request keys were per
    format, under its legacy key (then, with ``copy``, copied to the current key, so it outlives a
    later change to another format's rules)."""
    key = job_cache_key(job)
    hit = cache.get(key)
    legacy = job_cache_key(job, "legacy_cache_key") if hit is None else None
    if legacy is not None and legacy != key:
        hit = cache.get(legacy)
        if hit is not None and copy:
            try:
                cache.put(key, hit)
            except OSError as exc:
                logger.info("cached reply of %s not copied to its current key: %s", job.request_key, exc)
    return hit


class LaunchCaller:
    """The pool's ``call`` and ``after_journal`` for one launch."""

    def __init__(self, providers: dict[str, object], cache: ResponseCache):
        self.providers = providers
        self.cache = cache
        # offline baselines are free and instant: never cached
        self.offline = {key for key, p in providers.items() if type(p).__name__ == "ChanceProvider"}

    def _uses_cache(self, job: Job) -> bool:
        return job.payload["member"].spec.key not in self.offline

    def __call__(self, job: Job) -> dict:
        member = job.payload["member"]
        if self._uses_cache(job):
            hit = cached_reply(self.cache, job)
            if hit is not None and not is_empty(hit.get("text")):  # an old cached empty reply is a miss
                return {"raw_text": hit.get("text", ""), "input_tokens": hit.get("input_tokens"),
                        "output_tokens": hit.get("output_tokens"), "finish_reason": hit.get("finish_reason"),
                        "cached": True, "cost_usd": 0.0}
        request: ProviderRequest = job.payload["request"]
        path = job.payload["image_path"]
        if path is not None:
            request = replace(request, image=Path(path).read_bytes())
        prior = job.payload.get("prior") or []
        if prior:
            request = replace(request, prior=prior_messages(prior, job.history))
        extra = job.payload.get("option_images") or []
        if extra:  # options that are images, labelled, in order
            request = replace(request, images=[RequestImage(label, Path(file).read_bytes(), mime)
                                               for label, file, mime in extra])
        reply = self.providers[member.spec.key].complete(request)
        fields = {"raw_text": reply.text, "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                  "finish_reason": reply.finish_reason, "cached": False,
                  "cost_usd": round(member.spec.cost(reply.input_tokens, reply.output_tokens), 8)}
        if is_empty(reply.text):
            raise EmptyReply(member.spec.key, reply.finish_reason,
                             {k: fields[k] for k in ("input_tokens", "output_tokens", "finish_reason", "cost_usd")})
        return fields

    def after_journal(self, job: Job, record: dict) -> None:
        """Fill the cache with an answer that is already safe in the journal (``job`` carries the
        dialogue history the pool gave ``__call__``, so the key is the same)."""
        if record.get("status") != "ok" or record.get("cached") or not self._uses_cache(job):
            return
        member = job.payload["member"]
        try:
            self.cache.put(job_cache_key(job), {
                "text": record.get("raw_text"), "input_tokens": record.get("input_tokens"),
                "output_tokens": record.get("output_tokens"), "finish_reason": record.get("finish_reason"),
                "model": member.spec.api_model_id, "created": time.time()})
        except OSError as exc:
            from ..fileio import os_cause

            logger.warning("response cache not written for %s (%s); the answer is in the journal",
                           job.request_key, os_cause(exc))
