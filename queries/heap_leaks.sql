-- name: heap_leaks
-- title: Heap Leaks
-- description: Heap memory allocated and never freed, per call stack, largest first: with
--   --filter-time START/END, what was allocated inside the window and not freed by its end
--   (the manual's Filter-and-Zoom view); without, what was still allocated when each process
--   ended.  Bytes and Allocations are estimated from the sampled allocations (exact with
--   --heap-sampling-interval-bytes 1).  With --heap-report-interval MS the window is
--   good to MS (allocations and frees are summed per interval).  --pid/--tid one process
--   or thread.
-- requires: heap_allocations: no heap allocations (record with --heap-memory-usage true)
-- columns: Leaked Bytes, Allocations, Sampled, Function, Call Site, Call Stack
WITH a AS (
    SELECT * FROM heap_allocations
    WHERE start_ns >= :filter_start AND start_ns <= :filter_end
      AND (end_ns IS NULL OR end_ns > :filter_end)
      AND (:pid < 0 OR pid = :pid) AND (:tid < 0 OR tid = :tid)
), stacks AS MATERIALIZED (  -- once per distinct stack, not per allocation
    SELECT t.callchain_id, t.stack, t.call_site
    FROM (SELECT DISTINCT callchain_id FROM a WHERE callchain_id IS NOT NULL) AS c
    JOIN callchain_stacks AS t ON t.callchain_id = c.callchain_id
)
SELECT CAST(ROUND(SUM(a.weight_bytes)) AS INTEGER) AS "Leaked Bytes",
       CAST(ROUND(SUM(a.weight_count)) AS INTEGER) AS "Allocations",
       SUM(a.samples) AS "Sampled",
       fn.value AS "Function",
       COALESCE(s.call_site, '[no stack]') AS "Call Site",
       s.stack AS "Call Stack"
FROM a LEFT JOIN stacks AS s ON s.callchain_id = a.callchain_id
JOIN strings AS fn ON fn.id = a.function_id
GROUP BY fn.value, s.stack
ORDER BY 1 DESC, "Call Stack";
