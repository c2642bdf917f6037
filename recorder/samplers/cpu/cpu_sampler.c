/* The launcher's perf events and the thread that drains their rings
 * (cpu_sampler.h). */
#define _GNU_SOURCE
#include "cpu_sampler.h"
#include "notes.h"
#include "perf_map.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRACEFS_SCHED_SWITCH "/sys/kernel/tracing/events/sched/sched_switch"
/* Ring sizes in pages (a power of two): a dwarf sample carries the stack copy. */
#define SAMPLE_RING_PAGES_DWARF 256
#define SAMPLE_RING_PAGES 64
#define SCHED_RING_PAGES 256
#define MIN_RING_PAGES 8
#define DRAIN_INTERVAL_MS 20
/* Registers the DWARF unwinder needs (x86-64 perf_regs bits): AX..IP, R8..R15. */
#define X86_REGS_MASK ((1ull << 9) - 1) | (0xffull << 16)
#define DEFAULT_NOMINAL_MHZ 2000
/* A program that runs already: its tree's threads each get a sampling
 * event per CPU (one event per CPU follows a thread and what it starts, not
 * its siblings); at most this many processes and events. */
#define MAX_TREE_PROCESSES 4096
#define MAX_THREAD_EVENTS 8192

enum ring_kind { RING_SAMPLES, RING_SCHED };

struct ring {
    int fd;
    int cpu;
    enum ring_kind kind;
    void *map;
    size_t map_size;
    uint64_t data_size;
    FILE *out;
};

struct asys_cpu_sampler {
    struct asys_cpu_sampler_config config;
    char session_dir[4096];
    struct asys_cpu_sampler_result result;
    struct asys_cpu_raw_run run;
    struct ring *rings;
    int ring_count;
    pthread_t thread;
    int thread_running;
    int stop; /* atomic */
    int wake_fd; /* an eventfd that ends the drain thread's wait at stop; -1: none */
    pid_t target;
    int user_only; /* kernel samples refused (perf_event_paranoid 2): user space only */
    int kernel_stacks; /* -s system-wide with readable kallsyms: the kernel's callchains too */
    int no_build_id; /* a kernel before 5.12: MMAP2 records without build ids */
    int *thread_fds; /* a running program's threads' events (into the rings) */
    int thread_fd_count;
    struct asys_cpu_online *online; /* NULL: the samples are unwound at the end */
};

const struct asys_cpu_sampler_result *asys_cpu_sampler_result(const struct asys_cpu_sampler *s)
{
    return &s->result;
}

/* ---- what the machine offers ------------------------------------------------ */

