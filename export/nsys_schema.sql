-- asys-export -t sqlite --schema nsys: the tables of Nsight Systems' SQLite
-- export that nsys users' SQL reads, made from the analysis database (run on
-- a copy of it; the asys tables are dropped afterwards).  Names, columns and
-- enum values as nsys's "SQLite Export Schema Reference" documents them; times
-- in ns from the session start, as nsys writes them.  globalTid is
-- (pid << 24) | tid and globalPid is pid << 24, the serialization nsys's own
-- recipes decode (pid = globalTid >> 24 & 0xFFFFFF, tid = globalTid & 0xFFFFFF).
-- What does not map is left out: see docs/asys-export.md.

CREATE TEMP VIEW t0 AS SELECT (SELECT value FROM session_info WHERE key = 'start_ns') AS ns;

CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds SELECT id, value FROM strings;

CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames
SELECT name_id, 0, (pid << 24) | tid FROM threads WHERE name_id IS NOT NULL;

CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME
SELECT value, strftime('%Y-%m-%dT%H:%M:%fZ', value / 1e9, 'unixepoch'),
       strftime('%Y-%m-%dT%H:%M:%f', value / 1e9, 'unixepoch', 'localtime')
FROM session_info WHERE key = 'start_realtime_ns';

CREATE TABLE TARGET_INFO_GPU (
    vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
    totalMemory INTEGER, smCount INTEGER, uuid TEXT, cuDevice INTEGER,
    computeMajor INTEGER, computeMinor INTEGER, globalPid INTEGER);
INSERT INTO TARGET_INFO_GPU
SELECT 0, COALESCE(d.physical_index, d.device), s.value, NULL, d.global_memory_bytes,
       d.multiprocessors, d.uuid, d.device, d.compute_major, d.compute_minor, d.pid << 24
FROM ppu_devices AS d LEFT JOIN strings AS s ON s.id = d.name_id;

CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
SELECT a.start_ns - t0.ns, a.end_ns - t0.ns, CASE a.api WHEN 2 THEN 1 ELSE 0 END,
       (a.pid << 24) | a.tid, a.correlation_id, a.name_id, a.result, a.callchain_id
FROM hggc_api_calls AS a, t0 ORDER BY a.start_ns;

CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
    mangledName INTEGER, launchType INTEGER, registersPerThread INTEGER NOT NULL,
    gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
    blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
    staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
    graphNodeId INTEGER, graphId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
SELECT k.start_ns - t0.ns, k.end_ns - t0.ns, k.device, k.context, k.stream, k.correlation_id,
       k.pid << 24, p.name_id, p.base_name_id, k.mangled_name_id, k.launch_type,
       k.registers_per_thread, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
       k.static_shared_bytes, k.dynamic_shared_bytes, k.graph_node_id, k.graph_id
FROM ppu_kernels AS k
JOIN ppu_activities AS p ON p.kind = 1 AND p.source_id = k.id, t0
ORDER BY k.start_ns;

CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
    srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, graphNodeId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY
SELECT m.start_ns - t0.ns, m.end_ns - t0.ns, m.device, m.context, m.stream, m.correlation_id,
       m.pid << 24, m.bytes, m.copy_kind, m.src_kind, m.dst_kind, m.src_device, m.graph_node_id
FROM ppu_memcpys AS m, t0 ORDER BY m.start_ns;

CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
    graphNodeId INTEGER, memKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET
SELECT m.start_ns - t0.ns, m.end_ns - t0.ns, m.device, m.context, m.stream, m.correlation_id,
       m.pid << 24, m.value, m.bytes, m.graph_node_id, m.memory_kind
FROM ppu_memsets AS m, t0 ORDER BY m.start_ns;

CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
    contextId INTEGER NOT NULL, streamId INTEGER, correlationId INTEGER,
    globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
SELECT y.start_ns - t0.ns, y.end_ns - t0.ns,
       (SELECT c.device FROM ppu_contexts AS c WHERE c.pid = y.pid AND c.context = y.context),
       y.context, y.stream, y.correlation_id, y.pid << 24, y.type, y.event_id
FROM ppu_syncs AS y, t0 ORDER BY y.start_ns;

-- eventType: 34 NvtxMark, 59 NvtxPushPopRange, 60 NvtxStartEndRange (ENUM_NSYS_EVENT_TYPE);
-- text is NULL and textId set, as nsys does for registered and interned strings
CREATE TABLE NVTX_EVENTS (
    start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
    category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
    textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
    doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL);
INSERT INTO NVTX_EVENTS
SELECT e.start_ns - t0.ns, CASE WHEN e.kind = 3 THEN NULL ELSE e.end_ns - t0.ns END,
       CASE e.kind WHEN 1 THEN 59 WHEN 2 THEN 60 ELSE 34 END,
       CASE WHEN e.kind = 2 THEN e.id END, e.category, e.color, NULL, (e.pid << 24) | e.tid,
       CASE WHEN e.end_tid IS NOT NULL THEN (e.pid << 24) | e.end_tid END, e.text_id,
       e.domain_id,
       CASE WHEN e.payload_type = 1 THEN e.payload END,
       CASE WHEN e.payload_type = 2 THEN e.payload END,
       CASE WHEN e.payload_type = 3 THEN e.payload END,
       CASE WHEN e.payload_type = 4 THEN e.payload END,
       CASE WHEN e.payload_type = 5 THEN e.payload END,
       CASE WHEN e.payload_type = 6 THEN e.payload END
FROM hgtx_events AS e, t0
WHERE e.kind IN (1, 2, 3) AND (e.end_ns IS NOT NULL OR e.kind = 3)
ORDER BY e.start_ns;

-- eventClass 27: OS runtime calls (ENUM_NSYS_EVENT_CLASS, TRACE_PROCESS_EVENT_OS_RUNTIME)
CREATE TABLE OSRT_API (
    start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER);
INSERT INTO OSRT_API
SELECT o.start_ns - t0.ns, o.end_ns - t0.ns, 27, (o.pid << 24) | o.tid, o.id, o.name_id,
       COALESCE(o.result, 0), 0, o.callchain_id
FROM osrt_calls AS o, t0 ORDER BY o.start_ns;

CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEMCPY_OPER
SELECT id, 'CUDA_MEMCPY_KIND_' || upper(name), direction FROM hggc_copy_kinds;
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEM_KIND
SELECT id, 'CUDA_MEMOPR_MEMORY_KIND_' || upper(replace(name, ' ', '_')), name
FROM hggc_memory_kinds;
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUPTI_SYNC_TYPE
SELECT id, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_' || upper(replace(name, ' ', '_')), name
FROM hggc_sync_types;
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (34, 'NvtxMark', 'NVTX Mark'),
    (59, 'NvtxPushPopRange', 'NVTX PushPop Range'), (60, 'NvtxStartEndRange', 'NVTX StartEnd Range');
