-- name: kernel_profile_cmd
-- title: Nsight Compute Command per Kernel Launch
-- description: The ncu command line that profiles exactly one kernel launch of the recorded
--   program (the manual's 1.6, analysing a single kernel): --kernel NAME picks a kernel by its
--   base, demangled or mangled name, --kernel NAME#N its launch N in its process (from 0, in
--   launch order), --kernel ID the launch of correlation id ID; without --kernel, every launch.
--   ncu matches the mangled name (--kernel-name-base mangled) and skips the earlier launches
--   of that kernel in the process (--launch-skip); a kernel of another process than the
--   program's gets --target-processes all.  The program's command is the recorded one.
-- requires: ppu_kernels: no kernels (record with -t hggc)
-- columns: PID, Kernel, Instance, Correlation ID, Command
SELECT k.pid AS "PID",
       base.value AS "Kernel",
       i.instance AS "Instance",
       k.correlation_id AS "Correlation ID",
       'ncu --kernel-name-base mangled --kernel-name regex:^' ||
           replace(mangled.value, '.', '\.') || '$ --launch-skip ' || i.instance ||
           ' --launch-count 1' ||
           CASE WHEN k.pid <> COALESCE((SELECT value FROM session_info
                                        WHERE key = 'target_pid'), k.pid)
                THEN ' --target-processes all' ELSE '' END ||
           ' -o ' || replace(replace(replace(base.value, '<', '_'), '>', '_'), ':', '_') || '_' ||
           i.instance || ' ' ||
           COALESCE((SELECT value FROM session_info WHERE key = 'command_quoted'), '')
           AS "Command"
FROM ppu_kernels AS k
JOIN ppu_kernel_instances AS i ON i.kernel_id = k.id
JOIN ppu_kernel_names AS n ON n.mangled_name_id = k.mangled_name_id
JOIN strings AS mangled ON mangled.id = n.mangled_name_id
JOIN strings AS base ON base.id = n.base_name_id
JOIN strings AS demangled ON demangled.id = n.demangled_name_id
WHERE k.end_ns >= :filter_start AND k.start_ns <= :filter_end
  AND (:pid < 0 OR k.pid = :pid)
  AND (:kernel_name IS NULL OR :kernel_name IN (base.value, demangled.value, mangled.value))
  AND (:kernel_instance < 0 OR i.instance = :kernel_instance)
  AND (:kernel_correlation < 0 OR k.correlation_id = :kernel_correlation)
ORDER BY k.pid, k.correlation_id, k.start_ns;
