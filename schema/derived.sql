-- Derived tables, built once at import after the indexes (schema.sql documents
-- them).  Joins that must scan by range are written range-first (CROSS JOIN
-- keeps SQLite's planner from turning them around).

-- API calls inside HGTX ranges on the range's thread.  The bound on e.id,
-- evaluated once, is 0 when there are no calls: the ranges are not scanned
-- then (1 s of 10 M ranges; an EXISTS term alone is tested on every row).
INSERT INTO hggc_api_ranges (api_id, range_id, kind, level)
SELECT a.id, e.id, e.kind, e.nesting_level
FROM hgtx_events AS e CROSS JOIN hggc_api_calls AS a
  ON a.pid = e.pid AND a.tid = e.tid AND a.start_ns >= e.start_ns AND a.start_ns <= e.end_ns
WHERE e.kind IN (1, 2) AND e.end_ns IS NOT NULL
  AND e.id <= (SELECT IIF(EXISTS (SELECT 1 FROM hggc_api_calls), 9223372036854775807, 0));
CREATE INDEX hggc_api_ranges_by_api ON hggc_api_ranges (api_id, kind, level);

-- Each kernel's launch number among its kernel's launches in its process
-- (and its mangled name, which the export would otherwise decode out of the
-- wide ppu_kernels rows).
INSERT INTO ppu_kernel_instances (kernel_id, instance, mangled_name_id)
SELECT id, ROW_NUMBER() OVER (PARTITION BY pid, mangled_name_id
                              ORDER BY correlation_id, start_ns, id) - 1,
       mangled_name_id
FROM ppu_kernels;

-- Every device activity, joined to its API call, graph exec and innermost range.
INSERT INTO ppu_activities (kind, source_id, pid, device, physical, context, stream, start_ns,
                            end_ns, correlation_id, api_id, api_start_ns, graph_id, graph_node_id,
                            graph_exec_id, name_id, base_name_id, copy_kind, src_kind, dst_kind,
                            bytes, hgtx_range_id)
SELECT r.kind, r.source_id, r.pid, r.device, COALESCE(d.physical_index, r.device), r.context,
       r.stream, r.start_ns, r.end_ns, r.correlation_id, a.id, a.start_ns, r.graph_id,
       r.graph_node_id,
       CASE WHEN r.graph_id IS NOT NULL
            THEN (SELECT l.exec_id FROM ppu_graph_launches AS l
                  WHERE l.pid = r.pid AND l.correlation_id = r.correlation_id) END,
       r.name_id, r.base_name_id, r.copy_kind, r.src_kind, r.dst_kind, r.bytes,
       (SELECT ar.range_id FROM hggc_api_ranges AS ar
        WHERE ar.api_id = a.id AND ar.kind = 1 ORDER BY ar.level DESC LIMIT 1)
FROM (SELECT 1 AS kind, k.id AS source_id, k.pid, k.device, k.context, k.stream, k.start_ns,
             k.end_ns, k.correlation_id, k.graph_id, k.graph_node_id,
             n.demangled_name_id AS name_id, n.base_name_id, NULL AS copy_kind,
             NULL AS src_kind, NULL AS dst_kind, NULL AS bytes
      FROM ppu_kernels AS k JOIN ppu_kernel_names AS n ON n.mangled_name_id = k.mangled_name_id
      UNION ALL
      SELECT 2, m.id, m.pid, m.device, m.context, m.stream, m.start_ns, m.end_ns,
             m.correlation_id, m.graph_id, m.graph_node_id, NULL, NULL, m.copy_kind, m.src_kind,
             m.dst_kind, m.bytes
      FROM ppu_memcpys AS m
      UNION ALL
      SELECT 3, s.id, s.pid, s.device, s.context, s.stream, s.start_ns, s.end_ns,
             s.correlation_id, s.graph_id, s.graph_node_id, NULL, NULL, NULL, NULL,
             s.memory_kind, s.bytes
      FROM ppu_memsets AS s
      UNION ALL
      SELECT 4, g.rowid, g.pid, g.device, g.context, g.stream, g.start_ns, g.end_ns,
             g.correlation_id, g.graph_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL
      FROM ppu_graph_traces AS g
      UNION ALL
      -- the video engines' decodes and encodes (-t hgvideo) on streams HGGC knows; nvJPEG's
      -- work is its kernels and copies, already above
      SELECT 5, v.id, v.pid, c.device, s.context, v.stream, v.start_ns, v.end_ns, 0, NULL, NULL,
             NULL, NULL, NULL, NULL, NULL, v.bytes
      FROM video_activities AS v
      JOIN ppu_streams AS s ON s.pid = v.pid AND s.stream = v.stream
      JOIN ppu_contexts AS c ON c.pid = s.pid AND c.context = s.context
      WHERE v.kind IN (1, 2)) AS r
LEFT JOIN hggc_api_calls AS a ON a.pid = r.pid AND a.correlation_id = r.correlation_id
  AND r.kind <> 5
LEFT JOIN ppu_devices AS d ON d.pid = r.pid AND d.device = r.device;
-- covering the times: the export reads each call's work in this order
CREATE INDEX ppu_activities_by_api ON ppu_activities (api_id, start_ns, end_ns);
CREATE INDEX ppu_activities_by_stream ON ppu_activities (physical, pid, context, stream, start_ns);
CREATE INDEX ppu_activities_by_node ON ppu_activities (pid, graph_node_id)
    WHERE graph_node_id IS NOT NULL;

-- A stream with work but no creation record is the per-thread default stream
-- (cudaStreamPerThread, --default-stream per-thread): CUDA makes it blocking,
-- it synchronizes with the legacy default stream.
INSERT OR IGNORE INTO ppu_streams (pid, stream, context, priority, non_blocking, is_default,
                                   correlation_id)
SELECT DISTINCT pid, stream, context, NULL, 0, 0, NULL FROM ppu_activities;

-- ppu_activity_groups, the stream percentage tree's sums, is filled after this
-- file by the importer (imp_hggc_activity_groups): one hashed scan of the
-- activities instead of a sort on ten keys.

-- Projection: the work of the calls inside each range, then that of the graph
-- nodes created inside it (their clones run when an instantiated graph
-- launches) unless the launch itself was inside that range too.
INSERT INTO hgtx_gpu_projection (range_id, pid, physical, context, stream, start_ns, end_ns,
                                 op_count)
SELECT ar.range_id, p.pid, p.physical, p.context, p.stream, MIN(p.start_ns), MAX(p.end_ns),
       COUNT(*)
FROM hggc_api_ranges AS ar CROSS JOIN ppu_activities AS p ON p.api_id = ar.api_id
GROUP BY ar.range_id, p.pid, p.context, p.stream;

INSERT INTO hgtx_gpu_projection (range_id, pid, physical, context, stream, start_ns, end_ns,
                                 op_count)
SELECT ar.range_id, p.pid, p.physical, p.context, p.stream, MIN(p.start_ns), MAX(p.end_ns),
       COUNT(*)
FROM hggc_api_ranges AS ar
CROSS JOIN hggc_api_calls AS a ON a.id = ar.api_id
CROSS JOIN ppu_graph_nodes AS n
  ON n.pid = a.pid AND n.correlation_id = a.correlation_id AND n.original_node_id IS NULL
CROSS JOIN ppu_graph_nodes AS clone
  ON clone.pid = n.pid AND (clone.node_id = n.node_id OR clone.original_node_id = n.node_id)
CROSS JOIN ppu_activities AS p ON p.pid = clone.pid AND p.graph_node_id = clone.node_id
WHERE NOT EXISTS (SELECT 1 FROM hggc_api_ranges AS launched
                  WHERE launched.api_id = p.api_id AND launched.range_id = ar.range_id)
GROUP BY ar.range_id, p.pid, p.context, p.stream
ON CONFLICT (range_id, pid, context, stream) DO UPDATE
SET start_ns = MIN(start_ns, excluded.start_ns), end_ns = MAX(end_ns, excluded.end_ns),
    op_count = op_count + excluded.op_count;
