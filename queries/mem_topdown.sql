-- name: mem_topdown
-- title: Memory Call Tree, Top Down
-- arguments: heap, leaks, device, pinned
-- description: stack_topdown for memory: the call stacks of heap allocations (heap, the
--   default: the bytes they stand for), of heap memory not freed by the end of the window
--   (leaks), or of device or pinned allocations (device, pinned); e.g. -r mem_topdown:device.
--   --filter-time keeps allocations made in the window, --pid/--tid one process or thread.
-- columns: Function, Total (%), Total, Self (%), Self, Unit, Level, Id, Parent Id, Module
-- tree: Function, Level
SELECT function AS "Function", total_pct AS "Total (%)", total AS "Total",
       self_pct AS "Self (%)", self AS "Self", unit AS "Unit", level AS "Level", id AS "Id",
       parent_id AS "Parent Id", module AS "Module"
FROM call_tree(COALESCE(:report_arg, 'heap'), 'topdown', :filter_start, :filter_end, :pid, :tid);
