/* Demo workload: a training-style loop annotated with HGTX (NVTX) ranges.
 * The main thread runs EPOCHS x STEPS steps (load, compute, sync); two loader
 * threads decode batches in their own domain with the batch number as payload.
 * usage: demo_pipeline [EPOCHS] [STEPS] */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int epochs = 3, steps = 20;
static nvtxDomainHandle_t loader_domain;

static void range(nvtxDomainHandle_t domain, const char *name, uint32_t color, int64_t payload,
                  useconds_t work_us)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = color;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = payload;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(domain, &a);
    usleep(work_us);
    nvtxDomainRangePop(domain);
}

static void *loader(void *arg)
{
    long id = (long)arg;
    char name[16];
    snprintf(name, sizeof name, "loader-%ld", id);
    pthread_setname_np(pthread_self(), name);
    for (int b = 0; b < epochs * steps / 2; b++)
        range(loader_domain, "decode", 0xFF2E86C1, b, 700);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        epochs = atoi(argv[1]);
    if (argc > 2)
        steps = atoi(argv[2]);
    loader_domain = nvtxDomainCreateA("loader");
    pthread_t threads[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, loader, (void *)i);
    for (int e = 0; e < epochs; e++) {
        nvtxRangePushA("epoch");
        for (int s = 0; s < steps; s++) {
            nvtxRangePushA("step");
            range(NULL, "load", 0xFF28B463, s, 300);
            range(NULL, "compute", 0xFFCB4335, s, 1500);
            range(NULL, "sync", 0xFF7D3C98, s, 100);
            nvtxRangePop();
        }
        nvtxMarkA("epoch done");
        nvtxRangePop();
    }
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    printf("demo: %d epochs of %d steps\n", epochs, steps);
    return 0;
}
