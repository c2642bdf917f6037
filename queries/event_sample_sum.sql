-- name: event_sample_sum
-- title: Event Sampling Summary
-- description: The CPU core and OS events counted with --event-sample, per event: the total
--   count over the recording (or the --filter-time window), per second, per CPU, and the
--   threads counted on their own (--event-sample process-tree; see event_sample_thread_sum); an
--   event this machine could not count (a hardware event of a virtual machine, a
--   tracepoint not there) is listed with the reason.
-- requires: event_types: no event samples (record with --event-sample system-wide|process-tree)
-- columns: Event, Index, Group, Count, Per Second, CPUs, Max per CPU, Threads, Status,
--   Description
WITH window AS (
    SELECT MAX(MIN(ns), :filter_start) AS lo, MIN(MAX(ns), :filter_end) AS hi
    FROM event_samples
), per_cpu AS (
    SELECT s.event, s.cpu, SUM(s.delta) AS count
    FROM event_samples AS s, window AS w
    WHERE s.ns >= w.lo AND s.ns <= w.hi
    GROUP BY s.event, s.cpu
), per_event_threads AS (
    SELECT s.event, COUNT(DISTINCT s.tid) AS threads
    FROM event_thread_samples AS s, window AS w
    WHERE s.ns >= w.lo AND s.ns <= w.hi
    GROUP BY s.event
)
SELECT t.name AS "Event",
       t.idx AS "Index",
       t.grp AS "Group",
       SUM(c.count) AS "Count",
       CASE WHEN w.hi > w.lo AND t.error IS NULL
            THEN SUM(c.count) * 1e9 / (w.hi - w.lo) END AS "Per Second",
       COUNT(c.cpu) AS "CPUs",
       MAX(c.count) AS "Max per CPU",
       COALESCE((SELECT threads FROM per_event_threads WHERE event = t.id), 0) AS "Threads",
       CASE WHEN t.error IS NULL THEN 'counted'
            WHEN t.error IN (2, 95) THEN 'not on this machine'
            WHEN t.error IN (1, 13) THEN 'not allowed'
            ELSE 'error ' || t.error END AS "Status",
       t.description AS "Description"
FROM event_types AS t
LEFT JOIN per_cpu AS c ON c.event = t.id
CROSS JOIN window AS w
GROUP BY t.id
ORDER BY t.error IS NOT NULL, t.grp, t.idx;
