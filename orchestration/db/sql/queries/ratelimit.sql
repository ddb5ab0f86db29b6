-- name: take_token
-- Take a token of the shared bucket :name for a :priority retrieval; returns 0, or the seconds until one may be available (processing.take_rate_limit_token).
SELECT processing.take_rate_limit_token(:name, :capacity, :refill_per_s, CAST(:priority AS processing.job_priority),
                                        :reserve, :patience_s)
