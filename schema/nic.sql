-- NIC metrics (--nic-metrics): the RDMA ports and network interfaces the
-- launcher sampled from sysfs, and the rates made from their counters
-- (analyze/import_nic.c).  Conventions: schema/core.sql.

-- The sampled devices.  Reports and the timeline show the active ones.
CREATE TABLE nic_devices (
    id         INTEGER PRIMARY KEY, -- the records' device index
    name       TEXT NOT NULL,       -- RDMA device (mlx5_0) or interface name (eth0)
    kind       TEXT NOT NULL,       -- 'rdma' or 'ethernet' (class/net statistics)
    port       INTEGER NOT NULL,    -- RDMA port number; 0 for an interface
    speed_mbps INTEGER,             -- link speed (Mb/s); NULL when unknown
    samples    INTEGER NOT NULL,    -- readings of its counters
    active     INTEGER NOT NULL,    -- 1: a counter changed during the recording; 0: none did
                                    -- (its nic_metrics rows are left out: all zero)
    wraps      INTEGER NOT NULL,    -- counter readings that went down (wrapped or reset)
    resets     INTEGER NOT NULL     -- readings that jumped further than the link can carry
                                    -- (taken as resets; those intervals have no metric row)
);

-- A metric of a device over the interval between two readings of its
-- counters: the value holds from start_ns to end_ns.  Metrics, by unit:
--   rx_speed, tx_speed             B/s        bytes received, sent (RDMA: 4-byte units x 4)
--   rx_packet_rate, tx_packet_rate packets/s
--   rx_packet_size, tx_packet_size B          bytes / packets (only when packets moved)
--   rx_cnp_rate                    CNP/s      congestion notifications received (RDMA:
--                                             rp_cnp_handled + rp_cnp_ignored)
--   tx_cnp_rate                    CNP/s      congestion notifications sent (np_cnp_sent)
--   send_wait                      ticks/s    port_xmit_wait: ticks with data it could not send
CREATE TABLE nic_metrics (
    device   INTEGER NOT NULL, -- nic_devices.id
    metric   TEXT NOT NULL,    -- the metric (above)
    unit     TEXT NOT NULL,    -- its unit
    start_ns INTEGER NOT NULL, -- the earlier reading
    end_ns   INTEGER NOT NULL, -- the later one
    value    REAL NOT NULL     -- the metric over [start_ns, end_ns)
);

-- after load
CREATE INDEX nic_metrics_by_device ON nic_metrics (device, metric, start_ns);
