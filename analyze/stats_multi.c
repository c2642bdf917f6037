#define _GNU_SOURCE
#include "stats_multi.h"

#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* "PROG: 3/8 reports", rewritten in place on a terminal. */
static void progress(const struct stats_pool *pool, int done, int end)
{
    if (pool->quiet || !isatty(STDERR_FILENO) || pool->inputs->count < 2)
        return;
    if (end)
        fprintf(stderr, "\r\033[K");
    else
        fprintf(stderr, "\r%s: %d/%d reports", pool->prog, done, pool->inputs->count);
}

/* What a worker says of each input it did: which, and whether it went. */
struct worker_note {
    int idx;
    int ok;
};

/* Worker W of `jobs`: inputs W, W + jobs, ...; a note each on `fd`.  Long
 * lived, so that what a process costs to start and what an open builds once
 * (the schema a cache is compared with) are paid per worker, not per report. */
static void worker(const struct stats_pool *pool, const char *dir, int w, int jobs, int fd)
{
    for (int i = w; i < pool->inputs->count; i += jobs) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d.partial", dir, i);
        struct worker_note note = {i, pool->partial(pool->ctx, pool->inputs->paths[i], path) == 0};
        if (write(fd, &note, sizeof note) != (ssize_t)sizeof note)
            _exit(1);
    }
    _exit(0);
}

/* A worker that died: its first input without a note is the one it died on. */
static int worker_died(const struct stats_pool *pool, const char *noted, int w, int jobs,
                       int status)
{
    for (int i = w; i < pool->inputs->count; i += jobs)
        if (!noted[i]) {
            fprintf(stderr, "%s: cannot read '%s': its worker process died (%s %d)\n", pool->prog,
                    pool->inputs->paths[i], WIFSIGNALED(status) ? "signal" : "exit status",
                    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            return 1;
        }
    return 0;
}

/* Reads the workers' notes until they are all gone; the failures. */
static int read_notes(const struct stats_pool *pool, int fd, char *noted)
{
    struct worker_note note;
    int done = 0, failures = 0;
    while (read(fd, &note, sizeof note) == (ssize_t)sizeof note) {
        if (note.idx < 0 || note.idx >= pool->inputs->count || noted[note.idx])
            continue;
        noted[note.idx] = 1;
        failures += !note.ok;
        progress(pool, ++done, 0);
    }
    progress(pool, done, 1);
    return failures;
}

/* -j worker processes, each making the partials of its share of the inputs. */
static int run_local(const struct stats_pool *pool, const char *dir)
{
    int count = pool->inputs->count, failures = 0, fds[2];
    long long want = pool->jobs > 0 ? pool->jobs : sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = want < 1 ? 1 : want > count ? count : (int)want;
    pid_t *pids = calloc((size_t)jobs, sizeof *pids);
    char *noted = calloc((size_t)count, 1);
    if (!pids || !noted || pipe2(fds, O_CLOEXEC) != 0) {
        fprintf(stderr, "%s: cannot start the workers: %s\n", pool->prog, strerror(errno));
        free(pids);
        free(noted);
        return -1;
    }
    fflush(NULL); /* nothing buffered is written twice */
    for (int w = 0; w < jobs; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            close(fds[0]);
            worker(pool, dir, w, jobs, fds[1]);
        }
        if (pids[w] < 0)
            fprintf(stderr, "%s: cannot start a worker: %s\n", pool->prog, strerror(errno));
    }
    close(fds[1]);
    failures = read_notes(pool, fds[0], noted);
    close(fds[0]);
    for (int w = 0; w < jobs; w++) {
        int status = 0;
        if (pids[w] < 0 || waitpid(pids[w], &status, 0) != pids[w] ||
            !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            failures += worker_died(pool, noted, w, jobs, status);
    }
    free(pids);
    free(noted);
    return failures;
}

/* The directory of this program. */
static int own_dir(char *out, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    if (n <= 0)
        return -1;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

/* The Dask client (python3 -m asys_dask, installed in share/asys/python
 * beside bin/), which runs asys-stats --partial on the workers and writes
 * DIR/N.partial; it prints its own one-line errors. */
static int run_dask(const struct stats_pool *pool, const char *dir)
{
    char bindir[PATH_MAX], exe[PATH_MAX + 16], pypath[PATH_MAX + 64];
    if (own_dir(bindir, sizeof bindir) != 0) {
        fprintf(stderr, "%s: cannot find its own directory\n", pool->prog);
        return -1;
    }
    snprintf(exe, sizeof exe, "%s/asys-stats", bindir);
    snprintf(pypath, sizeof pypath, "%s/../share/asys/python", bindir);
    int argc = 0, max = 12 + pool->forward_count + pool->inputs->count;
    char **argv = calloc((size_t)max, sizeof *argv);
    char count[32];
    if (!argv) {
        fprintf(stderr, "%s: out of memory\n", pool->prog);
        return -1;
    }
    snprintf(count, sizeof count, "%d", pool->forward_count);
    /* ASYS_PYTHON: an interpreter other than the python3 of PATH */
    const char *python = getenv("ASYS_PYTHON");
    const char *head[] = {python && *python ? python : "python3",
                          "-m",
                          "asys_dask",
                          "--scheduler",
                          pool->scheduler,
                          "--asys-stats",
                          exe,
                          "--out",
                          dir,
                          "--forward",
                          count};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        argv[argc++] = (char *)head[i];
    for (int i = 0; i < pool->forward_count; i++)
        argv[argc++] = pool->forward[i];
    /* the workers' working directories are not this one: absolute paths */
    char **absolute = calloc((size_t)pool->inputs->count, sizeof *absolute);
    for (int i = 0; i < pool->inputs->count; i++) {
        char *path = absolute ? absolute[i] = realpath(pool->inputs->paths[i], NULL) : NULL;
        argv[argc++] = path ? path : pool->inputs->paths[i];
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        const char *old = getenv("PYTHONPATH");
        char *joined = NULL;
        if (asprintf(&joined, "%s%s%s", pypath, old && *old ? ":" : "", old ? old : "") > 0)
            setenv("PYTHONPATH", joined, 1);
        execvp(argv[0], argv);
        fprintf(stderr, "%s: cannot run python3 for --scheduler: %s\n", pool->prog,
                strerror(errno));
        _exit(127);
    }
    int status = 0, rc = -1;
    if (pid > 0 && waitpid(pid, &status, 0) == pid)
        rc = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    else
        fprintf(stderr, "%s: cannot run python3 for --scheduler: %s\n", pool->prog,
                strerror(errno));
    if (rc > 0 && !WIFEXITED(status))
        fprintf(stderr, "%s: the Dask client died (signal %d)\n", pool->prog, WTERMSIG(status));
    for (int i = 0; absolute && i < pool->inputs->count; i++)
        free(absolute[i]);
    free(absolute);
    free(argv);
    return rc;
}

int stats_pool_run(const struct stats_pool *pool, char *dir, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, size, "%s/asys-stats-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "%s: cannot create a directory in '%s': %s\n", pool->prog,
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return -1;
    }
    asys_cleanup_add(dir); /* an interrupt leaves no partials behind */
    return pool->scheduler ? run_dask(pool, dir) : run_local(pool, dir);
}

void stats_pool_clean(const char *dir, int count)
{
    asys_cleanup_remove(dir);
    char path[PATH_MAX];
    for (int i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/%d.partial", dir, i);
        unlink(path);
    }
    rmdir(dir);
}
