-- name: pccl_skew
-- title: Collective Skew across Ranks
-- description: Each collective instance matched across the ranks of a multi-report analysis
--   (asys-stats runs/): PCCL collectives by communicator, collective and sequence number;
--   when a report has no PCCL collectives, its HGTX ranges stand in, matched by domain:name
--   and occurrence (the Nth range of that name in the report, from 0).  A rank arrives when
--   it issued the call (the range started); times are on the shared CLOCK_REALTIME axis
--   (each report's times + its host's REALTIME-MONOTONIC offset, see rank_sum's Clock),
--   after the earliest rank's session start; PCCL collectives are moved by rank_clock's
--   correction (realtime+pccl: the ranks leave a collective together, so a host whose clock
--   is off is not taken for a straggler).  Skew is the last arrival minus the first;
--   Straggler is the rank that arrived last (the lowest such rank on a tie).  Sorted by skew,
--   the worst first.
-- columns: Skew (ns), First Arrival (ns), Last Arrival (ns), Last Departure (ns), Straggler,
--   Ranks, Seq, Collective, Communicator, Source
WITH off AS (
    SELECT COALESCE((SELECT value FROM session_info
                     WHERE key = 'realtime_minus_monotonic_ns'), 0) AS ns
), coll AS (
    SELECT COALESCE(printf('%016x', t.comm_hash), '?') AS comm, COALESCE(t.func, '?') AS name,
           t.seq_number AS seq, t.issue_ns AS arrive, t.end_ns AS leave, t.id
    FROM pccl_task_view AS t WHERE t.type = 1
), ranges AS (
    SELECT '' AS comm, COALESCE(ds.value, '') || ':' || COALESCE(ts.value, '') AS name,
           e.start_ns AS arrive, e.end_ns AS leave, e.id
    FROM hgtx_events AS e
    LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
    LEFT JOIN strings AS ds ON ds.id = d.name_id
    LEFT JOIN strings AS ts ON ts.id = e.text_id
    WHERE e.kind IN (1, 2) AND e.end_ns IS NOT NULL AND NOT EXISTS (SELECT 1 FROM coll)
)
SELECT 'pccl' AS source, comm, name,
       COALESCE(seq, ROW_NUMBER() OVER (PARTITION BY comm, name ORDER BY arrive, id) - 1) AS seq,
       arrive + (SELECT ns FROM off) AS arrive_rt, leave + (SELECT ns FROM off) AS leave_rt
FROM coll
UNION ALL
SELECT 'hgtx', comm, name, ROW_NUMBER() OVER (PARTITION BY name ORDER BY arrive, id) - 1,
       arrive + (SELECT ns FROM off), leave + (SELECT ns FROM off)
FROM ranges;
-- merge
WITH t0 AS (
    SELECT MIN(start_rt_ns) AS ns FROM ranks
), base AS (  -- medians in doubles: taken of times after this, which they hold exactly
    SELECT MIN(leave_rt) AS ns FROM part WHERE source = 'pccl'
), everyone AS (  -- PCCL collectives every rank left: their median departure
    SELECT comm, name, seq, median(leave_rt - (SELECT ns FROM base)) AS med FROM part
    WHERE source = 'pccl'
    GROUP BY comm, name, seq HAVING COUNT(*) = (SELECT COUNT(*) FROM ranks)
), corr AS (  -- rank_clock's correction (realtime+pccl): how early a rank leaves them
    SELECT p.asys_rank AS rank,
           CAST(ROUND(median(p.leave_rt - (SELECT ns FROM base) - e.med)) AS INTEGER) AS m
    FROM part AS p JOIN everyone AS e ON e.comm = p.comm AND e.name = p.name AND e.seq = p.seq
    WHERE p.source = 'pccl' GROUP BY p.asys_rank
), aligned AS (
    SELECT p.source, p.comm, p.name, p.seq, p.asys_rank,
           p.arrive_rt - COALESCE(c.m, 0) AS arrive_rt, p.leave_rt - COALESCE(c.m, 0) AS leave_rt
    FROM part AS p LEFT JOIN corr AS c ON c.rank = p.asys_rank AND p.source = 'pccl'
), ranked AS (
    SELECT p.*, ROW_NUMBER() OVER (PARTITION BY source, comm, name, seq
                                   ORDER BY arrive_rt DESC, asys_rank) AS place
    FROM aligned AS p
), inst AS (
    SELECT source, comm, name, seq, COUNT(*) AS n, MIN(arrive_rt) AS first,
           MAX(arrive_rt) AS last, MAX(leave_rt) AS leave,
           MAX(CASE WHEN place = 1 THEN asys_rank END) AS straggler
    FROM ranked GROUP BY source, comm, name, seq
)
SELECT last - first AS "Skew (ns)", first - (SELECT ns FROM t0) AS "First Arrival (ns)",
       last - (SELECT ns FROM t0) AS "Last Arrival (ns)",
       leave - (SELECT ns FROM t0) AS "Last Departure (ns)", straggler AS "Straggler",
       n AS "Ranks", seq AS "Seq", name AS "Collective", comm AS "Communicator",
       source AS "Source"
FROM inst
ORDER BY last - first DESC, first, comm, name, seq;
