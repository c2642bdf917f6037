/* Start/end ranges that end on another thread.
 * Range "handoff" starts on the main thread and ends on a worker after 20 ms;
 * COUNT ranges "reverse" start on the worker and end on the main thread. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define COUNT 5
static nvtxRangeId_t handoff;
static nvtxRangeId_t reverse[COUNT];

static void *worker(void *arg)
{
    (void)arg;
    usleep(20000);
    nvtxRangeEnd(handoff);
    for (int i = 0; i < COUNT; i++)
        reverse[i] = nvtxRangeStartA("reverse");
    return NULL;
}

int main(void)
{
    handoff = nvtxRangeStartA("handoff");
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    usleep(5000);
    for (int i = 0; i < COUNT; i++)
        nvtxRangeEnd(reverse[i]);
    return 0;
}
