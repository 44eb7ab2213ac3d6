"""`bench humans`: the comparison of models and people, at a small panel and at a large scale.

Targets (the issue on people sitting the exam):
- a 10-person x 100-item panel: per-format accuracy of the people with the 95% interval half-width
  printed (how wide an honest interval is for such a panel);
- 50 models + 200 people x 5,000 items: the comparison (accuracy per format and language, the gaps
  with their paired bootstrap intervals, the sentences, the three figures) under 2 s.

The frames are synthetic (`simulate.score_frames.synthetic_scores`: the published format mix with
partial credit), models and people drawn from one ability distribution, the people split into a
student and an expert group. The store read that precedes a page's views is the same read every
page makes (`bench pages` times it); the joint IRT fit (the Psychometrics page's fit over models
and people together) is timed on its own line, because it is computed once per data version and
cached, and at 250 examinees x 5,000 items it takes far longer than a render.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

SMALL = (12, 10, 100)
LARGE = (50, 200, 5_000)
TARGET_S = 2.0


def _frame(models: int, people: int, items: int, seed: int):
    """(long frame of models and people in the answer-only condition, pseudonym -> group)."""
    import numpy as np

    from ..simulate.score_frames import synthetic_scores
    from ..vocab import DEFAULT_CONDITION, HUMAN_KIND, MODEL_KIND

    rng = np.random.default_rng(seed)
    names = [f"Model {i + 1:03d}" for i in range(models)] + [f"P-{i + 1:06d}" for i in range(people)]
    order = list(rng.permutation(names))  # abilities follow the order: mix models and people
    frame = synthetic_scores(order, items, seed=seed, conditions=(DEFAULT_CONDITION,), categorical=True)
    human = frame["model"].astype(str).str.startswith("P-").to_numpy()
    frame["kind"] = np.where(human, HUMAN_KIND, MODEL_KIND)
    groups = {n: ("expert" if k % 4 == 0 else "student") for k, n in enumerate(names[models:])}
    return frame, groups


def _median(call, repeat: int) -> tuple[float, object]:
    """(median wall seconds, last result); the CPU seconds of the same runs are in `_CPU`."""
    times, cpus, out = [], [], None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        out = call()
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    _CPU[0] = statistics.median(cpus)
    return statistics.median(times), out


#: CPU seconds (this process, all threads) of the last `_median`: the machine is shared, so wall
#: time alone says little.
_CPU = [0.0]


def _comparison(frame, groups):
    from ..analysis.humans import accuracy_table, gap_table, panel
    from ..charts.humans import figure_models_and_people
    from ..humans import story

    shared = panel(frame, groups)  # the views share one panel per selection (cached)
    accuracy = accuracy_table(shared, groups)
    gaps = gap_table(shared, groups)
    texts = [story.headline(gaps, simulated=True), *story.sentences(gaps)]
    figure_models_and_people(accuracy)
    return accuracy, gaps, texts


def small_panel(seed: int, out=print) -> None:
    from ..analysis.humans import ALL, PEOPLE, accuracy_table
    from ..vocab import format_label

    models, people, items = SMALL
    frame, _ = _frame(models, people, items, seed)
    groups = {n: "panel" for n in frame.loc[frame["kind"] == "human", "model"].unique()}
    table = accuracy_table(frame, groups)
    rows = table[(table["examinee"] == PEOPLE) & (table["language"] == ALL)]
    out(f"\n{people} people x {items} items (one group; {models} models beside them): per-format accuracy of the "
        "people, 95% interval (Wilson at the two-way effective size)")
    out(f"{'format':<26}{'answers':>8}{'items':>7}{'mean %':>8}{'95% CI %':>16}{'half-width':>12}{'deff':>7}")
    for r in rows.itertuples(index=False):
        half = 100 * (r.ci_high - r.ci_low) / 2
        label = "all formats" if r.type == ALL else format_label(r.type)
        out(f"{label:<26}{int(r.n_answers):>8}{int(r.n_items):>7}{100 * r.mean:>8.1f}"
            f"{f'{100 * r.ci_low:.1f}-{100 * r.ci_high:.1f}':>16}{half:>11.1f}{r.design_effect:>7.2f}")


def large_scale(seed: int, repeat: int, irt: bool, out=print) -> float:
    from ..analysis.irt import fit_irt
    from ..analysis.irt_curves import ability_ranking, wright_map
    from ..charts.humans import figure_joint_ranking, figure_joint_wright_map
    from ..vocab import IRT_RASCH

    models, people, items = LARGE
    built = time.perf_counter()
    frame, groups = _frame(models, people, items, seed)
    out(f"\n{models} models + {people} people x {items} items = {len(frame):,} rows "
        f"(synthetic frame built in {time.perf_counter() - built:.1f} s)")
    total, (accuracy, gaps, _texts) = _median(lambda: _comparison(frame, groups), repeat)
    out(f"{'comparison (accuracy, gaps, sentences, figure)':<52}{total:>8.2f} s wall {_CPU[0]:>6.2f} s CPU  "
        f"target {TARGET_S:.0f} s  ({len(accuracy):,} accuracy rows, {len(gaps)} gap rows; median of {repeat})")
    if irt:
        seconds, fit = _median(lambda: fit_irt(frame, IRT_RASCH), 1)
        out(f"{'joint IRT fit, cold (once per data version, cached)':<52}{seconds:>8.2f} s wall {_CPU[0]:>6.2f} s CPU  "
            f"({fit.n_examinees} examinees x {fit.n_items_fitted} informative items)")
        ranking = ability_ranking(fit.abilities).assign(group="models")
        wright = wright_map(fit.items, fit.abilities).assign(group="models")
        drawn, _ = _median(lambda: (figure_joint_ranking(ranking), figure_joint_wright_map(wright)), repeat)
        out(f"{'joint ranking and Wright map from the cached fit':<52}{drawn:>8.2f} s wall {_CPU[0]:>6.2f} s CPU")
        total += drawn
        out(f"{'render with the fit cached (comparison + both figures)':<52}{total:>8.2f} s  target {TARGET_S:.0f} s")
    return total


def main(args: argparse.Namespace) -> int:
    print(f"bench humans: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    small_panel(args.seed)
    if not args.quick:
        large_scale(args.seed, args.repeat, not args.no_irt)
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("humans", help="time the comparison of models and people (10 x 100, 250 x 5,000)",
                                  description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per step (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="the 10-person panel only")
    parser.add_argument("--no-irt", action="store_true", help="leave out the joint IRT fit (about 20 s)")
    parser.set_defaults(func=main)
