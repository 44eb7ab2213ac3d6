"""Carrying out a strategy's answering steps on one question of a live page (Playwright locators).

Why answer at all: the platforms reveal the right answers only after a submission, and most refuse
an empty one; what is answered does not matter, only that the format allows it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import CaptureConfig, Strategy

if TYPE_CHECKING:
    from playwright.sync_api import Locator

_MATCHES = "(el, selector) => el.matches(selector) || el.querySelector(selector) !== null"


class NoAnswer(Exception):
    """A step found nothing to act on: the question cannot be answered as configured."""


def choose_strategy(question: Locator, config: CaptureConfig) -> Strategy | None:
    """The first strategy whose `when` selector matches the question element or something inside it."""
    for strategy in config.strategies:
        if question.evaluate(_MATCHES, strategy.when):
            return strategy
    return None


def _targets(scope: Locator, step: dict[str, Any]) -> Locator:
    found = scope.locator(step["target"])
    if not found.count():
        raise NoAnswer(f"nothing matches {step['target']!r} for step {step['do']}")
    return found


def perform(question: Locator, strategy: Strategy, timeout_ms: float) -> None:
    """Answer `question` by `strategy`'s steps; NoAnswer when a step's target is missing."""
    for step in strategy.steps:
        action = step["do"]
        if action == "check_first":
            _targets(question, step).first.check(timeout=timeout_ms)
        elif action == "check_first_in_each":
            groups = question.locator(step["groups"])
            if not groups.count():
                raise NoAnswer(f"nothing matches {step['groups']!r} for step {action}")
            for group in groups.all():
                _targets(group, step).first.check(timeout=timeout_ms)
        elif action == "select_in_each":
            for select in _targets(question, step).all():
                select.select_option(index=int(step.get("option", 1)), timeout=timeout_ms)
        elif action == "type_in_each":
            for field in _targets(question, step).all():
                field.fill(step["text"], timeout=timeout_ms)
        elif action == "click_first":
            _targets(question, step).first.click(timeout=timeout_ms)
        else:  # config.load_config refuses unknown actions; a config built in code may not
            raise NoAnswer(f"unknown step {action!r}")
