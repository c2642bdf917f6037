/* hgvideo collector (libasys-video.so, preloaded with -t hgvideo): the calls
 * of the video libraries and the engines' work they start.
 *
 * The library defines the entry points of libnvcuvid.so.1 (NVDEC: cuvid*),
 * libnvidia-encode.so.1 (NVENC: NvEncodeAPICreateInstance, whose function
 * list it wraps) and libnvjpeg.so (nvJPEG: nvjpeg*).  Preloaded, these
 * definitions win for a program linked with the libraries; dlsym is
 * interposed too, so that a program (FFmpeg, GStreamer) that dlopens a
 * library and resolves its functions gets the wrappers.  Each wrapper
 * forwards to the real function: the one dlsym returned to the program, else
 * the next definition (RTLD_NEXT), else the library already loaded
 * (RTLD_NOLOAD).
 *
 * Every call is a VIDEO_API record written when it returns.  The work of a
 * decode (cuvidDecodePicture .. the picture first seen complete: a
 * cuvidGetDecodeStatus that says so, or the cuvidMapVideoFrame that maps it)
 * and of an encode (nvEncEncodePicture .. nvEncLockBitstream of its output
 * returns) is a VIDEO_ACTIVITY record, written by the thread that completes
 * it; between the two it waits in a fixed table of pending work (lock-free:
 * claimed and released with compare-and-swap).
 *
 * Hot path: two clock reads, the record, no locks, no allocation; errno is
 * kept; a record that cannot be written is counted as a drop. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <ffnvcodec/dynlink_cuda.h>
#include <ffnvcodec/dynlink_cuviddec.h>
#include <ffnvcodec/dynlink_nvcuvid.h>
#include <ffnvcodec/nvEncodeAPI.h>

#include "inject.h"
#include "nvjpeg_api.h"

enum video_function {
#define VIDEO_ID(id, api, name) VIDEO_FN_##name = id,
    ASYS_VIDEO_FUNCTIONS(VIDEO_ID)
#undef VIDEO_ID
};

static int video_on;
/* the thread's calls: call_id = thread_index << 40 | sequence */
static __thread uint32_t video_sequence ASYS_TLS;

/* The CUPTI ids of a stream (hggc.c); -1 without HGGC. */
ASYS_RUNTIME_API int asys_hggc_stream_id(const void *stream, uint32_t *id);

/* ---- the real functions ---------------------------------------------------------------------- */

/* hidden, not static: the dlsym stub below reads it */
__attribute__((visibility("hidden"))) void *(*real_dlsym)(void *, const char *);
static void *real_functions[ASYS_VIDEO_FUNCTION_MAX + 1];

static const char *const function_names[ASYS_VIDEO_FUNCTION_MAX + 1] = {
#define VIDEO_NAME(id, api, name) [id] = #name,
    ASYS_VIDEO_FUNCTIONS(VIDEO_NAME)
#undef VIDEO_NAME
};

static void *resolve_dlsym(void)
{
    void *(*f)(void *, const char *) = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);
    if (ASYS_LIKELY(f != NULL))
        return (void *)(uintptr_t)f;
    void *(*libc)(void *, const char *);
    *(void **)&libc = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!libc)
        *(void **)&libc = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    /* The next definition of dlsym whatever its version: where several
     * interposers define it (ACDNN/ACBLAS's, earlier in LD_PRELOAD, calls this
     * one), each calls the one after it, so that all see the names they
     * trace (a versioned lookup skips the unversioned definitions of such
     * libraries and would go to libc's). */
    void *next = libc ? libc(RTLD_NEXT, "dlsym") : NULL;
    f = libc;
    if (next)
        *(void **)&f = next;
    __atomic_store_n(&real_dlsym, f, __ATOMIC_RELEASE);
    return (void *)(uintptr_t)f;
}

static struct {
    uint32_t no_real; /* calls of functions whose library was not found */
    uint32_t pending_full;
} video_counts;

static void write_status(unsigned status, uint32_t value, uint32_t count);

/* The library that defines function `id`, if it is loaded. */
static const char *const libraries[] = {"libnvcuvid.so.1", "libnvidia-encode.so.1",
                                        "libnvjpeg.so.13", "libnvjpeg.so.12",
                                        "libnvjpeg.so.11", "libnvjpeg.so"};

__attribute__((noinline)) static void *resolve_slow(unsigned id)
{
    void *(*sym)(void *, const char *);
    *(void **)&sym = resolve_dlsym();
    const char *name = function_names[id];
    void *f = NULL;
    if (sym && name) {
        f = sym(RTLD_NEXT, name);
        unsigned api = ASYS_VIDEO_API_OF(id);
        size_t first = api == ASYS_VIDEO_API_DECODE ? 0 : api == ASYS_VIDEO_API_ENCODE ? 1 : 2;
        size_t last = api == ASYS_VIDEO_API_DECODE ? 1 : api == ASYS_VIDEO_API_ENCODE ? 2 : 6;
        for (size_t i = first; !f && i < last; i++) {
            void *lib = dlopen(libraries[i], RTLD_LAZY | RTLD_NOLOAD);
            if (lib) {
                f = sym(lib, name);
                dlclose(lib);
            }
        }
    }
    if (f)
        __atomic_store_n(&real_functions[id], f, __ATOMIC_RELEASE);
    else if (__atomic_fetch_add(&video_counts.no_real, 1, __ATOMIC_RELAXED) == 0)
        write_status(ASYS_VIDEO_NO_REAL, id, 1);
    return f;
}

static inline void *real_function(unsigned id)
{
    void *f = __atomic_load_n(&real_functions[id], __ATOMIC_ACQUIRE);
    return ASYS_LIKELY(f != NULL) ? f : resolve_slow(id);
}

/* ---- records --------------------------------------------------------------------------------- */

static inline int video_begin(uint64_t *start)
{
    if (ASYS_UNLIKELY(!__atomic_load_n(&video_on, __ATOMIC_RELAXED)) || asys_tls_busy ||
        !asys_capturing())
        return 0;
    *start = asys_now();
    return 1;
}

