-- PPU metrics (--ppu-metrics-device): each device's performance counters,
-- sampled by the launcher (analyze/import_ppu_metrics.c).  Conventions:
-- schema/core.sql.

-- The devices asked for: whether and how they were sampled.
CREATE TABLE ppu_metric_devices (
    device      INTEGER PRIMARY KEY, -- physical index (NVML's numbering)
    name        TEXT,
    pci_bus_id  TEXT,
    status      TEXT NOT NULL,       -- sampled, unavailable, busy, over capacity, failed
    backend     TEXT NOT NULL,       -- CUPTI PM sampling, NVML GPM, none
    interval_ns INTEGER NOT NULL,    -- the sampling interval used; 0 when not sampled
    reason      TEXT,                -- why not sampled, or which metrics the device lacks
    samples     INTEGER,             -- samples written (from the END record)
    overflows   INTEGER              -- times the device's buffer overflowed (samples lost)
);

-- The metrics sampled per device; name is the PPU's name of the metric.
CREATE TABLE ppu_metrics (
    id     INTEGER PRIMARY KEY,
    device INTEGER NOT NULL,
    slot   INTEGER NOT NULL, -- position in the device's samples
    name   TEXT NOT NULL,
    unit   TEXT NOT NULL,
    UNIQUE (device, slot)
);

-- One row per metric per sample: the value over [ns, ns + duration_ns).
CREATE TABLE ppu_metric_samples (
    ns          INTEGER NOT NULL,
    duration_ns INTEGER NOT NULL,
    metric_id   INTEGER NOT NULL, -- ppu_metrics.id
    value       REAL              -- NULL: not a number
);

-- The series as (device, metric, unit, ts, value).
CREATE VIEW ppu_metric_series AS
SELECT m.device AS device, m.name AS metric, m.unit AS unit, s.ns AS ns,
       s.duration_ns AS duration_ns, s.value AS value
FROM ppu_metric_samples AS s JOIN ppu_metrics AS m ON m.id = s.metric_id;

-- after load
CREATE INDEX ppu_metric_samples_by_metric ON ppu_metric_samples (metric_id, ns);
