-- name: pccl_sum
-- alias: nccl_sum
-- title: PCCL Collective Summary
-- description: Statistics of the collectives (PCCL/NCCL Coll events, every rank's own), grouped
--   by collective and message size: the size as nccl-tests counts it (AllReduce, Broadcast,
--   Reduce: count x type size; AllGather, ReduceScatter: the whole buffer of all ranks), in
--   power-of-two buckets (1 MiB: [1 MiB, 2 MiB)).  Times are the collectives' execution (see
--   pccl_trace's Time Source).  Algo BW is bytes over time (GB/s = bytes/ns), Bus BW the same
--   times nccl-tests' factor: AllReduce 2(n-1)/n, AllGather and ReduceScatter (n-1)/n,
--   Broadcast and Reduce 1, over the ranks n of each communicator.  Time (%) is a row's share
--   of all collective time.  With --filter-time, collectives are clipped to the window and
--   those outside it left out.
-- requires: pccl_tasks: no PCCL collectives (record with -t pccl)
-- columns: Time (%), Total Time (ns), Count, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Avg Size (B), Algo BW (GB/s), Bus BW (GB/s), Size, Collective
WITH samples AS (
    SELECT t.func, t.size_bucket, t.bytes, t.busbw_factor,
           MIN(t.end_ns, :filter_end) - MAX(t.start_ns, :filter_start) AS duration
    FROM pccl_task_view AS t
    WHERE t.type = 1 AND t.end_ns >= :filter_start AND t.start_ns <= :filter_end
), grouped AS (
    SELECT func, size_bucket, SUM(duration) AS total, COUNT(*) AS n, AVG(duration) AS average,
           median(duration) AS med, MIN(duration) AS shortest, MAX(duration) AS longest,
           stdev(duration) AS deviation, AVG(bytes) AS size,
           SUM(bytes) AS bytes, SUM(bytes * busbw_factor) AS bus_bytes
    FROM samples GROUP BY func, size_bucket
)
SELECT 100.0 * total / NULLIF(SUM(total) OVER (), 0) AS "Time (%)",
       total AS "Total Time (ns)",
       n AS "Count",
       average AS "Avg (ns)",
       med AS "Med (ns)",
       shortest AS "Min (ns)",
       longest AS "Max (ns)",
       deviation AS "StdDev (ns)",
       size AS "Avg Size (B)",
       1.0 * bytes / NULLIF(total, 0) AS "Algo BW (GB/s)",
       1.0 * bus_bytes / NULLIF(total, 0) AS "Bus BW (GB/s)",
       CASE WHEN size_bucket IS NULL THEN '?'
            WHEN size_bucket >= 1073741824 THEN (size_bucket / 1073741824) || ' GiB'
            WHEN size_bucket >= 1048576 THEN (size_bucket / 1048576) || ' MiB'
            WHEN size_bucket >= 1024 THEN (size_bucket / 1024) || ' KiB'
            ELSE size_bucket || ' B' END AS "Size",
       COALESCE(func, '?') AS "Collective"
FROM grouped
ORDER BY func, size_bucket;