/* CUPTI's id of a stream, when HGGC is attached (t entered). */
static uint32_t stream_flags(const void *stream, int has_stream, uint32_t *id)
{
    *id = 0;
    if (!has_stream)
        return 0;
    return asys_hggc_stream_id(stream, id) == 0 ? ASYS_VIDEO_STREAM_ID : 0;
}

/* Writes the call (32 bytes; 48 with the stream it takes); returns its call
 * id (0 when not written). */
__attribute__((noinline)) static uint64_t video_record(unsigned fn, uint64_t start, int32_t status,
                                                       uint64_t handle, const void *stream,
                                                       int has_stream)
{
    int saved_errno = errno;
    uint64_t end = asys_now();
    uint64_t call_id = 0;
    struct asys_thread *t = asys_thread_enter_at(start);
    if (t) {
        uint32_t sequence = ++video_sequence;
        call_id = ((uint64_t)t->thread_index << ASYS_VIDEO_CALL_SHIFT) | sequence;
        uint32_t delta;
        if (!has_stream) {
            struct asys_rec_video_api *r = asys_segment_reserve(&t->seg, sizeof *r, end, &delta);
            if (r) {
                r->start_ticks = start;
                r->handle = handle;
                r->status = status;
                r->sequence = sequence;
                asys_segment_commit(&r->header,
                                    ASYS_REC_WORD(ASYS_REC_VIDEO_API, sizeof *r / 8, fn, delta));
            }
        } else {
            uint32_t stream_id;
            uint32_t flags = stream_flags(stream, 1, &stream_id);
            struct asys_rec_video_api_stream *r =
                asys_segment_reserve(&t->seg, sizeof *r, end, &delta);
            if (r) {
                r->start_ticks = start;
                r->handle = handle;
                r->status = status;
                r->sequence = sequence;
                r->stream = (uint64_t)(uintptr_t)stream;
                r->stream_id = stream_id;
                r->flags = flags;
                asys_segment_commit(
                    &r->header, ASYS_REC_WORD(ASYS_REC_VIDEO_API_STREAM, sizeof *r / 8, fn, delta));
            }
        }
        asys_thread_leave();
    }
    errno = saved_errno;
    return call_id;
}

static void write_status(unsigned status, uint32_t value, uint32_t count)
{
    int saved_errno = errno;
    struct asys_thread *t = asys_thread_enter();
    if (t) {
        uint32_t delta;
        struct asys_rec_video_status *r =
            asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
        if (r) {
            r->value = value;
            r->count = count;
            asys_segment_commit(&r->header,
                                ASYS_REC_WORD(ASYS_REC_VIDEO_STATUS, sizeof *r / 8, status, delta));
        }
        asys_thread_leave();
    }
    errno = saved_errno;
}

/* ---- work submitted and not yet seen complete ------------------------------------------------ */

enum { SLOT_FREE = 0, SLOT_BUSY = 1, SLOT_READY = 2 };
#define PENDING_PROBES 64

struct pending {
    uint32_t state; /* SLOT_*, atomic */
    uint32_t kind; /* enum asys_video_kind */
    uint64_t handle, key;
    uint64_t start_ticks, end_ticks; /* end: seen complete by a status query, else 0 */
    uint64_t call_id, bytes, stream;
    int32_t picture;
    uint32_t has_stream;
};
static struct pending pending[ASYS_VIDEO_PENDING_MAX];

