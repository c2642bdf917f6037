-- HGGC: PPU API calls and device activity, and the tables derived from them
-- at import (analyze/import_hggc.c).  Conventions: schema/core.sql.

-- ---- HGGC: PPU API calls and device activity (CUPTI) --------------------------
-- Device, context, stream, event, graph, node and exec numbers are CUPTI's
-- ids, unique within a process; `device` is the CUDA ordinal the process saw
-- (ppu_devices.physical_index is the machine's numbering).

-- Runtime and driver API calls (driver calls made inside a runtime call are
-- that call's detail and not listed).
CREATE TABLE hggc_api_calls (
    id             INTEGER PRIMARY KEY, -- call id
    start_ns       INTEGER NOT NULL,    -- call entry
    end_ns         INTEGER NOT NULL,    -- call return
    pid            INTEGER NOT NULL,    -- process
    tid            INTEGER NOT NULL,    -- thread
    api            INTEGER NOT NULL,    -- 1 runtime, 2 driver
    name_id        INTEGER NOT NULL,    -- strings: function name (cudaMemcpyAsync, cuLaunchKernel, ...)
    cbid           INTEGER NOT NULL,    -- CUPTI callback id
    correlation_id INTEGER NOT NULL,    -- joins the call to the device work it caused
    result         INTEGER NOT NULL,    -- cudaError_t / CUresult returned (0 = success)
    callchain_id   INTEGER              -- callchains.id when --hggcbacktrace captured a stack
);

-- Devices as each process saw them.
CREATE TABLE ppu_devices (
    pid                 INTEGER NOT NULL, -- process
    device              INTEGER NOT NULL, -- CUDA ordinal in that process
    physical_index      INTEGER,          -- the machine's index (CUDA_VISIBLE_DEVICES undone), NULL: unknown
    name_id             INTEGER,          -- strings: device name
    uuid                TEXT,             -- device UUID, hex
    global_memory_bytes INTEGER,          -- memory size
    multiprocessors     INTEGER,          -- SM count
    compute_major       INTEGER,          -- compute capability
    compute_minor       INTEGER,          -- compute capability
    PRIMARY KEY (pid, device)
) WITHOUT ROWID;

CREATE TABLE ppu_contexts (
    pid         INTEGER NOT NULL, -- process
    context     INTEGER NOT NULL, -- context id
    device      INTEGER NOT NULL, -- CUDA ordinal
    null_stream INTEGER,          -- id of its default (NULL) stream
    PRIMARY KEY (pid, context)
) WITHOUT ROWID;

-- Streams created by the program, and each context's default stream.
CREATE TABLE ppu_streams (
    pid            INTEGER NOT NULL, -- process
    stream         INTEGER NOT NULL, -- stream id
    context        INTEGER NOT NULL, -- context id
    priority       INTEGER,          -- stream priority
    non_blocking   INTEGER NOT NULL, -- 1: created with cudaStreamNonBlocking
    is_default     INTEGER NOT NULL, -- 1: the context's default (NULL) stream
    correlation_id INTEGER,          -- the API call that created it, NULL for default streams
                                     -- (a stream with work but no creation record is the
                                     -- per-thread default stream: blocking, not is_default)
    PRIMARY KEY (pid, stream)
) WITHOUT ROWID;

-- Kernels executed on a device.
CREATE TABLE ppu_kernels (
    id                    INTEGER PRIMARY KEY, -- kernel id
    start_ns              INTEGER NOT NULL,    -- execution start
    end_ns                INTEGER NOT NULL,    -- execution end
    queued_ns             INTEGER,             -- launch queued, NULL: unknown
    submitted_ns          INTEGER,             -- submitted to the device, NULL: unknown
    pid                   INTEGER NOT NULL,    -- process
    device                INTEGER NOT NULL,    -- CUDA ordinal
    context               INTEGER NOT NULL,    -- context id
    stream                INTEGER NOT NULL,    -- stream id
    correlation_id        INTEGER NOT NULL,    -- hggc_api_calls.correlation_id of the launch
    grid_x                INTEGER NOT NULL,    -- grid dimensions
    grid_y                INTEGER NOT NULL,
    grid_z                INTEGER NOT NULL,
    block_x               INTEGER NOT NULL,    -- block dimensions
    block_y               INTEGER NOT NULL,
    block_z               INTEGER NOT NULL,
    static_shared_bytes   INTEGER NOT NULL,    -- static shared memory per block
    dynamic_shared_bytes  INTEGER NOT NULL,    -- dynamic shared memory per block
    registers_per_thread  INTEGER NOT NULL,    -- registers
    launch_type           INTEGER NOT NULL,    -- CUPTI launch type (0 regular, 1 cooperative ...)
    mangled_name_id       INTEGER NOT NULL,    -- strings: name as compiled (ppu_kernel_names has the others)
    graph_id              INTEGER,             -- graph that launched it, NULL: none
    graph_node_id         INTEGER              -- its node there, NULL: none
);

-- The names of every kernel name seen.
CREATE TABLE ppu_kernel_names (
    mangled_name_id   INTEGER PRIMARY KEY, -- strings: as compiled (_Z10add_kernelPfi)
    demangled_name_id INTEGER NOT NULL,    -- strings: add_kernel(float*, int); = mangled when not C++
    base_name_id      INTEGER NOT NULL     -- strings: the function name alone (add_kernel)
);

-- Memory copies; kinds are named in hggc_copy_kinds and hggc_memory_kinds.
CREATE TABLE ppu_memcpys (
    id             INTEGER PRIMARY KEY, -- copy id
    start_ns       INTEGER NOT NULL,    -- start
    end_ns         INTEGER NOT NULL,    -- end
    pid            INTEGER NOT NULL,    -- process
    device         INTEGER NOT NULL,    -- CUDA ordinal of the device doing the copy
    context        INTEGER NOT NULL,    -- context id
    stream         INTEGER NOT NULL,    -- stream id
    correlation_id INTEGER NOT NULL,    -- the API call
    bytes          INTEGER NOT NULL,    -- size
    copy_kind      INTEGER NOT NULL,    -- hggc_copy_kinds.id (1 HtoD, 2 DtoH, 8 DtoD, 9 HtoH, 10 PtoP)
    src_kind       INTEGER NOT NULL,    -- hggc_memory_kinds.id (1 pageable, 2 pinned, 3 device)
    dst_kind       INTEGER NOT NULL,    -- hggc_memory_kinds.id
    async          INTEGER NOT NULL,    -- 1: an asynchronous copy
    src_device     INTEGER,             -- peer copies: source device ordinal, else NULL
    dst_device     INTEGER,             -- peer copies: destination device ordinal, else NULL
    graph_id       INTEGER,             -- graph, NULL: none
    graph_node_id  INTEGER              -- graph node, NULL: none
);

CREATE TABLE ppu_memsets (
    id             INTEGER PRIMARY KEY, -- memset id
    start_ns       INTEGER NOT NULL,    -- start
    end_ns         INTEGER NOT NULL,    -- end
    pid            INTEGER NOT NULL,    -- process
    device         INTEGER NOT NULL,    -- CUDA ordinal
    context        INTEGER NOT NULL,    -- context id
    stream         INTEGER NOT NULL,    -- stream id
    correlation_id INTEGER NOT NULL,    -- the API call
    bytes          INTEGER NOT NULL,    -- size
    value          INTEGER NOT NULL,    -- byte value set
    memory_kind    INTEGER NOT NULL,    -- hggc_memory_kinds.id
    async          INTEGER NOT NULL,    -- 1: cudaMemsetAsync
    graph_id       INTEGER,             -- graph, NULL: none
    graph_node_id  INTEGER              -- graph node, NULL: none
);

-- Host waits: event/stream/context synchronization and stream waits on events.
CREATE TABLE ppu_syncs (
    id             INTEGER PRIMARY KEY, -- sync id
    start_ns       INTEGER NOT NULL,    -- start of the wait
    end_ns         INTEGER NOT NULL,    -- end of the wait
    pid            INTEGER NOT NULL,    -- process
    type           INTEGER NOT NULL,    -- hggc_sync_types.id
    context        INTEGER NOT NULL,    -- context id
    stream         INTEGER,             -- stream id, NULL: none
    correlation_id INTEGER NOT NULL,    -- the API call
    event_id       INTEGER,             -- event waited for, NULL: none
    event_sync_id  INTEGER              -- which record of that event, NULL: none
);

-- cudaEventRecord reaching the device.
CREATE TABLE ppu_event_records (
    pid            INTEGER NOT NULL, -- process
    device_ns      INTEGER NOT NULL, -- when the event completed on the device
    device         INTEGER NOT NULL, -- CUDA ordinal
    context        INTEGER NOT NULL, -- context id
    stream         INTEGER NOT NULL, -- stream id
    correlation_id INTEGER NOT NULL, -- the cudaEventRecord call
    event_id       INTEGER NOT NULL, -- event id
    event_sync_id  INTEGER NOT NULL  -- which record of the event (joins ppu_syncs.event_sync_id)
);

-- Device and pinned memory allocations and releases.
CREATE TABLE ppu_memory (
    pid            INTEGER NOT NULL, -- process
    timestamp_ns   INTEGER NOT NULL, -- when it happened
    operation      INTEGER NOT NULL, -- 1 allocation, 2 release, 16 an allocation call that failed
    memory_kind    INTEGER NOT NULL, -- hggc_memory_kinds.id
    address        INTEGER NOT NULL, -- address
    bytes          INTEGER NOT NULL, -- size
    device         INTEGER,          -- CUDA ordinal
    context        INTEGER,          -- context id
    stream         INTEGER,          -- stream id (stream-ordered allocations)
    correlation_id INTEGER,          -- the API call
    error          INTEGER           -- a failed allocation (operation 16): the error returned
);

-- Graph launches traced as one range (--hggc-graph-trace=graph).
CREATE TABLE ppu_graph_traces (
    start_ns       INTEGER NOT NULL, -- first node starts
    end_ns         INTEGER NOT NULL, -- last node ends
    pid            INTEGER NOT NULL, -- process
    device         INTEGER NOT NULL, -- CUDA ordinal
    context        INTEGER NOT NULL, -- context id
    stream         INTEGER NOT NULL, -- stream id
    correlation_id INTEGER NOT NULL, -- the cudaGraphLaunch call
    graph_id       INTEGER NOT NULL  -- the graph launched
);

-- Graph nodes, created (by API calls or stream capture) or cloned (by instantiation).
CREATE TABLE ppu_graph_nodes (
    pid              INTEGER NOT NULL, -- process
    node_id          INTEGER NOT NULL, -- node id (ppu_kernels.graph_node_id)
    graph_id         INTEGER,          -- graph it belongs to
    node_type        INTEGER NOT NULL, -- CUgraphNodeType (0 kernel, 1 memcpy, 2 memset ...)
    original_node_id INTEGER,          -- clones: the node it was cloned from, NULL otherwise
    correlation_id   INTEGER,          -- the API call that created it (capture: the captured call)
    PRIMARY KEY (pid, node_id)
) WITHOUT ROWID;

CREATE TABLE ppu_graph_edges (
    pid        INTEGER NOT NULL, -- process
    node_id    INTEGER NOT NULL, -- the dependent node
    depends_on INTEGER NOT NULL  -- the node it waits for
);

-- Instantiated graphs and their launches.
CREATE TABLE ppu_graph_execs (
    pid            INTEGER NOT NULL, -- process
    exec_id        INTEGER NOT NULL, -- graph exec id
    graph_id       INTEGER,          -- the graph instantiated
    correlation_id INTEGER,          -- the cudaGraphInstantiate call
    PRIMARY KEY (pid, exec_id)
) WITHOUT ROWID;

CREATE TABLE ppu_graph_launches (
    pid            INTEGER NOT NULL, -- process
    exec_id        INTEGER NOT NULL, -- ppu_graph_execs.exec_id
    correlation_id INTEGER NOT NULL  -- the cudaGraphLaunch call (hggc_api_calls)
);

-- Time CUPTI spent on itself.
CREATE TABLE hggc_overheads (
    pid           INTEGER NOT NULL, -- process
    start_ns      INTEGER NOT NULL, -- start
    end_ns        INTEGER NOT NULL, -- end
    overhead_kind INTEGER NOT NULL, -- CUpti_ActivityOverheadKind (65536 buffer flush ...)
    object_kind   INTEGER NOT NULL  -- CUpti_ActivityObjectKind
);

-- Copies and memsets as one list, each named as nsys names the operation
-- ('[CUDA memcpy Host-to-Device]', '[CUDA memset]').
-- Device and pinned allocations (and allocation calls that failed) with the
-- API call that made them, its call stack (--hggc-memory-usage keeps one for
-- every allocation call) and when the block was released (NULL: never).
-- kind: 'device' (device and managed memory) or 'pinned'.
CREATE VIEW ppu_allocations AS
SELECT m.rowid AS id, m.pid, m.timestamp_ns, m.operation = 16 AS failed, m.error,
       CASE WHEN m.memory_kind = 2 THEN 'pinned' ELSE 'device' END AS kind, m.memory_kind,
       m.address, m.bytes, m.device, m.stream, m.correlation_id,
       c.tid, c.name_id AS api_name_id, c.callchain_id,
       (SELECT MIN(r.timestamp_ns) FROM ppu_memory AS r
        WHERE r.pid = m.pid AND r.address = m.address AND r.operation = 2
          AND r.timestamp_ns >= m.timestamp_ns AND m.operation = 1) AS released_ns
FROM ppu_memory AS m
LEFT JOIN hggc_api_calls AS c ON c.pid = m.pid AND c.correlation_id = m.correlation_id
WHERE m.operation IN (1, 16) AND m.memory_kind IN (2, 3, 5);

CREATE VIEW ppu_memory_operations AS
SELECT m.start_ns, m.end_ns, m.pid, m.device, m.context, m.stream, m.correlation_id, m.bytes,
       m.src_kind, m.dst_kind,
       '[CUDA memcpy ' || COALESCE((SELECT direction FROM hggc_copy_kinds WHERE id = m.copy_kind),
                                   'Unknown') || ']' AS operation
FROM ppu_memcpys AS m
UNION ALL
SELECT e.start_ns, e.end_ns, e.pid, e.device, e.context, e.stream, e.correlation_id, e.bytes,
       NULL, e.memory_kind, '[CUDA memset]'
FROM ppu_memsets AS e;

-- Names of CUPTI's numbers.
CREATE TABLE hggc_copy_kinds (
    id        INTEGER PRIMARY KEY, -- CUpti_ActivityMemcpyKind
    name      TEXT NOT NULL,       -- short: HtoD
    direction TEXT NOT NULL        -- as nsys writes it in operation names: Host-to-Device
);
INSERT INTO hggc_copy_kinds VALUES (0, 'Unknown', 'Unknown'), (1, 'HtoD', 'Host-to-Device'),
    (2, 'DtoH', 'Device-to-Host'), (3, 'HtoA', 'Host-to-Array'), (4, 'AtoH', 'Array-to-Host'),
    (5, 'AtoA', 'Array-to-Array'), (6, 'AtoD', 'Array-to-Device'), (7, 'DtoA', 'Device-to-Array'),
    (8, 'DtoD', 'Device-to-Device'), (9, 'HtoH', 'Host-to-Host'), (10, 'PtoP', 'Peer-to-Peer');
CREATE TABLE hggc_memory_kinds (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO hggc_memory_kinds VALUES (0, 'Unknown'), (1, 'Pageable'), (2, 'Pinned'),
    (3, 'Device'), (4, 'Array'), (5, 'Managed'), (6, 'Device Static'), (7, 'Managed Static');
CREATE TABLE hggc_sync_types (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO hggc_sync_types VALUES (0, 'Unknown'), (1, 'Event synchronize'),
    (2, 'Stream wait event'), (3, 'Stream synchronize'), (4, 'Context synchronize');

-- ---- derived at import (schema/derived.sql) from the tables above ----------------

-- Every device activity in one table: what the timeline, percentage and
-- projection reports work on.
-- Each kernel's launch number among the launches of the same kernel (its
-- mangled name) in its process, from 0 in launch order (correlation id, then
-- start): what Nsight Compute's --launch-skip counts (kernel_profile_cmd).
CREATE TABLE ppu_kernel_instances (
    kernel_id       INTEGER PRIMARY KEY, -- ppu_kernels.id
    instance        INTEGER NOT NULL,    -- launches of that kernel in its process before it
    mangled_name_id INTEGER NOT NULL     -- its ppu_kernels.mangled_name_id, copied: the timeline
                                         -- export reads both from this narrow table
);

CREATE TABLE ppu_activities (
    id             INTEGER PRIMARY KEY, -- activity id
    kind           INTEGER NOT NULL,    -- 1 kernel, 2 memcpy, 3 memset, 4 graph range (--hggc-graph-trace=graph),
                                        -- 5 video decode/encode (-t hgvideo: video_activities)
    source_id      INTEGER NOT NULL,    -- its row in ppu_kernels / ppu_memcpys / ppu_memsets / ppu_graph_traces (rowid)
                                        -- / video_activities
    pid            INTEGER NOT NULL,    -- process
    device         INTEGER NOT NULL,    -- CUDA ordinal in that process
    physical       INTEGER NOT NULL,    -- the machine's device index (the ordinal when unknown)
    context        INTEGER NOT NULL,    -- context id
    stream         INTEGER NOT NULL,    -- stream id
    start_ns       INTEGER NOT NULL,    -- start
    end_ns         INTEGER NOT NULL,    -- end
    correlation_id INTEGER NOT NULL,    -- of the API call that caused it
    api_id         INTEGER,             -- hggc_api_calls.id of that call, NULL when not recorded
    api_start_ns   INTEGER,             -- when that call started (the work was enqueued), NULL: unknown
    graph_id       INTEGER,             -- graph that launched it, NULL: none
    graph_node_id  INTEGER,             -- its node there, NULL: none
    graph_exec_id  INTEGER,             -- the executable graph launched, NULL: none or unknown
    name_id        INTEGER,             -- kernels: strings, demangled name
    base_name_id   INTEGER,             -- kernels: strings, name without return type and parameters
    copy_kind      INTEGER,             -- memcpys: hggc_copy_kinds.id
    src_kind       INTEGER,             -- memcpys: hggc_memory_kinds.id
    dst_kind       INTEGER,             -- memcpys and memsets: hggc_memory_kinds.id
    bytes          INTEGER,             -- memcpys and memsets: size
    hgtx_range_id  INTEGER              -- hgtx_events.id of the innermost push/pop range open on the
                                        -- launching thread when the API call started, NULL: none
);

-- The activities summed by everything the stream percentage tree splits on,
-- so that the whole-report tree (stats, export) reads a few rows instead of
-- sorting every activity; a --filter-time window inside the activities' span
-- still clips the activities themselves.
CREATE TABLE ppu_activity_groups (
    kind          INTEGER NOT NULL, -- as ppu_activities
    pid           INTEGER NOT NULL,
    physical      INTEGER NOT NULL,
    context       INTEGER NOT NULL,
    stream        INTEGER NOT NULL,
    graph_id      INTEGER,
    graph_exec_id INTEGER,
    copy_kind     INTEGER,
    base_name_id  INTEGER,          -- kernels: the base-name group
    hgtx_group    TEXT,             -- kernels: the HGTX group, 'h<domain id>:<text id>', 'h' for none
    hgtx_range_id INTEGER,          -- the least hgtx_range_id of the group's activities
    first_start   INTEGER NOT NULL, -- the earliest start of the group's activities
    last_end      INTEGER NOT NULL, -- the latest end
    duration_ns   INTEGER NOT NULL, -- sum of the activities' durations
    count         INTEGER NOT NULL  -- activities
);

-- The activities as the timeline export reads them, written at import in the
-- scan that sums ppu_activity_groups: the columns it needs (id, kind, physical,
-- pid, context, stream, start_ns, end_ns, name_id, copy_kind, base_name_id, the
-- range's hgtx_events.domain_id and text_id, graph_id, graph_exec_id, api_id,
-- source_id, api_start_ns) of up to 4096 activities a row, in id order.  Per
-- activity: a varint whose bit i says field i is NULL, then each other field
-- as the zigzag varint of its difference from that field's last value in the
-- page (analyze/activity_pages.h).  The export decodes them instead of
-- stepping through ppu_activities; without them (rows not summing to
-- ppu_activities' count) it reads ppu_activities.  Derived like
-- ppu_activity_groups: whoever edits ppu_activities deletes them.
CREATE TABLE ppu_activity_pages (
    first_id INTEGER PRIMARY KEY, -- ppu_activities.id of the page's first activity
    rows     INTEGER NOT NULL,    -- activities in the page
    data     BLOB NOT NULL        -- the activities, packed
);

-- The calls as the timeline export reads them, written at import as the
-- calls are: id, pid, tid, start_ns, end_ns, name_id, result, correlation_id
-- of up to 4096 calls a row, in id order, packed as ppu_activity_pages.  The
-- export decodes them unless it names launches by their kernel
-- (--api-name-mode kernel) or they do not hold every call; whoever edits
-- hggc_api_calls' columns above deletes them.
CREATE TABLE hggc_api_pages (
    first_id INTEGER PRIMARY KEY, -- hggc_api_calls.id of the page's first call
    rows     INTEGER NOT NULL,    -- calls in the page
    data     BLOB NOT NULL        -- the calls, packed
);

-- Which HGTX ranges enclose which HGGC API calls: the call started inside the
-- range on the range's (starting) thread.  A call belongs to every enclosing range.
CREATE TABLE hggc_api_ranges (
    api_id   INTEGER NOT NULL, -- hggc_api_calls.id
    range_id INTEGER NOT NULL, -- hgtx_events.id (push/pop or start/end range)
    kind     INTEGER NOT NULL, -- the range's kind (1 push/pop, 2 start/end)
    level    INTEGER           -- push/pop: its nesting level, NULL for start/end
);

-- HGTX ranges projected onto the streams: [first start, last end] of the
-- device work of the HGGC calls made inside the range on its thread, and of
-- the graph nodes created inside it (stream capture), per stream.
CREATE TABLE hgtx_gpu_projection (
    range_id INTEGER NOT NULL, -- hgtx_events.id
    pid      INTEGER NOT NULL, -- process of the work
    physical INTEGER NOT NULL, -- the machine's device index
    context  INTEGER NOT NULL, -- context id
    stream   INTEGER NOT NULL, -- stream id
    start_ns INTEGER NOT NULL, -- first work starts
    end_ns   INTEGER NOT NULL, -- last work ends
    op_count INTEGER NOT NULL, -- device activities projected
    PRIMARY KEY (range_id, pid, context, stream)
) WITHOUT ROWID;

-- Dependencies between device activities (and of host waits on them), as the
-- manual's dependency view shows them (asys-deps).  Stream order is the order in
-- which the work was enqueued (its API calls); a graph launch is one unit of
-- its stream, its nodes follow the graph's edges (through the nodes that ran no
-- device work: host functions, empty and event nodes).  Event dependencies keep, per
-- waiting activity and depended-on stream, only the last record, and never one
-- of the waiter's own stream.
CREATE TABLE ppu_deps (
    id            INTEGER PRIMARY KEY, -- dependency id
    kind          INTEGER NOT NULL,    -- 1 stream order, 2 legacy default stream order,
                                       -- 3 event (cudaEventRecord on a stream, cudaStreamWaitEvent
                                       --   on another), 4 graph edge, 5 host wait (synchronize)
    activity_id   INTEGER,             -- ppu_activities.id that waits; NULL for host waits
    sync_id       INTEGER,             -- host waits: ppu_syncs.id of the waiting call;
                                       -- events: ppu_syncs.id of the stream wait
    depends_on    INTEGER NOT NULL,    -- ppu_activities.id waited for
    record_api_id INTEGER,             -- events: hggc_api_calls.id of the cudaEventRecord
    wait_api_id   INTEGER,             -- events and host waits: hggc_api_calls.id of the waiting call
    effective     INTEGER NOT NULL,    -- 1: still unresolved when the waiter was enqueued (its launch
                                       -- call started) or, for host waits, when the wait began
    delay_ns      INTEGER NOT NULL     -- how long after that point it resolved (0 when it already had)
);

-- A display name for every activity: the demangled kernel name, or the
-- operation as nsys names it ('[CUDA memcpy Host-to-Device]', '[CUDA memset]',
-- '[CUDA graph 14]').
CREATE VIEW ppu_activity_names AS
SELECT p.id,
       CASE p.kind WHEN 1 THEN (SELECT value FROM strings WHERE id = p.name_id)
                   WHEN 2 THEN '[CUDA memcpy ' || COALESCE((SELECT direction FROM hggc_copy_kinds
                                                           WHERE id = p.copy_kind), 'Unknown')
                               || ']'
                   WHEN 3 THEN '[CUDA memset]'
                   ELSE '[CUDA graph ' || p.graph_id || ']' END AS name
FROM ppu_activities AS p;

-- Host <-> device: each API call with the device activities it caused.
CREATE VIEW hggc_api_activities AS
SELECT a.id AS api_id, p.id AS activity_id, p.kind, a.pid, a.tid, a.correlation_id,
       a.start_ns AS api_start_ns, a.end_ns AS api_end_ns, p.start_ns, p.end_ns, p.physical,
       p.context, p.stream
FROM ppu_activities AS p JOIN hggc_api_calls AS a ON a.id = p.api_id;

-- after load: built once the rows are in (inserting into indexed tables is
-- several times slower)
CREATE INDEX hggc_api_calls_by_start ON hggc_api_calls (start_ns);
CREATE INDEX hggc_api_calls_by_thread ON hggc_api_calls (pid, tid, start_ns);
CREATE INDEX ppu_graph_nodes_by_correlation ON ppu_graph_nodes (pid, correlation_id);
CREATE INDEX ppu_graph_nodes_by_original ON ppu_graph_nodes (pid, original_node_id);
CREATE INDEX ppu_graph_launches_by_correlation ON ppu_graph_launches (pid, correlation_id);
CREATE INDEX hggc_api_calls_by_correlation ON hggc_api_calls (pid, correlation_id);
CREATE INDEX ppu_memory_by_address ON ppu_memory (pid, address, timestamp_ns);
CREATE INDEX ppu_kernels_by_start ON ppu_kernels (start_ns);
CREATE INDEX ppu_memcpys_by_start ON ppu_memcpys (start_ns);
