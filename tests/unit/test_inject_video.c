/* The video collector in-process: the test calls the video libraries as a
 * program linked with them does (the wrappers of inject/video.c, then
 * simppu's libnvcuvid/libnvidia-encode/libnvjpeg stand-ins) and reads back
 * what the segments hold: each call with its status and handle, each
 * decode's and encode's work joined to its call, function lists of unknown
 * versions left alone and said, the pending table's bound, and the dlsym
 * answer for a library opened with dlopen.  Runs under the unit tests'
 * sanitizers. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <ffnvcodec/dynlink_cuda.h>
#include <ffnvcodec/dynlink_cuviddec.h>
#include <ffnvcodec/dynlink_nvcuvid.h>
#include <ffnvcodec/nvEncodeAPI.h>

#include "inject.h"
#include "nvjpeg_api.h"
#include "segment_stream.h"
#include "test_util.h"

/* inject/video.c's */
extern tcuvidCreateDecoder cuvidCreateDecoder;
extern tcuvidDestroyDecoder cuvidDestroyDecoder;
extern tcuvidDecodePicture cuvidDecodePicture;
extern tcuvidGetDecodeStatus cuvidGetDecodeStatus;
extern tcuvidMapVideoFrame64 cuvidMapVideoFrame64;
extern nvjpegStatus_t nvjpegCreateSimple(nvjpegHandle_t *);
extern nvjpegStatus_t nvjpegDestroy(nvjpegHandle_t);
void *asys_video_dlsym(void *handle, const char *name);
int asys_video_wrap_list(NV_ENCODE_API_FUNCTION_LIST *list, uint32_t version);

/* ---- reading back: every video record of this process ---- */
#define MAX_RECORDS 4096
struct record {
    unsigned type, arg;
    uint8_t data[80];
};
static struct record records[MAX_RECORDS];
static int record_count;

static void read_all(void)
{
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1;
    record_count = 0;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "p%d-", (int)getpid());
    DIR *d = opendir(asys_proc.segment_dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s%s", asys_proc.segment_dir, e->d_name);
        int fd = open(path, O_RDONLY);
        struct stat st;
        fstat(fd, &st);
        struct asys_segment_stream s;
        struct asys_err err;
        ck_assert_int_eq(
            asys_segment_stream_open(&s, asys_read_fd, &fd, (uint64_t)st.st_size, &err), 0);
        struct asys_record rec;
        while (asys_segment_stream_next(&s, &rec, &err) > 0 && record_count < MAX_RECORDS) {
            if (rec.type < ASYS_REC_VIDEO_API || rec.type > ASYS_REC_VIDEO_API_STREAM)
                continue;
            struct record *r = &records[record_count++];
            r->type = rec.type;
            r->arg = rec.arg;
            memcpy(r->data, rec.data, rec.size < sizeof r->data ? rec.size : sizeof r->data);
        }
        asys_segment_stream_close(&s);
        close(fd);
    }
    closedir(d);
    asys_tls_busy = was_busy;
}

static int count(unsigned type, unsigned arg)
{
    int n = 0;
    for (int i = 0; i < record_count; i++)
        n += records[i].type == type && records[i].arg == arg;
    return n;
}

static const void *last(unsigned type, unsigned arg)
{
    for (int i = record_count - 1; i >= 0; i--)
        if (records[i].type == type && records[i].arg == arg)
            return records[i].data;
    return NULL;
}

static CUvideodecoder new_decoder(void)
{
    CUVIDDECODECREATEINFO info = {.ulWidth = 64,
                                  .ulHeight = 64,
                                  .ulNumDecodeSurfaces = 60,
                                  .CodecType = cudaVideoCodec_HEVC,
                                  .ChromaFormat = cudaVideoChromaFormat_420};
    CUvideodecoder decoder = NULL;
    ck_assert_int_eq(cuvidCreateDecoder(&decoder, &info), CUDA_SUCCESS);
    return decoder;
}

