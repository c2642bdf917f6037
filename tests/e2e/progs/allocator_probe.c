/* What asys_tune_allocator left this process: one line each for
 * GLIBC_TUNABLES as the program now sees it ("-" when unset), whether
 * malloc asked for huge pages for a large block (the "hg" flag of its
 * mapping in /proc/self/smaps: glibc's madvise under glibc.malloc.hugetlb=1),
 * whether the saved-value variable is gone, and the pid (the same across the
 * second start). */
#include "allocator_tuning.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 when the mapping holding `p` is advised MADV_HUGEPAGE, 0 when not, -1
 * when smaps cannot say. */
static int advised_huge(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "re");
    if (!f)
        return -1;
    char line[512];
    int inside = 0, found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (inside && !strncmp(line, "VmFlags:", 8))
            found = strstr(line, " hg") != NULL;
    }
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    (void)argc;
    asys_tune_allocator(argv);
    const char *now = getenv("GLIBC_TUNABLES");
    void *block = malloc(8u << 20);
    int huge = advised_huge(block);
    free(block);
    printf("%s\n%s\n%s\n%d\n", now ? now : "-",
           huge < 0 ? "unknown"
           : huge   ? "tuned"
                    : "as started",
           getenv("ASYS_USER_GLIBC_TUNABLES") ? "saved value left" : "clean", (int)getpid());
    return 0;
}
