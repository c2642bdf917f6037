#define _GNU_SOURCE
#include "session.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arena_read.h"

/* The arena opened without close-on-exec at a high descriptor number, out
 * of the way of the numbers programs pick, for every process of the session
 * to inherit; best effort (processes open it by path otherwise).  It is
 * append-only: a program that writes to that number by mistake adds bytes
 * after the records instead of overwriting the control block. */
static void inherit_arena(struct asys_session *s, const char *path)
{
    struct rlimit limit;
    int low = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur > 64 &&
                      limit.rlim_cur != RLIM_INFINITY
                  ? (int)(limit.rlim_cur - 7 < 1017 ? limit.rlim_cur - 7 : 1017)
                  : 57;
    int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    int high = fd >= 0 ? fcntl(fd, F_DUPFD, low) : -1; /* F_DUPFD: no close-on-exec */
    if (fd >= 0)
        close(fd);
    struct stat st;
    if (high >= 0 && fstat(high, &st) == 0) {
        s->arena_fd = high;
        snprintf(s->arena_fd_env, sizeof s->arena_fd_env, "%d:%llu:%llu", high,
                 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
    } else if (high >= 0) {
        close(high);
    }
}

void asys_session_release_arena_fd(struct asys_session *s)
{
    if (s->arena_fd >= 0)
        close(s->arena_fd);
    s->arena_fd = -1;
}

/* The session's calibration pairs: what puts its records on CLOCK_REALTIME,
 * the axis several hosts' reports share (a test may shift it). */
static void session_pair_take(const struct asys_session *s, struct asys_clock_pair *pair)
{
    asys_clock_pair_take(s->clock_kind, pair);
    pair->realtime_ns += (uint64_t)asys_clock_test_realtime_shift();
}

int asys_session_create(struct asys_session *s, uint64_t slot_size, struct asys_err *err)
{
    memset(s, 0, sizeof *s);
    s->arena_fd = -1;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if (strlen(tmp) + 64 > sizeof s->dir)
        return asys_fail(err, "TMPDIR path is too long");
    snprintf(s->dir, sizeof s->dir, "%s/asys-XXXXXX", tmp);
    if (!mkdtemp(s->dir))
        return asys_fail(err, "cannot create a session directory in '%s': %s", tmp,
                         strerror(errno));
    /* absolute: the program may change its working directory */
    char absolute[PATH_MAX];
    if (!realpath(s->dir, absolute) || strlen(absolute) + 64 > sizeof s->dir) {
        asys_fail(err, "cannot resolve '%s': %s", s->dir, strerror(errno));
        goto fail;
    }
    strcpy(s->dir, absolute);
    memcpy(s->segment_dir, s->dir, sizeof s->dir - 16);
    strcat(s->segment_dir, "/segments");
    if (mkdir(s->segment_dir, 0700) != 0) {
        asys_fail(err, "cannot create '%s': %s", s->segment_dir, strerror(errno));
        goto fail;
    }
    s->clock_kind = asys_clock_detect();
    session_pair_take(s, &s->start);

    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", s->segment_dir, ASYS_ARENA_NAME);
    int made = asys_arena_create(path, slot_size);
    if (made) {
        asys_fail(err, "cannot create '%s': %s", path, strerror(-made));
        goto fail;
    }
    inherit_arena(s, path);
    struct asys_err no_pairs = {0}; /* the processes then take their own */
    s->control = asys_session_control_map(s->dir, &no_pairs);
    snprintf(path, sizeof path, "%s/%s", s->segment_dir, ASYS_LAUNCHER_SEGMENT);
    struct asys_segment_header h;
    memset(&h, 0, sizeof h);
    h.collector = ASYS_SEGMENT_LAUNCHER;
    h.feature_mask = ASYS_FEATURE_CORE;
    h.pid = (uint32_t)getpid();
    h.tid = h.pid;
    h.ppid = (uint32_t)getppid();
    h.thread_index = ASYS_LAUNCHER_SESSION;
    h.clock_kind = (uint32_t)s->clock_kind;
    h.base_ticks = s->start.ticks;
    h.calib_ticks = s->start.ticks;
    h.calib_mono_ns = s->start.monotonic_ns;
    int rc = asys_segment_open(&s->launcher, path, &h, ASYS_MIN_CHUNK_SIZE, 1ull << 30);
    if (rc) {
        asys_fail(err, "cannot create '%s': %s", path, strerror(-rc));
        goto fail;
    }
    s->launcher_open = 1;
    asys_session_clock_pair(s);
    return 0;
fail:
    asys_session_release_arena_fd(s);
    asys_session_control_unmap(s->control);
    s->control = NULL;
    asys_session_remove_dir(s->dir);
    return -1;
}

uint64_t asys_session_tick_hz(const struct asys_session *s)
{
    if (s->clock_kind == ASYS_CLOCK_MONOTONIC)
        return 1000000000u;
    struct asys_clock_pair now;
    asys_clock_pair_take(s->clock_kind, &now);
    while (now.monotonic_ns - s->start.monotonic_ns < 2000000) {
        struct timespec pause = {0, 200000};
        nanosleep(&pause, NULL);
        asys_clock_pair_take(s->clock_kind, &now);
    }
    return (uint64_t)((double)(now.ticks - s->start.ticks) * 1e9 /
                      (double)(now.monotonic_ns - s->start.monotonic_ns));
}

void asys_session_clock_pair(struct asys_session *s)
{
    if (!s->launcher_open)
        return;
    struct asys_clock_pair pair;
    session_pair_take(s, &pair);
    if (s->control)
        asys_arena_publish_pair(s->control, pair.ticks, pair.monotonic_ns);
    uint32_t delta;
    struct asys_rec_clock_pair *r =
        asys_segment_reserve(&s->launcher, sizeof *r, pair.ticks, &delta);
    if (!r)
        return;
    r->ticks = pair.ticks;
    r->monotonic_ns = pair.monotonic_ns;
    r->realtime_ns = pair.realtime_ns;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_CLOCK_PAIR, sizeof *r / 8, 0, delta));
}

