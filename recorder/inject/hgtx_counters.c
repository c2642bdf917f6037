/* HGTX collector: the counters extension (nvToolsExtCounters.h).  A
 * counter (group) is written once as registered; each sample is stamped
 * when the call is made and carries its value or its bytes, decoded
 * offline by the counter's schema.  Batches keep the program's timestamps. */
#define _GNU_SOURCE
#include <string.h>

/* first: it asks NVTX for declarations only (NVTX_NO_IMPL) */
#include "hgtx_internal.h"

#include <nvtx3/nvToolsExtSemanticsCounters.h>
#include <nvtx3/nvToolsExtSemanticsTime.h>

static void read_semantics(struct asys_thread *t, const nvtxSemanticsHeader_t *s,
                           struct asys_rec_hgtx_counter *r)
{
    for (int n = 0; s && n < 16; s = s->next, n++) {
        if (s->semanticId == NVTX_SEMANTIC_ID_COUNTERS_V1 &&
            s->structSize >= sizeof(nvtxSemanticsCounter_t)) {
            const nvtxSemanticsCounter_t *c = (const void *)s;
            r->semantic_flags = c->flags;
            r->unit_string_id = c->unit ? asys_intern(t, c->unit) : 0;
            r->unit_scale_numerator = c->unitScaleNumerator;
            r->unit_scale_denominator = c->unitScaleDenominator;
            r->limit_type = (int32_t)c->limitType;
            r->limit_min = c->min.u64;
            r->limit_max = c->max.u64;
        } else if (s->semanticId == NVTX_SEMANTIC_ID_TIME_V1 &&
                   s->structSize >= sizeof(nvtxSemanticsTime_t)) {
            r->time_domain = ((const nvtxSemanticsTime_t *)s)->timeDomainId;
        }
    }
}

static uint64_t NVTX_API counter_register(nvtxDomainHandle_t domain, const nvtxCounterAttr_t *attr)
{
    if (!attr || attr->structSize < sizeof *attr)
        return NVTX_COUNTER_ID_NONE;
    uint64_t id = attr->counterId >= NVTX_COUNTER_ID_STATIC_START &&
                          attr->counterId < NVTX_COUNTER_ID_DYNAMIC_START
                      ? attr->counterId
                      : asys_hgtx_dynamic_id();
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return id;
    struct asys_rec_hgtx_counter c;
    memset(&c, 0, sizeof c);
    c.name_string_id = attr->name ? asys_intern(t, attr->name) : 0;
    c.description_string_id = attr->description ? asys_intern(t, attr->description) : 0;
    c.counter_id = id;
    c.schema_id = attr->schemaId;
    c.scope_id = attr->scopeId;
    c.unit_scale_numerator = 1;
    c.unit_scale_denominator = 1;
    read_semantics(t, attr->semantics, &c);
    uint32_t delta;
    struct asys_rec_hgtx_counter *r = asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (r) {
        memcpy((uint8_t *)r + sizeof r->header, (uint8_t *)&c + sizeof c.header,
               sizeof c - sizeof c.header);
        asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGTX_COUNTER, sizeof *r / 8,
                                                      asys_hgtx_domain_id(domain), delta));
    }
    asys_thread_leave();
    return id;
}

static uint32_t padded(size_t n)
{
    return (uint32_t)((n + 7u) & ~(size_t)7u);
}

