-- name: heap_process_sum
-- title: Heap Summary per Process
-- description: Heap allocations (--heap-memory-usage) per process image: the peak of the bytes
--   allocated and not yet freed, and when it was reached (relative to the session start), the
--   bytes and allocations made, the part freed and the part still allocated at the end of the
--   window (estimated from the sampled allocations: exact with --heap-sampling-interval-bytes
--   1; with --heap-report-interval the times are those of the intervals).  heap_sum gives the
--   same per call stack.  --filter-time keeps allocations made inside the window; --pid one
--   process.
-- requires: heap_allocations: no heap allocations (record with --heap-memory-usage true)
-- columns: PID, Process, Peak Bytes, Peak At (ns), Bytes, Allocations, Freed Bytes, Live Bytes
WITH a AS (
    SELECT * FROM heap_allocations
    WHERE start_ns >= :filter_start AND start_ns <= :filter_end
      AND (:pid < 0 OR pid = :pid)
), changes AS (  -- a block counts from its allocation to its free (frees first at one time)
    SELECT pid, image, start_ns AS ns, 1 AS kind, weight_bytes AS delta FROM a
    UNION ALL
    SELECT pid, image, end_ns, 0, -weight_bytes FROM a
    WHERE end_ns IS NOT NULL AND end_ns <= :filter_end
), running AS (
    SELECT pid, image, ns,
           SUM(delta) OVER (PARTITION BY pid, image ORDER BY ns, kind
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS live
    FROM changes
), peaks AS (
    SELECT pid, image, live, ns,
           ROW_NUMBER() OVER (PARTITION BY pid, image ORDER BY live DESC, ns) AS rank
    FROM running
), totals AS (
    SELECT pid, image,
           SUM(weight_bytes) AS bytes, SUM(weight_count) AS count,
           SUM(CASE WHEN end_ns <= :filter_end THEN weight_bytes ELSE 0 END) AS freed
    FROM a GROUP BY pid, image
)
SELECT t.pid AS "PID",
       COALESCE(name.value, '') AS "Process",
       CAST(ROUND(p.live) AS INTEGER) AS "Peak Bytes",
       p.ns - :session_start AS "Peak At (ns)",
       CAST(ROUND(t.bytes) AS INTEGER) AS "Bytes",
       CAST(ROUND(t.count) AS INTEGER) AS "Allocations",
       CAST(ROUND(t.freed) AS INTEGER) AS "Freed Bytes",
       CAST(ROUND(t.bytes - t.freed) AS INTEGER) AS "Live Bytes"
FROM totals AS t JOIN peaks AS p ON p.pid = t.pid AND p.image = t.image AND p.rank = 1
LEFT JOIN processes AS pr ON pr.pid = t.pid
LEFT JOIN strings AS name ON name.id = pr.name_id
ORDER BY 3 DESC, 1;
