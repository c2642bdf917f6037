/* The table every decoder shares: per record type its name, minimum size,
 * feature family, what the header's arg means, and every field of its
 * struct (for `asys dump`; a unit test checks the fields tie together over
 * the whole struct, so a field added to asys_format.h and not here fails). */
#include <stddef.h>

#include "segment_stream.h"

#define F(type, member, kind)                                                                      \
    {                                                                                              \
#member, (uint16_t)offsetof(type, member), (uint16_t)sizeof(((type *)0)->member), 0, kind  \
    }
/* an array of `elem`-byte items */
#define A(type, member, elem, kind)                                                                \
    {                                                                                              \
#member, (uint16_t)offsetof(type, member), (uint16_t)sizeof(((type *)0)->member), elem,    \
            kind                                                                                   \
    }
#define FIELDS(array) array, (uint16_t)(sizeof array / sizeof array[0])
#define NO_FIELDS NULL, 0

enum {
    U = ASYS_FIELD_UNSIGNED,
    I = ASYS_FIELD_SIGNED,
    X = ASYS_FIELD_HEX,
    S = ASYS_FIELD_STRING,
    T = ASYS_FIELD_TICKS,
    N = ASYS_FIELD_NS,
    B = ASYS_FIELD_BYTES,
    R = ASYS_FIELD_RESERVED
};

static const struct asys_rec_field time_base[] = {F(struct asys_rec_time_base, ticks, T)};
static const struct asys_rec_field string_def[] = {
    F(struct asys_rec_string_def, size_bytes, U), F(struct asys_rec_string_def, string_id, U),
    F(struct asys_rec_string_def, length, U), F(struct asys_rec_string_def, flags, X)};
static const struct asys_rec_field process_info[] = {
    F(struct asys_rec_process_info, pid, U),
    F(struct asys_rec_process_info, ppid, U),
    F(struct asys_rec_process_info, exe_string_id, S),
    F(struct asys_rec_process_info, cmdline_string_id, S),
    F(struct asys_rec_process_info, origin, U),
    F(struct asys_rec_process_info, reserved, R)};
static const struct asys_rec_field thread[] = {F(struct asys_rec_thread, tid, U),
                                               F(struct asys_rec_thread, name_string_id, S)};
static const struct asys_rec_field drop[] = {F(struct asys_rec_drop, records, U),
                                             F(struct asys_rec_drop, bytes, U),
                                             F(struct asys_rec_drop, first_drop_ticks, T)};
static const struct asys_rec_field clock_pair[] = {F(struct asys_rec_clock_pair, ticks, T),
                                                   F(struct asys_rec_clock_pair, monotonic_ns, N),
                                                   F(struct asys_rec_clock_pair, realtime_ns, N)};
static const struct asys_rec_field module[] = {F(struct asys_rec_module, load_bias, X),
                                               F(struct asys_rec_module, start, X),
                                               F(struct asys_rec_module, end, X),
                                               F(struct asys_rec_module, path_string_id, S),
                                               F(struct asys_rec_module, build_id_length, U),
                                               A(struct asys_rec_module, build_id, 1, B)};
static const struct asys_rec_field capture[] = {
    F(struct asys_rec_capture, window, U), F(struct asys_rec_capture, trigger, U),
    F(struct asys_rec_capture, name_string_id, S), F(struct asys_rec_capture, reserved, R)};
static const struct asys_rec_field callchain[] = {F(struct asys_rec_callchain, callchain_id, U),
                                                  F(struct asys_rec_callchain, depth, U)};

#define HGTX_ATTR(type)                                                                            \
    F(type, attr.message_string_id, S), F(type, attr.category, U), F(type, attr.color_argb, X),    \
        F(type, attr.domain_id, U), F(type, attr.message_type, U), F(type, attr.flags, X),         \
        F(type, attr.payload_type, U), F(type, attr.reserved, R), F(type, attr.payload, X)
static const struct asys_rec_field hgtx_ex[] = {HGTX_ATTR(struct asys_rec_hgtx_ex)};
static const struct asys_rec_field hgtx_range[] = {F(struct asys_rec_hgtx_range, range_id, U)};
static const struct asys_rec_field hgtx_start_ex[] = {F(struct asys_rec_hgtx_start_ex, range_id, U),
                                                      HGTX_ATTR(struct asys_rec_hgtx_start_ex)};
static const struct asys_rec_field hgtx_domain[] = {
    F(struct asys_rec_hgtx_domain, name_string_id, S),
    F(struct asys_rec_hgtx_domain, destroyed, U)};
static const struct asys_rec_field hgtx_category[] = {
    F(struct asys_rec_hgtx_category, category, U),
    F(struct asys_rec_hgtx_category, name_string_id, S)};
static const struct asys_rec_field hgtx_thread_name[] = {
    F(struct asys_rec_hgtx_thread_name, os_tid, U),
    F(struct asys_rec_hgtx_thread_name, name_string_id, S)};
static const struct asys_rec_field cpu_sample[] = {
    F(struct asys_rec_cpu_sample, tid, U), F(struct asys_rec_cpu_sample, cpu, U),
    F(struct asys_rec_cpu_sample, callchain_id, U), F(struct asys_rec_cpu_sample, flags, X)};
static const struct asys_rec_field sched_switch[] = {
    F(struct asys_rec_sched_switch, cpu, U),      F(struct asys_rec_sched_switch, prev_tid, U),
    F(struct asys_rec_sched_switch, next_tid, U), F(struct asys_rec_sched_switch, prev_pid, U),
    F(struct asys_rec_sched_switch, next_pid, U), F(struct asys_rec_sched_switch, prev_state, X)};
static const struct asys_rec_field cpu_sampling_info[] = {
    F(struct asys_rec_cpu_sampling_info, status, U),
    F(struct asys_rec_cpu_sampling_info, event, U),
    F(struct asys_rec_cpu_sampling_info, period, U),
    F(struct asys_rec_cpu_sampling_info, requested_cycles, U),
    F(struct asys_rec_cpu_sampling_info, samples, U),
    F(struct asys_rec_cpu_sampling_info, lost_samples, U),
    F(struct asys_rec_cpu_sampling_info, throttled, U),
    F(struct asys_rec_cpu_sampling_info, unwind_failed, U),
    F(struct asys_rec_cpu_sampling_info, sched_switches, U),
    F(struct asys_rec_cpu_sampling_info, backtrace, U),
    F(struct asys_rec_cpu_sampling_info, scope, U),
    F(struct asys_rec_cpu_sampling_info, sched_source, U),
    F(struct asys_rec_cpu_sampling_info, reason_length, U),
    F(struct asys_rec_cpu_sampling_info, stack_bytes, U),
    F(struct asys_rec_cpu_sampling_info, nominal_mhz, U),
    F(struct asys_rec_cpu_sampling_info, backtrace_depth, U),
    F(struct asys_rec_cpu_sampling_info, reserved, R),
    F(struct asys_rec_cpu_sampling_info, lost_switches, U)};
static const struct asys_rec_field osrt_call[] = {
    F(struct asys_rec_osrt_call, duration_ticks, U), F(struct asys_rec_osrt_call, result, I),
    F(struct asys_rec_osrt_call, error, U), F(struct asys_rec_osrt_call, callchain_id, U)};

