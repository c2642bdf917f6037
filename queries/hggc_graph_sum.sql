-- name: hggc_graph_sum
-- alias: cuda_graph_sum
-- title: HGGC Graph Summary
-- description: Statistics of the graph launches (cudaGraphLaunch), grouped by process and
--   graph: a launch lasts from the start of its first node's work on the device to the end
--   of its last (from the nodes' kernels, copies and memsets, or from the one range of
--   --hggc-graph-trace=graph).  Nodes counts the graph's own nodes (not the clones an
--   instantiation makes); Execs the executable graphs instantiated from it.  Time (%) is a
--   row's share of all graph time.  With --filter-time, launches that overlap the window
--   count whole.
-- columns: Time (%), Total Time (ns), Launches, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Nodes, Execs, PID, Graph ID
WITH node_work AS (
    SELECT pid, graph_id, correlation_id, start_ns, end_ns FROM ppu_kernels
    WHERE graph_id IS NOT NULL
    UNION ALL
    SELECT pid, graph_id, correlation_id, start_ns, end_ns FROM ppu_memcpys
    WHERE graph_id IS NOT NULL
    UNION ALL
    SELECT pid, graph_id, correlation_id, start_ns, end_ns FROM ppu_memsets
    WHERE graph_id IS NOT NULL
    UNION ALL
    SELECT pid, graph_id, correlation_id, start_ns, end_ns FROM ppu_graph_traces
), launches AS (
    SELECT pid, graph_id, correlation_id, MAX(end_ns) - MIN(start_ns) AS duration
    FROM node_work
    GROUP BY pid, graph_id, correlation_id
    HAVING MAX(end_ns) >= :filter_start AND MIN(start_ns) <= :filter_end
), grouped AS (
    SELECT pid, graph_id, SUM(duration) AS total, COUNT(*) AS launches,
           AVG(duration) AS average, median(duration) AS med, MIN(duration) AS shortest,
           MAX(duration) AS longest, stdev(duration) AS deviation
    FROM launches GROUP BY pid, graph_id
)
SELECT 100.0 * total / SUM(total) OVER () AS "Time (%)",
       total AS "Total Time (ns)",
       launches AS "Launches",
       average AS "Avg (ns)",
       med AS "Med (ns)",
       shortest AS "Min (ns)",
       longest AS "Max (ns)",
       deviation AS "StdDev (ns)",
       (SELECT COUNT(*) FROM ppu_graph_nodes AS n
        WHERE n.pid = g.pid AND n.graph_id = g.graph_id AND n.original_node_id IS NULL) AS "Nodes",
       (SELECT COUNT(*) FROM ppu_graph_execs AS x
        WHERE x.pid = g.pid AND x.graph_id = g.graph_id) AS "Execs",
       pid AS "PID",
       graph_id AS "Graph ID"
FROM grouped AS g
ORDER BY total DESC, pid, graph_id;
