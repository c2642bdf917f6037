-- Heap tracing (--heap-memory-usage): the sampled allocations with their
-- frees (analyze/import_heap.c).  Conventions: schema/core.sql.

-- Sampled heap allocations.  With --heap-sampling-interval-bytes N a block
-- of s bytes was sampled with probability p = 1 - exp(-s/N); it stands for
-- s/p bytes and 1/p allocations (N = 1: p = 1, every allocation is here).
CREATE TABLE heap_allocations (
    id               INTEGER PRIMARY KEY, -- allocation id
    start_ns         INTEGER NOT NULL,    -- the allocating call returned
    end_ns           INTEGER,             -- the block was freed; NULL: never (still allocated
                                          -- when the process exited, exec'd or the recording ended)
    pid              INTEGER NOT NULL,    -- process
    tid              INTEGER NOT NULL,    -- allocating thread
    image            INTEGER NOT NULL,    -- process image (a new one at each exec; segments' process uid)
    address          INTEGER NOT NULL,    -- the block
    size             INTEGER NOT NULL,    -- bytes asked for
    weight_bytes     REAL NOT NULL,       -- bytes this sample stands for (size / p)
    weight_count     REAL NOT NULL,       -- allocations it stands for (1 / p)
    function_id      INTEGER NOT NULL,    -- strings: malloc, calloc, realloc, operator new, ...
    callchain_id     INTEGER,             -- callchains.id (level 0: the allocator's caller)
    free_tid         INTEGER,             -- the freeing thread
    free_function_id INTEGER              -- strings: free, realloc, operator delete, ...
);

-- after load
CREATE INDEX heap_allocations_by_start ON heap_allocations (start_ns);
