-- name: pccl_channel_sum
-- alias: nccl_channel_sum
-- title: PCCL Channel Summary
-- description: Per communicator, rank and channel: how long its proxy was busy (the union of
--   its proxy operations), how long its kernels worked on it (the union of its KernelCh
--   events), its proxy operations (send and receive), steps, the bytes its steps moved and
--   their average duration.  With --filter-time, everything is clipped to the window.
-- requires: pccl_comms: no PCCL communicators (record with -t pccl)
-- columns: Comm, Rank, Channel, Busy Time (ns), Kernel Time (ns), Send Ops, Recv Ops, Steps,
--   Bytes, Avg Step (ns)
WITH ops AS (
    SELECT o.comm_id, o.channel, SUM(o.is_send) AS sends, SUM(1 - o.is_send) AS recvs,
           covered_ns(MAX(o.start_ns, :filter_start), MIN(o.end_ns, :filter_end)) AS busy
    FROM pccl_proxy_ops AS o
    WHERE o.end_ns >= :filter_start AND o.start_ns <= :filter_end
    GROUP BY o.comm_id, o.channel
), steps AS (
    SELECT s.comm_id, s.channel, COUNT(*) AS n, SUM(s.trans_size) AS bytes,
           AVG(MIN(s.end_ns, :filter_end) - MAX(s.start_ns, :filter_start)) AS average
    FROM pccl_proxy_steps AS s
    WHERE s.end_ns >= :filter_start AND s.start_ns <= :filter_end
    GROUP BY s.comm_id, s.channel
), kernels AS (
    SELECT k.comm_id, k.channel,
           covered_ns(MAX(k.start_ns, :filter_start), MIN(k.end_ns, :filter_end)) AS busy
    FROM pccl_kernel_channels AS k
    WHERE k.end_ns >= :filter_start AND k.start_ns <= :filter_end
    GROUP BY k.comm_id, k.channel
), channels AS (
    SELECT comm_id, channel FROM ops UNION SELECT comm_id, channel FROM kernels
)
SELECT printf('%016x', c.comm_hash) AS "Comm",
       c.rank AS "Rank",
       ch.channel AS "Channel",
       COALESCE(o.busy, 0) AS "Busy Time (ns)",
       COALESCE(k.busy, 0) AS "Kernel Time (ns)",
       COALESCE(o.sends, 0) AS "Send Ops",
       COALESCE(o.recvs, 0) AS "Recv Ops",
       COALESCE(s.n, 0) AS "Steps",
       COALESCE(s.bytes, 0) AS "Bytes",
       s.average AS "Avg Step (ns)"
FROM channels AS ch
JOIN pccl_comms AS c ON c.id = ch.comm_id
LEFT JOIN ops AS o ON o.comm_id = ch.comm_id AND o.channel = ch.channel
LEFT JOIN steps AS s ON s.comm_id = ch.comm_id AND s.channel = ch.channel
LEFT JOIN kernels AS k ON k.comm_id = ch.comm_id AND k.channel = ch.channel
ORDER BY c.comm_hash, c.rank, c.pid, ch.channel;
