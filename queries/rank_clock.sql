-- name: rank_clock
-- title: Rank Clock Alignment
-- description: How each rank of a multi-report analysis (asys-stats runs/) is placed on the
--   shared time axis.  Offset is its host's CLOCK_REALTIME - CLOCK_MONOTONIC as the recording
--   sampled it (times + Offset = the shared axis), Clock how it was found and Error its bound
--   (adjtimex's maximum error plus the spread of the offset samples; empty: unknown).  When
--   PCCL is traced, the ranks of one collective leave it within a short time of each other:
--   Correction is the median, over the collectives every rank took part in, of how much
--   earlier than the ranks' median this rank left (add it to Offset), Refined Error the
--   largest deviation of its departures from that median (the bound the departures give), and
--   Method 'realtime+pccl'; with rank_clock:hgtx, the HGTX ranges named after a collective
--   (allreduce, all_gather, reduce_scatter, alltoall, broadcast, barrier, in any case) of the
--   same name and occurrence stand in for the collectives (ranges around each collective
--   call, which end together), method 'realtime+hgtx'.  Ranks without such instances keep
--   'realtime' and an empty Correction.
-- columns: Rank, Host, Offset (ns), Clock, Error (ns), Correction (ns), Refined Error (ns),
--   Instances, Method
-- arguments: hgtx
WITH off AS (
    SELECT COALESCE((SELECT value FROM session_info
                     WHERE key = 'realtime_minus_monotonic_ns'), 0) AS ns
), coll AS (
    SELECT COALESCE(printf('%016x', t.comm_hash), '?') AS comm, COALESCE(t.func, '?') AS name,
           t.seq_number AS seq, t.end_ns AS leave, t.id
    FROM pccl_task_view AS t WHERE t.type = 1
), ranges AS (
    SELECT COALESCE(ds.value, '') || ':' || COALESCE(ts.value, '') AS name, e.end_ns AS leave,
           e.start_ns AS arrive, e.id
    FROM hgtx_events AS e
    LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
    LEFT JOIN strings AS ds ON ds.id = d.name_id
    LEFT JOIN strings AS ts ON ts.id = e.text_id
    WHERE e.kind IN (1, 2) AND e.end_ns IS NOT NULL AND :report_arg = 'hgtx'
), named AS (  -- the ranges named after a collective
    SELECT * FROM ranges
    WHERE replace(lower(name), '_', '') GLOB '*allreduce*'
       OR replace(lower(name), '_', '') GLOB '*allgather*'
       OR replace(lower(name), '_', '') GLOB '*reducescatter*'
       OR replace(lower(name), '_', '') GLOB '*alltoall*'
       OR lower(name) GLOB '*broadcast*' OR lower(name) GLOB '*barrier*'
)
SELECT 'pccl' AS source, comm, name,
       COALESCE(seq, ROW_NUMBER() OVER (PARTITION BY comm, name ORDER BY leave, id) - 1) AS seq,
       leave + (SELECT ns FROM off) AS leave_rt
FROM coll
UNION ALL
SELECT 'hgtx', '', name, ROW_NUMBER() OVER (PARTITION BY name ORDER BY arrive, id) - 1,
       leave + (SELECT ns FROM off)
FROM named;
-- merge
WITH src AS (  -- PCCL's collectives, or (rank_clock:hgtx) the HGTX stand-ins
    SELECT * FROM part
    WHERE source = CASE WHEN :report_arg = 'hgtx' THEN 'hgtx' ELSE 'pccl' END
), base AS (  -- medians in doubles: taken of times after this, which they hold exactly
    SELECT MIN(leave_rt) AS ns FROM src
), everyone AS (  -- instances every rank left
    SELECT comm, name, seq, median(leave_rt - (SELECT ns FROM base)) AS med FROM src
    GROUP BY comm, name, seq HAVING COUNT(*) = (SELECT COUNT(*) FROM ranks)
), dev AS (
    SELECT s.asys_rank AS rank, s.leave_rt - (SELECT ns FROM base) - e.med AS d
    FROM src AS s JOIN everyone AS e ON e.comm = s.comm AND e.name = s.name AND e.seq = s.seq
), corr AS (
    SELECT rank, median(d) AS m, COUNT(*) AS n FROM dev GROUP BY rank
), spread AS (
    SELECT d.rank, MAX(ABS(d.d - c.m)) AS worst
    FROM dev AS d JOIN corr AS c ON c.rank = d.rank GROUP BY d.rank
)
SELECT r.rank AS "Rank", r.host AS "Host", r.offset_ns AS "Offset (ns)", r.clock_method AS "Clock",
       r.clock_error_ns AS "Error (ns)", CAST(ROUND(-c.m) AS INTEGER) AS "Correction (ns)",
       CAST(ROUND(s.worst) AS INTEGER) AS "Refined Error (ns)",
       COALESCE(c.n, 0) AS "Instances",
       CASE WHEN c.n IS NULL THEN 'realtime'
            WHEN :report_arg = 'hgtx' THEN 'realtime+hgtx' ELSE 'realtime+pccl' END AS "Method"
FROM ranks AS r
LEFT JOIN corr AS c ON c.rank = r.rank
LEFT JOIN spread AS s ON s.rank = r.rank
ORDER BY r.rank;
