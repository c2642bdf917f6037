-- name: hggc_mem_time_sum
-- alias: cuda_gpu_mem_time_sum
-- title: HGGC GPU Memory Time Summary
-- default: yes
-- description: Statistics of the time the devices spent on memory copies and memsets,
--   grouped by operation.  Time (%) is a row's share of all copy and memset time.  With
--   --filter-time, operations are clipped to the window and ones outside it left out.
-- columns: Time (%), Total Time (ns), Count, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Operation
WITH operations AS (
    SELECT operation, MIN(end_ns, :filter_end) - MAX(start_ns, :filter_start) AS duration
    FROM ppu_memory_operations
    WHERE end_ns >= :filter_start AND start_ns <= :filter_end
), grouped AS (
    SELECT operation, SUM(duration) AS total, COUNT(*) AS count, AVG(duration) AS average,
           median(duration) AS med, MIN(duration) AS shortest, MAX(duration) AS longest,
           stdev(duration) AS deviation
    FROM operations GROUP BY operation
)
SELECT 100.0 * total / SUM(total) OVER () AS "Time (%)",
       total AS "Total Time (ns)",
       count AS "Count",
       average AS "Avg (ns)",
       med AS "Med (ns)",
       shortest AS "Min (ns)",
       longest AS "Max (ns)",
       deviation AS "StdDev (ns)",
       operation AS "Operation"
FROM grouped
ORDER BY total DESC, operation;
