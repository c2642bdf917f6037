/* One rank of a multi-node run without a collectives library
 * (test_multireport.py): STEPS steps of PERIOD_US on CLOCK_REALTIME from
 * T0_NS, which every rank is given, as ranks synchronized by their
 * collectives are: each step a "compute" range to the step's middle, then
 * an "allreduce" range that every rank leaves at three quarters of the step
 * (a collective's completion), standing in for the collective.
 * usage: rank_steps STEPS T0_NS PERIOD_US [LATE_RANK LATE_US]
 * The rank is $RANK; LATE_RANK computes LATE_US longer in every step (less
 * than a quarter period), so that it arrives last at each allreduce. */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <time.h>

static void sleep_until(long long ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    long steps = atol(argv[1]);
    long long t0 = atoll(argv[2]), period = atoll(argv[3]) * 1000LL;
    long late_rank = argc > 4 ? atol(argv[4]) : -1;
    long long late = argc > 5 ? atoll(argv[5]) * 1000LL : 0;
    const char *rank_env = getenv("RANK");
    long rank = rank_env ? atol(rank_env) : 0;
    for (long i = 0; i < steps; i++) {
        long long start = t0 + i * period;
        sleep_until(start);
        nvtxRangePushA("compute");
        sleep_until(start + period / 2 + (rank == late_rank ? late : 0));
        nvtxRangePop();
        nvtxRangePushA("allreduce");
        sleep_until(start + period * 3 / 4);
        nvtxRangePop();
    }
    return 0;
}
