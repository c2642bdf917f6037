/* COUNT push/pop pairs of one name as fast as possible (drop tests). */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 0; i < count; i++) {
        nvtxRangePushA("r");
        nvtxRangePop();
    }
    return 0;
}
