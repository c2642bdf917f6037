/* Host memory sampling (--host-memory-sampling): a launcher thread reads the
 * resident set size and its high-water mark of every process of the traced
 * tree from /proc/PID/status, --host-memory-sampling-frequency times a
 * second, into a segment of its own.  Nothing runs inside the target.
 *
 * The tree is the program and its descendants: /proc is scanned for new
 * children every RESCAN samples (this kernel may lack /proc/PID/children),
 * so a process shorter than that period can be missed. */
#include "host_memory.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "session.h"

#define MAX_TREE 4096
#define RESCAN 5

struct host_memory {
    struct asys_segment_writer seg;
    pthread_t thread;
    int stop; /* atomic */
    uint64_t period_ns;
    pid_t pids[MAX_TREE]; /* the tree as last seen */
    size_t count;
};

static int in_tree(const struct host_memory *h, pid_t pid)
{
    for (size_t i = 0; i < h->count; i++)
        if (h->pids[i] == pid)
            return 1;
    return 0;
}

/* The parent of `pid` from /proc/PID/stat (after the command's last ')'). */
static pid_t parent_of(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *close = strrchr(text, ')');
    int ppid;
    char state;
    return close && sscanf(close + 1, " %c %d", &state, &ppid) == 2 ? (pid_t)ppid : -1;
}

/* Adds the descendants of the known processes (until nothing new). */
static void rescan(struct host_memory *h)
{
    for (int round = 0; round < 8; round++) {
        DIR *d = opendir("/proc");
        if (!d)
            return;
        size_t before = h->count;
        struct dirent *e;
        while ((e = readdir(d)) != NULL && h->count < MAX_TREE) {
            if (!isdigit((unsigned char)e->d_name[0]))
                continue;
            pid_t pid = (pid_t)atoi(e->d_name);
            if (!in_tree(h, pid) && in_tree(h, parent_of(pid)))
                h->pids[h->count++] = pid;
        }
        closedir(d);
        if (h->count == before)
            return;
    }
}

/* VmRSS and VmHWM of `pid` in bytes; 0 when it is gone. */
static int read_status(pid_t pid, uint64_t *rss, uint64_t *hwm)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    unsigned long long kib;
    int found = 0;
    while (fgets(line, sizeof line, f) && found < 2) {
        if (sscanf(line, "VmRSS: %llu kB", &kib) == 1) {
            *rss = kib * 1024;
            found++;
        } else if (sscanf(line, "VmHWM: %llu kB", &kib) == 1) {
            *hwm = kib * 1024;
            found++;
        }
    }
    fclose(f);
    return found == 2; /* a zombie has neither */
}

static void sample(struct host_memory *h)
{
    size_t kept = 0;
    for (size_t i = 0; i < h->count; i++) {
        uint64_t rss = 0, hwm = 0;
        if (!read_status(h->pids[i], &rss, &hwm))
            continue; /* exited: forget it (a pid reused later is not ours unless a child) */
        h->pids[kept++] = h->pids[i];
        uint64_t now = asys_clock_ticks(ASYS_CLOCK_MONOTONIC);
        uint32_t delta;
        struct asys_rec_host_memory *r = asys_segment_reserve(&h->seg, sizeof *r, now, &delta);
        if (!r)
            continue; /* counted as a drop by the writer */
        r->pid = (uint32_t)h->pids[i];
        r->reserved = 0;
        r->rss_bytes = rss;
        r->hwm_bytes = hwm;
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_HOST_MEMORY, sizeof *r / 8, 0, delta));
    }
    h->count = kept;
}

static void *sampler(void *arg)
{
    struct host_memory *h = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (unsigned tick = 0; !__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE); tick++) {
        if (tick % RESCAN == 0)
            rescan(h);
        sample(h);
        asys_session_wait_period(&next, h->period_ns);
    }
    sample(h); /* the last one, as the program ends */
    return NULL;
}

int asys_host_memory_start(const char *session_dir, pid_t target, uint64_t frequency_hz,
                           struct host_memory **out, struct asys_err *err)
{
    struct host_memory *h = calloc(1, sizeof *h);
    int rc = -1;
    *out = NULL;
    if (!h) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    h->period_ns = 1000000000u / (frequency_hz ? frequency_hz : 1);
    h->pids[h->count++] = target;
    if (asys_session_sampler_segment(&h->seg, session_dir, "hostmem", ASYS_LAUNCHER_HOST_MEMORY,
                                     ASYS_FEATURE_MEMORY, err) != 0)
        goto out;
    if ((errno = pthread_create(&h->thread, NULL, sampler, h)) != 0) {
        asys_fail_errno(err, errno, "cannot start the host memory sampler");
        asys_segment_close(&h->seg);
        goto out;
    }
    *out = h;
    h = NULL;
    rc = 0;
out:
    free(h);
    return rc;
}

void asys_host_memory_stop(struct host_memory *h)
{
    if (!h)
        return;
    __atomic_store_n(&h->stop, 1, __ATOMIC_RELEASE);
    pthread_join(h->thread, NULL);
    asys_segment_close(&h->seg);
    free(h);
}
