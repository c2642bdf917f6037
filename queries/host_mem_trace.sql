-- name: host_mem_trace
-- title: Host Memory Trace
-- description: The resident set size (RSS) and its high-water mark of every process of the
--   traced tree over time, as --host-memory-sampling read them from /proc (MiB; times
--   relative to the session start).  --filter-time keeps the samples inside the window,
--   --pid one process.
-- requires: host_memory: no host memory samples (record with --host-memory-sampling true)
-- columns: Time (ns), PID, Process, RSS (MiB), High-Water Mark (MiB)
SELECT m.ns - :session_start AS "Time (ns)",
       m.pid AS "PID",
       s.value AS "Process",
       m.rss_bytes / 1048576.0 AS "RSS (MiB)",
       m.hwm_bytes / 1048576.0 AS "High-Water Mark (MiB)"
FROM host_memory AS m
LEFT JOIN processes AS p ON p.pid = m.pid
LEFT JOIN strings AS s ON s.id = p.name_id
WHERE m.ns >= :filter_start AND m.ns <= :filter_end AND (:pid < 0 OR m.pid = :pid)
ORDER BY m.ns, m.pid;
