/* simppu's libnvidia-encode.so.1: NVENC's entry points
 * (NvEncodeAPIGetMaxSupportedVersion, NvEncodeAPICreateInstance filling the
 * function list of nv-codec-headers' nvEncodeAPI.h) on a simulated encode
 * engine per device (video_engine.h).  A picture encodes on the engine into
 * its output buffer; nvEncLockBitstream waits for it (or says
 * NV_ENC_ERR_LOCK_BUSY with doNotWait) and hands out width * height / 16
 * bytes of bitstream.  A list of another struct version is refused
 * (NV_ENC_ERR_INVALID_VERSION), as the driver does.  Only the functions
 * asys's tests call are filled; the list's other slots stay NULL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ffnvcodec/nvEncodeAPI.h>

#include "video_engine.h"

#define EXPORT __attribute__((visibility("default")))
#define BUFFERS 32

extern int cudaGetDevice(int *device); /* simppu's libcudart.so.13 */

static struct simppu_engine engines[SIMPPU_VIDEO_DEVICES] = {
    [0 ... SIMPPU_VIDEO_DEVICES - 1] = {PTHREAD_MUTEX_INITIALIZER, 0}};

struct bitstream {
    uint64_t done_at; /* 0: nothing encoded into it */
    uint32_t bytes;
    unsigned char *data;
};

struct encoder {
    uint32_t magic;
    int device;
    int initialized;
    uint32_t width, height;
    struct bitstream outputs[BUFFERS];
    char inputs[BUFFERS];
    char last_error[128];
};
#define ENCODER_MAGIC 0x454e4344u

static struct encoder *encoder_of(void *handle)
{
    struct encoder *e = handle;
    return e && e->magic == ENCODER_MAGIC ? e : NULL;
}

static NVENCSTATUS NVENCAPI open_session_ex(NV_ENC_OPEN_ENCODE_SESSION_EX_PARAMS *params,
                                            void **handle)
{
    if (!params || !handle)
        return NV_ENC_ERR_INVALID_PTR;
    if (params->deviceType != NV_ENC_DEVICE_TYPE_CUDA)
        return NV_ENC_ERR_UNSUPPORTED_DEVICE;
    struct encoder *e = calloc(1, sizeof *e);
    if (!e)
        return NV_ENC_ERR_OUT_OF_MEMORY;
    e->magic = ENCODER_MAGIC;
    if (cudaGetDevice(&e->device) != 0 || e->device < 0 || e->device >= SIMPPU_VIDEO_DEVICES)
        e->device = 0;
    *handle = e;
    return NV_ENC_SUCCESS;
}

static NVENCSTATUS NVENCAPI initialize(void *handle, NV_ENC_INITIALIZE_PARAMS *params)
{
    struct encoder *e = encoder_of(handle);
    if (!e)
        return NV_ENC_ERR_INVALID_ENCODERDEVICE;
    if (!params || params->encodeWidth == 0 || params->encodeHeight == 0) {
        snprintf(e->last_error, sizeof e->last_error, "invalid encode size");
        return NV_ENC_ERR_INVALID_PARAM;
    }
    e->width = params->encodeWidth;
    e->height = params->encodeHeight;
    e->initialized = 1;
    return NV_ENC_SUCCESS;
}

static NVENCSTATUS NVENCAPI create_input(void *handle, NV_ENC_CREATE_INPUT_BUFFER *params)
{
    struct encoder *e = encoder_of(handle);
    if (!e || !params)
        return NV_ENC_ERR_INVALID_PTR;
    for (int i = 0; i < BUFFERS; i++)
        if (!e->inputs[i]) {
            e->inputs[i] = 1;
            params->inputBuffer = &e->inputs[i];
            return NV_ENC_SUCCESS;
        }
    return NV_ENC_ERR_OUT_OF_MEMORY;
}

static NVENCSTATUS NVENCAPI destroy_input(void *handle, NV_ENC_INPUT_PTR buffer)
{
    struct encoder *e = encoder_of(handle);
    char *b = buffer;
    if (!e || b < e->inputs || b >= e->inputs + BUFFERS)
        return NV_ENC_ERR_INVALID_PTR;
    *b = 0;
    return NV_ENC_SUCCESS;
}

static NVENCSTATUS NVENCAPI create_bitstream(void *handle, NV_ENC_CREATE_BITSTREAM_BUFFER *params)
{
    struct encoder *e = encoder_of(handle);
    if (!e || !params)
        return NV_ENC_ERR_INVALID_PTR;
    for (int i = 0; i < BUFFERS; i++)
        if (!e->outputs[i].data) {
            e->outputs[i].data = calloc(1, 1u << 20);
            if (!e->outputs[i].data)
                return NV_ENC_ERR_OUT_OF_MEMORY;
            params->bitstreamBuffer = &e->outputs[i];
            return NV_ENC_SUCCESS;
        }
    return NV_ENC_ERR_OUT_OF_MEMORY;
}

static struct bitstream *bitstream_of(struct encoder *e, void *buffer)
{
    struct bitstream *b = buffer;
    return b >= e->outputs && b < e->outputs + BUFFERS && b->data ? b : NULL;
}

