/* The table every decoder shares: per record type its name, minimum size,
 * feature family, what the header's arg means and what follows its struct.
 * The fields of each struct (for `asys dump`) are generated at build time
 * from schema/asys_format.h (schema/gen_record_fields.py), so a record is
 * written once; a unit test checks they tie together over the whole struct. */
#include <stddef.h>
#include <string.h>

#include "segment_stream.h"
#include "record_fields.h"

#define FIELDS(array) array, (uint16_t)(sizeof array / sizeof array[0])
#define NO_FIELDS NULL, 0

enum { U = ASYS_FIELD_UNSIGNED, S = ASYS_FIELD_STRING, X = ASYS_FIELD_HEX };

/* what the header's arg holds */
#define ARG_NONE NULL, 0
#define ARG(name, kind) name, kind
/* what follows the struct: nothing, text (length in a u32 field), frames (count in a u32 field) */
#define TAIL_NONE ASYS_TAIL_NONE, 0
#define TAIL(kind, type, member) kind, (uint16_t)offsetof(type, member)

/* what a report of one recording window keeps of it (asys_rec_window_kind) */
enum {
    TIMELESS = ASYS_WINDOW_TIMELESS,
    EVENT = ASYS_WINDOW_EVENT,
    DEVICE_WORK = ASYS_WINDOW_DEVICE_WORK
};

