-- name: hggc_api_gpu_sum
-- alias: cuda_api_gpu_sum
-- title: HGGC Summary (API/Kernels/Memory Operations)
-- description: Statistics of the HGGC API calls (Category CUDA_API, by name), the kernels
--   (CUDA_KERNEL, by demangled name) and the memory copies and memsets (MEMORY_OPER, by
--   operation) in one table, as nsys's cuda_api_gpu_sum.  Time (%) is a row's share of the
--   total of all rows: host and device time added, so compare rows of one category.
--   :nvtx-name prefixes each kernel with the innermost HGTX range open at its launch
--   (RANGE:kernel).  With --filter-time, everything is clipped to the window and what lies outside left out.
-- summary: Instances
-- arguments: nvtx-name
-- columns: Time (%), Total Time (ns), Instances, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Category, Operation
SELECT 'CUDA_API' AS "Category", s.value AS "Operation",
       MIN(a.end_ns, :filter_end) - MAX(a.start_ns, :filter_start) AS duration
FROM hggc_api_calls AS a
JOIN strings AS s ON s.id = a.name_id
WHERE a.end_ns >= :filter_start AND a.start_ns <= :filter_end
UNION ALL
SELECT 'CUDA_KERNEL',
       CASE WHEN :nvtx_name THEN COALESCE((SELECT text FROM hgtx_range_texts
                                           WHERE id = p.hgtx_range_id) || ':', '')
            ELSE '' END || s.value,
       MIN(p.end_ns, :filter_end) - MAX(p.start_ns, :filter_start)
FROM ppu_activities AS p
JOIN strings AS s ON s.id = p.name_id
WHERE p.kind = 1 AND p.end_ns >= :filter_start AND p.start_ns <= :filter_end
UNION ALL
SELECT 'MEMORY_OPER', operation, MIN(end_ns, :filter_end) - MAX(start_ns, :filter_start)
FROM ppu_memory_operations
WHERE end_ns >= :filter_start AND start_ns <= :filter_end;
