/* simppu libcudart.so.13: devices, their properties, versions and errors. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cudart_internal.h"

int valid_device(int device)
{
    ensure_init();
    return device >= 0 && device < rt.device_count;
}

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    API(cudaGetDeviceCount, v3020, NULL);
    if (!count)
        RETURN(cudaErrorInvalidValue);
    *count = rt.device_count;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetDevice(int *device)
{
    API(cudaGetDevice, v3020, NULL);
    if (!device)
        RETURN(cudaErrorInvalidValue);
    *device = current_device;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaSetDevice(int device)
{
    API(cudaSetDevice, v3020, NULL);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    current_device = device;
    context_of(device);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    API(cudaGetDeviceProperties, v12000, NULL);
    if (!prop)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    int physical = rt.devices[device].physical;
    snprintf(prop->name, sizeof prop->name, "simppu PPU %d", physical);
    memcpy(prop->uuid.bytes, "simppu-device-", 14);
    prop->uuid.bytes[15] = (char)physical;
    prop->totalGlobalMem = rt.devices[device].memory_total;
    prop->sharedMemPerBlock = 48 * 1024;
    prop->regsPerBlock = 65536;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 64;
    prop->pciBusID = 0x10 + physical;
    prop->pciDeviceID = 0;
    prop->pciDomainID = 0;
    prop->asyncEngineCount = 2;
    prop->unifiedAddressing = 1;
    prop->concurrentKernels = 1;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDriverGetVersion(int *version)
{
    API(cudaDriverGetVersion, v3020, NULL);
    if (!version)
        RETURN(cudaErrorInvalidValue);
    *version = CUDART_VERSION;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaRuntimeGetVersion(int *version)
{
    API(cudaRuntimeGetVersion, v3020, NULL);
    if (!version)
        RETURN(cudaErrorInvalidValue);
    *version = CUDART_VERSION;
    RETURN(cudaSuccess);
}

/* ---- errors --------------------------------------------------------------------------------- */

static const struct {
    cudaError_t code;
    const char *name;
    const char *text;
} error_table[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {cudaErrorIllegalState, "cudaErrorIllegalState", "the resource is not in a valid state"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
};

EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    for (size_t i = 0; i < sizeof error_table / sizeof *error_table; i++)
        if (error_table[i].code == error)
            return error_table[i].text;
    return "unrecognized error code";
}

EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    for (size_t i = 0; i < sizeof error_table / sizeof *error_table; i++)
        if (error_table[i].code == error)
            return error_table[i].name;
    return "cudaErrorUnknown";
}

EXPORT cudaError_t cudaGetLastError(void)
{
    API(cudaGetLastError, v3020, NULL);
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return api_finish(&call_, e, 0); /* it reports the error, it does not set it */
}

EXPORT cudaError_t cudaPeekAtLastError(void)
{
    API(cudaPeekAtLastError, v3020, NULL);
    return api_finish(&call_, last_error, 0);
}
