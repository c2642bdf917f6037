-- name: python_topdown
-- title: Python Call Tree, Top Down
-- description: The top-down tree of the Python stacks --python-sampling took: a row is a
--   function called through the path of its ancestors, from the outermost caller down;
--   Total is the samples through it, Self those ending in it; siblings sorted by Total.
--   --filter-time, --pid and --tid narrow the samples.
-- requires: python_samples: no Python samples (record a python or python3 program)
-- columns: Function, Total (%), Total, Self (%), Self, Unit, Level, Id, Parent Id, File
-- tree: Function, Level
SELECT function AS "Function", total_pct AS "Total (%)", total AS "Total",
       self_pct AS "Self (%)", self AS "Self", unit AS "Unit", level AS "Level", id AS "Id",
       parent_id AS "Parent Id", module AS "File"
FROM call_tree('python', 'topdown', :filter_start, :filter_end, :pid, :tid);
