-- name: acompute_kern_sum
-- title: ACDNN/ACBLAS Kernel Summary
-- description: The kernels each cuDNN/cuBLAS function launched, grouped by function and
--   kernel (base name): launches and device time.  A kernel belongs to the innermost library
--   call whose launch it was (cudnnConvolutionForward's GEMM is cublasSgemm_v2's when cuDNN
--   called cuBLAS for it).  Time (%) is a row's share of all such kernels' device time.
--   With --filter-time, kernels are clipped to the window and those outside it left out.
-- requires: acompute_work: no device work launched inside ACDNN/ACBLAS calls (record with
--   -t hggc,acdnn,acblas)
-- columns: Time (%), Total Time (ns), Instances, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Library, API Name, Kernel Name
WITH samples AS (
    SELECT c.library, c.name_id AS api_id, p.base_name_id AS kernel_id,
           MIN(w.end_ns, :filter_end) - MAX(w.start_ns, :filter_start) AS duration
    FROM acompute_work AS w
    JOIN acompute_calls AS c ON c.id = w.call_id
    JOIN ppu_activities AS p ON p.id = w.activity_id
    WHERE w.kind = 1 AND w.end_ns >= :filter_start AND w.start_ns <= :filter_end
), grouped AS (
    SELECT library, api_id, kernel_id, SUM(duration) AS total, COUNT(*) AS n,
           AVG(duration) AS average, median(duration) AS med, MIN(duration) AS shortest,
           MAX(duration) AS longest, stdev(duration) AS deviation
    FROM samples GROUP BY library, api_id, kernel_id
)
SELECT 100.0 * total / NULLIF(SUM(total) OVER (), 0) AS "Time (%)",
       total AS "Total Time (ns)",
       n AS "Instances",
       average AS "Avg (ns)",
       med AS "Med (ns)",
       shortest AS "Min (ns)",
       longest AS "Max (ns)",
       deviation AS "StdDev (ns)",
       CASE library WHEN 1 THEN 'cuDNN' WHEN 2 THEN 'cuBLAS' WHEN 3 THEN 'cuBLASLt'
                    WHEN 4 THEN 'cuBLASXt' ELSE '?' END AS "Library",
       a.value AS "API Name",
       COALESCE(kn.value, '?') AS "Kernel Name"
FROM grouped
JOIN strings AS a ON a.id = grouped.api_id
LEFT JOIN strings AS kn ON kn.id = grouped.kernel_id
ORDER BY total DESC, a.value, kn.value;
