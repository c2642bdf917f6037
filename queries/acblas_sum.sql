-- name: acblas_sum
-- title: ACBLAS Summary
-- default: yes
-- description: Statistics of the cuBLAS/cuBLASLt/cuBLASXt library calls (-t acblas), grouped by function: the
--   host time of the calls, how many were made inside another call of the same domain
--   (Nested), how many returned a failure status (Errors), and the device time and kernels
--   of the work the calls launched themselves (not the work of the calls they made: the
--   column sums count every kernel once).  Time (%) is a row's share of the total of the
--   calls not nested in a call of the same domain (a cuBLASLt call made by cublasGemmEx
--   counts in cublasGemmEx's time, not twice), so a function only ever called nested shows
--   0.  With --filter-time, calls are clipped to the window and calls outside it left out.
-- columns: Time (%), Total Time (ns), Num Calls, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Nested, Errors, Device Time (ns), Kernels, Library, Name
WITH calls AS (
    SELECT c.name_id, c.library, c.status, c.kernels, c.device_ns,
           p.id IS NOT NULL AND p.domain = c.domain AS nested,
           MIN(c.end_ns, :filter_end) - MAX(c.start_ns, :filter_start) AS duration
    FROM acompute_calls AS c LEFT JOIN acompute_calls AS p ON p.id = c.parent_id
    WHERE c.domain = 2 AND c.end_ns >= :filter_start AND c.start_ns <= :filter_end
), grouped AS (
    SELECT name_id, library, SUM(duration) AS total,
           SUM(CASE WHEN nested THEN 0 ELSE duration END) AS own_total, COUNT(*) AS n,
           AVG(duration) AS average, median(duration) AS med, MIN(duration) AS shortest,
           MAX(duration) AS longest, stdev(duration) AS deviation, SUM(nested) AS nested,
           SUM(status IS NOT NULL AND status != 0) AS errors, SUM(device_ns) AS device,
           SUM(kernels) AS kernels
    FROM calls GROUP BY name_id, library
)
SELECT 100.0 * own_total / NULLIF(SUM(own_total) OVER (), 0) AS "Time (%)",
       total AS "Total Time (ns)",
       n AS "Num Calls",
       average AS "Avg (ns)",
       med AS "Med (ns)",
       shortest AS "Min (ns)",
       longest AS "Max (ns)",
       deviation AS "StdDev (ns)",
       nested AS "Nested",
       errors AS "Errors",
       device AS "Device Time (ns)",
       kernels AS "Kernels",
       CASE library WHEN 1 THEN 'cuDNN' WHEN 2 THEN 'cuBLAS' WHEN 3 THEN 'cuBLASLt'
                    WHEN 4 THEN 'cuBLASXt' ELSE '?' END AS "Library",
       s.value AS "Name"
FROM grouped JOIN strings AS s ON s.id = grouped.name_id
ORDER BY total DESC, s.value;
