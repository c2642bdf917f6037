-- Indexes, created after the bulk load (inserting into indexed tables is
-- several times slower).
CREATE INDEX hgtx_events_by_start ON hgtx_events (start_ns);
