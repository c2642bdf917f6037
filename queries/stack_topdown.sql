-- name: stack_topdown
-- alias: cpu_topdown
-- title: Call Tree, Top Down
-- arguments: cpu, osrt, hggc, heap, leaks, device, pinned, python, acdnn, acblas
-- description: The Function View's top-down tree of the call stacks of a source: cpu (CPU
--   samples, the default; weight 1 each), osrt (OS runtime calls with a stack, weight their
--   duration in ns) or hggc (HGGC API calls with a stack); e.g. -r stack_topdown:osrt.  A
--   row is a function called through the path of its ancestors, from the outermost caller
--   down; Total is the weight of the stacks through it, Self of those ending in it (for
--   osrt and hggc, the call's own function is the last frame).  Siblings are sorted by
--   Total; percentages are of the whole weight.  --filter-time keeps samples inside the
--   window (calls clipped to it), --pid/--tid one process or thread.
-- columns: Function, Total (%), Total, Self (%), Self, Unit, Level, Id, Parent Id, Module
-- tree: Function, Level
SELECT function AS "Function", total_pct AS "Total (%)", total AS "Total",
       self_pct AS "Self (%)", self AS "Self", unit AS "Unit", level AS "Level", id AS "Id",
       parent_id AS "Parent Id", module AS "Module"
FROM call_tree(COALESCE(:report_arg, 'cpu'), 'topdown', :filter_start, :filter_end, :pid, :tid);