static int read_text(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* The nominal frequency cpu-clock periods are converted with. */
static uint32_t nominal_mhz(int *guessed)
{
    char text[8192];
    *guessed = 0;
    if (read_text("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency", text, sizeof text) == 0) {
        unsigned long khz = strtoul(text, NULL, 10);
        if (khz >= 100000 && khz < 100000000)
            return (uint32_t)(khz / 1000);
    }
    if (read_text("/proc/cpuinfo", text, sizeof text) == 0) {
        const char *p = strstr(text, "cpu MHz");
        const char *colon = p ? strchr(p, ':') : NULL;
        double mhz = colon ? strtod(colon + 1, NULL) : 0;
        if (mhz >= 100 && mhz < 100000)
            return (uint32_t)(mhz + 0.5);
    }
    *guessed = 1;
    return DEFAULT_NOMINAL_MHZ;
}

static int test_refusal_errno(void)
{
    const char *v = getenv(ASYS_TEST_PERF_ERRNO_ENV);
    if (!v || !*v)
        return 0;
    if (!strcmp(v, "EACCES"))
        return EACCES;
    if (!strcmp(v, "EPERM"))
        return EPERM;
    if (!strcmp(v, "ENOENT"))
        return ENOENT;
    return EACCES;
}

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
    int refused = test_refusal_errno();
    if (refused) {
        errno = refused;
        return -1;
    }
    return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* "field:long prev_state;	offset:32;	size:8;" -> offset and size of `name`. */
static int format_field(const char *format, const char *name, uint32_t *offset, uint32_t *size)
{
    char want[64];
    snprintf(want, sizeof want, " %s;", name);
    const char *p = strstr(format, want);
    const char *o = p ? strstr(p, "offset:") : NULL;
    const char *s = o ? strstr(o, "size:") : NULL;
    if (!s)
        return -1;
    unsigned long off = strtoul(o + 7, NULL, 10), sz = strtoul(s + 5, NULL, 10);
    if (off > 4096 || (sz != 4 && sz != 8))
        return -1;
    *offset = (uint32_t)off;
    *size = (uint32_t)sz;
    return 0;
}

/* The sched_switch tracepoint's id and field offsets; -1 with the reason. */
static int sched_switch_format(struct asys_cpu_raw_run *run, uint64_t *id, char *why, size_t size)
{
    char text[8192];
    const char *off = getenv(ASYS_TEST_NO_TRACEPOINT_ENV);
    if (off && *off) {
        snprintf(why, size, "%s is set (a test)", ASYS_TEST_NO_TRACEPOINT_ENV);
        return -1;
    }
    if (read_text(TRACEFS_SCHED_SWITCH "/id", text, sizeof text) != 0) {
        snprintf(why, size,
                 "cannot read '%s/id': %s (mount tracefs: mount -t tracefs nodev "
                 "/sys/kernel/tracing)",
                 TRACEFS_SCHED_SWITCH, strerror(errno));
        return -1;
    }
    *id = strtoull(text, NULL, 10);
    uint32_t pid_size = 0, next_size = 0;
    if (read_text(TRACEFS_SCHED_SWITCH "/format", text, sizeof text) != 0 ||
        format_field(text, "prev_pid", &run->prev_pid_offset, &pid_size) != 0 ||
        format_field(text, "prev_state", &run->prev_state_offset, &run->prev_state_size) != 0 ||
        format_field(text, "next_pid", &run->next_pid_offset, &next_size) != 0 || pid_size != 4 ||
        next_size != 4) {
        snprintf(why, size, "cannot read the fields of '%s/format'", TRACEFS_SCHED_SWITCH);
        return -1;
    }
    return 0;
}

/* ---- opening the events ------------------------------------------------------ */

static void sampling_attr(const struct asys_cpu_sampler *s, struct perf_event_attr *a, int cycles)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = cycles ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
    a->config = cycles ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
    a->sample_period = s->result.period;
    a->sample_type = s->run.sample_type;
    a->sample_regs_user = s->run.regs_mask;
    a->sample_stack_user = s->config.backtrace == ASYS_BACKTRACE_DWARF ? s->config.stack_bytes : 0;
    a->sample_max_stack = (uint16_t)s->config.depth;
    /* kernel frames are one [kernel] frame, unless system-wide with kallsyms
     * to name them; -b dwarf unwinds the user part itself */
    a->exclude_callchain_kernel = (unsigned)!s->kernel_stacks;
    a->exclude_callchain_user = s->kernel_stacks && s->config.backtrace != ASYS_BACKTRACE_FP;
    a->exclude_hv = 1;
    a->exclude_kernel = (unsigned)s->user_only;
    /* the threads' own switches where sched_switch is not available */
    a->context_switch = s->result.sched_source == ASYS_SCHED_CONTEXT_SWITCH ||
                        s->result.sched_source == ASYS_SCHED_CPU_SWITCH;
    a->mmap = 1; /* with mmap2: the kernel emits MMAP2 records (mmap2 alone enables none) */
    a->mmap2 = 1;
    a->build_id = (unsigned)!s->no_build_id; /* MMAP2 names the file by build id too */
    a->comm = 1;
    a->comm_exec = 1;
    a->task = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->watermark = 1;
    a->wakeup_watermark =
        (uint32_t)(s->config.backtrace == ASYS_BACKTRACE_DWARF ? SAMPLE_RING_PAGES_DWARF * 4096 / 4
                                                               : SAMPLE_RING_PAGES * 4096 / 4);
    if (s->config.scope == ASYS_SAMPLE_PROCESS_TREE) {
        a->inherit = 1;
        a->disabled = 1;
        /* the program's own code, not the launcher's fork; a program that
         * runs already (a session's recording) is enabled at once */
        a->enable_on_exec = (unsigned)!s->config.target_running;
    }
}

static void sched_attr(struct perf_event_attr *a, uint64_t id)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_TRACEPOINT;
    a->config = id;
    a->sample_period = 1;
    a->sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->watermark = 1;
    a->wakeup_watermark = SCHED_RING_PAGES * 4096 / 4;
}

static int map_ring(struct asys_cpu_sampler *s, struct ring *r, int fd, enum ring_kind kind,
                    int cpu, struct asys_err *err)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t pages = kind == RING_SCHED                            ? SCHED_RING_PAGES
                   : s->config.backtrace == ASYS_BACKTRACE_DWARF ? SAMPLE_RING_PAGES_DWARF
                                                                 : SAMPLE_RING_PAGES;
    r->fd = fd;
    r->cpu = cpu;
    r->kind = kind;
    /* an unprivileged user may lock kernel.perf_event_mlock_kb (516 KiB) in
     * all: smaller rings, drained as often, rather than none */
    for (;; pages /= 2) {
        r->map_size = (pages + 1) * page;
        r->data_size = pages * page;
        r->map = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (r->map != MAP_FAILED)
            break;
        r->map = NULL;
        if ((errno != EPERM && errno != ENOMEM) || pages <= MIN_RING_PAGES)
            return asys_fail_errno(err, errno,
                                   "cannot map the perf ring of CPU %d (kernel.perf_event_mlock_kb "
                                   "limits what a user without CAP_IPC_LOCK may map)",
                                   cpu);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s/%s-cpu%d.perf", s->session_dir, ASYS_CPU_RAW_DIR,
             kind == RING_SCHED ? "sched" : "samples", cpu);
    r->out = fopen(path, "we");
    if (!r->out)
        return asys_fail_errno(err, errno, "cannot create '%s'", path);
    return 0;
}

