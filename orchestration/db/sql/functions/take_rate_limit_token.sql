-- take_rate_limit_token: a token bucket shared by every process. Returns 0 when a token was
-- taken, otherwise the seconds until one is available (nothing is taken then).
CREATE OR REPLACE FUNCTION processing.take_rate_limit_token(p_name text, p_capacity double precision, p_refill_per_s double precision)
RETURNS double precision
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
DECLARE
    bucket processing.rate_limits;
    available double precision;
BEGIN
    INSERT INTO processing.rate_limits (name, capacity, refill_per_s, tokens)
    VALUES (p_name, p_capacity, p_refill_per_s, p_capacity)
    ON CONFLICT (name) DO UPDATE SET capacity = EXCLUDED.capacity, refill_per_s = EXCLUDED.refill_per_s
    RETURNING * INTO bucket;
    available := least(bucket.capacity,
                       bucket.tokens + extract(epoch FROM clock_timestamp() - bucket.refilled_at) * bucket.refill_per_s);
    IF available >= 1 THEN
        UPDATE processing.rate_limits SET tokens = available - 1, refilled_at = clock_timestamp() WHERE name = p_name;
        RETURN 0;
    END IF;
    UPDATE processing.rate_limits SET tokens = available, refilled_at = clock_timestamp() WHERE name = p_name;
    RETURN (1 - available) / bucket.refill_per_s;
END
$$;

REVOKE EXECUTE ON FUNCTION processing.take_rate_limit_token(text, double precision, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION processing.take_rate_limit_token(text, double precision, double precision) TO hreg_worker;
