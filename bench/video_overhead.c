/* The cost of a traced video API call (bench/video.py): a loop of cheap
 * NVDEC calls (cuvidGetDecodeStatus on simppu's libnvcuvid.so.1) and, for
 * a program that uses no video, a loop of dlsym calls (what libasys-video.so
 * interposes besides the video libraries).  Prints the wall ns per call.
 *   video_overhead calls N | dlsym N */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ffnvcodec/dynlink_cuda.h>
#include <ffnvcodec/dynlink_cuviddec.h>

extern tcuvidCreateDecoder cuvidCreateDecoder;
extern tcuvidDestroyDecoder cuvidDestroyDecoder;
extern tcuvidGetDecodeStatus cuvidGetDecodeStatus;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = atol(argv[2]);
    double start, end;
    if (!strcmp(argv[1], "calls")) {
        CUVIDDECODECREATEINFO info = {.ulWidth = 64,
                                      .ulHeight = 64,
                                      .ulNumDecodeSurfaces = 4,
                                      .CodecType = cudaVideoCodec_H264};
        CUvideodecoder decoder;
        if (cuvidCreateDecoder(&decoder, &info) != CUDA_SUCCESS)
            return 1;
        CUVIDGETDECODESTATUS status;
        start = now_ns();
        for (long i = 0; i < n; i++)
            cuvidGetDecodeStatus(decoder, 0, &status);
        end = now_ns();
        cuvidDestroyDecoder(decoder);
    } else {
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        volatile void *sink;
        start = now_ns();
        for (long i = 0; i < n; i++)
            sink = dlsym(libc, "getpid");
        end = now_ns();
        (void)sink;
    }
    printf("ns_per_call %.2f\n", (end - start) / n);
    return 0;
}