static void unavailable(struct asys_cpu_sampler *s, int e)
{
    s->result.status = ASYS_CPU_SAMPLING_UNAVAILABLE;
    char paranoid[32] = "?";
    read_text("/proc/sys/kernel/perf_event_paranoid", paranoid, sizeof paranoid);
    paranoid[strcspn(paranoid, "\n")] = '\0';
    if (e == EACCES || e == EPERM)
        snprintf(s->result.reason, sizeof s->result.reason,
                 "perf_event_open refused (%s; kernel.perf_event_paranoid=%s): run 'sysctl "
                 "kernel.perf_event_paranoid=1' (or lower) as root, or give the container "
                 "--cap-add PERFMON (SYS_ADMIN before Linux 5.8)",
                 strerror(e), paranoid);
    else
        snprintf(s->result.reason, sizeof s->result.reason, "perf_event_open failed: %s",
                 strerror(e));
}

/* Opens the sampling event on every CPU; cycles first, cpu-clock where the
 * PMU has none.  0, or the errno of the first CPU's refusal. */
static int open_sampling(struct asys_cpu_sampler *s, int cpus, struct asys_err *err, int *fatal)
{
    struct perf_event_attr a;
    int pid = s->config.scope == ASYS_SAMPLE_PROCESS_TREE ? s->target : -1;
    s->result.event = ASYS_CPU_EVENT_CYCLES;
    if (s->config.frequency_hz) /* cycles at the nominal frequency; cpu-clock: 1e9/HZ ns */
        s->config.period_cycles =
            (uint64_t)s->result.nominal_mhz * 1000000u / s->config.frequency_hz;
    if (!s->config.period_cycles)
        s->config.period_cycles = 1;
    s->result.period = s->config.period_cycles;
    for (int cpu = 0; cpu < cpus; cpu++) {
        sampling_attr(s, &a, s->result.event == ASYS_CPU_EVENT_CYCLES);
        int fd = perf_open(&a, pid, cpu);
        while (fd < 0 && cpu == 0) { /* the first CPU finds what this machine allows */
            if (errno == EINVAL && !s->no_build_id) {
                s->no_build_id = 1;
            } else if (s->result.event == ASYS_CPU_EVENT_CYCLES &&
                       (errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV ||
                        errno == EINVAL)) {
                /* no hardware cycles counter: the period in ns at the nominal frequency */
                s->result.event = ASYS_CPU_EVENT_CPU_CLOCK;
                uint64_t ns = s->config.period_cycles * 1000 / s->result.nominal_mhz;
                s->result.period = ns ? ns : 1;
            } else if ((errno == EACCES || errno == EPERM) && !s->user_only) {
                s->user_only = 1; /* perf_event_paranoid 2 allows a user's own code only */
            } else {
                break;
            }
            sampling_attr(s, &a, s->result.event == ASYS_CPU_EVENT_CYCLES);
            fd = perf_open(&a, pid, cpu);
        }
        if (fd < 0 && (errno == ENODEV || errno == ENXIO) && cpu > 0)
            continue; /* an offline CPU */
        if (fd < 0)
            return errno;
        if (map_ring(s, &s->rings[s->ring_count++], fd, RING_SAMPLES, cpu, err) != 0) {
            *fatal = 1;
            return EIO;
        }
    }
    return 0;
}

/* Every CPU's context switches (all tasks: a core's time used by others counts). */
static void open_sched(struct asys_cpu_sampler *s, int cpus, struct asys_err *err, int *fatal)
{
    uint64_t id = 0;
    char why[200];
    if (sched_switch_format(&s->run, &id, why, sizeof why) != 0) {
        snprintf(s->result.reason, sizeof s->result.reason, "no scheduling data: %s", why);
        return;
    }
    struct perf_event_attr a;
    sched_attr(&a, id);
    int first = s->ring_count;
    for (int cpu = 0; cpu < cpus; cpu++) {
        int fd = perf_open(&a, -1, cpu);
        if (fd < 0 && (errno == ENODEV || errno == ENXIO) && cpu > 0)
            continue;
        if (fd < 0) {
            snprintf(s->result.reason, sizeof s->result.reason,
                     "no scheduling data: sched:sched_switch on every CPU needs "
                     "kernel.perf_event_paranoid=-1 or CAP_PERFMON (%s)",
                     strerror(errno));
            for (int i = first; i < s->ring_count; i++) {
                munmap(s->rings[i].map, s->rings[i].map_size);
                close(s->rings[i].fd);
                if (s->rings[i].out)
                    fclose(s->rings[i].out);
            }
            s->ring_count = first;
            return;
        }
        if (map_ring(s, &s->rings[s->ring_count++], fd, RING_SCHED, cpu, err) != 0) {
            *fatal = 1;
            return;
        }
    }
    s->result.sched_source = ASYS_SCHED_TRACEPOINT;
}

