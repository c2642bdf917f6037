-- asys analysis database (NAME.sqlite, built from NAME.asys-rep by libasys-analyze).
--
-- Every time is nanoseconds of CLOCK_MONOTONIC on the recording host; the
-- session's start is session_info 'start_ns'.  Text is interned once in
-- `strings`; columns ending in _id that name text point there.  pid and tid
-- are plain columns.  Bump ASYS_SCHEMA_VERSION (analyze/report_db.h) with
-- any change here: a cached database of another version is rebuilt.

-- What this database was built from; a mismatch with the report rebuilds it.
CREATE TABLE asys_cache (
    schema_version  INTEGER NOT NULL, -- ASYS_SCHEMA_VERSION of the builder
    report_id       TEXT NOT NULL,    -- manifest report_id
    report_size     INTEGER NOT NULL, -- bytes of the .asys-rep
    report_mtime_ns INTEGER NOT NULL, -- its modification time
    asys_version    TEXT NOT NULL     -- version of the tool that built it
);

-- Facts about the session, from manifest.json: key/value pairs such as
-- start_ns, end_ns, duration_ns, command, hostname, clock_kind.
CREATE TABLE session_info (
    key   TEXT PRIMARY KEY, -- name of the fact
    value ANY               -- its value (INTEGER for times and counts)
) WITHOUT ROWID;

-- Interned text.
CREATE TABLE strings (
    id    INTEGER PRIMARY KEY, -- referenced by *_id columns
    value TEXT NOT NULL        -- UTF-8 text
);

-- One row per traced process (the last image it exec'd names it).
CREATE TABLE processes (
    pid        INTEGER PRIMARY KEY, -- process id
    ppid       INTEGER,             -- parent process id
    name_id    INTEGER,             -- strings: executable file name
    exe_id     INTEGER,             -- strings: executable path
    cmdline_id INTEGER,             -- strings: arguments joined by spaces
    start_ns   INTEGER,             -- first record of the process
    end_ns     INTEGER,             -- last record of the process
    forked     INTEGER NOT NULL     -- 1: a fork child that never exec'd
);

-- One row per traced thread.
CREATE TABLE threads (
    pid      INTEGER NOT NULL, -- process id
    tid      INTEGER NOT NULL, -- thread id (gettid)
    name_id  INTEGER,          -- strings: HGTX name if the program named it, else comm
    start_ns INTEGER,          -- first record of the thread
    end_ns   INTEGER,          -- last record of the thread
    is_main  INTEGER NOT NULL, -- 1 for the process's main thread (tid = pid)
    PRIMARY KEY (pid, tid)
) WITHOUT ROWID;

-- The segments of the report and what reading them found.
CREATE TABLE segments (
    id              INTEGER PRIMARY KEY, -- order of import
    file            TEXT NOT NULL,       -- archive member name
    pid             INTEGER,             -- writer's process
    tid             INTEGER,             -- writer's thread
    collector       TEXT,                -- 'thread' or 'launcher'
    records         INTEGER NOT NULL,    -- records imported
    bytes           INTEGER NOT NULL,    -- segment size
    dropped_records INTEGER NOT NULL,    -- records the writer lost (buffer limit, re-entry)
    dropped_bytes   INTEGER NOT NULL,    -- bytes they would have taken
    error           TEXT                 -- why the rest of the segment was unreadable, or NULL
);

-- Time windows in which records were lost (from DROP records).
CREATE TABLE drops (
    pid      INTEGER NOT NULL, -- process
    tid      INTEGER NOT NULL, -- thread
    start_ns INTEGER NOT NULL, -- first loss
    end_ns   INTEGER NOT NULL, -- recording resumed
    records  INTEGER NOT NULL, -- records lost
    bytes    INTEGER NOT NULL  -- bytes lost
);

-- Records imported per collector family ('core', 'hgtx').
CREATE TABLE collector_records (
    collector TEXT PRIMARY KEY, -- record family
    records   INTEGER NOT NULL  -- count
) WITHOUT ROWID;

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
    payload,                           -- INTEGER or REAL by payload_type (no type: no conversion)
    nesting_level INTEGER,             -- push/pop: 0 = outermost on its thread and domain
    parent_id     INTEGER              -- push/pop: enclosing range's id
);

-- Loaded objects (executable, shared libraries) of a process image.
CREATE TABLE modules (
    id            INTEGER PRIMARY KEY, -- referenced by frames.module_id
    pid           INTEGER NOT NULL,    -- process
    path_id       INTEGER NOT NULL,    -- strings: file path
    start_address INTEGER NOT NULL,    -- lowest mapped address
    end_address   INTEGER NOT NULL,    -- one past the highest
    load_bias     INTEGER NOT NULL,    -- run-time address minus ELF address
    build_id      TEXT                 -- GNU build id in hex, NULL when none
);

-- Distinct stack frames: a return address in a process, symbolized at finalize.
CREATE TABLE frames (
    id          INTEGER PRIMARY KEY, -- referenced by callchain_frames.frame_id
    pid         INTEGER NOT NULL,    -- process
    address     INTEGER NOT NULL,    -- return address
    module_id   INTEGER,             -- modules.id, NULL when outside every known object
    function_id INTEGER,             -- strings: function name, NULL when no symbol covers it
    file_id     INTEGER,             -- strings: source file, NULL without line information
    line        INTEGER              -- source line, NULL without line information
);

-- Call stacks, shared by every collector that records them (OSRT calls).
CREATE TABLE callchains (
    id    INTEGER PRIMARY KEY, -- referenced by *.callchain_id
    pid   INTEGER NOT NULL,    -- process
    depth INTEGER NOT NULL     -- frames
);

-- The frames of each call stack.
CREATE TABLE callchain_frames (
    callchain_id INTEGER NOT NULL, -- callchains.id
    level        INTEGER NOT NULL, -- 0: the function that made the call, 1: its caller, ...
    frame_id     INTEGER NOT NULL, -- frames.id
    PRIMARY KEY (callchain_id, level)
) WITHOUT ROWID;

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
    state    TEXT NOT NULL,    -- 'Possibly Running' or 'Possibly Waiting'
    start_ns INTEGER NOT NULL, -- interval start
    end_ns   INTEGER NOT NULL  -- interval end
);
