-- name: hgtx_sum
-- alias: nvtx_sum
-- title: HGTX Range Summary
-- default: yes
-- description: Statistics of the HGTX (NVTX) ranges, grouped by style (push/pop or
--   start/end), domain and name.  Time (%) is a row's share of the total of all rows.
--   Range is DOMAIN:NAME (the default domain is empty, as in ":Loop").  Ranges that
--   never ended (the program exited or died inside them) are left out.  With
--   --filter-time, ranges are clipped to the window and ranges outside it left out.
-- columns: Time (%), Total Time (ns), Instances, Avg (ns), Med (ns), Min (ns),
--   Max (ns), StdDev (ns), Style, Range
WITH ranges AS (
    SELECT e.kind, e.domain_id, e.text_id,
           MIN(e.end_ns, :filter_end) - MAX(e.start_ns, :filter_start) AS duration
    FROM hgtx_events AS e
    WHERE e.kind IN (1, 2) AND e.end_ns IS NOT NULL
      AND e.end_ns >= :filter_start AND e.start_ns <= :filter_end
), grouped AS (
    SELECT r.kind,
           COALESCE(ds.value, '') || ':' || COALESCE(ts.value, '') AS name,
           SUM(r.duration) AS total, COUNT(*) AS instances, AVG(r.duration) AS average,
           median(r.duration) AS med, MIN(r.duration) AS shortest, MAX(r.duration) AS longest,
           stdev(r.duration) AS deviation
    FROM ranges AS r
    LEFT JOIN hgtx_domains AS d ON d.id = r.domain_id
    LEFT JOIN strings AS ds ON ds.id = d.name_id
    LEFT JOIN strings AS ts ON ts.id = r.text_id
    GROUP BY r.kind, name
)
SELECT 100.0 * total / SUM(total) OVER () AS "Time (%)",
       total AS "Total Time (ns)",
       instances AS "Instances",
       average AS "Avg (ns)",
       med AS "Med (ns)",
       shortest AS "Min (ns)",
       longest AS "Max (ns)",
       deviation AS "StdDev (ns)",
       CASE kind WHEN 1 THEN 'PushPop' ELSE 'StartEnd' END AS "Style",
       name AS "Range"
FROM grouped
ORDER BY total DESC, name;
