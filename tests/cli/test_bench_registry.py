"""`bench NAME` is one registry: every name of ``commands.bench.BENCHES`` reaches a module that registers
it; the benchmarks that drive the pages live outside the library (``benchmarks/``), and outside the
checkout asking for one is one line, not a traceback."""
from __future__ import annotations

import argparse
import sys

import pytest

from eduart_core.bench import OUTSIDE, load
from eduart_core.commands.bench import BENCHES, MODULES, register
from eduart_core.errors import UserError


def _bench_names() -> set[str]:
    sub = argparse.ArgumentParser().add_subparsers()
    register(sub)
    bench = sub.choices["bench"]
    return set(next(a for a in bench._actions if isinstance(a, argparse._SubParsersAction)).choices)


def test_every_bench_name_reaches_a_module_that_registers_it():
    assert _bench_names() == set(BENCHES)
    for name in BENCHES:
        module = MODULES.get(name, name)
        side = "benchmarks." if module in OUTSIDE else "eduart_core.bench."
        assert load(module).__name__.startswith(side), name


def test_the_page_benchmarks_live_outside_the_library():
    assert {name: load(name).__name__ for name in ("pages", "review", "team", "studies")} == {
        "pages": "benchmarks.pages", "review": "benchmarks.review", "team": "benchmarks.team",
        "studies": "benchmarks.studies"}


def test_a_page_benchmark_outside_the_checkout_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "benchmarks.pages", None)  # as if benchmarks/ were not on the path
    with pytest.raises(UserError, match="drives the app's pages .*run it from the studio's folder"):
        load("pages")
    assert "pages" in _bench_names()  # still listed; asking for it says why it cannot run here
