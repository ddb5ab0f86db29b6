-- Every token taken from a shared bucket, for the last hour: how many register retrievals the
-- current hour window holds, which the /metrics endpoint shows beside the tokens left.
-- take_rate_limit_token writes a row per token and deletes its bucket's rows older than an hour,
-- so the table holds at most an hour's retrievals.
CREATE TABLE processing.rate_limit_takes (
    name      text NOT NULL REFERENCES processing.rate_limits (name) ON DELETE CASCADE,
    taken_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    priority  processing.job_priority NOT NULL
);
CREATE INDEX rate_limit_takes_name_idx ON processing.rate_limit_takes (name, taken_at);
