-- name: stack_bottomup
-- alias: cpu_bottomup
-- title: Call Tree, Bottom Up
-- arguments: cpu, osrt, hggc, heap, leaks, device, pinned, python, acdnn, acblas
-- description: The Function View's bottom-up tree of the call stacks of a source (cpu, the
--   default; osrt; hggc; see stack_topdown).  A top-level row is a function where the
--   weight was spent (its self weight); its children are its callers, theirs their
--   callers, each with the part of that weight that came through them.  Siblings are
--   sorted by Total; percentages are of the whole weight.  --filter-time, --pid and --tid
--   as in stack_topdown.
-- columns: Function, Total (%), Total, Unit, Level, Id, Parent Id, Module
-- tree: Function, Level
SELECT function AS "Function", total_pct AS "Total (%)", total AS "Total", unit AS "Unit",
       level AS "Level", id AS "Id", parent_id AS "Parent Id", module AS "Module"
FROM call_tree(COALESCE(:report_arg, 'cpu'), 'bottomup', :filter_start, :filter_end, :pid, :tid);
