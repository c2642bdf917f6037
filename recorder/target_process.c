#define _GNU_SOURCE
#include "target_process.h"
#include "notes.h"
#include "read_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static sigset_t original_mask;

static void handled_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGQUIT);
}

static void on_sigchld(int sig)
{
    (void)sig; /* never runs while blocked; exists so SIGCHLD is not ignored */
}

void asys_target_block_signals(void)
{
    sigset_t set;
    handled_signals(&set);
    sigprocmask(SIG_BLOCK, &set, &original_mask);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigchld;
    sigaction(SIGCHLD, &sa, NULL);
}

/* The program's environment: this process's, with `env`'s variables set
 * (the launcher's table already holds LD_PRELOAD joined with the user's).
 * Built before the fork: the child of a launcher with threads must not
 * allocate (another thread may have held the allocator's lock at the fork;
 * ASan's does not reset it). */
struct child_env {
    char **vars; /* NULL-terminated, for execvpe */
    char *text; /* the NAME=VALUE strings made here, one block */
};

static void child_env_free(struct child_env *c)
{
    free(c->text);
    free(c->vars);
}

/* The index in vars (of `count`) of the variable `name`, or -1. */
static int env_index(char **vars, int count, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < count; i++)
        if (!strncmp(vars[i], name, n) && vars[i][n] == '=')
            return i;
    return -1;
}

static int child_env_build(struct child_env *c, const struct asys_env *env)
{
    extern char **environ;
    int count = 0;
    while (environ[count])
        count++;
    size_t text_size = 1;
    for (int i = 0; i < env->count; i++)
        text_size += strlen(env->vars[i].name) + strlen(env->vars[i].value) + 2;
    c->vars = calloc((size_t)count + (size_t)env->count + 1, sizeof *c->vars);
    c->text = malloc(text_size);
    if (!c->vars || !c->text)
        return -1;
    memcpy(c->vars, environ, (size_t)count * sizeof *c->vars);
    char *next = c->text;
    for (int i = 0; i < env->count; i++) {
        const struct asys_env_var *v = &env->vars[i];
        int at = env_index(c->vars, count, v->name);
        c->vars[at >= 0 ? at : count++] = next;
        next += sprintf(next, "%s=%s", v->name, v->value) + 1;
    }
    return 0;
}

/* In the forked child: waits for the launcher's go, then becomes the
 * program; on failure reports errno through `report_fd`.  Allocates
 * nothing (see struct child_env). */
static void __attribute__((noreturn))
become_program(char **argv, char **vars, int report_fd, int go_fd, pid_t launcher, int die_with_us,
               int hide_output)
{
    if (go_fd >= 0) { /* until the launcher has attached what it attaches */
        char byte;
        ssize_t got;
        do
            got = read(go_fd, &byte, 1);
        while (got < 0 && errno == EINTR);
        close(go_fd);
    }
    signal(SIGCHLD, SIG_DFL);
    sigprocmask(SIG_SETMASK, &original_mask, NULL);
    if (die_with_us) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != launcher) /* asys died before the call: as if after */
            raise(SIGTERM);
    }
    if (hide_output) { /* -w false */
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
            close(null);
        }
    }
    execvpe(argv[0], argv, vars);
    int e = errno;
    ssize_t ignored = write(report_fd, &e, sizeof e);
    (void)ignored;
    _exit(127);
}

static void close_pair(int fds[2])
{
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    fds[0] = fds[1] = -1;
}

