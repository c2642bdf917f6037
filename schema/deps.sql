-- ppu_deps, built at import after derived.sql (schema.sql documents the table
-- and its rules).  Every activity is placed in its stream by when its work was
-- enqueued: the start of its API call, or its own start when the call is not
-- in the report.  A graph launch is one unit of the stream.

CREATE TEMP TABLE dep_act AS
SELECT p.id, p.pid, p.context, p.stream, p.start_ns, p.end_ns, p.api_id, p.graph_id,
       p.graph_node_id, COALESCE(p.api_start_ns, p.start_ns) AS enq,
       CASE WHEN p.graph_id IS NULL THEN p.id ELSE -p.correlation_id END AS unit,
       1 AS root -- starts its unit (a graph node with a predecessor in its graph does not)
FROM ppu_activities AS p WHERE p.kind IN (1, 2, 3, 4);
-- covering: stream order is read from the index alone
CREATE INDEX temp.dep_act_by_stream ON dep_act (pid, stream, enq, unit, end_ns, id, graph_id);
CREATE INDEX temp.dep_act_by_unit ON dep_act (pid, unit, graph_node_id);

-- Graph structure by logical node: a clone stands for the node it was cloned from.
CREATE TEMP TABLE dep_nodes AS
SELECT pid, node_id, COALESCE(original_node_id, node_id) AS logical FROM ppu_graph_nodes;
CREATE INDEX temp.dep_nodes_by_node ON dep_nodes (pid, node_id);
CREATE INDEX temp.dep_nodes_by_logical ON dep_nodes (pid, logical);
CREATE TEMP TABLE dep_edges AS
SELECT DISTINCT e.pid, n.logical AS node, d.logical AS dep
FROM ppu_graph_edges AS e
JOIN dep_nodes AS n ON n.pid = e.pid AND n.node_id = e.node_id
JOIN dep_nodes AS d ON d.pid = e.pid AND d.node_id = e.depends_on;
CREATE INDEX temp.dep_edges_by_node ON dep_edges (pid, node);

-- Graph edges between the activities of one launch.
CREATE TEMP TABLE raw_deps (kind, activity_id, sync_id, depends_on, record_api_id, wait_api_id);
INSERT INTO raw_deps
SELECT 4, a.id, NULL, b.id, NULL, NULL
FROM dep_act AS a
JOIN dep_nodes AS an ON an.pid = a.pid AND an.node_id = a.graph_node_id
JOIN dep_edges AS e ON e.pid = a.pid AND e.node = an.logical
JOIN dep_nodes AS bn ON bn.pid = a.pid AND bn.logical = e.dep
JOIN dep_act AS b ON b.pid = a.pid AND b.unit = a.unit AND b.graph_node_id = bn.node_id
WHERE a.graph_id IS NOT NULL;

-- A node that runs no device work (host function, empty, event, semaphore,
-- memory alloc/free, batched memory op: every CUgraphNodeType but kernel,
-- memcpy, memset, child graph and conditional) is looked through: the nodes
-- after it depend on the nodes before it.
CREATE TEMP TABLE dep_idle AS
SELECT DISTINCT pid, COALESCE(original_node_id, node_id) AS logical FROM ppu_graph_nodes
WHERE node_type NOT IN (0, 1, 2, 4, 13);
CREATE INDEX temp.dep_idle_by_node ON dep_idle (pid, logical);
WITH RECURSIVE through(activity_id, pid, unit, node) AS (
    SELECT a.id, a.pid, a.unit, e.dep
    FROM dep_act AS a
    JOIN dep_nodes AS an ON an.pid = a.pid AND an.node_id = a.graph_node_id
    JOIN dep_edges AS e ON e.pid = a.pid AND e.node = an.logical
    JOIN dep_idle AS i ON i.pid = a.pid AND i.logical = e.dep
    WHERE a.graph_id IS NOT NULL
    UNION
    SELECT t.activity_id, t.pid, t.unit, e.dep
    FROM through AS t
    JOIN dep_idle AS i ON i.pid = t.pid AND i.logical = t.node
    JOIN dep_edges AS e ON e.pid = t.pid AND e.node = t.node
)
INSERT INTO raw_deps
SELECT DISTINCT 4, t.activity_id, NULL, b.id, NULL, NULL
FROM through AS t
JOIN dep_nodes AS bn ON bn.pid = t.pid AND bn.logical = t.node
JOIN dep_act AS b ON b.pid = t.pid AND b.unit = t.unit AND b.graph_node_id = bn.node_id;

