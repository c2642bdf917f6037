/* Records COUNT complete ranges, opens one more, prints "ready PID" and waits
 * to be killed.  On SIGTERM it closes the open range and exits 7. */
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void on_term(int sig)
{
    (void)sig;
    nvtxRangePop();
    _exit(7);
}

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 100;
    signal(SIGTERM, on_term);
    for (int i = 0; i < count; i++) {
        nvtxRangePushA("before-kill");
        nvtxRangePop();
    }
    nvtxRangePushA("waiting");
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    for (;;)
        pause();
}