START_TEST(decode_calls_and_work)
{
    static unsigned char bitstream[4096];
    CUvideodecoder decoder = new_decoder();
    CUVIDPICPARAMS pic = {.CurrPicIdx = 3, .nBitstreamDataLen = 4000, .pBitstreamData = bitstream};
    ck_assert_int_eq(cuvidDecodePicture(decoder, &pic), CUDA_SUCCESS);
    CUVIDPROCPARAMS proc = {.output_stream = (CUstream)(uintptr_t)0x5000};
    unsigned long long frame;
    unsigned pitch;
    ck_assert_int_eq(cuvidMapVideoFrame64(decoder, 3, &frame, &pitch, &proc), CUDA_SUCCESS);
    /* a picture never decoded: the stand-in's error, no work */
    ck_assert_int_ne(cuvidMapVideoFrame64(decoder, 4, &frame, &pitch, &proc), CUDA_SUCCESS);
    ck_assert_int_eq(cuvidDestroyDecoder(decoder), CUDA_SUCCESS);
    read_all();
    ck_assert_int_eq(count(ASYS_REC_VIDEO_API, 2), 1); /* cuvidCreateDecoder */
    ck_assert_int_eq(count(ASYS_REC_VIDEO_API, 4), 1); /* cuvidDecodePicture */
    ck_assert_int_eq(count(ASYS_REC_VIDEO_API_STREAM, 9), 2); /* cuvidMapVideoFrame64 */
    ck_assert_int_eq(count(ASYS_REC_VIDEO_API, 9), 0);
    ck_assert_int_eq(count(ASYS_REC_VIDEO_ACTIVITY, ASYS_VIDEO_DECODE), 1);
    const struct asys_rec_video_api *submit = last(ASYS_REC_VIDEO_API, 4);
    const struct asys_rec_video_api_stream *map = last(ASYS_REC_VIDEO_API_STREAM, 9);
    const struct asys_rec_video_activity *work = last(ASYS_REC_VIDEO_ACTIVITY, ASYS_VIDEO_DECODE);
    ck_assert_uint_eq(submit->handle, (uint64_t)(uintptr_t)decoder);
    ck_assert_int_eq(submit->status, 0);
    ck_assert_int_ne(map->status, 0);
    ck_assert_uint_eq(map->stream, 0x5000);
    ck_assert_uint_eq(work->call_id,
                      (uint64_t)asys_tls_thread->thread_index << ASYS_VIDEO_CALL_SHIFT |
                          submit->sequence);
    ck_assert_uint_eq(map->sequence, submit->sequence + 2); /* the second map */
    ck_assert_uint_eq(work->bytes, 4000);
    ck_assert_int_eq(work->picture, 3);
    ck_assert_uint_eq(work->stream, 0x5000);
    ck_assert_uint_eq(work->flags & ASYS_VIDEO_STREAM_ID, 0); /* no HGGC here */
    /* the engine's time: 200 us + 20 ns a byte, at least */
    double ns = (double)(work->end_ticks - work->start_ticks) / asys_proc.ticks_per_ns;
    ck_assert_double_ge(ns, 0.98 * (200000 + 4000 * 20));
    ck_assert_uint_ge(work->start_ticks, submit->start_ticks);
}
END_TEST

START_TEST(status_query_ends_the_work)
{
    static unsigned char bitstream[64];
    CUvideodecoder decoder = new_decoder();
    CUVIDPICPARAMS pic = {.CurrPicIdx = 1, .nBitstreamDataLen = 64, .pBitstreamData = bitstream};
    ck_assert_int_eq(cuvidDecodePicture(decoder, &pic), CUDA_SUCCESS);
    CUVIDGETDECODESTATUS status;
    do
        ck_assert_int_eq(cuvidGetDecodeStatus(decoder, 1, &status), CUDA_SUCCESS);
    while (status.decodeStatus == cuvidDecodeStatus_InProgress);
    uint64_t seen = asys_now();
    usleep(20000); /* mapped much later: the work ended when the query saw it */
    CUVIDPROCPARAMS proc = {.output_stream = NULL};
    unsigned long long frame;
    unsigned pitch;
    ck_assert_int_eq(cuvidMapVideoFrame64(decoder, 1, &frame, &pitch, &proc), CUDA_SUCCESS);
    ck_assert_int_eq(cuvidDestroyDecoder(decoder), CUDA_SUCCESS);
    read_all();
    const struct asys_rec_video_activity *work = last(ASYS_REC_VIDEO_ACTIVITY, ASYS_VIDEO_DECODE);
    ck_assert_ptr_nonnull(work);
    ck_assert_int_eq(work->picture, 1);
    ck_assert_uint_le(work->end_ticks, seen);
}
END_TEST

