-- name: mem_bottomup
-- title: Memory Call Tree, Bottom Up
-- arguments: heap, leaks, device, pinned
-- description: stack_bottomup for memory: the call stacks of heap allocations (heap, the
--   default: the bytes they stand for), of heap memory not freed by the end of the window
--   (leaks), or of device or pinned allocations (device, pinned); e.g. -r mem_bottomup:device.
--   --filter-time keeps allocations made in the window, --pid/--tid one process or thread.
-- columns: Function, Total (%), Total, Unit, Level, Id, Parent Id, Module
-- tree: Function, Level
SELECT function AS "Function", total_pct AS "Total (%)", total AS "Total", unit AS "Unit",
       level AS "Level", id AS "Id", parent_id AS "Parent Id", module AS "Module"
FROM call_tree(COALESCE(:report_arg, 'heap'), 'bottomup', :filter_start, :filter_end, :pid, :tid);
