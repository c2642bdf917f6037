/* simppu's libnvcuvid.so.1: the NVDEC decoder API (nv-codec-headers'
 * dynlink_cuviddec.h) on a simulated decode engine per device
 * (video_engine.h).  A decoder holds its surfaces' completion times: a
 * picture decodes on the engine, cuvidGetDecodeStatus says whether it is
 * done, cuvidMapVideoFrame waits for it and hands out a device address.
 * Codecs other than H.264, HEVC, VP9 and AV1 are not supported (the
 * failing call the tests expect).  Not implemented: video sources and
 * parsers (CUDA_ERROR_NOT_SUPPORTED). */
#include <stdlib.h>
#include <string.h>

#include <ffnvcodec/dynlink_cuda.h>
#include <ffnvcodec/dynlink_cuviddec.h>
#include <ffnvcodec/dynlink_nvcuvid.h>

#include "video_engine.h"

#define EXPORT __attribute__((visibility("default")))
#define SURFACES 64
/* cuda.h's codes (dynlink_cuda.h names only a few) */
#define CUDA_ERROR_INVALID_VALUE ((CUresult)1)
#define CUDA_ERROR_OUT_OF_MEMORY ((CUresult)2)
#define CUDA_ERROR_INVALID_HANDLE ((CUresult)400)
#define NOT_SUPPORTED ((CUresult)801) /* CUDA_ERROR_NOT_SUPPORTED */

extern int cudaGetDevice(int *device); /* simppu's libcudart.so.13 */

static struct simppu_engine engines[SIMPPU_VIDEO_DEVICES] = {
    [0 ... SIMPPU_VIDEO_DEVICES - 1] = {PTHREAD_MUTEX_INITIALIZER, 0}};

struct decoder {
    uint32_t magic;
    int device;
    unsigned long width, height;
    unsigned surfaces;
    uint64_t done_at[SURFACES]; /* 0: nothing decoded into it */
    unsigned char mapped[SURFACES];
};
#define DECODER_MAGIC 0x44454344u

static struct decoder *decoder_of(CUvideodecoder handle)
{
    struct decoder *d = handle;
    return d && d->magic == DECODER_MAGIC ? d : NULL;
}

static int supported(cudaVideoCodec codec)
{
    return codec == cudaVideoCodec_H264 || codec == cudaVideoCodec_HEVC ||
           codec == cudaVideoCodec_VP9 || codec == cudaVideoCodec_AV1;
}

