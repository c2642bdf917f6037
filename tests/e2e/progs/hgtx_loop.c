/* COUNT push/pop pairs of one name as fast as possible (drop tests).
 * usage: hgtx_loop COUNT [close-fds]
 * With close-fds, every descriptor above 2 is closed first, as daemons do. */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 1000;
    if (argc > 2 && !strcmp(argv[2], "close-fds")) {
        nvtxMarkA("before closing");
        for (int fd = 3; fd < 4096; fd++)
            close(fd);
    }
    for (long i = 0; i < count; i++) {
        nvtxRangePushA("r");
        nvtxRangePop();
    }
    return 0;
}
