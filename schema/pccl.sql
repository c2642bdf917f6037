-- PCCL (NCCL-compatible collectives) through NCCL's profiler plugin
-- (analyze/import_pccl.c).  Conventions: schema/core.sql.
--
-- Every event NCCL reported is one row of the table of its kind, with the
-- thread that stopped it (tid: for proxy events NCCL's proxy thread).
-- `image` and `event_id` are the event's number in its process image
-- (internal: the joins below are resolved into the *_id columns at import);
-- `unfinished` = 1 marks an event never stopped, whose end_ns is when the
-- plugin was finalized or the process exited.

-- Communicator contexts: one per communicator and rank (NCCL's init).
CREATE TABLE pccl_comms (
    id                 INTEGER PRIMARY KEY, -- referenced by the comm_id columns
    pid                INTEGER NOT NULL,    -- process
    image              INTEGER NOT NULL,    -- process image (internal)
    comm               INTEGER NOT NULL,    -- the context's number in its image
    comm_hash          INTEGER,             -- NCCL's communicator id (the bits of a uint64):
                                            -- equal on every rank; NULL unknown (plugin v3, v2)
    name_id            INTEGER,             -- strings: the communicator's name (config.commName)
    rank               INTEGER,             -- this rank, NULL unknown
    nranks             INTEGER,             -- ranks of the communicator, NULL unknown
    nnodes             INTEGER,             -- nodes, NULL unknown
    plugin_version     INTEGER NOT NULL,    -- the plugin interface NCCL called (5, 4, 3, 2)
    event_mask         INTEGER NOT NULL,    -- the event types asked for (NCCL's bits)
    init_ns            INTEGER NOT NULL,    -- init
    end_ns             INTEGER,             -- finalize (or process exit), NULL: never
    finalized          INTEGER,             -- 1 NCCL finalized it, 0 written at process exit
    events             INTEGER,             -- events NCCL started
    dropped_no_slot    INTEGER,             -- started with every event slot taken
    dropped_reentry    INTEGER,             -- not written (inside the tool's own work, no segment)
    dropped_bad_handle INTEGER,             -- stop or state change on a handle not live
    dropped_unknown    INTEGER,             -- event types or states this version does not know
    unfinished         INTEGER,             -- events never stopped
    UNIQUE (image, comm)
);

-- Finalize records as read (merged into pccl_comms at import).
CREATE TABLE pccl_comm_ends (
    image              INTEGER NOT NULL, -- process image (internal)
    comm               INTEGER NOT NULL, -- pccl_comms.comm
    end_ns             INTEGER NOT NULL, -- when
    finalized          INTEGER NOT NULL, -- 1 finalize, 0 process exit
    events             INTEGER NOT NULL, -- as pccl_comms
    dropped_no_slot    INTEGER NOT NULL,
    dropped_reentry    INTEGER NOT NULL,
    dropped_bad_handle INTEGER NOT NULL,
    dropped_unknown    INTEGER NOT NULL,
    unfinished         INTEGER NOT NULL
);

-- The API-level events (plugin v5): a group of calls, a collective or
-- point-to-point call, and NCCL launching its kernel for a plan.
CREATE TABLE pccl_api_events (
    id              INTEGER PRIMARY KEY, -- event
    kind            INTEGER NOT NULL,    -- 1 GroupApi, 2 CollApi, 3 P2pApi, 4 KernelLaunch
    comm_id         INTEGER,             -- pccl_comms.id of the context it was started in
    pid             INTEGER NOT NULL,    -- process
    tid             INTEGER NOT NULL,    -- thread
    start_ns        INTEGER NOT NULL,    -- start
    end_ns          INTEGER NOT NULL,    -- stop
    func_id         INTEGER,             -- strings: "AllReduce", "Send" ... (CollApi, P2pApi)
    count           INTEGER,             -- elements (CollApi, P2pApi)
    datatype_id     INTEGER,             -- strings: "ncclFloat32" ...
    root            INTEGER,             -- CollApi
    stream          INTEGER,             -- the cudaStream_t given, as a number
    group_depth     INTEGER,             -- GroupApi: ncclGroupStart nesting when it started
    graph_captured  INTEGER,             -- 1: issued during CUDA graph capture
    start_stop_ns   INTEGER,             -- GroupApi: ncclGroupStart returned, NULL: not seen
    end_start_ns    INTEGER,             -- GroupApi: ncclGroupEnd entered, NULL: not seen
    group_api_id    INTEGER,             -- CollApi, P2pApi, KernelLaunch: the GroupApi (this table)
    unfinished      INTEGER NOT NULL,    -- 1: never stopped
    image           INTEGER NOT NULL,    -- internal
    event_id        INTEGER NOT NULL,    -- internal
    parent_event_id INTEGER NOT NULL     -- internal
);

-- Group events: one per kernel plan, around its Coll and P2p events.
CREATE TABLE pccl_groups (
    id         INTEGER PRIMARY KEY, -- event
    comm_id    INTEGER,             -- pccl_comms.id
    pid        INTEGER NOT NULL,    -- process
    tid        INTEGER NOT NULL,    -- thread
    start_ns   INTEGER NOT NULL,    -- start
    end_ns     INTEGER NOT NULL,    -- stop
    unfinished INTEGER NOT NULL,    -- 1: never stopped
    image      INTEGER NOT NULL,    -- internal
    event_id   INTEGER NOT NULL     -- internal
);

-- Collectives and point-to-point operations (Coll and P2p events) as NCCL
-- scheduled them.  The host events mark enqueueing; start_ns/end_ns are the
-- operation's execution as time_source says: 'gpu_timer' the first start to
-- the last stop of its channels on the device (KernelCh, converted from the
-- GPU's globaltimer), 'kernel' its kernels (pccl_task_kernels), 'proxy' its
-- proxy ops, 'host' the host event.
CREATE TABLE pccl_tasks (
    id                INTEGER PRIMARY KEY, -- event
    type              INTEGER NOT NULL,    -- 1 collective, 2 point-to-point
    comm_id           INTEGER,             -- pccl_comms.id
    pid               INTEGER NOT NULL,    -- process
    tid               INTEGER NOT NULL,    -- thread that stopped the event
    rank              INTEGER NOT NULL,    -- the rank that issued it
    func_id           INTEGER,             -- strings: "AllReduce", "AllGather", "Send" ...
    seq_number        INTEGER,             -- collectives: NCCL's sequence number of the function
    count             INTEGER NOT NULL,    -- elements (AllGather, Broadcast: bytes of ncclInt8)
    datatype_id       INTEGER,             -- strings: "ncclFloat32" ...
    bytes             INTEGER,             -- the message size as nccl-tests counts it: AllReduce,
                                           -- Broadcast, Reduce, Send, Recv: count x type size;
                                           -- AllGather, ReduceScatter, AlltoAll: x nranks too
    size_bucket       INTEGER,             -- the largest power of two <= bytes (0 for 0)
    algo_id           INTEGER,             -- strings: "RING", "TREE" ... (collectives)
    proto_id          INTEGER,             -- strings: "SIMPLE", "LL" ... (collectives)
    root              INTEGER,             -- collectives
    peer              INTEGER,             -- point-to-point
    channels          INTEGER,             -- channels used
    warps             INTEGER,             -- collectives: warps per block
    host_start_ns     INTEGER NOT NULL,    -- the Coll/P2p event: start
    host_end_ns       INTEGER NOT NULL,    -- and stop
    start_ns          INTEGER NOT NULL,    -- execution start (time_source)
    end_ns            INTEGER NOT NULL,    -- execution end
    time_source       TEXT NOT NULL,       -- 'gpu_timer', 'kernel', 'proxy' or 'host'
    api_id            INTEGER,             -- pccl_api_events.id of its CollApi/P2pApi (v5)
    group_id          INTEGER,             -- pccl_groups.id
    kernel_launch_id  INTEGER,             -- pccl_api_events.id of the KernelLaunch of its plan (v5)
    issue_tid         INTEGER NOT NULL,    -- the thread that issued the call (its API event's,
                                           -- else its own)
    issue_ns          INTEGER NOT NULL,    -- when (its API event's start, else its own)
    hgtx_range_id     INTEGER,             -- hgtx_events.id of the innermost HGTX range open on
                                           -- issue_tid at issue_ns, NULL: none
    unfinished        INTEGER NOT NULL,    -- 1: never stopped
    image             INTEGER NOT NULL,    -- internal
    event_id          INTEGER NOT NULL,    -- internal
    parent_event_id   INTEGER NOT NULL,    -- internal
    group_event_id    INTEGER NOT NULL     -- internal
);

-- Each task's kernels on the PPU: the HGGC kernels its plan's launch call
-- started (the HGGC API calls the KernelLaunch event encloses on its thread;
-- before plugin v5, the last kernel launch on the thread before its Group).
CREATE TABLE pccl_task_kernels (
    id          INTEGER PRIMARY KEY, -- the link (the timeline's flow from the task to the kernel)
    task_id     INTEGER NOT NULL,    -- pccl_tasks.id
    activity_id INTEGER NOT NULL,    -- ppu_activities.id of the kernel
    api_id      INTEGER NOT NULL,    -- hggc_api_calls.id of the launch
    UNIQUE (task_id, activity_id)
);

-- Proxy operations: the network work of a task on one channel, one peer,
-- one direction, in `steps` steps.
CREATE TABLE pccl_proxy_ops (
    id                INTEGER PRIMARY KEY, -- event
    task_id           INTEGER,             -- pccl_tasks.id, NULL: its task was not recorded
    comm_id           INTEGER,             -- pccl_comms.id
    pid               INTEGER NOT NULL,    -- process
    tid               INTEGER NOT NULL,    -- the proxy thread
    origin_pid        INTEGER,             -- the process that posted it
    rank              INTEGER NOT NULL,    -- rank
    channel           INTEGER NOT NULL,    -- channel
    peer              INTEGER NOT NULL,    -- remote rank
    is_send           INTEGER NOT NULL,    -- 1 send, 0 receive
    steps             INTEGER NOT NULL,    -- steps of the op
    chunk_size        INTEGER NOT NULL,    -- bytes a step moves
    start_ns          INTEGER NOT NULL,    -- appended to the proxy
    in_progress_ns    INTEGER,             -- progress started, NULL: not seen
    end_ns            INTEGER NOT NULL,    -- its last step done
    unfinished        INTEGER NOT NULL,    -- 1: never stopped
    image             INTEGER NOT NULL,    -- internal
    event_id          INTEGER NOT NULL,    -- internal
    parent_event_id   INTEGER NOT NULL     -- internal
);

-- Proxy steps: one network transfer of an op.  Steps of a channel are
-- pipelined through NCCL's NCCL_STEPS (8) buffer slots: `pipeline` is the
-- slot (step mod 8), the timeline's rows under each channel.  The state
-- columns are when each state began, NULL when not seen: send: GPU wait (the
-- buffer was posted to the GPU), peer wait (the GPU's data was ready), send
-- wait (the send was posted to the network); receive: receive wait (posted),
-- flush wait (the data arrived), GPU wait (handed to the GPU).
CREATE TABLE pccl_proxy_steps (
    id                 INTEGER PRIMARY KEY, -- event
    op_id              INTEGER,             -- pccl_proxy_ops.id
    comm_id            INTEGER,             -- pccl_comms.id
    pid                INTEGER NOT NULL,    -- process
    tid                INTEGER NOT NULL,    -- the proxy thread
    channel            INTEGER NOT NULL,    -- its op's channel
    is_send            INTEGER NOT NULL,    -- its op's direction
    step               INTEGER NOT NULL,    -- step number within the op
    pipeline           INTEGER NOT NULL,    -- step mod 8
    start_ns           INTEGER NOT NULL,    -- posted
    end_ns             INTEGER NOT NULL,    -- done
    trans_size         INTEGER NOT NULL,    -- bytes moved
    send_gpu_wait_ns   INTEGER,
    send_peer_wait_ns  INTEGER,
    send_wait_ns       INTEGER,
    recv_wait_ns       INTEGER,
    recv_flush_wait_ns INTEGER,
    recv_gpu_wait_ns   INTEGER,
    unfinished         INTEGER NOT NULL,    -- 1: never stopped
    image              INTEGER NOT NULL,    -- internal
    parent_event_id    INTEGER NOT NULL     -- internal: its op's number
);

-- The proxy thread's own activity (ProxyCtrl): sleeping, waking, appending
-- ops, going idle or active.
CREATE TABLE pccl_proxy_ctrl (
    id         INTEGER PRIMARY KEY, -- event
    comm_id    INTEGER,             -- pccl_comms.id
    pid        INTEGER NOT NULL,    -- process
    tid        INTEGER NOT NULL,    -- thread
    start_ns   INTEGER NOT NULL,    -- start
    end_ns     INTEGER NOT NULL,    -- stop
    state      TEXT,                -- the last state: 'idle', 'active', 'sleep', 'wakeup',
                                    -- 'append', 'append end'; NULL: none
    state_ns   INTEGER,             -- when it was recorded
    appended   INTEGER,             -- 'append end': proxy ops appended
    states     INTEGER NOT NULL,    -- states recorded
    unfinished INTEGER NOT NULL,    -- 1: never stopped
    image      INTEGER NOT NULL     -- internal
);

-- A task's work on one channel of its kernel (KernelCh).  gpu_start and
-- gpu_stop are the GPU's globaltimer; start_ns/end_ns that time on the host
-- clock (CLOCK_REALTIME - CLOCK_MONOTONIC of the session), or the host
-- events' times where the timer is missing or far off.
CREATE TABLE pccl_kernel_channels (
    id              INTEGER PRIMARY KEY, -- event
    task_id         INTEGER,             -- pccl_tasks.id
    comm_id         INTEGER,             -- pccl_comms.id
    pid             INTEGER NOT NULL,    -- process
    tid             INTEGER NOT NULL,    -- the proxy thread
    channel         INTEGER NOT NULL,    -- channel
    host_start_ns   INTEGER NOT NULL,    -- the event's start on the host
    host_end_ns     INTEGER NOT NULL,    -- its stop
    gpu_start       INTEGER,             -- globaltimer ns, NULL: none
    gpu_stop        INTEGER,             -- globaltimer ns, NULL: none
    start_ns        INTEGER NOT NULL,    -- on the host clock
    end_ns          INTEGER NOT NULL,
    source          TEXT NOT NULL,       -- 'gpu_timer' (start_ns, end_ns from the GPU timer) or 'host'
    unfinished      INTEGER NOT NULL,    -- 1: never stopped
    image           INTEGER NOT NULL,    -- internal
    event_id        INTEGER NOT NULL,    -- internal
    parent_event_id INTEGER NOT NULL     -- internal
);

-- Events of the network plugin (NetPlugin), under a proxy step.
CREATE TABLE pccl_net_events (
    id              INTEGER PRIMARY KEY, -- event
    step_id         INTEGER,             -- pccl_proxy_steps.id, NULL: its step was not recorded
    comm_id         INTEGER,             -- pccl_comms.id
    pid             INTEGER NOT NULL,    -- process
    tid             INTEGER NOT NULL,    -- thread
    plugin_id       INTEGER NOT NULL,    -- the network plugin's event id (type << 16 | version)
    start_ns        INTEGER NOT NULL,    -- start
    end_ns          INTEGER NOT NULL,    -- stop
    updates         INTEGER NOT NULL,    -- NetPluginUpdate states
    last_update_ns  INTEGER,             -- the last one, NULL: none
    unfinished      INTEGER NOT NULL,    -- 1: never stopped
    image           INTEGER NOT NULL,    -- internal
    parent_event_id INTEGER NOT NULL,    -- internal: its step's op's number
    step            INTEGER NOT NULL     -- internal: its step's number
);

-- The user's own profiler plugin (NCCL_PROFILER_PLUGIN before asys set it).
CREATE TABLE pccl_user_plugins (
    pid     INTEGER NOT NULL, -- process
    status  TEXT NOT NULL,    -- 'chained' (it received its events too) or 'failed'
    version INTEGER,          -- chained: its interface version
    detail  TEXT              -- chained: its library and name; failed: why
);

-- NCCL's data types and their sizes, for the byte counts.
CREATE TABLE pccl_datatypes (name TEXT PRIMARY KEY, size INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO pccl_datatypes VALUES ('ncclInt8', 1), ('ncclUint8', 1), ('ncclInt32', 4),
    ('ncclUint32', 4), ('ncclInt64', 8), ('ncclUint64', 8), ('ncclFloat16', 2), ('ncclFloat32', 4),
    ('ncclFloat64', 8), ('ncclBfloat16', 2), ('ncclFloat8e4m3', 1), ('ncclFloat8e5m2', 1);

-- nccl-tests' bus bandwidth factor per collective over `n` ranks is
-- algorithm bandwidth x busbw_factor: AllReduce 2(n-1)/n; AllGather,
-- ReduceScatter, AlltoAll (n-1)/n; Broadcast, Reduce, Send, Recv 1.
CREATE VIEW pccl_task_view AS
SELECT t.*, f.value AS func, d.value AS datatype, c.comm_hash, c.nranks,
       t.end_ns - t.start_ns AS duration_ns,
       CASE f.value WHEN 'AllReduce' THEN 2.0 * (c.nranks - 1) / c.nranks
                    WHEN 'AllGather' THEN 1.0 * (c.nranks - 1) / c.nranks
                    WHEN 'ReduceScatter' THEN 1.0 * (c.nranks - 1) / c.nranks
                    WHEN 'AlltoAll' THEN 1.0 * (c.nranks - 1) / c.nranks
                    ELSE 1.0 END AS busbw_factor
FROM pccl_tasks AS t
LEFT JOIN pccl_comms AS c ON c.id = t.comm_id
LEFT JOIN strings AS f ON f.id = t.func_id
LEFT JOIN strings AS d ON d.id = t.datatype_id;

-- after load: built once the rows are in (inserting into indexed tables is
-- several times slower)
CREATE INDEX pccl_api_events_by_event ON pccl_api_events (image, event_id);
CREATE INDEX pccl_groups_by_event ON pccl_groups (image, event_id);
CREATE INDEX pccl_tasks_by_event ON pccl_tasks (image, event_id);
CREATE INDEX pccl_tasks_by_start ON pccl_tasks (start_ns);
CREATE INDEX pccl_proxy_ops_by_event ON pccl_proxy_ops (image, event_id);
CREATE INDEX pccl_proxy_ops_by_task ON pccl_proxy_ops (task_id);
CREATE INDEX pccl_proxy_steps_by_op ON pccl_proxy_steps (op_id, step);
CREATE INDEX pccl_kernel_channels_by_task ON pccl_kernel_channels (task_id);
CREATE INDEX pccl_api_events_by_group ON pccl_api_events (group_api_id);
