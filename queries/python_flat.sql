-- name: python_flat
-- title: Python Functions, Flat
-- description: Per Python function (qualified name, in its source file) of the samples
--   --python-sampling took of every Python thread: Self (it was running) and Total (it was
--   anywhere on the stack; a recursive function counts once per sample), in samples and %
--   of all samples.  --filter-time, --pid and --tid narrow the samples.
-- requires: python_samples: no Python samples (record a python or python3 program)
-- columns: Function, Self (%), Self, Total (%), Total, Unit, File
SELECT function AS "Function", self_pct AS "Self (%)", self AS "Self",
       total_pct AS "Total (%)", total AS "Total", unit AS "Unit", module AS "File"
FROM call_tree('python', 'flat', :filter_start, :filter_end, :pid, :tid);
