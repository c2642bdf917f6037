-- name: mem_flat
-- title: Memory Call Stacks, Flat
-- arguments: heap, leaks, device, pinned
-- description: stack_flat for memory: the call stacks of heap allocations (heap, the
--   default: the bytes they stand for), of heap memory not freed by the end of the window
--   (leaks), or of device or pinned allocations (device, pinned); e.g. -r mem_flat:device.
--   --filter-time keeps allocations made in the window, --pid/--tid one process or thread.
-- columns: Function, Self (%), Self, Total (%), Total, Unit, Module
SELECT function AS "Function", self_pct AS "Self (%)", self AS "Self",
       total_pct AS "Total (%)", total AS "Total", unit AS "Unit", module AS "Module"
FROM call_tree(COALESCE(:report_arg, 'heap'), 'flat', :filter_start, :filter_end, :pid, :tid);