START_TEST(encode_list_is_wrapped)
{
    NV_ENCODE_API_FUNCTION_LIST list = {.version = NV_ENCODE_API_FUNCTION_LIST_VER};
    ck_assert_int_eq(NvEncodeAPICreateInstance(&list), NV_ENC_SUCCESS);
    NV_ENC_OPEN_ENCODE_SESSION_EX_PARAMS open = {
        .version = NV_ENC_OPEN_ENCODE_SESSION_EX_PARAMS_VER, .deviceType = NV_ENC_DEVICE_TYPE_CUDA};
    void *encoder = NULL;
    ck_assert_int_eq(list.nvEncOpenEncodeSessionEx(&open, &encoder), NV_ENC_SUCCESS);
    NV_ENC_INITIALIZE_PARAMS init = {.encodeWidth = 32, .encodeHeight = 32};
    ck_assert_int_eq(list.nvEncInitializeEncoder(encoder, &init), NV_ENC_SUCCESS);
    NV_ENC_CREATE_INPUT_BUFFER input = {.width = 32, .height = 32};
    NV_ENC_CREATE_BITSTREAM_BUFFER output = {0};
    ck_assert_int_eq(list.nvEncCreateInputBuffer(encoder, &input), NV_ENC_SUCCESS);
    ck_assert_int_eq(list.nvEncCreateBitstreamBuffer(encoder, &output), NV_ENC_SUCCESS);
    CUstream stream = (CUstream)(uintptr_t)0x7000;
    ck_assert_int_eq(list.nvEncSetIOCudaStreams(encoder, &stream, &stream), NV_ENC_SUCCESS);
    NV_ENC_PIC_PARAMS pic = {.inputWidth = 32,
                             .inputHeight = 32,
                             .inputBuffer = input.inputBuffer,
                             .outputBitstream = output.bitstreamBuffer};
    ck_assert_int_eq(list.nvEncEncodePicture(encoder, &pic), NV_ENC_SUCCESS);
    NV_ENC_LOCK_BITSTREAM lock = {.outputBitstream = output.bitstreamBuffer};
    ck_assert_int_eq(list.nvEncLockBitstream(encoder, &lock), NV_ENC_SUCCESS);
    /* a failing call: its status is recorded */
    ck_assert_int_ne(list.nvEncEncodePicture(NULL, &pic), NV_ENC_SUCCESS);
    ck_assert_int_eq(list.nvEncDestroyEncoder(encoder), NV_ENC_SUCCESS);
    read_all();
    ck_assert_int_eq(count(ASYS_REC_VIDEO_API, 33), 1); /* NvEncodeAPICreateInstance */
    ck_assert_int_eq(count(ASYS_REC_VIDEO_API_STREAM, 50), 2); /* nvEncEncodePicture */
    ck_assert_int_eq(count(ASYS_REC_VIDEO_API, 51), 1); /* nvEncLockBitstream */
    ck_assert_int_eq(count(ASYS_REC_VIDEO_API, 61), 1); /* nvEncDestroyEncoder */
    const struct asys_rec_video_api_stream *failed = last(ASYS_REC_VIDEO_API_STREAM, 50);
    ck_assert_uint_eq(failed->stream, 0); /* no encoder: no stream of its own */
    ck_assert_int_eq(failed->status, NV_ENC_ERR_INVALID_ENCODERDEVICE);
    const struct asys_rec_video_activity *work = last(ASYS_REC_VIDEO_ACTIVITY, ASYS_VIDEO_ENCODE);
    ck_assert_ptr_nonnull(work);
    ck_assert_uint_eq(work->stream, 0x7000);
    ck_assert_uint_eq(work->bytes, 32 * 32 / 16);
    ck_assert_int_eq(work->picture, -1);
    /* a second list of the same library: wrapped the same */
    NV_ENCODE_API_FUNCTION_LIST again = {.version = NV_ENCODE_API_FUNCTION_LIST_VER};
    ck_assert_int_eq(NvEncodeAPICreateInstance(&again), NV_ENC_SUCCESS);
    ck_assert_ptr_eq(again.nvEncEncodePicture, list.nvEncEncodePicture);
}
END_TEST

