-- rate_limit_available: the tokens a shared bucket holds now, its stored tokens plus the refill
-- since, up to its capacity. What take_rate_limit_token takes from, and what /metrics shows; only
-- they call it, as its owner.
CREATE OR REPLACE FUNCTION processing.rate_limit_available(bucket processing.rate_limits)
RETURNS double precision
LANGUAGE sql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
    SELECT least(bucket.capacity,
                 bucket.tokens + extract(epoch FROM clock_timestamp() - bucket.refilled_at) * bucket.refill_per_s)
$$;

REVOKE EXECUTE ON FUNCTION processing.rate_limit_available(processing.rate_limits) FROM PUBLIC, hreg_worker;
