"""The app sets its code aside from the cycle collector's full passes (`gcpause.settle_imports`):
once per growth of the loaded modules, never inside an import's pause, and undone when a pause ends."""
from __future__ import annotations

import gc
import importlib
import sys

import pytest

from eduart_core import gcpause


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(gcpause, "_SETTLED_AT", 0)
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_freezes_once_and_again_only_after_a_new_import(fresh, tmp_path, monkeypatch):
    assert gcpause.settle_imports() and gc.get_freeze_count() > 0
    assert not gcpause.settle_imports()  # nothing new imported: nothing frozen again
    (tmp_path / "settle_probe_module.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("settle_probe_module")
    try:
        assert gcpause.settle_imports()
    finally:
        sys.modules.pop("settle_probe_module", None)


def test_an_imports_pause_keeps_its_frozen_set_and_its_end_hands_everything_back(fresh):
    with gcpause.collector_paused():
        assert not gcpause.settle_imports()
        gcpause.batch_done()
    assert gc.get_freeze_count() == 0
    assert gcpause.settle_imports() and gc.get_freeze_count() > 0
