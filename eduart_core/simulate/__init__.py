"""Simulated respondents: an item-response model that writes real response text.

Used by the demo (8 archetypes x 2 conditions on the demo items) and by ``simulate`` for
planning and benchmarking at any scale. The simulator never scores: its text goes through the
store's parser and scorer like any real model output.
"""
from .bulk import add_synthetic_items, run_id_for, simulate_into_store, simulate_repeats_into_store
from .models import ARCHETYPES, SIM_FAMILY, SimModel, make_models
from .placeholders import format_counts, synthesise_items
from .respond import SimResponse, plan_items, simulate_run
from .score_frames import PUBLISHED_MIX

__all__ = [
    "ARCHETYPES", "PUBLISHED_MIX", "SIM_FAMILY", "SimModel", "SimResponse",
    "add_synthetic_items", "format_counts", "make_models", "plan_items",
    "run_id_for", "simulate_into_store", "simulate_repeats_into_store", "simulate_run", "synthesise_items",
]
