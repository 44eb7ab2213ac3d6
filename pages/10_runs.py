"""Runs: launch models on the benchmark, follow them live, cancel, resume, check reproducibility.

Thin page: every number comes from the runner's facade (``eduart_core.runner.facade``) and ``eduart_core.views``.
A launch runs as a background process (``python -m eduart_core run``), so it survives reloads.
How each launch ended (exit code, one-line outcome, "waiting for ingest") comes from its launch
file; text from models, servers and files is shown with ``text.plain`` (never as markup). Launch
ids are safe by construction (letters, digits, '-', '_', '.').
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from eduart_core import panels, views, vocab
from eduart_core.errors import UserError
from eduart_core.runner import facade as runner
from eduart_core.team import LAUNCH_RUN, local
from eduart_core.text import plain
from pages.ui import compare_runs, navigate, plots, sidebar, signin, store_handle, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

st.title("Runs")
st.markdown("Ask models the benchmark items under the **default** and **motivation** conditions. "
            "Launches run in the background: you can reload or close this page. Answers are journaled as they "
            "arrive, so an interrupted launch resumes where it stopped and never pays twice for an answer.")

store = store_handle.store(lock_timeout_s=5.0)
# who launches: the signed-in person, or in single-machine mode the person at this machine
actor = signin.identity() or local(st.session_state.get("reviewer") or "this machine")
may_launch = actor.may(LAUNCH_RUN)
if not store.exists():
    st.error(f"No store at {store.path}. Build one with `python -m eduart_core demo`.")
    st.stop()

try:
    registry = runner.load_registry()
except UserError as exc:
    st.error(plain(exc))
    st.stop()
status = runner.provider_status()

# ---------------------------------------------------------------- credentials
with st.expander("Providers and credentials", expanded=False):
    rows = [{"provider": p, "ready": s["configured"], "from": s["source"] or "",
             "to use it, set": "" if s["configured"] and not runner.runs_keyless(p) else s["needs"],
             "models": ", ".join(k for k, m in registry.items() if m.provider == p)} for p, s in status.items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption("Keys are read from the environment, a .env file or .streamlit/secrets.toml. They are never "
               "written to the store, the run journals or the logs.")

# ---------------------------------------------------------------- new launch
st.subheader("New launch")
try:
    datasets = views.runnable_datasets(store_handle.source())
except views.StoreError as exc:
    st.error(f"Cannot read the store: {plain(exc)}")
    st.stop()
if not datasets:
    st.info("The store holds no items yet: import a dataset or build the demo first.")
    st.stop()

ready = {k: m for k, m in registry.items() if status.get(m.provider, {}).get("configured")}


def adhoc_choice():
    """A model on an OpenAI-compatible server named here (base URL and model id), without a
    models.toml entry: the launch options' ``adhoc`` and its spec, or (None, None) while it is
    incomplete or wrong (one line says which)."""
    with st.expander("An OpenAI-compatible server"):
        st.caption("A model on a server of your own (vLLM, Ollama, llama.cpp, ...) without a models.toml entry. "
                   "A key, when the server wants one, is read from OPENAI_COMPATIBLE_API_KEY. It is asked online "
                   "at no price; for batch, prices or a lasting name, give it an entry in the file EDUART_MODELS "
                   "names.")
        url = st.text_input("Base URL", key="runs_adhoc_url", placeholder="http://127.0.0.1:8000/v1").strip()
        model_id = st.text_input("Model id", key="runs_adhoc_model", placeholder="llava").strip()
        name = st.text_input("Display name (optional)", key="runs_adhoc_name").strip()
        if not (url or model_id):
            return None, None
        try:
            if url:
                runner.check_base_url(url, "The base URL")
            if not (url and model_id):
                st.caption("Give both the base URL and the model id.")
                return None, None
            spec = runner.adhoc_spec("openai_compatible", model_id, url, display_name=name or None)
        except UserError as exc:
            st.error(plain(exc))
            return None, None
        st.caption(plain(f"{spec.key} joins the launch ({spec.display_name})."))
    adhoc = {"provider": "openai_compatible", "model_id": model_id, "base_url": url}
    return ({**adhoc, "display_name": name} if name else adhoc), spec


labels = {k: f"{m.display_name} ({k})" + ("" if k in ready else " — no credentials") for k, m in registry.items()}
c1, c2 = st.columns(2)
with c1:
    dataset = st.selectbox("Dataset", datasets, index=datasets.index(vocab.default_dataset(datasets)),
                           key="runs_dataset")
    models = st.multiselect("Models", list(registry), default=["chance"] if "chance" in registry else [],
                            format_func=labels.get, key="runs_models")
    adhoc, adhoc_model = adhoc_choice()
    condition = st.radio("Condition", [*vocab.CONDITIONS, vocab.BOTH_CONDITIONS], horizontal=True, key="runs_condition",
                         help="'both' launches the two conditions of each model as one linked pair.")
    chosen = [registry[k] for k in models] + ([adhoc_model] if adhoc_model else [])
    no_batch = {spec.key: reason for spec in chosen if (reason := runner.batch_unavailable(spec)) is not None}
    mode = vocab.ONLINE_MODE
    if chosen and len(no_batch) == len(chosen):
        st.caption(plain("Mode: online. Batch is not available: "
                         + "; ".join(f"{key}, {reason}" for key, reason in no_batch.items()) + "."))
    else:
        mode = st.radio("Mode", list(vocab.RUN_MODES), format_func=vocab.RUN_MODES.get, horizontal=True,
                        key="runs_mode", help="Batch: the provider's batch API (OpenAI, Gemini, Bedrock, compatible "
                                              "servers whose models.toml entry says batch_api = true), about half "
                                              "the price, results within 24 hours. Models without a batch API are "
                                              "asked online.")
    if mode == vocab.BATCH_MODE and no_batch:
        st.caption(plain("Asked online, without the batch discount: "
                         + "; ".join(f"{key}, {reason}" for key, reason in no_batch.items()) + "."))
    most = runner.int_limit("max_concurrency")
    concurrency = st.slider("Concurrent requests per provider", 1, max(2, most), min(8, most), key="runs_concurrency",
                            help="Every provider runs at the same time as the others, each at its own limit: "
                                 "this one where models.toml sets none ([online.<provider>], or a model's own "
                                 "concurrency).")
    # The number fields carry no widget bounds: Streamlit drops an out-of-range entry without a word, so
    # each takes what is typed and the launch's own check (`plan_launch`) names what is wrong in one line.
    rpm = st.number_input("Requests per minute per provider (0 = none)", value=0, step=1, key="runs_rpm",
                          help="Where models.toml sets none ([online.<provider>] rpm, or a model's own rpm).")
with c2:
    types = st.multiselect("Formats", list(vocab.format_names()), key="runs_types", format_func=vocab.format_label)
    languages = st.multiselect("Languages", views.languages(store_handle.source(), dataset), key="runs_languages",
                               format_func=vocab.language_label)
    image = st.radio("Images", list(vocab.IMAGE_FILTERS), horizontal=True, key="runs_image",
                     format_func=vocab.IMAGE_FILTERS.get)
    sample = st.number_input("Stratified sample size (0 = all items)", value=0, step=1, key="runs_sample",
                             help="At most the items the filters above select.")
    repeat = st.number_input("Repetitions for a reproducibility check (0 = a normal run)", value=0, step=1,
                             key="runs_repeat", help=f"At most {runner.describe_limit('max_repetitions')}.")
    launch_name = st.text_input("Launch name (optional; the same settings resume the same launch)",
                                key="runs_launch_name").strip() or None
    no_image_models = [k for k in models if not registry[k].accepts_images]
    image_policy = "send"
    if no_image_models:
        image_policy = st.radio(f"{plain(', '.join(no_image_models))} cannot see images. For image items:",
                                ["text only", "skip them"], key="runs_image_policy")

launch_keys = list(models) + ([adhoc_model.key] if adhoc_model else [])
until_separated = None
if len(launch_keys) >= 2 and mode != vocab.BATCH_MODE:
    stop_early = st.checkbox("Stop when two models are told apart", key="runs_until_separated",
                             help="Asks the items in a random order stratified by format, a round at a time, and "
                                  "stops once an anytime-valid 95% confidence sequence of the two models' mean "
                                  "paired score difference excludes zero (Waudby-Smith & Ramdas 2024), or every item "
                                  "is asked. The launch records why and when it stopped; resuming it asks the rest.")
    if stop_early:
        s1, s2 = st.columns(2)
        sep_a = s1.selectbox("Model A", launch_keys, key="runs_sep_a")
        sep_b = s2.selectbox("Model B", [k for k in launch_keys if k != sep_a], key="runs_sep_b")
        until_separated = [sep_a, sep_b]

filters = []
if types:
    filters.append("type=" + "|".join(types))
if languages:
    filters.append("language=" + "|".join(languages))
if image != vocab.ALL_ITEMS:
    filters.append(f"image={image}")
options = runner.LaunchOptions(models=list(models), adhoc=adhoc, conditions=vocab.expand_conditions(condition),
                               items=",".join(filters) or None, sample=int(sample) or None, repeat=int(repeat) or None,
                               dataset=dataset, concurrency=int(concurrency), rpm=float(rpm) or None, launch_id=launch_name,
                               text_only=image_policy == "text only", refuse_images=image_policy == "skip them",
                               until_separated=until_separated)

def _items_of(dataset: str):
    """A dataset's items for planning: the cached view (the same frame the store's read gives)."""
    return views.launch_items(store_handle.source(), dataset)


def planned(options: runner.LaunchOptions):
    """The plan and estimate of these options, kept for the session until the options or the data
    change: planning tokenises every item (about half a second at 871 items), and the page reruns
    every time anything on it moves. The registry as read on this run is part of the key, so an edit
    to the models.toml file shows at the next rerun."""
    key = (repr(options), repr(sorted(registry.items())), repr(sorted(runner.load_batch_limits().items())),
           store_handle.data_version())
    memo = st.session_state.get("_runs_plan")
    if memo is not None and memo[0] == key:
        return memo[1]
    plan = runner.plan_launch(store, options, registry, items_of=_items_of)
    result = (plan, *runner.side_by_side(store, plan))  # online and batch cost per model and condition
    st.session_state["_runs_plan"] = (key, result)
    return result


plan = None
if models or adhoc:
    try:
        plan, est, method = planned(options)
    except (UserError, views.StoreError) as exc:
        st.warning(plain(exc))
if plan is not None:
    st.markdown(f"**Estimate** for launch {plain(plan.launch_id)}: {len(plan.item_ids)} items, {len(plan.jobs)} requests "
                f"(tokens counted with {method}; prices and batch discounts from the registry, check your "
                "provider's price list).")
    st.dataframe(runner.estimate_words(est), hide_index=True, width="stretch")
    st.caption("Batch (USD) is 'not offered' where the provider or model has no batch mode here; the last column "
               "says why those requests go online.")
    if until_separated:
        st.caption(plain(f"Stop when {until_separated[0]} and {until_separated[1]} are told apart: the estimate is the "
                         "most the launch costs (every item); it stops earlier once they are separated."))
    st.caption(plain("Online, every provider at once, each at its own limit: "
                     + runner.describe_limits(runner.lane_limits(plan.members, options.concurrency, options.rpm))
                     + "."))
    if runner.has_ledger(store, plan.launch_id) and mode != vocab.BATCH_MODE:
        st.info(f"Launch {plain(plan.launch_id)} has batch jobs: it continues in batch mode.")
    missing = [k for k in models if k not in ready]
    if missing:
        st.warning("No credentials for " + plain(", ".join(missing)) + ": see 'Providers and credentials' above.")
    if not may_launch:
        st.caption("Launching runs needs the researcher role.")
    elif st.button("Launch", type="primary", disabled=bool(missing), key="runs_launch"):
        argv = runner.build_argv(store.path, models=list(models), condition=condition, items=options.items,
                                 sample=options.sample, repeat=options.repeat, concurrency=options.concurrency,
                                 rpm=options.rpm, launch_id=plan.launch_id, dataset=dataset,
                                 text_only=options.text_only, refuse_images=options.refuse_images,
                                 batch=mode == vocab.BATCH_MODE, adhoc=adhoc,
                                 until_separated=until_separated)
        try:
            pid = runner.start_launch(store, argv, plan.launch_id, actor, planned_requests=len(plan.jobs))
        except (UserError, views.StoreError) as exc:
            st.error(plain(exc))
        else:
            st.success(f"Launch {plain(plan.launch_id)} started in the background (process {pid}).")


# ---------------------------------------------------------------- power before spending
def power_plan() -> None:
    """How many items tell two stored models apart (or give a new model a narrow interval), and, when
    asked (`price_sizes`), what asking that many items of the launch above would cost, from the
    runner's own estimate."""
    st.subheader("Power before spending")
    sel = sidebar.current_selection()
    try:
        names = [m for m in views.models_with_data(store_handle.source(), sel.dataset, baselines=sel.baselines,
                                                   humans=sel.humans) if not sel.models or m in sel.models]
    except (UserError, views.StoreError) as exc:
        st.caption(plain(f"No pilot answers to plan from: {exc}"))
        return
    if len(names) < 2:
        st.caption("Plan from a pilot: at least two models with answers in the sidebar's selection are needed.")
        return
    p1, p2, p3, p4 = st.columns(4)
    a = p1.selectbox("Pilot model A", names, key="runs_power_a")
    b = p2.selectbox("Pilot model B", [n for n in names if n != a], key="runs_power_b")
    d = p3.number_input("Difference to detect (points)", value=5.0, step=0.5, key="runs_power_d")
    w = p4.number_input("New model: interval +/- (points)", value=3.0, step=0.5, key="runs_power_w")
    try:
        table = views.power(store_handle.source(), sel, a=a, b=b, d=float(d), w=float(w))
    except (UserError, views.StoreError) as exc:
        st.warning(plain(exc))
        return
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(plain(table.attrs["caption"]) + " `python -m eduart_core show power` prints the same table.")
    if plan is None:
        st.caption("Choose models for a new launch above to see what that plan would cost.")
        return
    # why asked for: each size is a plan of its own (prompts, cache keys and tokens of every request,
    # about 0.2 s per size at 50 models x 5,000 items), redone whenever the pilot's numbers change
    if st.toggle("Price these sample sizes with the launch above", key="runs_power_price"):
        price_sizes(table)
    else:
        st.caption("Turn on 'Price these sample sizes' to see what asking that many items of the launch above "
                   "would cost, by the runner's estimate.")


