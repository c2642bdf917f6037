-- asys analysis database (NAME.sqlite, built from NAME.asys-rep by libasys-analyze):
-- the tables every report has (strings, processes, threads, segments).  Each
-- importer family has a file like this one (core.sql, stacks.sql, hgtx.sql,
-- osrt.sql, hggc.sql); indexes follow a line "-- after load".
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
-- start_ns, end_ns, duration_ns, command, hostname, clock_kind; and
-- import_derived_ns and import_deps_ns, the time this database's derived tables
-- and its dependency table took to build.
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
    dropped_records INTEGER NOT NULL,    -- records the writer lost, every cause
    dropped_bytes   INTEGER NOT NULL,    -- bytes they would have taken
    dropped_full    INTEGER,             -- of those: no room (--max-segment-size reached); NULL:
                                         --   a format 1 segment (no counts by cause)
    dropped_reentry INTEGER,             -- of those: events inside the tool's own work
    dropped_big     INTEGER,             -- of those: records larger than the format allows
    format_version  INTEGER,             -- the writer's format version
    lost_threads    INTEGER,             -- the first segment of an image: its threads that got no
                                         --   segment (out of file descriptors...), NULL: none
    lost_thread_records INTEGER,         -- the events those threads lost
    dropped_no_room INTEGER,             -- of the dropped records: the session could not give
                                         --   the segment more room (no descriptor, disk full)
    no_room_reason  TEXT,                -- why (strerror), or NULL
    lost_processes  INTEGER,             -- the first segment of an image: its fork children
                                         --   that got no segment at all, NULL: none
    lost_process_records INTEGER,        -- the events those processes lost
    lost_process_reason TEXT,            -- why (strerror), the last time
    lost_process_pid INTEGER,            -- the last of them
    error           TEXT                 -- why the rest of the segment was unreadable, or NULL
);

-- Time windows in which records were lost: from DROP records, and for a thread
-- whose buffer stayed full to its end (no DROP record fits there) one window
-- from its last kept record to the end of the session with the rest.
CREATE TABLE drops (
    pid      INTEGER NOT NULL, -- process
    tid      INTEGER NOT NULL, -- thread
    start_ns INTEGER NOT NULL, -- first loss
    end_ns   INTEGER NOT NULL, -- recording resumed
    records  INTEGER NOT NULL, -- records lost
    bytes    INTEGER NOT NULL  -- bytes lost
);

-- Capture windows of `asys profile --capture-range`: outside them nothing
-- but names was recorded (CAPTURE records; one row per window and process).
CREATE TABLE capture_ranges (
    pid          INTEGER NOT NULL, -- process
    window_index INTEGER NOT NULL, -- 0, 1, ... in the process
    trigger      TEXT NOT NULL,    -- 'hggc-profiler-api' or 'hgtx'
    name_id      INTEGER,          -- strings: the HGTX range that opened it
    start_ns     INTEGER,          -- opened (NULL: that record was lost)
    end_ns       INTEGER,          -- closed (NULL: open until the process ended)
    PRIMARY KEY (pid, window_index)
) WITHOUT ROWID;

-- What the import skipped or could not make sense of, one message each (a
-- damaged segment, a duplicate, a record past its end...); report_info lists
-- them.  The rows of the other tables are right for what was kept.
CREATE TABLE import_warnings (
    id      INTEGER PRIMARY KEY, -- order
    message TEXT NOT NULL        -- one line
);

-- Records imported per collector family ('core', 'hgtx').
CREATE TABLE collector_records (
    collector TEXT PRIMARY KEY, -- record family
    records   INTEGER NOT NULL  -- count
) WITHOUT ROWID;
