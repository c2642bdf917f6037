-- CPU sampling and scheduling (analyze/import_cpu_sampling.c), recorded by the
-- launcher's perf events (-s process-tree|system-wide).  Conventions: schema/core.sql.

-- One CPU sample: where a thread was when the sampling event fired.
CREATE TABLE cpu_samples (
    id           INTEGER PRIMARY KEY, -- sample
    timestamp_ns INTEGER NOT NULL,    -- CLOCK_MONOTONIC ns, as every table
    pid          INTEGER NOT NULL,    -- process
    tid          INTEGER NOT NULL,    -- thread
    cpu          INTEGER,             -- core it ran on
    callchain_id INTEGER              -- callchains.id: level 0 the sampled function itself
                                      -- (its frame's address is the sampled instruction + 1),
                                      -- then its callers; NULL when no stack was taken
);

-- Who ran on each core: consecutive context switches of a core cut its time
-- into slices (the idle task, tid 0, is left out).
CREATE TABLE sched_slices (
    id          INTEGER PRIMARY KEY, -- slice
    cpu         INTEGER NOT NULL,    -- core
    pid         INTEGER,             -- process, NULL for a thread outside the sampled tree
    tid         INTEGER NOT NULL,    -- thread that ran
    in_tree     INTEGER NOT NULL,    -- 1: a thread of the sampled process tree
    start_ns    INTEGER NOT NULL,    -- switched in
    end_ns      INTEGER NOT NULL,    -- switched out
    state_after TEXT NOT NULL        -- what it did next: 'Preempted' (still runnable), 'Waiting'
                                     -- (S: sleeping), 'Uninterruptible' (D: in the kernel,
                                     -- usually I/O), 'Exited'
);

-- What the sampler did (one row; none when CPU sampling was not asked for).
CREATE TABLE cpu_sampling_info (
    status                  TEXT NOT NULL,    -- 'recorded' or 'unavailable'
    reason                  TEXT,             -- why unavailable, or why scheduling is missing
    scope                   TEXT NOT NULL,    -- 'process-tree' or 'system-wide'
    event                   TEXT NOT NULL,    -- 'cycles' or 'cpu-clock'
    period                  INTEGER NOT NULL, -- between samples, in period_unit
    period_unit             TEXT NOT NULL,    -- 'cycles' or 'ns'
    requested_period_cycles INTEGER NOT NULL, -- --sample-period
    nominal_mhz             INTEGER NOT NULL, -- converted cycles to cpu-clock ns
    backtrace               TEXT NOT NULL,    -- 'dwarf', 'fp' or 'none'
    backtrace_depth         INTEGER NOT NULL, -- --sample-backtrace-depth
    stack_bytes             INTEGER NOT NULL, -- user stack copied per sample (dwarf)
    samples                 INTEGER NOT NULL, -- samples recorded
    lost_samples            INTEGER NOT NULL, -- samples the kernel lost (PERF_RECORD_LOST)
    throttled               INTEGER NOT NULL, -- times the kernel throttled the event
    unwind_failed           INTEGER NOT NULL, -- samples whose stack ended at the sampled address
    scheduling              TEXT NOT NULL,    -- 'sched:sched_switch', 'context switches' (the tree's own), 'cpu-wide context switches' or 'none'
    sched_switches          INTEGER NOT NULL, -- context switches recorded
    lost_switches           INTEGER NOT NULL  -- context switches the kernel lost
);

-- after load
CREATE INDEX cpu_samples_by_time ON cpu_samples (timestamp_ns);
CREATE INDEX cpu_samples_by_thread ON cpu_samples (pid, tid);
CREATE INDEX sched_slices_by_thread ON sched_slices (tid, start_ns);
CREATE INDEX sched_slices_by_cpu ON sched_slices (cpu, start_ns);