def price_sizes(table: pd.DataFrame) -> None:
    """One line per question of the power table: what asking its sample size of the launch above costs."""
    for row in table.itertuples(index=False):
        if pd.isna(row.items_needed):
            continue
        needed = int(row.items_needed)
        available = len(plan.item_ids)
        if needed > available:
            st.caption(plain(f"{row.question}: {needed} items, more than the {available} the launch above selects; "
                             "more items (or a smaller ambition) are needed."))
            continue
        try:
            _, cost, _ = planned_sample(options, needed)
        except (UserError, views.StoreError) as exc:
            st.caption(plain(f"{row.question}: {needed} items; no estimate ({exc})."))
            continue
        online = float(cost["cost_online_usd"].sum())
        st.caption(plain(f"{row.question}: {needed} items (a stratified sample of the launch above) cost about "
                         f"{online:.4f} USD online for its {len(plan.members)} run(s), by the runner's estimate."))


def planned_sample(options: runner.LaunchOptions, n: int):
    """The estimate of the launch above asked on a stratified sample of ``n`` items (memoised).

    The power table asks for one sample size per question, so the memo keeps every size of the
    current launch and data version (at most `PLAN_MEMO` entries): one size evicting the other
    would re-plan both on every rerun."""
    from dataclasses import replace

    version = store_handle.data_version()
    key = (repr(options), n, version)
    memo = {k: v for k, v in st.session_state.get("_runs_power_plan", {}).items() if k[2] == version}
    if key not in memo:
        sampled = runner.plan_launch(store, replace(options, sample=n, launch_id=None), registry, items_of=_items_of)
        memo[key] = (sampled, *runner.side_by_side(store, sampled))
        while len(memo) > PLAN_MEMO:
            memo.pop(next(iter(memo)))
    st.session_state["_runs_power_plan"] = memo
    return memo[key]


