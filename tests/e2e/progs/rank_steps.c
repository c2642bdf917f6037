/* One rank of a multi-node run without a collectives library: STEPS steps,
 * each a "compute" range of the rank's own length then an "allreduce" range
 * that stands in for the collective (test_multireport.py).
 * usage: rank_steps STEPS [LATE_RANK LATE_US]
 * The rank is $RANK; LATE_RANK sleeps LATE_US more before each allreduce,
 * so that it is the straggler pccl_skew must name. */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <time.h>

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 4;
    long late_rank = argc > 2 ? atol(argv[2]) : -1;
    long late_us = argc > 3 ? atol(argv[3]) : 0;
    const char *rank_env = getenv("RANK");
    long rank = rank_env ? atol(rank_env) : 0;
    for (long i = 0; i < steps; i++) {
        nvtxRangePushA("compute");
        sleep_us(1000 + 100 * rank);
        if (rank == late_rank)
            sleep_us(late_us);
        nvtxRangePop();
        nvtxRangePushA("allreduce");
        sleep_us(500);
        nvtxRangePop();
    }
    return 0;
}
