-- name: report_info
-- title: Report Information
-- description: What was recorded: command, host, duration, how the program ended,
--   collectors, then the report's counters (processes, threads, records per collector,
--   records lost and why; the report_stats table, each with its severity).
-- columns: Property, Value
WITH info(key, value) AS (SELECT key, value FROM session_info),
rows(ord, property, value) AS (
    SELECT 1, 'Command', (SELECT value FROM info WHERE key = 'command')
    UNION ALL SELECT 2, 'Report ID', (SELECT value FROM info WHERE key = 'report_id')
    UNION ALL SELECT 3, 'Recorded by', 'asys ' || (SELECT value FROM info WHERE key = 'asys_version')
    UNION ALL SELECT 4, 'Host', (SELECT value FROM info WHERE key = 'hostname') || ' (' ||
        (SELECT value FROM info WHERE key = 'os') || ', ' || (SELECT value FROM info WHERE key = 'kernel') || ')'
    UNION ALL SELECT 5, 'Rank', COALESCE((SELECT value FROM info WHERE key = 'rank')
        || COALESCE(' of ' || (SELECT value FROM info WHERE key = 'world_size'), '')
        || COALESCE(', local rank ' || (SELECT value FROM info WHERE key = 'local_rank'), '')
        || COALESCE(' (from ' || (SELECT value FROM info WHERE key = 'rank_source') || ')', ''),
        'none in the environment (--multi-node-mode true)')
        WHERE EXISTS (SELECT 1 FROM info WHERE key = 'multi_node')
    UNION ALL SELECT 6, 'CPU', (SELECT value FROM info WHERE key = 'cpu_model') || ', ' ||
        (SELECT value FROM info WHERE key = 'logical_cpus') || ' logical CPUs'
    UNION ALL SELECT 7, 'Clock', (SELECT value FROM info WHERE key = 'clock_kind')
    UNION ALL SELECT 8, 'Clock alignment', (SELECT value FROM info WHERE key = 'clock_method')
        || COALESCE((SELECT ', error up to ' || printf('%.3f ms', value / 1e6) FROM info
            WHERE key = 'clock_error_ns'), ', error unknown')
        WHERE EXISTS (SELECT 1 FROM info WHERE key = 'multi_node')
    UNION ALL SELECT 9, 'Start (UTC)', strftime('%Y-%m-%d %H:%M:%f',
        (SELECT value FROM info WHERE key = 'start_realtime_ns') / 1e9, 'unixepoch')
    UNION ALL SELECT 10, 'Duration (s)', printf('%.6f', (SELECT value FROM info WHERE key = 'duration_ns') / 1e9)
    UNION ALL SELECT 11, 'Program ended', COALESCE('exit code ' || (SELECT value FROM info WHERE key = 'target_exit_code'),
        'signal ' || (SELECT value FROM info WHERE key = 'target_signal'), 'unknown')
    UNION ALL SELECT 12, 'Processes still running at the end',
        (SELECT value FROM info WHERE key = 'still_running') || ': '
        || COALESCE((SELECT value FROM info WHERE key = 'still_running_listed'), '')
        || ' (what they did after that is not recorded)'
        WHERE EXISTS (SELECT 1 FROM info WHERE key = 'still_running')
    UNION ALL SELECT 13, 'Collectors enabled', NULLIF((SELECT value FROM info WHERE key = 'collectors_enabled'), '')
    UNION ALL SELECT 14, 'Collectors unavailable', NULLIF((SELECT value FROM info WHERE key = 'collectors_unavailable'), '')
    UNION ALL SELECT 15, 'Capture range', value FROM info WHERE key = 'capture_range'
    UNION ALL SELECT 16, 'Capture windows', (SELECT COUNT(*) FROM capture_ranges)
        WHERE EXISTS (SELECT 1 FROM info WHERE key = 'capture_range')
    -- the counters, in their list's order (schema/report_stats.sql)
    UNION ALL SELECT 100 + id, property, value FROM report_stats
    UNION ALL SELECT 1000000 + ROW_NUMBER() OVER (ORDER BY p.pid), 'Process ' || p.pid,
        COALESCE(n.value, '?') || ' (' || (SELECT COUNT(*) FROM threads AS t WHERE t.pid = p.pid) ||
        ' threads)' || CASE WHEN p.forked THEN ', forked' ELSE '' END
        FROM processes AS p LEFT JOIN strings AS n ON n.id = p.name_id
)
SELECT property AS "Property", value AS "Value" FROM rows ORDER BY ord;
