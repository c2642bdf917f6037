/* libasys-inject.so runtime: session setup, thread registration, fork and
 * exit handling.  Nothing here may exit, print (outside ASYS_DEBUG) or crash
 * the host: every failure turns recording off for what it affects. */
#define _GNU_SOURCE
#include "inject.h"
#include "parse_util.h"
#include "rank_env.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

ASYS_START_DATA struct asys_process asys_proc = {.registry_lock = PTHREAD_MUTEX_INITIALIZER};
__thread struct asys_thread *asys_tls_thread ASYS_TLS;
__thread int asys_tls_busy ASYS_TLS;
__thread uint32_t asys_tls_no_segment ASYS_TLS;

/* A thread without a segment tries again after this many events. */
#define SEGMENT_RETRY_EVENTS 1024u

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

char *asys_append_str(char *dst, char *end, const char *s)
{
    while (*s && dst < end - 1)
        *dst++ = *s++;
    *dst = '\0';
    return dst;
}

char *asys_append_u64(char *dst, char *end, uint64_t v, int base)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v % (unsigned)base];
        v /= (unsigned)base;
    } while (v);
    while (n && dst < end - 1)
        *dst++ = digits[--n];
    *dst = '\0';
    return dst;
}

void asys_debug_print(const char *fmt, ...)
{
    int saved_errno = errno;
    char buf[512];
    int len = snprintf(buf, sizeof buf, "asys-inject[%d]: ", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    len += vsnprintf(buf + len, sizeof buf - (size_t)len, fmt, ap);
    va_end(ap);
    if (len > (int)sizeof buf - 2)
        len = (int)sizeof buf - 2;
    buf[len++] = '\n';
    ssize_t ignored = write(2, buf, (size_t)len);
    (void)ignored;
    errno = saved_errno;
}

static uint64_t new_process_uid(void)
{
    uint64_t uid = 0;
    if (getrandom(&uid, sizeof uid, GRND_NONBLOCK) != (ssize_t)sizeof uid)
        uid = asys_cpu_counter() ^ ((uint64_t)getpid() << 32) ^ asys_monotonic_ns();
    return asys_image_uid(uid);
}

uint64_t asys_env_u64(const char *name, uint64_t fallback)
{
    const char *v = getenv(name);
    uint64_t n;
    return v && asys_decimal_u64(&v, '\0', &n) == 0 ? n : fallback;
}

int asys_option_u64(const char *name, uint64_t *out)
{
    const char *v = getenv(name);
    const char *digits = v;
    if (digits && asys_decimal_u64(&digits, '\0', out) == 0)
        return 0;
    asys_debug("option %s is %s; its collector stays off", name, v ? "not a number" : "missing");
    return -1;
}

const char *asys_option_text(const char *name)
{
    const char *v = getenv(name);
    if (!v)
        asys_debug("option %s is missing; its collector stays off", name);
    return v;
}

/* --multi-node-mode true: this process's rank variables, for finalize to
 * give each rank a launcher started its own report (SESSION/ranks/PID; the
 * new image of an exec writes it again).  Best effort: without the file the
 * process counts as the launcher's. */
static void keep_rank_environment(const char *session)
{
    static const char *const names[] = {ASYS_RANK_VARIABLES};
    const char *mode = getenv("ASYS_MULTI_NODE_MODE");
    if (!mode || strcmp(mode, "true"))
        return;
    char text[1024], *end = text + sizeof text, *p = text;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (!v || strlen(v) > 32)
            continue;
        p = asys_append_str(p, end, names[i]);
        p = asys_append_str(p, end, "=");
        p = asys_append_str(p, end, v);
        p = asys_append_str(p, end, "\n");
    }
    if (p == text)
        return;
    char path[PATH_MAX], *path_end = path + sizeof path;
    char *q = asys_append_str(path, path_end, session);
    q = asys_append_str(q, path_end, "/" ASYS_RANK_DIR);
    if (q >= path_end - 32)
        return;
    mkdir(path, 0700); /* the first process makes it */
    q = asys_append_str(q, path_end, "/");
    asys_append_u64(q, path_end, (uint64_t)getpid(), 10);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    if (write(fd, text, (size_t)(p - text)) != (ssize_t)(p - text))
        asys_debug("cannot keep the rank environment in %s", path);
    close(fd);
}

