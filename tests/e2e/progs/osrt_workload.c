/* Calls that block for known times, for the OSRT tests.
 * usage: osrt_workload MODE...   (sleep pipe mutex cond poll spawn timeout short)
 * Prints one line per mode so traced and untraced output can be compared. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void sleeps(void)
{
    for (int i = 0; i < 5; i++)
        usleep(20000);
    struct timespec ts = {0, 15000000};
    for (int i = 0; i < 2; i++)
        nanosleep(&ts, NULL);
    puts("sleep: 5 usleep of 20 ms, 2 nanosleep of 15 ms");
}

static int pipe_fds[2];
static void *late_writer(void *arg)
{
    (void)arg;
    usleep(30000);
    if (write(pipe_fds[1], "x", 1) != 1)
        abort();
    return NULL;
}

static void pipe_read(void)
{
    char c;
    if (pipe(pipe_fds) != 0)
        abort();
    pthread_t t;
    pthread_create(&t, NULL, late_writer, NULL);
    ssize_t n = read(pipe_fds[0], &c, 1);
    pthread_join(t, NULL);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    printf("pipe: read %zd byte after 30 ms\n", n);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *holder(void *arg)
{
    pthread_mutex_lock(&lock);
    *(volatile int *)arg = 1;
    usleep(50000);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void mutex_contention(void)
{
    volatile int held = 0;
    pthread_t t;
    pthread_create(&t, NULL, holder, (void *)&held);
    while (!held)
        sched_yield();
    pthread_mutex_lock(&lock); /* waits until the holder lets go */
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    for (int i = 0; i < 1000; i++) { /* uncontended: never recorded */
        pthread_mutex_lock(&lock);
        pthread_mutex_unlock(&lock);
    }
    puts("mutex: 1 contended lock, 1000 uncontended");
}

static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int signaled;
static void *signaler(void *arg)
{
    (void)arg;
    usleep(40000);
    pthread_mutex_lock(&cond_lock);
    signaled = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&cond_lock);
    return NULL;
}

static void cond_wait(void)
{
    pthread_t t;
    pthread_create(&t, NULL, signaler, NULL);
    pthread_mutex_lock(&cond_lock);
    while (!signaled)
        pthread_cond_wait(&cond, &cond_lock);
    pthread_mutex_unlock(&cond_lock);
    pthread_join(t, NULL);
    puts("cond: signaled after 40 ms");
}

static void poll_timeout(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        abort();
    struct pollfd p = {fds[0], POLLIN, 0};
    int n = poll(&p, 1, 25);
    close(fds[0]);
    close(fds[1]);
    printf("poll: %d ready after a 25 ms timeout\n", n);
}

static void spawn(void)
{
    int rc = system("true");
    pid_t pid;
    char *argv[] = {"true", NULL};
    int spawned = posix_spawnp(&pid, "true", NULL, NULL, argv, environ);
    int status = -1;
    if (spawned == 0)
        waitpid(pid, &status, 0);
    printf("spawn: system %d, posix_spawnp %d, status %d\n", rc, spawned, status);
}

static void timeout(void)
{
    sem_t sem;
    sem_init(&sem, 0, 0);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 20000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    int rc = sem_timedwait(&sem, &until);
    printf("timeout: sem_timedwait %d (%s)\n", rc, rc ? strerror(errno) : "acquired");
    sem_destroy(&sem);
}

static void short_calls(void)
{
    static char buf[4096], stream_buffer[8192];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    setvbuf(f, stream_buffer, _IOFBF, sizeof stream_buffer); /* no allocation on first write */
    for (int i = 0; i < 1000; i++)
        fwrite("x", 1, 1, f); /* into the stream's buffer: well under a microsecond */
    fclose(f);
    puts("short: 1000 buffered fwrite");
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } modes[] = {{"sleep", sleeps},    {"pipe", pipe_read},    {"mutex", mutex_contention},
                 {"cond", cond_wait},  {"poll", poll_timeout}, {"spawn", spawn},
                 {"timeout", timeout}, {"short", short_calls}};
    for (int i = 1; i < argc; i++) {
        size_t m = 0;
        while (m < sizeof modes / sizeof *modes && strcmp(argv[i], modes[m].name))
            m++;
        if (m == sizeof modes / sizeof *modes) {
            fprintf(stderr, "unknown mode %s\n", argv[i]);
            return 2;
        }
        modes[m].run();
    }
    return 0;
}