UPDATE dep_act SET root = 0
WHERE graph_id IS NOT NULL AND id IN (SELECT activity_id FROM raw_deps WHERE kind = 4);

-- Stream order: a unit's roots wait for the last activity of the unit before
-- (rows ordered by enqueue, a unit's rows by end: a unit's last row ends last).
CREATE TEMP TABLE dep_prev AS
SELECT id, pid, unit, graph_id,
       LAG(id) OVER w AS previous, LAG(unit) OVER w AS previous_unit
FROM dep_act
WINDOW w AS (PARTITION BY pid, stream ORDER BY enq, unit, end_ns);
INSERT INTO raw_deps
SELECT 1, id, NULL, previous, NULL, NULL FROM dep_prev
WHERE graph_id IS NULL AND previous IS NOT NULL;
INSERT INTO raw_deps
SELECT 1, r.id, NULL, first.previous, NULL, NULL
FROM dep_prev AS first JOIN dep_act AS r ON r.pid = first.pid AND r.unit = first.unit AND r.root
WHERE first.graph_id IS NOT NULL AND first.previous IS NOT NULL
  AND first.previous_unit IS NOT first.unit;

-- Below, "the last activity of a stream enqueued before t" is the work an event
-- record, a synchronization or the legacy stream's barrier stands for (written
-- out where used: SQLite has no parameterized views).

-- Events: the record stands for the last work of its stream before it; the
-- wait holds back the first unit of its own stream enqueued after it.
CREATE TEMP TABLE dep_records AS
SELECT r.pid, r.stream, r.event_id, r.event_sync_id, ra.id AS api_id,
       COALESCE(ra.start_ns, r.device_ns) AS t,
       (SELECT d.id FROM dep_act AS d
        WHERE d.pid = r.pid AND d.stream = r.stream AND d.enq < COALESCE(ra.start_ns, r.device_ns)
        ORDER BY d.enq DESC, d.end_ns DESC LIMIT 1) AS before_id
FROM ppu_event_records AS r
LEFT JOIN hggc_api_calls AS ra ON ra.pid = r.pid AND ra.correlation_id = r.correlation_id;
CREATE INDEX temp.dep_records_by_event ON dep_records (pid, event_id, event_sync_id);

CREATE TEMP TABLE dep_waits AS
SELECT w.id AS sync_id, w.pid, w.stream, w.event_id, w.event_sync_id, wa.id AS api_id,
       (SELECT d.unit FROM dep_act AS d
        WHERE d.pid = w.pid AND d.stream = w.stream AND d.enq > COALESCE(wa.start_ns, w.start_ns)
        ORDER BY d.enq, d.end_ns LIMIT 1) AS next_unit
FROM ppu_syncs AS w
LEFT JOIN hggc_api_calls AS wa ON wa.pid = w.pid AND wa.correlation_id = w.correlation_id
WHERE w.type = 2;

INSERT INTO raw_deps
SELECT 3, waiter_id, sync_id, before_id, record_api_id, wait_api_id
FROM (SELECT root.id AS waiter_id, w.sync_id, r.before_id, r.api_id AS record_api_id,
             w.api_id AS wait_api_id,
             ROW_NUMBER() OVER (PARTITION BY root.id, r.stream ORDER BY r.t DESC) AS nth
      FROM dep_waits AS w
      JOIN dep_records AS r ON r.pid = w.pid AND r.event_id = w.event_id
                           AND r.event_sync_id = w.event_sync_id
      JOIN dep_act AS root ON root.pid = w.pid AND root.unit = w.next_unit AND root.root
      WHERE r.stream != w.stream AND r.before_id IS NOT NULL)
