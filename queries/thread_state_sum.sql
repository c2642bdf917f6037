-- name: thread_state_sum
-- title: Thread State Summary (estimated)
-- description: Per thread, time estimated Possibly Running and Possibly Waiting from OS
--   runtime tracing (-t osrt) for the threads CPU sampling does not cover (thread_sched_sum
--   has those): time inside a traced OS runtime call
--   counts as waiting, the rest of the thread's life as running.  Calls shorter than
--   --osrt-threshold are not traced and count as running.  With --filter-time, intervals are
--   clipped to the window.
-- columns: PID, TID, Thread, Possibly Running (ns), Possibly Waiting (ns), Running (%),
--   Waiting (%)
WITH clipped AS (
    SELECT pid, tid, state, MIN(end_ns, :filter_end) - MAX(start_ns, :filter_start) AS duration
    FROM thread_states
    WHERE state LIKE 'Possibly %' AND end_ns >= :filter_start AND start_ns <= :filter_end
), per_thread AS (
    SELECT pid, tid,
           SUM(CASE WHEN state = 'Possibly Running' THEN duration ELSE 0 END) AS running,
           SUM(CASE WHEN state = 'Possibly Waiting' THEN duration ELSE 0 END) AS waiting
    FROM clipped GROUP BY pid, tid
)
SELECT p.pid AS "PID",
       p.tid AS "TID",
       n.value AS "Thread",
       p.running AS "Possibly Running (ns)",
       p.waiting AS "Possibly Waiting (ns)",
       100.0 * p.running / NULLIF(p.running + p.waiting, 0) AS "Running (%)",
       100.0 * p.waiting / NULLIF(p.running + p.waiting, 0) AS "Waiting (%)"
FROM per_thread AS p
LEFT JOIN threads AS t ON t.pid = p.pid AND t.tid = p.tid
LEFT JOIN strings AS n ON n.id = t.name_id
ORDER BY p.pid, p.tid;
