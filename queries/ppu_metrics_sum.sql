-- name: ppu_metrics_sum
-- title: PPU Metrics Summary
-- description: Per device and metric sampled with --ppu-metrics-device: the time-weighted
--   average, the minimum and maximum, and the median and 99th percentile of the samples
--   (nearest rank), over the recording or the --filter-time window (samples that start in
--   it).  Devices that could not be sampled are in report_info.
-- requires: ppu_metrics: no PPU metrics (record with --ppu-metrics-device all|ID,...)
-- columns: Device, Device Name, Metric, Unit, Samples, Average, Min, Max, P50, P99
WITH s AS (
    SELECT v.metric_id, v.value, v.duration_ns
    FROM ppu_metric_samples AS v
    WHERE v.ns >= :filter_start AND v.ns <= :filter_end AND v.value IS NOT NULL
), ranked AS (
    SELECT metric_id, value, duration_ns,
           ROW_NUMBER() OVER (PARTITION BY metric_id ORDER BY value) AS r,
           COUNT(*) OVER (PARTITION BY metric_id) AS n
    FROM s
)
SELECT m.device AS "Device",
       d.name AS "Device Name",
       m.name AS "Metric",
       m.unit AS "Unit",
       COUNT(*) AS "Samples",
       CASE WHEN SUM(k.duration_ns) > 0 THEN SUM(k.value * k.duration_ns) / SUM(k.duration_ns)
            ELSE AVG(k.value) END AS "Average",
       MIN(k.value) AS "Min",
       MAX(k.value) AS "Max",
       MIN(k.value) FILTER (WHERE k.r >= 0.50 * k.n) AS "P50",
       MIN(k.value) FILTER (WHERE k.r >= 0.99 * k.n) AS "P99"
FROM ranked AS k
JOIN ppu_metrics AS m ON m.id = k.metric_id
LEFT JOIN ppu_metric_devices AS d ON d.device = m.device
GROUP BY m.id
ORDER BY m.device, m.slot;
