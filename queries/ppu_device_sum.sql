-- name: ppu_device_sum
-- title: PPU Device Summary
-- description: Per device (the machine's index): kernels and their busy time (the union of
--   their intervals, so concurrent kernels count once) and its share of the window (the
--   session, or --filter-time); time of memory operations by kind (HtoD, DtoH, DtoD, HtoH,
--   PtoP copies and memsets) and by the host memory of a copy (Pinned, Pageable); graph
--   launches and their time; the video engines' decodes and encodes (-t hgvideo) and their
--   time.  Times are sums of durations clipped to the window.
-- columns: Device, Name, Kernels, Kernel Time (ns), Kernel Busy (ns), Kernel Busy (%),
--   Memory Ops, Memory Busy (ns), HtoD (ns), DtoH (ns), DtoD (ns), HtoH (ns), PtoP (ns),
--   Memset (ns), Pinned (ns), Pageable (ns), Graph Launches, Graph Time (ns), Video Ops,
--   Video Time (ns)
WITH win AS (
    SELECT MAX(:filter_start, :session_start) AS lo,
           MIN(:filter_end, CASE WHEN :session_end > :session_start THEN :session_end
                                 ELSE (SELECT MAX(end_ns) FROM ppu_activities) END) AS hi
), act AS (
    SELECT p.physical, p.kind, p.pid, p.copy_kind, p.src_kind, p.dst_kind, p.graph_id,
           p.correlation_id, MAX(p.start_ns, :filter_start) AS s, MIN(p.end_ns, :filter_end) AS e
    FROM ppu_activities AS p
    WHERE p.end_ns >= :filter_start AND p.start_ns <= :filter_end
), sums AS (
    SELECT physical,
           SUM(kind = 1) AS kernels,
           SUM(CASE WHEN kind = 1 THEN e - s ELSE 0 END) AS kernel_time,
           -- busy: the union of the intervals, overlapping work counts once
           covered_ns(CASE WHEN kind = 1 THEN s END, e) AS kernel_busy,
           covered_ns(CASE WHEN kind IN (2, 3) THEN s END, e) AS memory_busy,
           SUM(kind IN (2, 3)) AS memory_ops,
           SUM(CASE WHEN kind = 2 AND copy_kind = 1 THEN e - s ELSE 0 END) AS htod,
           SUM(CASE WHEN kind = 2 AND copy_kind = 2 THEN e - s ELSE 0 END) AS dtoh,
           SUM(CASE WHEN kind = 2 AND copy_kind = 8 THEN e - s ELSE 0 END) AS dtod,
           SUM(CASE WHEN kind = 2 AND copy_kind = 9 THEN e - s ELSE 0 END) AS htoh,
           SUM(CASE WHEN kind = 2 AND copy_kind = 10 THEN e - s ELSE 0 END) AS ptop,
           SUM(CASE WHEN kind = 3 THEN e - s ELSE 0 END) AS memset,
           SUM(CASE WHEN kind = 2 AND 2 IN (src_kind, dst_kind) THEN e - s ELSE 0 END) AS pinned,
           SUM(CASE WHEN kind = 2 AND 1 IN (src_kind, dst_kind) THEN e - s ELSE 0 END)
               AS pageable,
           COUNT(DISTINCT CASE WHEN graph_id IS NOT NULL
                               THEN pid * 4294967296 + correlation_id END) AS graph_launches,
           SUM(CASE WHEN graph_id IS NOT NULL THEN e - s ELSE 0 END) AS graph_time,
           SUM(kind = 5) AS video_ops,
           SUM(CASE WHEN kind = 5 THEN e - s ELSE 0 END) AS video_time
    FROM act GROUP BY physical
)
SELECT s.physical AS "Device",
       (SELECT st.value FROM ppu_devices AS d JOIN strings AS st ON st.id = d.name_id
        WHERE COALESCE(d.physical_index, d.device) = s.physical LIMIT 1) AS "Name",
       s.kernels AS "Kernels",
       s.kernel_time AS "Kernel Time (ns)",
       s.kernel_busy AS "Kernel Busy (ns)",
       CASE WHEN w.hi > w.lo THEN 100.0 * s.kernel_busy / (w.hi - w.lo) END
           AS "Kernel Busy (%)",
       s.memory_ops AS "Memory Ops",
       s.memory_busy AS "Memory Busy (ns)",
       s.htod AS "HtoD (ns)", s.dtoh AS "DtoH (ns)", s.dtod AS "DtoD (ns)", s.htoh AS "HtoH (ns)",
       s.ptop AS "PtoP (ns)", s.memset AS "Memset (ns)",
       s.pinned AS "Pinned (ns)", s.pageable AS "Pageable (ns)",
       s.graph_launches AS "Graph Launches", s.graph_time AS "Graph Time (ns)",
       s.video_ops AS "Video Ops", s.video_time AS "Video Time (ns)"
FROM sums AS s CROSS JOIN win AS w
ORDER BY s.physical;
