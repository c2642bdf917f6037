-- Call stacks: loaded objects, frames and call chains, shared by every collector
-- that records stacks (analyze/import_stacks.c).  Conventions: schema/core.sql.

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
