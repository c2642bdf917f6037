-- name: python_func_sum
-- title: Python Function Summary
-- description: Statistics of the calls of the Python functions --python-functions-trace
--   names that lasted at least --python-functions-threshold, grouped by function
--   (module.qualname) and HGTX domain: a function the rules put in several domains has a
--   row per domain.  They are the HGTX ranges of category "Python function" (hgtx_sum
--   shows them too, under their domain).  Calls that never returned (the program exited
--   inside them) are left out.  With --filter-time, calls are clipped to the window and
--   calls outside it left out.
-- summary: Calls
-- columns: Time (%), Total Time (ns), Calls, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Function, Domain
SELECT COALESCE(ts.value, '') AS "Function",
       COALESCE(ds.value, '') AS "Domain",
       MIN(e.end_ns, :filter_end) - MAX(e.start_ns, :filter_start) AS duration
FROM hgtx_events AS e
JOIN hgtx_categories AS c ON c.domain_id = e.domain_id AND c.category = e.category
JOIN strings AS cs ON cs.id = c.name_id AND cs.value = 'Python function'
LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
LEFT JOIN strings AS ts ON ts.id = e.text_id
WHERE e.kind = 1 AND e.end_ns IS NOT NULL
  AND e.end_ns >= :filter_start AND e.start_ns <= :filter_end;