EXPORT CUresult CUDAAPI cuvidGetDecoderCaps(CUVIDDECODECAPS *caps)
{
    if (!caps)
        return CUDA_ERROR_INVALID_VALUE;
    caps->bIsSupported = supported(caps->eCodecType);
    caps->nNumNVDECs = 1;
    caps->nMaxWidth = 8192;
    caps->nMaxHeight = 8192;
    caps->nMinWidth = 48;
    caps->nMinHeight = 16;
    caps->nMaxMBCount = 8192 * 8192 / 256;
    caps->nOutputFormatMask = 1u << cudaVideoSurfaceFormat_NV12;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuvidCreateDecoder(CUvideodecoder *handle, CUVIDDECODECREATEINFO *info)
{
    if (!handle || !info)
        return CUDA_ERROR_INVALID_VALUE;
    if (!supported(info->CodecType))
        return NOT_SUPPORTED;
    if (info->ulNumDecodeSurfaces == 0 || info->ulNumDecodeSurfaces > SURFACES)
        return CUDA_ERROR_INVALID_VALUE;
    struct decoder *d = calloc(1, sizeof *d);
    if (!d)
        return CUDA_ERROR_OUT_OF_MEMORY;
    d->magic = DECODER_MAGIC;
    if (cudaGetDevice(&d->device) != 0 || d->device < 0 || d->device >= SIMPPU_VIDEO_DEVICES)
        d->device = 0;
    d->width = info->ulWidth;
    d->height = info->ulHeight;
    d->surfaces = (unsigned)info->ulNumDecodeSurfaces;
    *handle = d;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuvidDestroyDecoder(CUvideodecoder handle)
{
    struct decoder *d = decoder_of(handle);
    if (!d)
        return CUDA_ERROR_INVALID_HANDLE;
    d->magic = 0;
    free(d);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuvidReconfigureDecoder(CUvideodecoder handle,
                                                CUVIDRECONFIGUREDECODERINFO *info)
{
    struct decoder *d = decoder_of(handle);
    if (!d || !info)
        return CUDA_ERROR_INVALID_VALUE;
    d->width = info->ulWidth;
    d->height = info->ulHeight;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuvidDecodePicture(CUvideodecoder handle, CUVIDPICPARAMS *params)
{
    struct decoder *d = decoder_of(handle);
    if (!d || !params || params->CurrPicIdx < 0 || (unsigned)params->CurrPicIdx >= d->surfaces)
        return CUDA_ERROR_INVALID_VALUE;
    if (!params->pBitstreamData || params->nBitstreamDataLen == 0)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t duration =
        SIMPPU_DECODE_BASE_NS + (uint64_t)params->nBitstreamDataLen * SIMPPU_DECODE_NS_PER_BYTE;
    d->done_at[params->CurrPicIdx] = simppu_engine_submit(&engines[d->device], duration);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuvidGetDecodeStatus(CUvideodecoder handle, int picture,
                                             CUVIDGETDECODESTATUS *status)
{
    struct decoder *d = decoder_of(handle);
    if (!d || !status || picture < 0 || (unsigned)picture >= d->surfaces)
        return CUDA_ERROR_INVALID_VALUE;
    memset(status, 0, sizeof *status);
    if (!d->done_at[picture])
        status->decodeStatus = cuvidDecodeStatus_Invalid;
    else if (simppu_video_now() >= d->done_at[picture])
        status->decodeStatus = cuvidDecodeStatus_Success;
    else
        status->decodeStatus = cuvidDecodeStatus_InProgress;
    return CUDA_SUCCESS;
}

static CUresult map_frame(CUvideodecoder handle, int picture, unsigned long long *frame,
                          unsigned int *pitch)
{
    struct decoder *d = decoder_of(handle);
    if (!d || !frame || !pitch || picture < 0 || (unsigned)picture >= d->surfaces ||
        !d->done_at[picture])
        return CUDA_ERROR_INVALID_VALUE;
    simppu_video_wait(d->done_at[picture]); /* the frame is mappable once decoded */
    d->mapped[picture] = 1;
    *pitch = (unsigned)((d->width + 255) & ~255ul);
    *frame = 0x7f0000000000ull + (unsigned long long)picture * 0x1000000ull;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuvidMapVideoFrame64(CUvideodecoder handle, int picture,
                                             unsigned long long *frame, unsigned int *pitch,
                                             CUVIDPROCPARAMS *params)
{
    (void)params;
    return map_frame(handle, picture, frame, pitch);
}

EXPORT CUresult CUDAAPI cuvidMapVideoFrame(CUvideodecoder handle, int picture, unsigned int *frame,
                                           unsigned int *pitch, CUVIDPROCPARAMS *params)
{
    (void)params;
    unsigned long long address;
    CUresult rc = map_frame(handle, picture, &address, pitch);
    if (rc == CUDA_SUCCESS && frame)
        *frame = (unsigned int)address;
    return rc;
}

static CUresult unmap_frame(CUvideodecoder handle, unsigned long long frame)
{
    struct decoder *d = decoder_of(handle);
    if (!d || frame < 0x7f0000000000ull)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned long long picture = (frame - 0x7f0000000000ull) / 0x1000000ull;
    if (picture < SURFACES)
        d->mapped[picture] = 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuvidUnmapVideoFrame64(CUvideodecoder handle, unsigned long long frame)
{
    return unmap_frame(handle, frame);
}

EXPORT CUresult CUDAAPI cuvidUnmapVideoFrame(CUvideodecoder handle, unsigned int frame)
{
    (void)frame;
    return decoder_of(handle) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

struct ctx_lock {
    pthread_mutex_t mutex;
    CUcontext context;
};

EXPORT CUresult CUDAAPI cuvidCtxLockCreate(CUvideoctxlock *lock, CUcontext context)
{
    if (!lock)
        return CUDA_ERROR_INVALID_VALUE;
    struct ctx_lock *l = calloc(1, sizeof *l);
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&l->mutex, NULL);
    l->context = context;
    *lock = (CUvideoctxlock)l;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuvidCtxLockDestroy(CUvideoctxlock lock)
{
    if (!lock)
        return CUDA_ERROR_INVALID_VALUE;
    free((struct ctx_lock *)lock);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuvidCtxLock(CUvideoctxlock lock, unsigned int flags)
{
    (void)flags;
    return lock && pthread_mutex_lock(&((struct ctx_lock *)lock)->mutex) == 0
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuvidCtxUnlock(CUvideoctxlock lock, unsigned int flags)
{
    (void)flags;
    return lock && pthread_mutex_unlock(&((struct ctx_lock *)lock)->mutex) == 0
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuvidCreateVideoParser(CUvideoparser *parser, CUVIDPARSERPARAMS *params)
{
    (void)parser;
    (void)params;
    return NOT_SUPPORTED;
}