static const struct asys_rec_field heap_alloc[] = {
    F(struct asys_rec_heap_alloc, address, X), F(struct asys_rec_heap_alloc, size, U),
    F(struct asys_rec_heap_alloc, sampling_interval, U),
    F(struct asys_rec_heap_alloc, callchain_id, U), F(struct asys_rec_heap_alloc, reserved, R)};
static const struct asys_rec_field ppu_metrics_device[] = {
    F(struct asys_rec_ppu_metrics_device, status, U),
    F(struct asys_rec_ppu_metrics_device, backend, U),
    F(struct asys_rec_ppu_metrics_device, interval_ns, N),
    F(struct asys_rec_ppu_metrics_device, metric_count, U),
    F(struct asys_rec_ppu_metrics_device, text_length, U)};
static const struct asys_rec_field ppu_metric_def[] = {
    F(struct asys_rec_ppu_metric_def, device, U),
    F(struct asys_rec_ppu_metric_def, text_length, U)};
static const struct asys_rec_field ppu_metric_sample[] = {
    F(struct asys_rec_ppu_metric_sample, value_count, U),
    F(struct asys_rec_ppu_metric_sample, duration_ns, N)};
static const struct asys_rec_field ppu_metrics_end[] = {
    F(struct asys_rec_ppu_metrics_end, overflows, U),
    F(struct asys_rec_ppu_metrics_end, reserved, R),
    F(struct asys_rec_ppu_metrics_end, samples, U)};
static const struct asys_rec_field python_code[] = {
    F(struct asys_rec_python_code, code_id, U),
    F(struct asys_rec_python_code, name_string_id, S),
    F(struct asys_rec_python_code, file_string_id, S),
    F(struct asys_rec_python_code, module_string_id, S),
    F(struct asys_rec_python_code, first_line, U),
    F(struct asys_rec_python_code, reserved, R)};
static const struct asys_rec_field python_sample[] = {F(struct asys_rec_python_sample, tid, U),
                                                      F(struct asys_rec_python_sample, depth, U)};
static const struct asys_rec_field python_stack[] = {
    F(struct asys_rec_python_stack, correlation_id, U),
    F(struct asys_rec_python_stack, callchain_id, U), F(struct asys_rec_python_stack, tid, U),
    F(struct asys_rec_python_stack, depth, U)};
static const struct asys_rec_field python_status[] = {
    F(struct asys_rec_python_status, version_hex, X),
    F(struct asys_rec_python_status, text_length, U)};
static const struct asys_rec_field host_memory[] = {
    F(struct asys_rec_host_memory, pid, U), F(struct asys_rec_host_memory, reserved, R),
    F(struct asys_rec_host_memory, rss_bytes, B), F(struct asys_rec_host_memory, hwm_bytes, B)};
static const struct asys_rec_field event_count[] = {
    F(struct asys_rec_event_count, cpu, U), F(struct asys_rec_event_count, reserved, R),
    F(struct asys_rec_event_count, value, U), F(struct asys_rec_event_count, enabled_ns, U),
    F(struct asys_rec_event_count, running_ns, U)};
static const struct asys_rec_field event_status[] = {
    F(struct asys_rec_event_status, error, I),
    F(struct asys_rec_event_status, threads_not_followed, U)};
static const struct asys_rec_field event_thread_count[] = {
    F(struct asys_rec_event_thread_count, pid, U), F(struct asys_rec_event_thread_count, tid, U),
    F(struct asys_rec_event_thread_count, value, U),
    F(struct asys_rec_event_thread_count, enabled_ns, U),
    F(struct asys_rec_event_thread_count, running_ns, U)};
static const struct asys_rec_field nic_device[] = {
    F(struct asys_rec_nic_device, device, U),      F(struct asys_rec_nic_device, kind, U),
    F(struct asys_rec_nic_device, port, U),        F(struct asys_rec_nic_device, speed_mbps, U),
    F(struct asys_rec_nic_device, metric_mask, X), A(struct asys_rec_nic_device, name, 1, B)};
static const struct asys_rec_field nic_sample[] = {F(struct asys_rec_nic_sample, metric_mask, X),
                                                   F(struct asys_rec_nic_sample, count, U)};
static const struct asys_rec_field nic_rate[] = {
    F(struct asys_rec_nic_rate, requested_hz, U), F(struct asys_rec_nic_rate, reserved, R),
    F(struct asys_rec_nic_rate, sample_mhz, U), F(struct asys_rec_nic_rate, update_mhz, U)};
static const struct asys_rec_field heap_alloc_sum[] = {
    F(struct asys_rec_heap_alloc_sum, callchain_id, U),
    F(struct asys_rec_heap_alloc_sum, interval_id, U),
    F(struct asys_rec_heap_alloc_sum, last_ticks, T),
    F(struct asys_rec_heap_alloc_sum, sampling_interval, U),
    F(struct asys_rec_heap_alloc_sum, report_interval_ms, U),
    F(struct asys_rec_heap_alloc_sum, reserved, R),
    F(struct asys_rec_heap_alloc_sum, samples, U),
    F(struct asys_rec_heap_alloc_sum, bytes, U),
    F(struct asys_rec_heap_alloc_sum, largest, U),
    F(struct asys_rec_heap_alloc_sum, estimated_bytes, U),
    F(struct asys_rec_heap_alloc_sum, estimated_count_q16, U)};
static const struct asys_rec_field heap_free_sum[] = {
    F(struct asys_rec_heap_free_sum, callchain_id, U),
    F(struct asys_rec_heap_free_sum, interval_id, U),
    F(struct asys_rec_heap_free_sum, last_ticks, T),
    F(struct asys_rec_heap_free_sum, samples, U),
    F(struct asys_rec_heap_free_sum, bytes, U),
    F(struct asys_rec_heap_free_sum, estimated_bytes, U),
    F(struct asys_rec_heap_free_sum, estimated_count_q16, U)};
static const struct asys_rec_field heap_free[] = {F(struct asys_rec_heap_free, address, X),
                                                  F(struct asys_rec_heap_free, size, U)};

static const struct asys_rec_field hggc_api[] = {
    F(struct asys_rec_hggc_api, start_ticks, T),    F(struct asys_rec_hggc_api, name_string_id, S),
    F(struct asys_rec_hggc_api, correlation_id, U), F(struct asys_rec_hggc_api, result, I),
    F(struct asys_rec_hggc_api, cbid, U),           F(struct asys_rec_hggc_api, callchain_id, U),
    F(struct asys_rec_hggc_api, reserved, R)};
