-- name: hgtx_gpu_proj_sum
-- alias: nvtx_gpu_proj_sum
-- title: HGTX Range Projection onto PPU Summary
-- description: hgtx_gpu_proj_trace summarized per range name and style: a range instance's
--   projected time is the span of its work over every stream ([first start, last end]).
--   Total Range Time sums the ranges themselves; GPU Ops count the device activities the
--   instances caused (an activity counts in every enclosing range).  With --filter-time,
--   instances whose projection overlaps the window count whole.
-- columns: Range, Style, Total Proj Time (ns), Total Range Time (ns), Range Instances,
--   Proj Avg (ns), Proj Med (ns), Proj Min (ns), Proj Max (ns), Proj StdDev (ns),
--   Total GPU Ops, Avg GPU Ops, Avg Range Lvl, Avg Num Child
WITH children AS (
    SELECT parent_id, COUNT(*) AS child_count FROM hgtx_events
    WHERE kind = 1 AND parent_id IS NOT NULL GROUP BY parent_id
), instances AS (
    SELECT g.range_id, MAX(g.end_ns) - MIN(g.start_ns) AS projected, SUM(g.op_count) AS ops
    FROM hgtx_gpu_projection AS g
    GROUP BY g.range_id
    HAVING MAX(g.end_ns) >= :filter_start AND MIN(g.start_ns) <= :filter_end
)
SELECT COALESCE(ds.value, '') || ':' || COALESCE(ts.value, '') AS "Range",
       CASE e.kind WHEN 1 THEN 'PushPop' ELSE 'StartEnd' END AS "Style",
       SUM(i.projected) AS "Total Proj Time (ns)",
       SUM(e.end_ns - e.start_ns) AS "Total Range Time (ns)",
       COUNT(*) AS "Range Instances",
       AVG(i.projected) AS "Proj Avg (ns)",
       median(i.projected) AS "Proj Med (ns)",
       MIN(i.projected) AS "Proj Min (ns)",
       MAX(i.projected) AS "Proj Max (ns)",
       stdev(i.projected) AS "Proj StdDev (ns)",
       SUM(i.ops) AS "Total GPU Ops",
       AVG(i.ops) AS "Avg GPU Ops",
       AVG(e.nesting_level) AS "Avg Range Lvl",
       AVG(CASE WHEN e.kind = 1 THEN COALESCE(c.child_count, 0) END) AS "Avg Num Child"
FROM instances AS i
JOIN hgtx_events AS e ON e.id = i.range_id
LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
LEFT JOIN strings AS ts ON ts.id = e.text_id
LEFT JOIN children AS c ON c.parent_id = e.id
GROUP BY e.domain_id, e.text_id, e.kind
ORDER BY SUM(i.projected) DESC, "Range";
