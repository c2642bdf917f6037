/* A video pipeline on two streams for the hgvideo tests (test_video.py),
 * linked with (or, with VIDEO_DLOPEN, opening at run time as FFmpeg does)
 * libnvcuvid.so.1, libnvidia-encode.so.1 and libnvjpeg.so.13:
 *   decode: decoder caps, one decoder refused (MPEG-2), 8 pictures of
 *           10000 + 2000 * i bytes, each mapped on stream i % 2 (the even
 *           ones asked for their status first), unmapped; the decoder destroyed
 *   encode: the function list, a 320x240 session whose output goes to
 *           stream 1, 6 pictures encoded and their bitstreams locked/unlocked
 *   JPEG:   4 decodes of a 64x32 image on streams 0, 1, 0, 1, and one of a
 *           damaged image (NVJPEG_STATUS_BAD_JPEG)
 * Prints "video_demo ok" at the end; exits 1 when a call that must work did
 * not. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <ffnvcodec/dynlink_cuda.h>
#include <ffnvcodec/dynlink_cuviddec.h>
#include <ffnvcodec/dynlink_nvcuvid.h>
#include <ffnvcodec/nvEncodeAPI.h>

#include "nvjpeg_api.h"

#define DECODES 8
#define ENCODES 6
#define JPEGS 4

#ifdef VIDEO_DLOPEN
/* The functions, resolved with dlsym from libraries opened RTLD_LOCAL. */
#define FN(name) static __typeof__(name##_t) *p_##name;
typedef CUresult CUDAAPI cuvidGetDecoderCaps_t(CUVIDDECODECAPS *);
typedef CUresult CUDAAPI cuvidCreateDecoder_t(CUvideodecoder *, CUVIDDECODECREATEINFO *);
typedef CUresult CUDAAPI cuvidDestroyDecoder_t(CUvideodecoder);
typedef CUresult CUDAAPI cuvidDecodePicture_t(CUvideodecoder, CUVIDPICPARAMS *);
typedef CUresult CUDAAPI cuvidGetDecodeStatus_t(CUvideodecoder, int, CUVIDGETDECODESTATUS *);
typedef CUresult CUDAAPI cuvidMapVideoFrame64_t(CUvideodecoder, int, unsigned long long *,
                                                unsigned int *, CUVIDPROCPARAMS *);
typedef CUresult CUDAAPI cuvidUnmapVideoFrame64_t(CUvideodecoder, unsigned long long);
typedef NVENCSTATUS NVENCAPI NvEncodeAPIGetMaxSupportedVersion_t(uint32_t *);
typedef NVENCSTATUS NVENCAPI NvEncodeAPICreateInstance_t(NV_ENCODE_API_FUNCTION_LIST *);
typedef nvjpegStatus_t nvjpegCreateSimple_t(nvjpegHandle_t *);
typedef nvjpegStatus_t nvjpegDestroy_t(nvjpegHandle_t);
typedef nvjpegStatus_t nvjpegJpegStateCreate_t(nvjpegHandle_t, nvjpegJpegState_t *);
typedef nvjpegStatus_t nvjpegJpegStateDestroy_t(nvjpegJpegState_t);
typedef nvjpegStatus_t nvjpegGetImageInfo_t(nvjpegHandle_t, const unsigned char *, size_t, int *,
                                            nvjpegChromaSubsampling_t *, int *, int *);
typedef nvjpegStatus_t nvjpegDecode_t(nvjpegHandle_t, nvjpegJpegState_t, const unsigned char *,
                                      size_t, nvjpegOutputFormat_t, nvjpegImage_t *,
                                      nvjpegCudaStream_t);
#define FUNCTIONS(X) \
    X(cuvidGetDecoderCaps) \
    X(cuvidCreateDecoder) \
    X(cuvidDestroyDecoder) \
    X(cuvidDecodePicture) \
    X(cuvidGetDecodeStatus) \
    X(cuvidMapVideoFrame64) \
    X(cuvidUnmapVideoFrame64) \
    X(NvEncodeAPIGetMaxSupportedVersion) \
    X(NvEncodeAPICreateInstance) \
    X(nvjpegCreateSimple) \
    X(nvjpegDestroy) \
    X(nvjpegJpegStateCreate) \
    X(nvjpegJpegStateDestroy) \
    X(nvjpegGetImageInfo) \
    X(nvjpegDecode)
