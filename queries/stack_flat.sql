-- name: stack_flat
-- alias: cpu_flat
-- title: Call Stacks, Flat
-- arguments: cpu, osrt, hggc, heap, leaks, device, pinned, python, acdnn, acblas
-- description: Per function, the weight spent in it (Self: it was the sampled function, or
--   the call's own function for osrt and hggc) and under it (Total: it was anywhere on the
--   stack; a recursive function counts once per sample), for the call stacks of a source
--   (cpu, the default; osrt; hggc; see stack_topdown).  Sorted by Self; percentages are of
--   the whole weight.  --filter-time, --pid and --tid as in stack_topdown.
-- columns: Function, Self (%), Self, Total (%), Total, Unit, Module
SELECT function AS "Function", self_pct AS "Self (%)", self AS "Self",
       total_pct AS "Total (%)", total AS "Total", unit AS "Unit", module AS "Module"
FROM call_tree(COALESCE(:report_arg, 'cpu'), 'flat', :filter_start, :filter_end, :pid, :tid);
