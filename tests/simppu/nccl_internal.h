/* simppu libnccl.so.2: what the stand-in's files share.  A test fixture:
 * never linked into asys. */
#ifndef SIMPPU_NCCL_INTERNAL_H
#define SIMPPU_NCCL_INTERNAL_H

#include <nccl.h>
#include <pthread.h>
#include <stdint.h>

#include "pccl_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_CHANNELS 32
#define NCCL_STEPS 8
#define MAX_PLAN_TASKS 32 /* tasks per kernel; a bigger group launches several */

/* ncclFunc_t's numbering */
enum {
    FUNC_BROADCAST = 0,
    FUNC_REDUCE = 1,
    FUNC_ALLGATHER = 2,
    FUNC_REDUCESCATTER = 3,
    FUNC_ALLREDUCE = 4,
    FUNC_SENDRECV = 5,
    FUNC_SEND = 6,
    FUNC_RECV = 7,
    FUNC_COUNT = 11,
};

/* ---- the profiler plugin (nccl_profiler.c), as NCCL 2.28 drives it ---- */
struct profiler {
    int version; /* of the table found */
    pccl_result_t (*init)(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes,
                          int nranks, int rank, pccl_log_fn log);
    pccl_result_t (*start)(void *ctx, void **handle, struct pccl_descr_v5 *d);
    pccl_result_t (*stop)(void *handle);
    pccl_result_t (*record)(void *handle, int state, union pccl_state_args_v4 *args);
    pccl_result_t (*finalize)(void *ctx);
};
extern struct profiler *nccl_profiler; /* NULL: no plugin */
extern int nccl_profiler_mask; /* ncclProfilerEventMask: set by the plugin's init */
void nccl_profiler_load(void); /* each communicator's init: reference counted */
void nccl_profiler_unload(void);

/* ---- communicators, tasks, plans ---- */
struct task {
    int func;
    int is_p2p;
    size_t count; /* as the Coll event reports it (AllGather, Broadcast: bytes) */
    int datatype;
    int root_or_peer;
    const void *send;
    void *recv;
    cudaStream_t stream;
    int mask; /* the activation mask when it was issued */
    void *group_api, *api; /* ncclProfilerApiState's handles then */
    void *handle; /* the Coll or P2p event */
    /* what the stand-in simulates (nccl.c, task_shape) */
    int channels;
    int channel0; /* p2p: its channel */
    int send_steps, recv_steps; /* per channel; 0: no op that way */
    int send_peer, recv_peer;
    int step_bytes;
    uint64_t offset_ns, duration_ns; /* inside the plan's kernel */
};

struct ncclComm;

struct plan {
    struct ncclComm *comm;
    struct task *tasks;
    int ntasks;
    int channels; /* grid */
    cudaStream_t stream;
    uint64_t kernel_ns;
    void *kernel_launch, *group; /* their events */
    /* the kernel's simulated times (CLOCK_MONOTONIC), from simppu */
    int decided;
    uint64_t start_ns, end_ns;
    struct plan *next; /* the proxy's queue */
    int refs; /* the host (until its events stop) and the proxy */
};
void plan_release(struct plan *p);

struct ncclComm {
    uint32_t magic;
    int rank, nranks, device;
    uint64_t hash;
    char name[64];
    int has_name;
    void *profiler_ctx;
    uint64_t seq[FUNC_COUNT];
    int channels;
    /* the group being built on the calling thread */
    struct task *tasks;
    int ntasks, task_cap;
    struct ncclComm *group_next;
    int in_group;
    /* the proxy thread */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct plan *head, *tail;
    int busy; /* a plan is being progressed */
    int stop;
    int proxy_running;
    pthread_t proxy;
};

/* nccl_proxy.c */
int proxy_start(struct ncclComm *comm);
void proxy_post(struct ncclComm *comm, struct plan *p);
void proxy_stop(struct ncclComm *comm); /* drains the queue, joins */
void proxy_drain(struct ncclComm *comm);

/* SIMPPU_NCCL_TIMING=FILE: the time spent inside the plugin's calls, by
 * bucket (the thread's current one), appended to FILE when the plugin is
 * closed (bench/pccl.py) */
enum { BUCKET_APP, BUCKET_PROXY, BUCKET_STEP, BUCKET_COUNT };
extern __thread int nccl_bucket;

/* settings (SIMPPU_NCCL_*), read once */
struct nccl_settings {
    int channels;
    int chunk_bytes;
    uint64_t latency_ns;
    double gbps;
    int net_events;
    int max_version;
    int64_t realtime_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC, for the GPU timer */
};
extern struct nccl_settings nccl_settings;
uint64_t nccl_now_ns(void);
void nccl_sleep_until(uint64_t ns);
const char *nccl_func_name(int func);

#endif
