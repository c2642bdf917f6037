-- name: nic_sum
-- title: NIC Metrics Summary
-- description: Per NIC sampled with --nic-metrics (RDMA ports, and network interfaces read
--   from /sys/class/net as the Ethernet fallback): the average receive and transmit
--   speed over the window (the bytes moved inside it divided by its length, as the
--   timeline's range tooltip shows), the bytes, the average packet sizes, the CNP rates
--   received and sent (RDMA congestion control) and the send wait (port_xmit_wait ticks a
--   second).  The window is --filter-time clipped to the time the device was sampled; a
--   reading's interval that straddles an edge counts in proportion.  Only devices whose
--   counters moved during the recording are shown; nic_sum:all shows every sampled one.
--   Resets counts readings that jumped further than the link can carry (a counter that
--   was reset or rewritten): those intervals are left out.
-- requires: nic_devices: no NIC metrics (record with --nic-metrics true)
-- arguments: all
-- columns: Device, Kind, Port, Rx Speed (B/s), Tx Speed (B/s), Rx Bytes, Tx Bytes,
--   Rx Packet Size (B), Tx Packet Size (B), Rx CNP (/s), Tx CNP (/s), Send Wait (ticks/s),
--   Window (ns), Link (Mb/s), Active, Resets
WITH span AS (
    SELECT device, MAX(MIN(start_ns), :filter_start) AS lo, MIN(MAX(end_ns), :filter_end) AS hi
    FROM nic_metrics GROUP BY device
), part AS (  -- each interval's value times the part of it inside the window (s)
    SELECT m.device, m.metric,
           m.value * (MIN(m.end_ns, s.hi) - MAX(m.start_ns, s.lo)) / 1e9 AS amount
    FROM nic_metrics AS m JOIN span AS s ON s.device = m.device
    WHERE m.end_ns > s.lo AND m.start_ns < s.hi
      AND m.metric IN ('rx_speed', 'tx_speed', 'rx_packet_rate', 'tx_packet_rate',
                       'rx_cnp_rate', 'tx_cnp_rate', 'send_wait')
), totals AS (
    SELECT device,
           SUM(CASE WHEN metric = 'rx_speed' THEN amount END) AS rx,
           SUM(CASE WHEN metric = 'tx_speed' THEN amount END) AS tx,
           SUM(CASE WHEN metric = 'rx_packet_rate' THEN amount END) AS rx_packets,
           SUM(CASE WHEN metric = 'tx_packet_rate' THEN amount END) AS tx_packets,
           SUM(CASE WHEN metric = 'rx_cnp_rate' THEN amount END) AS rx_cnp,
           SUM(CASE WHEN metric = 'tx_cnp_rate' THEN amount END) AS tx_cnp,
           SUM(CASE WHEN metric = 'send_wait' THEN amount END) AS wait
    FROM part GROUP BY device
)
SELECT d.name AS "Device",
       d.kind AS "Kind",
       d.port AS "Port",
       t.rx / ((s.hi - s.lo) / 1e9) AS "Rx Speed (B/s)",
       t.tx / ((s.hi - s.lo) / 1e9) AS "Tx Speed (B/s)",
       CAST(ROUND(t.rx) AS INTEGER) AS "Rx Bytes",
       CAST(ROUND(t.tx) AS INTEGER) AS "Tx Bytes",
       t.rx / NULLIF(t.rx_packets, 0) AS "Rx Packet Size (B)",
       t.tx / NULLIF(t.tx_packets, 0) AS "Tx Packet Size (B)",
       t.rx_cnp / ((s.hi - s.lo) / 1e9) AS "Rx CNP (/s)",
       t.tx_cnp / ((s.hi - s.lo) / 1e9) AS "Tx CNP (/s)",
       t.wait / ((s.hi - s.lo) / 1e9) AS "Send Wait (ticks/s)",
       COALESCE(s.hi - s.lo, 0) AS "Window (ns)",
       d.speed_mbps AS "Link (Mb/s)",
       d.active AS "Active",
       d.resets AS "Resets"
FROM nic_devices AS d
LEFT JOIN span AS s ON s.device = d.id AND s.hi > s.lo
LEFT JOIN totals AS t ON t.device = d.id
WHERE (d.active AND s.device IS NOT NULL) OR :report_arg = 'all'
ORDER BY d.name, d.port;
