/* When the program's main returns: what runs after it (exit handlers, the
 * CUDA runtime's destructors) is the runtime's teardown, not the program.
 * The manual: device and pinned memory freed by those destructors is not
 * collected (hggc_activity.c drops such frees and counts them).
 *
 * __libc_start_main is interposed (the executable calls it through its PLT)
 * to run main through asys_main.  Programs started otherwise (static
 * binaries) or that leave through exit() never set the time: nothing is
 * dropped for them, nor for processes where CUPTI is not attached. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

#include "inject.h"

typedef int (*main_function)(int, char **, char **);
typedef int (*start_main_function)(main_function, int, char **, void (*)(void), void (*)(void),
                                   void (*)(void), void *);

static main_function program_main;

static int asys_main(int argc, char **argv, char **envp)
{
    int rc = program_main(argc, argv, envp);
    /* only HGGC reads it, for the activity CUPTI delivers: a clock read
     * pages in the vDSO's data (two page faults) in a process that may have
     * read no clock at all */
    uint32_t cupti_pid = __atomic_load_n(&asys_proc.cupti_pid, __ATOMIC_ACQUIRE);
    if (cupti_pid && cupti_pid == asys_proc.pid)
        __atomic_store_n(&asys_proc.main_returned_ns, asys_monotonic_ns(), __ATOMIC_RELEASE);
    return rc;
}

ASYS_EXPORT int __libc_start_main(main_function main, int argc, char **argv, void (*init)(void),
                                  void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    start_main_function start;
    *(void **)&start = dlsym(RTLD_NEXT, "__libc_start_main");
    if (!start)
        return main(argc, argv, __environ); /* cannot happen with glibc: run the program */
    program_main = main;
    return start(asys_main, argc, argv, init, fini, rtld_fini, stack_end);
}
