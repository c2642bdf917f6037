/* The process's page helper (segment_writer.h, struct asys_page_helper):
 * one thread, started the first time a writer hands it a job, that faults
 * the writers' next arena slots in and unmaps their full ones, so that a
 * recording thread in steady state takes no page fault (issue 30.1: one
 * per 4 KiB of a file mapping, 10-20 ns per HGTX pair).
 *
 * Never blocks a recording thread: a job is taken only when the ring has
 * room and no other thread is posting at that moment; otherwise the writer
 * does it itself, as it would without a helper.  Jobs run in the order
 * taken, so an unmap never overtakes the populate of the same slot. */
#define _GNU_SOURCE
#include "inject.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE_JOBS 64u /* a few per writer: two jobs per slot switch */
#define HELPER_STACK (128u << 10)

enum helper_state { HELPER_IDLE, HELPER_STARTING, HELPER_RUNNING, HELPER_FAILED };

struct page_job_entry {
    enum asys_page_job job;
    void *addr;
    uint64_t len;
};

/* One per process (the writers of every thread share it); a fork's child
 * starts from zero (asys_page_helper_after_fork).  All zero while the state
 * is HELPER_IDLE. */
static struct {
    int post_lock; /* held by a thread putting a job into the ring (never waited on) */
    uint32_t posted; /* futex word: jobs taken so far */
    uint32_t done; /* futex word: jobs finished (the helper alone writes it) */
    uint32_t drainers; /* threads waiting in drain */
    struct page_job_entry ring[PAGE_JOBS]; /* job n at n % PAGE_JOBS */
} pages;
/* enum helper_state; read at every fork: beside the state every start writes,
 * so that a child of a process that never started the helper (a shell's)
 * touches none of the pages above, two page faults in each */
ASYS_START_DATA static int helper_state;

static void futex_wait(uint32_t *word, uint32_t value)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void futex_wake(uint32_t *word, int count)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

/* A write access to every page without changing a byte (the writer may be
 * filling the same pages): the faults where the kernel has no
 * MADV_POPULATE_WRITE (before 5.14), the first access everywhere. */
static void touch_for_write(uint8_t *addr, uint64_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    for (uint64_t at = 0; page > 0 && at < len; at += (uint64_t)page)
        __atomic_fetch_add((uint64_t *)(addr + at), 0, __ATOMIC_RELAXED);
}

static void run_job(const struct page_job_entry *j)
{
    if (j->job == ASYS_PAGE_UNMAP) {
        munmap(j->addr, j->len);
        return;
    }
#ifdef MADV_POPULATE_WRITE
    if (madvise(j->addr, j->len, MADV_POPULATE_WRITE) != 0 && errno != EINVAL)
        return;
#endif
    /* Touched here even when populated: a guest whose hypervisor maps a page
     * at its first access (no hardware page tables: PVM) charges that access
     * 3 us a page of the arena, populated or not.  The first access by this
     * thread, of the same process, maps it for the recording thread too
     * (26 ns a page left to it).  Elsewhere it costs this thread a cache
     * miss a page. */
    touch_for_write(j->addr, j->len);
}

static void *helper_main(void *unused)
{
    (void)unused;
    asys_tls_busy = 1; /* its munmap and madvise are asys's own, never traced */
    prctl(PR_SET_NAME, "asys-pages");
    for (;;) {
        uint32_t done = pages.done;
        uint32_t posted;
        while ((posted = __atomic_load_n(&pages.posted, __ATOMIC_ACQUIRE)) == done)
            futex_wait(&pages.posted, done);
        int saved_errno = errno;
        run_job(&pages.ring[done % PAGE_JOBS]);
        errno = saved_errno;
        __atomic_store_n(&pages.done, done + 1, __ATOMIC_RELEASE);
        if (__atomic_load_n(&pages.drainers, __ATOMIC_ACQUIRE))
            futex_wake(&pages.done, INT_MAX);
    }
    return NULL;
}

/* Starts the helper thread, with every signal blocked (the program's
 * handlers run on its own threads); 0 when it runs. */
static int start_helper(void)
{
    int expected = HELPER_IDLE;
    if (!__atomic_compare_exchange_n(&helper_state, &expected, HELPER_STARTING, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return expected == HELPER_RUNNING ? 0 : -1;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_t attr;
    pthread_t thread;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        pthread_attr_setstacksize(&attr, HELPER_STACK);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        rc = pthread_create(&thread, &attr, helper_main, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    __atomic_store_n(&helper_state, rc == 0 ? HELPER_RUNNING : HELPER_FAILED, __ATOMIC_RELEASE);
    return rc == 0 ? 0 : -1;
}

static int take(enum asys_page_job job, void *addr, uint64_t len)
{
    if (__atomic_load_n(&helper_state, __ATOMIC_ACQUIRE) != HELPER_RUNNING && start_helper() != 0)
        return 0;
    if (__atomic_exchange_n(&pages.post_lock, 1, __ATOMIC_ACQUIRE))
        return 0; /* another writer is posting: do it here rather than wait */
    int saved_errno = errno;
    uint32_t posted = pages.posted;
    int taken = posted - __atomic_load_n(&pages.done, __ATOMIC_ACQUIRE) < PAGE_JOBS;
    if (taken) {
        pages.ring[posted % PAGE_JOBS] = (struct page_job_entry){job, addr, len};
        __atomic_store_n(&pages.posted, posted + 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&pages.post_lock, 0, __ATOMIC_RELEASE);
    if (taken)
        futex_wake(&pages.posted, 1);
    errno = saved_errno;
    return taken;
}

static void drain(void)
{
    if (__atomic_load_n(&helper_state, __ATOMIC_ACQUIRE) != HELPER_RUNNING)
        return;
    int saved_errno = errno;
    uint32_t target = __atomic_load_n(&pages.posted, __ATOMIC_ACQUIRE);
    __atomic_fetch_add(&pages.drainers, 1, __ATOMIC_ACQ_REL);
    uint32_t done;
    while ((int32_t)((done = __atomic_load_n(&pages.done, __ATOMIC_ACQUIRE)) - target) < 0)
        futex_wait(&pages.done, done);
    __atomic_fetch_sub(&pages.drainers, 1, __ATOMIC_ACQ_REL);
    errno = saved_errno;
}

const struct asys_page_helper asys_page_helper = {take, drain};

void asys_page_helper_after_fork(void)
{
    if (__atomic_load_n(&helper_state, __ATOMIC_ACQUIRE) == HELPER_IDLE)
        return;
    memset(&pages, 0, sizeof pages); /* the helper thread stayed in the parent */
    __atomic_store_n(&helper_state, HELPER_IDLE, __ATOMIC_RELEASE);
}
