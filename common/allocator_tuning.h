/* The analysis tools' allocator settings, made before main does anything. */
#ifndef ASYS_ALLOCATOR_TUNING_H
#define ASYS_ALLOCATOR_TUNING_H

/* Has glibc's malloc ask for transparent huge pages (the tunable
 * glibc.malloc.hugetlb=1, read only when a program starts: the tool runs
 * itself again once, with GLIBC_TUNABLES extended, then puts the user's
 * GLIBC_TUNABLES back so that programs it starts inherit them as given).
 * Nothing when the kernel offers no huge pages, when GLIBC_TUNABLES already
 * says how malloc uses them, with ASYS_NO_HUGE_PAGES=1, in a sanitizer
 * build, or when running again fails.  Call first in main, before any
 * thread, file or handler: the program is replaced. */
void asys_tune_allocator(char **argv);

#endif