static const struct asys_rec_field hggc_kernel[] = {
    F(struct asys_rec_hggc_kernel, start_ns, N),
    F(struct asys_rec_hggc_kernel, end_ns, N),
    F(struct asys_rec_hggc_kernel, queued_ns, N),
    F(struct asys_rec_hggc_kernel, submitted_ns, N),
    F(struct asys_rec_hggc_kernel, device, U),
    F(struct asys_rec_hggc_kernel, context, U),
    F(struct asys_rec_hggc_kernel, stream, U),
    F(struct asys_rec_hggc_kernel, correlation_id, U),
    A(struct asys_rec_hggc_kernel, grid, 4, I),
    A(struct asys_rec_hggc_kernel, block, 4, I),
    F(struct asys_rec_hggc_kernel, static_shared_memory, I),
    F(struct asys_rec_hggc_kernel, dynamic_shared_memory, I),
    F(struct asys_rec_hggc_kernel, registers_per_thread, U),
    F(struct asys_rec_hggc_kernel, launch_type, U),
    F(struct asys_rec_hggc_kernel, reserved, R),
    F(struct asys_rec_hggc_kernel, name_string_id, S),
    F(struct asys_rec_hggc_kernel, graph_node_id, U),
    F(struct asys_rec_hggc_kernel, graph_id, U),
    F(struct asys_rec_hggc_kernel, reserved2, R)};
static const struct asys_rec_field hggc_memcpy[] = {
    F(struct asys_rec_hggc_memcpy, start_ns, N),
    F(struct asys_rec_hggc_memcpy, end_ns, N),
    F(struct asys_rec_hggc_memcpy, bytes, U),
    F(struct asys_rec_hggc_memcpy, device, U),
    F(struct asys_rec_hggc_memcpy, context, U),
    F(struct asys_rec_hggc_memcpy, stream, U),
    F(struct asys_rec_hggc_memcpy, correlation_id, U),
    F(struct asys_rec_hggc_memcpy, copy_kind, U),
    F(struct asys_rec_hggc_memcpy, src_kind, U),
    F(struct asys_rec_hggc_memcpy, dst_kind, U),
    F(struct asys_rec_hggc_memcpy, flags, X),
    F(struct asys_rec_hggc_memcpy, graph_id, U),
    F(struct asys_rec_hggc_memcpy, graph_node_id, U),
    F(struct asys_rec_hggc_memcpy, src_device, U),
    F(struct asys_rec_hggc_memcpy, dst_device, U)};
static const struct asys_rec_field hggc_memset[] = {
    F(struct asys_rec_hggc_memset, start_ns, N),
    F(struct asys_rec_hggc_memset, end_ns, N),
    F(struct asys_rec_hggc_memset, bytes, U),
    F(struct asys_rec_hggc_memset, device, U),
    F(struct asys_rec_hggc_memset, context, U),
    F(struct asys_rec_hggc_memset, stream, U),
    F(struct asys_rec_hggc_memset, correlation_id, U),
    F(struct asys_rec_hggc_memset, value, X),
    F(struct asys_rec_hggc_memset, flags, X),
    F(struct asys_rec_hggc_memset, memory_kind, U),
    F(struct asys_rec_hggc_memset, graph_id, U),
    F(struct asys_rec_hggc_memset, reserved, R),
    F(struct asys_rec_hggc_memset, graph_node_id, U)};
static const struct asys_rec_field hggc_sync[] = {
    F(struct asys_rec_hggc_sync, start_ns, N),       F(struct asys_rec_hggc_sync, end_ns, N),
    F(struct asys_rec_hggc_sync, context, U),        F(struct asys_rec_hggc_sync, stream, U),
    F(struct asys_rec_hggc_sync, correlation_id, U), F(struct asys_rec_hggc_sync, event_id, U),
    F(struct asys_rec_hggc_sync, event_sync_id, U)};
static const struct asys_rec_field hggc_event_record[] = {
    F(struct asys_rec_hggc_event_record, device_ns, N),
    F(struct asys_rec_hggc_event_record, device, U),
    F(struct asys_rec_hggc_event_record, context, U),
    F(struct asys_rec_hggc_event_record, stream, U),
    F(struct asys_rec_hggc_event_record, correlation_id, U),
    F(struct asys_rec_hggc_event_record, event_id, U),
    F(struct asys_rec_hggc_event_record, reserved, R),
    F(struct asys_rec_hggc_event_record, event_sync_id, U)};
static const struct asys_rec_field hggc_memory[] = {
    F(struct asys_rec_hggc_memory, timestamp_ns, N),
    F(struct asys_rec_hggc_memory, address, X),
    F(struct asys_rec_hggc_memory, bytes, U),
    F(struct asys_rec_hggc_memory, device, U),
    F(struct asys_rec_hggc_memory, context, U),
    F(struct asys_rec_hggc_memory, stream, U),
    F(struct asys_rec_hggc_memory, correlation_id, U),
    F(struct asys_rec_hggc_memory, memory_kind, U),
    F(struct asys_rec_hggc_memory, error, I)};
static const struct asys_rec_field hggc_graph_trace[] = {
    F(struct asys_rec_hggc_graph_trace, start_ns, N),
    F(struct asys_rec_hggc_graph_trace, end_ns, N),
    F(struct asys_rec_hggc_graph_trace, device, U),
    F(struct asys_rec_hggc_graph_trace, context, U),
    F(struct asys_rec_hggc_graph_trace, stream, U),
    F(struct asys_rec_hggc_graph_trace, correlation_id, U),
    F(struct asys_rec_hggc_graph_trace, graph_id, U),
    F(struct asys_rec_hggc_graph_trace, reserved, R)};
static const struct asys_rec_field hggc_device[] = {
    F(struct asys_rec_hggc_device, global_memory_bytes, U),
    F(struct asys_rec_hggc_device, multiprocessors, U),
    F(struct asys_rec_hggc_device, compute_major, U),
    F(struct asys_rec_hggc_device, compute_minor, U),
    F(struct asys_rec_hggc_device, name_string_id, S),
    A(struct asys_rec_hggc_device, uuid, 1, B),
    F(struct asys_rec_hggc_device, physical_index, U),
    F(struct asys_rec_hggc_device, reserved, R)};
static const struct asys_rec_field hggc_context[] = {
    F(struct asys_rec_hggc_context, context, U), F(struct asys_rec_hggc_context, device, U),
    F(struct asys_rec_hggc_context, null_stream, U), F(struct asys_rec_hggc_context, reserved, R)};
static const struct asys_rec_field hggc_stream[] = {
    F(struct asys_rec_hggc_stream, context, U),        F(struct asys_rec_hggc_stream, stream, U),
    F(struct asys_rec_hggc_stream, priority, I),       F(struct asys_rec_hggc_stream, flags, X),
    F(struct asys_rec_hggc_stream, correlation_id, U), F(struct asys_rec_hggc_stream, reserved, R)};
static const struct asys_rec_field hggc_graph_node[] = {
    F(struct asys_rec_hggc_graph_node, node_id, U),
    F(struct asys_rec_hggc_graph_node, other_node_id, U),
    F(struct asys_rec_hggc_graph_node, graph_id, U),
    F(struct asys_rec_hggc_graph_node, correlation_id, U),
    F(struct asys_rec_hggc_graph_node, node_type, U),
    F(struct asys_rec_hggc_graph_node, reserved, R)};
static const struct asys_rec_field hggc_graph_exec[] = {
    F(struct asys_rec_hggc_graph_exec, exec_id, U), F(struct asys_rec_hggc_graph_exec, graph_id, U),
    F(struct asys_rec_hggc_graph_exec, correlation_id, U),
    F(struct asys_rec_hggc_graph_exec, reserved, R)};