/* Whether `name` is the n bytes at p. */
static int is_name(const char *name, const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && name[i] == p[i])
        i++;
    return i == n && name[i] == '\0';
}

/* ASYS_COLLECTORS ("hgtx,osrt") -> the registry's entries; each starts.
 * The list is cut by hand: strcspn's code is one more page of libc that
 * every process would fault in. */
static void start_collectors(const char *list)
{
    asys_proc.segment_features = ASYS_FEATURE_CORE;
    for (const char *p = list ? list : ""; *p;) {
        size_t n = 0;
        while (p[n] && p[n] != ',')
            n++;
        for (const struct asys_inject_collector *c = asys_inject_collectors; c->name; c++) {
            if (!is_name(c->name, p, n))
                continue;
            if (!c->init) { /* in a library of its own that the launcher did not preload */
                asys_debug("collector %s: its library is not loaded; it stays off", c->name);
                continue;
            }
            asys_proc.features |= c->feature; /* before init: it may check its own bit */
            if (c->init() != 0) {
                asys_proc.features &= ~c->feature;
                continue;
            }
            asys_proc.segment_features |= c->records;
        }
        p += n + (p[n] == ',');
    }
}

/* Clock ticks per ns, for thresholds given in ns: the launcher measures the
 * rate before starting the program (ASYS_TICK_HZ); without it, measure 2 ms. */
static double ticks_per_ns(int clock_kind)
{
    if (clock_kind == ASYS_CLOCK_MONOTONIC)
        return 1.0;
    uint64_t hz = asys_env_u64("ASYS_TICK_HZ", 0);
    if (hz)
        return (double)hz / 1e9;
    struct asys_clock_pair a, b;
    asys_clock_pair_take(clock_kind, &a);
    do
        asys_clock_pair_take(clock_kind, &b);
    while (b.monotonic_ns - a.monotonic_ns < 2000000);
    return (double)(b.ticks - a.ticks) / (double)(b.monotonic_ns - a.monotonic_ns);
}

/* The session's arena, when the launcher made one (segments are files
 * otherwise: sessions of older launchers, tests). */
static void attach_arena(void)
{
    char path[sizeof asys_proc.segment_dir + 16];
    char *end = path + sizeof path;
    asys_append_str(asys_append_str(path, end, asys_proc.segment_dir), end, ASYS_ARENA_NAME);
    int rc = asys_arena_attach(&asys_proc.arena, path);
    if (rc && rc != -ENOENT)
        asys_debug("cannot use the arena '%s': %s; a file per segment", path, strerror(-rc));
    /* ASYS_NO_PAGE_HELPER: the writers fault their slots in themselves (a
     * benchmark's comparison) */
    if (!rc && !asys_env_u64("ASYS_NO_PAGE_HELPER", 0))
        asys_proc.arena.helper = &asys_page_helper;
}

/* The heap collector's per-thread sums, when its library is loaded. */
static void heap_flush(struct asys_thread *t, int final)
{
    if (asys_heap_thread_flush)
        asys_heap_thread_flush(t, final);
}

static void heap_forget(struct asys_thread *t)
{
    if (asys_heap_thread_forget)
        asys_heap_thread_forget(t);
}

static void thread_key_destructor(void *arg);
static void before_fork(void);
static void after_fork_parent(void);
static void after_fork_child(void);

#if defined(__GLIBC__)
/* What glibc's atexit is: a stub linked in from libc_nonshared.a, which the
 * linker puts at the end of the text, one more page of code faulted in by
 * every process's start for one call (pthread_atfork's too: asys_at_fork). */
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso_handle);

static void call_exit_function(void *fn)
{
    void (*call)(void);
    *(void **)&call = fn;
    call();
}

int asys_at_exit(void (*fn)(void))
{
    void *arg;
    *(void (**)(void))&arg = fn;
    return __cxa_atexit(call_exit_function, arg, __dso_handle);
}
#else
int asys_at_exit(void (*fn)(void))
{
    return atexit(fn);
}
#endif

