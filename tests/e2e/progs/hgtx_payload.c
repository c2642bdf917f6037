/* Every function of NVTX's payload extension (nvToolsExtPayload.h), with
 * values the test checks exactly (tests/e2e/test_hgtx_extensions.py).  The
 * times of deferred events are printed as "name=ns" lines. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <nvtx3/nvToolsExtSemanticsTime.h>

struct point {
    int32_t x;
    double y;
    uint8_t flags;
    char name[8];
    const char *label;
    uint32_t color; /* enum */
    uint64_t big;
    int16_t values[4];
};

struct pair {
    struct point a, b;
};

struct attrs { /* an event's message, colour and category in its payload */
    const char *message;
    uint32_t argb;
    uint32_t category;
    int64_t value;
};

struct samples { /* a length-indexed array */
    uint32_t count;
    float data[3];
};

struct deferred {
    int64_t begin, end;
    const char *name;
};

struct deferred_mark {
    int64_t at;
    uint32_t id;
};

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t microseconds(void)
{
    return monotonic_ns() / 1000;
}

static int64_t microseconds_of(void *data)
{
    (void)data;
    return microseconds();
}

#define ENTRY(flags, type, name, detail, offset) \
    { \
        flags, type, name, NULL, detail, offset, NULL, NULL \
    }

static uint64_t register_schema(nvtxDomainHandle_t d, const char *name, uint64_t type,
                                const nvtxPayloadSchemaEntry_t *entries, size_t n, size_t size)
{
    nvtxPayloadSchemaAttr_t attr = {0};
    attr.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                     (size ? NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE : 0);
    attr.name = name;
    attr.type = type;
    attr.entries = entries;
    attr.numEntries = n;
    attr.payloadStaticSize = size;
    return nvtxPayloadSchemaRegister(d, &attr);
}

