-- name: pccl_trace
-- alias: nccl_trace
-- title: PCCL Trace
-- description: Every collective and point-to-point operation (PCCL/NCCL Coll and P2p events)
--   in start order: its communicator (NCCL's id, the same on every rank) and rank, what it
--   moved, how NCCL ran it, the kernels it ran in and the HGTX range it was issued in.
--   Start and duration are its execution as Time Source says: gpu_timer (its channels on the
--   device, from the GPU timer NCCL reports), kernel (its HGGC kernels), proxy (its proxy
--   operations) or host (NCCL's host event: enqueueing only).  Times are relative to the
--   session start.
-- requires: pccl_tasks: no PCCL operations (record with -t pccl)
-- columns: Start (ns), Duration (ns), Name, Comm, Rank, Root/Peer, Count, Datatype, Size (B),
--   Algo, Proto, Channels, Seq, Kernels, Kernel, HGTX Range, Time Source, PID, TID
SELECT t.start_ns - :session_start AS "Start (ns)",
       t.end_ns - t.start_ns AS "Duration (ns)",
       COALESCE(t.func, '?') AS "Name",
       printf('%016x', t.comm_hash) AS "Comm",
       t.rank AS "Rank",
       COALESCE(t.root, t.peer) AS "Root/Peer",
       t.count AS "Count",
       t.datatype AS "Datatype",
       t.bytes AS "Size (B)",
       (SELECT value FROM strings WHERE id = t.algo_id) AS "Algo",
       (SELECT value FROM strings WHERE id = t.proto_id) AS "Proto",
       t.channels AS "Channels",
       t.seq_number AS "Seq",
       (SELECT COUNT(*) FROM pccl_task_kernels AS k WHERE k.task_id = t.id) AS "Kernels",
       (SELECT s.value FROM pccl_task_kernels AS k JOIN ppu_activities AS p ON p.id = k.activity_id
        JOIN strings AS s ON s.id = p.base_name_id WHERE k.task_id = t.id
        ORDER BY p.start_ns LIMIT 1) AS "Kernel",
       (SELECT s.value FROM hgtx_events AS e JOIN strings AS s ON s.id = e.text_id
        WHERE e.id = t.hgtx_range_id) AS "HGTX Range",
       t.time_source AS "Time Source",
       t.pid AS "PID",
       t.issue_tid AS "TID"
FROM pccl_task_view AS t
WHERE t.end_ns >= :filter_start AND t.start_ns <= :filter_end
ORDER BY t.start_ns, t.id;
