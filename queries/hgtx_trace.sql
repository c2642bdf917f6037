-- name: hgtx_trace
-- alias: nvtx_trace
-- title: HGTX Event Trace
-- description: Every HGTX range and mark in start order with all its attributes:
--   domain, category (name when one was given), ARGB color and payload.  Times are
--   relative to the session start.
-- columns: Start (ns), End (ns), Duration (ns), Style, Domain, Name, Category, Color,
--   Payload, PID, TID, Lvl
SELECT e.start_ns - :session_start AS "Start (ns)",
       e.end_ns - :session_start AS "End (ns)",
       e.end_ns - e.start_ns AS "Duration (ns)",
       CASE e.kind WHEN 1 THEN 'PushPop' WHEN 2 THEN 'StartEnd' ELSE 'Mark' END AS "Style",
       ds.value AS "Domain",
       ts.value AS "Name",
       COALESCE(cs.value, e.category) AS "Category",
       CASE WHEN e.color IS NULL THEN NULL ELSE printf('#%08X', e.color) END AS "Color",
       e.payload AS "Payload",
       e.pid AS "PID",
       e.tid AS "TID",
       e.nesting_level AS "Lvl"
FROM hgtx_events AS e
LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
LEFT JOIN strings AS ts ON ts.id = e.text_id
LEFT JOIN hgtx_categories AS c ON c.domain_id = e.domain_id AND c.category = e.category
LEFT JOIN strings AS cs ON cs.id = c.name_id
WHERE COALESCE(e.end_ns, e.start_ns) >= :filter_start AND e.start_ns <= :filter_end
ORDER BY e.start_ns, e.id;
