-- The questions a folder of captures answers, asked of the three tables `sse-replay scan` writes
-- (or the Spark job writes: the same rows). DuckDB dialect. Each query has a `-- name:` line;
-- `duckdb_queries.py` sets up the views `streams`, `calls` and `findings` over the Parquet files and
-- runs them (`--check` compares the first three with `sse-replay scan --json`).
--
-- By hand, in the duckdb shell:
--   CREATE VIEW streams  AS SELECT * FROM 'tables/streams.parquet';
--   CREATE VIEW calls    AS SELECT * FROM 'tables/calls.parquet';
--   CREATE VIEW findings AS SELECT * FROM 'tables/findings.parquet';
-- and paste a query. (Spark's output: read_parquet('out/streams/**/*.parquet', hive_partitioning = true).)

-- name: groups
-- Per dialect, provider host and model: how many streams, how many end not OK (as `check` would
-- say), and how long until the first call (p50/p95, µs from the request). Skipped entries (not
-- captures) are not streams.
SELECT
    dialect,
    provider_host,
    model,
    count(*) AS streams,
    count(*) FILTER (WHERE verdict <> 'ok') AS not_ok,
    round(100.0 * count(*) FILTER (WHERE verdict <> 'ok') / count(*), 1) AS not_ok_pct,
    count(first_call_us) AS first_call_streams,
    quantile_disc(first_call_us, 0.5) AS first_call_p50_us,
    quantile_disc(first_call_us, 0.95) AS first_call_p95_us
FROM streams
WHERE verdict <> 'skipped'
GROUP BY ALL
ORDER BY ALL;

-- name: finding_kinds
-- Which providers and models send which quirks: per group and finding kind, the streams that
-- showed it.
SELECT
    s.dialect,
    s.provider_host,
    s.model,
    f.kind,
    count(DISTINCT f.stream_key) AS streams
FROM findings AS f
JOIN streams AS s USING (stream_key)
GROUP BY ALL
ORDER BY ALL;

-- name: naive_failures
-- Which naive strategy would fail on how many streams: per group and strategy, the streams it
-- could run on and those where it ends with other calls than the correct ones.
SELECT
    dialect,
    provider_host,
    model,
    replace(substr(strategy, 8), '_', '-') AS strategy,
    count(*) AS ran,
    count(*) FILTER (WHERE NOT agrees) AS failed,
    round(100.0 * count(*) FILTER (WHERE NOT agrees) / count(*), 1) AS failed_pct
FROM (
    UNPIVOT (SELECT dialect, provider_host, model, COLUMNS('^agrees_') FROM streams WHERE verdict <> 'skipped')
    ON COLUMNS('^agrees_') INTO NAME strategy VALUE agrees
)
GROUP BY ALL
ORDER BY ALL;

-- name: endings
-- How often streams end broken: how each dialect's streams ended.
SELECT dialect, ending, count(*) AS streams
FROM streams
WHERE verdict NOT IN ('unreadable', 'skipped')
GROUP BY ALL
ORDER BY dialect, streams DESC;

-- name: top_quirks
-- The ten quirks seen in the most streams, with the providers that send them.
SELECT
    f.kind,
    any_value(f.severity) AS severity,
    count(DISTINCT f.stream_key) AS streams,
    string_agg(DISTINCT coalesce(s.provider_host, '?'), ', ' ORDER BY coalesce(s.provider_host, '?')) AS hosts
FROM findings AS f
JOIN streams AS s USING (stream_key)
GROUP BY f.kind
ORDER BY streams DESC, f.kind
LIMIT 10;

-- name: calls_that_failed
-- Calls whose arguments did not parse, by model and function name.
SELECT s.model, c.name, count(*) AS calls, any_value(c.parse_error) AS example_error
FROM calls AS c
JOIN streams AS s USING (stream_key)
WHERE NOT c.parsed AND c.server_tool IS NULL
GROUP BY ALL
ORDER BY calls DESC;

-- name: duplicates
-- The same stream captured more than once (same body bytes).
SELECT content_hash, count(*) AS copies, min(source_file) AS example
FROM streams
WHERE content_hash IS NOT NULL
GROUP BY content_hash
HAVING count(*) > 1
ORDER BY copies DESC
LIMIT 10;

-- name: unreadable
-- Files that could not be read, and why.
SELECT source_file, error
FROM streams
WHERE verdict = 'unreadable'
ORDER BY source_file;

-- name: skipped
-- Entries found in folders that are not captures (nothing recognised in them, or not a regular
-- file), and why: never counted as streams.
SELECT source_file, error
FROM streams
WHERE verdict = 'skipped'
ORDER BY source_file;
