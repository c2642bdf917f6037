-- name: rank_outliers
-- title: Rank Outliers
-- description: The ranks of a multi-report analysis (asys-stats runs/) whose time deviates
--   from the ranks' median by more than k times the median absolute deviation (MAD): the
--   total time of their kernels, and their time in each PCCL collective (by name; HGTX ranges
--   by domain:name stand in for a report without PCCL collectives).  k is 3, or
--   rank_outliers:K.  Medians are exact (every rank's total is in its partial).  Deviation is
--   (time - median) / MAD (empty when the MAD is 0: the other ranks agree exactly).  Sorted by
--   the size of the deviation.
-- columns: Rank, Host, Metric, Name, Time (ns), Median (ns), MAD (ns), Deviation (MADs)
-- arguments: NUMBER
WITH coll AS (
    SELECT COALESCE(t.func, '?') AS name, t.end_ns - t.start_ns AS ns
    FROM pccl_task_view AS t WHERE t.type = 1
)
SELECT 'kernels' AS metric, 'all kernels' AS name, COALESCE(SUM(end_ns - start_ns), 0) AS ns
FROM ppu_activities WHERE kind = 1
UNION ALL
SELECT 'collective', name, SUM(ns) FROM coll GROUP BY name
UNION ALL
SELECT 'hgtx', COALESCE(ds.value, '') || ':' || COALESCE(ts.value, ''),
       SUM(e.end_ns - e.start_ns)
FROM hgtx_events AS e
LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
LEFT JOIN strings AS ts ON ts.id = e.text_id
WHERE e.kind IN (1, 2) AND e.end_ns IS NOT NULL AND NOT EXISTS (SELECT 1 FROM coll)
GROUP BY 2;
-- merge
WITH k AS (
    SELECT COALESCE(CAST(:report_arg AS REAL), 3.0) AS k
), med AS (
    SELECT metric, name, median(ns) AS med FROM part GROUP BY metric, name
), dev AS (
    SELECT p.asys_rank AS rank, p.metric, p.name, p.ns, m.med, ABS(p.ns - m.med) AS dev
    FROM part AS p JOIN med AS m ON m.metric = p.metric AND m.name = p.name
), mad AS (
    SELECT metric, name, median(dev) AS mad FROM dev GROUP BY metric, name
)
SELECT d.rank AS "Rank", r.host AS "Host", d.metric AS "Metric", d.name AS "Name",
       d.ns AS "Time (ns)", d.med AS "Median (ns)", a.mad AS "MAD (ns)",
       (d.ns - d.med) / NULLIF(a.mad, 0) AS "Deviation (MADs)"
FROM dev AS d
JOIN mad AS a ON a.metric = d.metric AND a.name = d.name
JOIN ranks AS r ON r.rank = d.rank
WHERE d.dev > (SELECT k FROM k) * a.mad
ORDER BY COALESCE(ABS(d.ns - d.med) / NULLIF(a.mad, 0), 1e300) DESC, d.metric, d.name, d.rank;