FUNCTIONS(FN)
#define CALL(name) p_##name

static int load(void)
{
    static const char *const libs[] = {"libnvcuvid.so.1", "libnvidia-encode.so.1",
                                       "libnvjpeg.so.13"};
    void *handles[3];
    for (int i = 0; i < 3; i++)
        if (!(handles[i] = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL))) {
            fprintf(stderr, "video_demo: %s\n", dlerror());
            return -1;
        }
#define RESOLVE(name) \
    *(void **)&p_##name = dlsym(handles[#name[0] == 'c' ? 0 : #name[0] == 'N' ? 1 : 2], #name); \
    if (!p_##name) \
        return -1;
    FUNCTIONS(RESOLVE)
    return 0;
}
#else
extern nvjpegStatus_t nvjpegCreateSimple(nvjpegHandle_t *);
extern nvjpegStatus_t nvjpegDestroy(nvjpegHandle_t);
extern nvjpegStatus_t nvjpegJpegStateCreate(nvjpegHandle_t, nvjpegJpegState_t *);
extern nvjpegStatus_t nvjpegJpegStateDestroy(nvjpegJpegState_t);
extern nvjpegStatus_t nvjpegGetImageInfo(nvjpegHandle_t, const unsigned char *, size_t, int *,
                                         nvjpegChromaSubsampling_t *, int *, int *);
extern nvjpegStatus_t nvjpegDecode(nvjpegHandle_t, nvjpegJpegState_t, const unsigned char *, size_t,
                                   nvjpegOutputFormat_t, nvjpegImage_t *, nvjpegCudaStream_t);
/* nv-codec-headers declare the cuvid functions as types only */
extern tcuvidGetDecoderCaps cuvidGetDecoderCaps;
extern tcuvidCreateDecoder cuvidCreateDecoder;
extern tcuvidDestroyDecoder cuvidDestroyDecoder;
extern tcuvidDecodePicture cuvidDecodePicture;
extern tcuvidGetDecodeStatus cuvidGetDecodeStatus;
extern tcuvidMapVideoFrame64 cuvidMapVideoFrame64;
extern tcuvidUnmapVideoFrame64 cuvidUnmapVideoFrame64;
#define CALL(name) name
static int load(void)
{
    return 0;
}
#endif

#define CHECK(what, call) \
    do { \
        int rc_ = (int)(call); \
        if (rc_ != 0) { \
            fprintf(stderr, "video_demo: %s failed: %d\n", what, rc_); \
            exit(1); \
        } \
    } while (0)

static void decode(cudaStream_t streams[2])
{
    static unsigned char bitstream[64 * 1024];
    CUVIDDECODECAPS caps = {.eCodecType = cudaVideoCodec_H264,
                            .eChromaFormat = cudaVideoChromaFormat_420};
    CHECK("cuvidGetDecoderCaps", CALL(cuvidGetDecoderCaps)(&caps));
    CUVIDDECODECREATEINFO info = {.ulWidth = 320,
                                  .ulHeight = 240,
                                  .ulNumDecodeSurfaces = DECODES,
                                  .CodecType = cudaVideoCodec_MPEG2,
                                  .ChromaFormat = cudaVideoChromaFormat_420,
                                  .ulTargetWidth = 320,
                                  .ulTargetHeight = 240,
                                  .ulNumOutputSurfaces = 2};
    CUvideodecoder decoder = NULL;
    if (CALL(cuvidCreateDecoder)(&decoder, &info) == CUDA_SUCCESS) { /* the refused one */
        fprintf(stderr, "video_demo: an MPEG-2 decoder was created\n");
        exit(1);
    }
    info.CodecType = cudaVideoCodec_H264;
    CHECK("cuvidCreateDecoder", CALL(cuvidCreateDecoder)(&decoder, &info));
    for (int i = 0; i < DECODES; i++) {
        CUVIDPICPARAMS pic = {.PicWidthInMbs = 20,
                              .FrameHeightInMbs = 15,
                              .CurrPicIdx = i,
                              .nBitstreamDataLen = 10000 + 2000 * (unsigned)i,
                              .pBitstreamData = bitstream};
        CHECK("cuvidDecodePicture", CALL(cuvidDecodePicture)(decoder, &pic));
        if (i % 2 == 0) {
            CUVIDGETDECODESTATUS status;
            CHECK("cuvidGetDecodeStatus", CALL(cuvidGetDecodeStatus)(decoder, i, &status));
        }
        CUVIDPROCPARAMS proc = {.progressive_frame = 1, .output_stream = (CUstream)streams[i % 2]};
        unsigned long long frame;
        unsigned int pitch;
        CHECK("cuvidMapVideoFrame64",
              CALL(cuvidMapVideoFrame64)(decoder, i, &frame, &pitch, &proc));
        CHECK("cuvidUnmapVideoFrame64", CALL(cuvidUnmapVideoFrame64)(decoder, frame));
    }
    CHECK("cuvidDestroyDecoder", CALL(cuvidDestroyDecoder)(decoder));
}

