/* The part of NVML (libnvidia-ml.so.1, shipped with the driver) asys uses,
 * declared here: the toolkit has no nvml.h.  Layouts and codes are NVML's
 * (nvml.h of CUDA 12/13).  Used by the launcher (devices, GPM metrics) and
 * by simppu's libnvidia-ml.so.1. */
#ifndef ASYS_NVML_API_H
#define ASYS_NVML_API_H

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32]; /* "00000000:10:00.0" */
} nvmlPciInfo_t;

/* GPM (Hopper and later): metrics from two samples taken >= 100 ms apart. */
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;
#define NVML_GPM_SUPPORT_VERSION 1
typedef struct {
    unsigned int version;
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;
/* NVML writes only numMetrics entries: an array shorter than the
 * library's NVML_GPM_METRIC_MAX is safe with numMetrics within it. */
#define ASYS_GPM_METRICS 32
#define NVML_GPM_METRICS_GET_VERSION 1
typedef struct {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    struct {
        char *shortName;
        char *longName;
        char *unit;
    } metricInfo;
} nvmlGpmMetric_t;
typedef struct {
    unsigned int version;
    unsigned int numMetrics;
    nvmlGpmSample_t sample1;
    nvmlGpmSample_t sample2;
    nvmlGpmMetric_t metrics[ASYS_GPM_METRICS];
} nvmlGpmMetricsGet_t;

/* GPM metric ids (nvmlGpmMetricId_t). */
enum {
    NVML_GPM_METRIC_GRAPHICS_UTIL = 1,
    NVML_GPM_METRIC_SM_UTIL = 2,
    NVML_GPM_METRIC_SM_OCCUPANCY = 3,
    NVML_GPM_METRIC_INTEGER_UTIL = 4,
    NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
    NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
    NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20,
    NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21,
    NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC = 60,
    NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC = 61,
};

#endif
