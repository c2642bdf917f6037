-- name: hgtx_counter_sum
-- alias: nvtx_counter_sum
-- title: HGTX Counter Summary
-- description: Every HGTX counter (NVTX's counters extension) and, for a counter
--   group, every field: samples, minimum, maximum, mean, the first and the last value
--   in time, and samples without a value (nvtxCounterSampleNoValue).  Counter is
--   DOMAIN:NAME.
-- columns: Counter, Field, Unit, Samples, Min, Max, Avg, First, Last, Missing, PID
WITH v AS (
    SELECT c.id, c.pid, v.field, v.value, v.ts_ns, v.missing, v.rowid AS row
    FROM hgtx_counter_values AS v JOIN hgtx_counters AS c ON c.id = v.counter
    WHERE v.ts_ns >= :filter_start AND v.ts_ns <= :filter_end
)
SELECT COALESCE(ds.value, '') || ':' || COALESCE(ns.value, c.counter_id) AS "Counter",
       v.field AS "Field",
       us.value AS "Unit",
       COUNT(v.value) AS "Samples",
       MIN(v.value) AS "Min",
       MAX(v.value) AS "Max",
       AVG(v.value) AS "Avg",
       (SELECT w.value FROM v AS w WHERE w.id = v.id AND w.field IS v.field AND w.value IS NOT NULL
        ORDER BY w.ts_ns, w.row LIMIT 1) AS "First",
       (SELECT w.value FROM v AS w WHERE w.id = v.id AND w.field IS v.field AND w.value IS NOT NULL
        ORDER BY w.ts_ns DESC, w.row DESC LIMIT 1) AS "Last",
       COUNT(v.missing) AS "Missing",
       c.pid AS "PID"
FROM v
JOIN hgtx_counters AS c ON c.id = v.id
LEFT JOIN strings AS ns ON ns.id = c.name_id
LEFT JOIN strings AS us ON us.id = c.unit_id
LEFT JOIN hgtx_domains AS d ON d.id = c.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
GROUP BY v.id, v.field
ORDER BY "Counter", c.pid, MIN(v.row);