static const struct asys_rec_field hggc_overhead[] = {
    F(struct asys_rec_hggc_overhead, start_ns, N), F(struct asys_rec_hggc_overhead, end_ns, N),
    F(struct asys_rec_hggc_overhead, overhead_kind, U),
    F(struct asys_rec_hggc_overhead, object_kind, U)};
static const struct asys_rec_field hggc_status[] = {
    F(struct asys_rec_hggc_status, value, U), F(struct asys_rec_hggc_status, message_length, U),
    F(struct asys_rec_hggc_status, reserved, R)};

/* PCCL: every event record but the step starts with struct asys_pccl_event */
#define PCCL_EVENT(type)                                                                           \
    F(type, ev.start_ticks, T), F(type, ev.event_id, X), F(type, ev.parent_id, X)
static const struct asys_rec_field pccl_comm[] = {
    F(struct asys_rec_pccl_comm, comm_hash, X), F(struct asys_rec_pccl_comm, comm, U),
    F(struct asys_rec_pccl_comm, rank, I),      F(struct asys_rec_pccl_comm, nranks, I),
    F(struct asys_rec_pccl_comm, nnodes, I),    F(struct asys_rec_pccl_comm, name_string_id, S),
    F(struct asys_rec_pccl_comm, event_mask, X)};
static const struct asys_rec_field pccl_comm_end[] = {
    F(struct asys_rec_pccl_comm_end, comm, U),
    F(struct asys_rec_pccl_comm_end, finalized, U),
    F(struct asys_rec_pccl_comm_end, events, U),
    F(struct asys_rec_pccl_comm_end, dropped_no_slot, U),
    F(struct asys_rec_pccl_comm_end, dropped_reentry, U),
    F(struct asys_rec_pccl_comm_end, dropped_bad_handle, U),
    F(struct asys_rec_pccl_comm_end, dropped_unknown, U),
    F(struct asys_rec_pccl_comm_end, unfinished, U)};
static const struct asys_rec_field pccl_group_api[] = {
    PCCL_EVENT(struct asys_rec_pccl_group_api),
    F(struct asys_rec_pccl_group_api, start_stop_delta, U),
    F(struct asys_rec_pccl_group_api, end_start_delta, U),
    F(struct asys_rec_pccl_group_api, depth, I), F(struct asys_rec_pccl_group_api, reserved, R)};
static const struct asys_rec_field acompute_api[] = {
    F(struct asys_rec_acompute_api, api_id, U), F(struct asys_rec_acompute_api, name_id, S),
    F(struct asys_rec_acompute_api, flags, X), F(struct asys_rec_acompute_api, reserved, U)};
static const struct asys_rec_field acompute_call[] = {
    F(struct asys_rec_acompute_call, duration_ticks, U),
    F(struct asys_rec_acompute_call, status, I),
    F(struct asys_rec_acompute_call, api_id, U),
    F(struct asys_rec_acompute_call, callchain_id, U),
    F(struct asys_rec_acompute_call, flags, X),
    F(struct asys_rec_acompute_call, handle, X),
    F(struct asys_rec_acompute_call, stream, X)};
static const struct asys_rec_field acompute_call_same[] = {
    F(struct asys_rec_acompute_call_same, duration_ticks, U),
    F(struct asys_rec_acompute_call_same, status, I),
    F(struct asys_rec_acompute_call_same, api_id, U),
    F(struct asys_rec_acompute_call_same, callchain_id, U),
    F(struct asys_rec_acompute_call_same, flags, X)};
static const struct asys_rec_field pccl_call[] = {
    PCCL_EVENT(struct asys_rec_pccl_call),
    F(struct asys_rec_pccl_call, count, U),
    F(struct asys_rec_pccl_call, stream, X),
    F(struct asys_rec_pccl_call, func_string_id, S),
    F(struct asys_rec_pccl_call, datatype_string_id, S),
    F(struct asys_rec_pccl_call, root, I),
    F(struct asys_rec_pccl_call, reserved, R)};
static const struct asys_rec_field pccl_kernel_launch[] = {
    PCCL_EVENT(struct asys_rec_pccl_kernel_launch),
    F(struct asys_rec_pccl_kernel_launch, stream, X)};
static const struct asys_rec_field pccl_group[] = {PCCL_EVENT(struct asys_rec_pccl_group)};
static const struct asys_rec_field pccl_task[] = {
    PCCL_EVENT(struct asys_rec_pccl_task),
    F(struct asys_rec_pccl_task, group_id, X),
    F(struct asys_rec_pccl_task, seq_number, U),
    F(struct asys_rec_pccl_task, count, U),
    F(struct asys_rec_pccl_task, func_string_id, S),
    F(struct asys_rec_pccl_task, datatype_string_id, S),
    F(struct asys_rec_pccl_task, algo_string_id, S),
    F(struct asys_rec_pccl_task, proto_string_id, S),
    F(struct asys_rec_pccl_task, rank, I),
    F(struct asys_rec_pccl_task, root_or_peer, I),
    F(struct asys_rec_pccl_task, channels, U),
    F(struct asys_rec_pccl_task, warps, U),
    F(struct asys_rec_pccl_task, reserved, R),
    F(struct asys_rec_pccl_task, reserved2, R)};
static const struct asys_rec_field pccl_proxy_op[] = {
    PCCL_EVENT(struct asys_rec_pccl_proxy_op),
    F(struct asys_rec_pccl_proxy_op, in_progress_delta, U),
    F(struct asys_rec_pccl_proxy_op, pid, U),
    F(struct asys_rec_pccl_proxy_op, rank, I),
    F(struct asys_rec_pccl_proxy_op, peer, I),
    F(struct asys_rec_pccl_proxy_op, steps, I),
    F(struct asys_rec_pccl_proxy_op, chunk_size, I),
    F(struct asys_rec_pccl_proxy_op, channel, U),
    F(struct asys_rec_pccl_proxy_op, is_send, U),
    F(struct asys_rec_pccl_proxy_op, reserved, R),
    F(struct asys_rec_pccl_proxy_op, reserved2, R)};
static const struct asys_rec_field pccl_proxy_step[] = {
    F(struct asys_rec_pccl_proxy_step, start_ticks, T),
    F(struct asys_rec_pccl_proxy_step, op_id, X),
    A(struct asys_rec_pccl_proxy_step, state_delta, 4, U),
    F(struct asys_rec_pccl_proxy_step, trans_size, U),
    F(struct asys_rec_pccl_proxy_step, step, I),
    F(struct asys_rec_pccl_proxy_step, channel, U),
    F(struct asys_rec_pccl_proxy_step, is_send, U),
    F(struct asys_rec_pccl_proxy_step, reserved, R)};
static const struct asys_rec_field pccl_proxy_ctrl[] = {
    PCCL_EVENT(struct asys_rec_pccl_proxy_ctrl), F(struct asys_rec_pccl_proxy_ctrl, state_delta, U),
    F(struct asys_rec_pccl_proxy_ctrl, appended, I), F(struct asys_rec_pccl_proxy_ctrl, states, U),
    F(struct asys_rec_pccl_proxy_ctrl, reserved, R)};
