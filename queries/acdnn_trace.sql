-- name: acdnn_trace
-- title: ACDNN Trace
-- description: Every cuDNN library call in start order: its nesting depth (library calls
--   around it on the thread), the status it returned (a cudnnStatus_t / cublasStatus_t; empty
--   when the function returns none), the handle and the stream it ran on (its argument, else
--   the stream the handle was set to), the kernels and device time of the work it launched
--   itself, and the call stack when one was captured (calls lasting at least
--   --acompute-backtrace-threshold), function names from the caller outwards.  Times are
--   relative to the session start.
-- requires: acompute_calls: no ACDNN/ACBLAS calls (record with -t acdnn,acblas a program that
--   calls cuDNN or cuBLAS)
-- columns: Start (ns), End (ns), Duration (ns), Name, Library, Depth, Status, Handle, Stream,
--   Kernels, Device Time (ns), PID, TID, Call Stack
SELECT c.start_ns - :session_start AS "Start (ns)",
       c.end_ns - :session_start AS "End (ns)",
       c.end_ns - c.start_ns AS "Duration (ns)",
       s.value AS "Name",
       CASE c.library WHEN 1 THEN 'cuDNN' WHEN 2 THEN 'cuBLAS' WHEN 3 THEN 'cuBLASLt'
                      WHEN 4 THEN 'cuBLASXt' ELSE '?' END AS "Library",
       c.depth AS "Depth",
       COALESCE(c.status, c.result) AS "Status",
       CASE WHEN c.handle IS NULL THEN NULL ELSE printf('0x%x', c.handle) END AS "Handle",
       CASE WHEN c.stream IS NULL THEN NULL ELSE printf('0x%x', c.stream) END AS "Stream",
       c.kernels AS "Kernels",
       c.device_ns AS "Device Time (ns)",
       c.pid AS "PID",
       c.tid AS "TID",
       (SELECT group_concat(frame, ' <- ') FROM (
            SELECT COALESCE(fs.value, printf('0x%x', f.address)) AS frame
            FROM callchain_frames AS cf
            JOIN frames AS f ON f.id = cf.frame_id
            LEFT JOIN strings AS fs ON fs.id = f.function_id
            WHERE cf.callchain_id = c.callchain_id
            ORDER BY cf.level)) AS "Call Stack"
FROM acompute_calls AS c
JOIN strings AS s ON s.id = c.name_id
WHERE c.domain = 1 AND c.end_ns >= :filter_start AND c.start_ns <= :filter_end
ORDER BY c.start_ns, c.depth;