/* ---- processes already running (-s system-wide) ------------------------------------ */

/* A side-band record as the kernel writes it, with the sample_id trailer
 * (TID, TIME, CPU) the sampling events ask for. */
static void put_sideband(FILE *out, uint32_t type, const void *body, size_t body_size,
                         const char *text, uint32_t pid, uint32_t tid, uint64_t time)
{
    size_t text_size = (strlen(text) + 1 + 7) & ~(size_t)7;
    struct perf_event_header h = {type, PERF_RECORD_MISC_USER,
                                  (uint16_t)(sizeof h + body_size + text_size + 24)};
    uint8_t pad[4096 + 8] = {0};
    uint32_t ids[2] = {pid, tid};
    uint64_t trailer[3] = {0, time, 0};
    memcpy(trailer, ids, sizeof ids);
    memcpy(pad, text, strlen(text));
    fwrite(&h, sizeof h, 1, out);
    fwrite(body, body_size, 1, out);
    fwrite(pad, text_size, 1, out);
    fwrite(trailer, sizeof trailer, 1, out);
}

/* The executable mappings and names of one running process, as the MMAP2
 * and COMM records its exec would have given. */
/* The parent of `pid` (/proc/PID/stat), or 0. */
static pid_t parent_of(pid_t pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (read_text(path, text, sizeof text) != 0)
        return 0;
    const char *p = strrchr(text, ')'); /* the command may hold anything */
    int ppid = 0;
    return p && sscanf(p + 1, " %*c %d", &ppid) == 1 ? (pid_t)ppid : 0;
}

/* The processes of `target`'s tree that run now, target first; their count. */
static int tree_processes(pid_t target, pid_t *tree, int max)
{
    pid_t *pids = calloc(MAX_TREE_PROCESSES * 4, sizeof *pids), *parents = NULL;
    int n = 0, count = 0;
    DIR *proc = pids ? opendir("/proc") : NULL;
    struct dirent *e;
    parents = pids ? pids + MAX_TREE_PROCESSES * 2 : NULL;
    while (proc && (e = readdir(proc)) != NULL && n < MAX_TREE_PROCESSES * 2) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (!*end && pid > 0 && pid != target) {
            pids[n] = (pid_t)pid;
            parents[n++] = parent_of((pid_t)pid);
        }
    }
    if (proc)
        closedir(proc);
    tree[count++] = target;
    for (int i = 0; i < count; i++) /* breadth first: each one's children */
        for (int j = 0; j < n && count < max; j++)
            if (parents[j] == tree[i])
                tree[count++] = pids[j];
    free(pids);
    return count;
}

/* One sampling event per CPU on thread `tid`, into that CPU's ring. */
static void attach_thread(struct asys_cpu_sampler *s, pid_t tid)
{
    struct perf_event_attr a;
    sampling_attr(s, &a, s->result.event == ASYS_CPU_EVENT_CYCLES);
    a.disabled = 0;
    for (int i = 0; i < s->ring_count && s->thread_fd_count < MAX_THREAD_EVENTS; i++) {
        if (s->rings[i].kind != RING_SAMPLES)
            continue;
        int fd = perf_open(&a, tid, s->rings[i].cpu);
        if (fd < 0)
            continue; /* gone meanwhile */
        if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[i].fd) != 0) {
            close(fd);
            continue;
        }
        s->thread_fds[s->thread_fd_count++] = fd;
    }
}

/* A program that runs already (a session's recording): the events opened
 * on its pid follow its main thread and what starts from then on; its
 * other threads and child processes get events of their own. */
static void attach_running_tree(struct asys_cpu_sampler *s)
{
    pid_t *tree = calloc(MAX_TREE_PROCESSES, sizeof *tree);
    s->thread_fds = calloc(MAX_THREAD_EVENTS, sizeof *s->thread_fds);
    int count = tree && s->thread_fds ? tree_processes(s->target, tree, MAX_TREE_PROCESSES) : 0;
    for (int i = 0; i < count; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", (int)tree[i]);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            char *end;
            long tid = strtol(e->d_name, &end, 10);
            if (!*end && tid > 0 && tid != s->target)
                attach_thread(s, (pid_t)tid);
        }
        if (d)
            closedir(d);
    }
    free(tree);
}

static void close_thread_events(struct asys_cpu_sampler *s)
{
    for (int i = 0; i < s->thread_fd_count; i++) {
        ioctl(s->thread_fds[i], PERF_EVENT_IOC_DISABLE, 0);
        close(s->thread_fds[i]);
    }
    free(s->thread_fds);
    s->thread_fds = NULL;
    s->thread_fd_count = 0;
}

