-- name: hggc_gpu_sum
-- alias: cuda_gpu_sum
-- title: HGGC GPU Summary (Kernels/Memory Operations)
-- description: Statistics of everything the devices executed, kernels (Category
--   CUDA_KERNEL, by demangled name) and memory copies and memsets (MEMORY_OPER, by
--   operation), in one table.  Time (%) is a row's share of all device time.
--   :nvtx-name (nsys's argument) prefixes each kernel with the innermost HGTX range open
--   on the launching thread at its launch (RANGE:kernel).  With --filter-time, work is
--   clipped to the window and work outside it left out.
-- summary: Instances
-- arguments: nvtx-name
-- columns: Time (%), Total Time (ns), Instances, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Category, Operation
SELECT 'CUDA_KERNEL' AS "Category",
       CASE WHEN :nvtx_name THEN COALESCE((SELECT text FROM hgtx_range_texts
                                           WHERE id = p.hgtx_range_id) || ':', '')
            ELSE '' END || s.value AS "Operation",
       MIN(p.end_ns, :filter_end) - MAX(p.start_ns, :filter_start) AS duration
FROM ppu_activities AS p
JOIN strings AS s ON s.id = p.name_id
WHERE p.kind = 1 AND p.end_ns >= :filter_start AND p.start_ns <= :filter_end
UNION ALL
SELECT 'MEMORY_OPER', operation, MIN(end_ns, :filter_end) - MAX(start_ns, :filter_start)
FROM ppu_memory_operations
WHERE end_ns >= :filter_start AND start_ns <= :filter_end;