int asys_target_spawn(struct asys_target *t, char **argv, const struct asys_env *env,
                      int die_with_us, int hide_output, void (*before_exec)(pid_t child, void *arg),
                      void *before_exec_arg, struct asys_err *err)
{
    pid_t launcher = getpid();
    memset(t, 0, sizeof *t);
    struct child_env child_env = {0};
    int report[2] = {-1, -1}, go[2] = {-1, -1}, rc = -1;
    if (child_env_build(&child_env, env) != 0) {
        asys_fail(err, "out of memory");
        goto out;
    }
    if (pipe2(report, O_CLOEXEC) != 0 || (before_exec && pipe2(go, O_CLOEXEC) != 0)) {
        asys_fail_errno(err, errno, "pipe");
        goto out;
    }
    /* Orphaned descendants are re-parented to us, so --wait all sees them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    pid_t pid = fork();
    if (pid < 0) {
        asys_fail_errno(err, errno, "fork");
        goto out;
    }
    if (pid == 0) {
        close(report[0]);
        if (go[1] >= 0)
            close(go[1]);
        become_program(argv, child_env.vars, report[1], go[0], launcher, die_with_us, hide_output);
    }
    close(report[1]);
    report[1] = -1;
    if (before_exec) {
        close(go[0]);
        go[0] = -1;
        before_exec(pid, before_exec_arg);
        char byte = 1;
        ssize_t ignored = write(go[1], &byte, 1);
        (void)ignored;
    }
    close_pair(go);
    int exec_errno = 0;
    ssize_t n;
    do
        n = read(report[0], &exec_errno, sizeof exec_errno);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof exec_errno) {
        waitpid(pid, NULL, 0);
        asys_fail_errno(err, exec_errno, "%s", "");
        goto out;
    }
    t->pid = pid;
    rc = 0;
out:
    close_pair(report);
    close_pair(go);
    child_env_free(&child_env);
    return rc;
}

static long ms_until(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
    return ms < 0 ? 0 : ms;
}

static void advance(struct timespec *deadline, int ms)
{
    clock_gettime(CLOCK_MONOTONIC, deadline);
    deadline->tv_sec += ms / 1000;
    deadline->tv_nsec += (long)(ms % 1000) * 1000000;
    if (deadline->tv_nsec >= 1000000000) {
        deadline->tv_sec++;
        deadline->tv_nsec -= 1000000000;
    }
}

/* Reaps what has ended; returns 1 when no child is left at all. */
static int reap(struct asys_target *t)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid == 0)
            return 0;
        if (pid < 0)
            return errno == ECHILD;
        if (pid == t->pid) {
            t->status = status;
            t->ended = 1;
        }
    }
}

/* The first interrupt goes to the program as it came; a program that
 * ignores it gets SIGTERM at the second and SIGKILL at the third, so that
 * asys never waits forever and the report is still written. */
static void escalate(struct asys_target *t, int sig, const siginfo_t *info)
{
    t->interrupts++;
    if (t->interrupts == 1) {
        advance(&t->interrupt_hint_at, 2000);
        /* si_code <= 0: sent by a process (kill, sigqueue); the terminal's
         * signals (SI_KERNEL) already reached the whole foreground group. */
        if (info->si_code <= 0)
            kill(t->pid, sig);
        return;
    }
    int send = t->interrupts == 2 ? SIGTERM : SIGKILL;
    asys_note(ASYS_NOTE_NOTICE, "interrupted again: sending %s to the program (pid %d)%s",
              send == SIGTERM ? "SIGTERM" : "SIGKILL", (int)t->pid,
              send == SIGTERM ? "; once more sends SIGKILL" : "");
    kill(t->pid, send);
}

void asys_target_set_duration(struct asys_target *t, uint64_t seconds, int signal, int hold)
{
    t->has_duration = 1;
    advance(&t->duration_end, 0);
    t->duration_end.tv_sec += (time_t)seconds;
    t->duration_signal = signal;
    t->hold_until_duration = hold;
    t->duration_expired = 0;
}

void asys_target_set_wake(struct asys_target *t, uint64_t seconds, void (*wake)(void *arg),
                          void *arg)
{
    t->has_wake = 1;
    advance(&t->wake_at, 0);
    t->wake_at.tv_sec += (time_t)seconds;
    t->wake = wake;
    t->wake_arg = arg;
}

static void wake_if_due(struct asys_target *t)
{
    if (!t->has_wake || ms_until(&t->wake_at) > 0)
        return;
    t->has_wake = 0;
    t->wake(t->wake_arg);
}