static void init_process(void)
{
    int saved_errno = errno;
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1; /* calls made while setting up are asys's own, never traced */
    asys_proc.debug = getenv("ASYS_DEBUG") != NULL;
    const char *session = getenv("ASYS_SESSION_DIR");
    if (!session || !*session)
        goto out;
    char *end = asys_proc.segment_dir + sizeof asys_proc.segment_dir;
    char *p = asys_append_str(asys_proc.segment_dir, end, session);
    p = asys_append_str(p, end, "/" ASYS_SEGMENT_DIR);
    if (p >= end - 1) {
        asys_debug("session directory '%s' is too long; recording off", session);
        goto out;
    }
    const char *fork_traced = getenv("ASYS_TRACE_FORK_BEFORE_EXEC");
    asys_proc.fork_untraced = fork_traced && !strcmp(fork_traced, "false");
    asys_proc.clock_kind = asys_clock_from_name(getenv("ASYS_CLOCK"));
    if (!asys_proc.clock_kind)
        asys_proc.clock_kind = asys_clock_detect();
    asys_proc.ticks_per_ns = ticks_per_ns(asys_proc.clock_kind);
    const char *unwind = getenv("ASYS_UNWIND");
    asys_proc.unwind_method = unwind && !strcmp(unwind, "fp") ? ASYS_UNWIND_FP : ASYS_UNWIND_DWARF;
    if (asys_option_u64("ASYS_CHUNK_SIZE", &asys_proc.chunk_size) != 0 ||
        asys_option_u64("ASYS_MAX_SEGMENT_SIZE", &asys_proc.max_segment_size) != 0)
        goto out;
    attach_arena();
    /* the arena opened for writing says the directory is there; segments of
     * their own need it writable */
    if (!asys_proc.arena.control && access(asys_proc.segment_dir, W_OK) != 0) {
        asys_debug("session directory '%s' is not writable; recording off", asys_proc.segment_dir);
        goto out;
    }
    asys_proc.pid = (uint32_t)getpid();
    asys_proc.ppid = (uint32_t)getppid();
    asys_proc.process_uid = new_process_uid();
    asys_proc.origin = ASYS_PROCESS_LAUNCHED;
    if (pthread_key_create(&asys_proc.thread_key, thread_key_destructor) != 0)
        goto out;
    asys_at_fork(before_fork, after_fork_parent, after_fork_child);
    asys_callstack_init();
    asys_capture_init();
    asys_proc.enabled = 1;
    keep_rank_environment(session);
    start_collectors(getenv("ASYS_COLLECTORS"));
    asys_debug("recording into %s (collectors 0x%llx, clock %s)", asys_proc.segment_dir,
               (unsigned long long)asys_proc.features, asys_clock_name(asys_proc.clock_kind));
out:
    asys_tls_busy = was_busy;
    errno = saved_errno;
}

void asys_inject_init(void)
{
    pthread_once(&init_once, init_process);
}

