-- name: osrt_trace
-- title: OS Runtime Trace
-- description: Every recorded OS runtime call in start order, with its return value, errno
--   when it failed, and the call stack when one was captured (calls lasting at least
--   --osrt-backtrace-threshold): function names from the caller outwards, joined by " <- ";
--   an address stands in where no symbol covers it.  Times are relative to the session start.
-- columns: Start (ns), End (ns), Duration (ns), Name, PID, TID, Result, Errno, Call Stack
SELECT o.start_ns - :session_start AS "Start (ns)",
       o.end_ns - :session_start AS "End (ns)",
       o.end_ns - o.start_ns AS "Duration (ns)",
       s.value AS "Name",
       o.pid AS "PID",
       o.tid AS "TID",
       o.result AS "Result",
       o.error AS "Errno",
       (SELECT group_concat(frame, ' <- ') FROM (
            SELECT COALESCE(fs.value, printf('0x%x', f.address)) AS frame
            FROM callchain_frames AS cf
            JOIN frames AS f ON f.id = cf.frame_id
            LEFT JOIN strings AS fs ON fs.id = f.function_id
            WHERE cf.callchain_id = o.callchain_id
            ORDER BY cf.level)) AS "Call Stack"
FROM osrt_calls AS o
JOIN strings AS s ON s.id = o.name_id
WHERE o.end_ns >= :filter_start AND o.start_ns <= :filter_end
ORDER BY o.start_ns;
