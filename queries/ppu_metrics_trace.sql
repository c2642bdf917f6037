-- name: ppu_metrics_trace
-- title: PPU Metrics Trace
-- description: Every sample of every PPU metric, one row per metric per sample: when the
--   sample's window started (relative to the session start) and how long it was, the
--   device (physical index) and the value.  --filter-time keeps the samples that start
--   inside the window.
-- requires: ppu_metrics: no PPU metrics (record with --ppu-metrics-device all|ID,...)
-- columns: Time (ns), Duration (ns), Device, Metric, Unit, Value
SELECT v.ns - :session_start AS "Time (ns)",
       v.duration_ns AS "Duration (ns)",
       m.device AS "Device",
       m.name AS "Metric",
       m.unit AS "Unit",
       v.value AS "Value"
FROM ppu_metric_samples AS v
JOIN ppu_metrics AS m ON m.id = v.metric_id
WHERE v.ns >= :filter_start AND v.ns <= :filter_end
ORDER BY v.ns, m.device, m.slot;