PLAN_MEMO = 8  # sample sizes remembered by `planned_sample` (a few questions x a few selections)


power_plan()


# ---------------------------------------------------------------- the launch that ended last
def _dismiss(launch_id: str) -> None:
    st.session_state["runs_dismissed"] = launch_id


def last_launch_summary() -> None:
    """The latest finished launch stays summarised here, with the way to its results."""
    state = runner.latest_finished(runner.list_launches(store))
    if state is None or st.session_state.get("runs_dismissed") == state["launch_id"]:
        return
    summary = runner.launch_summary(state)
    if summary is None:
        return
    catalogue = views.models(store_handle.source())
    shown = {str(k): str(v) for k, v in zip(catalogue["model"], catalogue["display_name"])}
    names = tuple(shown.get(m, m) for m in summary.models)
    baselines = set(views.baseline_models(store_handle.source(), summary.dataset))
    took = f" in {runner.duration(summary.seconds)}" if summary.seconds is not None else ""
    kind = {runner.COMPLETED: st.success, runner.CANCELLED: st.warning}.get(summary.status, st.error)
    with st.container(border=True):
        kind(plain(f"Launch {summary.launch_id} {summary.status}{took}: {summary.answered} answers, {summary.failed} "
                   f"failed requests of {summary.total}, dataset {summary.dataset}, "
                   f"{', '.join(names)} ({', '.join(summary.conditions)})."))
        row = st.container(horizontal=True)
        filters = {"dataset": summary.dataset, "models": names}
        if baselines & set(names):  # a baseline run: show it, which means counting baselines in
            filters["baselines"] = True
        row.button("Overview for these models", key="runs_to_overview", icon=":material/home:",
                   on_click=navigate.request_page, args=("overview",), kwargs=filters)
        row.button("Failure explorer for these models", key="runs_to_explorer", icon=":material/search:",
                   on_click=navigate.request_page, args=("inspector",), kwargs=filters)
        row.button("Dismiss", key="runs_dismiss", on_click=_dismiss, args=(summary.launch_id,))


