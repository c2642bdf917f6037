/* A program that points NVTX_INJECTION64_PATH at another tool (as NVTX's own
 * tests do): "before" changes it before its first NVTX call (nothing is
 * recorded), "after" after it (the first mark is recorded). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

int main(int argc, char **argv)
{
    const char *when = argc > 1 ? argv[1] : "before";
    if (!strcmp(when, "before"))
        setenv("NVTX_INJECTION64_PATH", "/nonexistent/libother-tool.so", 1);
    nvtxMarkA("first mark");
    if (!strcmp(when, "after"))
        unsetenv("NVTX_INJECTION64_PATH");
    nvtxMarkA("second mark");
    printf("done\n");
    return 0;
}
