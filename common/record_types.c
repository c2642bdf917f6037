/* The table every decoder shares: name, minimum size and feature family of
 * each record type.  Importers keep their own dispatch tables keyed the same. */
#include "segment_stream.h"

#define REC(type, struct_size, feature) [type] = {#type + 9, struct_size, feature}

static const struct asys_rec_info rec_infos[ASYS_REC_TYPE_COUNT] = {
    REC(ASYS_REC_PAD, 8, ASYS_FEATURE_CORE),
    REC(ASYS_REC_TIME_BASE, sizeof(struct asys_rec_time_base), ASYS_FEATURE_CORE),
    REC(ASYS_REC_STRING_DEF, sizeof(struct asys_rec_string_def), ASYS_FEATURE_CORE),
    REC(ASYS_REC_PROCESS_INFO, sizeof(struct asys_rec_process_info), ASYS_FEATURE_CORE),
    REC(ASYS_REC_THREAD_START, sizeof(struct asys_rec_thread), ASYS_FEATURE_CORE),
    REC(ASYS_REC_THREAD_END, sizeof(struct asys_rec_thread), ASYS_FEATURE_CORE),
    REC(ASYS_REC_DROP, sizeof(struct asys_rec_drop), ASYS_FEATURE_CORE),
    REC(ASYS_REC_CLOCK_PAIR, sizeof(struct asys_rec_clock_pair), ASYS_FEATURE_CORE),
    REC(ASYS_REC_MODULE, sizeof(struct asys_rec_module), ASYS_FEATURE_STACKS),
    REC(ASYS_REC_CALLCHAIN, sizeof(struct asys_rec_callchain), ASYS_FEATURE_STACKS),
    REC(ASYS_REC_HGTX_PUSH, 8, ASYS_FEATURE_HGTX),
    REC(ASYS_REC_HGTX_PUSH_EX, sizeof(struct asys_rec_hgtx_ex), ASYS_FEATURE_HGTX),
    REC(ASYS_REC_HGTX_POP, 8, ASYS_FEATURE_HGTX),
    REC(ASYS_REC_HGTX_MARK, 8, ASYS_FEATURE_HGTX),
    REC(ASYS_REC_HGTX_MARK_EX, sizeof(struct asys_rec_hgtx_ex), ASYS_FEATURE_HGTX),
    REC(ASYS_REC_HGTX_START, sizeof(struct asys_rec_hgtx_range), ASYS_FEATURE_HGTX),
    REC(ASYS_REC_HGTX_START_EX, sizeof(struct asys_rec_hgtx_start_ex), ASYS_FEATURE_HGTX),
    REC(ASYS_REC_HGTX_END, sizeof(struct asys_rec_hgtx_range), ASYS_FEATURE_HGTX),
    REC(ASYS_REC_HGTX_DOMAIN, sizeof(struct asys_rec_hgtx_domain), ASYS_FEATURE_HGTX),
    REC(ASYS_REC_HGTX_CATEGORY, sizeof(struct asys_rec_hgtx_category), ASYS_FEATURE_HGTX),
    REC(ASYS_REC_HGTX_THREAD_NAME, sizeof(struct asys_rec_hgtx_thread_name), ASYS_FEATURE_HGTX),
    REC(ASYS_REC_OSRT_CALL, sizeof(struct asys_rec_osrt_call), ASYS_FEATURE_OSRT),
    REC(ASYS_REC_HGGC_API, sizeof(struct asys_rec_hggc_api), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_KERNEL, sizeof(struct asys_rec_hggc_kernel), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_MEMCPY, sizeof(struct asys_rec_hggc_memcpy), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_MEMSET, sizeof(struct asys_rec_hggc_memset), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_SYNC, sizeof(struct asys_rec_hggc_sync), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_EVENT_RECORD, sizeof(struct asys_rec_hggc_event_record), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_MEMORY, sizeof(struct asys_rec_hggc_memory), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_GRAPH_TRACE, sizeof(struct asys_rec_hggc_graph_trace), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_DEVICE, sizeof(struct asys_rec_hggc_device), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_CONTEXT, sizeof(struct asys_rec_hggc_context), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_STREAM, sizeof(struct asys_rec_hggc_stream), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_GRAPH_NODE, sizeof(struct asys_rec_hggc_graph_node), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_GRAPH_EXEC, sizeof(struct asys_rec_hggc_graph_exec), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_GRAPH_LAUNCH, sizeof(struct asys_rec_hggc_graph_exec), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_OVERHEAD, sizeof(struct asys_rec_hggc_overhead), ASYS_FEATURE_HGGC),
    REC(ASYS_REC_HGGC_STATUS, sizeof(struct asys_rec_hggc_status), ASYS_FEATURE_HGGC),
};

const struct asys_rec_info *asys_rec_info(unsigned type)
{
    if (type >= ASYS_REC_TYPE_COUNT || !rec_infos[type].name)
        return NULL;
    return &rec_infos[type];
}