void asys_session_close_launcher(struct asys_session *s)
{
    asys_session_release_arena_fd(s);
    if (!s->launcher_open)
        return;
    asys_session_clock_pair(s);
    asys_segment_close(&s->launcher);
    s->launcher_open = 0;
    asys_session_control_unmap(s->control);
    s->control = NULL;
}

int asys_session_sampler_segment(struct asys_segment_writer *w, const char *session_dir,
                                 const char *name, uint32_t index, uint64_t features,
                                 struct asys_err *err)
{
    char path[PATH_MAX + 64];
    struct asys_segment_header h;
    memset(&h, 0, sizeof h);
    h.collector = ASYS_SEGMENT_LAUNCHER;
    h.feature_mask = ASYS_FEATURE_CORE | features;
    h.pid = h.tid = (uint32_t)getpid();
    h.ppid = (uint32_t)getppid();
    h.thread_index = index;
    h.clock_kind = ASYS_CLOCK_MONOTONIC;
    uint64_t now = asys_clock_ticks(ASYS_CLOCK_MONOTONIC);
    h.base_ticks = h.calib_ticks = h.calib_mono_ns = now;
    snprintf(path, sizeof path, "%s/segments/%s%s", session_dir, name, ASYS_SEGMENT_SUFFIX);
    int rc = asys_segment_open(w, path, &h, ASYS_MIN_CHUNK_SIZE, 1ull << 30);
    return rc ? asys_fail_errno(err, -rc, "cannot create '%s'", path) : 0;
}

void asys_session_advance(struct timespec *t, uint64_t ns)
{
    uint64_t total = (uint64_t)t->tv_nsec + ns;
    t->tv_sec += (time_t)(total / 1000000000u);
    t->tv_nsec = (long)(total % 1000000000u);
}

void asys_session_cond_init(pthread_cond_t *c)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(c, &attr);
    pthread_condattr_destroy(&attr);
}

void asys_session_wait_period(struct timespec *next, uint64_t period_ns)
{
    asys_session_advance(next, period_ns);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) == EINTR)
        ;
}

struct asys_arena_control *asys_session_control_map(const char *session_dir, struct asys_err *err)
{
    char path[PATH_MAX + 32];
    if (asys_arena_path(session_dir, path, sizeof path) != 0) {
        asys_fail(err, "session directory name too long");
        return NULL;
    }
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        asys_fail_errno(err, errno, "cannot open '%s'", path);
        return NULL;
    }
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (uint64_t)st.st_size >= sizeof(struct asys_arena_control))
        m = mmap(NULL, sizeof(struct asys_arena_control), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                 0);
    close(fd);
    if (m == MAP_FAILED) {
        asys_fail(err, "cannot map '%s'", path);
        return NULL;
    }
    if (memcmp(((struct asys_arena_control *)m)->magic, ASYS_ARENA_MAGIC, 8) != 0) {
        munmap(m, sizeof(struct asys_arena_control));
        asys_fail(err, "'%s' is not an asys arena", path);
        return NULL;
    }
    return m;
}

void asys_session_control_unmap(struct asys_arena_control *c)
{
    if (c)
        munmap(c, sizeof *c);
}

