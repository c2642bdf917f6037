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
    function_id INTEGER,             -- strings: function name, NULL when no symbol covers it;
                                     -- 'NAME (inlined)': a function inlined at this address,
                                     -- a frame of its own before its caller's (same address)
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

-- Each call stack as text, for reports: its frames from the innermost
-- outwards, demangled, joined by ' <- ' (an address where no symbol covers
-- it), and its call site: the first frame outside the CUDA runtime and driver
-- libraries (libcuda*, libcupti*), which for any other stack is the first.
CREATE VIEW callchain_stacks AS
SELECT c.id AS callchain_id,
       (SELECT group_concat(frame, ' <- ') FROM (
            SELECT COALESCE(demangle(fs.value), printf('0x%x', f.address)) AS frame
            FROM callchain_frames AS cf JOIN frames AS f ON f.id = cf.frame_id
            LEFT JOIN strings AS fs ON fs.id = f.function_id
            WHERE cf.callchain_id = c.id ORDER BY cf.level)) AS stack,
       (SELECT COALESCE(demangle(fs.value), printf('0x%x', f.address))
        FROM callchain_frames AS cf JOIN frames AS f ON f.id = cf.frame_id
        LEFT JOIN strings AS fs ON fs.id = f.function_id
        LEFT JOIN modules AS m ON m.id = f.module_id
        LEFT JOIN strings AS mp ON mp.id = m.path_id
        WHERE cf.callchain_id = c.id
          AND COALESCE(mp.value, '') NOT GLOB '*/libcuda*'
          AND COALESCE(mp.value, '') NOT GLOB '*/libcupti*'
        ORDER BY cf.level LIMIT 1) AS call_site
FROM callchains AS c;