int main(void)
{
    nvtxDomainHandle_t d = nvtxDomainCreateA("payloads");
    printf("enabled=%u\n", (unsigned)nvtxDomainIsEnabled(d));

    /* an enum, and schemas that use it */
    static const nvtxPayloadEnum_t colors[] = {{"RED", 1, 0}, {"GREEN", 2, 0}, {"BLUE", 4, 0}};
    nvtxPayloadEnumAttr_t enum_attr = {0};
    enum_attr.fieldMask = NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME | NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES |
                          NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES |
                          NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE;
    enum_attr.name = "Color";
    enum_attr.entries = colors;
    enum_attr.numEntries = 3;
    enum_attr.sizeOfEnum = 4;
    uint64_t color_enum = nvtxPayloadEnumRegister(d, &enum_attr);

    const nvtxPayloadSchemaEntry_t point_entries[] = {
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "x", 0, offsetof(struct point, x)),
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "y", 0, offsetof(struct point, y)),
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_UINT8, "flags", 0, offsetof(struct point, flags)),
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "name", 8, offsetof(struct point, name)),
        ENTRY(NVTX_PAYLOAD_ENTRY_FLAG_POINTER | NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_ZERO_TERMINATED,
              NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "label", 0, offsetof(struct point, label)),
        ENTRY(0, color_enum, "color", 0, offsetof(struct point, color)),
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "big", 0, offsetof(struct point, big)),
        ENTRY(NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE, NVTX_PAYLOAD_ENTRY_TYPE_INT16, "values", 4,
              offsetof(struct point, values)),
    };
    uint64_t point_schema = register_schema(d, "Point", NVTX_PAYLOAD_SCHEMA_TYPE_STATIC,
                                            point_entries, 8, sizeof(struct point));
    const nvtxPayloadSchemaEntry_t pair_entries[] = {
        ENTRY(0, point_schema, "a", 0, offsetof(struct pair, a)),
        ENTRY(0, point_schema, "b", 0, offsetof(struct pair, b)),
    };
    uint64_t pair_schema = register_schema(d, "Pair", NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, pair_entries,
                                           2, sizeof(struct pair));
    const nvtxPayloadSchemaEntry_t attr_entries[] = {
        ENTRY(NVTX_PAYLOAD_ENTRY_FLAG_POINTER | NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_ZERO_TERMINATED |
                  NVTX_PAYLOAD_ENTRY_FLAG_EVENT_MESSAGE,
              NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "message", 0, offsetof(struct attrs, message)),
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_COLOR_ARGB, "argb", 0, offsetof(struct attrs, argb)),
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_CATEGORY, "category", 0, offsetof(struct attrs, category)),
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_INT64, "value", 0, offsetof(struct attrs, value)),
    };
    uint64_t attr_schema = register_schema(d, "Attributes", NVTX_PAYLOAD_SCHEMA_TYPE_STATIC,
                                           attr_entries, 4, sizeof(struct attrs));
    /* a message passed as the payload itself, measured by the tool (SIZE_MAX) */
    const nvtxPayloadSchemaEntry_t message_entries[] = {
        ENTRY(NVTX_PAYLOAD_ENTRY_FLAG_EVENT_MESSAGE | NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_ZERO_TERMINATED,
              NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "text", 0, 0),
    };
    uint64_t message_schema =
        register_schema(d, "Message", NVTX_PAYLOAD_SCHEMA_TYPE_DYNAMIC, message_entries, 1, 0);
    /* natural alignment (no offsets) and a length-indexed array */
    const nvtxPayloadSchemaEntry_t sample_entries[] = {
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_UINT32, "count", 0, 0),
        ENTRY(NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_LENGTH_INDEX, NVTX_PAYLOAD_ENTRY_TYPE_FLOAT, "data", 0,
              0),
    };
    uint64_t sample_schema =
        register_schema(d, "Samples", NVTX_PAYLOAD_SCHEMA_TYPE_DYNAMIC, sample_entries, 2, 0);

    /* 1. an Ex call with an attached payload */
    struct point p1 = {-7, 0.125, 3, "pt-one", "label one", 2, UINT64_MAX, {1, -2, 3, -4}};
    nvtxPayloadData_t pd1[] = {{point_schema, sizeof p1, &p1}};
    nvtxEventAttributes_t ea = {0};
    ea.version = NVTX_VERSION;
    ea.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    ea.messageType = NVTX_MESSAGE_TYPE_ASCII;
    ea.message.ascii = "attached mark";
    /* what NVTX_PAYLOAD_EVTATTR_SET_MULTIPLE does (its C form has a
     * parenthesis too few in CUDA 13's header) */
    ea.payloadType = NVTX_PAYLOAD_TYPE_EXT;
    ea.reserved0 = sizeof pd1 / sizeof pd1[0];
    ea.payload.ullValue = (uint64_t)(uintptr_t)pd1;
    nvtxDomainMarkEx(d, &ea);

    /* 2. a mark whose message, colour and category come from its payload */
    struct attrs a2 = {"payload mark", 0xff00ff00u, 7, -123456789012345};
    nvtxPayloadData_t pd2 = {attr_schema, sizeof a2, &a2};
    nvtxMarkPayload(d, &pd2, 1);

    /* 3. push/pop with payloads: the message of the push, a pair at the pop */
    nvtxPayloadData_t pd3 = {message_schema, SIZE_MAX, "pushed by payload"};
    int level = nvtxRangePushPayload(d, &pd3, 1);
    struct pair p3 = {{1, 1.5, 0, "a", "first", 1, 10, {0}},
                      {2, 2.5, 0, "b", "second", 4, 20, {0}}};
    nvtxPayloadData_t pd3b = {pair_schema, sizeof p3, &p3};
    int popped = nvtxRangePopPayload(d, &pd3b, 1);
    printf("push_level=%d pop_level=%d\n", level, popped);

    /* 4. start/end with payloads */
    struct attrs a4 = {"started by payload", 0xffff0000u, 3, 42};
    nvtxPayloadData_t pd4 = {attr_schema, sizeof a4, &a4};
    nvtxRangeId_t id = nvtxRangeStartPayload(d, &pd4, 1);
    struct samples s4 = {3, {0.5f, 1.5f, 2.5f}};
    nvtxPayloadData_t pd4b = {sample_schema, sizeof s4, &s4};
    nvtxRangeEndPayload(d, id, &pd4b, 1);

    /* 5. a deferred range at tool-provided times (nvtxTimestampGet) */
    const nvtxPayloadSchemaEntry_t deferred_entries[] = {
        ENTRY(NVTX_PAYLOAD_ENTRY_FLAG_TIMESTAMP | NVTX_PAYLOAD_ENTRY_FLAG_RANGE_BEGIN,
              NVTX_PAYLOAD_ENTRY_TYPE_INT64, "begin", 0, offsetof(struct deferred, begin)),
        ENTRY(NVTX_PAYLOAD_ENTRY_FLAG_TIMESTAMP | NVTX_PAYLOAD_ENTRY_FLAG_RANGE_END,
              NVTX_PAYLOAD_ENTRY_TYPE_INT64, "end", 0, offsetof(struct deferred, end)),
        ENTRY(NVTX_PAYLOAD_ENTRY_FLAG_POINTER | NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_ZERO_TERMINATED |
                  NVTX_PAYLOAD_ENTRY_FLAG_EVENT_MESSAGE,
              NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "name", 0, offsetof(struct deferred, name)),
    };
    uint64_t deferred_schema = register_schema(d, "Deferred", NVTX_PAYLOAD_SCHEMA_TYPE_STATIC,
                                               deferred_entries, 3, sizeof(struct deferred));
    int64_t t0 = nvtxTimestampGet();
    struct deferred e5 = {t0 - 5000000, t0 - 4000000, "deferred range"};
    nvtxPayloadData_t pd5 = {deferred_schema, sizeof e5, &e5};
    nvtxEventSubmit(d, &pd5, 1);
    printf("deferred_begin=%" PRId64 " deferred_end=%" PRId64 "\n", e5.begin, e5.end);

    /* 6. a batch of deferred marks on CLOCK_MONOTONIC (a time domain of that type) */
    nvtxTimeDomainAttr_t td = {0};
    td.timestampTypeId = NVTX_TIMESTAMP_TYPE_CPU_CLOCK_GETTIME_MONOTONIC;
    uint64_t mono_domain = nvtxTimeDomainRegister(d, &td);
    nvtxSemanticsTime_t mono = {
        {sizeof(nvtxSemanticsTime_t), NVTX_SEMANTIC_ID_TIME_V1, NVTX_TIME_SEMANTIC_VERSION, NULL},
        mono_domain};
    nvtxPayloadSchemaEntry_t mark_entries[] = {
        ENTRY(NVTX_PAYLOAD_ENTRY_FLAG_TIMESTAMP | NVTX_PAYLOAD_ENTRY_FLAG_MARK,
              NVTX_PAYLOAD_ENTRY_TYPE_INT64, "at", 0, offsetof(struct deferred_mark, at)),
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_UINT32, "id", 0, offsetof(struct deferred_mark, id)),
    };
    mark_entries[0].semantics = &mono.header;
    uint64_t mark_schema = register_schema(d, "DeferredMark", NVTX_PAYLOAD_SCHEMA_TYPE_STATIC,
                                           mark_entries, 2, sizeof(struct deferred_mark));
    int64_t m = monotonic_ns();
    struct deferred_mark batch[3] = {{m - 3000000, 1}, {m - 2000000, 2}, {m - 1000000, 3}};
    nvtxEventBatch_t eb = {mark_schema, sizeof batch, batch, NVTX_SCOPE_CURRENT_SW_THREAD,
                           0,           NULL,         0,     0};
    nvtxEventBatchSubmit(d, &eb);
    printf("batch_first=%" PRId64 "\n", batch[0].at);

    /* 7. a timer of the program's own (microseconds), known through its source */
    nvtxTimeDomainAttr_t us = {0};
    us.timerResolution = 1000000;
    uint64_t us_domain = nvtxTimeDomainRegister(d, &us);
    nvtxTimerSource(d, us_domain, NVTX_TIMER_SOURCE_SAFE_CALL_AFTER_PROCESS_TEARDOWN, microseconds);
    nvtxSemanticsTime_t in_us = {
        {sizeof(nvtxSemanticsTime_t), NVTX_SEMANTIC_ID_TIME_V1, NVTX_TIME_SEMANTIC_VERSION, NULL},
        us_domain};
    nvtxPayloadSchemaEntry_t us_entries[] = {
        ENTRY(NVTX_PAYLOAD_ENTRY_FLAG_TIMESTAMP | NVTX_PAYLOAD_ENTRY_FLAG_MARK,
              NVTX_PAYLOAD_ENTRY_TYPE_INT64, "at", 0, offsetof(struct deferred_mark, at)),
        ENTRY(0, NVTX_PAYLOAD_ENTRY_TYPE_UINT32, "id", 0, offsetof(struct deferred_mark, id)),
    };
    us_entries[0].semantics = &in_us.header;
    uint64_t us_schema = register_schema(d, "MicrosecondMark", NVTX_PAYLOAD_SCHEMA_TYPE_STATIC,
                                         us_entries, 2, sizeof(struct deferred_mark));
    struct deferred_mark u = {microseconds(), 99};
    nvtxPayloadData_t pdu = {us_schema, sizeof u, &u};
    nvtxEventSubmit(d, &pdu, 1);
    printf("microsecond_mark=%" PRId64 "\n", u.at);

    /* 8. scopes and the rest of the time API (recorded as given) */
    nvtxScopeAttr_t scope = {sizeof scope, "node/gpu[0]", NVTX_SCOPE_ROOT, 0};
    uint64_t scope_id = nvtxScopeRegister(d, &scope);
    printf("scope_dynamic=%d\n", scope_id >= NVTX_SCOPE_ID_DYNAMIC_START);
    nvtxTimeSyncPoint(d, mono_domain, us_domain, 1000, 1);
    nvtxSyncPoint_t points[2] = {{2000, 2}, {3000, 3}};
    nvtxTimeSyncPointTable(d, mono_domain, us_domain, points, 2);
    nvtxTimestampConversionFactor(d, us_domain, mono_domain, 1000.0, 5, 5000);
    nvtxTimerSourceWithData(d, us_domain, NVTX_TIMER_SOURCE_UNSAFE_CALL_AFTER_PROCESS_TEARDOWN,
                            microseconds_of, NULL);

    /* 9. a raw payload: kept, never decoded */
    static const uint8_t raw[5] = {1, 2, 3, 4, 5};
    nvtxPayloadData_t pdr = {NVTX_TYPE_PAYLOAD_SCHEMA_RAW, sizeof raw, raw};
    nvtxMarkPayload(d, &pdr, 1);
    printf("done\n");
    return 0;
}