static NVENCSTATUS NVENCAPI destroy_bitstream(void *handle, NV_ENC_OUTPUT_PTR buffer)
{
    struct encoder *e = encoder_of(handle);
    struct bitstream *b = e ? bitstream_of(e, buffer) : NULL;
    if (!b)
        return NV_ENC_ERR_INVALID_PTR;
    free(b->data);
    memset(b, 0, sizeof *b);
    return NV_ENC_SUCCESS;
}

static NVENCSTATUS NVENCAPI encode_picture(void *handle, NV_ENC_PIC_PARAMS *params)
{
    struct encoder *e = encoder_of(handle);
    if (!e)
        return NV_ENC_ERR_INVALID_ENCODERDEVICE;
    if (!e->initialized)
        return NV_ENC_ERR_ENCODER_NOT_INITIALIZED;
    struct bitstream *b = params ? bitstream_of(e, params->outputBitstream) : NULL;
    if (!b || !params->inputBuffer)
        return NV_ENC_ERR_INVALID_PTR;
    uint64_t pixels = (uint64_t)params->inputWidth * params->inputHeight;
    if (pixels == 0 || pixels > (1u << 26))
        return NV_ENC_ERR_INVALID_PARAM;
    b->bytes = (uint32_t)(pixels / 16);
    if (b->bytes > (1u << 20))
        b->bytes = 1u << 20;
    b->done_at = simppu_engine_submit(&engines[e->device],
                                      SIMPPU_ENCODE_BASE_NS + pixels / SIMPPU_ENCODE_PIXELS_PER_NS);
    return NV_ENC_SUCCESS;
}

static NVENCSTATUS NVENCAPI lock_bitstream(void *handle, NV_ENC_LOCK_BITSTREAM *lock)
{
    struct encoder *e = encoder_of(handle);
    struct bitstream *b = e && lock ? bitstream_of(e, lock->outputBitstream) : NULL;
    if (!b || !b->done_at)
        return NV_ENC_ERR_INVALID_PTR;
    if (lock->doNotWait && simppu_video_now() < b->done_at)
        return NV_ENC_ERR_LOCK_BUSY;
    simppu_video_wait(b->done_at);
    lock->bitstreamSizeInBytes = b->bytes;
    lock->bitstreamBufferPtr = b->data;
    return NV_ENC_SUCCESS;
}

static NVENCSTATUS NVENCAPI unlock_bitstream(void *handle, NV_ENC_OUTPUT_PTR buffer)
{
    struct encoder *e = encoder_of(handle);
    return e && bitstream_of(e, buffer) ? NV_ENC_SUCCESS : NV_ENC_ERR_INVALID_PTR;
}

static NVENCSTATUS NVENCAPI set_io_streams(void *handle, NV_ENC_CUSTREAM_PTR input,
                                           NV_ENC_CUSTREAM_PTR output)
{
    (void)input;
    (void)output;
    return encoder_of(handle) ? NV_ENC_SUCCESS : NV_ENC_ERR_INVALID_ENCODERDEVICE;
}

static NVENCSTATUS NVENCAPI destroy_encoder(void *handle)
{
    struct encoder *e = encoder_of(handle);
    if (!e)
        return NV_ENC_ERR_INVALID_ENCODERDEVICE;
    for (int i = 0; i < BUFFERS; i++)
        free(e->outputs[i].data);
    e->magic = 0;
    free(e);
    return NV_ENC_SUCCESS;
}

static const char *NVENCAPI last_error(void *handle)
{
    struct encoder *e = encoder_of(handle);
    return e ? e->last_error : "invalid encoder";
}

EXPORT NVENCSTATUS NVENCAPI NvEncodeAPIGetMaxSupportedVersion(uint32_t *version)
{
    if (!version)
        return NV_ENC_ERR_INVALID_PTR;
    *version = (NVENCAPI_MAJOR_VERSION << 4) | NVENCAPI_MINOR_VERSION;
    return NV_ENC_SUCCESS;
}

EXPORT NVENCSTATUS NVENCAPI NvEncodeAPICreateInstance(NV_ENCODE_API_FUNCTION_LIST *list)
{
    if (!list)
        return NV_ENC_ERR_INVALID_PTR;
    /* the struct version and mark; any API version up to ours */
    if ((list->version >> 16) != (NV_ENCODE_API_FUNCTION_LIST_VER >> 16) ||
        (list->version & 0xffu) > NVENCAPI_MAJOR_VERSION)
        return NV_ENC_ERR_INVALID_VERSION;
    uint32_t version = list->version;
    memset(list, 0, sizeof *list);
    list->version = version;
    list->nvEncOpenEncodeSessionEx = open_session_ex;
    list->nvEncInitializeEncoder = initialize;
    list->nvEncCreateInputBuffer = create_input;
    list->nvEncDestroyInputBuffer = destroy_input;
    list->nvEncCreateBitstreamBuffer = create_bitstream;
    list->nvEncDestroyBitstreamBuffer = destroy_bitstream;
    list->nvEncEncodePicture = encode_picture;
    list->nvEncLockBitstream = lock_bitstream;
    list->nvEncUnlockBitstream = unlock_bitstream;
    list->nvEncSetIOCudaStreams = set_io_streams;
    list->nvEncDestroyEncoder = destroy_encoder;
    list->nvEncGetLastErrorString = last_error;
    return NV_ENC_SUCCESS;
}