static const struct asys_rec_field pccl_kernel_ch[] = {
    PCCL_EVENT(struct asys_rec_pccl_kernel_ch),
    F(struct asys_rec_pccl_kernel_ch, ptimer_start, N),
    F(struct asys_rec_pccl_kernel_ch, ptimer_stop, N),
    F(struct asys_rec_pccl_kernel_ch, stop_state_delta, U),
    F(struct asys_rec_pccl_kernel_ch, channel, U),
    F(struct asys_rec_pccl_kernel_ch, reserved, R)};
static const struct asys_rec_field pccl_net[] = {PCCL_EVENT(struct asys_rec_pccl_net),
                                                 F(struct asys_rec_pccl_net, plugin_id, X),
                                                 F(struct asys_rec_pccl_net, last_update_delta, U),
                                                 F(struct asys_rec_pccl_net, updates, U),
                                                 F(struct asys_rec_pccl_net, step, I),
                                                 F(struct asys_rec_pccl_net, reserved, R)};
static const struct asys_rec_field pccl_status[] = {F(struct asys_rec_pccl_status, version, U),
                                                    F(struct asys_rec_pccl_status, text_length, U)};
static const struct asys_rec_field video_api[] = {
    F(struct asys_rec_video_api, start_ticks, T), F(struct asys_rec_video_api, handle, X),
    F(struct asys_rec_video_api, status, I), F(struct asys_rec_video_api, sequence, U)};
static const struct asys_rec_field video_api_stream[] = {
    F(struct asys_rec_video_api_stream, start_ticks, T),
    F(struct asys_rec_video_api_stream, handle, X),
    F(struct asys_rec_video_api_stream, status, I),
    F(struct asys_rec_video_api_stream, sequence, U),
    F(struct asys_rec_video_api_stream, stream, X),
    F(struct asys_rec_video_api_stream, stream_id, U),
    F(struct asys_rec_video_api_stream, flags, X)};
static const struct asys_rec_field video_activity[] = {
    F(struct asys_rec_video_activity, start_ticks, T),
    F(struct asys_rec_video_activity, end_ticks, T),
    F(struct asys_rec_video_activity, call_id, X),
    F(struct asys_rec_video_activity, handle, X),
    F(struct asys_rec_video_activity, stream, X),
    F(struct asys_rec_video_activity, bytes, U),
    F(struct asys_rec_video_activity, stream_id, U),
    F(struct asys_rec_video_activity, flags, X),
    F(struct asys_rec_video_activity, picture, I),
    F(struct asys_rec_video_activity, reserved, R)};
static const struct asys_rec_field video_status[] = {F(struct asys_rec_video_status, value, X),
                                                     F(struct asys_rec_video_status, count, U)};

static const struct asys_rec_field hgtx_schema[] = {
    F(struct asys_rec_hgtx_schema, size_bytes, U),
    F(struct asys_rec_hgtx_schema, kind, U),
    F(struct asys_rec_hgtx_schema, schema_id, U),
    F(struct asys_rec_hgtx_schema, name_string_id, S),
    F(struct asys_rec_hgtx_schema, schema_type, U),
    F(struct asys_rec_hgtx_schema, flags, X),
    F(struct asys_rec_hgtx_schema, static_size, U),
    F(struct asys_rec_hgtx_schema, pack_align, U),
    F(struct asys_rec_hgtx_schema, entry_count, U),
    F(struct asys_rec_hgtx_schema, entries_given, U)};
static const struct asys_rec_field hgtx_payload[] = {
    F(struct asys_rec_hgtx_payload, size_bytes, U), F(struct asys_rec_hgtx_payload, event, U),
    F(struct asys_rec_hgtx_payload, payload_count, U),
    F(struct asys_rec_hgtx_payload, range_id, X)};
static const struct asys_rec_field hgtx_counter[] = {
    F(struct asys_rec_hgtx_counter, name_string_id, S),
    F(struct asys_rec_hgtx_counter, description_string_id, S),
    F(struct asys_rec_hgtx_counter, counter_id, U),
    F(struct asys_rec_hgtx_counter, schema_id, U),
    F(struct asys_rec_hgtx_counter, scope_id, U),
    F(struct asys_rec_hgtx_counter, semantic_flags, X),
    F(struct asys_rec_hgtx_counter, unit_string_id, S),
    F(struct asys_rec_hgtx_counter, limit_type, I),
    F(struct asys_rec_hgtx_counter, unit_scale_numerator, U),
    F(struct asys_rec_hgtx_counter, unit_scale_denominator, U),
    F(struct asys_rec_hgtx_counter, limit_min, X),
    F(struct asys_rec_hgtx_counter, limit_max, X),
    F(struct asys_rec_hgtx_counter, time_domain, U)};
static const struct asys_rec_field hgtx_sample[] = {
    F(struct asys_rec_hgtx_sample, size_bytes, U),
    F(struct asys_rec_hgtx_sample, kind, U),
    F(struct asys_rec_hgtx_sample, reason, U),
    F(struct asys_rec_hgtx_sample, cut, U),
    F(struct asys_rec_hgtx_sample, counter_id, U),
    F(struct asys_rec_hgtx_sample, value, X),
    F(struct asys_rec_hgtx_sample, data_size, U),
    F(struct asys_rec_hgtx_sample, timestamps_size, U),
    F(struct asys_rec_hgtx_sample, batch_flags, X)};
static const struct asys_rec_field hgtx_mem[] = {
    F(struct asys_rec_hgtx_mem, domain_id, U),      F(struct asys_rec_hgtx_mem, reserved, R),
    F(struct asys_rec_hgtx_mem, name_string_id, S), F(struct asys_rec_hgtx_mem, heap, X),
    F(struct asys_rec_hgtx_mem, address, X),        F(struct asys_rec_hgtx_mem, size, U),
    F(struct asys_rec_hgtx_mem, value, X),          F(struct asys_rec_hgtx_mem, flags, X),
    F(struct asys_rec_hgtx_mem, category, U)};
static const struct asys_rec_field hgtx_resource[] = {
    F(struct asys_rec_hgtx_resource, type, X),
    F(struct asys_rec_hgtx_resource, name_string_id, S),
    F(struct asys_rec_hgtx_resource, identifier, X),
    F(struct asys_rec_hgtx_resource, handle, X),
    F(struct asys_rec_hgtx_resource, cupti_id, U),
    F(struct asys_rec_hgtx_resource, flags, X)};
static const struct asys_rec_field hgtx_sync[] = {
    F(struct asys_rec_hgtx_sync, name_string_id, S), F(struct asys_rec_hgtx_sync, domain_id, U),
    F(struct asys_rec_hgtx_sync, reserved, R), F(struct asys_rec_hgtx_sync, handle, X)};
static const struct asys_rec_field hgtx_injection[] = {
    F(struct asys_rec_hgtx_injection, path_length, U),
    F(struct asys_rec_hgtx_injection, modules_attached, U)};
