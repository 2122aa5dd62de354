-- PostgreSQL only: a kept ack (and a cancel of a message in flight) no
-- longer writes the attempt it ends into onceq_finished.attempts. Building
-- that JSON in the statement (onceq_attempts_append over the message's
-- attempts, two timestamps formatted, the CHECK parsing the result again)
-- was about half of what keeping a completed job cost per ack
-- (docs/performance.md, session 30). The row keeps what the attempt is
-- made of instead, and the store appends it as it reads the row
-- (rules::finished::closing_attempt; the SQLite store still writes it in
-- place, its JSON built in Rust, not in a statement):
--   ended_lease  the finish ended a hand-out (an ack; a cancel of a leased
--                message): its attempt, not in `attempts`, is
--                {delivery_count, consumed_at, ended at finished_at,
--                acked (completed) or cancelled}.
--   consumed_at  when that hand-out began, if recorded.
-- Rows written before keep their whole history in `attempts`: false.
ALTER TABLE onceq_finished
    ADD COLUMN ended_lease boolean NOT NULL DEFAULT false,
    ADD COLUMN consumed_at timestamptz,
    ADD CONSTRAINT onceq_finished_consumed_at_check CHECK (consumed_at IS NULL OR ended_lease);