static void encode(cudaStream_t streams[2])
{
    uint32_t version;
    CHECK("NvEncodeAPIGetMaxSupportedVersion", CALL(NvEncodeAPIGetMaxSupportedVersion)(&version));
    NV_ENCODE_API_FUNCTION_LIST nvenc = {.version = NV_ENCODE_API_FUNCTION_LIST_VER};
    CHECK("NvEncodeAPICreateInstance", CALL(NvEncodeAPICreateInstance)(&nvenc));
    NV_ENC_OPEN_ENCODE_SESSION_EX_PARAMS open = {.version =
                                                     NV_ENC_OPEN_ENCODE_SESSION_EX_PARAMS_VER,
                                                 .deviceType = NV_ENC_DEVICE_TYPE_CUDA,
                                                 .apiVersion = NVENCAPI_VERSION};
    void *encoder = NULL;
    CHECK("nvEncOpenEncodeSessionEx", nvenc.nvEncOpenEncodeSessionEx(&open, &encoder));
    NV_ENC_INITIALIZE_PARAMS init = {.version = NV_ENC_INITIALIZE_PARAMS_VER,
                                     .encodeGUID = NV_ENC_CODEC_H264_GUID,
                                     .encodeWidth = 320,
                                     .encodeHeight = 240};
    CHECK("nvEncInitializeEncoder", nvenc.nvEncInitializeEncoder(encoder, &init));
    NV_ENC_CREATE_INPUT_BUFFER input = {.version = NV_ENC_CREATE_INPUT_BUFFER_VER,
                                        .width = 320,
                                        .height = 240,
                                        .bufferFmt = NV_ENC_BUFFER_FORMAT_NV12};
    CHECK("nvEncCreateInputBuffer", nvenc.nvEncCreateInputBuffer(encoder, &input));
    NV_ENC_CREATE_BITSTREAM_BUFFER output = {.version = NV_ENC_CREATE_BITSTREAM_BUFFER_VER};
    CHECK("nvEncCreateBitstreamBuffer", nvenc.nvEncCreateBitstreamBuffer(encoder, &output));
    CUstream io = (CUstream)streams[1];
    CHECK("nvEncSetIOCudaStreams", nvenc.nvEncSetIOCudaStreams(encoder, &io, &io));
    for (int i = 0; i < ENCODES; i++) {
        NV_ENC_PIC_PARAMS pic = {.version = NV_ENC_PIC_PARAMS_VER,
                                 .inputWidth = 320,
                                 .inputHeight = 240,
                                 .inputPitch = 320,
                                 .inputBuffer = input.inputBuffer,
                                 .outputBitstream = output.bitstreamBuffer,
                                 .bufferFmt = NV_ENC_BUFFER_FORMAT_NV12,
                                 .pictureStruct = NV_ENC_PIC_STRUCT_FRAME};
        CHECK("nvEncEncodePicture", nvenc.nvEncEncodePicture(encoder, &pic));
        NV_ENC_LOCK_BITSTREAM lock = {.version = NV_ENC_LOCK_BITSTREAM_VER,
                                      .outputBitstream = output.bitstreamBuffer};
        CHECK("nvEncLockBitstream", nvenc.nvEncLockBitstream(encoder, &lock));
        CHECK("nvEncUnlockBitstream", nvenc.nvEncUnlockBitstream(encoder, output.bitstreamBuffer));
    }
    CHECK("nvEncDestroyBitstreamBuffer",
          nvenc.nvEncDestroyBitstreamBuffer(encoder, output.bitstreamBuffer));
    CHECK("nvEncDestroyInputBuffer", nvenc.nvEncDestroyInputBuffer(encoder, input.inputBuffer));
    CHECK("nvEncDestroyEncoder", nvenc.nvEncDestroyEncoder(encoder));
}