static const struct asys_rec_field hgtx_time[] = {F(struct asys_rec_hgtx_time, domain_id, U),
                                                  F(struct asys_rec_hgtx_time, reserved, R),
                                                  F(struct asys_rec_hgtx_time, text_string_id, S),
                                                  F(struct asys_rec_hgtx_time, id, U),
                                                  F(struct asys_rec_hgtx_time, a, X),
                                                  F(struct asys_rec_hgtx_time, b, X),
                                                  F(struct asys_rec_hgtx_time, c, X),
                                                  F(struct asys_rec_hgtx_time, d, X),
                                                  F(struct asys_rec_hgtx_time, e, X)};

/* what the header's arg holds */
#define ARG_NONE NULL, 0
#define ARG(name, kind) name, kind
/* what follows the struct: nothing, text (length in a u32 field), frames (count in a u32 field) */
#define TAIL_NONE ASYS_TAIL_NONE, 0
#define TAIL(kind, type, member) kind, (uint16_t)offsetof(type, member)

#define REC(type, size, feature, fields, arg, tail)                                                \
    [ASYS_REC_##type] = {#type, size, feature, fields, arg, tail}

static const struct asys_rec_info rec_infos[ASYS_REC_TYPE_COUNT] = {
    REC(PAD, 8, ASYS_FEATURE_CORE, NO_FIELDS, ARG_NONE, TAIL_NONE),
    REC(TIME_BASE, sizeof(struct asys_rec_time_base), ASYS_FEATURE_CORE, FIELDS(time_base),
        ARG_NONE, TAIL_NONE),
    REC(STRING_DEF, sizeof(struct asys_rec_string_def), ASYS_FEATURE_CORE, FIELDS(string_def),
        ARG_NONE, TAIL(ASYS_TAIL_TEXT, struct asys_rec_string_def, length)),
    REC(PROCESS_INFO, sizeof(struct asys_rec_process_info), ASYS_FEATURE_CORE, FIELDS(process_info),
        ARG_NONE, TAIL_NONE),
    REC(THREAD_START, sizeof(struct asys_rec_thread), ASYS_FEATURE_CORE, FIELDS(thread), ARG_NONE,
        TAIL_NONE),
    REC(THREAD_END, sizeof(struct asys_rec_thread), ASYS_FEATURE_CORE, FIELDS(thread), ARG_NONE,
        TAIL_NONE),
    REC(DROP, sizeof(struct asys_rec_drop), ASYS_FEATURE_CORE, FIELDS(drop), ARG_NONE, TAIL_NONE),
    REC(CLOCK_PAIR, sizeof(struct asys_rec_clock_pair), ASYS_FEATURE_CORE, FIELDS(clock_pair),
        ARG_NONE, TAIL_NONE),
    REC(MODULE, sizeof(struct asys_rec_module), ASYS_FEATURE_STACKS, FIELDS(module), ARG_NONE,
        TAIL_NONE),
    REC(CALLCHAIN, sizeof(struct asys_rec_callchain), ASYS_FEATURE_STACKS, FIELDS(callchain),
        ARG_NONE, TAIL(ASYS_TAIL_FRAMES, struct asys_rec_callchain, depth)),
    REC(CAPTURE, sizeof(struct asys_rec_capture), ASYS_FEATURE_CORE, FIELDS(capture),
        ARG("edge", U), TAIL_NONE),
    REC(HGTX_PUSH, 8, ASYS_FEATURE_HGTX, NO_FIELDS, ARG("message_string_id", S), TAIL_NONE),
    REC(HGTX_PUSH_EX, sizeof(struct asys_rec_hgtx_ex), ASYS_FEATURE_HGTX, FIELDS(hgtx_ex), ARG_NONE,
        TAIL_NONE),
    REC(HGTX_POP, 8, ASYS_FEATURE_HGTX, NO_FIELDS, ARG("domain", U), TAIL_NONE),
    REC(HGTX_MARK, 8, ASYS_FEATURE_HGTX, NO_FIELDS, ARG("message_string_id", S), TAIL_NONE),
    REC(HGTX_MARK_EX, sizeof(struct asys_rec_hgtx_ex), ASYS_FEATURE_HGTX, FIELDS(hgtx_ex), ARG_NONE,
        TAIL_NONE),
    REC(HGTX_START, sizeof(struct asys_rec_hgtx_range), ASYS_FEATURE_HGTX, FIELDS(hgtx_range),
        ARG("message_string_id", S), TAIL_NONE),
    REC(HGTX_START_EX, sizeof(struct asys_rec_hgtx_start_ex), ASYS_FEATURE_HGTX,
        FIELDS(hgtx_start_ex), ARG_NONE, TAIL_NONE),
    REC(HGTX_END, sizeof(struct asys_rec_hgtx_range), ASYS_FEATURE_HGTX, FIELDS(hgtx_range),
        ARG_NONE, TAIL_NONE),
    REC(HGTX_DOMAIN, sizeof(struct asys_rec_hgtx_domain), ASYS_FEATURE_HGTX, FIELDS(hgtx_domain),
        ARG("domain", U), TAIL_NONE),
    REC(HGTX_CATEGORY, sizeof(struct asys_rec_hgtx_category), ASYS_FEATURE_HGTX,
        FIELDS(hgtx_category), ARG("domain", U), TAIL_NONE),
    REC(HGTX_THREAD_NAME, sizeof(struct asys_rec_hgtx_thread_name), ASYS_FEATURE_HGTX,
        FIELDS(hgtx_thread_name), ARG_NONE, TAIL_NONE),
    REC(HGTX_SCHEMA, sizeof(struct asys_rec_hgtx_schema), ASYS_FEATURE_HGTX, FIELDS(hgtx_schema),
        ARG("domain", U), TAIL_NONE),
    REC(HGTX_PAYLOAD, sizeof(struct asys_rec_hgtx_payload), ASYS_FEATURE_HGTX, FIELDS(hgtx_payload),
        ARG("domain", U), TAIL_NONE),
    REC(HGTX_COUNTER, sizeof(struct asys_rec_hgtx_counter), ASYS_FEATURE_HGTX, FIELDS(hgtx_counter),
        ARG("domain", U), TAIL_NONE),
    REC(HGTX_SAMPLE, sizeof(struct asys_rec_hgtx_sample), ASYS_FEATURE_HGTX, FIELDS(hgtx_sample),
        ARG("domain", U), TAIL_NONE),
    REC(HGTX_MEM, sizeof(struct asys_rec_hgtx_mem), ASYS_FEATURE_HGTX, FIELDS(hgtx_mem),
        ARG("operation", U), TAIL_NONE),
    REC(HGTX_RESOURCE, sizeof(struct asys_rec_hgtx_resource), ASYS_FEATURE_HGTX,
        FIELDS(hgtx_resource), ARG("domain", U), TAIL_NONE),
    REC(HGTX_SYNC, sizeof(struct asys_rec_hgtx_sync), ASYS_FEATURE_HGTX, FIELDS(hgtx_sync),
        ARG("operation", U), TAIL_NONE),
    REC(HGTX_INJECTION, sizeof(struct asys_rec_hgtx_injection), ASYS_FEATURE_HGTX,
        FIELDS(hgtx_injection), ARG_NONE,
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_hgtx_injection, path_length)),
    REC(HGTX_TIME, sizeof(struct asys_rec_hgtx_time), ASYS_FEATURE_HGTX, FIELDS(hgtx_time),
        ARG("kind", U), TAIL_NONE),
    REC(OSRT_CALL, sizeof(struct asys_rec_osrt_call), ASYS_FEATURE_OSRT, FIELDS(osrt_call),
        ARG("function", U), TAIL_NONE),
    REC(HEAP_ALLOC, sizeof(struct asys_rec_heap_alloc), ASYS_FEATURE_MEMORY, FIELDS(heap_alloc),
        ARG("function", U), TAIL_NONE),
    REC(HEAP_FREE, sizeof(struct asys_rec_heap_free), ASYS_FEATURE_MEMORY, FIELDS(heap_free),
        ARG("function", U), TAIL_NONE),
    REC(HEAP_ALLOC_SUM, sizeof(struct asys_rec_heap_alloc_sum), ASYS_FEATURE_MEMORY,
        FIELDS(heap_alloc_sum), ARG("function", U), TAIL_NONE),
    REC(HEAP_FREE_SUM, sizeof(struct asys_rec_heap_free_sum), ASYS_FEATURE_MEMORY,
        FIELDS(heap_free_sum), ARG("function", U), TAIL_NONE),
    REC(EVENT_COUNT, sizeof(struct asys_rec_event_count), ASYS_FEATURE_EVENTS, FIELDS(event_count),
        ARG("event", U), TAIL_NONE),
    REC(EVENT_STATUS, sizeof(struct asys_rec_event_status), ASYS_FEATURE_EVENTS,
        FIELDS(event_status), ARG("event", U), TAIL_NONE),
    REC(EVENT_THREAD_COUNT, sizeof(struct asys_rec_event_thread_count), ASYS_FEATURE_EVENTS,
        FIELDS(event_thread_count), ARG("event", U), TAIL_NONE),
    REC(HOST_MEMORY, sizeof(struct asys_rec_host_memory), ASYS_FEATURE_MEMORY, FIELDS(host_memory),
        ARG_NONE, TAIL_NONE),
    REC(PPU_METRICS_DEVICE, sizeof(struct asys_rec_ppu_metrics_device), ASYS_FEATURE_PPU_METRICS,
        FIELDS(ppu_metrics_device), ARG("device", U),
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_ppu_metrics_device, text_length)),
    REC(PPU_METRIC_DEF, sizeof(struct asys_rec_ppu_metric_def), ASYS_FEATURE_PPU_METRICS,
        FIELDS(ppu_metric_def), ARG("slot", U),
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_ppu_metric_def, text_length)),
    REC(PPU_METRIC_SAMPLE, sizeof(struct asys_rec_ppu_metric_sample), ASYS_FEATURE_PPU_METRICS,
        FIELDS(ppu_metric_sample), ARG("device", U),
        TAIL(ASYS_TAIL_REALS, struct asys_rec_ppu_metric_sample, value_count)),
    REC(PPU_METRICS_END, sizeof(struct asys_rec_ppu_metrics_end), ASYS_FEATURE_PPU_METRICS,
        FIELDS(ppu_metrics_end), ARG("device", U), TAIL_NONE),
    REC(PYTHON_CODE, sizeof(struct asys_rec_python_code), ASYS_FEATURE_PYTHON, FIELDS(python_code),
        ARG_NONE, TAIL_NONE),
    REC(PYTHON_SAMPLE, sizeof(struct asys_rec_python_sample), ASYS_FEATURE_PYTHON,
        FIELDS(python_sample), ARG_NONE,
        TAIL(ASYS_TAIL_FRAMES, struct asys_rec_python_sample, depth)),
    REC(PYTHON_STACK, sizeof(struct asys_rec_python_stack), ASYS_FEATURE_PYTHON,
        FIELDS(python_stack), ARG_NONE,
        TAIL(ASYS_TAIL_FRAMES, struct asys_rec_python_stack, depth)),
    REC(PYTHON_STATUS, sizeof(struct asys_rec_python_status), ASYS_FEATURE_PYTHON,
        FIELDS(python_status), ARG("status", U),
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_python_status, text_length)),
    REC(NIC_DEVICE, sizeof(struct asys_rec_nic_device), ASYS_FEATURE_NIC, FIELDS(nic_device),
        ARG_NONE, TAIL_NONE),
    REC(NIC_SAMPLE, sizeof(struct asys_rec_nic_sample), ASYS_FEATURE_NIC, FIELDS(nic_sample),
        ARG("device", U), TAIL(ASYS_TAIL_FRAMES, struct asys_rec_nic_sample, count)),
    REC(NIC_RATE, sizeof(struct asys_rec_nic_rate), ASYS_FEATURE_NIC, FIELDS(nic_rate), ARG_NONE,
        TAIL_NONE),
    REC(HGGC_API, sizeof(struct asys_rec_hggc_api), ASYS_FEATURE_HGGC, FIELDS(hggc_api),
        ARG("api", U), TAIL_NONE),
    REC(HGGC_KERNEL, sizeof(struct asys_rec_hggc_kernel), ASYS_FEATURE_HGGC, FIELDS(hggc_kernel),
        ARG_NONE, TAIL_NONE),
    REC(HGGC_MEMCPY, sizeof(struct asys_rec_hggc_memcpy), ASYS_FEATURE_HGGC, FIELDS(hggc_memcpy),
        ARG_NONE, TAIL_NONE),
    REC(HGGC_MEMSET, sizeof(struct asys_rec_hggc_memset), ASYS_FEATURE_HGGC, FIELDS(hggc_memset),
        ARG_NONE, TAIL_NONE),
    REC(HGGC_SYNC, sizeof(struct asys_rec_hggc_sync), ASYS_FEATURE_HGGC, FIELDS(hggc_sync),
        ARG("sync_type", U), TAIL_NONE),
    REC(HGGC_EVENT_RECORD, sizeof(struct asys_rec_hggc_event_record), ASYS_FEATURE_HGGC,
        FIELDS(hggc_event_record), ARG_NONE, TAIL_NONE),
    REC(HGGC_MEMORY, sizeof(struct asys_rec_hggc_memory), ASYS_FEATURE_HGGC, FIELDS(hggc_memory),
        ARG("operation", U), TAIL_NONE),
    REC(HGGC_GRAPH_TRACE, sizeof(struct asys_rec_hggc_graph_trace), ASYS_FEATURE_HGGC,
        FIELDS(hggc_graph_trace), ARG_NONE, TAIL_NONE),
    REC(HGGC_DEVICE, sizeof(struct asys_rec_hggc_device), ASYS_FEATURE_HGGC, FIELDS(hggc_device),
        ARG("ordinal", U), TAIL_NONE),
    REC(HGGC_CONTEXT, sizeof(struct asys_rec_hggc_context), ASYS_FEATURE_HGGC, FIELDS(hggc_context),
        ARG_NONE, TAIL_NONE),
    REC(HGGC_STREAM, sizeof(struct asys_rec_hggc_stream), ASYS_FEATURE_HGGC, FIELDS(hggc_stream),
        ARG_NONE, TAIL_NONE),
    REC(HGGC_GRAPH_NODE, sizeof(struct asys_rec_hggc_graph_node), ASYS_FEATURE_HGGC,
        FIELDS(hggc_graph_node), ARG("event", U), TAIL_NONE),
    REC(HGGC_GRAPH_EXEC, sizeof(struct asys_rec_hggc_graph_exec), ASYS_FEATURE_HGGC,
        FIELDS(hggc_graph_exec), ARG_NONE, TAIL_NONE),
    REC(HGGC_GRAPH_LAUNCH, sizeof(struct asys_rec_hggc_graph_exec), ASYS_FEATURE_HGGC,
        FIELDS(hggc_graph_exec), ARG_NONE, TAIL_NONE),
    REC(HGGC_OVERHEAD, sizeof(struct asys_rec_hggc_overhead), ASYS_FEATURE_HGGC,
        FIELDS(hggc_overhead), ARG_NONE, TAIL_NONE),
    REC(HGGC_STATUS, sizeof(struct asys_rec_hggc_status), ASYS_FEATURE_HGGC, FIELDS(hggc_status),
        ARG("status", U), TAIL(ASYS_TAIL_TEXT, struct asys_rec_hggc_status, message_length)),
    REC(CPU_SAMPLE, sizeof(struct asys_rec_cpu_sample), ASYS_FEATURE_CPU_SAMPLING,
        FIELDS(cpu_sample), ARG_NONE, TAIL_NONE),
    REC(SCHED_SWITCH, sizeof(struct asys_rec_sched_switch), ASYS_FEATURE_CPU_SAMPLING,
        FIELDS(sched_switch), ARG_NONE, TAIL_NONE),
    REC(CPU_SAMPLING_INFO, sizeof(struct asys_rec_cpu_sampling_info), ASYS_FEATURE_CPU_SAMPLING,
        FIELDS(cpu_sampling_info), ARG_NONE,
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_cpu_sampling_info, reason_length)),
    REC(ACDNN_API, sizeof(struct asys_rec_acompute_api), ASYS_FEATURE_ACDNN, FIELDS(acompute_api),
        ARG("library", U), TAIL_NONE),
    REC(ACDNN_CALL, sizeof(struct asys_rec_acompute_call), ASYS_FEATURE_ACDNN,
        FIELDS(acompute_call), ARG("depth", U), TAIL_NONE),
    REC(ACBLAS_API, sizeof(struct asys_rec_acompute_api), ASYS_FEATURE_ACBLAS, FIELDS(acompute_api),
        ARG("library", U), TAIL_NONE),
    REC(ACBLAS_CALL, sizeof(struct asys_rec_acompute_call), ASYS_FEATURE_ACBLAS,
        FIELDS(acompute_call), ARG("depth", U), TAIL_NONE),
    REC(ACDNN_CALL_SAME, sizeof(struct asys_rec_acompute_call_same), ASYS_FEATURE_ACDNN,
        FIELDS(acompute_call_same), ARG("depth", U), TAIL_NONE),
    REC(ACBLAS_CALL_SAME, sizeof(struct asys_rec_acompute_call_same), ASYS_FEATURE_ACBLAS,
        FIELDS(acompute_call_same), ARG("depth", U), TAIL_NONE),
    REC(PCCL_COMM, sizeof(struct asys_rec_pccl_comm), ASYS_FEATURE_PCCL, FIELDS(pccl_comm),
        ARG("version", U), TAIL_NONE),
    REC(PCCL_GROUP_API, sizeof(struct asys_rec_pccl_group_api), ASYS_FEATURE_PCCL,
        FIELDS(pccl_group_api), ARG("flags", X), TAIL_NONE),
    REC(PCCL_CALL, sizeof(struct asys_rec_pccl_call), ASYS_FEATURE_PCCL, FIELDS(pccl_call),
        ARG("kind", X), TAIL_NONE),
    REC(PCCL_KERNEL_LAUNCH, sizeof(struct asys_rec_pccl_kernel_launch), ASYS_FEATURE_PCCL,
        FIELDS(pccl_kernel_launch), ARG("flags", X), TAIL_NONE),
    REC(PCCL_GROUP, sizeof(struct asys_rec_pccl_group), ASYS_FEATURE_PCCL, FIELDS(pccl_group),
        ARG("flags", X), TAIL_NONE),
    REC(PCCL_TASK, sizeof(struct asys_rec_pccl_task), ASYS_FEATURE_PCCL, FIELDS(pccl_task),
        ARG("kind", X), TAIL_NONE),
    REC(PCCL_PROXY_OP, sizeof(struct asys_rec_pccl_proxy_op), ASYS_FEATURE_PCCL,
        FIELDS(pccl_proxy_op), ARG("flags", X), TAIL_NONE),
    REC(PCCL_PROXY_STEP, sizeof(struct asys_rec_pccl_proxy_step), ASYS_FEATURE_PCCL,
        FIELDS(pccl_proxy_step), ARG("flags", X), TAIL_NONE),
    REC(PCCL_PROXY_CTRL, sizeof(struct asys_rec_pccl_proxy_ctrl), ASYS_FEATURE_PCCL,
        FIELDS(pccl_proxy_ctrl), ARG("state", X), TAIL_NONE),
    REC(PCCL_KERNEL_CH, sizeof(struct asys_rec_pccl_kernel_ch), ASYS_FEATURE_PCCL,
        FIELDS(pccl_kernel_ch), ARG("flags", X), TAIL_NONE),
    REC(PCCL_NET, sizeof(struct asys_rec_pccl_net), ASYS_FEATURE_PCCL, FIELDS(pccl_net),
        ARG("flags", X), TAIL_NONE),
    REC(PCCL_COMM_END, sizeof(struct asys_rec_pccl_comm_end), ASYS_FEATURE_PCCL,
        FIELDS(pccl_comm_end), ARG_NONE, TAIL_NONE),
    REC(PCCL_STATUS, sizeof(struct asys_rec_pccl_status), ASYS_FEATURE_PCCL, FIELDS(pccl_status),
        ARG("status", U), TAIL(ASYS_TAIL_TEXT, struct asys_rec_pccl_status, text_length)),
    REC(VIDEO_API, sizeof(struct asys_rec_video_api), ASYS_FEATURE_HGVIDEO, FIELDS(video_api),
        ARG("function", U), TAIL_NONE),
    REC(VIDEO_ACTIVITY, sizeof(struct asys_rec_video_activity), ASYS_FEATURE_HGVIDEO,
        FIELDS(video_activity), ARG("kind", U), TAIL_NONE),
    REC(VIDEO_STATUS, sizeof(struct asys_rec_video_status), ASYS_FEATURE_HGVIDEO,
        FIELDS(video_status), ARG("status", U), TAIL_NONE),
    REC(VIDEO_API_STREAM, sizeof(struct asys_rec_video_api_stream), ASYS_FEATURE_HGVIDEO,
        FIELDS(video_api_stream), ARG("function", U), TAIL_NONE),
};

const struct asys_rec_info *asys_rec_info(unsigned type)
{
    if (type >= ASYS_REC_TYPE_COUNT || !rec_infos[type].name)
        return NULL;
    return &rec_infos[type];
}
