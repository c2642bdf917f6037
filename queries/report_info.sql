-- name: report_info
-- title: Report Information
-- description: What was recorded: command, host, duration, how the program ended,
--   collectors, processes and threads, records per collector and records lost.
-- columns: Property, Value
WITH info(key, value) AS (SELECT key, value FROM session_info),
rows(ord, property, value) AS (
    SELECT 1, 'Command', (SELECT value FROM info WHERE key = 'command')
    UNION ALL SELECT 2, 'Report ID', (SELECT value FROM info WHERE key = 'report_id')
    UNION ALL SELECT 3, 'Recorded by', 'asys ' || (SELECT value FROM info WHERE key = 'asys_version')
    UNION ALL SELECT 4, 'Host', (SELECT value FROM info WHERE key = 'hostname') || ' (' ||
        (SELECT value FROM info WHERE key = 'os') || ', ' || (SELECT value FROM info WHERE key = 'kernel') || ')'
    UNION ALL SELECT 4.5, 'Rank', COALESCE((SELECT value FROM info WHERE key = 'rank')
        || COALESCE(' of ' || (SELECT value FROM info WHERE key = 'world_size'), '')
        || COALESCE(', local rank ' || (SELECT value FROM info WHERE key = 'local_rank'), '')
        || COALESCE(' (from ' || (SELECT value FROM info WHERE key = 'rank_source') || ')', ''),
        'none in the environment (--multi-node-mode true)')
        WHERE EXISTS (SELECT 1 FROM info WHERE key = 'multi_node')
    UNION ALL SELECT 5, 'CPU', (SELECT value FROM info WHERE key = 'cpu_model') || ', ' ||
        (SELECT value FROM info WHERE key = 'logical_cpus') || ' logical CPUs'
    UNION ALL SELECT 6, 'Clock', (SELECT value FROM info WHERE key = 'clock_kind')
    UNION ALL SELECT 6.5, 'Clock alignment', (SELECT value FROM info WHERE key = 'clock_method')
        || COALESCE((SELECT ', error up to ' || printf('%.3f ms', value / 1e6) FROM info
            WHERE key = 'clock_error_ns'), ', error unknown')
        WHERE EXISTS (SELECT 1 FROM info WHERE key = 'multi_node')
    UNION ALL SELECT 7, 'Start (UTC)', strftime('%Y-%m-%d %H:%M:%f',
        (SELECT value FROM info WHERE key = 'start_realtime_ns') / 1e9, 'unixepoch')
    UNION ALL SELECT 8, 'Duration (s)', printf('%.6f', (SELECT value FROM info WHERE key = 'duration_ns') / 1e9)
    UNION ALL SELECT 9, 'Program ended', COALESCE('exit code ' || (SELECT value FROM info WHERE key = 'target_exit_code'),
        'signal ' || (SELECT value FROM info WHERE key = 'target_signal'), 'unknown')
    UNION ALL SELECT 9.5, 'Processes still running at the end',
        (SELECT value FROM info WHERE key = 'still_running') || ': '
        || COALESCE((SELECT value FROM info WHERE key = 'still_running_listed'), '')
        || ' (what they did after that is not recorded)'
        WHERE EXISTS (SELECT 1 FROM info WHERE key = 'still_running')
    UNION ALL SELECT 10, 'Collectors enabled', NULLIF((SELECT value FROM info WHERE key = 'collectors_enabled'), '')
    UNION ALL SELECT 11, 'Collectors unavailable', NULLIF((SELECT value FROM info WHERE key = 'collectors_unavailable'), '')
    UNION ALL SELECT 11.5, 'Capture range', value FROM info WHERE key = 'capture_range'
    UNION ALL SELECT 11.6, 'Capture windows', (SELECT COUNT(*) FROM capture_ranges)
        WHERE EXISTS (SELECT 1 FROM info WHERE key = 'capture_range')
    UNION ALL SELECT 12, 'Processes', (SELECT COUNT(*) FROM processes)
    UNION ALL SELECT 13, 'Threads', (SELECT COUNT(*) FROM threads)
    UNION ALL SELECT 14, 'Segments', (SELECT COUNT(*) FROM segments)
    UNION ALL SELECT 15, 'Damaged segments', (SELECT COUNT(*) FROM segments
        WHERE error IS NOT NULL AND error <> 'duplicate segment')
    UNION ALL SELECT 15.2, 'Session damage (finalize could not read)',
        (SELECT CASE WHEN EXISTS (SELECT 1 FROM info WHERE key = 'damage_arena_missing')
                     THEN 'the arena is missing: every thread''s records are lost'
                     ELSE COALESCE((SELECT value FROM info WHERE key = 'damage_slots_cut_off'), 0)
                          || ' slots cut off, '
                          || COALESCE((SELECT value FROM info WHERE key = 'damage_slots_unreadable'), 0)
                          || ' unreadable, '
                          || COALESCE((SELECT value FROM info WHERE key = 'damage_slots_out_of_sequence'), 0)
                          || ' missing inside segments, '
                          || COALESCE((SELECT value FROM info WHERE key = 'damage_slots_after_a_gap'), 0)
                          || ' left out after them ('
                          || printf('%.1f', COALESCE((SELECT value FROM info WHERE key = 'damage_bytes'), 0) / 1048576.0)
                          || ' MiB), '
                          || COALESCE((SELECT value FROM info WHERE key = 'damage_segments_ended_early'), 0)
                          || ' segments ended early'
                          || CASE WHEN EXISTS (SELECT 1 FROM info WHERE key = 'damage_control_block')
                                  THEN '; the arena''s control block was unreadable' ELSE '' END
                     END)
        WHERE EXISTS (SELECT 1 FROM info WHERE key GLOB 'damage_*')
    UNION ALL SELECT 15.5, 'Duplicate segments skipped', n FROM (SELECT COUNT(*) AS n FROM segments
        WHERE error = 'duplicate segment') WHERE n > 0
    UNION ALL SELECT 16, 'Records', (SELECT SUM(records) FROM segments)
    UNION ALL SELECT 17 + ROW_NUMBER() OVER (ORDER BY collector), 'Records (' || collector || ')', records
        FROM collector_records
    UNION ALL SELECT 40, 'Dropped records', (SELECT COALESCE(SUM(dropped_records), 0) FROM segments)
    UNION ALL SELECT 40 + cause, 'Dropped records (' || name || ')', n FROM (
        SELECT 1 AS cause, 'buffer full' AS name, SUM(dropped_full) AS n FROM segments
        UNION ALL SELECT 2, 're-entry inside the tool', SUM(dropped_reentry) FROM segments
        UNION ALL SELECT 3, 'record too big', SUM(dropped_big) FROM segments
        UNION ALL SELECT 4, 'cause not recorded', SUM(dropped_records) FROM segments
                  WHERE dropped_full IS NULL
        UNION ALL SELECT 3.5, 'the session could not grow: '
                  || (SELECT no_room_reason FROM segments WHERE dropped_no_room > 0 LIMIT 1),
                  SUM(dropped_no_room) FROM segments)
      WHERE n > 0
    UNION ALL SELECT 46, 'Strings referenced but never defined', value FROM info
        WHERE key = 'strings_never_defined'
    UNION ALL SELECT 44, 'Threads that could not record', t || ' (' || r || ' events lost)'
        FROM (SELECT SUM(lost_threads) AS t, SUM(lost_thread_records) AS r FROM segments)
        WHERE t > 0
    UNION ALL SELECT 44.2, 'Processes that could not record', t || ' (' || r || ' events lost; '
        || reason || '; the last: pid ' || pid || ')'
        FROM (SELECT SUM(lost_processes) AS t, SUM(lost_process_records) AS r,
                     MAX(lost_process_reason) AS reason, MAX(lost_process_pid) AS pid
              FROM segments)
        WHERE t > 0
    UNION ALL SELECT 44.5, 'HGTX injection replaced', value FROM info
        WHERE key = 'hgtx_injection_replaced'
    UNION ALL SELECT 45.5, 'HGTX payload entries not decoded', value FROM info
        WHERE key = 'hgtx_payloads_undecoded' AND value > 0
    UNION ALL SELECT 45, 'HGTX ranges never ended', (SELECT value FROM info WHERE key = 'hgtx_open_ranges')
    UNION ALL SELECT 45.7, 'Heap allocations sampled', n || ' (interval ' ||
        (SELECT value FROM info WHERE key = 'heap_sampling_interval') || ' bytes)'
        FROM (SELECT SUM(samples) AS n FROM heap_allocations) WHERE n > 0
    UNION ALL SELECT 45.75, 'Heap data aggregated', 'per ' || value || ' ms (--heap-report-interval)'
        FROM info WHERE key = 'heap_report_interval_ms'
    UNION ALL SELECT 45.8, 'Heap still allocated at the end (bytes, estimated)',
        CAST(ROUND(SUM(weight_bytes)) AS INTEGER) FROM heap_allocations WHERE end_ns IS NULL
        HAVING COUNT(*) > 0
    UNION ALL SELECT 45.91, 'Device memory still allocated at the end (bytes)', SUM(bytes)
        FROM ppu_allocations WHERE kind = 'device' AND NOT failed AND released_ns IS NULL
        HAVING COUNT(*) > 0
    UNION ALL SELECT 45.92, 'Pinned memory still allocated at the end (bytes)', SUM(bytes)
        FROM ppu_allocations WHERE kind = 'pinned' AND NOT failed AND released_ns IS NULL
        HAVING COUNT(*) > 0
    UNION ALL SELECT 45.925, 'Device and pinned frees after main returned (runtime teardown, '
        || 'not collected)', f.value || ' (' || b.value || ' bytes)'
        FROM info AS f JOIN info AS b ON b.key = 'hggc_frees_after_main_bytes'
        WHERE f.key = 'hggc_frees_after_main'
    UNION ALL SELECT 45.93, 'Allocation calls that failed', COUNT(*)
        FROM ppu_allocations WHERE failed HAVING COUNT(*) > 0
    UNION ALL SELECT 45.9, 'Heap frees of blocks allocated before a fork', value FROM info
        WHERE key = 'heap_unmatched_frees' AND value > 0
    UNION ALL SELECT 46.1, 'CPU sampling', CASE WHEN status = 'recorded' THEN
        scope || ', ' || event || ' every ' || period || ' ' || period_unit ||
        CASE WHEN event = 'cpu-clock' THEN ' (' || requested_period_cycles || ' cycles at ' ||
            nominal_mhz || ' MHz: no cycles event)' ELSE '' END || ', backtrace ' || backtrace
        ELSE 'unavailable (' || COALESCE(reason, '?') || ')' END FROM cpu_sampling_info
    UNION ALL SELECT 46.2, 'CPU samples', samples || ' (' || lost_samples || ' lost, ' ||
        throttled || ' throttled, ' || unwind_failed || ' not unwound)'
        FROM cpu_sampling_info WHERE status = 'recorded'
    UNION ALL SELECT 46.3, 'Context switches', sched_switches || ' (' || lost_switches ||
        ' lost, from ' || scheduling || ')' || COALESCE('; ' || reason, '')
        FROM cpu_sampling_info WHERE status = 'recorded'
    UNION ALL SELECT 46.4, 'Context switches missing', value || ' (where the core had gone idle, '
        || 'the next thread is counted as running from the idle start)' FROM info
        WHERE key = 'sched_switches_missing'
    UNION ALL SELECT 46.45, 'Event sampling per thread', (SELECT COUNT(DISTINCT tid)
        FROM event_thread_samples) || ' threads counted, ' || COALESCE(n.value, 0) ||
        ' not followed' || CASE WHEN n.value > 0 OR e.value IS NOT NULL
            THEN ' (ended before their counters opened, or past the cap: 1024 at once, fewer '
                 || 'when the open-file limit leaves less; their events are in the per-CPU counts' ||
                 COALESCE('; last error: errno ' || e.value, '') || ')' ELSE '' END
        FROM (SELECT 1) LEFT JOIN info AS n ON n.key = 'event_threads_not_followed'
        LEFT JOIN info AS e ON e.key = 'event_threads_error'
        WHERE n.value IS NOT NULL OR e.value IS NOT NULL
    UNION ALL SELECT 46.5 + device / 1000.0, 'PPU metrics (device ' || device || ')',
        CASE WHEN status = 'sampled' THEN backend || ', every ' || printf('%g', interval_ns / 1e6)
            || ' ms (' || printf('%g', 1e9 / interval_ns) || ' Hz); achieved ' ||
            COALESCE(printf('%.1f', achieved), '?') || ' Hz, ' || COALESCE(samples, 0) ||
            ' samples, ' || COALESCE(overflows, 0) || ' buffer overflows' ||
            COALESCE('; ' || reason, '')
        ELSE status || ' (' || COALESCE(reason, '?') || ')' END
        FROM (SELECT d.*, (SELECT (COUNT(*) - 1) * 1e9 / NULLIF(MAX(s.ns) - MIN(s.ns), 0)
                           FROM ppu_metric_samples AS s WHERE s.metric_id =
                               (SELECT MIN(id) FROM ppu_metrics AS m WHERE m.device = d.device))
                          AS achieved
              FROM ppu_metric_devices AS d)
    UNION ALL SELECT 46.7 + ROW_NUMBER() OVER (ORDER BY s.pid, s.status LIKE 'tracing%') / 1000.0,
        CASE WHEN s.status LIKE 'tracing%' THEN 'Python function tracing (pid ' || s.pid || ')'
        ELSE 'Python (pid ' || s.pid || ')' END,
        CASE s.status WHEN 'sampling' THEN 'Python ' || COALESCE(s.version, '?') || ', ' ||
            n || ' samples' || CASE WHEN n > 1 THEN ', ' ||
            printf('%.0f', (n - 1) * 1e9 / NULLIF(last - first, 0)) || ' per second' ELSE '' END
        WHEN 'tracing' THEN COALESCE(s.detail, '?')
        WHEN 'tracing off' THEN 'off: ' || COALESCE(s.detail, '?')
        ELSE 'not sampled: ' || s.status || ' (' || COALESCE(s.detail, '?') || ')' END
        FROM (SELECT st.*, (SELECT COUNT(DISTINCT ns) FROM python_samples AS p
                            WHERE p.pid = st.pid) AS n,
                           (SELECT MIN(ns) FROM python_samples AS p WHERE p.pid = st.pid) AS first,
                           (SELECT MAX(ns) FROM python_samples AS p WHERE p.pid = st.pid) AS last
              FROM python_status AS st WHERE st.status <> 'stopped') AS s
    UNION ALL SELECT 46.8, 'PCCL communicators', COUNT(*) || ' (plugin interface v' ||
        group_concat(DISTINCT plugin_version) || ', ' || SUM(COALESCE(events, 0)) || ' events)'
        FROM pccl_comms HAVING COUNT(*) > 0
    UNION ALL SELECT 46.81, 'PCCL plugin', value FROM info WHERE key = 'pccl_plugin'
        AND value LIKE 'none%'
    UNION ALL SELECT 46.82, 'PCCL user plugin (pid ' || pid || ')', CASE status
        WHEN 'chained' THEN 'chained: ' || detail || ', v' || version || ', receives its events'
        ELSE 'not called: ' || detail END FROM pccl_user_plugins
    UNION ALL SELECT 46.83, 'PCCL events dropped', SUM(dropped_no_slot + dropped_reentry +
        dropped_bad_handle + dropped_unknown) || ' (no slot ' || SUM(dropped_no_slot) ||
        ', re-entry ' || SUM(dropped_reentry) || ', bad handle ' || SUM(dropped_bad_handle) ||
        ', unknown ' || SUM(dropped_unknown) || ')' FROM pccl_comms
        HAVING SUM(dropped_no_slot + dropped_reentry + dropped_bad_handle + dropped_unknown) > 0
    UNION ALL SELECT 46.84, 'PCCL events never stopped', SUM(unfinished) FROM pccl_comms
        HAVING SUM(unfinished) > 0
    UNION ALL SELECT 46.85, 'PCCL records skipped at import', value FROM info
        WHERE key = 'pccl_skipped'
    UNION ALL SELECT 46.9 + ROW_NUMBER() OVER (ORDER BY pid) / 1000.0,
        'ACDNN/ACBLAS (pid ' || pid || ')', libraries || ' (' || apis || ' functions called'
        || CASE WHEN dlsym_names IS NULL THEN ''
                ELSE '; resolved with dlsym: ' || dlsym_names END || ')'
        FROM (SELECT a.pid AS pid, COUNT(*) AS apis,
                     (SELECT group_concat(name, ', ') FROM (
                          SELECT DISTINCT CASE b.library WHEN 1 THEN 'cuDNN' WHEN 2 THEN 'cuBLAS'
                              WHEN 3 THEN 'cuBLASLt' WHEN 4 THEN 'cuBLASXt' ELSE '?' END AS name
                          FROM acompute_apis AS b WHERE b.pid = a.pid ORDER BY b.library)) AS libraries,
                     (SELECT group_concat(s.value, ', ') FROM acompute_apis AS d
                      JOIN strings AS s ON s.id = d.name_id
                      WHERE d.pid = a.pid AND d.via_dlsym) AS dlsym_names
              FROM acompute_apis AS a GROUP BY a.pid)
    UNION ALL SELECT 46.95, 'ACDNN/ACBLAS calls skipped at import', value || ' (an API id no API record names)'
        FROM info WHERE key = 'acompute_unknown_api_calls'
    UNION ALL SELECT 46.96, 'Video API calls', COUNT(*) || ' (Decode ' || SUM(api = 1) ||
        ', Encode ' || SUM(api = 2) || ', JPEG ' || SUM(api = 3) || '; failed ' ||
        SUM(status <> 0) || ')' FROM video_api_calls HAVING COUNT(*) > 0
    UNION ALL SELECT 46.97, 'Video engine work', COUNT(*) || ' (decodes ' || SUM(kind = 1) ||
        ', encodes ' || SUM(kind = 2) || ', nvJPEG ' || SUM(kind = 3) || ')'
        FROM video_activities HAVING COUNT(*) > 0
    UNION ALL SELECT 46.98, CASE key
        WHEN 'video_untraced_function_lists' THEN 'NVENC function lists not traced (unknown version)'
        WHEN 'video_changed_function_lists' THEN 'NVENC function lists not traced (other functions)'
        WHEN 'video_untimed_work' THEN 'Video work not timed (more than 1024 in flight)'
        WHEN 'video_calls_without_library' THEN 'Video calls whose library was not found'
        WHEN 'video_activities_without_call' THEN 'Video work whose call was not recorded'
        ELSE 'Video records skipped at import (' || substr(key, 15) || ')' END, value
        FROM info WHERE key LIKE 'video\_%' ESCAPE '\'
    UNION ALL SELECT 47, 'Import warnings', n FROM (SELECT COUNT(*) AS n FROM import_warnings)
        WHERE n > 0
    UNION ALL SELECT 47 + id / 1000.0, 'Warning ' || id, message FROM import_warnings WHERE id <= 10
    UNION ALL SELECT 50 + ROW_NUMBER() OVER (ORDER BY p.pid), 'Process ' || p.pid,
        COALESCE(n.value, '?') || ' (' || (SELECT COUNT(*) FROM threads AS t WHERE t.pid = p.pid) ||
        ' threads)' || CASE WHEN p.forked THEN ', forked' ELSE '' END
        FROM processes AS p LEFT JOIN strings AS n ON n.id = p.name_id
)
SELECT property AS "Property", value AS "Value" FROM rows ORDER BY ord;
