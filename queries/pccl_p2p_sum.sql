-- name: pccl_p2p_sum
-- alias: nccl_p2p_sum
-- title: PCCL Point-to-Point Summary
-- description: Statistics of the sends and receives (PCCL/NCCL P2p events, every rank's own),
--   grouped by operation and peer rank: their execution times (see pccl_trace's Time
--   Source), the bytes moved and the bandwidth (bytes over time, GB/s = bytes/ns).  Time (%)
--   is a row's share of all point-to-point time.  With --filter-time, operations are clipped
--   to the window and those outside it left out.
-- requires: pccl_tasks: no PCCL operations (record with -t pccl)
-- columns: Time (%), Total Time (ns), Count, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Bytes, BW (GB/s), Peer, Name
WITH samples AS (
    SELECT t.func, t.peer, t.bytes,
           MIN(t.end_ns, :filter_end) - MAX(t.start_ns, :filter_start) AS duration
    FROM pccl_task_view AS t
    WHERE t.type = 2 AND t.end_ns >= :filter_start AND t.start_ns <= :filter_end
), grouped AS (
    SELECT func, peer, SUM(duration) AS total, COUNT(*) AS n, AVG(duration) AS average,
           median(duration) AS med, MIN(duration) AS shortest, MAX(duration) AS longest,
           stdev(duration) AS deviation, SUM(bytes) AS bytes
    FROM samples GROUP BY func, peer
)
SELECT 100.0 * total / NULLIF(SUM(total) OVER (), 0) AS "Time (%)",
       total AS "Total Time (ns)",
       n AS "Count",
       average AS "Avg (ns)",
       med AS "Med (ns)",
       shortest AS "Min (ns)",
       longest AS "Max (ns)",
       deviation AS "StdDev (ns)",
       bytes AS "Bytes",
       1.0 * bytes / NULLIF(total, 0) AS "BW (GB/s)",
       peer AS "Peer",
       COALESCE(func, '?') AS "Name"
FROM grouped
ORDER BY func, peer;