/* --duration reached: the program gets its signal; 1 when the wait ends
 * now (the program goes on, or it had ended already). */
static int duration_over(struct asys_target *t)
{
    if (!t->has_duration || t->duration_expired || ms_until(&t->duration_end) > 0)
        return 0;
    t->duration_expired = 1;
    if (t->duration_signal && !t->ended)
        kill(t->pid, t->duration_signal);
    return !t->duration_signal || t->ended;
}

void asys_target_wait(struct asys_target *t, enum asys_wait_mode mode, void (*tick)(void *),
                      void *tick_arg, int tick_ms)
{
    sigset_t set;
    handled_signals(&set);
    struct timespec deadline;
    advance(&deadline, tick_ms);
    for (;;) {
        int none_left = reap(t);
        int holding = t->hold_until_duration && t->has_duration && !t->duration_expired;
        if (t->ended && (mode == ASYS_WAIT_PRIMARY || none_left) && !holding)
            return;
        if (duration_over(t))
            return;
        wake_if_due(t);
        long ms = ms_until(&deadline);
        if (t->has_duration && !t->duration_expired && ms_until(&t->duration_end) < ms)
            ms = ms_until(&t->duration_end);
        if (t->has_wake && ms_until(&t->wake_at) < ms)
            ms = ms_until(&t->wake_at);
        struct timespec timeout = {ms / 1000, (ms % 1000) * 1000000};
        siginfo_t info;
        int sig = sigtimedwait(&set, &info, &timeout);
        if (sig < 0) {
            if (errno == EAGAIN) {
                if (t->interrupts == 1 && !t->interrupt_hint_said &&
                    ms_until(&t->interrupt_hint_at) == 0) {
                    t->interrupt_hint_said = 1;
                    asys_note(ASYS_NOTE_NOTICE, "the program is still running after the "
                                                "interrupt; interrupt again to send it SIGTERM");
                }
                if (tick)
                    tick(tick_arg);
                advance(&deadline, tick_ms);
            }
            continue;
        }
        if (sig == SIGCHLD)
            continue;
        if (t->ended) { /* only descendants are left: the user wants the report now */
            t->stopped_by_user = 1;
            return;
        }
        escalate(t, sig, &info);
    }
}

/* pid and parent of /proc/PID/stat; 0 when unreadable (it ended). */
static int read_parent(pid_t pid, pid_t *ppid, char *comm, size_t comm_size)
{
    char text[512];
    const char *name;
    size_t name_len;
    const char *rest = asys_proc_stat(pid, text, sizeof text, &name, &name_len);
    char state;
    int parent;
    if (!rest || sscanf(rest, " %c %d", &state, &parent) != 2 || state == 'Z')
        return 0;
    snprintf(comm, comm_size, "%.*s", (int)name_len, name);
    *ppid = parent;
    return 1;
}

void asys_target_find_survivors(struct asys_target *t)
{
    t->survivor_count = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        char comm[16];
        pid_t parent;
        if (*end || pid <= 0 || pid == self || !read_parent((pid_t)pid, &parent, comm, sizeof comm))
            continue;
        /* up the parent chain to the launcher (bounded: a chain is short) */
        char ignored[16];
        for (int depth = 0; parent > 1 && parent != self && depth < 64; depth++)
            if (!read_parent(parent, &parent, ignored, sizeof ignored))
                parent = 0;
        if (parent != self)
            continue;
        if (t->survivor_count < ASYS_SURVIVORS_LISTED) {
            t->survivors[t->survivor_count].pid = (pid_t)pid;
            memcpy(t->survivors[t->survivor_count].name, comm, sizeof comm);
        }
        t->survivor_count++;
    }
    closedir(d);
}

int asys_target_exit_code(const struct asys_target *t)
{
    if (WIFEXITED(t->status))
        return WEXITSTATUS(t->status);
    if (WIFSIGNALED(t->status))
        return 128 + WTERMSIG(t->status);
    return 1;
}