static NVENCSTATUS NVENCAPI other_encode(void *encoder, NV_ENC_PIC_PARAMS *params)
{
    (void)encoder;
    (void)params;
    return NV_ENC_SUCCESS;
}

START_TEST(unknown_lists_are_left_alone)
{
    NV_ENCODE_API_FUNCTION_LIST list;
    memset(&list, 0, sizeof list);
    list.nvEncEncodePicture = other_encode;
    /* struct version 3: not one asys knows */
    uint32_t v3 = (NV_ENCODE_API_FUNCTION_LIST_VER & ~(0xffu << 16)) | (3u << 16);
    ck_assert_int_eq(asys_video_wrap_list(&list, v3), -1);
    ck_assert_ptr_eq(list.nvEncEncodePicture, other_encode);
    ck_assert_int_eq(asys_video_wrap_list(&list, 0), -1);
    /* a list whose functions differ from the first one wrapped (encode_list_is_wrapped's) */
    NV_ENCODE_API_FUNCTION_LIST first = {.version = NV_ENCODE_API_FUNCTION_LIST_VER};
    ck_assert_int_eq(NvEncodeAPICreateInstance(&first), NV_ENC_SUCCESS);
    ck_assert_int_eq(asys_video_wrap_list(&list, NV_ENCODE_API_FUNCTION_LIST_VER), -1);
    ck_assert_ptr_eq(list.nvEncEncodePicture, other_encode);
    read_all();
    ck_assert_int_eq(count(ASYS_REC_VIDEO_STATUS, ASYS_VIDEO_TABLE_UNKNOWN), 2);
    ck_assert_int_eq(count(ASYS_REC_VIDEO_STATUS, ASYS_VIDEO_TABLE_CHANGED), 1);
    const struct asys_rec_video_status *s = last(ASYS_REC_VIDEO_STATUS, ASYS_VIDEO_TABLE_UNKNOWN);
    ck_assert_uint_eq(s->value, 0);
}
END_TEST

START_TEST(dlsym_answers_the_wrappers)
{
    void *lib = dlopen(SIMPPU_NVCUVID_PATH, RTLD_NOW | RTLD_LOCAL);
    ck_assert_ptr_nonnull(lib);
    void *real = dlsym(lib, "cuvidDecodePicture");
    ck_assert_ptr_nonnull(real);
    ck_assert_ptr_ne(real, (void *)(uintptr_t)cuvidDecodePicture);
    ck_assert_ptr_eq(asys_video_dlsym(lib, "cuvidDecodePicture"),
                     (void *)(uintptr_t)cuvidDecodePicture);
    /* names the library does not have, and names asys does not trace */
    ck_assert_ptr_null(asys_video_dlsym(lib, "cuvidNoSuchFunction"));
    ck_assert_ptr_null(asys_video_dlsym(lib, "nvjpegDecode"));
    ck_assert_ptr_eq(asys_video_dlsym(RTLD_DEFAULT, "getpid"), dlsym(RTLD_DEFAULT, "getpid"));
    dlclose(lib);
}
END_TEST

