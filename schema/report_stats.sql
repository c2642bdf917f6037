-- The report's counters, one list (Perfetto's stats table is the model):
-- what was recorded, and every loss, each with a severity --
--   info       how much was recorded, and how
--   data_loss  records or events that were not recorded or not kept
--   error      records the import could not read or use
-- written once, at the end of the import, in the order report_info shows
-- them (rows of a counter that applies once per device, process or cause
-- follow one another).  A counter that does not apply has no row.
--
-- report_stats: id (display order), name (stable key), severity,
--   property (as report_info shows it), value (a number or a text).
CREATE TABLE report_stats (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    severity TEXT NOT NULL CHECK (severity IN ('info', 'data_loss', 'error')),
    property TEXT NOT NULL,
    value
);

INSERT INTO report_stats (name, severity, property, value)
    SELECT 'processes', 'info', 'Processes', COUNT(*) FROM processes;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'threads', 'info', 'Threads', COUNT(*) FROM threads;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'segments', 'info', 'Segments', COUNT(*) FROM segments;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'damaged_segments', 'data_loss', 'Damaged segments', COUNT(*) FROM segments
        WHERE error IS NOT NULL AND error <> 'duplicate segment';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'session_damage', 'data_loss', 'Session damage (finalize could not read)',
        CASE WHEN EXISTS (SELECT 1 FROM session_info WHERE key = 'damage_arena_missing')
             THEN 'the arena is missing: every thread''s records are lost'
             ELSE COALESCE((SELECT value FROM session_info WHERE key = 'damage_slots_cut_off'), 0)
                  || ' slots cut off, '
                  || COALESCE((SELECT value FROM session_info WHERE key = 'damage_slots_unreadable'), 0)
                  || ' unreadable, '
                  || COALESCE((SELECT value FROM session_info WHERE key = 'damage_slots_out_of_sequence'), 0)
                  || ' missing inside segments, '
                  || COALESCE((SELECT value FROM session_info WHERE key = 'damage_slots_after_a_gap'), 0)
                  || ' left out after them ('
                  || printf('%.1f', COALESCE((SELECT value FROM session_info WHERE key = 'damage_bytes'), 0) / 1048576.0)
                  || ' MiB), '
                  || COALESCE((SELECT value FROM session_info WHERE key = 'damage_segments_ended_early'), 0)
                  || ' segments ended early'
                  || CASE WHEN EXISTS (SELECT 1 FROM session_info WHERE key = 'damage_control_block')
                          THEN '; the arena''s control block was unreadable' ELSE '' END
        END
        WHERE EXISTS (SELECT 1 FROM session_info WHERE key GLOB 'damage_*');
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'duplicate_segments', 'info', 'Duplicate segments skipped', n
        FROM (SELECT COUNT(*) AS n FROM segments WHERE error = 'duplicate segment') WHERE n > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'records', 'info', 'Records', (SELECT SUM(records) FROM segments);
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'records_' || collector, 'info', 'Records (' || collector || ')', records
        FROM collector_records ORDER BY collector;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'dropped_records', 'data_loss', 'Dropped records',
        (SELECT COALESCE(SUM(dropped_records), 0) FROM segments);
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'dropped_' || name, 'data_loss', 'Dropped records (' || property || ')', n FROM (
        SELECT 1 AS cause, 'buffer_full' AS name, 'buffer full' AS property,
               SUM(dropped_full) AS n FROM segments
        UNION ALL SELECT 2, 'reentry', 're-entry inside the tool', SUM(dropped_reentry) FROM segments
        UNION ALL SELECT 3, 'too_big', 'record too big', SUM(dropped_big) FROM segments
        UNION ALL SELECT 4, 'no_room', 'the session could not grow: '
                  || (SELECT no_room_reason FROM segments WHERE dropped_no_room > 0 LIMIT 1),
                  SUM(dropped_no_room) FROM segments
        UNION ALL SELECT 5, 'cause_unknown', 'cause not recorded', SUM(dropped_records) FROM segments
                  WHERE dropped_full IS NULL)
    WHERE n > 0 ORDER BY cause;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'threads_not_recording', 'data_loss', 'Threads that could not record',
        t || ' (' || r || ' events lost)'
        FROM (SELECT SUM(lost_threads) AS t, SUM(lost_thread_records) AS r FROM segments)
        WHERE t > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'processes_not_recording', 'data_loss', 'Processes that could not record',
        t || ' (' || r || ' events lost; ' || reason || '; the last: pid ' || pid || ')'
        FROM (SELECT SUM(lost_processes) AS t, SUM(lost_process_records) AS r,
                     MAX(lost_process_reason) AS reason, MAX(lost_process_pid) AS pid
              FROM segments)
        WHERE t > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'hgtx_injection_replaced', 'info', 'HGTX injection replaced', value FROM session_info
        WHERE key = 'hgtx_injection_replaced';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'hgtx_open_ranges', 'info', 'HGTX ranges never ended',
        (SELECT value FROM session_info WHERE key = 'hgtx_open_ranges');
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'hgtx_payloads_undecoded', 'error', 'HGTX payload entries not decoded', value
        FROM session_info WHERE key = 'hgtx_payloads_undecoded' AND value > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'heap_sampled', 'info', 'Heap allocations sampled', n || ' (interval ' ||
        (SELECT value FROM session_info WHERE key = 'heap_sampling_interval') || ' bytes)'
        FROM (SELECT SUM(samples) AS n FROM heap_allocations) WHERE n > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'heap_report_interval', 'info', 'Heap data aggregated',
        'per ' || value || ' ms (--heap-report-interval)'
        FROM session_info WHERE key = 'heap_report_interval_ms';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'heap_still_allocated', 'info', 'Heap still allocated at the end (bytes, estimated)',
        CAST(ROUND(SUM(weight_bytes)) AS INTEGER) FROM heap_allocations WHERE end_ns IS NULL
        HAVING COUNT(*) > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'heap_unmatched_frees', 'info', 'Heap frees of blocks allocated before a fork', value
        FROM session_info WHERE key = 'heap_unmatched_frees' AND value > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'device_still_allocated', 'info', 'Device memory still allocated at the end (bytes)',
        SUM(bytes) FROM ppu_allocations WHERE kind = 'device' AND NOT failed AND released_ns IS NULL
        HAVING COUNT(*) > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'pinned_still_allocated', 'info', 'Pinned memory still allocated at the end (bytes)',
        SUM(bytes) FROM ppu_allocations WHERE kind = 'pinned' AND NOT failed AND released_ns IS NULL
        HAVING COUNT(*) > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'hggc_frees_after_main', 'info',
        'Device and pinned frees after main returned (runtime teardown, not collected)',
        f.value || ' (' || b.value || ' bytes)'
        FROM session_info AS f JOIN session_info AS b ON b.key = 'hggc_frees_after_main_bytes'
        WHERE f.key = 'hggc_frees_after_main';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'failed_allocations', 'info', 'Allocation calls that failed', COUNT(*)
        FROM ppu_allocations WHERE failed HAVING COUNT(*) > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'strings_never_defined', 'error', 'Strings referenced but never defined', value
        FROM session_info WHERE key = 'strings_never_defined';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'cpu_sampling', 'info', 'CPU sampling', CASE WHEN status = 'recorded' THEN
        scope || ', ' || event || ' every ' || period || ' ' || period_unit ||
        CASE WHEN event = 'cpu-clock' THEN ' (' || requested_period_cycles || ' cycles at ' ||
            nominal_mhz || ' MHz: no cycles event)' ELSE '' END || ', backtrace ' || backtrace
        ELSE 'unavailable (' || COALESCE(reason, '?') || ')' END FROM cpu_sampling_info;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'cpu_samples', 'info', 'CPU samples', samples || ' (' || lost_samples || ' lost, ' ||
        throttled || ' throttled, ' || unwind_failed || ' not unwound)'
        FROM cpu_sampling_info WHERE status = 'recorded';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'context_switches', 'info', 'Context switches', sched_switches || ' (' ||
        lost_switches || ' lost, from ' || scheduling || ')' || COALESCE('; ' || reason, '')
        FROM cpu_sampling_info WHERE status = 'recorded';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'context_switches_missing', 'data_loss', 'Context switches missing',
        value || ' (where the core had gone idle, the next thread is counted as running from '
        || 'the idle start or its last slice elsewhere)'
        FROM session_info WHERE key = 'sched_switches_missing';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'event_threads', 'info', 'Event sampling per thread', (SELECT COUNT(DISTINCT tid)
        FROM event_thread_samples) || ' threads counted, ' || COALESCE(n.value, 0) ||
        ' not followed' || CASE WHEN n.value > 0 OR e.value IS NOT NULL
            THEN ' (ended before their counters opened, or past the cap: 1024 at once, fewer '
                 || 'when the open-file limit leaves less; their events are in the per-CPU counts' ||
                 COALESCE('; last error: errno ' || e.value, '') || ')' ELSE '' END
        FROM (SELECT 1) LEFT JOIN session_info AS n ON n.key = 'event_threads_not_followed'
        LEFT JOIN session_info AS e ON e.key = 'event_threads_error'
        WHERE n.value IS NOT NULL OR e.value IS NOT NULL;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'ppu_metrics_' || device, 'info', 'PPU metrics (device ' || device || ')',
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
        ORDER BY device;