#define REC(type, size, feature, fields, arg, tail, window) \
    [ASYS_REC_##type] = {#type, size, feature, fields, arg, tail, window}

static const struct asys_rec_info rec_infos[ASYS_REC_TYPE_COUNT] = {
    REC(PAD, 8, ASYS_FEATURE_CORE, NO_FIELDS, ARG_NONE, TAIL_NONE, TIMELESS),
    REC(TIME_BASE, sizeof(struct asys_rec_time_base), ASYS_FEATURE_CORE,
        FIELDS(asys_fields_time_base), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(STRING_DEF, sizeof(struct asys_rec_string_def), ASYS_FEATURE_CORE,
        FIELDS(asys_fields_string_def), ARG_NONE,
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_string_def, length), TIMELESS),
    REC(PROCESS_INFO, sizeof(struct asys_rec_process_info), ASYS_FEATURE_CORE,
        FIELDS(asys_fields_process_info), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(THREAD_START, sizeof(struct asys_rec_thread), ASYS_FEATURE_CORE, FIELDS(asys_fields_thread),
        ARG_NONE, TAIL_NONE, TIMELESS),
    REC(THREAD_END, sizeof(struct asys_rec_thread), ASYS_FEATURE_CORE, FIELDS(asys_fields_thread),
        ARG_NONE, TAIL_NONE, TIMELESS),
    REC(DROP, sizeof(struct asys_rec_drop), ASYS_FEATURE_CORE, FIELDS(asys_fields_drop), ARG_NONE,
        TAIL_NONE, TIMELESS),
    REC(CLOCK_PAIR, sizeof(struct asys_rec_clock_pair), ASYS_FEATURE_CORE,
        FIELDS(asys_fields_clock_pair), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(MODULE, sizeof(struct asys_rec_module), ASYS_FEATURE_STACKS, FIELDS(asys_fields_module),
        ARG_NONE, TAIL_NONE, TIMELESS),
    REC(CALLCHAIN, sizeof(struct asys_rec_callchain), ASYS_FEATURE_STACKS,
        FIELDS(asys_fields_callchain), ARG_NONE,
        TAIL(ASYS_TAIL_FRAMES, struct asys_rec_callchain, depth), TIMELESS),
    REC(CAPTURE, sizeof(struct asys_rec_capture), ASYS_FEATURE_CORE, FIELDS(asys_fields_capture),
        ARG("edge", U), TAIL_NONE, TIMELESS),
    REC(HGTX_PUSH, 8, ASYS_FEATURE_HGTX, NO_FIELDS, ARG("message_string_id", S), TAIL_NONE, EVENT),
    REC(HGTX_PUSH_EX, sizeof(struct asys_rec_hgtx_ex), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_ex), ARG_NONE, TAIL_NONE, EVENT),
    REC(HGTX_POP, 8, ASYS_FEATURE_HGTX, NO_FIELDS, ARG("domain", U), TAIL_NONE, EVENT),
    REC(HGTX_MARK, 8, ASYS_FEATURE_HGTX, NO_FIELDS, ARG("message_string_id", S), TAIL_NONE, EVENT),
    REC(HGTX_MARK_EX, sizeof(struct asys_rec_hgtx_ex), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_ex), ARG_NONE, TAIL_NONE, EVENT),
    REC(HGTX_START, sizeof(struct asys_rec_hgtx_range), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_range), ARG("message_string_id", S), TAIL_NONE, EVENT),
    REC(HGTX_START_EX, sizeof(struct asys_rec_hgtx_start_ex), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_start_ex), ARG_NONE, TAIL_NONE, EVENT),
    REC(HGTX_END, sizeof(struct asys_rec_hgtx_range), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_range), ARG_NONE, TAIL_NONE, EVENT),
    REC(HGTX_DOMAIN, sizeof(struct asys_rec_hgtx_domain), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_domain), ARG("domain", U), TAIL_NONE, TIMELESS),
    REC(HGTX_CATEGORY, sizeof(struct asys_rec_hgtx_category), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_category), ARG("domain", U), TAIL_NONE, TIMELESS),
    REC(HGTX_THREAD_NAME, sizeof(struct asys_rec_hgtx_thread_name), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_thread_name), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(HGTX_SCHEMA, sizeof(struct asys_rec_hgtx_schema), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_schema), ARG("domain", U), TAIL_NONE, TIMELESS),
    REC(HGTX_PAYLOAD, sizeof(struct asys_rec_hgtx_payload), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_payload), ARG("domain", U), TAIL_NONE, TIMELESS),
    REC(HGTX_COUNTER, sizeof(struct asys_rec_hgtx_counter), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_counter), ARG("domain", U), TAIL_NONE, TIMELESS),
    REC(HGTX_SAMPLE, sizeof(struct asys_rec_hgtx_sample), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_sample), ARG("domain", U), TAIL_NONE, EVENT),
    REC(HGTX_MEM, sizeof(struct asys_rec_hgtx_mem), ASYS_FEATURE_HGTX, FIELDS(asys_fields_hgtx_mem),
        ARG("operation", U), TAIL_NONE, TIMELESS),
    REC(HGTX_RESOURCE, sizeof(struct asys_rec_hgtx_resource), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_resource), ARG("domain", U), TAIL_NONE, TIMELESS),
    REC(HGTX_SYNC, sizeof(struct asys_rec_hgtx_sync), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_sync), ARG("operation", U), TAIL_NONE, TIMELESS),
    REC(HGTX_INJECTION, sizeof(struct asys_rec_hgtx_injection), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_injection), ARG_NONE,
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_hgtx_injection, path_length), TIMELESS),
    REC(HGTX_TIME, sizeof(struct asys_rec_hgtx_time), ASYS_FEATURE_HGTX,
        FIELDS(asys_fields_hgtx_time), ARG("kind", U), TAIL_NONE, TIMELESS),
    REC(OSRT_CALL, sizeof(struct asys_rec_osrt_call), ASYS_FEATURE_OSRT,
        FIELDS(asys_fields_osrt_call), ARG("function", U), TAIL_NONE, EVENT),
    REC(HEAP_ALLOC, sizeof(struct asys_rec_heap_alloc), ASYS_FEATURE_MEMORY,
        FIELDS(asys_fields_heap_alloc), ARG("function", U), TAIL_NONE, EVENT),
    REC(HEAP_FREE, sizeof(struct asys_rec_heap_free), ASYS_FEATURE_MEMORY,
        FIELDS(asys_fields_heap_free), ARG("function", U), TAIL_NONE, EVENT),
    REC(HEAP_ALLOC_EVERY, sizeof(struct asys_rec_heap_alloc_every), ASYS_FEATURE_MEMORY,
        FIELDS(asys_fields_heap_alloc_every), ARG("function", U), TAIL_NONE, EVENT),
    REC(HEAP_FREE_EVERY, sizeof(struct asys_rec_heap_free_every), ASYS_FEATURE_MEMORY,
        FIELDS(asys_fields_heap_free_every), ARG("function", U), TAIL_NONE, EVENT),
    REC(HEAP_ALLOC_SUM, sizeof(struct asys_rec_heap_alloc_sum), ASYS_FEATURE_MEMORY,
        FIELDS(asys_fields_heap_alloc_sum), ARG("function", U), TAIL_NONE, TIMELESS),
    REC(HEAP_FREE_SUM, sizeof(struct asys_rec_heap_free_sum), ASYS_FEATURE_MEMORY,
        FIELDS(asys_fields_heap_free_sum), ARG("function", U), TAIL_NONE, TIMELESS),
    REC(EVENT_COUNT, sizeof(struct asys_rec_event_count), ASYS_FEATURE_EVENTS,
        FIELDS(asys_fields_event_count), ARG("event", U), TAIL_NONE, EVENT),
    REC(EVENT_STATUS, sizeof(struct asys_rec_event_status), ASYS_FEATURE_EVENTS,
        FIELDS(asys_fields_event_status), ARG("event", U), TAIL_NONE, TIMELESS),
    REC(EVENT_THREAD_COUNT, sizeof(struct asys_rec_event_thread_count), ASYS_FEATURE_EVENTS,
        FIELDS(asys_fields_event_thread_count), ARG("event", U), TAIL_NONE, EVENT),
    REC(HOST_MEMORY, sizeof(struct asys_rec_host_memory), ASYS_FEATURE_MEMORY,
        FIELDS(asys_fields_host_memory), ARG_NONE, TAIL_NONE, EVENT),
    REC(PPU_METRICS_DEVICE, sizeof(struct asys_rec_ppu_metrics_device), ASYS_FEATURE_PPU_METRICS,
        FIELDS(asys_fields_ppu_metrics_device), ARG("device", U),
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_ppu_metrics_device, text_length), TIMELESS),
    REC(PPU_METRIC_DEF, sizeof(struct asys_rec_ppu_metric_def), ASYS_FEATURE_PPU_METRICS,
        FIELDS(asys_fields_ppu_metric_def), ARG("slot", U),
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_ppu_metric_def, text_length), TIMELESS),
    REC(PPU_METRIC_SAMPLE, sizeof(struct asys_rec_ppu_metric_sample), ASYS_FEATURE_PPU_METRICS,
        FIELDS(asys_fields_ppu_metric_sample), ARG("device", U),
        TAIL(ASYS_TAIL_REALS, struct asys_rec_ppu_metric_sample, value_count), EVENT),
    REC(PPU_METRICS_END, sizeof(struct asys_rec_ppu_metrics_end), ASYS_FEATURE_PPU_METRICS,
        FIELDS(asys_fields_ppu_metrics_end), ARG("device", U), TAIL_NONE, TIMELESS),
    REC(PYTHON_CODE, sizeof(struct asys_rec_python_code), ASYS_FEATURE_PYTHON,
        FIELDS(asys_fields_python_code), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(PYTHON_SAMPLE, sizeof(struct asys_rec_python_sample), ASYS_FEATURE_PYTHON,
        FIELDS(asys_fields_python_sample), ARG_NONE,
        TAIL(ASYS_TAIL_FRAMES, struct asys_rec_python_sample, depth), EVENT),
    REC(PYTHON_STACK, sizeof(struct asys_rec_python_stack), ASYS_FEATURE_PYTHON,
        FIELDS(asys_fields_python_stack), ARG_NONE,
        TAIL(ASYS_TAIL_FRAMES, struct asys_rec_python_stack, depth), EVENT),
    REC(PYTHON_STATUS, sizeof(struct asys_rec_python_status), ASYS_FEATURE_PYTHON,
        FIELDS(asys_fields_python_status), ARG("status", U),
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_python_status, text_length), TIMELESS),
    REC(NIC_DEVICE, sizeof(struct asys_rec_nic_device), ASYS_FEATURE_NIC,
        FIELDS(asys_fields_nic_device), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(NIC_SAMPLE, sizeof(struct asys_rec_nic_sample), ASYS_FEATURE_NIC,
        FIELDS(asys_fields_nic_sample), ARG("device", U),
        TAIL(ASYS_TAIL_FRAMES, struct asys_rec_nic_sample, count), EVENT),
    REC(NIC_RATE, sizeof(struct asys_rec_nic_rate), ASYS_FEATURE_NIC, FIELDS(asys_fields_nic_rate),
        ARG_NONE, TAIL_NONE, TIMELESS),
    REC(HGGC_API, sizeof(struct asys_rec_hggc_api), ASYS_FEATURE_HGGC, FIELDS(asys_fields_hggc_api),
        ARG("api", U), TAIL_NONE, EVENT),
    REC(HGGC_KERNEL, sizeof(struct asys_rec_hggc_kernel), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_kernel), ARG_NONE, TAIL_NONE, DEVICE_WORK),
    REC(HGGC_MEMCPY, sizeof(struct asys_rec_hggc_memcpy), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_memcpy), ARG_NONE, TAIL_NONE, DEVICE_WORK),
    REC(HGGC_MEMSET, sizeof(struct asys_rec_hggc_memset), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_memset), ARG_NONE, TAIL_NONE, DEVICE_WORK),
    REC(HGGC_SYNC, sizeof(struct asys_rec_hggc_sync), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_sync), ARG("sync_type", U), TAIL_NONE, EVENT),
    REC(HGGC_EVENT_RECORD, sizeof(struct asys_rec_hggc_event_record), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_event_record), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(HGGC_MEMORY, sizeof(struct asys_rec_hggc_memory), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_memory), ARG("operation", U), TAIL_NONE, EVENT),
    REC(HGGC_GRAPH_TRACE, sizeof(struct asys_rec_hggc_graph_trace), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_graph_trace), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(HGGC_DEVICE, sizeof(struct asys_rec_hggc_device), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_device), ARG("ordinal", U), TAIL_NONE, TIMELESS),
    REC(HGGC_CONTEXT, sizeof(struct asys_rec_hggc_context), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_context), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(HGGC_STREAM, sizeof(struct asys_rec_hggc_stream), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_stream), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(HGGC_GRAPH_NODE, sizeof(struct asys_rec_hggc_graph_node), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_graph_node), ARG("event", U), TAIL_NONE, TIMELESS),
    REC(HGGC_GRAPH_EXEC, sizeof(struct asys_rec_hggc_graph_exec), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_graph_exec), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(HGGC_GRAPH_LAUNCH, sizeof(struct asys_rec_hggc_graph_exec), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_graph_exec), ARG_NONE, TAIL_NONE, EVENT),
    REC(HGGC_OVERHEAD, sizeof(struct asys_rec_hggc_overhead), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_overhead), ARG_NONE, TAIL_NONE, EVENT),
    REC(HGGC_STATUS, sizeof(struct asys_rec_hggc_status), ASYS_FEATURE_HGGC,
        FIELDS(asys_fields_hggc_status), ARG("status", U),
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_hggc_status, message_length), TIMELESS),
    REC(CPU_SAMPLE, sizeof(struct asys_rec_cpu_sample), ASYS_FEATURE_CPU_SAMPLING,
        FIELDS(asys_fields_cpu_sample), ARG_NONE, TAIL_NONE, EVENT),
    REC(SCHED_SWITCH, sizeof(struct asys_rec_sched_switch), ASYS_FEATURE_CPU_SAMPLING,
        FIELDS(asys_fields_sched_switch), ARG_NONE, TAIL_NONE, EVENT),
    REC(CPU_SAMPLING_INFO, sizeof(struct asys_rec_cpu_sampling_info), ASYS_FEATURE_CPU_SAMPLING,
        FIELDS(asys_fields_cpu_sampling_info), ARG_NONE,
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_cpu_sampling_info, reason_length), TIMELESS),
    REC(ACDNN_API, sizeof(struct asys_rec_acompute_api), ASYS_FEATURE_ACDNN,
        FIELDS(asys_fields_acompute_api), ARG("library", U), TAIL_NONE, TIMELESS),
    REC(ACDNN_CALL, sizeof(struct asys_rec_acompute_call), ASYS_FEATURE_ACDNN,
        FIELDS(asys_fields_acompute_call), ARG("depth", U), TAIL_NONE, EVENT),
    REC(ACBLAS_API, sizeof(struct asys_rec_acompute_api), ASYS_FEATURE_ACBLAS,
        FIELDS(asys_fields_acompute_api), ARG("library", U), TAIL_NONE, TIMELESS),
    REC(ACBLAS_CALL, sizeof(struct asys_rec_acompute_call), ASYS_FEATURE_ACBLAS,
        FIELDS(asys_fields_acompute_call), ARG("depth", U), TAIL_NONE, EVENT),
    REC(ACDNN_CALL_SAME, sizeof(struct asys_rec_acompute_call_same), ASYS_FEATURE_ACDNN,
        FIELDS(asys_fields_acompute_call_same), ARG("depth", U), TAIL_NONE, EVENT),
    REC(ACBLAS_CALL_SAME, sizeof(struct asys_rec_acompute_call_same), ASYS_FEATURE_ACBLAS,
        FIELDS(asys_fields_acompute_call_same), ARG("depth", U), TAIL_NONE, EVENT),
    REC(PCCL_COMM, sizeof(struct asys_rec_pccl_comm), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_comm), ARG("version", U), TAIL_NONE, TIMELESS),
    REC(PCCL_GROUP_API, sizeof(struct asys_rec_pccl_group_api), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_group_api), ARG("flags", X), TAIL_NONE, EVENT),
    REC(PCCL_CALL, sizeof(struct asys_rec_pccl_call), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_call), ARG("kind", X), TAIL_NONE, EVENT),
    REC(PCCL_KERNEL_LAUNCH, sizeof(struct asys_rec_pccl_kernel_launch), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_kernel_launch), ARG("flags", X), TAIL_NONE, EVENT),
    REC(PCCL_GROUP, sizeof(struct asys_rec_pccl_group), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_group), ARG("flags", X), TAIL_NONE, TIMELESS),
    REC(PCCL_TASK, sizeof(struct asys_rec_pccl_task), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_task), ARG("kind", X), TAIL_NONE, TIMELESS),
    REC(PCCL_PROXY_OP, sizeof(struct asys_rec_pccl_proxy_op), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_proxy_op), ARG("flags", X), TAIL_NONE, TIMELESS),
    REC(PCCL_PROXY_STEP, sizeof(struct asys_rec_pccl_proxy_step), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_proxy_step), ARG("flags", X), TAIL_NONE, TIMELESS),
    REC(PCCL_PROXY_CTRL, sizeof(struct asys_rec_pccl_proxy_ctrl), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_proxy_ctrl), ARG("state", X), TAIL_NONE, TIMELESS),
    REC(PCCL_KERNEL_CH, sizeof(struct asys_rec_pccl_kernel_ch), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_kernel_ch), ARG("flags", X), TAIL_NONE, TIMELESS),
    REC(PCCL_NET, sizeof(struct asys_rec_pccl_net), ASYS_FEATURE_PCCL, FIELDS(asys_fields_pccl_net),
        ARG("flags", X), TAIL_NONE, TIMELESS),
    REC(PCCL_COMM_END, sizeof(struct asys_rec_pccl_comm_end), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_comm_end), ARG_NONE, TAIL_NONE, TIMELESS),
    REC(PCCL_STATUS, sizeof(struct asys_rec_pccl_status), ASYS_FEATURE_PCCL,
        FIELDS(asys_fields_pccl_status), ARG("status", U),
        TAIL(ASYS_TAIL_TEXT, struct asys_rec_pccl_status, text_length), TIMELESS),
    REC(VIDEO_API, sizeof(struct asys_rec_video_api), ASYS_FEATURE_HGVIDEO,
        FIELDS(asys_fields_video_api), ARG("function", U), TAIL_NONE, EVENT),
    REC(VIDEO_ACTIVITY, sizeof(struct asys_rec_video_activity), ASYS_FEATURE_HGVIDEO,
        FIELDS(asys_fields_video_activity), ARG("kind", U), TAIL_NONE, EVENT),
    REC(VIDEO_STATUS, sizeof(struct asys_rec_video_status), ASYS_FEATURE_HGVIDEO,
        FIELDS(asys_fields_video_status), ARG("status", U), TAIL_NONE, TIMELESS),
    REC(VIDEO_API_STREAM, sizeof(struct asys_rec_video_api_stream), ASYS_FEATURE_HGVIDEO,
        FIELDS(asys_fields_video_api_stream), ARG("function", U), TAIL_NONE, EVENT),
};