/* Reads a small /proc/self file into buf (NUL-terminated); returns length. */
static size_t read_proc_file(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t len = 0;
    while (len < size - 1) {
        ssize_t n = read(fd, buf + len, size - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    return len;
}

/* The arguments the loader passed to the library's constructor: until the
 * program runs they are what /proc/self/cmdline reads (NULL afterwards). */
static char **start_argv;
/* Where the kernel put the argument strings, one after the other: what
 * /proc/self/cmdline reads later (a program may rewrite them in place, as
 * setproctitle does); NULL when they were not laid out so. */
static const char *args_start, *args_end;

static void note_argument_area(int argc, char **argv)
{
    const char *end = argc > 0 ? argv[0] : NULL;
    for (int i = 0; end && i < argc; i++)
        end = argv[i] == end ? end + strlen(end) + 1 : NULL;
    args_start = end ? argv[0] : NULL;
    args_end = end;
}

/* The argument area's bytes as /proc/self/cmdline gives them, for a fork
 * child: reading the file there costs 13 us (procfs makes the new pid's
 * directory).  0 where the kernel would read on past the area (a title
 * longer than the arguments: its last byte is no longer a NUL). */
static size_t copy_argument_area(char *buf, size_t size)
{
    if (!args_start || args_end[-1] != '\0')
        return 0;
    size_t len = (size_t)(args_end - args_start);
    if (len > size - 1)
        len = size - 1;
    memcpy(buf, args_start, len);
    buf[len] = '\0';
    return len;
}

/* The command line as /proc/self/cmdline has it (arguments NUL-terminated,
 * cut to fit): from the constructor's arguments or their area, without
 * opening it where it can. */
static size_t read_cmdline(char *buf, size_t size)
{
    if (!start_argv) {
        size_t len = copy_argument_area(buf, size);
        return len ? len : read_proc_file("/proc/self/cmdline", buf, size);
    }
    size_t len = 0;
    for (char **a = start_argv; *a && len < size - 1; a++) {
        size_t n = strlen(*a) + 1;
        if (n > size - 1 - len)
            n = size - 1 - len;
        memcpy(buf + len, *a, n);
        len += n;
    }
    buf[len] = '\0';
    return len;
}

/* Whether `path` is among the first arguments: the kernel runs a script's
 * interpreter with the script's path there, and AT_EXECFN names the script. */
static int named_in_arguments(const char *path)
{
    for (int i = 1; i <= 4 && start_argv[i - 1] && start_argv[i]; i++)
        if (!strcmp(start_argv[i], path))
            return 1;
    return 0;
}

/* The executable's path, once per image (a fork child keeps its parent's).
 * Reading /proc/self/exe costs a new process 13-30 us on a VM, procfs making
 * the pid's directory for its first lookup; the path that exec was given
 * (AT_EXECFN) names the same file when it is not a script run by its
 * interpreter, and resolving it costs a few lstat calls.  Inlined into the
 * start: its PATH_MAX buffer then shares the frame with the command line's,
 * where a call below that frame reached one more page of stack (a page fault
 * in four processes of ten). */
static inline __attribute__((always_inline)) const char *executable_path(void)
{
    char *exe = asys_proc.exe_path;
    if (exe[0])
        return exe;
    const char *given = (const char *)getauxval(AT_EXECFN);
    char resolved[PATH_MAX];
    if (start_argv && given && !named_in_arguments(given) && realpath(given, resolved) &&
        strlen(resolved) < sizeof asys_proc.exe_path) {
        strcpy(exe, resolved);
    } else {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof asys_proc.exe_path - 1);
        exe[n > 0 ? n : 0] = '\0';
    }
    return exe;
}

const char *asys_executable_path(void)
{
    return executable_path();
}

static void write_process_info(struct asys_thread *t, uint64_t stamp)
{
    const char *exe = executable_path();
    char cmdline[4096];
    size_t len = read_cmdline(cmdline, sizeof cmdline);
    while (len && cmdline[len - 1] == '\0')
        len--;
    for (size_t i = 0; i < len; i++)
        if (cmdline[i] == '\0')
            cmdline[i] = ' ';
    cmdline[len] = '\0';

    uint32_t exe_id = asys_intern_once(t, exe, strlen(exe));
    uint32_t cmd_id = asys_intern_once(t, cmdline, len);
    uint32_t delta;
    struct asys_rec_process_info *r = asys_segment_reserve(&t->seg, sizeof *r, stamp, &delta);
    if (!r)
        return;
    r->pid = asys_proc.pid;
    r->ppid = asys_proc.ppid;
    r->exe_string_id = exe_id;
    r->cmdline_string_id = cmd_id;
    r->origin = asys_proc.origin;
    r->reserved = 0;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_PROCESS_INFO, sizeof *r / 8, 0, delta));
}

static void write_thread_record(struct asys_thread *t, unsigned type, uint64_t stamp)
{
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    uint32_t name_id = asys_intern_once(t, name, strlen(name));
    uint32_t delta;
    struct asys_rec_thread *r = asys_segment_reserve(&t->seg, sizeof *r, stamp, &delta);
    if (!r)
        return;
    r->tid = t->tid;
    r->name_string_id = name_id;
    asys_segment_commit(&r->header, ASYS_REC_WORD(type, sizeof *r / 8, 0, delta));
}

#define SEGMENT_PATH_MAX (sizeof asys_proc.segment_dir + 128)