static void jpeg(cudaStream_t streams[2])
{
    /* SOI, SOF0 (8 bits, 32 x 64, 3 components), a little payload, EOI */
    static unsigned char image[] = {0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x20, 0x00,
                                    0x40, 0x03, 0x01, 0x11, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11,
                                    0x01, 0xff, 0xda, 0x00, 0x04, 0x12, 0x34, 0xff, 0xd9};
    nvjpegHandle_t handle;
    nvjpegJpegState_t state;
    CHECK("nvjpegCreateSimple", CALL(nvjpegCreateSimple)(&handle));
    CHECK("nvjpegJpegStateCreate", CALL(nvjpegJpegStateCreate)(handle, &state));
    int components, widths[NVJPEG_MAX_COMPONENT], heights[NVJPEG_MAX_COMPONENT];
    nvjpegChromaSubsampling_t subsampling;
    CHECK("nvjpegGetImageInfo", CALL(nvjpegGetImageInfo)(handle, image, sizeof image, &components,
                                                         &subsampling, widths, heights));
    nvjpegImage_t out = {{NULL}, {0}};
    out.pitch[0] = (size_t)widths[0] * 3;
    CHECK("cudaMalloc", cudaMalloc((void **)&out.channel[0], out.pitch[0] * (size_t)heights[0]));
    for (int i = 0; i < JPEGS; i++)
        CHECK("nvjpegDecode", CALL(nvjpegDecode)(handle, state, image, sizeof image,
                                                 NVJPEG_OUTPUT_RGBI, &out, streams[i % 2]));
    unsigned char damaged[sizeof image];
    memcpy(damaged, image, sizeof image);
    damaged[1] = 0;
    if (CALL(nvjpegDecode)(handle, state, damaged, sizeof damaged, NVJPEG_OUTPUT_RGBI, &out,
                           streams[0]) != NVJPEG_STATUS_BAD_JPEG) {
        fprintf(stderr, "video_demo: a damaged image decoded\n");
        exit(1);
    }
    CHECK("cudaStreamSynchronize", cudaStreamSynchronize(streams[0]));
    CHECK("cudaStreamSynchronize", cudaStreamSynchronize(streams[1]));
    CHECK("cudaFree", cudaFree(out.channel[0]));
    CHECK("nvjpegJpegStateDestroy", CALL(nvjpegJpegStateDestroy)(state));
    CHECK("nvjpegDestroy", CALL(nvjpegDestroy)(handle));
}

int main(void)
{
    if (load() != 0) {
        fprintf(stderr, "video_demo: cannot load the video libraries\n");
        return 1;
    }
    cudaStream_t streams[2];
    CHECK("cudaStreamCreate", cudaStreamCreate(&streams[0]));
    CHECK("cudaStreamCreate", cudaStreamCreate(&streams[1]));
    decode(streams);
    encode(streams);
    jpeg(streams);
    CHECK("cudaStreamDestroy", cudaStreamDestroy(streams[0]));
    CHECK("cudaStreamDestroy", cudaStreamDestroy(streams[1]));
    printf("video_demo ok\n");
    return 0;
}
