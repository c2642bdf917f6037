-- name: hggc_api_sum
-- alias: cuda_api_sum
-- title: HGGC API Summary
-- default: yes
-- description: Statistics of the HGGC (CUDA-compatible) runtime and driver API calls,
--   grouped by function.  Time (%) is a row's share of the total of all rows.  Driver
--   calls made inside a runtime call belong to it and are not counted.  With
--   --api-name-mode kernel, a launch call is named by the kernel it launched.  With
--   --filter-time, calls are clipped to the window and calls outside it left out.
-- summary: Num Calls
-- columns: Time (%), Total Time (ns), Num Calls, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Name
SELECT s.value AS "Name", c.duration
FROM (SELECT CASE WHEN :api_name_mode = 'kernel'
                  THEN COALESCE((SELECT CASE WHEN COUNT(*) = 1 AND MAX(p.graph_id) IS NULL
                                             THEN MAX(p.name_id) END
                                 FROM ppu_activities AS p WHERE p.api_id = a.id AND p.kind = 1),
                                a.name_id)
                  ELSE a.name_id END AS name_id,
             MIN(a.end_ns, :filter_end) - MAX(a.start_ns, :filter_start) AS duration
      FROM hggc_api_calls AS a
      WHERE a.end_ns >= :filter_start AND a.start_ns <= :filter_end) AS c
JOIN strings AS s ON s.id = c.name_id;
