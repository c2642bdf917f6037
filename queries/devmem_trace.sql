-- name: devmem_trace
-- title: Device and Pinned Memory Trace
-- description: Every device, managed and pinned allocation made through HGGC and every
--   allocation call that failed, in time order: kind, bytes, address, device, stream, the
--   API call, when the block was released, the error of a failed call, and the call stack
--   (--hggc-memory-usage).  Times are relative to the session start.  --filter-time,
--   --pid as in devmem_sum.
-- requires: ppu_memory: no device or pinned memory records (record with -t hggc)
-- columns: Time (ns), Kind, Bytes, Address, Device, Stream, PID, TID, API, Released (ns),
--   Failed, Error, Call Stack
SELECT a.timestamp_ns - :session_start AS "Time (ns)",
       k.name AS "Kind",
       a.bytes AS "Bytes",
       CASE WHEN a.failed THEN NULL ELSE printf('0x%x', a.address) END AS "Address",
       COALESCE(d.physical_index, a.device) AS "Device",
       a.stream AS "Stream",
       a.pid AS "PID",
       a.tid AS "TID",
       api.value AS "API",
       a.released_ns - :session_start AS "Released (ns)",
       a.failed AS "Failed",
       a.error AS "Error",
       (SELECT stack FROM callchain_stacks WHERE callchain_id = a.callchain_id) AS "Call Stack"
FROM ppu_allocations AS a
JOIN hggc_memory_kinds AS k ON k.id = a.memory_kind
LEFT JOIN ppu_devices AS d ON d.pid = a.pid AND d.device = a.device
LEFT JOIN strings AS api ON api.id = a.api_name_id
WHERE a.timestamp_ns >= :filter_start AND a.timestamp_ns <= :filter_end
  AND (:pid < 0 OR a.pid = :pid)
ORDER BY a.timestamp_ns, a.id;
