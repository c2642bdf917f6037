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
    parent_id     INTEGER              -- push/pop: enclosing range's id
);

-- after load: built once the rows are in (inserting into indexed tables is
-- several times slower)
CREATE INDEX hgtx_events_by_start ON hgtx_events (start_ns);
