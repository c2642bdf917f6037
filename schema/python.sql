-- Python (--python-sampling): the interpreters' code objects and stack
-- samples (analyze/import_python.c).  A Python frame is a row of frames (its
-- function, file and current line; its module row is the source file) and a
-- sampled stack a row of callchains, so the call trees and flame outputs read
-- them like native stacks (source "python").  Conventions: schema/core.sql.

-- Code objects: one per function of a process image.
CREATE TABLE python_code (
    id         INTEGER PRIMARY KEY,
    pid        INTEGER NOT NULL,
    name_id    INTEGER NOT NULL, -- strings: qualified name (Class.method)
    file_id    INTEGER NOT NULL, -- strings: co_filename
    module_id  INTEGER NOT NULL, -- strings: the module (__name__)
    first_line INTEGER NOT NULL  -- co_firstlineno
);

-- One row per thread per sample: the thread's Python stack at that time.
CREATE TABLE python_samples (
    ns           INTEGER NOT NULL,
    pid          INTEGER NOT NULL,
    tid          INTEGER NOT NULL, -- OS thread id (0: a thread the sampler could not name)
    callchain_id INTEGER NOT NULL, -- callchains.id: level 0 the innermost frame
    code_id      INTEGER NOT NULL, -- python_code.id of the innermost frame
    line         INTEGER NOT NULL  -- its current line
);

-- What the sampler of each interpreter did.
CREATE TABLE python_status (
    pid     INTEGER NOT NULL,
    ns      INTEGER NOT NULL,
    status  TEXT NOT NULL, -- sampling, aliased interpreter, unsupported, stopped, tracing,
                           -- tracing off (function tracing)
    version TEXT,          -- the interpreter's version
    detail  TEXT           -- the interpreter's name, why not, or the sampler's counts
);

-- after load
CREATE INDEX python_samples_by_time ON python_samples (ns);
