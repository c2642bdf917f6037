#define _GNU_SOURCE
#include "cleanup.h"

#include "asys_error.h"
#include "file_mode.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define SLOTS 16

/* Written before `used` is set, read by the handler only where `used` is. */
static char paths[SLOTS][PATH_MAX];
static volatile sig_atomic_t used[SLOTS];
static int installed;

static char interrupted[128]; /* "PROGRAM: interrupted; nothing written\n", or "" */

void asys_cleanup_set_program(const char *program)
{
    snprintf(interrupted, sizeof interrupted, "%s: interrupted; nothing written\n", program);
}

/* A registered directory's files, then the directory: system calls only
 * (readdir may allocate; a signal handler must not). */
static void remove_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    char buf[4096] __attribute__((aligned(8)));
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long at = 0; at < n;) {
            struct linux_dirent64 {
                uint64_t ino;
                int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *e = (void *)(buf + at);
            if (e->reclen == 0)
                break;
            if (strcmp(e->name, ".") && strcmp(e->name, ".."))
                unlinkat(fd, e->name, 0);
            at += e->reclen;
        }
    close(fd);
    rmdir(path);
}

static void on_signal(int sig)
{
    int saved = errno;
    for (int i = 0; i < SLOTS; i++)
        if (used[i] && unlink(paths[i]) != 0 && errno == EISDIR)
            remove_dir(paths[i]);
    int asked = sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
    if (interrupted[0] && asked) { /* async-signal-safe: one write of a ready text */
        ssize_t ignored = write(STDERR_FILENO, interrupted, strlen(interrupted));
        (void)ignored;
    }
    errno = saved;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install(void)
{
    /* stops asked for, and crashes (a bug must not leave a half-written file) */
    static const int signals[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT, SIGABRT,
                                  SIGSEGV, SIGBUS,  SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction old;
        if (sigaction(signals[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue; /* ignored by whoever started us (nohup): keep it so */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(signals[i], &sa, NULL);
    }
    installed = 1;
}

int asys_cleanup_add(const char *path)
{
    if (!installed)
        install();
    if (strlen(path) >= PATH_MAX)
        return -1;
    for (int i = 0; i < SLOTS; i++) {
        if (used[i])
            continue;
        strcpy(paths[i], path);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        used[i] = 1;
        return 0;
    }
    return -1;
}

void asys_cleanup_remove(const char *path)
{
    for (int i = 0; i < SLOTS; i++)
        if (used[i] && !strcmp(paths[i], path))
            used[i] = 0;
}

static void split(const char *target, char *dir, size_t dsize, char *base, size_t bsize)
{
    char a[PATH_MAX], b[PATH_MAX];
    snprintf(a, sizeof a, "%s", target);
    snprintf(b, sizeof b, "%s", target);
    snprintf(dir, dsize, "%s", dirname(a));
    snprintf(base, bsize, "%s", basename(b));
}

int asys_temp_template(const char *target, int hidden, char *out, size_t size)
{
    char dir[PATH_MAX], base[PATH_MAX];
    split(target, dir, sizeof dir, base, sizeof base);
    int n = hidden ? snprintf(out, size, "%s/.%s.%d.XXXXXX", dir, base, (int)getpid())
                   : snprintf(out, size, "%s.tmp-%d-XXXXXX", target, (int)getpid());
    return n > 0 && (size_t)n < size ? 0 : -1;
}

void asys_remove_stale_temps(const char *target, int hidden)
{
    char dir[PATH_MAX], base[PATH_MAX], prefix[PATH_MAX + 8];
    split(target, dir, sizeof dir, base, sizeof base);
    int n = hidden ? snprintf(prefix, sizeof prefix, ".%s.", base)
                   : snprintf(prefix, sizeof prefix, "%s.tmp-", base);
    if (n <= 0 || (size_t)n >= sizeof prefix)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)n) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + n, &end, 10);
        /* ours: PID, a separator, and mkostemp's six characters */
        if (end == e->d_name + n || (*end != '.' && *end != '-') || strlen(end + 1) != 6 ||
            pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* its program still runs (or is not ours to ask) */
        unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* renameat2 without replacing; link + unlink where the file system lacks
 * RENAME_NOREPLACE.  0, or -1 with errno (EEXIST: the path is taken). */
static int rename_no_replace(const char *tmp, const char *path)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    if (link(tmp, path) != 0)
        return -1;
    unlink(tmp);
    return 0;
}

/* rename(2) over an existing file makes ext4 (auto_da_alloc) start writing
 * the new file's delayed blocks out at once: 1.2-2 ms for 2 MB on this
 * project's VMs, 0.2-0.6 ms for a 170 KiB report.  The two names exchanged
 * and the old file removed do not, and the path names a whole file at every
 * moment, as with rename.  Only over a regular file: an exchange would move
 * a directory. */
static int rename_replacing(const char *tmp, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
        renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) != 0)
        return rename(tmp, path);
    if (unlink(tmp) != 0 && errno == EISDIR) { /* made a directory meanwhile: put it back */
        renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE);
        errno = EISDIR;
        return -1;
    }
    return 0;
}

int asys_publish_temp(const char *tmp, const char *path, enum asys_publish_mode mode,
                      struct asys_err *err)
{
    asys_give_default_mode(tmp);
    int rc = mode == ASYS_PUBLISH_REPLACE ? rename_replacing(tmp, path)
                                          : rename_no_replace(tmp, path);
    int e = errno;
    if (rc != 0)
        unlink(tmp);
    asys_cleanup_remove(tmp);
    if (rc == 0)
        return 0;
    if (e == EEXIST && mode == ASYS_PUBLISH_NO_REPLACE)
        return asys_fail(err, "file exists (use --force-overwrite)");
    return asys_fail_errno(err, e, "%s", "");
}
