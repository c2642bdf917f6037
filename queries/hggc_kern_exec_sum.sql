-- name: hggc_kern_exec_sum
-- alias: cuda_kern_exec_sum
-- title: HGGC Kernel Launch and Execution Summary
-- description: hggc_kern_exec_trace summarized per process, thread, device, launching API
--   and kernel: T = total (call start to kernel end), A = API call, Q = time queued after the
--   call returned (QCount kernels were queued at all; the Q statistics cover those), K =
--   kernel execution.  DevId is the device's index on the machine.
-- columns: PID, TID, DevId, Count, QCount, TAvg (ns), TMed (ns), TMin (ns), TMax (ns),
--   TStdDev (ns), AAvg (ns), AMed (ns), AMin (ns), AMax (ns), AStdDev (ns), QAvg (ns),
--   QMed (ns), QMin (ns), QMax (ns), QStdDev (ns), KAvg (ns), KMed (ns), KMin (ns),
--   KMax (ns), KStdDev (ns), API Name, Kernel Name
WITH launches AS (
    SELECT k.pid, a.tid, COALESCE(d.physical_index, k.device) AS device, a.name_id,
           n.demangled_name_id AS kernel_id,
           k.end_ns - a.start_ns AS total, a.end_ns - a.start_ns AS api,
           CASE WHEN k.start_ns > a.end_ns THEN k.start_ns - a.end_ns END AS queue,
           k.end_ns - k.start_ns AS kernel
    FROM ppu_kernels AS k
    JOIN hggc_api_calls AS a ON a.pid = k.pid AND a.correlation_id = k.correlation_id
    JOIN ppu_kernel_names AS n ON n.mangled_name_id = k.mangled_name_id
    LEFT JOIN ppu_devices AS d ON d.pid = k.pid AND d.device = k.device
    WHERE k.end_ns >= :filter_start AND a.start_ns <= :filter_end
)
SELECT l.pid AS "PID", l.tid AS "TID", l.device AS "DevId",
       COUNT(*) AS "Count", COUNT(l.queue) AS "QCount",
       AVG(l.total) AS "TAvg (ns)", median(l.total) AS "TMed (ns)", MIN(l.total) AS "TMin (ns)",
       MAX(l.total) AS "TMax (ns)", stdev(l.total) AS "TStdDev (ns)",
       AVG(l.api) AS "AAvg (ns)", median(l.api) AS "AMed (ns)", MIN(l.api) AS "AMin (ns)",
       MAX(l.api) AS "AMax (ns)", stdev(l.api) AS "AStdDev (ns)",
       AVG(l.queue) AS "QAvg (ns)", median(l.queue) AS "QMed (ns)", MIN(l.queue) AS "QMin (ns)",
       MAX(l.queue) AS "QMax (ns)", stdev(l.queue) AS "QStdDev (ns)",
       AVG(l.kernel) AS "KAvg (ns)", median(l.kernel) AS "KMed (ns)",
       MIN(l.kernel) AS "KMin (ns)", MAX(l.kernel) AS "KMax (ns)",
       stdev(l.kernel) AS "KStdDev (ns)",
       s.value AS "API Name", ks.value AS "Kernel Name"
FROM launches AS l
JOIN strings AS s ON s.id = l.name_id
JOIN strings AS ks ON ks.id = l.kernel_id
GROUP BY l.pid, l.tid, l.device, l.name_id, l.kernel_id
ORDER BY SUM(l.total) DESC, l.pid, l.tid;