static void snapshot_process(FILE *out, uint32_t pid, uint64_t time)
{
    char path[64], line[4600];
    snprintf(path, sizeof path, "/proc/%u/comm", pid);
    char comm[32] = "";
    if (read_text(path, comm, sizeof comm) == 0) {
        comm[strcspn(comm, "\n")] = '\0';
        uint32_t ids[2] = {pid, pid};
        put_sideband(out, PERF_RECORD_COMM, ids, sizeof ids, comm, pid, pid, time);
    }
    snprintf(path, sizeof path, "/proc/%u/maps", pid);
    FILE *maps = fopen(path, "re");
    if (!maps)
        return;
    while (fgets(line, sizeof line, maps)) {
        unsigned long long start, end, offset, inode;
        char perms[8], file[4100] = "";
        unsigned major, minor;
        if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &start, &end, perms, &offset,
                   &major, &minor, &inode, file) < 7 ||
            !strchr(perms, 'x') || end <= start)
            continue;
        struct {
            uint32_t pid, tid;
            uint64_t addr, len, pgoff;
            uint32_t maj, min;
            uint64_t ino, ino_generation;
            uint32_t prot, flags;
        } body = {pid,   pid,   start, end - start,           offset,     major,
                  minor, inode, 0,     PROT_READ | PROT_EXEC, MAP_PRIVATE};
        put_sideband(out, PERF_RECORD_MMAP2, &body, sizeof body, file, pid, pid, time);
    }
    fclose(maps);
}

/* Every running process, so that system-wide samples of programs started
 * before asys are symbolized. */
static void snapshot_processes(struct asys_cpu_sampler *s)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s/samples-running.perf", s->session_dir, ASYS_CPU_RAW_DIR);
    FILE *out = fopen(path, "we");
    DIR *proc = out ? opendir("/proc") : NULL;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    struct dirent *e;
    int count = 0;
    while (proc && (e = readdir(proc)) != NULL && count < 65536) {
        char *end;
        unsigned long pid = strtoul(e->d_name, &end, 10);
        if (*end || !pid || pid > UINT32_MAX)
            continue;
        snapshot_process(out, (uint32_t)pid, now);
        count++;
    }
    if (proc)
        closedir(proc);
    if (out)
        fclose(out);
}

/* ---- draining ------------------------------------------------------------------ */

/* Copies what the kernel wrote since the last call; the ring's bytes are
 * perf records back to back, so the file is too.  The bytes the ring held. */
static uint64_t drain(struct ring *r)
{
    struct perf_event_mmap_page *meta = r->map;
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    const uint8_t *data = (const uint8_t *)r->map + meta->data_offset;
    if (!meta->data_offset)
        data = (const uint8_t *)r->map + 4096;
    uint64_t avail = head - tail;
    if (avail > r->data_size)
        avail = r->data_size; /* cannot happen: the kernel never overwrites unread data */
    uint64_t held = avail;
    while (avail) {
        uint64_t at = tail % r->data_size;
        uint64_t n = r->data_size - at < avail ? r->data_size - at : avail;
        if (fwrite(data + at, 1, n, r->out) != n)
            break; /* disk full: what follows is lost, the counts say so */
        tail += n;
        avail -= n;
    }
    __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
    return held;
}

/* The most bytes one sample record can take (perf_event_open(2)'s layout
 * of what sample_type asks for). */
static uint64_t largest_sample(const struct asys_cpu_sampler *s)
{
    uint64_t t = s->run.sample_type, size = 8 + 5 * 8; /* header, IP TID TIME CPU PERIOD */
    if (t & PERF_SAMPLE_CALLCHAIN)
        size += 8 + 8 * ((uint64_t)s->config.depth + 8); /* the context markers too */
    if (t & PERF_SAMPLE_REGS_USER)
        size += 8 + 8 * (uint64_t)__builtin_popcountll(s->run.regs_mask);
    if (t & PERF_SAMPLE_STACK_USER)
        size += 8 + s->config.stack_bytes + 8;
    return size;
}

/* Whether a ring may wait for the drain interval instead of being polled.
 * The kernel wakes the pollers of an inherited event at each exit of a
 * process of the tree (to tell a hang-up), which cost every short process
 * a wake-up of this thread.  A sample ring of the process tree fills only
 * at the sampling rate (cycles: at twice the nominal frequency, for boost),
 * so one that holds four intervals of the largest samples cannot fill
 * between two drains.  The program's context switches, where they come
 * into these rings, have no such bound. */
static int drained_on_time(const struct asys_cpu_sampler *s, const struct ring *r)
{
    if (r->kind != RING_SAMPLES || s->config.scope != ASYS_SAMPLE_PROCESS_TREE ||
        s->result.sched_source == ASYS_SCHED_CONTEXT_SWITCH ||
        s->result.sched_source == ASYS_SCHED_CPU_SWITCH || !s->result.period)
        return 0;
    double per_second = s->result.event == ASYS_CPU_EVENT_CPU_CLOCK
                            ? 1e9 / (double)s->result.period
                            : 2e6 * (double)s->result.nominal_mhz / (double)s->result.period;
    double interval_bytes = per_second * (double)largest_sample(s) * DRAIN_INTERVAL_MS / 1000.0;
    return (double)r->data_size >= 4 * interval_bytes;
}

