/* Wrapped calls in awkward places: before asys's constructor (libosrt_early),
 * in a signal handler, in a fork child, with failing calls (errno must pass
 * through), and beside threads that hammer malloc. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern pthread_t osrt_early_thread;

static void on_alarm(int sig)
{
    (void)sig;
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL); /* traced inside the handler */
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        if (write(fd, "x", 1) != 1)
            _exit(5);
        close(fd);
    }
}

static void *malloc_hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        void *p = malloc((size_t)(i % 4096) + 1);
        if (!p)
            abort();
        free(p);
        if (i % 1000 == 0)
            usleep(0);
    }
    return NULL;
}

int main(void)
{
    /* a signal handler that makes traced calls while main waits in sigsuspend */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, &old);
    struct itimerval it = {{0, 0}, {0, 10000}};
    setitimer(ITIMER_REAL, &it, NULL);
    sigsuspend(&old);
    sigprocmask(SIG_SETMASK, &old, NULL);
    puts("signal handler ran");

    /* a fork child with calls of its own */
    pid_t child = fork();
    if (child == 0) {
        usleep(15000);
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    printf("child status %d\n", status); /* a crash in the child would show here */

    /* failing calls keep their errno */
    char c;
    ssize_t n = read(-1, &c, 1);
    printf("read(-1) = %zd, %s\n", n, strerror(errno));
    errno = 0;
    n = write(1000, &c, 1);
    printf("write(1000) = %zd, %s\n", n, strerror(errno));

    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, malloc_hammer, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    pthread_join(osrt_early_thread, NULL);
    puts("malloc threads done");
    return 0;
}
