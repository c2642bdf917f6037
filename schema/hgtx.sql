-- HGTX (NVTX) annotations: ranges, marks, domains, categories (analyze/import_hgtx.c).
-- Conventions: schema/core.sql.

-- HGTX (NVTX) domains.  id 0 is the default domain.
CREATE TABLE hgtx_domains (
    id           INTEGER PRIMARY KEY, -- referenced by hgtx_events.domain_id
    pid          INTEGER,             -- process that created it (NULL for the default)
    name_id      INTEGER,             -- strings: domain name (NULL for the default)
    created_ns   INTEGER,             -- nvtxDomainCreate
    destroyed_ns INTEGER              -- nvtxDomainDestroy, or NULL
);

-- HGTX category names (nvtxNameCategory, nvtxDomainNameCategory).
CREATE TABLE hgtx_categories (
    domain_id INTEGER NOT NULL, -- hgtx_domains.id
    category  INTEGER NOT NULL, -- category number
    name_id   INTEGER NOT NULL, -- strings: its name (the last one given)
    PRIMARY KEY (domain_id, category)
) WITHOUT ROWID;

-- HGTX ranges and marks.
CREATE TABLE hgtx_events (
    id            INTEGER PRIMARY KEY, -- event id
    kind          INTEGER NOT NULL,    -- 1 push/pop range, 2 start/end range, 3 mark
    start_ns      INTEGER NOT NULL,    -- push, start or mark time
    end_ns        INTEGER,             -- pop or end time (= start_ns for marks); NULL: never ended
    pid           INTEGER NOT NULL,    -- process
    tid           INTEGER NOT NULL,    -- thread that started it
    end_tid       INTEGER,             -- start/end ranges: thread that ended it
    domain_id     INTEGER NOT NULL,    -- hgtx_domains.id
    text_id       INTEGER,             -- strings: message
    category      INTEGER,             -- category number, NULL when none
    color         INTEGER,             -- ARGB color, NULL when none
    payload_type  INTEGER,             -- NVTX payload type (1 u64, 2 i64, 3 double, 4 u32, 5 i32, 6 float)
    payload       NUMBER BLOB,         -- INTEGER or REAL by payload_type; a uint64 above INT64_MAX
                                       -- (SQLite's integers are signed) as TEXT of its decimal
                                       -- digits.  The type "NUMBER BLOB" converts nothing (BLOB
                                       -- affinity) and tells the json writers that its TEXT digits
                                       -- are a number (analyze/output_format.h)
    nesting_level INTEGER,             -- push/pop: 0 = outermost on its thread and domain
    parent_id     INTEGER,             -- push/pop: enclosing range's id
    deferred      INTEGER              -- 1: nvtxEventSubmit/BatchSubmit, its times from its payload
);

-- ---- the payload extension (nvToolsExtPayload.h) ----------------------------

-- Payload schemas and enums as registered (nvtxPayloadSchemaRegister,
-- nvtxPayloadEnumRegister).  schema_id is the id the program uses, per
-- process and domain.
CREATE TABLE hgtx_payload_schemas (
    id          INTEGER PRIMARY KEY, -- referenced by hgtx_payload_entries.schema_row
    pid         INTEGER NOT NULL,    -- process that registered it
    domain_id   INTEGER NOT NULL,    -- hgtx_domains.id
    schema_id   INTEGER NOT NULL,    -- as returned to the program
    kind        TEXT NOT NULL,       -- 'schema' or 'enum'
    name_id     INTEGER,             -- strings: its name
    schema_type INTEGER,             -- schemas: 1 static, 2 dynamic, 3 union, 4 union with selector
    flags       INTEGER,             -- NVTX_PAYLOAD_SCHEMA_FLAG_*
    static_size INTEGER,             -- payloadStaticSize (enums: the enum's size)
    entries     INTEGER NOT NULL     -- entries kept (entries_given when it was cut)
);

-- Their entries: fields of a schema, or values of an enum.
CREATE TABLE hgtx_payload_entries (
    schema_row     INTEGER NOT NULL, -- hgtx_payload_schemas.id
    entry          INTEGER NOT NULL, -- 0, 1, ... in registration order
    name_id        INTEGER,          -- strings: field or enum value name
    description_id INTEGER,          -- strings
    type           INTEGER,          -- schemas: NVTX_PAYLOAD_ENTRY_TYPE_* or a schema id
    type_name      TEXT,             -- 'int32', 'cstring', ... (NULL: a schema id)
    flags          INTEGER,          -- schemas: NVTX_PAYLOAD_ENTRY_FLAG_*
    detail         INTEGER,          -- schemas: arrayOrUnionDetail
    offset         INTEGER,          -- schemas: as registered (0 after the first: natural)
    unit_id        INTEGER,          -- strings: counter semantics' unit
    value          INTEGER,          -- enums: the value
    PRIMARY KEY (schema_row, entry)
) WITHOUT ROWID;

-- Binary payloads as recorded, one per nvtxPayloadData_t.
CREATE TABLE hgtx_payloads (
    id        INTEGER PRIMARY KEY,
    event_id  INTEGER,          -- hgtx_events.id (NULL: its event was not found)
    at        TEXT NOT NULL,    -- 'begin' (push, start, mark, the Ex call) or 'end' (pop, end)
    payload   INTEGER NOT NULL, -- index in its call
    pid       INTEGER NOT NULL,
    domain_id INTEGER NOT NULL, -- hgtx_domains.id
    schema_id INTEGER NOT NULL, -- registered schema, entry type, 1022 referenced, 1023 raw
    flags     INTEGER NOT NULL, -- 1 cut, 2 strings replaced by ids, 4 size unknown
    data      BLOB              -- its bytes
);

-- Payloads decoded by their schema: one row per value (nested fields as
-- outer.inner, array elements as name[i]).  value is INTEGER, REAL or TEXT;
-- a uint64 above INT64_MAX as TEXT of its digits (see hgtx_events.payload).
CREATE TABLE hgtx_payload_fields (
    payload_id INTEGER NOT NULL, -- hgtx_payloads.id
    field      TEXT NOT NULL,    -- path of the value
    type       TEXT,             -- 'int32', 'double', 'string', 'enum', 'address', ...
    value      NUMBER BLOB
);

-- Scopes and time domains (nvtxScopeRegister, nvtxTimeDomainRegister) and
-- what relates a time domain to asys's clock (timer sources, sync points,
-- conversion factors).
CREATE TABLE hgtx_scopes (
    pid       INTEGER NOT NULL,
    domain_id INTEGER NOT NULL,
    scope_id  INTEGER NOT NULL,
    parent_id INTEGER,          -- parent scope
    path_id   INTEGER           -- strings: the path
);

CREATE TABLE hgtx_time_domains (
    pid            INTEGER NOT NULL,
    domain_id      INTEGER NOT NULL,
    time_domain_id INTEGER NOT NULL,
    scope_id       INTEGER,
    timestamp_type INTEGER,     -- NVTX_TIMESTAMP_TYPE_*
    timer_flags    INTEGER,
    ticks_per_s    INTEGER,     -- 0: unknown
    timer_start    INTEGER      -- NVTX_TIMER_START_*
);

CREATE TABLE hgtx_time_points (
    pid       INTEGER NOT NULL,
    domain_id INTEGER NOT NULL,
    kind      TEXT NOT NULL,    -- 'timer source' (source, asys ns), 'sync point', 'conversion'
    source    INTEGER NOT NULL, -- time domain or timestamp type
    target    INTEGER,          -- the other one (timer source: NULL, asys's clock)
    source_ts INTEGER,
    target_ts INTEGER,          -- timer source: CLOCK_MONOTONIC ns
    slope     REAL              -- conversion
);

-- ---- the counters extension (nvToolsExtCounters.h) --------------------------

CREATE TABLE hgtx_counters (
    id             INTEGER PRIMARY KEY, -- referenced by hgtx_counter_values.counter
    pid            INTEGER NOT NULL,
    domain_id      INTEGER NOT NULL,    -- hgtx_domains.id
    counter_id     INTEGER NOT NULL,    -- as returned to the program
    name_id        INTEGER,             -- strings
    description_id INTEGER,             -- strings
    schema_id      INTEGER,             -- layout of a sample: a schema or an entry type
    scope_id       INTEGER,
    unit_id        INTEGER,             -- strings
    flags          INTEGER,             -- NVTX_COUNTER_FLAG_*
    limit_type     INTEGER,             -- NVTX_COUNTER_LIMIT_*
    limit_min      NUMBER BLOB,
    limit_max      NUMBER BLOB,
    registered_ns  INTEGER
);

-- Samples: one row per value (a counter group gives one row per field).
CREATE TABLE hgtx_counter_values (
    counter INTEGER NOT NULL, -- hgtx_counters.id
    ts_ns   INTEGER NOT NULL, -- when sampled (a batch: its own timestamps)
    tid     INTEGER,          -- thread that sampled it
    field   TEXT,             -- a group's field; NULL for a single counter
    value   NUMBER BLOB,      -- NULL: no value (see missing)
    missing TEXT              -- nvtxCounterSampleNoValue: 'zero', 'unchanged', 'unavailable'
);

-- ---- the memory extension (nvToolsExtMem.h) ----------------------------------

CREATE TABLE hgtx_mem_heaps (
    id              INTEGER PRIMARY KEY, -- referenced by hgtx_mem_regions.heap_id
    pid             INTEGER NOT NULL,
    domain_id       INTEGER NOT NULL,
    handle          INTEGER NOT NULL,    -- as returned to the program (0: process-wide)
    usage           INTEGER,             -- NVTX_MEM_HEAP_USAGE_*
    type            INTEGER,             -- NVTX_MEM_TYPE_*
    address         INTEGER,             -- its range, when given
    size            INTEGER,
    name_id         INTEGER,             -- strings
    category        INTEGER,
    registered_ns   INTEGER,
    unregistered_ns INTEGER,
    resets          INTEGER NOT NULL     -- nvtxMemHeapReset calls
);

-- Regions over time: a resize or a new name ends one row and starts the next.
CREATE TABLE hgtx_mem_regions (
    id       INTEGER PRIMARY KEY,
    pid      INTEGER NOT NULL,
    heap_id  INTEGER,          -- hgtx_mem_heaps.id
    handle   INTEGER,          -- region handle returned to the program
    address  INTEGER NOT NULL,
    size     INTEGER NOT NULL,
    type     INTEGER,          -- NVTX_MEM_TYPE_*
    name_id  INTEGER,          -- strings
    category INTEGER,
    start_ns INTEGER NOT NULL,
    end_ns   INTEGER,          -- NULL: still registered at the end
    ended_by TEXT              -- 'unregister', 'resize', 'name', 'heap reset', 'heap unregister'
);

-- Every call of the memory extension, as made.
CREATE TABLE hgtx_mem_calls (
    ns        INTEGER NOT NULL,
    pid       INTEGER NOT NULL,
    tid       INTEGER NOT NULL,
    domain_id INTEGER NOT NULL,
    call      TEXT NOT NULL,    -- 'heap register', 'regions register', 'permissions assign', ...
    heap      INTEGER,          -- heap handle
    address   INTEGER,          -- region address or handle
    size      INTEGER,
    value     INTEGER,          -- region/permissions handle, stream (see FORMAT.md)
    flags     INTEGER,
    name_id   INTEGER
);

-- ---- named resources and user synchronization ---------------------------------

-- nvtxName{Cu,Cuda,Cl}* and nvtxDomainResourceCreate/Destroy.
CREATE TABLE hgtx_resources (
    id           INTEGER PRIMARY KEY,
    pid          INTEGER NOT NULL,
    domain_id    INTEGER NOT NULL,
    type         INTEGER NOT NULL, -- NVTX_RESOURCE_TYPE_* (class << 16 | index)
    type_name    TEXT,             -- 'cuda stream', 'cudart device', 'pthread mutex', ...
    identifier   INTEGER,          -- the object: pointer, handle, ordinal, thread id
    handle       INTEGER,          -- nvtxResourceHandle_t; NULL for a name
    cupti_id     INTEGER,          -- streams and contexts: CUPTI's id (ppu_streams.stream)
    name_id      INTEGER,          -- strings
    created_ns   INTEGER NOT NULL,
    destroyed_ns INTEGER
);

CREATE TABLE hgtx_sync_objects (
    id           INTEGER PRIMARY KEY, -- referenced by hgtx_sync_ranges.object_id
    pid          INTEGER NOT NULL,
    domain_id    INTEGER NOT NULL,
    handle       INTEGER NOT NULL,
    name_id      INTEGER,
    created_ns   INTEGER,
    destroyed_ns INTEGER
);

-- Per thread: 'acquire' from AcquireStart to AcquireSuccess/Failed (outcome),
-- 'held' from AcquireSuccess to Releasing.
CREATE TABLE hgtx_sync_ranges (
    object_id INTEGER NOT NULL,
    pid       INTEGER NOT NULL,
    tid       INTEGER NOT NULL,
    kind      TEXT NOT NULL,    -- 'acquire' or 'held'
    start_ns  INTEGER NOT NULL,
    end_ns    INTEGER,          -- NULL: not ended
    outcome   TEXT              -- acquire: 'success' or 'failed'
);

-- Names of PPU objects given with NVTX (the latest, driver or runtime call),
-- by CUPTI's stream id and by device ordinal.
CREATE VIEW ppu_stream_names AS
    SELECT pid, cupti_id AS stream, name_id FROM hgtx_resources AS r
    WHERE type IN (262147, 327681) AND cupti_id IS NOT NULL AND name_id IS NOT NULL
      AND created_ns = (SELECT MAX(created_ns) FROM hgtx_resources AS l
                        WHERE l.pid = r.pid AND l.cupti_id = r.cupti_id
                          AND l.type IN (262147, 327681) AND l.name_id IS NOT NULL);
CREATE VIEW ppu_device_names AS
    SELECT pid, identifier AS device, name_id FROM hgtx_resources AS r
    WHERE type IN (262145, 327680) AND name_id IS NOT NULL
      AND created_ns = (SELECT MAX(created_ns) FROM hgtx_resources AS l
                        WHERE l.pid = r.pid AND l.identifier = r.identifier
                          AND l.type IN (262145, 327680) AND l.name_id IS NOT NULL);

-- after load: built once the rows are in (inserting into indexed tables is
-- several times slower)
CREATE INDEX hgtx_events_by_start ON hgtx_events (start_ns);
CREATE INDEX hgtx_payloads_by_event ON hgtx_payloads (event_id);
CREATE INDEX hgtx_payload_fields_by_payload ON hgtx_payload_fields (payload_id);
CREATE INDEX hgtx_counter_values_by_counter ON hgtx_counter_values (counter, ts_ns);

-- The text of each range, for naming work by the range it ran in (nsys's
-- :nvtx-name: "RANGE:kernel").
CREATE VIEW hgtx_range_texts AS
    SELECT e.id, s.value AS text FROM hgtx_events AS e JOIN strings AS s ON s.id = e.text_id;