/* One sample record: `data` (and `stamps`) follow the struct, cut to fit. */
static void write_sample(nvtxDomainHandle_t domain, uint64_t counter, unsigned kind, uint64_t value,
                         uint8_t reason, const void *data, size_t data_size, const void *stamps,
                         size_t stamps_size, uint64_t batch_flags)
{
    if (!asys_capturing())
        return;
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0;
    if (!t) {
        asys_thread_count_lost(sizeof(struct asys_rec_hgtx_sample));
        return;
    }
    const size_t room = ASYS_REC_MAX_SIZE - sizeof(struct asys_rec_hgtx_sample);
    uint8_t cut = 0;
    if (!data)
        data_size = 0;
    if (!stamps)
        stamps_size = 0;
    if (data_size > room) {
        data_size = room & ~(size_t)7;
        cut = 1;
    }
    if (padded(data_size) + stamps_size > room) {
        stamps_size = (room - padded(data_size)) & ~(size_t)7;
        cut = 1;
    }
    uint32_t size =
        (uint32_t)(sizeof(struct asys_rec_hgtx_sample) + padded(data_size) + padded(stamps_size));
    uint32_t delta;
    struct asys_rec_hgtx_sample *r = asys_segment_reserve(&t->seg, size, ticks, &delta);
    if (r) {
        unsigned words = asys_hgtx_size_words(size);
        r->size_bytes = words == ASYS_REC_EXTENDED ? size : 0;
        r->kind = (uint16_t)kind;
        r->reason = reason;
        r->cut = cut;
        r->counter_id = counter;
        r->value = value;
        r->data_size = (uint32_t)data_size;
        r->timestamps_size = (uint32_t)stamps_size;
        r->batch_flags = batch_flags;
        uint8_t *p = (uint8_t *)(r + 1);
        if (data_size && data)
            memcpy(p, data, data_size);
        memset(p + data_size, 0, padded(data_size) - data_size);
        p += padded(data_size);
        if (stamps_size && stamps)
            memcpy(p, stamps, stamps_size);
        memset(p + stamps_size, 0, padded(stamps_size) - stamps_size);
        asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGTX_SAMPLE, words,
                                                      asys_hgtx_domain_id(domain), delta));
    }
    asys_thread_leave();
}

static void NVTX_API sample_int64(nvtxDomainHandle_t domain, uint64_t counter, int64_t value)
{
    write_sample(domain, counter, ASYS_HGTX_SAMPLE_INT64, (uint64_t)value, 0, NULL, 0, NULL, 0, 0);
}

static void NVTX_API sample_float64(nvtxDomainHandle_t domain, uint64_t counter, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    write_sample(domain, counter, ASYS_HGTX_SAMPLE_FLOAT64, bits, 0, NULL, 0, NULL, 0, 0);
}

static void NVTX_API sample(nvtxDomainHandle_t domain, uint64_t counter, const void *value,
                            size_t size)
{
    write_sample(domain, counter, ASYS_HGTX_SAMPLE_DATA, 0, 0, value, size, NULL, 0, 0);
}

static void NVTX_API sample_no_value(nvtxDomainHandle_t domain, uint64_t counter, uint8_t reason)
{
    write_sample(domain, counter, ASYS_HGTX_SAMPLE_NO_VALUE, 0, reason, NULL, 0, NULL, 0, 0);
}

static void NVTX_API batch_submit(nvtxDomainHandle_t domain, const nvtxCounterBatch_t *batch)
{
    if (!batch)
        return;
    write_sample(domain, batch->counterId, ASYS_HGTX_SAMPLE_BATCH, 0, 0, batch->counters,
                 batch->countersSize, batch->timestamps, batch->timestampsSize, batch->flags);
}

#define HOOK ASYS_HGTX_HOOK
static const struct asys_hgtx_hook counter_hooks[] = {
    HOOK(NVTX3EXT_CBID_nvtxCounterRegister, counter_register),
    HOOK(NVTX3EXT_CBID_nvtxCounterSampleInt64, sample_int64),
    HOOK(NVTX3EXT_CBID_nvtxCounterSampleFloat64, sample_float64),
    HOOK(NVTX3EXT_CBID_nvtxCounterSample, sample),
    HOOK(NVTX3EXT_CBID_nvtxCounterSampleNoValue, sample_no_value),
    HOOK(NVTX3EXT_CBID_nvtxCounterBatchSubmit, batch_submit),
};

const struct asys_hgtx_ext_module asys_hgtx_counters_module = {
    NVTX_EXT_COUNTERS_MODULEID, "counters", counter_hooks,
    sizeof counter_hooks / sizeof counter_hooks[0]};
