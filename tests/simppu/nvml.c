/* simppu libnvidia-ml.so.1: the devices as NVML numbers them (PCI bus
 * order: the physical indices), their names, PCI bus ids and UUIDs, and
 * GPM metrics computed from the shared device state (device_state.h).
 * SIMPPU_DEVICES=N devices; SIMPPU_GPM=0: no GPM on these devices;
 * SIMPPU_PM_BUSY=1: the counters belong to someone else.
 * A test fixture: never linked into asys. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device_state.h"
#include "nvml_api.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_DEVICES 16

struct nvmlDevice_st {
    unsigned index;
};

struct nvmlGpmSample_st {
    unsigned physical;
    uint64_t at; /* CLOCK_MONOTONIC ns */
};

static struct nvmlDevice_st devices[MAX_DEVICES];
static int initialized;

static unsigned device_count(void)
{
    const char *v = getenv("SIMPPU_DEVICES");
    long n = v ? strtol(v, NULL, 10) : 1;
    return n < 1 ? 1 : n > MAX_DEVICES ? MAX_DEVICES : (unsigned)n;
}

static int env_is(const char *name, char value)
{
    const char *v = getenv(name);
    return v && v[0] == value && !v[1];
}

static int valid(nvmlDevice_t d)
{
    return initialized && d && d >= devices && d < devices + device_count();
}

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    for (unsigned i = 0; i < MAX_DEVICES; i++)
        devices[i].index = i;
    initialized = 1;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlInit(void)
{
    return nvmlInit_v2();
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    initialized = 0;
    return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_IN_USE:
        return "In use by another client";
    default:
        return "Unknown Error";
    }
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count)
{
    if (!initialized)
        return NVML_ERROR_UNINITIALIZED;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = device_count();
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *device)
{
    if (!initialized)
        return NVML_ERROR_UNINITIALIZED;
    if (!device || index >= device_count())
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devices[index];
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned *index)
{
    if (!valid(device) || !index)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = device->index;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned length)
{
    if (!valid(device) || !name)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((unsigned)snprintf(name, length, "simppu PPU") >= length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    if (!valid(device) || !pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    pci->bus = 0x10 + device->index; /* as cudaDevAttrPciBusId says */
    snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
    return NVML_SUCCESS;
}

/* The runtime's UUID bytes ("simppu-device-", 0, index) as NVML writes them. */
static void uuid_text(unsigned index, char out[41])
{
    uint8_t bytes[16] = {0};
    memcpy(bytes, "simppu-device-", 14);
    bytes[15] = (uint8_t)index;
    char *p = out + sprintf(out, "GPU-");
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        p += sprintf(p, "%02x", bytes[i]);
    }
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned length)
{
    char text[41];
    if (!valid(device) || !uuid)
        return NVML_ERROR_INVALID_ARGUMENT;
    uuid_text(device->index, text);
    if ((unsigned)snprintf(uuid, length, "%s", text) >= length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    if (!initialized)
        return NVML_ERROR_UNINITIALIZED;
    if (!uuid || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < device_count(); i++) {
        char text[41];
        uuid_text(i, text);
        if (!strcmp(text, uuid)) {
            *device = &devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* ---- GPM ----------------------------------------------------------------------------- */

EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *support)
{
    if (!valid(device) || !support || support->version != NVML_GPM_SUPPORT_VERSION)
        return NVML_ERROR_INVALID_ARGUMENT;
    support->isSupportedDevice = !env_is("SIMPPU_GPM", '0');
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *sample)
{
    if (!sample)
        return NVML_ERROR_INVALID_ARGUMENT;
    *sample = calloc(1, sizeof **sample);
    return *sample ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample)
{
    free(sample);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample)
{
    if (!valid(device) || !sample)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (env_is("SIMPPU_GPM", '0'))
        return NVML_ERROR_NOT_SUPPORTED;
    if (env_is("SIMPPU_PM_BUSY", '1'))
        return NVML_ERROR_IN_USE;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    sample->physical = device->index;
    sample->at = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return NVML_SUCCESS;
}

static double fraction(const struct simppu_busy *b, int kind, double window)
{
    double f = window > 0 ? b->active_ns[kind] / window : 0;
    return f > 1 ? 1 : f;
}

EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m)
{
    if (!m || m->version != NVML_GPM_METRICS_GET_VERSION || !m->sample1 || !m->sample2 ||
        m->sample1->physical != m->sample2->physical || m->sample2->at <= m->sample1->at ||
        m->numMetrics > ASYS_GPM_METRICS)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct simppu_busy b;
    simppu_state_busy((int)m->sample1->physical, m->sample1->at, m->sample2->at, &b);
    double w = (double)(m->sample2->at - m->sample1->at);
    double k = fraction(&b, SIMPPU_WORK_KERNEL, w);
    double copies = fraction(&b, SIMPPU_WORK_HTOD, w) + fraction(&b, SIMPPU_WORK_DTOH, w) +
                    fraction(&b, SIMPPU_WORK_DTOD, w);
    double mib_s = 1e9 / w / (1024.0 * 1024.0);
    for (unsigned i = 0; i < m->numMetrics; i++) {
        nvmlGpmMetric_t *x = &m->metrics[i];
        x->nvmlReturn = NVML_SUCCESS;
        switch (x->metricId) {
        case NVML_GPM_METRIC_SM_UTIL:
        case NVML_GPM_METRIC_GRAPHICS_UTIL:
            x->value = 100.0 * k;
            break;
        case NVML_GPM_METRIC_SM_OCCUPANCY:
            x->value = 75.0 * k;
            break;
        case NVML_GPM_METRIC_ANY_TENSOR_UTIL:
            x->value = 30.0 * k;
            break;
        case NVML_GPM_METRIC_DRAM_BW_UTIL:
            x->value = copies > 1 ? 100.0 : 100.0 * copies;
            break;
        case NVML_GPM_METRIC_PCIE_TX_PER_SEC:
            x->value = b.bytes[SIMPPU_WORK_DTOH] * mib_s;
            break;
        case NVML_GPM_METRIC_PCIE_RX_PER_SEC:
            x->value = b.bytes[SIMPPU_WORK_HTOD] * mib_s;
            break;
        case NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC:
        case NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC:
            x->value = b.bytes[SIMPPU_WORK_PEER] * mib_s;
            break;
        default:
            x->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
            x->value = 0;
        }
    }
    return NVML_SUCCESS;
}
