-- name: hgtx_payload_trace
-- alias: nvtx_payload_trace
-- title: HGTX Payload Trace
-- description: The binary payloads of HGTX events (NVTX's payload extension:
--   nvtxMarkPayload, nvtxRangePushPayload..., Ex calls with NVTX_PAYLOAD_TYPE_EXT,
--   deferred events) decoded by their registered schema, one row per value.  At is
--   begin (push, start, mark) or end (pop, end).  Field names nested values as
--   outer.inner and array elements as name[i]; a batch of deferred events as [i].name.
--   Times are relative to the session start.
-- columns: Start (ns), Event, Domain, Schema, At, Payload, Field, Type, Value
SELECT e.start_ns - :session_start AS "Start (ns)",
       ts.value AS "Event",
       ds.value AS "Domain",
       COALESCE(ss.value, p.schema_id) AS "Schema",
       p.at AS "At",
       p.payload AS "Payload",
       f.field AS "Field",
       f.type AS "Type",
       f.value AS "Value"
FROM hgtx_payload_fields AS f
JOIN hgtx_payloads AS p ON p.id = f.payload_id
LEFT JOIN hgtx_events AS e ON e.id = p.event_id
LEFT JOIN strings AS ts ON ts.id = e.text_id
LEFT JOIN hgtx_domains AS d ON d.id = p.domain_id
LEFT JOIN strings AS ds ON ds.id = d.name_id
LEFT JOIN hgtx_payload_schemas AS s
       ON s.pid = p.pid AND s.domain_id = p.domain_id AND s.schema_id = p.schema_id
LEFT JOIN strings AS ss ON ss.id = s.name_id
WHERE e.id IS NULL OR (COALESCE(e.end_ns, e.start_ns) >= :filter_start AND e.start_ns <= :filter_end)
ORDER BY e.start_ns, p.id, f.rowid;
