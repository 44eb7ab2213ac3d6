"""`bench psychometrics`: IRT fits at the published scale and at a large one, model checks, DIF.

Targets: Rasch at 871 items x 24 examinees (12 models x 2 conditions) under 2 s; the exploratory
2PL at that size under 10 s; the partial credit model mixed with Rasch items (the default model
of a dataset with partial-credit formats) refitted at that size under 3 s; item fit plus person
fit of that fit under 5 s; Rasch and the mixed PCM at 10,000 items x 200 examinees (100 models x 2
conditions) under 60 s and under 2 GB each.

Each fit is the whole library call a view makes (`analysis.irt.fit_irt` or
`analysis.irt_pcm.fit_polytomous`: response matrix, fit, standard errors, EAP abilities) on the
synthetic long frame (`eduart_core.simulate.score_frames`: the published format mix with partial
credit; the PCM reads its score levels with `synthetic_parts`, the Rasch fit dichotomises at 0.5).
"fit checks" is `analysis.irt_fit.item_fit` plus `person_fit` on the PCM fit. Each scale runs in a
fresh child process, so its peak memory (the child's maximum resident set, synthetic frame
included) is that scale's alone; at the large scale each model runs in its own child. Every time
is the median of --repeat runs after one untimed warm-up call (the first call of a process loads
the fitting library); CPU seconds (the child, all threads) are printed beside wall seconds
because the machine is shared.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import time

PUBLISHED = (12, 871)
LARGE = (100, 10_000)
TARGETS = {"rasch 12x871": 2.0, "2pl 12x871": 10.0, "pcm 12x871": 3.0, "fit checks 12x871": 5.0,
           "dif 12x871": None, "rasch 100x10000": 60.0, "pcm 100x10000": 60.0}
MEMORY_TARGET_MB = 2048


def _time(call, repeat: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _scale(models: int, items: int, calls: tuple[str, ...], repeat: int, seed: int) -> dict:
    """Run in a child: time each call at one scale; report the child's peak memory."""
    from ..analysis.dif import dif_analysis
    from ..analysis.irt import fit_irt
    from ..analysis.irt_fit import item_fit, person_fit
    from ..analysis.irt_pcm import fit_polytomous
    from ..simulate.score_frames import synthetic_parts, synthetic_scores
    from ..vocab import IRT_2PL, IRT_PCM, IRT_RASCH

    frame = synthetic_scores(models, items, seed=seed)
    parts = synthetic_parts(frame)
    fits: dict[str, object] = {}

    def fitted(name: str, call):
        def run():
            fits[name] = call()
        return run

    def checks():
        fit = fits.get("pcm") or fit_polytomous(frame, IRT_PCM, parts)
        item_fit(fit)
        person_fit(fit)

    work = {"rasch": fitted("rasch", lambda: fit_irt(frame, IRT_RASCH)),
            "2pl": fitted("2pl", lambda: fit_irt(frame, IRT_2PL)),
            "pcm": fitted("pcm", lambda: fit_polytomous(frame, IRT_PCM, parts)),
            "fit checks": checks, "dif": lambda: dif_analysis(frame)}
    out: dict = {}
    for name in calls:
        work[name]()                      # warm-up (untimed)
        out[name] = _time(work[name], repeat)
        fit = fits.get("pcm" if name == "fit checks" else name)
        if fit is not None:
            out[f"_{name}_fit"] = (fit.n_examinees, fit.n_items_fitted, fit.se_method)
    out["_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main(args: argparse.Namespace) -> int:
    scales = [(PUBLISHED, ("rasch", "2pl", "pcm", "fit checks", "dif"))]
    if not args.quick:
        scales += [(LARGE, ("rasch",)), (LARGE, ("pcm",))]
    print(f"bench psychometrics: median of {args.repeat} runs per fit after a warm-up; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'fit':<22}{'wall s':>9}{'CPU s':>9}{'target s':>10}{'peak MB':>10}  fitted")
    ctx = multiprocessing.get_context("spawn")
    for (models, items), calls in scales:
        with ctx.Pool(1) as pool:
            result = pool.apply(_scale, (models, items, calls, args.repeat, args.seed))
        for name in calls:
            wall, cpu = result[name]
            key = f"{name} {models}x{items}"
            target = TARGETS.get(key)
            fitted = result.get(f"_{name}_fit")
            words = f"{fitted[0]} examinees x {fitted[1]} informative items; SEs: {fitted[2]}" if fitted else ""
            memory = f"{result['_peak_mb']:>10.0f}"
            if models == LARGE[0] and result["_peak_mb"] > MEMORY_TARGET_MB:
                memory += " (over 2 GB)"
            print(f"{key:<22}{wall:>9.2f}{cpu:>9.2f}{(f'{target:.0f}' if target else '-'):>10}{memory}  {words}",
                  flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser(
        "psychometrics", help="time IRT fits (Rasch, 2PL, PCM), item and person fit, and DIF at the published and a "
                              "large scale",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per fit (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="the published scale only")
    parser.set_defaults(func=main)
