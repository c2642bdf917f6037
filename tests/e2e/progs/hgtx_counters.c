/* Every function of NVTX's counters extension (nvToolsExtCounters.h), with
 * values the test checks exactly (tests/e2e/test_hgtx_extensions.py); the
 * timestamps of the batch are printed. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtSemanticsCounters.h>

struct group {
    int32_t queued;
    double load;
};

int main(void)
{
    nvtxDomainHandle_t d = nvtxDomainCreateA("counters");

    /* a single integer counter with a unit and limits */
    nvtxSemanticsCounter_t unit = {{sizeof(nvtxSemanticsCounter_t), NVTX_SEMANTIC_ID_COUNTERS_V1,
                                    NVTX_COUNTER_SEMANTIC_VERSION, NULL},
                                   NVTX_COUNTER_FLAG_LIMITS,
                                   "requests",
                                   1,
                                   1,
                                   NVTX_COUNTER_LIMIT_I64,
                                   {.i64 = 0},
                                   {.i64 = 100}};
    nvtxCounterAttr_t ints = {sizeof ints,
                              NVTX_PAYLOAD_ENTRY_TYPE_INT64,
                              "requests in flight",
                              "requests the server holds",
                              NVTX_SCOPE_CURRENT_SW_PROCESS,
                              &unit.header,
                              NVTX_COUNTER_ID_NONE};
    uint64_t requests = nvtxCounterRegister(d, &ints);
    for (int64_t v = 1; v <= 10; v++)
        nvtxCounterSampleInt64(d, requests, v * v);

    /* a float counter with a static id */
    nvtxCounterAttr_t floats = {
        sizeof floats, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE,  "temperature", NULL, NVTX_SCOPE_NONE,
        NULL,          NVTX_COUNTER_ID_STATIC_START + 7};
    uint64_t temperature = nvtxCounterRegister(d, &floats);
    printf("static_id=%d\n", temperature == NVTX_COUNTER_ID_STATIC_START + 7);
    nvtxCounterSampleFloat64(d, temperature, 0.5);
    nvtxCounterSampleFloat64(d, temperature, 36.625);
    nvtxCounterSampleNoValue(d, temperature, NVTX_COUNTER_SAMPLE_UNAVAILABLE);
    nvtxCounterSampleFloat64(d, temperature, -1.25);

    /* a counter group: one sample, two values */
    nvtxPayloadSchemaEntry_t fields[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "queued", NULL, 0, 0, NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "load", NULL, 0, 8, NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t schema = {0};
    schema.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS |
                       NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                       NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                       NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE;
    schema.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    schema.flags = NVTX_PAYLOAD_SCHEMA_FLAG_COUNTER_GROUP;
    schema.entries = fields;
    schema.numEntries = 2;
    schema.payloadStaticSize = sizeof(struct group);
    uint64_t group_schema = nvtxPayloadSchemaRegister(d, &schema);
    nvtxCounterAttr_t group = {sizeof group, group_schema,        "worker", NULL, NVTX_SCOPE_NONE,
                               NULL,         NVTX_COUNTER_ID_NONE};
    uint64_t worker = nvtxCounterRegister(d, &group);
    struct group g[3] = {{1, 0.25}, {2, 0.5}, {3, 0.75}};
    for (int i = 0; i < 3; i++)
        nvtxCounterSample(d, worker, &g[i], sizeof g[i]);

    /* a batch with its own timestamps (nvtxTimestampGet's clock) */
    nvtxCounterAttr_t batched = {
        sizeof batched, NVTX_PAYLOAD_ENTRY_TYPE_INT64, "batched", NULL, NVTX_SCOPE_NONE,
        NULL,           NVTX_COUNTER_ID_NONE};
    uint64_t batch_id = nvtxCounterRegister(d, &batched);
    int64_t values[5] = {10, 20, 30, 40, 50};
    int64_t stamps[5];
    int64_t now = nvtxTimestampGet();
    for (int i = 0; i < 5; i++)
        stamps[i] = now - (5 - i) * 1000000;
    nvtxCounterBatch_t b = {batch_id, values,       sizeof values, NVTX_BATCH_FLAG_TIME_SORTED,
                            stamps,   sizeof stamps};
    nvtxCounterBatchSubmit(d, &b);
    printf("batch_first=%" PRId64 " batch_last=%" PRId64 "\n", stamps[0], stamps[4]);
    printf("done\n");
    return 0;
}
