-- name: hggc_kern_sum
-- alias: cuda_gpu_kern_sum
-- title: HGGC Kernel Summary
-- default: yes
-- description: Statistics of the kernels executed on the devices, grouped by name.
--   Names are demangled; hggc_kern_sum:base groups by the name without return type and
--   parameter list (template instances stay apart, overloads merge), hggc_kern_sum:mangled
--   by the name as compiled.  With --group-by hgtx, kernels group by the innermost HGTX
--   range open on the launching thread when the launch call started (DOMAIN:NAME;
--   "[no HGTX range]" outside any); hggc_kern_sum:nvtx-name (nsys's spelling, also with
--   :base or :mangled) keeps kernels apart but prefixes each name with that range's
--   text (RANGE:kernel).  Time (%) is a row's share of all kernel time.  With
--   --filter-time, kernels are clipped to the window and kernels outside it left out.
-- summary: Instances
-- columns: Time (%), Total Time (ns), Instances, Avg (ns), Med (ns), Min (ns), Max (ns),
--   StdDev (ns), Name
-- arguments: base, mangled, nvtx-name
SELECT CASE WHEN :nvtx_name AND :group_by <> 'hgtx' THEN COALESCE((SELECT text FROM hgtx_range_texts
                                                                     WHERE id = p.hgtx_range_id)
                                                                    || ':', '')
            ELSE '' END ||
       CASE WHEN :group_by = 'hgtx' AND p.hgtx_range_id IS NULL THEN '[no HGTX range]'
            WHEN :group_by = 'hgtx'
                THEN (SELECT COALESCE(ds.value, '') || ':' || COALESCE(ts.value, '')
                      FROM hgtx_events AS e
                      LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id
                      LEFT JOIN strings AS ds ON ds.id = d.name_id
                      LEFT JOIN strings AS ts ON ts.id = e.text_id
                      WHERE e.id = p.hgtx_range_id)
            WHEN :report_arg = 'base'
                THEN (SELECT value FROM strings WHERE id = p.base_name_id)
            WHEN :report_arg = 'mangled'
                THEN (SELECT s.value FROM ppu_kernels AS k JOIN strings AS s
                      ON s.id = k.mangled_name_id WHERE k.id = p.source_id)
            ELSE (SELECT value FROM strings WHERE id = p.name_id) END AS "Name",
       MIN(p.end_ns, :filter_end) - MAX(p.start_ns, :filter_start) AS duration
FROM ppu_activities AS p
WHERE p.kind = 1 AND p.end_ns >= :filter_start AND p.start_ns <= :filter_end;
