-- name: hggc_mem_size_sum
-- alias: cuda_gpu_mem_size_sum
-- title: HGGC GPU Memory Size Summary
-- default: yes
-- description: Statistics of the bytes moved by memory copies and set by memsets, grouped
--   by operation, in MB (10^6 bytes).  With --filter-time, operations that overlap the
--   window count whole.
-- columns: Total (MB), Count, Avg (MB), Med (MB), Min (MB), Max (MB), StdDev (MB), Operation
WITH operations AS (
    SELECT operation, bytes / 1e6 AS megabytes
    FROM ppu_memory_operations
    WHERE end_ns >= :filter_start AND start_ns <= :filter_end
)
SELECT SUM(megabytes) AS "Total (MB)",
       COUNT(*) AS "Count",
       AVG(megabytes) AS "Avg (MB)",
       median(megabytes) AS "Med (MB)",
       MIN(megabytes) AS "Min (MB)",
       MAX(megabytes) AS "Max (MB)",
       stdev(megabytes) AS "StdDev (MB)",
       operation AS "Operation"
FROM operations
GROUP BY operation
ORDER BY SUM(megabytes) DESC, operation;
