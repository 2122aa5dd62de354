-- Accounts (docs/security.md). Same number as the SQLite V4.
--
-- Keys get a scope (actions and queue-name patterns, in their text form,
-- see onceq_types::scope), an optional expiry (a rotated key's old half)
-- and an optional rate limit of their own. Projects get an optional credit
-- limit, what they spent, and an optional rate limit. Money is integer
-- micro-USD.
ALTER TABLE onceq_api_keys
    ADD COLUMN actions text NOT NULL DEFAULT 'full' CHECK (actions <> ''),
    ADD COLUMN queue_patterns text NOT NULL DEFAULT '*' CHECK (queue_patterns <> ''),
    ADD COLUMN expires_at timestamptz,
    ADD COLUMN rate_per_sec double precision CHECK (rate_per_sec >= 0),
    ADD COLUMN rate_burst integer CHECK (rate_burst >= 1),
    ADD CONSTRAINT onceq_api_keys_rate CHECK ((rate_per_sec IS NULL) = (rate_burst IS NULL));

ALTER TABLE onceq_projects
    ADD COLUMN credit_limit_micros bigint CHECK (credit_limit_micros >= 0),
    ADD COLUMN spent_micros bigint NOT NULL DEFAULT 0 CHECK (spent_micros >= 0),
    ADD COLUMN rate_per_sec double precision CHECK (rate_per_sec >= 0),
    ADD COLUMN rate_burst integer CHECK (rate_burst >= 1),
    ADD CONSTRAINT onceq_projects_rate CHECK ((rate_per_sec IS NULL) = (rate_burst IS NULL));

-- Usage per project, capability and minute. Servers aggregate in memory and
-- add to these rows about once a second (never once per request).
CREATE TABLE onceq_usage (
    project        text NOT NULL,
    capability     text NOT NULL,
    minute         timestamptz NOT NULL,
    calls          bigint NOT NULL CHECK (calls >= 0),
    billable_calls bigint NOT NULL CHECK (billable_calls >= 0),
    cost_micros    bigint NOT NULL CHECK (cost_micros >= 0),
    PRIMARY KEY (project, capability, minute)
);

-- Live servers sharing this database: each divides the rate limits by
-- their number.
CREATE TABLE onceq_servers (
    server_id text PRIMARY KEY,
    last_seen timestamptz NOT NULL
);