/* The rings to poll: all but those drained on time; a ring drained on time
 * that was half full at a drain (a burst of mmaps, forks and execs, or this
 * thread kept from its CPU) is polled from then on.  The stop's eventfd
 * too, so that the last drain waits for no interval. */
static nfds_t polled_rings(const struct asys_cpu_sampler *s, const int *on_time, struct pollfd *fds)
{
    nfds_t n = 0;
    for (int i = 0; i < s->ring_count; i++)
        if (!on_time[i])
            fds[n++] = (struct pollfd){.fd = s->rings[i].fd, .events = POLLIN};
    fds[n++] = (struct pollfd){.fd = s->wake_fd, .events = POLLIN}; /* -1: skipped */
    return n;
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Tells the online unwinder what the sample files hold: every record
 * before the previous pass began was in its ring by this pass (the kernel
 * writes a record microseconds after its time), and is in its file now. */
static void publish_drained(struct asys_cpu_sampler *s, uint64_t previous_pass)
{
    for (int i = 0; i < s->ring_count; i++)
        if (s->rings[i].kind == RING_SAMPLES)
            fflush(s->rings[i].out);
    if (previous_pass)
        asys_cpu_online_publish(s->online, previous_pass);
}

static void *drain_thread(void *arg)
{
    struct asys_cpu_sampler *s = arg;
    struct pollfd fds[2 * ASYS_CPU_MAX_CPUS + 1];
    int on_time[2 * ASYS_CPU_MAX_CPUS];
    for (int i = 0; i < s->ring_count; i++) {
        const struct ring *r = &s->rings[i];
        on_time[i] = drained_on_time(s, r);
        if (on_time[i])
            asys_note(ASYS_NOTE_DEBUG, "cpu sampling: samples ring of CPU %d: drained every %d ms",
                      r->cpu, DRAIN_INTERVAL_MS);
        else
            asys_note(ASYS_NOTE_DEBUG, "cpu sampling: %s ring of CPU %d: polled",
                      r->kind == RING_SCHED ? "sched" : "samples", r->cpu);
    }
    nfds_t polled = polled_rings(s, on_time, fds);
    uint64_t previous_pass = 0;
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        poll(fds, polled, DRAIN_INTERVAL_MS);
        uint64_t pass = monotonic_ns();
        int changed = 0;
        for (int i = 0; i < s->ring_count; i++) {
            uint64_t held = drain(&s->rings[i]);
            if (held > s->rings[i].data_size / 2 && on_time[i]) {
                asys_note(ASYS_NOTE_DEBUG,
                          "cpu sampling: samples ring of CPU %d held %" PRIu64
                          " bytes at a drain: polled from now on",
                          s->rings[i].cpu, held);
                on_time[i] = 0;
                changed = 1;
            }
        }
        if (changed)
            polled = polled_rings(s, on_time, fds);
        if (s->online)
            publish_drained(s, previous_pass);
        previous_pass = pass;
    }
    return NULL;
}

static void close_rings(struct asys_cpu_sampler *s)
{
    for (int i = 0; i < s->ring_count; i++) {
        struct ring *r = &s->rings[i];
        if (r->map)
            munmap(r->map, r->map_size);
        if (r->fd >= 0)
            close(r->fd);
        if (r->out)
            fclose(r->out);
    }
    s->ring_count = 0;
}

/* Where no process can be started for it (close_in_a_process), the events
 * are closed by detached threads of their own, together and while finalize
 * goes on (unwinding, symbols, the report); the process's exit waits for
 * what is left. */
#define MAX_CLOSERS 16

struct closer {
    int count;
    int fds[]; /* the thread's own copy: it frees the closer */
};

static void *close_events(void *arg)
{
    struct closer *c = arg;
    for (int i = 0; i < c->count; i++)
        close(c->fds[i]);
    free(c);
    return NULL;
}

/* Closes fds[i], fds[i + stride], ... on a detached thread, or here. */
static void close_detached(const int *fds, int n, int first, int stride)
{
    int count = (n - first + stride - 1) / stride;
    struct closer *c = malloc(sizeof *c + (size_t)count * sizeof c->fds[0]);
    if (!c) {
        for (int i = first; i < n; i += stride)
            close(fds[i]);
        return;
    }
    c->count = 0;
    for (int i = first; i < n; i += stride)
        c->fds[c->count++] = fds[i];
    pthread_attr_t attr;
    pthread_t thread;
    int started = pthread_attr_init(&attr) == 0;
    if (started) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        started = pthread_create(&thread, &attr, close_events, c) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started)
        close_events(c);
}

