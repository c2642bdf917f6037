-- name: hggc_kern_sum
-- alias: cuda_gpu_kern_sum
-- title: HGGC Kernel Summary
-- default: yes
-- description: Statistics of the kernels executed on the devices, grouped by name.
--   Names are demangled; hggc_kern_sum:base groups by the name without return type and
--   parameter list (template instances stay apart, overloads merge), hggc_kern_sum:mangled
--   by the name as compiled.  With --group-by hgtx, kernels group by the innermost HGTX
--   range open on the launching thread when the launch call started (DOMAIN:NAME;
--   "[no HGTX range]" outside any).  Time (%) is a row's share of all kernel time.  With
--   --filter-time, kernels are clipped to the window and kernels outside it left out.
-- columns: Time (%), Total Time (ns), Instances, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Name
-- arguments: base, mangled
WITH kernels AS (
    SELECT CASE WHEN :group_by = 'hgtx' THEN e.domain_id
                ELSE NULL END AS domain_id,
           CASE WHEN :group_by = 'hgtx' THEN COALESCE(e.text_id, -1)
                WHEN :report_arg = 'base' THEN p.base_name_id
                WHEN :report_arg = 'mangled' THEN k.mangled_name_id
                ELSE p.name_id END AS name_id,
           MIN(p.end_ns, :filter_end) - MAX(p.start_ns, :filter_start) AS duration
    FROM ppu_activities AS p
    LEFT JOIN hgtx_events AS e ON e.id = p.hgtx_range_id AND :group_by = 'hgtx'
    LEFT JOIN ppu_kernels AS k ON k.id = p.source_id AND :report_arg = 'mangled'
    WHERE p.kind = 1 AND p.end_ns >= :filter_start AND p.start_ns <= :filter_end
), grouped AS (
    SELECT domain_id, name_id, SUM(duration) AS total, COUNT(*) AS instances,
           AVG(duration) AS average, median(duration) AS med, MIN(duration) AS shortest,
           MAX(duration) AS longest, stdev(duration) AS deviation
    FROM kernels GROUP BY domain_id, name_id
), named AS (
    SELECT g.*,
           CASE WHEN :group_by = 'hgtx' AND g.domain_id IS NULL AND g.name_id = -1
                    THEN '[no HGTX range]'
                WHEN :group_by = 'hgtx'
                    THEN COALESCE((SELECT s.value FROM hgtx_domains AS d
                                   JOIN strings AS s ON s.id = d.name_id
                                   WHERE d.id = g.domain_id), '')
                         || ':' || COALESCE((SELECT value FROM strings WHERE id = g.name_id), '')
                ELSE (SELECT value FROM strings WHERE id = g.name_id) END AS name
    FROM grouped AS g
)
SELECT 100.0 * total / SUM(total) OVER () AS "Time (%)",
       total AS "Total Time (ns)",
       instances AS "Instances",
       average AS "Avg (ns)",
       med AS "Med (ns)",
       shortest AS "Min (ns)",
       longest AS "Max (ns)",
       deviation AS "StdDev (ns)",
       name AS "Name"
FROM named
ORDER BY total DESC, name;
