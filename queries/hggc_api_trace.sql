-- name: hggc_api_trace
-- alias: cuda_api_trace
-- title: HGGC API Trace
-- description: Every HGGC runtime and driver API call in start order: its return value
--   (0 = success; the error's name follows when it failed), the correlation id that joins
--   it to the device work it caused (hggc_gpu_trace's CorrId), and its call stack when
--   --hggcbacktrace captured one (caller outwards, joined by " <- ").  With
--   --api-name-mode kernel, a launch call is named by the kernel it launched.  Times are
--   relative to the session start.
-- columns: Start (ns), Duration (ns), Name, Result, CorrID, Pid, Tid, Thread Name, Call Stack
SELECT a.start_ns - :session_start AS "Start (ns)",
       a.end_ns - a.start_ns AS "Duration (ns)",
       s.value AS "Name",
       a.result AS "Result",
       a.correlation_id AS "CorrID",
       a.pid AS "Pid",
       a.tid AS "Tid",
       ts.value AS "Thread Name",
       (SELECT group_concat(frame, ' <- ') FROM (
            SELECT COALESCE(fs.value, printf('0x%x', f.address)) AS frame
            FROM callchain_frames AS cf
            JOIN frames AS f ON f.id = cf.frame_id
            LEFT JOIN strings AS fs ON fs.id = f.function_id
            WHERE cf.callchain_id = a.callchain_id
            ORDER BY cf.level)) AS "Call Stack"
FROM hggc_api_calls AS a
JOIN strings AS s ON s.id = CASE WHEN :api_name_mode = 'kernel'
                                THEN COALESCE((SELECT CASE WHEN COUNT(*) = 1 AND MAX(p.graph_id) IS NULL THEN MAX(p.name_id) END
                                               FROM ppu_activities AS p
                                               WHERE p.api_id = a.id AND p.kind = 1), a.name_id)
                                ELSE a.name_id END
LEFT JOIN threads AS t ON t.pid = a.pid AND t.tid = a.tid
LEFT JOIN strings AS ts ON ts.id = t.name_id
WHERE a.end_ns >= :filter_start AND a.start_ns <= :filter_end
ORDER BY a.start_ns, a.id;
