-- name: event_sample_thread_sum
-- title: Event Sampling Summary per Thread
-- description: The CPU core and OS events counted per thread with --event-sample
--   process-tree (each thread of the traced tree has counters of its own, opened just after
--   it started): per thread and event, the count over the recording (or the --filter-time
--   window), per second of the thread's counted time, and its share of the event's count over
--   all threads.  --pid/--tid keep one process or thread.  A thread's first moments (before
--   the launcher saw it start) are only in the per-CPU counts of event_sample_sum.
-- requires: event_thread_samples: no per-thread event samples (record with --event-sample process-tree)
-- columns: Event, PID, TID, Thread, Count, Per Second, Share (%), Readings
WITH samples AS (
    SELECT s.*, LAG(s.ns) OVER (PARTITION BY s.event, s.tid ORDER BY s.ns) AS previous_ns
    FROM event_thread_samples AS s
    WHERE (:pid < 0 OR s.pid = :pid) AND (:tid < 0 OR s.tid = :tid)
), windowed AS (
    SELECT * FROM samples WHERE ns >= :filter_start AND ns <= :filter_end
), per_thread AS (
    SELECT event, pid, tid, SUM(delta) AS count, COUNT(*) AS readings,
           MAX(ns) - MIN(COALESCE(MAX(previous_ns, :filter_start), ns)) AS span
    FROM windowed GROUP BY event, pid, tid
), per_event AS (
    SELECT event, SUM(count) AS total FROM per_thread GROUP BY event
)
SELECT t.name AS "Event",
       p.pid AS "PID",
       p.tid AS "TID",
       n.value AS "Thread",
       p.count AS "Count",
       CASE WHEN p.span > 0 THEN p.count * 1e9 / p.span END AS "Per Second",
       CASE WHEN e.total > 0 THEN ROUND(100.0 * p.count / e.total, 1) ELSE 0 END AS "Share (%)",
       p.readings AS "Readings"
FROM per_thread AS p
JOIN event_types AS t ON t.id = p.event
JOIN per_event AS e ON e.event = p.event
LEFT JOIN threads AS th ON th.pid = p.pid AND th.tid = p.tid
LEFT JOIN strings AS n ON n.id = th.name_id
ORDER BY t.grp, t.idx, p.count DESC, p.pid, p.tid;
