-- name: hgtx_startend_sum
-- alias: nvtx_startend_sum
-- title: HGTX Start/End Range Summary
-- description: Statistics of the HGTX (NVTX) start/end ranges, grouped by domain and name
--   (Range is DOMAIN:NAME; the default domain is empty, as in ":Loop").  Time (%) is a
--   row's share of the total of all start/end ranges.  Ranges that never ended are left out.
--   With --filter-time, ranges are clipped to the window and ranges outside it left out.
-- summary: Instances
-- columns: Time (%), Total Time (ns), Instances, Avg (ns), Med (ns), Min (ns),
--   Max (ns), StdDev (ns), Range
SELECT COALESCE(ds.value, '') || ':' || COALESCE(ts.value, '') AS "Range",
       MIN(e.end_ns, :filter_end) - MAX(e.start_ns, :filter_start) AS duration
FROM hgtx_events AS e
LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
LEFT JOIN strings AS ts ON ts.id = e.text_id
WHERE e.kind = 2 AND e.end_ns IS NOT NULL
  AND e.end_ns >= :filter_start AND e.start_ns <= :filter_end;
