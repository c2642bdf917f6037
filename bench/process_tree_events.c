/* process_tree_events [--samples NS] PROG ARGS...: runs PROG with what the
 * kernel does for asys -s process-tree and nothing else: a per-task,
 * inherited cpu-clock event per CPU, enabled at exec, with a 1 MiB ring
 * taking the side-band records asys asks for (MMAP2 with build ids, COMM,
 * FORK/EXIT).  By default its period is so long that it never samples and
 * nothing reads the rings (the kernel drops what does not fit): the cost of
 * following a process tree with perf events at all.  With --samples, a
 * sample every NS of CPU time with what asys's default -b dwarf asks of
 * each (user registers and 8 KiB of user stack), and a thread that frees
 * the rings every 20 ms without reading them: the kernel's own cost of
 * sampling the tree at asys's rate.  The many-process bench's limits. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES 256
#define MAX_CPUS 1024
/* the registers asys's -b dwarf unwinds from (x86-64: ip, sp, bp, ...) */
#define X86_REGS_MASK (((1ull << 9) - 1) | (0xffull << 16))
#define STACK_BYTES 8192

struct rings {
    struct perf_event_mmap_page *page[MAX_CPUS];
    int count;
    int stop; /* atomic */
};

/* Frees what the kernel wrote, every 20 ms, without reading it. */
static void *free_rings(void *arg)
{
    struct rings *r = arg;
    struct timespec pause = {0, 20 * 1000 * 1000};
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        nanosleep(&pause, NULL);
        for (int i = 0; i < r->count; i++) {
            uint64_t head = __atomic_load_n(&r->page[i]->data_head, __ATOMIC_ACQUIRE);
            __atomic_store_n(&r->page[i]->data_tail, head, __ATOMIC_RELEASE);
        }
    }
    return NULL;
}

static struct perf_event_mmap_page *open_event(pid_t pid, int cpu, uint64_t sample_ns)
{
    int dwarf = sample_ns != 0;
    struct perf_event_attr a = {
        .size = sizeof a,
        .type = PERF_TYPE_SOFTWARE,
        .config = PERF_COUNT_SW_CPU_CLOCK,
        /* without --samples, 1,000 s of CPU: never */
        .sample_period = dwarf ? sample_ns : 1000000000000ull,
        .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                       (dwarf ? PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER |
                                    PERF_SAMPLE_STACK_USER
                              : 0),
        .sample_regs_user = dwarf ? X86_REGS_MASK : 0,
        .sample_stack_user = dwarf ? STACK_BYTES : 0,
        /* as asys -s process-tree: inherited, enabled at exec, its side-band */
        .inherit = 1,
        .disabled = 1,
        .enable_on_exec = 1,
        .exclude_hv = 1,
        .mmap = 1,
        .mmap2 = 1,
        .build_id = 1,
        .comm = 1,
        .comm_exec = 1,
        .task = 1,
        .sample_id_all = 1,
        .use_clockid = 1,
        .clockid = CLOCK_MONOTONIC,
        .watermark = 1,
        .wakeup_watermark = RING_PAGES * 4096 / 4,
    };
    int fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    void *ring =
        fd < 0 ? MAP_FAILED
               : mmap(NULL, (RING_PAGES + 1) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED && fd >= 0)
        close(fd);
    return ring == MAP_FAILED ? NULL : ring; /* the descriptor stays open with the program */
}

int main(int argc, char **argv)
{
    uint64_t sample_ns = 0;
    char *end = NULL;
    if (argc > 2 && !strcmp(argv[1], "--samples")) {
        sample_ns = strtoull(argv[2], &end, 10);
        argv += 2;
        argc -= 2;
    }
    if (argc < 2 || (end && (*end || !sample_ns))) {
        fprintf(stderr, "usage: process_tree_events [--samples NS] PROG [ARGS...]\n");
        return 2;
    }
    int go[2];
    if (pipe2(go, O_CLOEXEC) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) { /* waits for its events, then becomes the program */
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) < 0)
            _exit(126);
        execvp(argv[1], argv + 1);
        fprintf(stderr, "process_tree_events: cannot run '%s': %s\n", argv[1], strerror(errno));
        _exit(127);
    }
    if (child < 0)
        return 1;
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    static struct rings rings;
    for (int cpu = 0; cpu < cpus && cpu < MAX_CPUS; cpu++) {
        struct perf_event_mmap_page *ring = open_event(child, cpu, sample_ns);
        if (!ring && cpu == 0) {
            perror("process_tree_events: perf_event_open");
            kill(child, SIGKILL);
            return 1;
        }
        if (ring)
            rings.page[rings.count++] = ring;
    }
    pthread_t freer;
    int freeing = sample_ns && pthread_create(&freer, NULL, free_rings, &rings) == 0;
    close(go[1]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        ;
    if (freeing) {
        __atomic_store_n(&rings.stop, 1, __ATOMIC_RELEASE);
        pthread_join(freer, NULL);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
