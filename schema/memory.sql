-- Memory: heap tracing (--heap-memory-usage), the sampled allocations with
-- their frees, and host memory samples (--host-memory-sampling)
-- (analyze/import_memory.c).  Conventions: schema/core.sql.

-- Sampled heap allocations.  With --heap-sampling-interval-bytes N a block
-- of s bytes was sampled with probability p = 1 - exp(-s/N); it stands for
-- s/p bytes and 1/p allocations (N = 1: p = 1, every allocation is here).
-- With --heap-report-interval MS a row stands for the sampled allocations
-- of one call stack and function over one of a thread's intervals that
-- were freed together (by one thread, in one of its intervals) or never:
-- address is NULL, samples counts them, size is the largest, start_ns and
-- end_ns are the ends of the intervals (the allocations and frees had
-- happened by then; times are good to MS).
CREATE TABLE heap_allocations (
    id               INTEGER PRIMARY KEY, -- allocation id
    start_ns         INTEGER NOT NULL,    -- the allocating call returned
    end_ns           INTEGER,             -- the block was freed; NULL: never (still allocated
                                          -- when the process exited, exec'd or the recording ended)
    pid              INTEGER NOT NULL,    -- process
    tid              INTEGER NOT NULL,    -- allocating thread
    image            INTEGER NOT NULL,    -- process image (a new one at each exec; segments' process uid)
    address          INTEGER,             -- the block; NULL: a row of aggregates
    size             INTEGER NOT NULL,    -- bytes asked for (aggregates: the largest block)
    weight_bytes     REAL NOT NULL,       -- bytes this sample stands for (size / p)
    weight_count     REAL NOT NULL,       -- allocations it stands for (1 / p)
    function_id      INTEGER NOT NULL,    -- strings: malloc, calloc, realloc, operator new, ...
    callchain_id     INTEGER,             -- callchains.id (level 0: the allocator's caller)
    free_tid         INTEGER,             -- the freeing thread
    free_function_id INTEGER,             -- strings: free, realloc, operator delete, ...
                                          -- (NULL for aggregates: not kept)
    samples          INTEGER NOT NULL DEFAULT 1 -- sampled allocations this row is (1 per event)
);

-- Resident set size and its high-water mark of the processes of the tree,
-- read by the launcher --host-memory-sampling-frequency times a second.
CREATE TABLE host_memory (
    ns        INTEGER NOT NULL, -- when it was read
    pid       INTEGER NOT NULL, -- process
    rss_bytes INTEGER NOT NULL, -- resident set size (VmRSS)
    hwm_bytes INTEGER NOT NULL  -- the largest it has been (VmHWM)
);

-- after load
CREATE INDEX host_memory_by_process ON host_memory (pid, ns);
CREATE INDEX heap_allocations_by_start ON heap_allocations (start_ns);
-- no index by block: only matching frees that came before their allocation
-- in the file needs one, and the importer makes it then (on 5 M rows it
-- cost more than the rest of the import)
