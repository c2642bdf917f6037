-- name: ppu_util_trace
-- title: PPU Utilization Series
-- description: Per device, the window (the session, or --filter-time) cut into --buckets
--   equal buckets (default 50): the share of each bucket during which at least one kernel
--   ran (Kernel %) and at least one copy or memset ran (Memory %).  Times are relative to
--   the session start.
-- columns: Device, Bucket, Start (ns), End (ns), Kernel (%), Memory (%)
WITH RECURSIVE win AS (
    SELECT MAX(:filter_start, :session_start) AS lo,
           MIN(:filter_end, CASE WHEN :session_end > :session_start THEN :session_end
                                 ELSE (SELECT MAX(end_ns) FROM ppu_activities) END) AS hi
), width AS (
    SELECT lo, hi, hi - lo AS w FROM win WHERE hi > lo
), buckets(idx, lo, hi) AS (  -- time t falls in bucket (t - lo) * N / w
    SELECT 0, w.lo, w.lo + (w.w + :buckets - 1) / :buckets FROM width AS w
    UNION ALL
    SELECT b.idx + 1, w.lo + ((b.idx + 1) * w.w + :buckets - 1) / :buckets,
           MIN(w.hi, w.lo + ((b.idx + 2) * w.w + :buckets - 1) / :buckets)
    FROM buckets AS b CROSS JOIN width AS w WHERE b.idx + 1 < :buckets
), pieces AS MATERIALIZED (  -- the activities clipped to the window, and the buckets they touch
    SELECT physical, memory, s, e, (s - lo) * :buckets / w AS first,
           (e - 1 - lo) * :buckets / w AS last
    FROM (SELECT p.physical, p.kind IN (2, 3) AS memory, MAX(p.start_ns, w.lo) AS s,
                 MIN(p.end_ns, w.hi) AS e, w.lo, w.w
          FROM ppu_activities AS p CROSS JOIN width AS w
          WHERE p.end_ns > w.lo AND p.start_ns < w.hi AND p.kind IN (1, 2, 3))
    WHERE e > s
), sums AS (  -- most activities fall in one bucket; the rest are cut at the boundaries
    SELECT physical, idx, SUM(CASE WHEN NOT memory THEN ns ELSE 0 END) AS kernel,
           SUM(CASE WHEN memory THEN ns ELSE 0 END) AS memory
    FROM (SELECT physical, memory, idx, covered_ns(s, e) AS ns  -- overlaps count once
          FROM (SELECT physical, memory, first AS idx, s, e FROM pieces WHERE first = last
                UNION ALL
                SELECT i.physical, i.memory, b.idx, MAX(i.s, b.lo), MIN(i.e, b.hi)
                FROM pieces AS i JOIN buckets AS b ON b.idx BETWEEN i.first AND i.last
                WHERE i.first < i.last)
          GROUP BY physical, memory, idx)
    GROUP BY physical, idx
), devices AS (
    SELECT DISTINCT physical FROM ppu_activities
)
SELECT d.physical AS "Device", b.idx AS "Bucket", b.lo - :session_start AS "Start (ns)",
       b.hi - :session_start AS "End (ns)",
       CASE WHEN b.hi > b.lo THEN 100.0 * COALESCE(s.kernel, 0) / (b.hi - b.lo) END
           AS "Kernel (%)",
       CASE WHEN b.hi > b.lo THEN 100.0 * COALESCE(s.memory, 0) / (b.hi - b.lo) END
           AS "Memory (%)"
FROM devices AS d CROSS JOIN buckets AS b
LEFT JOIN sums AS s ON s.physical = d.physical AND s.idx = b.idx
ORDER BY d.physical, b.idx;