static inline size_t pending_hash(uint64_t handle, uint64_t key)
{
    uint64_t h = (handle ^ (key * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    return (size_t)(h >> 32) % ASYS_VIDEO_PENDING_MAX;
}

/* Takes the entry of (handle, key) out of the table into *out; 1 when found.
 * With `peek`, marks it complete at `end` instead (when not marked yet). */
static int pending_take(uint64_t handle, uint64_t key, struct pending *out, int peek, uint64_t end)
{
    size_t at = pending_hash(handle, key);
    for (size_t i = 0; i < PENDING_PROBES; i++, at = (at + 1) % ASYS_VIDEO_PENDING_MAX) {
        struct pending *p = &pending[at];
        uint32_t ready = SLOT_READY;
        if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != SLOT_READY || p->handle != handle ||
            p->key != key)
            continue;
        if (!__atomic_compare_exchange_n(&p->state, &ready, SLOT_BUSY, 0, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED))
            continue;
        if (p->handle != handle || p->key != key) { /* reused meanwhile */
            __atomic_store_n(&p->state, SLOT_READY, __ATOMIC_RELEASE);
            continue;
        }
        if (peek) {
            if (!p->end_ticks)
                p->end_ticks = end;
            __atomic_store_n(&p->state, SLOT_READY, __ATOMIC_RELEASE);
            return 1;
        }
        *out = *p;
        __atomic_store_n(&p->state, SLOT_FREE, __ATOMIC_RELEASE);
        return 1;
    }
    return 0;
}

static void pending_put(const struct pending *in)
{
    struct pending old;
    pending_take(in->handle, in->key, &old, 0, 0); /* resubmitted: the earlier one is gone */
    size_t at = pending_hash(in->handle, in->key);
    for (size_t i = 0; i < PENDING_PROBES; i++, at = (at + 1) % ASYS_VIDEO_PENDING_MAX) {
        struct pending *p = &pending[at];
        uint32_t free_ = SLOT_FREE;
        if (__atomic_load_n(&p->state, __ATOMIC_RELAXED) != SLOT_FREE ||
            !__atomic_compare_exchange_n(&p->state, &free_, SLOT_BUSY, 0, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED))
            continue;
        uint32_t state = p->state;
        *p = *in;
        p->state = state;
        __atomic_store_n(&p->state, SLOT_READY, __ATOMIC_RELEASE);
        return;
    }
    /* one record per piece of work left untimed (each came with its call's record) */
    __atomic_add_fetch(&video_counts.pending_full, 1, __ATOMIC_RELAXED);
    write_status(ASYS_VIDEO_PENDING_FULL, 0, 1);
}

/* A destroyed decoder or encoder: its work never completed. */
static void pending_forget(uint64_t handle)
{
    for (size_t i = 0; i < ASYS_VIDEO_PENDING_MAX; i++) {
        struct pending *p = &pending[i];
        uint32_t ready = SLOT_READY;
        if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == SLOT_READY && p->handle == handle &&
            __atomic_compare_exchange_n(&p->state, &ready, SLOT_BUSY, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            if (p->handle == handle)
                __atomic_store_n(&p->state, SLOT_FREE, __ATOMIC_RELEASE);
            else
                __atomic_store_n(&p->state, SLOT_READY, __ATOMIC_RELEASE);
        }
    }
}

static void write_activity(const struct pending *p, uint64_t end, const void *stream,
                           int has_stream)
{
    int saved_errno = errno;
    uint64_t now = asys_now();
    struct asys_thread *t = asys_thread_enter();
    if (t) {
        uint32_t stream_id;
        uint32_t flags = stream_flags(stream, has_stream, &stream_id);
        uint32_t delta;
        struct asys_rec_video_activity *r = asys_segment_reserve(&t->seg, sizeof *r, now, &delta);
        if (r) {
            r->start_ticks = p->start_ticks;
            r->end_ticks = end < p->start_ticks ? p->start_ticks : end;
            r->call_id = p->call_id;
            r->handle = p->handle;
            r->stream = (uint64_t)(uintptr_t)stream;
            r->bytes = p->bytes;
            r->stream_id = stream_id;
            r->flags = flags;
            r->picture = p->picture;
            r->reserved = 0;
            asys_segment_commit(
                &r->header, ASYS_REC_WORD(ASYS_REC_VIDEO_ACTIVITY, sizeof *r / 8, p->kind, delta));
        }
        asys_thread_leave();
    }
    errno = saved_errno;
}

/* ---- NVDEC: libnvcuvid.so.1 ------------------------------------------------------------------ */

/* CUDA_ERROR_NOT_FOUND (cuda.h; dynlink_cuda.h lists fewer codes): no real function */
#define VIDEO_NOT_FOUND ((CUresult)500)
#define H(x) ((uint64_t)(uintptr_t)(x))
/* What a call acts on once it returned: an object it created. */
#define VIDEO_OUT(p) (rc_ == 0 && (p) ? H(*(p)) : 0)

/* The common body: forwards, and records the call when traced.  `fail` is
 * returned when no real function exists. */
#define VIDEO_TRACE(name, type, fail, handle, stream, has_stream, args) \
    do { \
        __typeof__(name) *f_; \
        *(void **)&f_ = real_function(VIDEO_FN_##name); \
        if (ASYS_UNLIKELY(!f_)) \
            return fail; \
        uint64_t start_; \
        if (!video_begin(&start_)) \
            return f_ args; \
        type rc_ = f_ args; \
        video_record(VIDEO_FN_##name, start_, (int32_t)rc_, handle, stream, has_stream); \
        return rc_; \
    } while (0)

#define CUVID(name, params, args, handle) \
    ASYS_EXPORT CUresult CUDAAPI name params; \
    ASYS_EXPORT CUresult CUDAAPI name params \
    { \
        VIDEO_TRACE(name, CUresult, VIDEO_NOT_FOUND, handle, NULL, 0, args); \
    }

CUVID(cuvidGetDecoderCaps, (CUVIDDECODECAPS * caps), (caps), 0)
CUVID(cuvidCreateDecoder, (CUvideodecoder * decoder, CUVIDDECODECREATEINFO *info), (decoder, info),
      VIDEO_OUT(decoder))
CUVID(cuvidReconfigureDecoder, (CUvideodecoder decoder, CUVIDRECONFIGUREDECODERINFO *info),
      (decoder, info), H(decoder))
CUVID(cuvidUnmapVideoFrame, (CUvideodecoder decoder, unsigned int frame), (decoder, frame),
      H(decoder))
CUVID(cuvidUnmapVideoFrame64, (CUvideodecoder decoder, unsigned long long frame), (decoder, frame),
      H(decoder))
CUVID(cuvidCtxLockCreate, (CUvideoctxlock * lock, CUcontext context), (lock, context),
      VIDEO_OUT(lock))
CUVID(cuvidCtxLockDestroy, (CUvideoctxlock lock), (lock), H(lock))
CUVID(cuvidCtxLock, (CUvideoctxlock lock, unsigned int flags), (lock, flags), H(lock))
CUVID(cuvidCtxUnlock, (CUvideoctxlock lock, unsigned int flags), (lock, flags), H(lock))
CUVID(cuvidCreateVideoSource, (CUvideosource * source, const char *file, CUVIDSOURCEPARAMS *params),
      (source, file, params), VIDEO_OUT(source))
CUVID(cuvidCreateVideoSourceW,
      (CUvideosource * source, const wchar_t *file, CUVIDSOURCEPARAMS *params),
      (source, file, params), VIDEO_OUT(source))
CUVID(cuvidDestroyVideoSource, (CUvideosource source), (source), H(source))
CUVID(cuvidSetVideoSourceState, (CUvideosource source, cudaVideoState state), (source, state),
      H(source))
CUVID(cuvidGetSourceVideoFormat, (CUvideosource source, CUVIDEOFORMAT *format, unsigned int flags),
      (source, format, flags), H(source))
CUVID(cuvidGetSourceAudioFormat, (CUvideosource source, CUAUDIOFORMAT *format, unsigned int flags),
      (source, format, flags), H(source))
CUVID(cuvidCreateVideoParser, (CUvideoparser * parser, CUVIDPARSERPARAMS *params), (parser, params),
      VIDEO_OUT(parser))
CUVID(cuvidParseVideoData, (CUvideoparser parser, CUVIDSOURCEDATAPACKET *packet), (parser, packet),
      H(parser))
CUVID(cuvidDestroyVideoParser, (CUvideoparser parser), (parser), H(parser))

/* Returns a cudaVideoState, not a status: recorded as status 0. */
ASYS_EXPORT cudaVideoState CUDAAPI cuvidGetVideoSourceState(CUvideosource source);
ASYS_EXPORT cudaVideoState CUDAAPI cuvidGetVideoSourceState(CUvideosource source)
{
    cudaVideoState (*f)(CUvideosource) =
        (cudaVideoState(*)(CUvideosource))real_function(VIDEO_FN_cuvidGetVideoSourceState);
    if (ASYS_UNLIKELY(!f))
        return cudaVideoState_Error;
    uint64_t start;
    if (!video_begin(&start))
        return f(source);
    cudaVideoState state = f(source);
    video_record(VIDEO_FN_cuvidGetVideoSourceState, start, 0, H(source), NULL, 0);
    return state;
}

ASYS_EXPORT CUresult CUDAAPI cuvidDestroyDecoder(CUvideodecoder decoder);
ASYS_EXPORT CUresult CUDAAPI cuvidDestroyDecoder(CUvideodecoder decoder)
{
    pending_forget(H(decoder));
    VIDEO_TRACE(cuvidDestroyDecoder, CUresult, VIDEO_NOT_FOUND, H(decoder), NULL, 0, (decoder));
}

ASYS_EXPORT CUresult CUDAAPI cuvidDecodePicture(CUvideodecoder decoder, CUVIDPICPARAMS *params);
ASYS_EXPORT CUresult CUDAAPI cuvidDecodePicture(CUvideodecoder decoder, CUVIDPICPARAMS *params)
{
    CUresult (*f)(CUvideodecoder, CUVIDPICPARAMS *) =
        (CUresult(*)(CUvideodecoder, CUVIDPICPARAMS *))real_function(VIDEO_FN_cuvidDecodePicture);
    if (ASYS_UNLIKELY(!f))
        return VIDEO_NOT_FOUND;
    uint64_t start;
    if (!video_begin(&start))
        return f(decoder, params);
    CUresult rc = f(decoder, params);
    uint64_t call_id = video_record(VIDEO_FN_cuvidDecodePicture, start, rc, H(decoder), NULL, 0);
    if (rc == CUDA_SUCCESS && params) {
        struct pending p = {.kind = ASYS_VIDEO_DECODE,
                            .handle = H(decoder),
                            .key = (uint64_t)(uint32_t)params->CurrPicIdx,
                            .start_ticks = asys_now(),
                            .call_id = call_id,
                            .bytes = params->nBitstreamDataLen,
                            .picture = params->CurrPicIdx};
        pending_put(&p);
    }
    return rc;
}

ASYS_EXPORT CUresult CUDAAPI cuvidGetDecodeStatus(CUvideodecoder decoder, int picture,
                                                  CUVIDGETDECODESTATUS *status);
ASYS_EXPORT CUresult CUDAAPI cuvidGetDecodeStatus(CUvideodecoder decoder, int picture,
                                                  CUVIDGETDECODESTATUS *status)
{
    CUresult (*f)(CUvideodecoder, int, CUVIDGETDECODESTATUS *) = (CUresult(*)(
        CUvideodecoder, int, CUVIDGETDECODESTATUS *))real_function(VIDEO_FN_cuvidGetDecodeStatus);
    if (ASYS_UNLIKELY(!f))
        return VIDEO_NOT_FOUND;
    uint64_t start;
    if (!video_begin(&start))
        return f(decoder, picture, status);
    CUresult rc = f(decoder, picture, status);
    uint64_t end = asys_now();
    if (rc == CUDA_SUCCESS && status &&
        (status->decodeStatus == cuvidDecodeStatus_Success ||
         status->decodeStatus == cuvidDecodeStatus_Error ||
         status->decodeStatus == cuvidDecodeStatus_Error_Concealed))
        pending_take(H(decoder), (uint64_t)(uint32_t)picture, NULL, 1, end);
    video_record(VIDEO_FN_cuvidGetDecodeStatus, start, rc, H(decoder), NULL, 0);
    return rc;
}

/* A picture mapped: its decode is complete (first seen here unless a status
 * query saw it before); its stream is the map's output stream. */
static void decode_mapped(CUvideodecoder decoder, int picture, CUVIDPROCPARAMS *params)
{
    uint64_t end = asys_now();
    struct pending p;
    if (pending_take(H(decoder), (uint64_t)(uint32_t)picture, &p, 0, 0)) {
        const void *stream = params ? (const void *)params->output_stream : NULL;
        write_activity(&p, p.end_ticks ? p.end_ticks : end, stream, 1);
    }
}

ASYS_EXPORT CUresult CUDAAPI cuvidMapVideoFrame(CUvideodecoder decoder, int picture,
                                                unsigned int *frame, unsigned int *pitch,
                                                CUVIDPROCPARAMS *params);
ASYS_EXPORT CUresult CUDAAPI cuvidMapVideoFrame(CUvideodecoder decoder, int picture,
                                                unsigned int *frame, unsigned int *pitch,
                                                CUVIDPROCPARAMS *params)
{
    CUresult (*f)(CUvideodecoder, int, unsigned int *, unsigned int *, CUVIDPROCPARAMS *) =
        (CUresult(*)(CUvideodecoder, int, unsigned int *, unsigned int *,
                     CUVIDPROCPARAMS *))real_function(VIDEO_FN_cuvidMapVideoFrame);
    if (ASYS_UNLIKELY(!f))
        return VIDEO_NOT_FOUND;
    uint64_t start;
    if (!video_begin(&start))
        return f(decoder, picture, frame, pitch, params);
    CUresult rc = f(decoder, picture, frame, pitch, params);
    if (rc == CUDA_SUCCESS)
        decode_mapped(decoder, picture, params);
    video_record(VIDEO_FN_cuvidMapVideoFrame, start, rc, H(decoder),
                 params ? (const void *)params->output_stream : NULL, 1);
    return rc;
}

ASYS_EXPORT CUresult CUDAAPI cuvidMapVideoFrame64(CUvideodecoder decoder, int picture,
                                                  unsigned long long *frame, unsigned int *pitch,
                                                  CUVIDPROCPARAMS *params);
ASYS_EXPORT CUresult CUDAAPI cuvidMapVideoFrame64(CUvideodecoder decoder, int picture,
                                                  unsigned long long *frame, unsigned int *pitch,
                                                  CUVIDPROCPARAMS *params)
{
    CUresult (*f)(CUvideodecoder, int, unsigned long long *, unsigned int *, CUVIDPROCPARAMS *) =
        (CUresult(*)(CUvideodecoder, int, unsigned long long *, unsigned int *,
                     CUVIDPROCPARAMS *))real_function(VIDEO_FN_cuvidMapVideoFrame64);
    if (ASYS_UNLIKELY(!f))
        return VIDEO_NOT_FOUND;
    uint64_t start;
    if (!video_begin(&start))
        return f(decoder, picture, frame, pitch, params);
    CUresult rc = f(decoder, picture, frame, pitch, params);
    if (rc == CUDA_SUCCESS)
        decode_mapped(decoder, picture, params);
    video_record(VIDEO_FN_cuvidMapVideoFrame64, start, rc, H(decoder),
                 params ? (const void *)params->output_stream : NULL, 1);
    return rc;
}

/* ---- nvJPEG: libnvjpeg.so -------------------------------------------------------------------- */

/* `stream`: the call's stream argument (NULL: the default stream), or NULL
 * in the table for a call that takes none (told apart by its spelling) */
#define NVJPEG(name, params, args, handle, stream) \
    ASYS_EXPORT nvjpegStatus_t name params; \
    ASYS_EXPORT nvjpegStatus_t name params \
    { \
        VIDEO_TRACE(name, nvjpegStatus_t, NVJPEG_STATUS_NOT_INITIALIZED, H(handle), \
                    (const void *)(stream), sizeof(#stream) != sizeof("NULL"), args); \
    }
ASYS_NVJPEG_FUNCTIONS(NVJPEG)

/* ---- NVENC: libnvidia-encode.so.1 ------------------------------------------------------------ */

/* The real functions of the list; filled by the first NvEncodeAPICreateInstance. */
static NV_ENCODE_API_FUNCTION_LIST encode_real;
static uint32_t encode_unknown_versions;

/* Each encoder's output stream (nvEncSetIOCudaStreams), for its work. */
#define ENCODER_STREAMS 64
static struct {
    uint64_t encoder; /* atomic: claimed with compare-and-swap, 0 free */
    uint64_t stream;
} encoder_streams[ENCODER_STREAMS];

static int encoder_stream(uint64_t encoder, uint64_t *stream)
{
    for (size_t i = 0; i < ENCODER_STREAMS; i++)
        if (__atomic_load_n(&encoder_streams[i].encoder, __ATOMIC_ACQUIRE) == encoder) {
            *stream = __atomic_load_n(&encoder_streams[i].stream, __ATOMIC_RELAXED);
            return 1;
        }
    *stream = 0;
    return 0;
}

static void encoder_stream_set(uint64_t encoder, uint64_t stream)
{
    for (size_t i = 0; i < ENCODER_STREAMS; i++) {
        uint64_t e = __atomic_load_n(&encoder_streams[i].encoder, __ATOMIC_ACQUIRE);
        if (e == encoder) {
            __atomic_store_n(&encoder_streams[i].stream, stream, __ATOMIC_RELAXED);
            return;
        }
    }
    for (size_t i = 0; i < ENCODER_STREAMS; i++) {
        uint64_t expected = 0;
        __atomic_store_n(&encoder_streams[i].stream, stream, __ATOMIC_RELAXED);
        if (__atomic_compare_exchange_n(&encoder_streams[i].encoder, &expected, encoder, 0,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            return;
    }
}

static void encoder_stream_forget(uint64_t encoder)
{
    for (size_t i = 0; i < ENCODER_STREAMS; i++) {
        uint64_t e = encoder;
        __atomic_compare_exchange_n(&encoder_streams[i].encoder, &e, 0, 0, __ATOMIC_RELEASE,
                                    __ATOMIC_RELAXED);
    }
}

#define ENC_TRACE(field, handle, stream, has_stream, args) \
    do { \
        uint64_t start_; \
        if (!video_begin(&start_)) \
            return encode_real.field args; \
        NVENCSTATUS rc_ = encode_real.field args; \
        video_record(VIDEO_FN_##field, start_, (int32_t)rc_, handle, stream, has_stream); \
        return rc_; \
    } while (0)
#define ENC(field, params, args, handle) \
    static NVENCSTATUS NVENCAPI wrap_##field params \
    { \
        ENC_TRACE(field, handle, NULL, 0, args); \
    }

ENC(nvEncOpenEncodeSession, (void *device, uint32_t type, void **encoder), (device, type, encoder),
    VIDEO_OUT(encoder))
ENC(nvEncGetEncodeGUIDCount, (void *encoder, uint32_t *count), (encoder, count), H(encoder))
ENC(nvEncGetEncodeProfileGUIDCount, (void *encoder, GUID codec, uint32_t *count),
    (encoder, codec, count), H(encoder))
ENC(nvEncGetEncodeProfileGUIDs,
    (void *encoder, GUID codec, GUID *guids, uint32_t size, uint32_t *count),
    (encoder, codec, guids, size, count), H(encoder))
ENC(nvEncGetEncodeGUIDs, (void *encoder, GUID *guids, uint32_t size, uint32_t *count),
    (encoder, guids, size, count), H(encoder))
ENC(nvEncGetInputFormatCount, (void *encoder, GUID codec, uint32_t *count), (encoder, codec, count),
    H(encoder))
ENC(nvEncGetInputFormats,
    (void *encoder, GUID codec, NV_ENC_BUFFER_FORMAT *formats, uint32_t size, uint32_t *count),
    (encoder, codec, formats, size, count), H(encoder))
ENC(nvEncGetEncodeCaps, (void *encoder, GUID codec, NV_ENC_CAPS_PARAM *caps, int *value),
    (encoder, codec, caps, value), H(encoder))
ENC(nvEncGetEncodePresetCount, (void *encoder, GUID codec, uint32_t *count),
    (encoder, codec, count), H(encoder))
ENC(nvEncGetEncodePresetGUIDs,
    (void *encoder, GUID codec, GUID *guids, uint32_t size, uint32_t *count),
    (encoder, codec, guids, size, count), H(encoder))
ENC(nvEncGetEncodePresetConfig,
    (void *encoder, GUID codec, GUID preset, NV_ENC_PRESET_CONFIG *config),
    (encoder, codec, preset, config), H(encoder))
ENC(nvEncInitializeEncoder, (void *encoder, NV_ENC_INITIALIZE_PARAMS *params), (encoder, params),
    H(encoder))
ENC(nvEncCreateInputBuffer, (void *encoder, NV_ENC_CREATE_INPUT_BUFFER *params), (encoder, params),
    H(encoder))
ENC(nvEncDestroyInputBuffer, (void *encoder, NV_ENC_INPUT_PTR buffer), (encoder, buffer),
    H(encoder))
ENC(nvEncCreateBitstreamBuffer, (void *encoder, NV_ENC_CREATE_BITSTREAM_BUFFER *params),
    (encoder, params), H(encoder))
ENC(nvEncDestroyBitstreamBuffer, (void *encoder, NV_ENC_OUTPUT_PTR buffer), (encoder, buffer),
    H(encoder))
ENC(nvEncUnlockBitstream, (void *encoder, NV_ENC_OUTPUT_PTR buffer), (encoder, buffer), H(encoder))
ENC(nvEncLockInputBuffer, (void *encoder, NV_ENC_LOCK_INPUT_BUFFER *params), (encoder, params),
    H(encoder))
ENC(nvEncUnlockInputBuffer, (void *encoder, NV_ENC_INPUT_PTR buffer), (encoder, buffer), H(encoder))
ENC(nvEncGetEncodeStats, (void *encoder, NV_ENC_STAT *stats), (encoder, stats), H(encoder))
ENC(nvEncGetSequenceParams, (void *encoder, NV_ENC_SEQUENCE_PARAM_PAYLOAD *payload),
    (encoder, payload), H(encoder))
ENC(nvEncRegisterAsyncEvent, (void *encoder, NV_ENC_EVENT_PARAMS *params), (encoder, params),
    H(encoder))
ENC(nvEncUnregisterAsyncEvent, (void *encoder, NV_ENC_EVENT_PARAMS *params), (encoder, params),
    H(encoder))
ENC(nvEncMapInputResource, (void *encoder, NV_ENC_MAP_INPUT_RESOURCE *params), (encoder, params),
    H(encoder))
ENC(nvEncUnmapInputResource, (void *encoder, NV_ENC_INPUT_PTR buffer), (encoder, buffer),
    H(encoder))
ENC(nvEncInvalidateRefFrames, (void *encoder, uint64_t timestamp), (encoder, timestamp), H(encoder))
ENC(nvEncOpenEncodeSessionEx, (NV_ENC_OPEN_ENCODE_SESSION_EX_PARAMS * params, void **encoder),
    (params, encoder), VIDEO_OUT(encoder))
ENC(nvEncRegisterResource, (void *encoder, NV_ENC_REGISTER_RESOURCE *params), (encoder, params),
    H(encoder))
ENC(nvEncUnregisterResource, (void *encoder, NV_ENC_REGISTERED_PTR resource), (encoder, resource),
    H(encoder))
ENC(nvEncReconfigureEncoder, (void *encoder, NV_ENC_RECONFIGURE_PARAMS *params), (encoder, params),
    H(encoder))
ENC(nvEncCreateMVBuffer, (void *encoder, NV_ENC_CREATE_MV_BUFFER *params), (encoder, params),
    H(encoder))
ENC(nvEncDestroyMVBuffer, (void *encoder, NV_ENC_OUTPUT_PTR buffer), (encoder, buffer), H(encoder))
ENC(nvEncRunMotionEstimationOnly, (void *encoder, NV_ENC_MEONLY_PARAMS *params), (encoder, params),
    H(encoder))
ENC(nvEncGetEncodePresetConfigEx,
    (void *encoder, GUID codec, GUID preset, NV_ENC_TUNING_INFO tuning,
     NV_ENC_PRESET_CONFIG *config),
    (encoder, codec, preset, tuning, config), H(encoder))
ENC(nvEncGetSequenceParamEx,
    (void *encoder, NV_ENC_INITIALIZE_PARAMS *params, NV_ENC_SEQUENCE_PARAM_PAYLOAD *payload),
    (encoder, params, payload), H(encoder))

static NVENCSTATUS NVENCAPI wrap_nvEncDestroyEncoder(void *encoder)
{
    pending_forget(H(encoder));
    encoder_stream_forget(H(encoder));
    ENC_TRACE(nvEncDestroyEncoder, H(encoder), NULL, 0, (encoder));
}

static NVENCSTATUS NVENCAPI wrap_nvEncSetIOCudaStreams(void *encoder, NV_ENC_CUSTREAM_PTR input,
                                                       NV_ENC_CUSTREAM_PTR output)
{
    uint64_t start;
    if (!video_begin(&start))
        return encode_real.nvEncSetIOCudaStreams(encoder, input, output);
    NVENCSTATUS rc = encode_real.nvEncSetIOCudaStreams(encoder, input, output);
    const void *stream = output ? *(const void *const *)output : NULL;
    if (rc == NV_ENC_SUCCESS)
        encoder_stream_set(H(encoder), H(stream));
    video_record(VIDEO_FN_nvEncSetIOCudaStreams, start, rc, H(encoder), stream, 1);
    return rc;
}

static const char *NVENCAPI wrap_nvEncGetLastErrorString(void *encoder)
{
    uint64_t start;
    if (!video_begin(&start))
        return encode_real.nvEncGetLastErrorString(encoder);
    const char *text = encode_real.nvEncGetLastErrorString(encoder);
    video_record(VIDEO_FN_nvEncGetLastErrorString, start, 0, H(encoder), NULL, 0);
    return text;
}

static NVENCSTATUS NVENCAPI wrap_nvEncEncodePicture(void *encoder, NV_ENC_PIC_PARAMS *params)
{
    uint64_t start;
    if (!video_begin(&start))
        return encode_real.nvEncEncodePicture(encoder, params);
    NVENCSTATUS rc = encode_real.nvEncEncodePicture(encoder, params);
    uint64_t stream; /* without nvEncSetIOCudaStreams: the default stream, 0 */
    encoder_stream(H(encoder), &stream);
    uint64_t call_id = video_record(VIDEO_FN_nvEncEncodePicture, start, rc, H(encoder),
                                    (const void *)(uintptr_t)stream, 1);
    /* NEED_MORE_INPUT: queued (B-frames); its output comes with a later picture's */
    if ((rc == NV_ENC_SUCCESS || rc == NV_ENC_ERR_NEED_MORE_INPUT) && params &&
        params->outputBitstream) {
        struct pending p = {.kind = ASYS_VIDEO_ENCODE,
                            .handle = H(encoder),
                            .key = H(params->outputBitstream),
                            .start_ticks = asys_now(),
                            .call_id = call_id,
                            .stream = stream,
                            .picture = -1,
                            .has_stream = 1};
        pending_put(&p);
    }
    return rc;
}

static NVENCSTATUS NVENCAPI wrap_nvEncLockBitstream(void *encoder, NV_ENC_LOCK_BITSTREAM *lock)
{
    uint64_t start;
    if (!video_begin(&start))
        return encode_real.nvEncLockBitstream(encoder, lock);
    NVENCSTATUS rc = encode_real.nvEncLockBitstream(encoder, lock);
    struct pending p;
    if (rc == NV_ENC_SUCCESS && lock &&
        pending_take(H(encoder), H(lock->outputBitstream), &p, 0, 0)) {
        p.bytes = lock->bitstreamSizeInBytes;
        write_activity(&p, asys_now(), (const void *)(uintptr_t)p.stream, 1);
    }
    video_record(VIDEO_FN_nvEncLockBitstream, start, rc, H(encoder), NULL, 0);
    return rc;
}

/* The list's slots asys knows, in the order of NV_ENCODE_API_FUNCTION_LIST. */
#define ENCODE_SLOTS(X) \
    X(nvEncOpenEncodeSession) \
    X(nvEncGetEncodeGUIDCount) \
    X(nvEncGetEncodeProfileGUIDCount) \
    X(nvEncGetEncodeProfileGUIDs) \
    X(nvEncGetEncodeGUIDs) \
    X(nvEncGetInputFormatCount) \
    X(nvEncGetInputFormats) \
    X(nvEncGetEncodeCaps) \
    X(nvEncGetEncodePresetCount) \
    X(nvEncGetEncodePresetGUIDs) \
    X(nvEncGetEncodePresetConfig) \
    X(nvEncInitializeEncoder) \
    X(nvEncCreateInputBuffer) \
    X(nvEncDestroyInputBuffer) \
    X(nvEncCreateBitstreamBuffer) \
    X(nvEncDestroyBitstreamBuffer) \
    X(nvEncEncodePicture) \
    X(nvEncLockBitstream) \
    X(nvEncUnlockBitstream) \
    X(nvEncLockInputBuffer) \
    X(nvEncUnlockInputBuffer) \
    X(nvEncGetEncodeStats) \
    X(nvEncGetSequenceParams) \
    X(nvEncRegisterAsyncEvent) \
    X(nvEncUnregisterAsyncEvent) \
    X(nvEncMapInputResource) \
    X(nvEncUnmapInputResource) \
    X(nvEncDestroyEncoder) \
    X(nvEncInvalidateRefFrames) \
    X(nvEncOpenEncodeSessionEx) \
    X(nvEncRegisterResource) \
    X(nvEncUnregisterResource) \
    X(nvEncReconfigureEncoder) \
    X(nvEncCreateMVBuffer) \
    X(nvEncDestroyMVBuffer) \
    X(nvEncRunMotionEstimationOnly) \
    X(nvEncGetLastErrorString) \
    X(nvEncSetIOCudaStreams) \
    X(nvEncGetEncodePresetConfigEx) \
    X(nvEncGetSequenceParamEx)

/* The list's struct version (bits 16..27) and mark (bits 28..31) asys knows:
 * (bits 24..27 are the API's minor version) the slots above sit at the same place in every API
 * version that has them (the list grows at its end, into reserved2). */
#define ENCODE_LIST_STRUCT_VERSION 2u
#define ENCODE_LIST_MARK 7u

/* Wraps the slots of a list the real library filled; 0 when it did (not
 * static: the unit test hands it lists of other versions). */
__attribute__((visibility("hidden"))) int asys_video_wrap_list(NV_ENCODE_API_FUNCTION_LIST *list,
                                                               uint32_t version);
__attribute__((visibility("hidden"))) int asys_video_wrap_list(NV_ENCODE_API_FUNCTION_LIST *list,
                                                               uint32_t version)
{
    if ((version >> 28) != ENCODE_LIST_MARK ||
        ((version >> 16) & 0xffu) != ENCODE_LIST_STRUCT_VERSION) {
        uint32_t n = __atomic_add_fetch(&encode_unknown_versions, 1, __ATOMIC_RELAXED);
        if (n == 1)
            asys_debug("hgvideo: NVENC function list version 0x%x not known: not traced", version);
        write_status(ASYS_VIDEO_TABLE_UNKNOWN, version, 1);
        return -1;
    }
    /* a second list must hold the functions of the first (or the wrappers) */
#define SAME(field) \
    if (encode_real.field && list->field && list->field != encode_real.field && \
        list->field != wrap_##field) \
        changed = 1;
    int changed = 0;
    ENCODE_SLOTS(SAME)
#undef SAME
    if (changed) {
        write_status(ASYS_VIDEO_TABLE_CHANGED, version, 1);
        return -1;
    }
#define WRAP(field) \
    if (list->field && list->field != wrap_##field) { \
        if (!encode_real.field) \
            __atomic_store_n(&encode_real.field, list->field, __ATOMIC_RELEASE); \
        list->field = wrap_##field; \
    }
    ENCODE_SLOTS(WRAP)
#undef WRAP
    return 0;
}

ASYS_EXPORT NVENCSTATUS NVENCAPI NvEncodeAPIGetMaxSupportedVersion(uint32_t *version)
{
    VIDEO_TRACE(NvEncodeAPIGetMaxSupportedVersion, NVENCSTATUS, NV_ENC_ERR_NO_ENCODE_DEVICE, 0,
                NULL, 0, (version));
}

ASYS_EXPORT NVENCSTATUS NVENCAPI NvEncodeAPICreateInstance(NV_ENCODE_API_FUNCTION_LIST *list)
{
    NVENCSTATUS(*f)
    (NV_ENCODE_API_FUNCTION_LIST *) = (NVENCSTATUS(*)(NV_ENCODE_API_FUNCTION_LIST *))real_function(
        VIDEO_FN_NvEncodeAPICreateInstance);
    if (ASYS_UNLIKELY(!f))
        return NV_ENC_ERR_NO_ENCODE_DEVICE;
    uint32_t version = list ? list->version : 0;
    uint64_t start = 0;
    int traced = video_begin(&start);
    NVENCSTATUS rc = f(list);
    /* wrapped whenever the collector is on: a list lives on past a capture window */
    if (rc == NV_ENC_SUCCESS && list && __atomic_load_n(&video_on, __ATOMIC_RELAXED))
        asys_video_wrap_list(list, version);
    if (traced)
        video_record(VIDEO_FN_NvEncodeAPICreateInstance, start, rc, 0, NULL, 0);
    return rc;
}

/* The functions of libnvcuvid.so.1 this library defines. */
#define CUVID_FUNCTIONS(X) \
    X(0, 1, cuvidGetDecoderCaps) \
    X(0, 1, cuvidCreateDecoder) \
    X(0, 1, cuvidDestroyDecoder) \
    X(0, 1, cuvidDecodePicture) \
    X(0, 1, cuvidGetDecodeStatus) \
    X(0, 1, cuvidReconfigureDecoder) \
    X(0, 1, cuvidMapVideoFrame) \
    X(0, 1, cuvidUnmapVideoFrame) \
    X(0, 1, cuvidMapVideoFrame64) \
    X(0, 1, cuvidUnmapVideoFrame64) \
    X(0, 1, cuvidCtxLockCreate) \
    X(0, 1, cuvidCtxLockDestroy) \
    X(0, 1, cuvidCtxLock) \
    X(0, 1, cuvidCtxUnlock) \
    X(0, 1, cuvidCreateVideoSource) \
    X(0, 1, cuvidCreateVideoSourceW) \
    X(0, 1, cuvidDestroyVideoSource) \
    X(0, 1, cuvidSetVideoSourceState) \
    X(0, 1, cuvidGetVideoSourceState) \
    X(0, 1, cuvidGetSourceVideoFormat) \
    X(0, 1, cuvidGetSourceAudioFormat) \
    X(0, 1, cuvidCreateVideoParser) \
    X(0, 1, cuvidParseVideoData) \
    X(0, 1, cuvidDestroyVideoParser)

/* ---- dlsym ----------------------------------------------------------------------------------- */

/* The wrapper of a traced function name, or NULL: the names this library
 * defines (a linear search behind a prefix test: dlsym is not a hot path). */
static void *wrapper_of(const char *name, unsigned *id)
{
    if (!name || !((name[0] == 'c' && !strncmp(name, "cuvid", 5)) ||
                   (name[0] == 'n' && !strncmp(name, "nvjpeg", 6)) ||
                   (name[0] == 'N' && !strncmp(name, "NvEncodeAPI", 11))))
        return NULL;
    static const struct {
        unsigned id;
        void *wrapper;
    } table[] = {
#define ENTRY(id, api, name) {VIDEO_FN_##name, (void *)(uintptr_t)name},
#define JPEG_ENTRY(name, params, args, handle, stream) ENTRY(0, 3, name)
        CUVID_FUNCTIONS(ENTRY) ENTRY(0, 2, NvEncodeAPIGetMaxSupportedVersion)
            ENTRY(0, 2, NvEncodeAPICreateInstance) ASYS_NVJPEG_FUNCTIONS(JPEG_ENTRY)
#undef JPEG_ENTRY
#undef ENTRY
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(function_names[table[i].id], name)) {
            *id = table[i].id;
            return table[i].wrapper;
        }
    return NULL;
}

/* dlsym(handle != RTLD_NEXT): the real answer, and for a traced function the
 * wrapper instead (the real one kept for it).  RTLD_NEXT never gets here
 * (the stub below jumps to libc's dlsym, so that the caller it sees is the
 * program's). */
__attribute__((visibility("hidden"))) void *asys_video_dlsym(void *handle, const char *name);
__attribute__((visibility("hidden"))) void *asys_video_dlsym(void *handle, const char *name)
{
    void *(*sym)(void *, const char *);
    *(void **)&sym = resolve_dlsym();
    if (!sym)
        return NULL;
    void *f = sym(handle, name);
    unsigned id = 0;
    void *wrapper;
    if (!f || !(wrapper = wrapper_of(name, &id)))
        return f;
    if (f == wrapper) { /* RTLD_DEFAULT found this library: the real one is further on */
        f = real_function(id);
        return f ? wrapper : NULL;
    }
    void *expected = NULL;
    __atomic_compare_exchange_n(&real_functions[id], &expected, f, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_RELAXED);
    return __atomic_load_n(&video_on, __ATOMIC_RELAXED) ? wrapper : f;
}

/* (not in the unit tests' executables: their sanitizers resolve with dlsym
 * before any constructor runs) */
#if defined(__x86_64__) && !defined(ASYS_VIDEO_NO_DLSYM)
/* dlsym itself: RTLD_NEXT (and the first calls, before libc's dlsym is
 * known) go straight to libc's with the caller's return address in place
 * (glibc finds "next" from it); every other handle to asys_video_dlsym. */
__attribute__((visibility("hidden"))) void *asys_video_dlsym_resolve(void);
__attribute__((visibility("hidden"))) void *asys_video_dlsym_resolve(void)
{
    return resolve_dlsym();
}
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    .cfi_startproc\n"
        "    cmpq $-1, %rdi\n"
        "    jne 1f\n"
        "    movq real_dlsym(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jz 2f\n"
        "    jmp *%rax\n"
        "1:  jmp asys_video_dlsym\n"
        "2:  pushq %rdi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    pushq %rsi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    subq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    call asys_video_dlsym_resolve\n"
        "    addq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rsi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rdi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    testq %rax, %rax\n"
        "    jz 3f\n"
        "    jmp *%rax\n"
        "3:  ret\n"
        "    .cfi_endproc\n"
        ".size dlsym, .-dlsym\n");
#endif

/* ---- start-up -------------------------------------------------------------------------------- */

int asys_video_init(void)
{
    resolve_dlsym();
    asys_callstack_own_object((const void *)(uintptr_t)asys_video_init);
    __atomic_store_n(&video_on, 1, __ATOMIC_RELEASE);
    return 0;
}
