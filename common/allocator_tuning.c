/* Why: the analysis tools build arrays of hundreds of MiB (an export of a
 * million kernels touches 60 k fresh 4 KiB pages).  Where a page's first
 * touch is dear (a guest without hardware page tables: 8-17 us), that is a
 * quarter of the run; in 2 MiB pages it is 9 k faults (bench/RESULTS.md). */
#define _GNU_SOURCE
#include "allocator_tuning.h"
#include "read_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer) || \
    __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define ASYS_OWN_MALLOC 0 /* the sanitizer's allocator: no tunable to set */
#else
#define ASYS_OWN_MALLOC 1
#endif

#if defined(__GLIBC__) && ASYS_OWN_MALLOC
#define TUNABLE "glibc.malloc.hugetlb=1"
/* The user's GLIBC_TUNABLES across the second start: "-" (unset) or
 * "+VALUE". */
#define SAVED "ASYS_USER_GLIBC_TUNABLES"

static int huge_pages_offered(void)
{
    char mode[128] = "";
    asys_read_first_line("/sys/kernel/mm/transparent_hugepage/enabled", mode, sizeof mode);
    return mode[0] && !strstr(mode, "[never]");
}

static void restore_user_tunables(const char *saved)
{
    if (saved[0] == '+')
        setenv("GLIBC_TUNABLES", saved + 1, 1);
    else
        unsetenv("GLIBC_TUNABLES");
    unsetenv(SAVED);
}

void asys_tune_allocator(char **argv)
{
    const char *saved = getenv(SAVED);
    if (saved) { /* the second start: the tunable is in effect */
        restore_user_tunables(saved);
        return;
    }
    const char *off = getenv("ASYS_NO_HUGE_PAGES");
    const char *user = getenv("GLIBC_TUNABLES");
    if ((off && *off && strcmp(off, "0")) || (user && strstr(user, "glibc.malloc.hugetlb")) ||
        !huge_pages_offered())
        return;
    char keep[4096], tunables[4096 + sizeof TUNABLE + 1];
    int kept = snprintf(keep, sizeof keep, "%s%s", user ? "+" : "-", user ? user : "");
    if (kept < 0 || (size_t)kept >= sizeof keep)
        return;
    snprintf(tunables, sizeof tunables, "%s%s" TUNABLE, user ? user : "", user && *user ? ":" : "");
    if (setenv(SAVED, keep, 1) != 0 || setenv("GLIBC_TUNABLES", tunables, 1) != 0) {
        restore_user_tunables(keep);
        return;
    }
    execv("/proc/self/exe", argv);
    restore_user_tunables(keep); /* not run again: go on as we are */
}
#else
void asys_tune_allocator(char **argv)
{
    (void)argv;
}
#endif
