-- ACDNN / ACBLAS: cuDNN and cuBLAS (cuBLASLt, cuBLASXt) library calls
-- (analyze/import_acompute.c).  Conventions: schema/core.sql.

-- The entry points each process called, and how it found them.
CREATE TABLE acompute_apis (
    pid       INTEGER NOT NULL, -- process
    library   INTEGER NOT NULL, -- 1 cuDNN, 2 cuBLAS, 3 cuBLASLt, 4 cuBLASXt
    name_id   INTEGER NOT NULL, -- strings: function name (cublasSgemm_v2, cudnnConvolutionForward, ...)
    via_dlsym INTEGER NOT NULL, -- 1: the program resolved it with dlsym on the library's handle
    PRIMARY KEY (pid, name_id)
);

-- One row per library call (calls a library makes into another are rows too,
-- with their depth and parent).
CREATE TABLE acompute_calls (
    id           INTEGER PRIMARY KEY, -- call id
    start_ns     INTEGER NOT NULL,    -- call entry
    end_ns       INTEGER NOT NULL,    -- call return
    pid          INTEGER NOT NULL,    -- process
    tid          INTEGER NOT NULL,    -- thread
    domain       INTEGER NOT NULL,    -- 1 ACDNN (cuDNN), 2 ACBLAS (cuBLAS, cuBLASLt, cuBLASXt)
    library      INTEGER NOT NULL,    -- 1 cuDNN, 2 cuBLAS, 3 cuBLASLt, 4 cuBLASXt
    name_id      INTEGER NOT NULL,    -- strings: function name
    depth        INTEGER NOT NULL,    -- library calls around it on the thread (0: the outermost)
    parent_id    INTEGER,             -- acompute_calls.id of the call it was made in, NULL: none
    status       INTEGER,             -- the returned cudnnStatus_t / cublasStatus_t, NULL: none
    result       INTEGER,             -- another integer returned (a version, a size), NULL: none
    handle       INTEGER,             -- the library handle (the created one for XCreate), NULL: none
    stream       INTEGER,             -- cudaStream_t of the call (its argument, else the handle's), NULL: unknown
    stream_arg   INTEGER NOT NULL,    -- 1: the stream was an argument of the call
    unknown_handle INTEGER NOT NULL,  -- 1: a handle the process never created (or had destroyed)
    callchain_id INTEGER,             -- callchains.id when --acompute-backtrace-threshold captured a stack
    kernels      INTEGER NOT NULL DEFAULT 0, -- kernels launched in this call, not in a call it made
    device_ns    INTEGER NOT NULL DEFAULT 0  -- their device time and that of its copies and memsets
);

-- The device work each library call launched: the HGGC API calls made inside
-- it on its thread (the innermost library call takes them) and the kernels,
-- copies and memsets they caused (their correlation ids).
CREATE TABLE acompute_work (
    call_id        INTEGER NOT NULL, -- acompute_calls.id
    hggc_call_id   INTEGER NOT NULL, -- hggc_api_calls.id of the launch
    kind           INTEGER NOT NULL, -- 1 kernel, 2 memcpy, 3 memset
    activity_id    INTEGER NOT NULL, -- ppu_activities.id
    source_id      INTEGER NOT NULL, -- ppu_kernels.id / ppu_memcpys.id / ppu_memsets.id
    start_ns       INTEGER NOT NULL, -- device start
    end_ns         INTEGER NOT NULL, -- device end
    stream         INTEGER NOT NULL  -- stream id (ppu_streams)
);

-- after load
CREATE INDEX acompute_calls_by_thread ON acompute_calls (pid, tid, start_ns);
CREATE INDEX acompute_calls_by_start ON acompute_calls (start_ns);
