-- OS runtime calls and the thread states estimated from them
-- (analyze/import_osrt.c).  Conventions: schema/core.sql.

-- OS runtime calls that lasted at least --osrt-threshold.
CREATE TABLE osrt_calls (
    id           INTEGER PRIMARY KEY, -- call id
    start_ns     INTEGER NOT NULL,    -- call entry
    end_ns       INTEGER NOT NULL,    -- call return
    pid          INTEGER NOT NULL,    -- process
    tid          INTEGER NOT NULL,    -- thread
    name_id      INTEGER NOT NULL,    -- strings: function name (read, pthread_mutex_lock, ...)
    result       INTEGER,             -- return value
    error        INTEGER,             -- errno (or the returned error number) when it failed, else NULL
    callchain_id INTEGER              -- callchains.id, NULL when no stack was captured
);

-- Estimated thread states when CPU sampling is off: inside a traced OS
-- runtime call a thread is 'Possibly Waiting', outside 'Possibly Running'.
CREATE TABLE thread_states (
    pid      INTEGER NOT NULL, -- process
    tid      INTEGER NOT NULL, -- thread
    state    TEXT NOT NULL,    -- 'Possibly Running' or 'Possibly Waiting' (OSRT's estimate);
                               -- with CPU sampling (schema/cpu_sampling.sql) instead 'Running',
                               -- 'Preempted', 'Waiting' or 'Uninterruptible'
    start_ns INTEGER NOT NULL, -- interval start
    end_ns   INTEGER NOT NULL  -- interval end
);

-- after load: built once the rows are in (inserting into indexed tables is
-- several times slower)
CREATE INDEX osrt_calls_by_start ON osrt_calls (start_ns);
CREATE INDEX thread_states_by_thread ON thread_states (pid, tid, start_ns);
