-- name: hggc_mem_time_sum
-- alias: cuda_gpu_mem_time_sum
-- title: HGGC GPU Memory Time Summary
-- default: yes
-- description: Statistics of the time the devices spent on memory copies and memsets,
--   grouped by operation.  Time (%) is a row's share of all copy and memset time.  With
--   --filter-time, operations are clipped to the window and ones outside it left out.
-- summary: Count
-- columns: Time (%), Total Time (ns), Count, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Operation
SELECT operation AS "Operation",
       MIN(end_ns, :filter_end) - MAX(start_ns, :filter_start) AS duration
FROM ppu_memory_operations
WHERE end_ns >= :filter_start AND start_ns <= :filter_end;