const struct asys_rec_info *asys_rec_info(unsigned type)
{
    if (type >= ASYS_REC_TYPE_COUNT || !rec_infos[type].name)
        return NULL;
    return &rec_infos[type];
}

/* Device work starts with start_ns, right after the header, in the three
 * records (asys_rec_outside_window reads it there). */
_Static_assert(offsetof(struct asys_rec_hggc_kernel, start_ns) == 8 &&
                   offsetof(struct asys_rec_hggc_memcpy, start_ns) == 8 &&
                   offsetof(struct asys_rec_hggc_memset, start_ns) == 8,
               "device work starts with start_ns");

enum asys_window_kind asys_rec_window_kind(unsigned type)
{
    const struct asys_rec_info *info = asys_rec_info(type);
    return info ? (enum asys_window_kind)info->window : ASYS_WINDOW_TIMELESS;
}

int asys_rec_outside_window(const struct asys_record *rec, uint64_t ns, uint64_t start_ns,
                            uint64_t end_ns)
{
    switch (asys_rec_window_kind(rec->type)) {
    case ASYS_WINDOW_EVENT:
        break;
    case ASYS_WINDOW_DEVICE_WORK:
        if (rec->size < 16)
            return 0; /* too short: its reader says so */
        memcpy(&ns, rec->data + 8, sizeof ns);
        break;
    default:
        return 0;
    }
    return ns < start_ns || ns > end_ns;
}
