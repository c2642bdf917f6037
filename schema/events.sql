-- Event sampling (--event-sample): readings of the counters of CPU core and
-- OS events, per CPU (analyze/import_events.c).  Conventions: schema/core.sql.

-- The events (common/event_catalog.c) a report counted or tried to.
CREATE TABLE event_types (
    id          INTEGER PRIMARY KEY, -- the records' event id
    grp         TEXT NOT NULL,       -- 'cpu-core' or 'os'
    idx         INTEGER NOT NULL,    -- its --cpu-core-events / --os-events index
    name        TEXT NOT NULL,       -- cycles, page-faults, ...
    description TEXT NOT NULL,
    error       INTEGER              -- not counted on the recording host: perf_event_open's errno
);

-- A counter reading: the count since it was opened, scaled when the kernel
-- multiplexed the counter (count x enabled / running).
CREATE TABLE event_samples (
    ns     INTEGER NOT NULL, -- when it was read
    event  INTEGER NOT NULL, -- event_types.id
    cpu    INTEGER NOT NULL, -- the CPU
    value  INTEGER NOT NULL, -- count since the start (scaled)
    delta  INTEGER NOT NULL  -- count since the previous reading of this event and CPU
);

-- after load
CREATE INDEX event_samples_by_event ON event_samples (event, cpu, ns);