last_launch_summary()


# ---------------------------------------------------------------- live launches
@st.fragment(run_every=2.0)
def live() -> None:
    launches = [s for s in runner.list_launches(store) if s["status"] in runner.LIVE_STATUSES]
    running = {s["launch_id"] for s in launches}
    finished = st.session_state.get("runs_live", set()) - running
    st.session_state["runs_live"] = running
    if finished:  # a launch just ended: redraw the whole page so its summary and the history show it
        st.rerun()
    st.subheader("Running now")
    if not launches:
        st.caption("No launch is running.")
        return
    for state in launches:
        progress = runner.launch_progress(state)
        st.markdown(f"**{plain(state['launch_id'])}** · process {plain(state['pid'])}")
        now = runner.launch_pace(state)
        st.progress(now.share, text=plain(now.describe()))
        by_model, by_provider = runner.launch_breakdown(state)
        if len(by_model) > 1:  # a sweep: each model's own bar, each provider's own rate
            for row in by_model:
                st.progress(row.share, text=plain(row.describe()))
        if by_provider:
            st.caption("Per provider: requests done, the rate over the last 3 minutes of this session, and the "
                       "limits it runs under (all providers at once).")
            st.dataframe(pd.DataFrame([{"provider": r.provider, "models": ", ".join(r.models),
                                        "done": r.done, "requests": r.jobs,
                                        "per minute": None if r.per_minute is None else round(r.per_minute, 1),
                                        "limits": r.limits} for r in by_provider]),
                         hide_index=True, width="stretch")
        if progress:
            st.dataframe(pd.DataFrame(progress).drop(columns=["recent_errors"]), hide_index=True, width="stretch")
        if runner.has_ledger(store, state["launch_id"]):
            jobs = runner.jobs_frame(store, state["launch_id"])
            st.caption("Batch jobs: provider state and counts (done / failed / total as the provider reports "
                       "them; Gemini reports the job state only), and what was joined on the custom ids.")
            st.dataframe(jobs.drop(columns=["launch_id"]), hide_index=True, width="stretch")
        errors = [e for r in progress for e in r["recent_errors"]]
        if errors:
            st.error("Latest errors:\n\n" + "\n\n".join(plain(e) for e in errors[-5:]))
        if may_launch and st.button("Cancel", key=f"cancel_{state['launch_id']}"):
            try:
                runner.cancel_launch(store, state["launch_id"], actor)
            except (UserError, views.StoreError) as exc:
                st.error(plain(exc))
            else:
                st.info("Cancelling: the launch stops after the requests in flight.")


