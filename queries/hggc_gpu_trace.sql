-- name: hggc_gpu_trace
-- alias: cuda_gpu_trace
-- title: HGGC GPU Trace
-- description: Every kernel, memory copy and memset the devices executed, in start order,
--   and graph launches traced as one range (--hggc-graph-trace=graph).  CorrId joins a row
--   to the API call that caused it (hggc_api_trace).  Memory sizes are in MB (10^6 bytes);
--   Throughput is bytes moved per second of the operation.  Device is the device's name and
--   its index on the machine (CUDA_VISIBLE_DEVICES undone).  Times are relative to the
--   session start.
-- columns: Start (ns), Duration (ns), CorrId, GrdX, GrdY, GrdZ, BlkX, BlkY, BlkZ, Reg/Trd,
--   StcSMem (MB), DymSMem (MB), Bytes (MB), Throughput (MBps), SrcMemKd, DstMemKd, Device,
--   Ctx, Strm, Name
WITH work AS (
    SELECT k.start_ns, k.end_ns, k.correlation_id, k.grid_x, k.grid_y, k.grid_z, k.block_x,
           k.block_y, k.block_z, k.registers_per_thread AS registers,
           k.static_shared_bytes AS static_shared, k.dynamic_shared_bytes AS dynamic_shared,
           NULL AS bytes, NULL AS src_kind, NULL AS dst_kind, k.pid, k.device, k.context,
           k.stream, s.value AS name
    FROM ppu_kernels AS k
    JOIN ppu_kernel_names AS n ON n.mangled_name_id = k.mangled_name_id
    JOIN strings AS s ON s.id = n.demangled_name_id
    UNION ALL
    SELECT o.start_ns, o.end_ns, o.correlation_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, o.bytes, o.src_kind, o.dst_kind, o.pid, o.device, o.context, o.stream,
           o.operation
    FROM ppu_memory_operations AS o
    UNION ALL
    SELECT g.start_ns, g.end_ns, g.correlation_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, NULL, NULL, NULL, g.pid, g.device, g.context, g.stream,
           '[CUDA graph ' || g.graph_id || ']'
    FROM ppu_graph_traces AS g
)
SELECT w.start_ns - :session_start AS "Start (ns)",
       w.end_ns - w.start_ns AS "Duration (ns)",
       w.correlation_id AS "CorrId",
       w.grid_x AS "GrdX", w.grid_y AS "GrdY", w.grid_z AS "GrdZ",
       w.block_x AS "BlkX", w.block_y AS "BlkY", w.block_z AS "BlkZ",
       w.registers AS "Reg/Trd",
       w.static_shared / 1e6 AS "StcSMem (MB)",
       w.dynamic_shared / 1e6 AS "DymSMem (MB)",
       w.bytes / 1e6 AS "Bytes (MB)",
       CASE WHEN w.bytes IS NOT NULL AND w.end_ns > w.start_ns
            THEN (w.bytes / 1e6) / ((w.end_ns - w.start_ns) / 1e9) END AS "Throughput (MBps)",
       sk.name AS "SrcMemKd",
       dk.name AS "DstMemKd",
       COALESCE(ds.value, 'device') || ' (' || COALESCE(d.physical_index, w.device) || ')'
           AS "Device",
       w.context AS "Ctx",
       w.stream AS "Strm",
       w.name AS "Name"
FROM work AS w
LEFT JOIN hggc_memory_kinds AS sk ON sk.id = w.src_kind
LEFT JOIN hggc_memory_kinds AS dk ON dk.id = w.dst_kind
LEFT JOIN ppu_devices AS d ON d.pid = w.pid AND d.device = w.device
LEFT JOIN strings AS ds ON ds.id = d.name_id
WHERE w.end_ns >= :filter_start AND w.start_ns <= :filter_end
ORDER BY w.start_ns, w.correlation_id;
