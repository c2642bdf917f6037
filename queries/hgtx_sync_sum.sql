-- name: hgtx_sync_sum
-- alias: nvtx_sync_sum
-- title: HGTX User Synchronization Summary
-- description: Per user-defined lock (nvtxDomainSyncUser*): how often it was acquired
--   and how often acquiring failed, the time spent acquiring (AcquireStart to
--   AcquireSuccess or AcquireFailed) and holding it (AcquireSuccess to Releasing).
--   Lock is DOMAIN:NAME.
-- columns: Lock, Acquired, Failed, Acquire Total (ns), Acquire Max (ns), Held Total (ns),
--   Held Max (ns), Threads, PID
SELECT COALESCE(ds.value, '') || ':' || COALESCE(ns.value, o.handle) AS "Lock",
       SUM(r.kind = 'acquire' AND r.outcome = 'success') AS "Acquired",
       SUM(r.kind = 'acquire' AND r.outcome = 'failed') AS "Failed",
       SUM(CASE WHEN r.kind = 'acquire' THEN r.end_ns - r.start_ns END) AS "Acquire Total (ns)",
       MAX(CASE WHEN r.kind = 'acquire' THEN r.end_ns - r.start_ns END) AS "Acquire Max (ns)",
       SUM(CASE WHEN r.kind = 'held' THEN r.end_ns - r.start_ns END) AS "Held Total (ns)",
       MAX(CASE WHEN r.kind = 'held' THEN r.end_ns - r.start_ns END) AS "Held Max (ns)",
       COUNT(DISTINCT r.tid) AS "Threads",
       o.pid AS "PID"
FROM hgtx_sync_objects AS o
JOIN hgtx_sync_ranges AS r ON r.object_id = o.id
LEFT JOIN strings AS ns ON ns.id = o.name_id
LEFT JOIN hgtx_domains AS d ON d.id = o.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
WHERE r.start_ns <= :filter_end AND COALESCE(r.end_ns, :filter_end) >= :filter_start
GROUP BY o.id
ORDER BY "Lock", o.pid;
