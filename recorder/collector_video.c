/* The video collector (-t hgvideo): NVDEC, NVENC and nvJPEG calls and the
 * decode and encode engines' work, recorded by the wrappers in
 * inject/video.c (libasys-video.so, preloaded only when the collector is
 * chosen: it defines the libraries' entry points and dlsym). */
#include "asys_format.h"
#include "collector.h"
#include "install_paths.h"

static int video_prepare(const struct asys_collector_setup *s, struct asys_env *env,
                         struct asys_err *err)
{
    return asys_collector_preload(s, ASYS_VIDEO_LIBRARY_NAME, env, err);
}

const struct asys_collector asys_collector_hgvideo = {
    .name = "hgvideo",
    .alias = "nvvideo",
    .feature = ASYS_FEATURE_HGVIDEO,
    .built = 1,
    .traced = 1,
    .summary = "video decode, encode and JPEG calls (NVDEC, NVENC, nvJPEG) and engine work",
    .prepare = video_prepare,
};
