-- name: python_bottomup
-- title: Python Call Tree, Bottom Up
-- description: The bottom-up tree of the Python stacks --python-sampling took: each
--   function where samples ended, then its callers with their part of them.
--   --filter-time, --pid and --tid narrow the samples.
-- requires: python_samples: no Python samples (record a python or python3 program)
-- columns: Function, Total (%), Total, Unit, Level, Id, Parent Id, File
-- tree: Function, Level
SELECT function AS "Function", total_pct AS "Total (%)", total AS "Total", unit AS "Unit",
       level AS "Level", id AS "Id", parent_id AS "Parent Id", module AS "File"
FROM call_tree('python', 'bottomup', :filter_start, :filter_end, :pid, :tid);
