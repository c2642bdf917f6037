-- name: devmem_sum
-- alias: pinned_sum
-- title: Device and Pinned Memory Allocation Summary
-- arguments: device, pinned
-- description: The device (and managed) memory allocated through HGGC, or with :pinned (and
--   as pinned_sum) the pinned host memory, per call stack, most bytes first:
--   allocations and bytes, the largest, what was still allocated at the end of the window
--   (or of the recording), and the allocation calls that failed with the bytes they asked
--   for.  Call stacks need --hggc-memory-usage (every allocation call keeps its stack);
--   without it the rows group by API only.  Call Site is the first frame outside the CUDA
--   runtime and driver (libcuda*, libcupti*).  --filter-time keeps allocations made in the
--   window; --pid one process.
-- requires: ppu_memory: no device or pinned memory records (record with -t hggc)
-- columns: Bytes, Allocations, Largest, Live Bytes, Failures, Failed Bytes, API, Call Site,
--   Call Stack
WITH a AS (
    SELECT * FROM ppu_allocations
    WHERE kind = CASE WHEN :report_name = 'pinned_sum' THEN 'pinned'
                      ELSE COALESCE(:report_arg, 'device') END
      AND timestamp_ns >= :filter_start AND timestamp_ns <= :filter_end
      AND (:pid < 0 OR pid = :pid)
), stacks AS MATERIALIZED (  -- once per distinct stack, not per allocation
    SELECT t.callchain_id, t.stack, t.call_site
    FROM (SELECT DISTINCT callchain_id FROM a WHERE callchain_id IS NOT NULL) AS c
    JOIN callchain_stacks AS t ON t.callchain_id = c.callchain_id
)
SELECT SUM(CASE WHEN NOT a.failed THEN a.bytes ELSE 0 END) AS "Bytes",
       SUM(NOT a.failed) AS "Allocations",
       MAX(CASE WHEN NOT a.failed THEN a.bytes END) AS "Largest",
       SUM(CASE WHEN NOT a.failed AND (a.released_ns IS NULL OR a.released_ns > :filter_end)
                THEN a.bytes ELSE 0 END) AS "Live Bytes",
       SUM(a.failed) AS "Failures",
       SUM(CASE WHEN a.failed THEN a.bytes ELSE 0 END) AS "Failed Bytes",
       COALESCE(api.value, '[unknown]') AS "API",
       COALESCE(s.call_site, '[no stack]') AS "Call Site",
       s.stack AS "Call Stack"
FROM a LEFT JOIN stacks AS s ON s.callchain_id = a.callchain_id
LEFT JOIN strings AS api ON api.id = a.api_name_id
GROUP BY api.value, s.stack
ORDER BY 1 DESC, "Call Stack";
