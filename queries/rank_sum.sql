-- name: rank_sum
-- title: Rank Summary
-- description: One row per rank of a multi-report analysis (asys-stats runs/ or several
--   reports; one report gives one row): its host, the share of its session in which any of
--   its PPU activities ran (PPU Busy, the union of kernels, copies and sets on all its
--   devices), the time of its kernels, of its PCCL collectives and of its HGTX ranges (each
--   the sum over every instance, as hggc_kern_sum, pccl_sum and hgtx_sum total them), its
--   kernel of the most time, and where the rank sits on the shared time axis: Start is its
--   session start on CLOCK_REALTIME (its monotonic start + its host's REALTIME-MONOTONIC
--   offset) after the earliest rank's, Clock says how the offset was found (realtime: the
--   offset the recording sampled) and Clock Error its bound when the recording knew it
--   (empty: unknown).  With --filter-time, times are clipped to each rank's window.
-- columns: Rank, Host, PPU Busy (%), Kernel Time (ns), PCCL Time (ns), HGTX Time (ns),
--   Top Kernel, Top Kernel Time (ns), Start (ns), Clock, Clock Error (ns)
WITH win AS (
    SELECT MAX(:session_start, :filter_start) AS lo, MIN(:session_end, :filter_end) AS hi
), act AS (
    SELECT MAX(a.start_ns, w.lo) AS s, MIN(a.end_ns, w.hi) AS e
    FROM ppu_activities AS a, win AS w
    WHERE a.end_ns > w.lo AND a.start_ns < w.hi
), ordered AS (  -- the union's length: each interval past the reach of those before it
    SELECT s, e, MAX(e) OVER (ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
           AS reach
    FROM act
), kern AS (
    SELECT p.name_id, SUM(MIN(p.end_ns, :filter_end) - MAX(p.start_ns, :filter_start)) AS ns
    FROM ppu_activities AS p
    WHERE p.kind = 1 AND p.end_ns >= :filter_start AND p.start_ns <= :filter_end
    GROUP BY p.name_id
), top AS (
    SELECT k.ns, s.value AS name FROM kern AS k LEFT JOIN strings AS s ON s.id = k.name_id
    ORDER BY k.ns DESC, s.value LIMIT 1
)
SELECT (SELECT COALESCE(SUM(MAX(0, e - MAX(s, COALESCE(reach, s)))), 0) FROM ordered)
           AS busy_ns,
       (SELECT MAX(hi - lo, 0) FROM win) AS span_ns,
       (SELECT COALESCE(SUM(ns), 0) FROM kern) AS kernel_ns,
       (SELECT COALESCE(SUM(MIN(t.end_ns, :filter_end) - MAX(t.start_ns, :filter_start)), 0)
        FROM pccl_tasks AS t
        WHERE t.type = 1 AND t.end_ns >= :filter_start AND t.start_ns <= :filter_end)
           AS pccl_ns,
       (SELECT COALESCE(SUM(MIN(e.end_ns, :filter_end) - MAX(e.start_ns, :filter_start)), 0)
        FROM hgtx_events AS e
        WHERE e.kind IN (1, 2) AND e.end_ns IS NOT NULL
          AND e.end_ns >= :filter_start AND e.start_ns <= :filter_end) AS hgtx_ns,
       (SELECT name FROM top) AS top_kernel,
       (SELECT ns FROM top) AS top_kernel_ns;
-- merge
SELECT r.rank AS "Rank", r.host AS "Host",
       100.0 * p.busy_ns / NULLIF(p.span_ns, 0) AS "PPU Busy (%)",
       p.kernel_ns AS "Kernel Time (ns)", p.pccl_ns AS "PCCL Time (ns)",
       p.hgtx_ns AS "HGTX Time (ns)", p.top_kernel AS "Top Kernel",
       p.top_kernel_ns AS "Top Kernel Time (ns)",
       r.start_rt_ns - (SELECT MIN(start_rt_ns) FROM ranks) AS "Start (ns)",
       r.clock_method AS "Clock", r.clock_error_ns AS "Clock Error (ns)"
FROM part AS p JOIN ranks AS r ON r.rank = p.asys_rank
ORDER BY r.rank;