static int open_thread_segment(struct asys_thread *t, uint64_t not_after, char *path)
{
    char *end = path + SEGMENT_PATH_MAX;
    char *p = asys_append_str(path, end, asys_proc.segment_dir);
    p = asys_append_str(p, end, "p");
    p = asys_append_u64(p, end, asys_proc.pid, 10);
    p = asys_append_str(p, end, "-t");
    p = asys_append_u64(p, end, t->tid, 10);
    p = asys_append_str(p, end, "-");
    p = asys_append_u64(p, end, asys_proc.process_uid, 16);
    p = asys_append_str(p, end, "-");
    p = asys_append_u64(p, end, t->thread_index, 10);
    asys_append_str(p, end, ASYS_SEGMENT_SUFFIX);

    /* the launcher's latest pair where there is one: a process that reads
     * no clock otherwise does not page in the vDSO's data for it */
    struct asys_clock_pair pair;
    uint64_t now;
    if (asys_proc.arena.control &&
        asys_arena_read_pair(asys_proc.arena.control, &pair.ticks, &pair.monotonic_ns) == 0) {
        now = asys_clock_ticks(asys_proc.clock_kind);
    } else {
        asys_clock_pair_take(asys_proc.clock_kind, &pair);
        now = pair.ticks;
    }
    struct asys_segment_header h;
    memset(&h, 0, sizeof h);
    h.collector = ASYS_SEGMENT_THREAD;
    h.feature_mask = asys_proc.segment_features;
    h.pid = asys_proc.pid;
    h.tid = t->tid;
    h.ppid = asys_proc.ppid;
    h.thread_index = t->thread_index;
    h.process_uid = asys_proc.process_uid;
    h.parent_process_uid = asys_proc.parent_process_uid;
    h.inherited_string_limit = asys_proc.inherited_string_limit;
    h.clock_kind = (uint32_t)asys_proc.clock_kind;
    h.base_ticks = not_after && not_after < now ? not_after : now;
    h.calib_ticks = pair.ticks;
    h.calib_mono_ns = pair.monotonic_ns;
    int rc = asys_proc.arena.control ? asys_segment_open_arena(&t->seg, &asys_proc.arena, &h,
                                                               asys_proc.max_segment_size)
                                     : asys_segment_open(&t->seg, path, &h, asys_proc.chunk_size,
                                                         asys_proc.max_segment_size);
    if (rc)
        asys_debug("cannot create segment '%s': %s", path, strerror(-rc));
    return rc;
}

/* The first segment of the image: its header's mapping stays when the
 * thread that wrote it exits (the writer leaves it mapped). */