live()

# ---------------------------------------------------------------- how launches ended
ended = [s for s in runner.list_launches(store) if s["status"] not in runner.LIVE_STATUSES][:20]
if ended:
    st.subheader("How launches ended")
    st.caption("Exit code of the run command: " + "; ".join(f"{code} {meaning}" for code, meaning
                                                          in runner.EXIT_MEANING.items()) + ".")
    st.dataframe(pd.DataFrame([{"launch": s["launch_id"], "status": s["status"], "exit code": s.get("exit_code"),
                                "outcome": s.get("outcome") or ""} for s in ended]),
                 hide_index=True, width="stretch")
    waiting = [s for s in ended if s["status"] == runner.WAITING_INGEST]
    for state in waiting:
        st.warning(plain(f"{state['launch_id']}: {state.get('outcome') or 'waiting for ingest'}"))
    if waiting and st.button("Store pending answers now", key="runs_recover"):
        try:
            done = runner.recover(store)
        except views.StoreError as exc:
            st.warning(plain(f"Not yet: {exc}"))
        else:
            st.success(plain("; ".join(f"{d.launch_id}: {d.added} answer(s) stored, now {d.status}" for d in done)
                             or "Nothing was pending."))

# ---------------------------------------------------------------- history
st.subheader("History")
try:
    history = views.run_history(store_handle.source())
