-- name: hggc_kern_sum
-- alias: cuda_gpu_kern_sum
-- title: HGGC Kernel Summary
-- default: yes
-- description: Statistics of the kernels executed on the devices, grouped by name.
--   Names are demangled; hggc_kern_sum:base groups by the name without return type and
--   parameter list (template instances stay apart), hggc_kern_sum:mangled by the name as
--   compiled.  Time (%) is a row's share of all kernel time.  With --filter-time, kernels
--   are clipped to the window and kernels outside it left out.
-- columns: Time (%), Total Time (ns), Instances, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Name
-- arguments: base, mangled
WITH kernels AS (
    SELECT CASE :report_arg WHEN 'base' THEN n.base_name_id
                            WHEN 'mangled' THEN k.mangled_name_id
                            ELSE n.demangled_name_id END AS name_id,
           MIN(k.end_ns, :filter_end) - MAX(k.start_ns, :filter_start) AS duration
    FROM ppu_kernels AS k
    JOIN ppu_kernel_names AS n ON n.mangled_name_id = k.mangled_name_id
    WHERE k.end_ns >= :filter_start AND k.start_ns <= :filter_end
), grouped AS (
    SELECT s.value AS name, SUM(duration) AS total, COUNT(*) AS instances,
           AVG(duration) AS average, median(duration) AS med, MIN(duration) AS shortest,
           MAX(duration) AS longest, stdev(duration) AS deviation
    FROM kernels JOIN strings AS s ON s.id = kernels.name_id
    GROUP BY s.value
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
FROM grouped
ORDER BY total DESC, name;