int asys_session_set_recording(const char *session_dir, int on, uint32_t window, uint32_t options,
                               struct asys_err *err)
{
    struct asys_arena_control *c = asys_session_control_map(session_dir, err);
    if (!c)
        return -1;
    /* the number and options first: a process that sees recording sees its window */
    if (on) {
        __atomic_store_n(&c->window_options, options, __ATOMIC_RELEASE);
        __atomic_store_n(&c->session_window, window, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&c->session_recording, on ? 1u : 0u, __ATOMIC_RELEASE);
    asys_session_control_unmap(c);
    return 0;
}

int asys_session_wait_samplers(const char *session_dir, uint32_t window, int timeout_ms)
{
    struct asys_err ignored = {0};
    struct asys_arena_control *c = asys_session_control_map(session_dir, &ignored);
    int rc = -1;
    for (int ms = 0; c && ms <= timeout_ms; ms += 5) {
        if (__atomic_load_n(&c->samplers_window, __ATOMIC_ACQUIRE) == window) {
            rc = 0;
            break;
        }
        struct timespec pause = {0, 5000000};
        nanosleep(&pause, NULL);
    }
    asys_session_control_unmap(c);
    return rc;
}

/* The segments of the launcher's samplers: every SESSION/segments/NAME.seg
 * but the launcher's own and the program's threads' (pPID-tTID-...). */
static int sampler_segment_name(const char *name)
{
    size_t len = strlen(name), suffix = strlen(ASYS_SEGMENT_SUFFIX);
    return len > suffix && !strcmp(name + len - suffix, ASYS_SEGMENT_SUFFIX) &&
           strcmp(name, ASYS_LAUNCHER_SEGMENT) != 0 &&
           !(name[0] == 'p' && name[1] >= '0' && name[1] <= '9');
}

void asys_session_remove_sampler_segments(const char *session_dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/segments", session_dir);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (sampler_segment_name(e->d_name))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

/* Removes `name` and its contents; 0 when it is gone. */
static int remove_tree(int dirfd_parent, const char *name)
{
    int fd = openat(dirfd_parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        DIR *d = fdopendir(fd);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno == EISDIR)
                    remove_tree(dirfd(d), e->d_name);
            }
            closedir(d);
        } else {
            close(fd);
        }
    }
    return unlinkat(dirfd_parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : -1;
}

/* Freeing a file's blocks is done by the last close of its unlinked inode,
 * and on a file system mounted with `discard` (ext4 -o discard) it waits for
 * the device to discard each extent: the arena, an extent per traced thread,
 * took 50-110 ms for 500 processes.  A child holds the arena open while the
 * directory is removed here; it lets go once this process has unlinked it
 * (or died), so the blocks are freed after the report is out, and by the
 * kernel even if that child is killed.  `*release` is the descriptor whose
 * close lets it go (-1 when no child holds the arena). */
#define HOLD_FROM_SLOTS 16 /* arenas of fewer slots (extents) are freed at once */

static void hold_arena(const char *dir, int *release)
{
    char path[PATH_MAX + 32];
    int fd = asys_arena_path(dir, path, sizeof path) == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct asys_arena_control c;
    int go[2] = {-1, -1};
    pid_t pid = -1;
    if (fd < 0 || pread(fd, &c, sizeof c, 0) != (ssize_t)sizeof c ||
        memcmp(c.magic, ASYS_ARENA_MAGIC, sizeof c.magic) != 0 ||
        c.next_slot < HOLD_FROM_SLOTS + 1 || pipe2(go, O_CLOEXEC) != 0)
        goto out;
    pid = fork();
    if (pid == 0) {
        /* the arena as 0, the pipe as 1, nothing else: whoever reads asys's
         * output sees its end when asys exits */
        if (dup2(fd, 0) < 0 || dup2(go[0], 1) < 0)
            _exit(0);
#ifdef SYS_close_range
        if (syscall(SYS_close_range, 2u, ~0u, 0u) != 0)
#endif
            for (int i = 2; i < 1024; i++)
                close(i);
        char byte;
        while (read(1, &byte, 1) < 0 && errno == EINTR)
            ;
        _exit(0); /* closes the arena: its blocks are freed now */
    }
out:
    if (fd >= 0)
        close(fd);
    if (go[0] >= 0)
        close(go[0]);
    if (pid > 0)
        *release = go[1];
    else if (go[1] >= 0)
        close(go[1]);
}

void asys_session_remove_dir(const char *dir)
{
    if (!dir || !*dir)
        return;
    int release = -1;
    hold_arena(dir, &release);
    /* Processes not waited for (--wait primary) may still add a segment
     * while the directory is emptied: try again. */
    for (int attempt = 0; attempt < 10; attempt++)
        if (remove_tree(AT_FDCWD, dir) == 0 || errno != ENOTEMPTY)
            break;
    if (release >= 0)
        close(release); /* the holder exits; not waited for (init reaps it) */
}
