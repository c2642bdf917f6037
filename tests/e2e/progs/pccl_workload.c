/* A known sequence of NCCL calls, for the PCCL tests (built against the
 * toolkit's nccl.h; runs on simppu's libnccl.so.2 stand-in).
 *
 * usage: pccl_workload MODE RANKS ROUNDS [nodestroy]
 *   MODE threads: one process, the ranks as communicators of ncclCommInitAll,
 *                 each call issued for every rank inside one group
 *   MODE procs:   RANKS processes (fork), ncclCommInitRank over one unique id
 *   MODE bench:   threads, ROUNDS all-reduces of 8 KiB timed, nothing else;
 *                 prints "ns_per_call N cpu_ns_per_call C" (wall time, and the
 *                 CPU time of the whole process, every thread, per call)
 * Each round, in an HGTX range named after it, per rank:
 *   "allreduce": ncclAllReduce of AR_COUNT floats
 *   "allgather": ncclAllGather of AG_COUNT floats per rank
 *   "broadcast": ncclBroadcast of BC_COUNT floats from rank ROUND % RANKS
 *   "sendrecv":  ncclSend of SR_COUNT floats to rank+1, ncclRecv from rank-1
 * Rank r runs on device r (SIMPPU_DEVICES >= RANKS) and its own stream.
 * nodestroy: the communicators are never destroyed (the plugin is
 * finalized at process exit).  Exits 1 on an NCCL or CUDA error. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AR_COUNT 262144 /* 1 MiB */
#define AG_COUNT 65536 /* 256 KiB per rank */
#define BC_COUNT 131072 /* 512 KiB */
#define SR_COUNT 32768 /* 128 KiB */
#define MAX_RANKS 8

