-- name: osrt_sum
-- title: OS Runtime Summary
-- default: yes
-- description: Statistics of the OS runtime calls that lasted at least --osrt-threshold,
--   grouped by function.  Time (%) is a row's share of the total of all rows.  With
--   --filter-time, calls are clipped to the window and calls outside it left out.
-- summary: Num Calls
-- columns: Time (%), Total Time (ns), Num Calls, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Name
SELECT s.value AS "Name",
       MIN(o.end_ns, :filter_end) - MAX(o.start_ns, :filter_start) AS duration
FROM osrt_calls AS o JOIN strings AS s ON s.id = o.name_id
WHERE o.end_ns >= :filter_start AND o.start_ns <= :filter_end;
