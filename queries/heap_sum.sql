-- name: heap_sum
-- title: Heap Allocation Summary
-- description: Heap allocations (--heap-memory-usage) per call stack, largest first: the
--   bytes and allocations they stand for (estimated from the sampled ones: exact with
--   --heap-sampling-interval-bytes 1), the part freed by the end of the window and the
--   part still allocated then, the sampled allocations and the largest block.  Call Site
--   is the function that called the allocator; Call Stack goes outwards from it.
--   --filter-time keeps allocations made inside the window (to --heap-report-interval
--   MS when the data is aggregated); --pid/--tid one process or
--   thread.
-- requires: heap_allocations: no heap allocations (record with --heap-memory-usage true)
-- columns: Bytes, Allocations, Freed Bytes, Live Bytes, Sampled, Largest, Function, Call Site,
--   Call Stack
WITH a AS (
    SELECT * FROM heap_allocations
    WHERE start_ns >= :filter_start AND start_ns <= :filter_end
      AND (:pid < 0 OR pid = :pid) AND (:tid < 0 OR tid = :tid)
), stacks AS MATERIALIZED (  -- once per distinct stack, not per allocation
    SELECT t.callchain_id, t.stack, t.call_site
    FROM (SELECT DISTINCT callchain_id FROM a WHERE callchain_id IS NOT NULL) AS c
    JOIN callchain_stacks AS t ON t.callchain_id = c.callchain_id
)
SELECT CAST(ROUND(SUM(a.weight_bytes)) AS INTEGER) AS "Bytes",
       CAST(ROUND(SUM(a.weight_count)) AS INTEGER) AS "Allocations",
       CAST(ROUND(SUM(CASE WHEN a.end_ns <= :filter_end THEN a.weight_bytes ELSE 0 END))
            AS INTEGER) AS "Freed Bytes",
       CAST(ROUND(SUM(CASE WHEN a.end_ns IS NULL OR a.end_ns > :filter_end
                           THEN a.weight_bytes ELSE 0 END)) AS INTEGER) AS "Live Bytes",
       SUM(a.samples) AS "Sampled",
       MAX(a.size) AS "Largest",
       fn.value AS "Function",
       COALESCE(s.call_site, '[no stack]') AS "Call Site",
       s.stack AS "Call Stack"
FROM a LEFT JOIN stacks AS s ON s.callchain_id = a.callchain_id
JOIN strings AS fn ON fn.id = a.function_id
GROUP BY fn.value, s.stack
ORDER BY 1 DESC, "Call Stack";
