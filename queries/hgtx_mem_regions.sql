-- name: hgtx_mem_regions
-- alias: nvtx_mem_regions
-- title: HGTX Memory Regions
-- description: Heaps and regions a program's sub-allocator described with NVTX's
--   memory extension, over time: a region's row ends when it is resized, renamed,
--   unregistered or its heap is reset or unregistered (Ended By), and the next row
--   starts.  Times are relative to the session start; End is empty for regions still
--   registered when the program ended.
-- columns: Heap, Region, Address, Size (B), Start (ns), End (ns), Ended By, PID
SELECT COALESCE(hs.value, printf('heap %d', h.handle)) AS "Heap",
       rs.value AS "Region",
       printf('0x%x', r.address) AS "Address",
       r.size AS "Size (B)",
       r.start_ns - :session_start AS "Start (ns)",
       r.end_ns - :session_start AS "End (ns)",
       r.ended_by AS "Ended By",
       r.pid AS "PID"
FROM hgtx_mem_regions AS r
LEFT JOIN hgtx_mem_heaps AS h ON h.id = r.heap_id
LEFT JOIN strings AS hs ON hs.id = h.name_id
LEFT JOIN strings AS rs ON rs.id = r.name_id
WHERE COALESCE(r.end_ns, :filter_end) >= :filter_start AND r.start_ns <= :filter_end
ORDER BY r.start_ns, r.id;