#define CHECK_NCCL(call) \
    do { \
        ncclResult_t rc_ = (call); \
        if (rc_ != ncclSuccess) { \
            fprintf(stderr, "%s: %s\n", #call, ncclGetErrorString(rc_)); \
            exit(1); \
        } \
    } while (0)
#define CHECK_CUDA(call) \
    do { \
        cudaError_t rc_ = (call); \
        if (rc_ != cudaSuccess) { \
            fprintf(stderr, "%s: error %d\n", #call, (int)rc_); \
            exit(1); \
        } \
    } while (0)

struct rank {
    ncclComm_t comm;
    cudaStream_t stream;
    float *send, *recv;
};

static int ranks, rounds;

static void setup(struct rank *r, int device)
{
    CHECK_CUDA(cudaSetDevice(device));
    CHECK_CUDA(cudaStreamCreate(&r->stream));
    CHECK_CUDA(cudaMalloc((void **)&r->send, AR_COUNT * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&r->recv, AR_COUNT * sizeof(float) * MAX_RANKS));
}

/* One round for the ranks in `rs` (all of them in threads mode, one in procs). */
static void round_of(struct rank *rs, int first, int count, int round)
{
    nvtxRangePushA("allreduce");
    CHECK_NCCL(ncclGroupStart());
    for (int i = 0; i < count; i++)
        CHECK_NCCL(ncclAllReduce(rs[i].send, rs[i].recv, AR_COUNT, ncclFloat32, ncclSum, rs[i].comm,
                                 rs[i].stream));
    CHECK_NCCL(ncclGroupEnd());
    nvtxRangePop();

    nvtxRangePushA("allgather");
    CHECK_NCCL(ncclGroupStart());
    for (int i = 0; i < count; i++)
        CHECK_NCCL(
            ncclAllGather(rs[i].send, rs[i].recv, AG_COUNT, ncclFloat32, rs[i].comm, rs[i].stream));
    CHECK_NCCL(ncclGroupEnd());
    nvtxRangePop();

    nvtxRangePushA("broadcast");
    CHECK_NCCL(ncclGroupStart());
    for (int i = 0; i < count; i++)
        CHECK_NCCL(ncclBroadcast(rs[i].send, rs[i].recv, BC_COUNT, ncclFloat32, round % ranks,
                                 rs[i].comm, rs[i].stream));
    CHECK_NCCL(ncclGroupEnd());
    nvtxRangePop();

    nvtxRangePushA("sendrecv");
    CHECK_NCCL(ncclGroupStart());
    for (int i = 0; i < count; i++) {
        int me = first + i;
        CHECK_NCCL(ncclSend(rs[i].send, SR_COUNT, ncclFloat32, (me + 1) % ranks, rs[i].comm,
                            rs[i].stream));
        CHECK_NCCL(ncclRecv(rs[i].recv, SR_COUNT, ncclFloat32, (me + ranks - 1) % ranks, rs[i].comm,
                            rs[i].stream));
    }
    CHECK_NCCL(ncclGroupEnd());
    nvtxRangePop();
}

static void finish(struct rank *rs, int count, int destroy)
{
    for (int i = 0; i < count; i++)
        CHECK_CUDA(cudaStreamSynchronize(rs[i].stream));
    for (int i = 0; i < count && destroy; i++)
        CHECK_NCCL(ncclCommDestroy(rs[i].comm));
}

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "threads";
    ranks = argc > 2 ? atoi(argv[2]) : 2;
    rounds = argc > 3 ? atoi(argv[3]) : 3;
    int destroy = !(argc > 4 && !strcmp(argv[4], "nodestroy"));
    if (ranks < 1 || ranks > MAX_RANKS || rounds < 0) {
        fprintf(stderr, "usage: pccl_workload threads|procs|bench RANKS ROUNDS [nodestroy]\n");
        return 2;
    }
    struct rank rs[MAX_RANKS];
    memset(rs, 0, sizeof rs);
    if (!strcmp(mode, "threads") || !strcmp(mode, "bench")) {
        ncclComm_t comms[MAX_RANKS];
        for (int r = 0; r < ranks; r++)
            setup(&rs[r], r);
        CHECK_NCCL(ncclCommInitAll(comms, ranks, NULL));
        for (int r = 0; r < ranks; r++)
            rs[r].comm = comms[r];
        if (!strcmp(mode, "bench")) {
            uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
            for (int i = 0; i < rounds; i++) {
                CHECK_NCCL(ncclGroupStart());
                for (int r = 0; r < ranks; r++)
                    CHECK_NCCL(ncclAllReduce(rs[r].send, rs[r].recv, 2048, ncclFloat32, ncclSum,
                                             rs[r].comm, rs[r].stream));
                CHECK_NCCL(ncclGroupEnd());
            }
            for (int r = 0; r < ranks; r++)
                CHECK_CUDA(cudaStreamSynchronize(rs[r].stream));
            for (int r = 0; r < ranks; r++) /* the proxy threads done too */
                CHECK_NCCL(ncclCommFinalize(rs[r].comm));
            uint64_t t1 = clock_ns(CLOCK_MONOTONIC), c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
            double calls = rounds ? (double)rounds * ranks : 1.0;
            printf("ns_per_call %.1f cpu_ns_per_call %.1f\n", (double)(t1 - t0) / calls,
                   (double)(c1 - c0) / calls);
        } else {
            for (int i = 0; i < rounds; i++)
                round_of(rs, 0, ranks, i);
        }
        finish(rs, ranks, destroy);
        return 0;
    }
    if (strcmp(mode, "procs") != 0) {
        fprintf(stderr, "pccl_workload: unknown mode '%s'\n", mode);
        return 2;
    }
    ncclUniqueId id;
    CHECK_NCCL(ncclGetUniqueId(&id));
    fflush(stdout);
    for (int r = 0; r < ranks; r++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            setup(&rs[0], r);
            CHECK_NCCL(ncclCommInitRank(&rs[0].comm, ranks, id, r));
            for (int i = 0; i < rounds; i++)
                round_of(rs, r, 1, i);
            finish(rs, 1, destroy);
            exit(0); /* not _exit: the CUDA runtime's exit handlers flush its activity */
        }
    }
    int failed = 0;
    for (int r = 0; r < ranks; r++) {
        int status;
        if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed = 1;
    }
    return failed;
}