/* In a forked child: every descriptor but the `n` sorted ones in `keep`. */
static void close_all_but(const int *keep, int n)
{
    unsigned from = 0;
    for (int i = 0; i <= n; i++) {
        unsigned to = i < n ? (unsigned)keep[i] : ~0u;
        if (to > from && syscall(SYS_close_range, from, to - 1, 0) != 0)
            for (unsigned fd = from; fd < to && fd < 65536; fd++)
                close((int)fd);
        from = to + 1;
    }
}

/* The last close of the events waits for the kernel: the sched_switch
 * tracepoint's probe is unregistered (30-40 ms on a VM), an inherited event
 * frees its children.  A process of its own, holding nothing else open,
 * makes those last closes (the launcher's grandchild, adopted by it as a
 * subreaper, by init once it exits) once the launcher's closes are done
 * (`gate` is at its end then): neither finalize nor the launcher's exit
 * waits for them.  0, or -1 when no process could be started. */
static int close_in_a_process(const int *fds, int n)
{
    int gate[2], keep[2 * ASYS_CPU_MAX_CPUS + 1];
    if (n > 2 * ASYS_CPU_MAX_CPUS || pipe2(gate, O_CLOEXEC) != 0)
        return -1;
    memcpy(keep, fds, (size_t)n * sizeof *keep);
    keep[n] = gate[0];
    for (int i = 1; i <= n; i++) /* sorted for close_all_but, before the fork */
        for (int k = i; k > 0 && keep[k - 1] > keep[k]; k--) {
            int t = keep[k];
            keep[k] = keep[k - 1];
            keep[k - 1] = t;
        }
    pid_t child = fork();
    if (child == 0) { /* only async-signal-safe calls from here: the launcher has threads */
        if (fork() == 0) {
            close_all_but(keep, n + 1);
            char c;
            while (read(gate[0], &c, 1) < 0 && errno == EINTR)
                ;
            for (int i = 0; i < n; i++)
                close(fds[i]);
        }
        _exit(0);
    }
    while (child > 0 && waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
    if (child > 0)
        for (int i = 0; i < n; i++)
            close(fds[i]);
    close(gate[1]);
    close(gate[0]);
    return child > 0 ? 0 : -1;
}

/* Unmaps the rings and closes their files; the events' descriptors are
 * closed by a process of their own (close_in_a_process), else by detached
 * threads (close_detached). */
static void release_rings(struct asys_cpu_sampler *s)
{
    int fds[2 * ASYS_CPU_MAX_CPUS];
    int n = 0;
    for (int i = 0; i < s->ring_count; i++) {
        struct ring *r = &s->rings[i];
        if (r->map)
            munmap(r->map, r->map_size);
        if (r->out)
            fclose(r->out);
        if (r->fd >= 0 && n < (int)(sizeof fds / sizeof fds[0]))
            fds[n++] = r->fd;
        else if (r->fd >= 0)
            close(r->fd);
    }
    s->ring_count = 0;
    if (n && close_in_a_process(fds, n) == 0)
        return;
    int threads = n < MAX_CLOSERS ? n : MAX_CLOSERS;
    for (int t = 0; t < threads; t++)
        close_detached(fds, n, t, threads);
}

int asys_cpu_sampler_start(const struct asys_cpu_sampler_config *cfg, pid_t target,
                           struct asys_cpu_sampler **out, struct asys_err *err)
{
    struct asys_cpu_sampler *s = calloc(1, sizeof *s);
    int rc = -1, fatal = 0;
    *out = NULL;
    if (!s) {
        asys_fail(err, "out of memory");
        goto out;
    }
    s->config = *cfg;
    s->wake_fd = -1;
    snprintf(s->session_dir, sizeof s->session_dir, "%s", cfg->session_dir);
    s->config.session_dir = s->session_dir;
    s->target = target;
    s->result.status = ASYS_CPU_SAMPLING_RECORDED;
    s->result.nominal_mhz = nominal_mhz(&s->result.nominal_guessed);
    long n = sysconf(_SC_NPROCESSORS_CONF);
    int cpus = n < 1 ? 1 : n > ASYS_CPU_MAX_CPUS ? ASYS_CPU_MAX_CPUS : (int)n;
    s->rings = calloc(2 * (size_t)cpus, sizeof *s->rings);
    if (!s->rings) {
        asys_fail(err, "out of memory");
        goto out;
    }
    s->run.session_dir = s->session_dir;
    s->run.config = &s->config;
    s->run.result = &s->result;
    s->run.cpus = cpus;
    s->run.target = target;
    s->run.sample_type =
        PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
    s->kernel_stacks = cfg->scope == ASYS_SAMPLE_SYSTEM_WIDE &&
                       cfg->backtrace != ASYS_BACKTRACE_NONE &&
                       asys_kallsyms_readable(ASYS_KALLSYMS);
    if (cfg->backtrace == ASYS_BACKTRACE_FP || s->kernel_stacks)
        s->run.sample_type |= PERF_SAMPLE_CALLCHAIN;
    if (cfg->backtrace == ASYS_BACKTRACE_DWARF) {
        s->run.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        s->run.regs_mask = X86_REGS_MASK;
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", s->session_dir, ASYS_CPU_RAW_DIR);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        asys_fail_errno(err, errno, "cannot create '%s'", dir);
        goto out;
    }
    /* the tracepoint first: without it the sampling events report the
     * program's own context switches */
    if (cfg->no_scheduling) /* --cpuctxsw none: samples only */
        snprintf(s->result.reason, sizeof s->result.reason, "no scheduling: --cpuctxsw none");
    else
        open_sched(s, cpus, err, &fatal);
    if (fatal)
        goto out;
    if (s->result.sched_source == ASYS_SCHED_NONE && !cfg->no_scheduling) {
        /* the sampling events' own switch records: the program's threads', or
         * system-wide every task's on each CPU (as perf record --switch-events -a) */
        int every_task = cfg->scope == ASYS_SAMPLE_SYSTEM_WIDE;
        s->result.sched_source = every_task ? ASYS_SCHED_CPU_SWITCH : ASYS_SCHED_CONTEXT_SWITCH;
        char why[sizeof s->result.reason];
        snprintf(why, sizeof why, "%s", s->result.reason);
        snprintf(s->result.reason, sizeof s->result.reason,
                 "scheduling from %s context switches (S and D not told apart%s): %.150s",
                 every_task ? "every CPU's" : "the program's own",
                 every_task ? "" : ", other processes unseen",
                 why + (strncmp(why, "no scheduling data: ", 20) ? 0 : 20));
    }
    int refused = open_sampling(s, cpus, err, &fatal);
    if (fatal)
        goto out;
    if (refused) {
        close_rings(s);
        s->result.sched_source = ASYS_SCHED_NONE;
        unavailable(s, refused);
    } else {
        if (s->user_only) {
            char why[sizeof s->result.reason];
            snprintf(why, sizeof why, "%s", s->result.reason);
            snprintf(s->result.reason, sizeof s->result.reason,
                     "user-space samples only (kernel ones refused by "
                     "kernel.perf_event_paranoid)%s%.150s",
                     why[0] ? "; " : "", why);
        }
        int running = s->config.scope == ASYS_SAMPLE_SYSTEM_WIDE || s->config.target_running;
        if (running) /* what was mapped before the events opened */
            snapshot_processes(s);
        if (s->config.target_running && s->config.scope == ASYS_SAMPLE_PROCESS_TREE)
            attach_running_tree(s);
        for (int i = 0; i < s->ring_count; i++)
            if (s->rings[i].kind == RING_SCHED || running)
                ioctl(s->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
        if (asys_cpu_run_save(&s->run, err) != 0) /* for `asys finalize` if we die */
            goto out;
        /* a program of its own, from its exec: its processes' threads all
         * start in the rings, so that the end of each is known */
        const char *at_end = getenv(ASYS_TEST_UNWIND_AT_END_ENV);
        if (s->config.scope == ASYS_SAMPLE_PROCESS_TREE && !s->config.target_running &&
            !(at_end && *at_end))
            s->online = asys_cpu_online_start(&s->run);
        s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* else the interval ends it */
        if (pthread_create(&s->thread, NULL, drain_thread, s) != 0) {
            asys_fail(err, "cannot start the sampling thread");
            goto out;
        }
        s->thread_running = 1;
    }
    *out = s;
    s = NULL;
    rc = 0;
out:
    if (s) {
        if (s->online) /* the drain thread did not start */
            asys_cpu_online_cancel(s->online);
        close_thread_events(s);
        close_rings(s);
        if (s->wake_fd >= 0)
            close(s->wake_fd);
        free(s->rings);
        free(s);
    }
    return rc;
}

int asys_cpu_sampler_finish(struct asys_cpu_sampler *s, struct asys_err *err)
{
    if (!s)
        return 0;
    if (s->thread_running) {
        __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
        uint64_t one = 1;
        if (s->wake_fd >= 0 && write(s->wake_fd, &one, sizeof one) != sizeof one)
            asys_note(ASYS_NOTE_DEBUG, "cpu sampling: the drain thread ends at its interval");
        pthread_join(s->thread, NULL);
        close_thread_events(s); /* the rings hold their last samples */
        for (int i = 0; i < s->ring_count; i++) {
            ioctl(s->rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
            drain(&s->rings[i]);
        }
    }
    close_thread_events(s);
    release_rings(s);
    int rc =
        s->online ? asys_cpu_online_finish(s->online, err) : asys_cpu_samples_write(&s->run, err);
    s->online = NULL;
    if (s->wake_fd >= 0)
        close(s->wake_fd);
    free(s->rings);
    free(s);
    return rc;
}
