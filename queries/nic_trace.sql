-- name: nic_trace
-- title: NIC Metrics Trace
-- description: The metric series of the NICs sampled with --nic-metrics, one row per
--   device, metric and interval between two readings of its counters (times relative
--   to the session start): rx_speed and tx_speed (B/s), rx_packet_rate and
--   tx_packet_rate (packets/s), rx_packet_size and tx_packet_size (B), rx_cnp_rate and
--   tx_cnp_rate (CNP/s), send_wait (ticks/s).  Only devices whose counters moved have
--   rows.  --filter-time keeps the intervals that overlap the window.
-- requires: nic_metrics: no NIC metric series (record with --nic-metrics true; idle NICs have none)
-- columns: Start (ns), End (ns), Device, Port, Metric, Unit, Value
SELECT m.start_ns - :session_start AS "Start (ns)",
       m.end_ns - :session_start AS "End (ns)",
       d.name AS "Device",
       d.port AS "Port",
       m.metric AS "Metric",
       m.unit AS "Unit",
       m.value AS "Value"
FROM nic_metrics AS m JOIN nic_devices AS d ON d.id = m.device
WHERE m.end_ns >= :filter_start AND m.start_ns <= :filter_end
ORDER BY m.start_ns, d.name, d.port, m.metric;
