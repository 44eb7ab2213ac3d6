"""Running many model requests: concurrency, retries, rate limit, journal, resume, cache, cost."""
