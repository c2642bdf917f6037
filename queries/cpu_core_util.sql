-- name: cpu_core_util
-- title: CPU Core Utilization
-- description: Per core, over the time the context switches cover (from the first to the last
--   switch seen on any core, or the --filter-time window): the share of it the sampled process
--   tree's threads ran, the share other processes ran, and the share the core was idle.  Without
--   the sched:sched_switch tracepoint (tracefs not mounted: only the tree's own switches are
--   seen) other processes and idle time cannot be told apart: both read "unknown".
-- requires: sched_slices: the report has no scheduling data (record with -s process-tree or -s system-wide)
-- columns: CPU, Traced Tree (%), Others (%), Idle (%), Traced Tree (ns), Others (ns), Span (ns)
WITH span AS (
    SELECT MAX(MIN(start_ns), :filter_start) AS s, MIN(MAX(end_ns), :filter_end) AS e
    FROM sched_slices
), clipped AS (
    SELECT x.cpu, x.in_tree, MIN(x.end_ns, span.e) - MAX(x.start_ns, span.s) AS duration
    FROM sched_slices AS x, span
    WHERE x.end_ns > span.s AND x.start_ns < span.e
), per_core AS (
    SELECT cpu,
           SUM(CASE WHEN in_tree THEN duration ELSE 0 END) AS tree,
           SUM(CASE WHEN in_tree THEN 0 ELSE duration END) AS others
    FROM clipped GROUP BY cpu
), seen AS (
    -- whether the switches of other processes were recorded
    SELECT COALESCE((SELECT scheduling <> 'context switches' FROM cpu_sampling_info LIMIT 1), 1)
           AS others
)
SELECT c.cpu AS "CPU",
       100.0 * c.tree / (span.e - span.s) AS "Traced Tree (%)",
       CASE WHEN seen.others THEN 100.0 * c.others / (span.e - span.s) ELSE 'unknown' END
           AS "Others (%)",
       CASE WHEN seen.others
            THEN MAX(0.0, 100.0 - 100.0 * (c.tree + c.others) / (span.e - span.s))
            ELSE 'unknown' END AS "Idle (%)",
       c.tree AS "Traced Tree (ns)",
       CASE WHEN seen.others THEN c.others ELSE 'unknown' END AS "Others (ns)",
       span.e - span.s AS "Span (ns)"
FROM per_core AS c, span, seen
WHERE span.e > span.s
ORDER BY c.cpu;