INSERT INTO report_stats (name, severity, property, value)
    SELECT CASE WHEN s.status LIKE 'tracing%' THEN 'python_tracing_' ELSE 'python_' END || s.pid,
        'info',
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
        ORDER BY s.pid, s.status LIKE 'tracing%';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'pccl_communicators', 'info', 'PCCL communicators', COUNT(*) || ' (plugin interface v' ||
        group_concat(DISTINCT plugin_version) || ', ' || SUM(COALESCE(events, 0)) || ' events)'
        FROM pccl_comms HAVING COUNT(*) > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'pccl_plugin', 'info', 'PCCL plugin', value FROM session_info
        WHERE key = 'pccl_plugin' AND value LIKE 'none%';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'pccl_user_plugin_' || pid, 'info', 'PCCL user plugin (pid ' || pid || ')',
        CASE status WHEN 'chained' THEN 'chained: ' || detail || ', v' || version ||
            ', receives its events' ELSE 'not called: ' || detail END
        FROM pccl_user_plugins;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'pccl_dropped', 'data_loss', 'PCCL events dropped', SUM(dropped_no_slot +
        dropped_reentry + dropped_bad_handle + dropped_unknown) || ' (no slot ' ||
        SUM(dropped_no_slot) || ', re-entry ' || SUM(dropped_reentry) || ', bad handle ' ||
        SUM(dropped_bad_handle) || ', unknown ' || SUM(dropped_unknown) || ')' FROM pccl_comms
        HAVING SUM(dropped_no_slot + dropped_reentry + dropped_bad_handle + dropped_unknown) > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'pccl_unfinished', 'data_loss', 'PCCL events never stopped', SUM(unfinished)
        FROM pccl_comms HAVING SUM(unfinished) > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'pccl_skipped', 'error', 'PCCL records skipped at import', value FROM session_info
        WHERE key = 'pccl_skipped';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'acompute_' || pid, 'info', 'ACDNN/ACBLAS (pid ' || pid || ')',
        libraries || ' (' || apis || ' functions called'
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
        ORDER BY pid;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'acompute_unknown_api_calls', 'error', 'ACDNN/ACBLAS calls skipped at import',
        value || ' (an API id no API record names)'
        FROM session_info WHERE key = 'acompute_unknown_api_calls';
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'video_api_calls', 'info', 'Video API calls', COUNT(*) || ' (Decode ' ||
        SUM(api = 1) || ', Encode ' || SUM(api = 2) || ', JPEG ' || SUM(api = 3) ||
        '; failed ' || SUM(status <> 0) || ')' FROM video_api_calls HAVING COUNT(*) > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'video_activities', 'info', 'Video engine work', COUNT(*) || ' (decodes ' ||
        SUM(kind = 1) || ', encodes ' || SUM(kind = 2) || ', nvJPEG ' || SUM(kind = 3) || ')'
        FROM video_activities HAVING COUNT(*) > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT key, CASE WHEN key LIKE 'video\_skipped%' ESCAPE '\' THEN 'error'
                     ELSE 'data_loss' END,
        CASE key
        WHEN 'video_untraced_function_lists' THEN 'NVENC function lists not traced (unknown version)'
        WHEN 'video_changed_function_lists' THEN 'NVENC function lists not traced (other functions)'
        WHEN 'video_untimed_work' THEN 'Video work not timed (more than 1024 in flight)'
        WHEN 'video_calls_without_library' THEN 'Video calls whose library was not found'
        WHEN 'video_activities_without_call' THEN 'Video work whose call was not recorded'
        ELSE 'Video records skipped at import (' || substr(key, 15) || ')' END, value
        FROM session_info WHERE key LIKE 'video\_%' ESCAPE '\' ORDER BY key;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'import_warnings', 'error', 'Import warnings', n
        FROM (SELECT COUNT(*) AS n FROM import_warnings) WHERE n > 0;
INSERT INTO report_stats (name, severity, property, value)
    SELECT 'import_warning_' || id, 'error', 'Warning ' || id, message FROM import_warnings
        WHERE id <= 10 ORDER BY id;
