-- name: thread_sched_sum
-- title: Thread Scheduling Summary
-- description: Per thread of the sampled process tree, from every context switch
--   (sched:sched_switch, -s process-tree|system-wide): time Running on a core, Preempted
--   (runnable but switched out), Waiting (sleeping: S) and Uninterruptible (in the kernel,
--   usually I/O: D), the share of the thread's scheduled time Running, how many times it
--   moved to another core, and the cores it ran on.  With --filter-time, intervals are clipped
--   to the window; --pid/--tid keep one process or thread.
-- requires: sched_slices: the report has no scheduling data (record with -s process-tree or -s system-wide)
-- columns: PID, TID, Thread, Running (ns), Preempted (ns), Waiting (ns), Uninterruptible (ns),
--   Running (%), Migrations, Cores
WITH states AS (
    SELECT pid, tid, state, MIN(end_ns, :filter_end) - MAX(start_ns, :filter_start) AS duration
    FROM thread_states
    WHERE state IN ('Running', 'Preempted', 'Waiting', 'Uninterruptible')
      AND end_ns >= :filter_start AND start_ns <= :filter_end
      AND (:pid < 0 OR pid = :pid) AND (:tid < 0 OR tid = :tid)
), per_thread AS (
    SELECT pid, tid,
           SUM(CASE WHEN state = 'Running' THEN duration ELSE 0 END) AS running,
           SUM(CASE WHEN state = 'Preempted' THEN duration ELSE 0 END) AS preempted,
           SUM(CASE WHEN state = 'Waiting' THEN duration ELSE 0 END) AS waiting,
           SUM(CASE WHEN state = 'Uninterruptible' THEN duration ELSE 0 END) AS uninterruptible
    FROM states GROUP BY pid, tid
), slices AS (
    SELECT pid, tid, cpu,
           LAG(cpu) OVER (PARTITION BY pid, tid ORDER BY start_ns) AS previous_cpu
    FROM sched_slices
    WHERE in_tree AND end_ns >= :filter_start AND start_ns <= :filter_end
), moves AS (
    SELECT pid, tid, SUM(previous_cpu IS NOT NULL AND previous_cpu <> cpu) AS migrations
    FROM slices GROUP BY pid, tid
), cores AS (
    SELECT pid, tid, group_concat(cpu, ',') AS cores
    FROM (SELECT DISTINCT pid, tid, cpu FROM slices ORDER BY cpu) GROUP BY pid, tid
)
SELECT p.pid AS "PID",
       p.tid AS "TID",
       n.value AS "Thread",
       p.running AS "Running (ns)",
       p.preempted AS "Preempted (ns)",
       p.waiting AS "Waiting (ns)",
       p.uninterruptible AS "Uninterruptible (ns)",
       100.0 * p.running / NULLIF(p.running + p.preempted + p.waiting + p.uninterruptible, 0)
           AS "Running (%)",
       COALESCE(m.migrations, 0) AS "Migrations",
       COALESCE(c.cores, '') AS "Cores"
FROM per_thread AS p
LEFT JOIN moves AS m ON m.pid = p.pid AND m.tid = p.tid
LEFT JOIN cores AS c ON c.pid = p.pid AND c.tid = p.tid
LEFT JOIN threads AS t ON t.pid = p.pid AND t.tid = p.tid
LEFT JOIN strings AS n ON n.id = t.name_id
ORDER BY p.pid, p.tid;
