-- name: hgtx_kern_sum
-- alias: nvtx_kern_sum
-- title: HGTX Range Kernel Summary
-- description: The kernels launched inside HGTX ranges (by HGGC calls made inside the range
--   on its thread), per range name, style, process, thread and kernel: how many range
--   instances launched it, how many kernel instances, and the kernels' time statistics.  A
--   kernel counts in every enclosing range.  With --filter-time, kernels are clipped to the
--   window and kernels outside it left out.
-- columns: Range, Style, PID, TID, HGTX Inst, Kern Inst, Total Time (ns), Avg (ns), Med (ns),
--   Min (ns), Max (ns), StdDev (ns), Kernel Name
WITH launched AS (
    SELECT e.domain_id, e.text_id, e.kind, e.pid, e.tid, e.id AS range_id, p.name_id,
           MIN(p.end_ns, :filter_end) - MAX(p.start_ns, :filter_start) AS duration
    FROM hggc_api_ranges AS r
    JOIN hgtx_events AS e ON e.id = r.range_id
    JOIN ppu_activities AS p ON p.api_id = r.api_id AND p.kind = 1
    WHERE p.end_ns >= :filter_start AND p.start_ns <= :filter_end
)
SELECT COALESCE(ds.value, '') || ':' || COALESCE(ts.value, '') AS "Range",
       CASE l.kind WHEN 1 THEN 'PushPop' ELSE 'StartEnd' END AS "Style",
       l.pid AS "PID",
       l.tid AS "TID",
       COUNT(DISTINCT l.range_id) AS "HGTX Inst",
       COUNT(*) AS "Kern Inst",
       SUM(l.duration) AS "Total Time (ns)",
       AVG(l.duration) AS "Avg (ns)",
       median(l.duration) AS "Med (ns)",
       MIN(l.duration) AS "Min (ns)",
       MAX(l.duration) AS "Max (ns)",
       stdev(l.duration) AS "StdDev (ns)",
       ks.value AS "Kernel Name"
FROM launched AS l
LEFT JOIN hgtx_domains AS d ON d.id = l.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
LEFT JOIN strings AS ts ON ts.id = l.text_id
JOIN strings AS ks ON ks.id = l.name_id
GROUP BY l.domain_id, l.text_id, l.kind, l.pid, l.tid, l.name_id
ORDER BY "Range", SUM(l.duration) DESC;
