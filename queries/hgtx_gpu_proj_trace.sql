-- name: hgtx_gpu_proj_trace
-- alias: nvtx_gpu_proj_trace
-- title: HGTX Range Projection onto PPU Streams Trace
-- description: Each HGTX range projected onto each stream it caused work on: [first start,
--   last end] of the device work launched by the HGGC calls made inside the range on its
--   thread, and of the graph nodes created inside it (stream capture).  A device activity
--   belongs to every enclosing range.  Orig is the range itself.  Range is DOMAIN:NAME.
--   Lvl and NumChild describe push/pop nesting (empty for start/end ranges).  With
--   --filter-time, projections outside the window are left out.  Times are relative to the
--   session start.
-- columns: Projected Start (ns), Projected Duration (ns), Orig Start (ns), Orig Duration (ns),
--   Range, Style, PID, TID, Device, Ctx, Strm, NumGPUOps, Lvl, NumChild, RangeId, ParentId
WITH children AS (
    SELECT parent_id, COUNT(*) AS child_count FROM hgtx_events
    WHERE kind = 1 AND parent_id IS NOT NULL GROUP BY parent_id
)
SELECT g.start_ns - :session_start AS "Projected Start (ns)",
       g.end_ns - g.start_ns AS "Projected Duration (ns)",
       e.start_ns - :session_start AS "Orig Start (ns)",
       e.end_ns - e.start_ns AS "Orig Duration (ns)",
       COALESCE(ds.value, '') || ':' || COALESCE(ts.value, '') AS "Range",
       CASE e.kind WHEN 1 THEN 'PushPop' ELSE 'StartEnd' END AS "Style",
       e.pid AS "PID",
       e.tid AS "TID",
       g.physical AS "Device",
       g.context AS "Ctx",
       g.stream AS "Strm",
       g.op_count AS "NumGPUOps",
       e.nesting_level AS "Lvl",
       CASE WHEN e.kind = 1 THEN COALESCE(c.child_count, 0) END AS "NumChild",
       e.id AS "RangeId",
       e.parent_id AS "ParentId"
FROM hgtx_gpu_projection AS g
JOIN hgtx_events AS e ON e.id = g.range_id
LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
LEFT JOIN strings AS ts ON ts.id = e.text_id
LEFT JOIN children AS c ON c.parent_id = e.id
WHERE g.end_ns >= :filter_start AND g.start_ns <= :filter_end
ORDER BY g.start_ns, e.id, g.stream;
