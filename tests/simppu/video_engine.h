/* simppu's video engines (libnvcuvid.so.1, libnvidia-encode.so.1): one
 * decode and one encode engine per device, each running one operation at a
 * time.  An operation submitted at `now` starts when its engine is free and
 * lasts a time that grows with its size; what waits for it (a map, a lock)
 * sleeps until then.  The figures are the tests' (tests/e2e/test_video.py):
 *   decode: SIMPPU_DECODE_BASE_NS + bitstream bytes * SIMPPU_DECODE_NS_PER_BYTE
 *   encode: SIMPPU_ENCODE_BASE_NS + width * height / SIMPPU_ENCODE_PIXELS_PER_NS
 * A test fixture: never linked into asys. */
#ifndef SIMPPU_VIDEO_ENGINE_H
#define SIMPPU_VIDEO_ENGINE_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define SIMPPU_DECODE_BASE_NS 200000u
#define SIMPPU_DECODE_NS_PER_BYTE 20u
#define SIMPPU_ENCODE_BASE_NS 300000u
#define SIMPPU_ENCODE_PIXELS_PER_NS 1u
#define SIMPPU_VIDEO_DEVICES 16

struct simppu_engine {
    pthread_mutex_t lock;
    uint64_t free_at; /* CLOCK_MONOTONIC ns when its last operation ends */
};

static inline uint64_t simppu_video_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Queues an operation of `duration` ns; returns when it will be done. */
static inline uint64_t simppu_engine_submit(struct simppu_engine *e, uint64_t duration)
{
    pthread_mutex_lock(&e->lock);
    uint64_t now = simppu_video_now();
    uint64_t start = e->free_at > now ? e->free_at : now;
    e->free_at = start + duration;
    uint64_t done = e->free_at;
    pthread_mutex_unlock(&e->lock);
    return done;
}

/* Sleeps until CLOCK_MONOTONIC reaches `when`. */
static inline void simppu_video_wait(uint64_t when)
{
    struct timespec ts = {(time_t)(when / 1000000000u), (long)(when % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

#endif
