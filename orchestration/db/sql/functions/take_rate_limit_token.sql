-- take_rate_limit_token: a token bucket shared by every process, people first. Returns 0 when a
-- token was taken, otherwise the seconds until one may be available to this taker (nothing is
-- taken then). A background taker leaves p_reserve tokens to people, so that a person waits at
-- most about one refill interval; and since it needs more tokens than a person, a person whose
-- token is due takes it first. Background work never starves: once no background taker has had
-- a token for p_patience_s, the next one is owed the next token, and people leave it one.
-- Each token taken is recorded in processing.rate_limit_takes for an hour.
CREATE OR REPLACE FUNCTION processing.take_rate_limit_token(
    p_name text, p_capacity double precision, p_refill_per_s double precision,
    p_priority processing.job_priority, p_reserve double precision, p_patience_s double precision)
RETURNS double precision
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
DECLARE
    bucket processing.rate_limits;
    available double precision;
    keep double precision := 0;
    starved boolean;
BEGIN
    INSERT INTO processing.rate_limits (name, capacity, refill_per_s, tokens)
    VALUES (p_name, p_capacity, p_refill_per_s, p_capacity)
    ON CONFLICT (name) DO UPDATE SET capacity = EXCLUDED.capacity, refill_per_s = EXCLUDED.refill_per_s
    RETURNING * INTO bucket;
    available := processing.rate_limit_available(bucket);
    starved := p_priority = 'background'
               AND bucket.background_taken_at <= clock_timestamp() - make_interval(secs => p_patience_s);
    IF p_priority = 'background' AND NOT starved THEN
        keep := p_reserve;
    ELSIF p_priority = 'interactive' AND bucket.background_owed_until > clock_timestamp() THEN
        keep := 1;
    END IF;
    IF available >= 1 + keep THEN
        UPDATE processing.rate_limits
           SET tokens = available - 1, refilled_at = clock_timestamp(),
               background_taken_at = CASE WHEN p_priority = 'background' THEN clock_timestamp()
                                          ELSE background_taken_at END,
               background_owed_until = CASE WHEN p_priority = 'background' THEN NULL
                                            ELSE background_owed_until END
         WHERE name = p_name;
        -- The takes of the current hour window, for /metrics; older ones go as new ones come.
        DELETE FROM processing.rate_limit_takes
         WHERE name = p_name AND taken_at < clock_timestamp() - interval '1 hour';
        INSERT INTO processing.rate_limit_takes (name, priority) VALUES (p_name, p_priority);
        RETURN 0;
    END IF;
    -- A starved background taker is owed the next token for as long as it keeps asking.
    UPDATE processing.rate_limits
       SET tokens = available, refilled_at = clock_timestamp(),
           background_owed_until = CASE WHEN starved THEN clock_timestamp() + make_interval(secs => 2 / bucket.refill_per_s)
                                        ELSE background_owed_until END
     WHERE name = p_name;
    IF keep > 0 THEN
        -- Whichever comes first: a token above the reserve, or the end of background's patience.
        RETURN greatest(0.001, least(
            (1 + keep - available) / bucket.refill_per_s,
            extract(epoch FROM bucket.background_taken_at + make_interval(secs => p_patience_s) - clock_timestamp())));
    END IF;
    RETURN (1 - available) / bucket.refill_per_s;
END
$$;

REVOKE EXECUTE ON FUNCTION processing.take_rate_limit_token(text, double precision, double precision,
    processing.job_priority, double precision, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION processing.take_rate_limit_token(text, double precision, double precision,
    processing.job_priority, double precision, double precision) TO hreg_worker;