static void set_anchor(struct asys_segment_writer *w)
{
    struct asys_segment_header *expected = NULL;
    if (w->header_map && __atomic_compare_exchange_n(&asys_proc.anchor, &expected, w->header, 0,
                                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        w->keep_header_map = 1;
}

/* A fork child with no segment of its own at all: its events count in its
 * parent image's anchor, as a lost process (the first time) and its events. */
static void count_lost_process_event(int error)
{
    struct asys_segment_header *p = asys_proc.parent_anchor;
    if (!p)
        return;
    if (!asys_proc.counted_as_lost_process) {
        asys_proc.counted_as_lost_process = 1;
        __atomic_fetch_add(&p->lost_processes, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&p->lost_process_pid, asys_proc.pid, __ATOMIC_RELAXED);
    }
    if (error)
        __atomic_store_n(&p->lost_process_errno, (uint32_t)error, __ATOMIC_RELAXED);
    __atomic_fetch_add(&p->lost_process_records, 1, __ATOMIC_RELAXED);
}

int asys_thread_unrecorded(void)
{
    struct asys_segment_header *a = __atomic_load_n(&asys_proc.anchor, __ATOMIC_ACQUIRE);
    if (a)
        __atomic_fetch_add(&a->lost_thread_records, 1, __ATOMIC_RELAXED);
    else
        count_lost_process_event(0);
    return asys_tls_no_segment++ % SEGMENT_RETRY_EVENTS == 0;
}

/* This thread got no segment: it counts once, and its events from now on. */
static void no_segment(int error)
{
    struct asys_segment_header *a = __atomic_load_n(&asys_proc.anchor, __ATOMIC_ACQUIRE);
    if (!a) { /* the image has no segment at all */
        if (!asys_tls_no_segment)
            count_lost_process_event(error); /* this event */
        else if (asys_proc.parent_anchor)
            __atomic_store_n(&asys_proc.parent_anchor->lost_process_errno, (uint32_t)error,
                             __ATOMIC_RELAXED);
        asys_tls_no_segment = 1;
        return;
    }
    if (!asys_tls_no_segment) {
        asys_tls_no_segment = 1;
        if (a) {
            __atomic_fetch_add(&a->lost_threads, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&a->lost_thread_records, 1, __ATOMIC_RELAXED); /* this event */
        }
    }
    if (a)
        __atomic_store_n(&a->lost_thread_errno, (uint32_t)error, __ATOMIC_RELAXED);
}

struct asys_thread *asys_thread_register(uint64_t not_after)
{
    asys_inject_init();
    if (!asys_proc.enabled)
        return NULL;
    int saved_errno = errno;
    struct asys_thread *t = NULL;
    char path[SEGMENT_PATH_MAX];
    void *mem = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        no_segment(errno);
        goto out;
    }
    t = mem;
    t->tid = (uint32_t)syscall(SYS_gettid);
    t->thread_index = __atomic_add_fetch(&asys_proc.next_thread_index, 1, __ATOMIC_RELAXED);
    int rc = open_thread_segment(t, not_after, path);
    if (rc != 0) {
        munmap(t, sizeof *t);
        t = NULL;
        no_segment(-rc);
        goto out;
    }
    asys_tls_no_segment = 0;
    if (!__atomic_load_n(&asys_proc.anchor, __ATOMIC_ACQUIRE))
        set_anchor(&t->seg);
    pthread_mutex_lock(&asys_proc.registry_lock);
    t->next = asys_proc.threads;
    asys_proc.threads = t;
    pthread_mutex_unlock(&asys_proc.registry_lock);
    asys_tls_thread = t;
    pthread_setspecific(asys_proc.thread_key, t);

    uint64_t stamp = not_after ? not_after : asys_now();
    if (!__atomic_exchange_n(&asys_proc.process_info_written, 1, __ATOMIC_ACQ_REL))
        write_process_info(t, stamp);
    write_thread_record(t, ASYS_REC_THREAD_START, stamp);
out:
    errno = saved_errno;
    return t;
}

/* A second segment of the calling thread, not its TLS one: the Python
 * function tracer writes its ranges there after the fact, so the records
 * other collectors write meanwhile into the thread's own segment cannot
 * shift their times.  In the registry (a fork child drops it with the
 * others); NULL when no segment can be opened. */
struct asys_thread *asys_thread_open_extra(void)
{
    asys_inject_init();
    if (!asys_proc.enabled)
        return NULL;
    int saved_errno = errno;
    char path[SEGMENT_PATH_MAX];
    struct asys_thread *t = NULL;
    void *mem = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        goto out;
    t = mem;
    t->tid = (uint32_t)syscall(SYS_gettid);
    t->thread_index = __atomic_add_fetch(&asys_proc.next_thread_index, 1, __ATOMIC_RELAXED);
    if (open_thread_segment(t, 0, path) != 0) {
        munmap(t, sizeof *t);
        t = NULL;
        goto out;
    }
    pthread_mutex_lock(&asys_proc.registry_lock);
    t->next = asys_proc.threads;
    asys_proc.threads = t;
    pthread_mutex_unlock(&asys_proc.registry_lock);
out:
    errno = saved_errno;
    return t;
}

static void unlink_thread(struct asys_thread *t);

void asys_thread_close_extra(struct asys_thread *t)
{
    int saved_errno = errno;
    unlink_thread(t);
    asys_segment_close(&t->seg);
    munmap(t, sizeof *t);
    errno = saved_errno;
}

void asys_thread_count_lost(uint32_t size)
{
    struct asys_thread *t = asys_tls_thread;
    if (t && t->seg.header)
        asys_segment_count_lost(t->seg.header, size, ASYS_DROP_REENTRY);
}

static void unlink_thread(struct asys_thread *t)
{
    pthread_mutex_lock(&asys_proc.registry_lock);
    for (struct asys_thread **pp = &asys_proc.threads; *pp; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    }
    pthread_mutex_unlock(&asys_proc.registry_lock);
}

/* Thread exit: the last name, then a clean close.  The thread stays marked
 * busy so hooks run by later TLS destructors do not reopen a segment. */
static void thread_key_destructor(void *arg)
{
    struct asys_thread *t = arg;
    if (!t || t != asys_tls_thread)
        return;
    asys_tls_busy = 1;
    heap_flush(t, 0);
    write_thread_record(t, ASYS_REC_THREAD_END, asys_now());
    unlink_thread(t);
    heap_forget(t); /* once out of the registry: process exit may count them */
    asys_segment_close(&t->seg);
    asys_tls_thread = NULL;
    munmap(t, sizeof *t);
}

/* Threads still running at process exit cannot have their heap sums
 * written for them (they may be writing their segments): what they hold is
 * counted lost.  Under the registry lock no thread unmaps its sums. */
static void count_others_heap_sums(const struct asys_thread *self)
{
    pthread_mutex_lock(&asys_proc.registry_lock);
    for (struct asys_thread *o = asys_proc.threads; o; o = o->next)
        if (o != self && asys_heap_thread_count_unwritten)
            asys_heap_thread_count_unwritten(o);
    pthread_mutex_unlock(&asys_proc.registry_lock);
}

/* Process exit does not run TLS destructors for the exiting thread: record
 * its final name, but keep the segment open for hooks run by later exit
 * handlers (the data is in the page cache either way). */
__attribute__((destructor)) static void asys_process_exit(void)
{
    struct asys_thread *t = asys_tls_thread;
    if (!t && !asys_tls_busy && asys_proc.enabled && !asys_proc.anchor &&
        asys_proc.origin == ASYS_PROCESS_FORKED)
        t = asys_thread_register(0); /* a fork child that recorded nothing still appears */
    if (!t || asys_tls_busy)
        return;
    asys_tls_busy = 1;
    heap_flush(t, 1);
    count_others_heap_sums(t);
    write_thread_record(t, ASYS_REC_THREAD_END, asys_now());
    /* a short process would keep its slot's whole reservation until
     * finalize; the margin covers what later exit handlers record */
    asys_segment_release_unused(&t->seg, 64u << 10);
    asys_tls_busy = 0;
}

/* The forking thread's heap sums are written first: its child would
 * otherwise start with a copy of them. */
static void before_fork(void)
{
    struct asys_thread *t = asys_tls_thread;
    if (t && !asys_tls_busy) {
        asys_tls_busy = 1;
        heap_flush(t, 0);
        asys_tls_busy = 0;
    }
    pthread_mutex_lock(&asys_proc.registry_lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&asys_proc.registry_lock);
}

/* The child must never write into its parent's segments (the mappings are
 * shared): drop every inherited writer and start a new process image whose
 * string ids below the inherited limit resolve in the parent. */
static void after_fork_child(void)
{
    /* busy from the start: unmapping calls the (wrapped) munmap, which must
     * not record into the writers being dropped */
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1;
    asys_page_helper_after_fork(); /* before any writer is dropped: it drains */
    pthread_mutex_init(&asys_proc.registry_lock, NULL);
    struct asys_thread *t = asys_proc.threads;
    while (t) {
        struct asys_thread *next = t->next;
        asys_segment_abandon(&t->seg);
        heap_forget(t);
        munmap(t, sizeof *t);
        t = next;
    }
    asys_proc.threads = NULL;
    asys_tls_thread = NULL;
    asys_tls_no_segment = 0;
    /* the parent image's anchor stays mapped: a child that gets no segment
     * counts itself there (an older grandparent's is let go) */
    if (asys_proc.parent_anchor)
        munmap(
            (void *)((uintptr_t)asys_proc.parent_anchor & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1)),
            (size_t)sysconf(_SC_PAGESIZE));
    asys_proc.parent_anchor = asys_proc.anchor;
    asys_proc.counted_as_lost_process = 0;
    asys_proc.anchor = NULL;
    if (asys_proc.fork_untraced) /* until it execs: the new image starts afresh */
        asys_proc.enabled = 0;
    if (!asys_proc.enabled) {
        asys_tls_busy = was_busy;
        return;
    }
    asys_proc.parent_process_uid = asys_proc.process_uid;
    asys_proc.process_uid = new_process_uid();
    asys_proc.inherited_string_limit =
        __atomic_load_n(&asys_proc.next_string_id, __ATOMIC_RELAXED) + 1;
    asys_proc.ppid = asys_proc.pid;
    asys_proc.pid = (uint32_t)getpid();
    asys_proc.origin = ASYS_PROCESS_FORKED;
    asys_proc.process_info_written = 0;
    asys_proc.next_thread_index = 0;
    /* no segment yet: most children exec at once, and the new image registers
     * itself; one that records nothing registers at exit (asys_process_exit) */
    asys_tls_busy = was_busy;
}

/* Eager registration: every traced process shows up with its command line.
 * glibc passes a constructor the program's arguments. */
__attribute__((constructor)) static void asys_process_start(int argc, char **argv, char **envp)
{
    (void)envp;
    start_argv = argc > 0 ? argv : NULL;
    note_argument_area(argc, argv);
    struct asys_thread *t = asys_thread_enter();
    if (t)
        asys_thread_leave();
    start_argv = NULL;
    /* the program may close or reuse any descriptor from now on */
    asys_arena_drop_spare(&asys_proc.arena);
}
