-- name: stream_pct
-- title: PPU Stream Percentage Tree
-- description: The devices' work as the timeline tree shows it: Device > Context > Stream >
--   rows (Kernels with one child per kernel group, Memory with one child per operation,
--   Graph Group > Graph > Graph Exec, Video: the decode and encode engines' work, -t hgvideo;
--   nvJPEG's work is its copies and kernels, under Memory and Kernels).  A context's % is its share of its device's time, a
--   stream's of its context's time; every row, group, graph and exec is a share of its
--   stream's time (the same work can appear in several rows).  Time is the sum of the
--   activities' durations.  A device with one context shows its streams directly, a context
--   with one stream its rows directly; a context with several streams gets an [All Stream]
--   row.  Kernels group by base name, or with --group-by hgtx by the innermost HGTX range
--   open at the launch.  With --filter-time, durations are clipped to the window and every %
--   is recomputed and re-sorted.  Siblings are sorted by time; the column format indents the
--   tree, csv and json give flat rows with their parent's Id.  Key is a stable path of ids
--   (D<device>/C<pid>.<context>/S<stream>/R<row>/G<group>/X<exec>) that asys-export uses.
--   Streams and devices named with NVTX (nvtxNameCudaStream...) show their names.
-- columns: Node, Percent (%), Time (ns), Level, Id, Parent Id, Kind, Key
-- tree: Node, Level
WITH whole AS (  -- the window holds every activity: the sums made at import serve
    SELECT COALESCE(:filter_start <= MIN(first_start) AND :filter_end >= MAX(last_end), 0) AS yes
    FROM ppu_activity_groups
), act AS MATERIALIZED (  -- the activities summed by everything the tree splits on
    SELECT g.kind, g.pid, g.physical, g.context, g.stream, g.graph_id, g.graph_exec_id,
           g.copy_kind,
           CASE WHEN g.kind = 1 AND :group_by = 'hgtx' THEN g.hgtx_group
                WHEN g.kind = 1 THEN 'b' || g.base_name_id END AS kernel_group,
           MIN(g.hgtx_range_id) AS hgtx_range_id, SUM(g.duration_ns) AS dur
    FROM ppu_activity_groups AS g
    WHERE (SELECT yes FROM whole)
    GROUP BY g.kind, g.pid, g.physical, g.context, g.stream, g.graph_id, g.graph_exec_id,
             g.copy_kind, kernel_group
    UNION ALL
    SELECT p.kind, p.pid, p.physical, p.context, p.stream, p.graph_id, p.graph_exec_id,
           p.copy_kind,
           CASE WHEN p.kind = 1 AND :group_by = 'hgtx'
                THEN COALESCE('h' || e.domain_id || ':' || COALESCE(e.text_id, ''), 'h')
                WHEN p.kind = 1 THEN 'b' || p.base_name_id END AS kernel_group,
           MIN(p.hgtx_range_id) AS hgtx_range_id,
           SUM(MIN(p.end_ns, :filter_end) - MAX(p.start_ns, :filter_start)) AS dur
    FROM ppu_activities AS p
    LEFT JOIN hgtx_events AS e ON e.id = p.hgtx_range_id AND :group_by = 'hgtx'
    WHERE NOT (SELECT yes FROM whole) AND p.end_ns >= :filter_start AND p.start_ns <= :filter_end
    GROUP BY p.kind, p.pid, p.physical, p.context, p.stream, p.graph_id, p.graph_exec_id,
             p.copy_kind, kernel_group
), dev AS (
    SELECT physical, SUM(dur) AS total, COUNT(DISTINCT pid * 4294967296 + context) AS contexts
    FROM act GROUP BY physical
), ctx AS (
    SELECT physical, pid, context, SUM(dur) AS total, COUNT(DISTINCT stream) AS streams
    FROM act GROUP BY physical, pid, context
), str AS (
    SELECT physical, pid, context, stream, SUM(dur) AS total FROM act
    GROUP BY physical, pid, context, stream
), place AS (  -- where each stream's nodes hang: visibility of its context and itself
    SELECT s.physical, s.pid, s.context, s.stream, s.total,
           d.contexts > 1 AS cv, c.streams > 1 AS sv, c.total AS ctx_total,
           'D' || s.physical AS dev_key,
           'D' || s.physical || '/C' || s.pid || '.' || s.context AS ctx_key,
           'D' || s.physical || '/C' || s.pid || '.' || s.context || '/S' || s.stream AS str_key,
           DENSE_RANK() OVER (ORDER BY d.total DESC, s.physical) AS r0,
           DENSE_RANK() OVER (PARTITION BY s.physical ORDER BY c.total DESC, s.pid, s.context)
               AS r1,
           ROW_NUMBER() OVER (PARTITION BY s.physical, s.pid, s.context
                              ORDER BY s.total DESC, s.stream) AS r2
    FROM str AS s
    JOIN ctx AS c ON c.physical = s.physical AND c.pid = s.pid AND c.context = s.context
    JOIN dev AS d ON d.physical = s.physical
), rows_ AS (  -- the rows under a stream, ranked by time
    SELECT *, ROW_NUMBER() OVER (PARTITION BY physical, pid, context, stream
                                 ORDER BY total DESC, row) AS r3
    FROM (SELECT physical, pid, context, stream, 'Kernels' AS row, SUM(dur) AS total FROM act
          WHERE kind = 1 GROUP BY physical, pid, context, stream
          UNION ALL
          SELECT physical, pid, context, stream, 'Memory', SUM(dur) FROM act
          WHERE kind IN (2, 3) GROUP BY physical, pid, context, stream
          UNION ALL
          SELECT physical, pid, context, stream, 'Graph Group', SUM(dur) FROM act
          WHERE graph_id IS NOT NULL GROUP BY physical, pid, context, stream
          UNION ALL
          SELECT physical, pid, context, stream, 'Video', SUM(dur) FROM act
          WHERE kind = 5 GROUP BY physical, pid, context, stream)
), groups AS (  -- the children of the rows, ranked by time
    SELECT *, ROW_NUMBER() OVER (PARTITION BY physical, pid, context, stream, row
                                 ORDER BY total DESC, grp) AS r4
    FROM (SELECT physical, pid, context, stream, 'Kernels' AS row, kernel_group AS grp,
                 MIN(hgtx_range_id) AS range_id, SUM(dur) AS total
          FROM act WHERE kind = 1 GROUP BY physical, pid, context, stream, kernel_group
          UNION ALL
          SELECT physical, pid, context, stream, 'Memory',
                 CASE WHEN kind = 3 THEN 'Memset' ELSE 'c' || copy_kind END, NULL, SUM(dur)
          FROM act WHERE kind IN (2, 3)
          GROUP BY physical, pid, context, stream,
                   CASE WHEN kind = 3 THEN 'Memset' ELSE 'c' || copy_kind END
          UNION ALL
          SELECT physical, pid, context, stream, 'Graph Group', 'g' || graph_id, NULL, SUM(dur)
          FROM act WHERE graph_id IS NOT NULL GROUP BY physical, pid, context, stream, graph_id)
), execs AS (
    SELECT physical, pid, context, stream, graph_id, graph_exec_id, SUM(dur) AS total,
           ROW_NUMBER() OVER (PARTITION BY physical, pid, context, stream, graph_id
                              ORDER BY SUM(dur) DESC, graph_exec_id) AS r5
    FROM act WHERE graph_id IS NOT NULL AND graph_exec_id IS NOT NULL
    GROUP BY physical, pid, context, stream, graph_id, graph_exec_id
), nodes AS (
    -- devices
    SELECT 'D' || d.physical AS key, NULL AS parent_key, 0 AS level, 'device' AS kind,
           'PPU ' || d.physical ||
               COALESCE(': ' || (SELECT s.value FROM ppu_device_names AS n
                                 JOIN ppu_devices AS pd ON pd.pid = n.pid AND pd.device = n.device
                                 JOIN strings AS s ON s.id = n.name_id
                                 WHERE COALESCE(pd.physical_index, pd.device) = d.physical
                                 LIMIT 1),
                        ': ' || (SELECT s.value FROM ppu_devices AS pd
                                 JOIN strings AS s ON s.id = pd.name_id
                                 WHERE COALESCE(pd.physical_index, pd.device) = d.physical
                                 LIMIT 1), '')
               AS label,
           d.total AS total, NULL AS pct,
           printf('%06d.%06d.%06d.%06d.%06d.%06d',
                  DENSE_RANK() OVER (ORDER BY d.total DESC, d.physical), 0, 0, 0, 0, 0) AS path
    FROM dev AS d
    UNION ALL
    -- contexts, when their device has several
    SELECT DISTINCT p.ctx_key, p.dev_key, 1, 'context',
           'Context ' || p.context || ' (pid ' || p.pid || ')', p.ctx_total,
           100.0 * p.ctx_total / (SELECT total FROM dev WHERE dev.physical = p.physical),
           printf('%06d.%06d.%06d.%06d.%06d.%06d', p.r0, p.r1, 0, 0, 0, 0)
    FROM place AS p WHERE p.cv
    UNION ALL
    -- [All Stream], when a context has several streams
    SELECT DISTINCT p.ctx_key || '/A', CASE WHEN p.cv THEN p.ctx_key ELSE p.dev_key END,
           1 + p.cv, 'all streams', '[All Stream]', p.ctx_total, 100.0,
           printf('%06d.%06d.%06d.%06d.%06d.%06d', p.r0, p.r1, 0, 1, 0, 0)
    FROM place AS p WHERE p.sv
    UNION ALL
    -- streams, when their context has several
    SELECT p.str_key, CASE WHEN p.cv THEN p.ctx_key ELSE p.dev_key END, 1 + p.cv, 'stream',
           'Stream ' || p.stream ||
               CASE WHEN (SELECT is_default FROM ppu_streams AS ps
                          WHERE ps.pid = p.pid AND ps.stream = p.stream) THEN ' (default)'
                    ELSE '' END ||
               COALESCE(': ' || (SELECT s.value FROM ppu_stream_names AS n
                                 JOIN strings AS s ON s.id = n.name_id
                                 WHERE n.pid = p.pid AND n.stream = p.stream LIMIT 1), ''),
           p.total, 100.0 * p.total / p.ctx_total,
           printf('%06d.%06d.%06d.%06d.%06d.%06d', p.r0, p.r1, p.r2, 0, 0, 0)
    FROM place AS p WHERE p.sv
    UNION ALL
    -- Kernels, Memory, Graph Group, Video
    SELECT p.str_key || '/R' || r.row,
           CASE WHEN p.sv THEN p.str_key WHEN p.cv THEN p.ctx_key ELSE p.dev_key END,
           1 + p.cv + p.sv, lower(r.row), r.row, r.total, 100.0 * r.total / p.total,
           printf('%06d.%06d.%06d.%06d.%06d.%06d', p.r0, p.r1, p.r2, r.r3, 0, 0)
    FROM rows_ AS r
    JOIN place AS p ON p.physical = r.physical AND p.pid = r.pid AND p.context = r.context
                   AND p.stream = r.stream
    UNION ALL
    -- kernel groups, memory operations, graphs
    SELECT p.str_key || '/R' || g.row || '/G' || g.grp, p.str_key || '/R' || g.row,
           2 + p.cv + p.sv,
           CASE g.row WHEN 'Kernels' THEN 'kernel group' WHEN 'Memory' THEN 'memory operation'
                      ELSE 'graph' END,
           CASE WHEN g.row = 'Kernels' AND substr(g.grp, 1, 1) = 'b'
                    THEN (SELECT value FROM strings WHERE id = CAST(substr(g.grp, 2) AS INTEGER))
                WHEN g.row = 'Kernels'
                    THEN COALESCE((SELECT COALESCE(ds.value, '') || ':' || COALESCE(ts.value, '')
                                   FROM hgtx_events AS e
                                   LEFT JOIN hgtx_domains AS hd ON hd.id = e.domain_id
                                   LEFT JOIN strings AS ds ON ds.id = hd.name_id
                                   LEFT JOIN strings AS ts ON ts.id = e.text_id
                                   WHERE e.id = g.range_id), '[no HGTX range]')
                WHEN g.grp = 'Memset' THEN 'Memset'
                WHEN g.row = 'Memory'
                    THEN COALESCE((SELECT name FROM hggc_copy_kinds
                                   WHERE id = CAST(substr(g.grp, 2) AS INTEGER)), 'Unknown')
                ELSE 'Graph ' || substr(g.grp, 2) END,
           g.total, 100.0 * g.total / p.total,
           printf('%06d.%06d.%06d.%06d.%06d.%06d', p.r0, p.r1, p.r2, r.r3, g.r4, 0)
    FROM groups AS g
    JOIN rows_ AS r ON r.physical = g.physical AND r.pid = g.pid AND r.context = g.context
                   AND r.stream = g.stream AND r.row = g.row
    JOIN place AS p ON p.physical = g.physical AND p.pid = g.pid AND p.context = g.context
                   AND p.stream = g.stream
    UNION ALL
    -- graph execs
    SELECT p.str_key || '/RGraph Group/Gg' || x.graph_id || '/X' || x.graph_exec_id,
           p.str_key || '/RGraph Group/Gg' || x.graph_id, 3 + p.cv + p.sv, 'graph exec',
           'Graph Exec ' || x.graph_exec_id, x.total, 100.0 * x.total / p.total,
           printf('%06d.%06d.%06d.%06d.%06d.%06d', p.r0, p.r1, p.r2, r.r3, g.r4, x.r5)
    FROM execs AS x
    JOIN groups AS g ON g.physical = x.physical AND g.pid = x.pid AND g.context = x.context
                    AND g.stream = x.stream AND g.row = 'Graph Group'
                    AND g.grp = 'g' || x.graph_id
    JOIN rows_ AS r ON r.physical = x.physical AND r.pid = x.pid AND r.context = x.context
                   AND r.stream = x.stream AND r.row = 'Graph Group'
    JOIN place AS p ON p.physical = x.physical AND p.pid = x.pid AND p.context = x.context
                   AND p.stream = x.stream
), numbered AS (
    SELECT *, ROW_NUMBER() OVER (ORDER BY path) AS id FROM nodes
)
SELECT CASE WHEN n.pct IS NULL THEN n.label ELSE printf('%.1f%% %s', n.pct, n.label) END
           AS "Node",
       n.pct AS "Percent (%)",
       n.total AS "Time (ns)",
       n.level AS "Level",
       n.id AS "Id",
       parent.id AS "Parent Id",
       n.kind AS "Kind",
       n.key AS "Key"
FROM numbered AS n
LEFT JOIN numbered AS parent ON parent.key = n.parent_key
ORDER BY n.id;
