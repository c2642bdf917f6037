-- name: hggc_kern_exec_trace
-- alias: cuda_kern_exec_trace
-- title: HGGC Kernel Launch and Execution Trace
-- description: Each kernel with the API call that launched it (joined by correlation id):
--   the API call, the time queued between the call's return and the kernel's start (empty
--   when the kernel started before the call returned), the kernel's execution, and the
--   total from call to kernel end.  DevId is the device's index on the machine.  Times are
--   relative to the session start.
-- columns: API Start (ns), API Dur (ns), Queue Start (ns), Queue Dur (ns), Kernel Start (ns),
--   Kernel Dur (ns), Total Dur (ns), PID, TID, DevId, API Function, GridXYZ, BlockXYZ,
--   Kernel Name
SELECT a.start_ns - :session_start AS "API Start (ns)",
       a.end_ns - a.start_ns AS "API Dur (ns)",
       CASE WHEN k.start_ns > a.end_ns THEN a.end_ns - :session_start END AS "Queue Start (ns)",
       CASE WHEN k.start_ns > a.end_ns THEN k.start_ns - a.end_ns END AS "Queue Dur (ns)",
       k.start_ns - :session_start AS "Kernel Start (ns)",
       k.end_ns - k.start_ns AS "Kernel Dur (ns)",
       k.end_ns - a.start_ns AS "Total Dur (ns)",
       k.pid AS "PID",
       a.tid AS "TID",
       COALESCE(d.physical_index, k.device) AS "DevId",
       s.value AS "API Function",
       k.grid_x || ' ' || k.grid_y || ' ' || k.grid_z AS "GridXYZ",
       k.block_x || ' ' || k.block_y || ' ' || k.block_z AS "BlockXYZ",
       ks.value AS "Kernel Name"
FROM ppu_kernels AS k
JOIN hggc_api_calls AS a ON a.pid = k.pid AND a.correlation_id = k.correlation_id
JOIN strings AS s ON s.id = a.name_id
JOIN ppu_kernel_names AS n ON n.mangled_name_id = k.mangled_name_id
JOIN strings AS ks ON ks.id = n.demangled_name_id
LEFT JOIN ppu_devices AS d ON d.pid = k.pid AND d.device = k.device
WHERE k.end_ns >= :filter_start AND a.start_ns <= :filter_end
ORDER BY a.start_ns, k.start_ns;