START_TEST(pending_work_is_bounded)
{
    static unsigned char bitstream[16];
    CUvideodecoder decoders[20];
    /* 20 x 60 pictures submitted, none mapped: more than the table holds */
    for (int d = 0; d < 20; d++) {
        decoders[d] = new_decoder();
        for (int i = 0; i < 60; i++) {
            CUVIDPICPARAMS pic = {
                .CurrPicIdx = i, .nBitstreamDataLen = 16, .pBitstreamData = bitstream};
            ck_assert_int_eq(cuvidDecodePicture(decoders[d], &pic), CUDA_SUCCESS);
        }
    }
    read_all();
    int lost = 0;
    for (int i = 0; i < record_count; i++)
        if (records[i].type == ASYS_REC_VIDEO_STATUS && records[i].arg == ASYS_VIDEO_PENDING_FULL)
            lost += (int)((const struct asys_rec_video_status *)records[i].data)->count;
    ck_assert_int_ge(lost, 1200 - ASYS_VIDEO_PENDING_MAX);
    /* destroyed decoders free their entries: new work is timed again */
    for (int d = 0; d < 20; d++)
        ck_assert_int_eq(cuvidDestroyDecoder(decoders[d]), CUDA_SUCCESS);
    CUvideodecoder decoder = new_decoder();
    CUVIDPICPARAMS pic = {.CurrPicIdx = 0, .nBitstreamDataLen = 16, .pBitstreamData = bitstream};
    ck_assert_int_eq(cuvidDecodePicture(decoder, &pic), CUDA_SUCCESS);
    unsigned long long frame;
    unsigned pitch;
    CUVIDPROCPARAMS proc = {.output_stream = NULL};
    int before = count(ASYS_REC_VIDEO_ACTIVITY, ASYS_VIDEO_DECODE);
    ck_assert_int_eq(cuvidMapVideoFrame64(decoder, 0, &frame, &pitch, &proc), CUDA_SUCCESS);
    ck_assert_int_eq(cuvidDestroyDecoder(decoder), CUDA_SUCCESS);
    read_all();
    ck_assert_int_eq(count(ASYS_REC_VIDEO_ACTIVITY, ASYS_VIDEO_DECODE), before + 1);
}
END_TEST

START_TEST(jpeg_calls)
{
    nvjpegHandle_t handle = NULL;
    ck_assert_int_eq(nvjpegCreateSimple(&handle), NVJPEG_STATUS_SUCCESS);
    ck_assert_int_eq(nvjpegDestroy(handle), NVJPEG_STATUS_SUCCESS);
    ck_assert_int_eq(nvjpegDestroy(NULL), NVJPEG_STATUS_INVALID_PARAMETER);
    read_all();
    const struct asys_rec_video_api *create = last(ASYS_REC_VIDEO_API, 99);
    ck_assert_ptr_nonnull(create);
    ck_assert_uint_eq(create->handle, (uint64_t)(uintptr_t)handle);
    ck_assert_int_eq(count(ASYS_REC_VIDEO_API_STREAM, 99), 0); /* takes no stream */
    ck_assert_int_eq(count(ASYS_REC_VIDEO_API, 101), 2);
    ck_assert_int_eq(((const struct asys_rec_video_api *)last(ASYS_REC_VIDEO_API, 101))->status,
                     NVJPEG_STATUS_INVALID_PARAMETER);
}
END_TEST

int main(int argc, char **argv)
{
    (void)argc;
    int status = test_run_in_session(argv, "hgvideo");
    if (status >= 0)
        return status;
    /* the stand-ins, in the global scope as a linked library would be */
    const char *const libs[] = {SIMPPU_NVCUVID_PATH, SIMPPU_NVENC_PATH, SIMPPU_NVJPEG_PATH};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        if (!dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL)) {
            fprintf(stderr, "test_inject_video: %s\n", dlerror());
            return 1;
        }
    Suite *s = suite_create("inject_video");
    TCase *tc = tcase_create("video");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, decode_calls_and_work);
    tcase_add_test(tc, status_query_ends_the_work);
    tcase_add_test(tc, encode_list_is_wrapped);
    tcase_add_test(tc, unknown_lists_are_left_alone);
    tcase_add_test(tc, dlsym_answers_the_wrappers);
    tcase_add_test(tc, pending_work_is_bounded);
    tcase_add_test(tc, jpeg_calls);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