WHERE nth = 1;

-- The legacy default stream: its work waits for the blocking streams of its
-- context, and theirs for it.
CREATE TEMP TABLE dep_blocking AS
SELECT s.pid, s.context, s.stream, s.is_default FROM ppu_streams AS s
WHERE s.is_default OR NOT s.non_blocking;

INSERT INTO raw_deps
SELECT 2, r.id, NULL,
       (SELECT d.id FROM dep_act AS d
        WHERE d.pid = r.pid AND d.stream = o.stream AND d.enq < r.enq
        ORDER BY d.enq DESC, d.end_ns DESC LIMIT 1), NULL, NULL
FROM dep_act AS r
JOIN dep_blocking AS me ON me.pid = r.pid AND me.stream = r.stream AND r.root
JOIN dep_blocking AS o ON o.pid = r.pid AND o.context = me.context AND o.stream != me.stream
                      AND (me.is_default OR o.is_default);
DELETE FROM raw_deps WHERE depends_on IS NULL;

-- Host waits: event, stream and context synchronization.
INSERT INTO raw_deps
SELECT 5, NULL, w.id, r.before_id, NULL, wa.id
FROM ppu_syncs AS w
JOIN dep_records AS r ON r.pid = w.pid AND r.event_id = w.event_id
                     AND r.event_sync_id = w.event_sync_id
LEFT JOIN hggc_api_calls AS wa ON wa.pid = w.pid AND wa.correlation_id = w.correlation_id
WHERE w.type = 1 AND r.before_id IS NOT NULL;

INSERT INTO raw_deps
SELECT 5, NULL, w.id, before_id, NULL, wa_id
FROM (SELECT w.id, wa.id AS wa_id,
             (SELECT d.id FROM dep_act AS d
              WHERE d.pid = w.pid AND d.stream = s.stream
                AND d.enq < COALESCE(wa.start_ns, w.start_ns)
              ORDER BY d.enq DESC, d.end_ns DESC LIMIT 1) AS before_id
      FROM ppu_syncs AS w
      JOIN ppu_streams AS s ON s.pid = w.pid
                           AND (s.stream = w.stream OR (w.type = 4 AND s.context = w.context))
      LEFT JOIN hggc_api_calls AS wa ON wa.pid = w.pid AND wa.correlation_id = w.correlation_id
      WHERE w.type IN (3, 4)) AS w
WHERE before_id IS NOT NULL;

-- Effective: still unresolved when the waiter was enqueued (or the host wait began).
INSERT INTO ppu_deps (kind, activity_id, sync_id, depends_on, record_api_id, wait_api_id,
                      effective, delay_ns)
SELECT r.kind, r.activity_id, r.sync_id, r.depends_on, r.record_api_id, r.wait_api_id,
       d.end_ns > COALESCE(a.api_start_ns, a.start_ns, s.start_ns),
       MAX(0, MIN(d.end_ns, COALESCE(a.start_ns, s.end_ns))
              - COALESCE(a.api_start_ns, a.start_ns, s.start_ns))
FROM raw_deps AS r
JOIN ppu_activities AS d ON d.id = r.depends_on
LEFT JOIN ppu_activities AS a ON a.id = r.activity_id
LEFT JOIN ppu_syncs AS s ON s.id = r.sync_id AND r.activity_id IS NULL;
CREATE INDEX ppu_deps_by_activity ON ppu_deps (activity_id);
CREATE INDEX ppu_deps_by_depended ON ppu_deps (depends_on);
CREATE INDEX ppu_deps_by_sync ON ppu_deps (sync_id);

-- The temporary tables go with the importer's connection.
