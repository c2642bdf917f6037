-- name: hgtx_startend_trace
-- alias: nvtx_startend_trace
-- title: HGTX Start/End Range Trace
-- description: Every start/end range in start order, with the thread that started it
--   and the thread that ended it (they may differ).  Times are relative to the session
--   start; End is empty for a range that never ended.
-- columns: Start (ns), End (ns), Duration (ns), Name, PID, TID, End TID, RangeId,
--   Category, Color
SELECT e.start_ns - :session_start AS "Start (ns)",
       e.end_ns - :session_start AS "End (ns)",
       e.end_ns - e.start_ns AS "Duration (ns)",
       COALESCE(ds.value || ':', '') || COALESCE(ts.value, '') AS "Name",
       e.pid AS "PID",
       e.tid AS "TID",
       e.end_tid AS "End TID",
       e.id AS "RangeId",
       COALESCE(cs.value, e.category) AS "Category",
       CASE WHEN e.color IS NULL THEN NULL ELSE printf('#%08X', e.color) END AS "Color"
FROM hgtx_events AS e
LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
LEFT JOIN strings AS ts ON ts.id = e.text_id
LEFT JOIN hgtx_categories AS c ON c.domain_id = e.domain_id AND c.category = e.category
LEFT JOIN strings AS cs ON cs.id = c.name_id
WHERE e.kind = 2
  AND COALESCE(e.end_ns, e.start_ns) >= :filter_start AND e.start_ns <= :filter_end
ORDER BY e.start_ns;
