-- name: cpu_flat
-- title: CPU Samples by Function (Flat)
-- description: Per function, the CPU samples taken in it (Self: the sampled instruction was
--   in the function) and under it (Total: the function was anywhere on the sample's call
--   stack, counted once per sample), as counts and as shares of every sample
--   (-s process-tree|system-wide; -b none gives self samples only).  With --filter-time,
--   only the samples inside the window count; with --pid/--tid, only that process's or
--   thread's.  Samples whose stack could not be taken
--   count in the shares' total, under no function.
-- requires: EXISTS (SELECT 1 FROM cpu_samples) | the report has no CPU samples (record with -s process-tree or -s system-wide)
-- columns: Self (%), Total (%), Self Samples, Total Samples, Function, Module
WITH picked AS (
    SELECT id, callchain_id FROM cpu_samples
    WHERE timestamp_ns >= :filter_start AND timestamp_ns <= :filter_end
      AND (:pid IS NULL OR pid = :pid) AND (:tid IS NULL OR tid = :tid)
), everything AS (
    SELECT COUNT(*) AS n FROM picked
), located AS (
    SELECT p.id AS sample, cf.level,
           COALESCE(fn.value, printf('0x%x', fr.address)) AS function,
           replace(mp.value, rtrim(mp.value, replace(mp.value, '/', '')), '') AS module
    FROM picked AS p
    JOIN callchain_frames AS cf ON cf.callchain_id = p.callchain_id
    JOIN frames AS fr ON fr.id = cf.frame_id
    LEFT JOIN strings AS fn ON fn.id = fr.function_id
    LEFT JOIN modules AS m ON m.id = fr.module_id
    LEFT JOIN strings AS mp ON mp.id = m.path_id
), per_function AS (
    SELECT function, module,
           SUM(level = 0) AS self,
           COUNT(DISTINCT sample) AS total
    FROM located GROUP BY function, module
)
SELECT 100.0 * f.self / e.n AS "Self (%)",
       100.0 * f.total / e.n AS "Total (%)",
       f.self AS "Self Samples",
       f.total AS "Total Samples",
       f.function AS "Function",
       COALESCE(f.module, '') AS "Module"
FROM per_function AS f, everything AS e
WHERE e.n > 0
ORDER BY f.self DESC, f.total DESC, f.function;
