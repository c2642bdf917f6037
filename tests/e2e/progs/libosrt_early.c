/* Linked into osrt_edge: its constructor may run before asys's, sleeps, and
 * starts a thread that keeps making calls (a thread older than asys's init). */
#include <pthread.h>
#include <unistd.h>

static void *early_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++)
        usleep(20000);
    return NULL;
}

pthread_t osrt_early_thread;

__attribute__((constructor)) static void early_constructor(void)
{
    usleep(1000);
    pthread_create(&osrt_early_thread, NULL, early_thread, NULL);
}