except views.StoreError as exc:
    st.warning(f"The store is busy, history not shown: {plain(exc)}")
    history = pd.DataFrame()
if history.empty:
    st.caption("No run has been launched from this tool yet.")
else:
    cols = ["launch_id", "run_id", "display_name", "condition", "repetition", "status", "n_responses",
            "n_errors", "input_tokens", "output_tokens", "cost_usd", "wall_seconds", "started_at"]
    st.dataframe(history[[c for c in cols if c in history]], hide_index=True, width="stretch")
    resumable = sorted({r["launch_id"] for _, r in history.iterrows()
                        if r["status"] in runner.RESUMABLE_STATUSES or (r["n_errors"] or 0) > 0}
                       # stopped once two models were told apart: resuming asks the rest of the items
                       | {s["launch_id"] for s in ended if (s.get("until_separated") or {}).get("items_asked", 0)
                          < (s.get("until_separated") or {}).get("items_total", 0)})
    if resumable and may_launch:
        c1, c2, c3 = st.columns([2, 1, 1])
        chosen = c1.selectbox("Resume launch", resumable, key="runs_resume_choice")
        retry = c2.checkbox("Also retry failed requests", value=True, key="runs_resume_retry")
        if c3.button("Resume", key="runs_resume"):
            try:
                pid = runner.start_launch(store, runner.resume_argv(store.path, chosen, retry_errors=retry),
                                          chosen, actor)
            except (UserError, views.StoreError) as exc:
                st.error(plain(exc))
            else:
                st.success(f"Resuming {plain(chosen)} (process {pid}).")

# ---------------------------------------------------------------- usage and batch jobs
st.subheader("Usage")
sel = sidebar.current_selection()
by = st.radio("Sum per", ["run", "model"], horizontal=True, key="runs_usage_by",
              format_func={"run": "run", "model": "model and condition"}.get)
try:
    usage = views.runs(store_handle.source(), sel, by=by)
    batch_jobs = views.runs(store_handle.source(), sel, by="job")
except views.StoreError as exc:
    st.warning(f"The store is busy, usage not shown: {plain(exc)}")
    usage, batch_jobs = pd.DataFrame(), pd.DataFrame()
if usage.empty:
    st.caption("No run on the dataset chosen in the sidebar yet.")
