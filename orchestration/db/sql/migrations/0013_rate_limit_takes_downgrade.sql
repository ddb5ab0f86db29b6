DROP TABLE processing.rate_limit_takes;
