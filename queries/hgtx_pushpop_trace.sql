-- name: hgtx_pushpop_trace
-- alias: nvtx_pushpop_trace
-- title: HGTX Push/Pop Range Trace
-- description: Every push/pop range in start order.  Times are relative to the session
--   start.  DurChild is the time covered by the range's direct children, DurNonChild the
--   rest; Lvl is the nesting level on the thread (0 = outermost); NameTree indents the
--   name by level.  End is empty for a range that never ended.
-- columns: Start (ns), End (ns), Duration (ns), DurChild (ns), DurNonChild (ns), Name,
--   PID, TID, Lvl, NumChild, RangeId, ParentId, NameTree
WITH children AS (
    SELECT parent_id, SUM(end_ns - start_ns) AS child_time, COUNT(*) AS child_count
    FROM hgtx_events
    WHERE kind = 1 AND parent_id IS NOT NULL
    GROUP BY parent_id
)
SELECT e.start_ns - :session_start AS "Start (ns)",
       e.end_ns - :session_start AS "End (ns)",
       e.end_ns - e.start_ns AS "Duration (ns)",
       COALESCE(c.child_time, 0) AS "DurChild (ns)",
       e.end_ns - e.start_ns - COALESCE(c.child_time, 0) AS "DurNonChild (ns)",
       COALESCE(ds.value || ':', '') || COALESCE(ts.value, '') AS "Name",
       e.pid AS "PID",
       e.tid AS "TID",
       e.nesting_level AS "Lvl",
       COALESCE(c.child_count, 0) AS "NumChild",
       e.id AS "RangeId",
       e.parent_id AS "ParentId",
       printf('%*s', 2 * e.nesting_level, '') || COALESCE(ts.value, '') AS "NameTree"
FROM hgtx_events AS e
LEFT JOIN children AS c ON c.parent_id = e.id
LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
LEFT JOIN strings AS ts ON ts.id = e.text_id
WHERE e.kind = 1
  AND COALESCE(e.end_ns, e.start_ns) >= :filter_start AND e.start_ns <= :filter_end
ORDER BY e.start_ns, e.nesting_level;
