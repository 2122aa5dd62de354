-- Accounts (docs/security.md). Mirrors the PostgreSQL V4: key scopes,
-- expiry and rate overrides; project credit limits, spend and rate
-- overrides; usage per minute; server heartbeats. Money is integer
-- micro-USD, timestamps INTEGER microseconds.
ALTER TABLE onceq_api_keys ADD COLUMN actions TEXT NOT NULL DEFAULT 'full' CHECK (actions <> '');
ALTER TABLE onceq_api_keys ADD COLUMN queue_patterns TEXT NOT NULL DEFAULT '*' CHECK (queue_patterns <> '');
ALTER TABLE onceq_api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE onceq_api_keys ADD COLUMN rate_per_sec REAL CHECK (rate_per_sec >= 0);
ALTER TABLE onceq_api_keys ADD COLUMN rate_burst INTEGER
    CHECK (rate_burst >= 1 AND (rate_per_sec IS NULL) = (rate_burst IS NULL));

ALTER TABLE onceq_projects ADD COLUMN credit_limit_micros INTEGER CHECK (credit_limit_micros >= 0);
ALTER TABLE onceq_projects ADD COLUMN spent_micros INTEGER NOT NULL DEFAULT 0 CHECK (spent_micros >= 0);
ALTER TABLE onceq_projects ADD COLUMN rate_per_sec REAL CHECK (rate_per_sec >= 0);
ALTER TABLE onceq_projects ADD COLUMN rate_burst INTEGER
    CHECK (rate_burst >= 1 AND (rate_per_sec IS NULL) = (rate_burst IS NULL));

CREATE TABLE onceq_usage (
    project        TEXT NOT NULL,
    capability     TEXT NOT NULL,
    minute         INTEGER NOT NULL,
    calls          INTEGER NOT NULL CHECK (calls >= 0),
    billable_calls INTEGER NOT NULL CHECK (billable_calls >= 0),
    cost_micros    INTEGER NOT NULL CHECK (cost_micros >= 0),
    PRIMARY KEY (project, capability, minute)
);

CREATE TABLE onceq_servers (
    server_id TEXT PRIMARY KEY,
    last_seen INTEGER NOT NULL
);
