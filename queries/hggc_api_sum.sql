-- name: hggc_api_sum
-- alias: cuda_api_sum
-- title: HGGC API Summary
-- default: yes
-- description: Statistics of the HGGC (CUDA-compatible) runtime and driver API calls,
--   grouped by function.  Time (%) is a row's share of the total of all rows.  Driver
--   calls made inside a runtime call belong to it and are not counted.  With
--   --api-name-mode kernel, a launch call is named by the kernel it launched.  With
--   --filter-time, calls are clipped to the window and calls outside it left out.
-- columns: Time (%), Total Time (ns), Num Calls, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Name
WITH calls AS (
    SELECT CASE WHEN :api_name_mode = 'kernel'
                THEN COALESCE((SELECT CASE WHEN COUNT(*) = 1 AND MAX(p.graph_id) IS NULL THEN MAX(p.name_id) END
                               FROM ppu_activities AS p WHERE p.api_id = a.id AND p.kind = 1),
                              a.name_id)
                ELSE a.name_id END AS name_id,
           MIN(a.end_ns, :filter_end) - MAX(a.start_ns, :filter_start) AS duration
    FROM hggc_api_calls AS a
    WHERE a.end_ns >= :filter_start AND a.start_ns <= :filter_end
), grouped AS (
    SELECT s.value AS name, SUM(duration) AS total, COUNT(*) AS calls, AVG(duration) AS average,
           median(duration) AS med, MIN(duration) AS shortest, MAX(duration) AS longest,
           stdev(duration) AS deviation
    FROM calls JOIN strings AS s ON s.id = calls.name_id
    GROUP BY s.value
)
SELECT 100.0 * total / SUM(total) OVER () AS "Time (%)",
       total AS "Total Time (ns)",
       calls AS "Num Calls",
       average AS "Avg (ns)",
       med AS "Med (ns)",
       shortest AS "Min (ns)",
       longest AS "Max (ns)",
       deviation AS "StdDev (ns)",
       name AS "Name"
FROM grouped
ORDER BY total DESC, name;