else:
    st.caption("Runs of the dataset chosen in the sidebar: answers, tokens and cost actually recorded per response "
               "(batch answers at "
               "the batch price), at the registry's prices: placeholders until you set yours. Mode of the runs "
               "launched here: batch, online, or mixed (a batch launch whose remainder was asked online); imported "
               "and simulated runs have no mode and no cost. `python -m eduart_core show runs` prints the same "
               "table (`--option by=model`, `--option by=job` for the batch jobs).")
    st.dataframe(usage, hide_index=True, width="stretch")
if not batch_jobs.empty:
    st.markdown("**Batch jobs**")
    st.dataframe(batch_jobs[["model", "provider", "attempt", "state", "provider_state", "n_requests", "n_completed",
                             "n_failed", "n_answered", "n_errors", "n_missing", "estimated_cost_usd", "actual_cost_usd",
                             "submitted_at", "finished_at", "message", "job_id", "launch_id"]],
                 hide_index=True, width="stretch")

# ---------------------------------------------------------------- runs against a baseline
compare_runs.section(store_handle.source(), sidebar.current_selection())

# ---------------------------------------------------------------- reproducibility
st.subheader("Reproducibility")
try:
    repro = views.reproducibility(store_handle.source(), sidebar.current_selection())
except views.StoreError as exc:
    st.warning(f"The store is busy: {plain(exc)}")
    repro = pd.DataFrame()
if repro.empty:
    st.caption("No repeated runs yet: launch with 'Repetitions' above (or `run --repeat K --sample N`).")
else:
    st.caption("Per model and condition: share of sampled items answered identically in every repetition, the "
               "mean per-item standard deviation and range of the score, and the lowest/highest run mean.")
    st.dataframe(repro, hide_index=True, width="stretch",
                 column_config={"identical_share": st.column_config.ProgressColumn(
                     "identical answers", min_value=0.0, max_value=1.0, format="percent")})

# ---------------------------------------------------------------- stability over repeats
st.subheader("Stability over repeats")
try:
    stable = panels.draw("stability", store_handle.source(), sidebar.current_selection())
except (UserError, views.StoreError) as exc:  # an aggregate-only dataset, a busy store
    st.caption(plain(exc))
    stable = None
if stable is not None and stable.frame.empty:
    st.caption(stable.caption)  # no repeats: one line says so
elif stable is not None:
    if stable.story:  # the finding naming a model that flips more than every rival (a test carries it)
        st.text(stable.story)
    plots.panel(stable)
    st.dataframe(stable.frame, hide_index=True, width="stretch",
                 column_config={"agree_share": st.column_config.ProgressColumn(
                     "repeats agree", min_value=0.0, max_value=1.0, format="percent")})
    flips = panels.draw("item_stability", store_handle.source(), sidebar.current_selection(), top=10)
    plots.panel(flips)
    st.dataframe(flips.frame, hide_index=True, width="stretch")

# ---------------------------------------------------------------- adaptive runs (`run --adaptive`)
st.subheader("Adaptive runs")
try:
    adaptive_list = views.adaptive_runs(store_handle.source(), sidebar.current_selection())
except views.StoreError as exc:
    st.caption(f"The store is busy: {plain(exc)}")
    adaptive_list = pd.DataFrame()
if adaptive_list.empty:
    st.caption("No adaptive run on this dataset yet: freeze an item bank (`bank --dataset D`), then "
               "`run --model KEY --adaptive --bank V --target-se 0.30`.")
else:
    from eduart_core.charts.adaptive import figure_adaptive_trajectory

    tables.table(adaptive_list, "adaptive_runs", adaptive_list.attrs.get("caption", ""))
    chosen = st.selectbox("Trajectory of", list(adaptive_list["run_id"].astype(str)), key="runs_adaptive_run")
    try:
        path = views.adaptive_trajectory(store_handle.source(), sidebar.current_selection(), run=chosen)
    except (UserError, views.StoreError) as exc:
        st.caption(plain(exc))
    else:
        plots.chart(figure_adaptive_trajectory(path), "adaptive_trajectory", path.attrs.get("caption", ""))
        tables.table(path, "adaptive_trajectory", path.attrs.get("caption", ""))
    try:
        board = views.adaptive_ranking(store_handle.source(), sidebar.current_selection())
    except (UserError, views.StoreError) as exc:
        st.caption(plain(exc))
    else:
        tables.table(board, "adaptive_ranking", board.attrs.get("caption", ""))
