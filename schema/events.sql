-- Event sampling (--event-sample): readings of the counters of CPU core and
-- OS events, per CPU, and with --event-sample process-tree per thread too
-- (system-wide stays per CPU) (analyze/import_events.c).  Conventions:
-- schema/core.sql.  session_info has event_threads_not_followed (threads of
-- the tree that got no counters of their own: more than 1024 at once, or
-- ended before the launcher could open them) and event_threads_error (the
-- errno of the last such failure, or why threads could not be followed).

-- The events (common/event_catalog.c) a report counted or tried to.
CREATE TABLE event_types (
    id          INTEGER PRIMARY KEY, -- the records' event id
    grp         TEXT NOT NULL,       -- 'cpu-core' or 'os'
    idx         INTEGER NOT NULL,    -- its --cpu-core-events / --os-events index
    name        TEXT NOT NULL,       -- cycles, page-faults, ...
    description TEXT NOT NULL,
    error       INTEGER              -- not counted on the recording host: perf_event_open's errno
);

-- A counter reading: the count since it was opened; with --event-sample
-- system-wide scaled when the kernel multiplexed the counter (count x enabled
-- / running).  A process tree's per-CPU counter is not scaled: its running
-- time is the tasks' time on that CPU, its enabled time theirs on any CPU.
CREATE TABLE event_samples (
    ns     INTEGER NOT NULL, -- when it was read
    event  INTEGER NOT NULL, -- event_types.id
    cpu    INTEGER NOT NULL, -- the CPU
    value  INTEGER NOT NULL, -- count since the start (scaled system-wide)
    delta  INTEGER NOT NULL  -- count since the previous reading of this event and CPU
);

-- A reading of one thread's own counter (--event-sample process-tree): the
-- count since the launcher opened it, just after the thread started (the
-- events of its first moments are only in event_samples), scaled when the
-- kernel multiplexed the counter (count x enabled / running).
-- The last reading of a thread is taken when it ends.
CREATE TABLE event_thread_samples (
    ns     INTEGER NOT NULL, -- when it was read
    event  INTEGER NOT NULL, -- event_types.id
    pid    INTEGER NOT NULL, -- the thread's process
    tid    INTEGER NOT NULL, -- the thread
    value  INTEGER NOT NULL, -- count since its counter opened (scaled)
    delta  INTEGER NOT NULL  -- count since the previous reading of this event and thread
);

-- after load
CREATE INDEX event_samples_by_event ON event_samples (event, cpu, ns);
CREATE INDEX event_thread_samples_by_thread ON event_thread_samples (event, pid, tid, ns);
