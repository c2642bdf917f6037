/* process_tree_events PROG ARGS...: runs PROG with what the kernel does for
 * asys -s process-tree and nothing else: a per-task, inherited cpu-clock
 * event per CPU, enabled at exec, with a 1 MiB ring taking the side-band
 * records asys asks for (MMAP2 with build ids, COMM, FORK/EXIT), and a
 * period so long that it never samples.  Nothing reads the rings (the
 * kernel drops what does not fit).  The many-process bench's limit: the
 * cost of following a process tree with perf events at all. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES 256

static int open_event(pid_t pid, int cpu)
{
    struct perf_event_attr a = {
        .size = sizeof a,
        .type = PERF_TYPE_SOFTWARE,
        .config = PERF_COUNT_SW_CPU_CLOCK,
        .sample_period = 1000000000000ull, /* 1,000 s of CPU: never */
        .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
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
    if (fd >= 0 && mmap(NULL, (RING_PAGES + 1) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
                       MAP_FAILED) {
        close(fd);
        return -1;
    }
    return fd;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: process_tree_events PROG [ARGS...]\n");
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
    for (int cpu = 0; cpu < cpus; cpu++)
        if (open_event(child, cpu) < 0 && cpu == 0) {
            perror("process_tree_events: perf_event_open");
            kill(child, SIGKILL);
            return 1;
        }
    close(go[1]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
