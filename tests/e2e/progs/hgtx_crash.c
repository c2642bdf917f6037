/* Records COUNT complete ranges, opens one more, and dies of SIGSEGV. */
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 100;
    for (int i = 0; i < count; i++) {
        nvtxRangePushA("before-crash");
        nvtxRangePop();
    }
    nvtxRangePushA("dying");
    signal(SIGSEGV, SIG_DFL);
    volatile int *p = NULL;
    return *p;
}
