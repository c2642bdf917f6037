-- Indexes, created after the bulk load (inserting into indexed tables is
-- several times slower).
CREATE INDEX hgtx_events_by_start ON hgtx_events (start_ns);
CREATE INDEX osrt_calls_by_start ON osrt_calls (start_ns);
CREATE INDEX thread_states_by_thread ON thread_states (pid, tid, start_ns);
CREATE INDEX hggc_api_calls_by_start ON hggc_api_calls (start_ns);
CREATE INDEX hggc_api_calls_by_thread ON hggc_api_calls (pid, tid, start_ns);
CREATE INDEX ppu_graph_nodes_by_correlation ON ppu_graph_nodes (pid, correlation_id);
CREATE INDEX ppu_graph_nodes_by_original ON ppu_graph_nodes (pid, original_node_id);
CREATE INDEX ppu_graph_launches_by_correlation ON ppu_graph_launches (pid, correlation_id);
CREATE INDEX hggc_api_calls_by_correlation ON hggc_api_calls (pid, correlation_id);
CREATE INDEX ppu_kernels_by_start ON ppu_kernels (start_ns);
CREATE INDEX ppu_memcpys_by_start ON ppu_memcpys (start_ns);
