/* OSRT collector: wrappers for the libc and pthread calls that make a thread
 * wait.  The library is preloaded, so these definitions interpose libc's for
 * the whole program; each forwards to the real function found with
 * dlsym(RTLD_NEXT) on first use.
 *
 * Cost when a call is shorter than --osrt-threshold: two clock reads and two
 * branches.  Locks and semaphores try first and are timed only when they had
 * to wait (as nsys does), so an uncontended lock costs a try-lock.  A call is
 * recorded when it ends, stamped with its end; its stack is captured when it
 * lasted --osrt-backtrace-threshold or more.
 *
 * Wrappers run before the library's constructor, inside signal handlers,
 * after fork and in threads of any age: everything they need is resolved or
 * initialized on first use, and errno and return values pass through. */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf_symbols.h"
#include "inject.h"

enum osrt_function {
#define OSRT_ID(id, name) OSRT_##name = id,
    ASYS_OSRT_FUNCTIONS(OSRT_ID)
#undef OSRT_ID
};

static ASYS_START_DATA int osrt_on; /* the collector is enabled in this session */

static void resolve_all(void);

ASYS_START_CODE int asys_osrt_init(void)
{
    uint64_t threshold_ns, backtrace_ns, depth;
    if (asys_option_u64("ASYS_OSRT_THRESHOLD_NS", &threshold_ns) != 0 ||
        asys_option_u64("ASYS_OSRT_BACKTRACE_NS", &backtrace_ns) != 0 ||
        asys_option_u64("ASYS_OSRT_BACKTRACE_DEPTH", &depth) != 0)
        return -1;
    resolve_all();
    asys_callstack_own_object((const void *)(uintptr_t)asys_osrt_init);
    double per_ns = asys_proc.ticks_per_ns;
    asys_proc.osrt_threshold_ticks = (uint64_t)((double)threshold_ns * per_ns);
    asys_proc.osrt_backtrace_ticks = (uint64_t)((double)backtrace_ns * per_ns);
    asys_proc.osrt_backtrace_depth =
        (uint32_t)(depth > ASYS_CALLCHAIN_MAX_DEPTH ? ASYS_CALLCHAIN_MAX_DEPTH : depth);
    __atomic_store_n(&osrt_on, 1, __ATOMIC_RELEASE);
    return 0;
}

/* ---- the common path ------------------------------------------------------ */

/* Starts timing a call; 0 when it is not to be traced (collector off, the
 * call comes from asys itself, or it is outside the capture range). */
static inline int osrt_begin(uint64_t *start)
{
    if (ASYS_LIKELY(!osrt_on) || asys_tls_busy || !asys_capturing())
        return 0;
    *start = asys_now();
    return 1;
}

__attribute__((noinline)) static void osrt_record(unsigned fn, uint64_t start, uint64_t end,
                                                  int64_t result, uint32_t error)
{
    int saved_errno = errno;
    struct asys_thread *t = asys_thread_enter_at(start);
    if (t) {
        uint64_t duration = end - start;
        uint32_t chain = 0;
        if (duration >= asys_proc.osrt_backtrace_ticks && asys_proc.osrt_backtrace_depth)
            chain = asys_callstack_capture(t, asys_proc.osrt_backtrace_depth);
        uint32_t delta;
        struct asys_rec_osrt_call *r = asys_segment_reserve(&t->seg, sizeof *r, end, &delta);
        if (r) {
            r->duration_ticks = duration;
            r->result = result;
            r->error = error;
            r->callchain_id = chain;
            asys_segment_commit(&r->header,
                                ASYS_REC_WORD(ASYS_REC_OSRT_CALL, sizeof *r / 8, fn, delta));
        }
        asys_thread_leave();
    }
    errno = saved_errno;
}

static inline void osrt_end(unsigned fn, uint64_t start, int64_t result, uint32_t error)
{
    uint64_t end = asys_now();
    if (ASYS_UNLIKELY(end - start >= asys_proc.osrt_threshold_ticks))
        osrt_record(fn, start, end, result, error);
}

static void *next_symbol(const char *name, const char *version)
{
    return version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
}

#define REAL(fn) real_##fn
#define RESOLVE_VERSION(fn, version, fail) \
    do { \
        if (ASYS_UNLIKELY(!real_##fn)) { \
            real_##fn = (__typeof__(real_##fn))next_symbol(#fn, version); \
            if (!real_##fn) { \
                errno = ENOSYS; \
                return fail; \
            } \
        } \
    } while (0)
#define RESOLVE(fn, fail) RESOLVE_VERSION(fn, NULL, fail)

/* Calls that report failure as -1 and errno (or a given failure test). */
#define TRACE(id, type, call, failed) \
    do { \
        uint64_t start_; \
        if (!osrt_begin(&start_)) \
            return call; \
        type rc_ = call; \
        uint32_t error_ = (failed) ? (uint32_t)errno : 0; \
        osrt_end(id, start_, (int64_t)(intptr_t)rc_, error_); \
        return rc_; \
    } while (0)
#define TRACE_ERRNO(id, type, call) TRACE(id, type, call, rc_ == (type)-1)
/* Calls that return an error number (pthread, posix_spawn). */
#define TRACE_RESULT(id, call) \
    do { \
        uint64_t start_; \
        if (!osrt_begin(&start_)) \
            return call; \
        int rc_ = call; \
        osrt_end(id, start_, rc_, (uint32_t)(rc_ > 0 ? rc_ : 0)); \
        return rc_; \
    } while (0)
/* Locks are timed only when contended: `trylock` first (as nsys does); an
 * error other than EBUSY is what `lock` would report too. */
#define TRACE_CONTENDED(id, lock, trylock, object, ...) \
    do { \
        RESOLVE(lock, EINVAL); \
        if (ASYS_LIKELY(!osrt_on)) \
            return real_##lock(object, ##__VA_ARGS__); \
        RESOLVE(trylock, EINVAL); \
        int try_ = real_##trylock(object); \
        if (try_ != EBUSY) \
            return try_; \
        TRACE_RESULT(id, real_##lock(object, ##__VA_ARGS__)); \
    } while (0)
/* The same for semaphores, which fail with -1 and EAGAIN (errno kept). */
#define TRACE_CONTENDED_SEM(id, wait, object, ...) \
    do { \
        RESOLVE(wait, -1); \
        if (ASYS_LIKELY(!osrt_on)) \
            return real_##wait(object, ##__VA_ARGS__); \
        RESOLVE(sem_trywait, -1); \
        int saved_errno_ = errno; \
        if (real_sem_trywait(object) == 0) \
            return 0; \
        if (errno != EAGAIN) \
            return -1; \
        errno = saved_errno_; \
        TRACE_ERRNO(id, int, real_##wait(object, ##__VA_ARGS__)); \
    } while (0)

/* ---- file and socket I/O ------------------------------------------------------ */

static ASYS_START_DATA ssize_t (*real_read)(int, void *, size_t);
ASYS_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    RESOLVE(read, -1);
    TRACE_ERRNO(OSRT_read, ssize_t, real_read(fd, buf, n));
}

static ASYS_START_DATA ssize_t (*real_write)(int, const void *, size_t);
ASYS_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    RESOLVE(write, -1);
    TRACE_ERRNO(OSRT_write, ssize_t, real_write(fd, buf, n));
}

static ASYS_START_DATA ssize_t (*real_pread)(int, void *, size_t, off_t);
ASYS_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t offset)
{
    RESOLVE(pread, -1);
    TRACE_ERRNO(OSRT_pread, ssize_t, real_pread(fd, buf, n, offset));
}

static ASYS_START_DATA ssize_t (*real_pread64)(int, void *, size_t, off64_t);
ASYS_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t offset)
{
    RESOLVE(pread64, -1);
    TRACE_ERRNO(OSRT_pread, ssize_t, real_pread64(fd, buf, n, offset));
}

static ASYS_START_DATA ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
ASYS_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t offset)
{
    RESOLVE(pwrite, -1);
    TRACE_ERRNO(OSRT_pwrite, ssize_t, real_pwrite(fd, buf, n, offset));
}

static ASYS_START_DATA ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
ASYS_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t offset)
{
    RESOLVE(pwrite64, -1);
    TRACE_ERRNO(OSRT_pwrite, ssize_t, real_pwrite64(fd, buf, n, offset));
}

static ASYS_START_DATA ssize_t (*real_readv)(int, const struct iovec *, int);
ASYS_EXPORT ssize_t readv(int fd, const struct iovec *iov, int count)
{
    RESOLVE(readv, -1);
    TRACE_ERRNO(OSRT_readv, ssize_t, real_readv(fd, iov, count));
}

static ASYS_START_DATA ssize_t (*real_writev)(int, const struct iovec *, int);
ASYS_EXPORT ssize_t writev(int fd, const struct iovec *iov, int count)
{
    RESOLVE(writev, -1);
    TRACE_ERRNO(OSRT_writev, ssize_t, real_writev(fd, iov, count));
}

/* open's mode is there only with O_CREAT or O_TMPFILE */
static mode_t open_mode(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

static ASYS_START_DATA int (*real_open)(const char *, int, ...);
ASYS_START_WRAPPER ASYS_EXPORT int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    RESOLVE(open, -1);
    TRACE_ERRNO(OSRT_open, int, real_open(path, flags, mode));
}

static ASYS_START_DATA int (*real_open64)(const char *, int, ...);
ASYS_EXPORT int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    RESOLVE(open64, -1);
    TRACE_ERRNO(OSRT_open, int, real_open64(path, flags, mode));
}

static ASYS_START_DATA int (*real_openat)(int, const char *, int, ...);
ASYS_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    RESOLVE(openat, -1);
    TRACE_ERRNO(OSRT_openat, int, real_openat(dirfd, path, flags, mode));
}

static ASYS_START_DATA int (*real_openat64)(int, const char *, int, ...);
ASYS_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    RESOLVE(openat64, -1);
    TRACE_ERRNO(OSRT_openat, int, real_openat64(dirfd, path, flags, mode));
}

static ASYS_START_DATA int (*real_creat)(const char *, mode_t);
ASYS_EXPORT int creat(const char *path, mode_t mode)
{
    RESOLVE(creat, -1);
    TRACE_ERRNO(OSRT_creat, int, real_creat(path, mode));
}

static ASYS_START_DATA int (*real_creat64)(const char *, mode_t);
ASYS_EXPORT int creat64(const char *path, mode_t mode)
{
    RESOLVE(creat64, -1);
    TRACE_ERRNO(OSRT_creat, int, real_creat64(path, mode));
}

static ASYS_START_DATA int (*real_close)(int);
ASYS_START_WRAPPER ASYS_EXPORT int close(int fd)
{
    RESOLVE(close, -1);
    TRACE_ERRNO(OSRT_close, int, real_close(fd));
}

static ASYS_START_DATA int (*real_fsync)(int);
ASYS_EXPORT int fsync(int fd)
{
    RESOLVE(fsync, -1);
    TRACE_ERRNO(OSRT_fsync, int, real_fsync(fd));
}

static ASYS_START_DATA int (*real_fdatasync)(int);
ASYS_EXPORT int fdatasync(int fd)
{
    RESOLVE(fdatasync, -1);
    TRACE_ERRNO(OSRT_fdatasync, int, real_fdatasync(fd));
}

static ASYS_START_DATA int (*real_ioctl)(int, unsigned long, ...);
ASYS_EXPORT int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    RESOLVE(ioctl, -1);
    TRACE_ERRNO(OSRT_ioctl, int, real_ioctl(fd, request, arg));
}

static ASYS_START_DATA int (*real_accept)(int, struct sockaddr *, socklen_t *);
ASYS_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    RESOLVE(accept, -1);
    TRACE_ERRNO(OSRT_accept, int, real_accept(fd, addr, len));
}

static ASYS_START_DATA int (*real_accept4)(int, struct sockaddr *, socklen_t *, int);
ASYS_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    RESOLVE(accept4, -1);
    TRACE_ERRNO(OSRT_accept4, int, real_accept4(fd, addr, len, flags));
}

static ASYS_START_DATA int (*real_connect)(int, const struct sockaddr *, socklen_t);
ASYS_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    RESOLVE(connect, -1);
    TRACE_ERRNO(OSRT_connect, int, real_connect(fd, addr, len));
}

static ASYS_START_DATA ssize_t (*real_recv)(int, void *, size_t, int);
ASYS_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    RESOLVE(recv, -1);
    TRACE_ERRNO(OSRT_recv, ssize_t, real_recv(fd, buf, n, flags));
}

static ASYS_START_DATA ssize_t (*real_recvfrom)(int, void *, size_t, int, struct sockaddr *,
                                                socklen_t *);
ASYS_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
                             socklen_t *len)
{
    RESOLVE(recvfrom, -1);
    TRACE_ERRNO(OSRT_recvfrom, ssize_t, real_recvfrom(fd, buf, n, flags, addr, len));
}

static ASYS_START_DATA ssize_t (*real_recvmsg)(int, struct msghdr *, int);
ASYS_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    RESOLVE(recvmsg, -1);
    TRACE_ERRNO(OSRT_recvmsg, ssize_t, real_recvmsg(fd, msg, flags));
}

static ASYS_START_DATA ssize_t (*real_send)(int, const void *, size_t, int);
ASYS_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    RESOLVE(send, -1);
    TRACE_ERRNO(OSRT_send, ssize_t, real_send(fd, buf, n, flags));
}

static ASYS_START_DATA ssize_t (*real_sendto)(int, const void *, size_t, int,
                                              const struct sockaddr *, socklen_t);
ASYS_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                           const struct sockaddr *addr, socklen_t len)
{
    RESOLVE(sendto, -1);
    TRACE_ERRNO(OSRT_sendto, ssize_t, real_sendto(fd, buf, n, flags, addr, len));
}

static ASYS_START_DATA ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
ASYS_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    RESOLVE(sendmsg, -1);
    TRACE_ERRNO(OSRT_sendmsg, ssize_t, real_sendmsg(fd, msg, flags));
}

/* ---- waiting for events --------------------------------------------------------- */

static ASYS_START_DATA int (*real_poll)(struct pollfd *, nfds_t, int);
ASYS_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    RESOLVE(poll, -1);
    TRACE_ERRNO(OSRT_poll, int, real_poll(fds, n, timeout));
}

static ASYS_START_DATA int (*real_ppoll)(struct pollfd *, nfds_t, const struct timespec *,
                                         const sigset_t *);
ASYS_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                      const sigset_t *mask)
{
    RESOLVE(ppoll, -1);
    TRACE_ERRNO(OSRT_ppoll, int, real_ppoll(fds, n, timeout, mask));
}

static ASYS_START_DATA int (*real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
ASYS_EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
    RESOLVE(select, -1);
    TRACE_ERRNO(OSRT_select, int, real_select(n, r, w, e, timeout));
}

static ASYS_START_DATA int (*real_pselect)(int, fd_set *, fd_set *, fd_set *,
                                           const struct timespec *, const sigset_t *);
ASYS_EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout,
                        const sigset_t *mask)
{
    RESOLVE(pselect, -1);
    TRACE_ERRNO(OSRT_pselect, int, real_pselect(n, r, w, e, timeout, mask));
}

static ASYS_START_DATA int (*real_epoll_wait)(int, struct epoll_event *, int, int);
ASYS_EXPORT int epoll_wait(int fd, struct epoll_event *events, int max, int timeout)
{
    RESOLVE(epoll_wait, -1);
    TRACE_ERRNO(OSRT_epoll_wait, int, real_epoll_wait(fd, events, max, timeout));
}

static ASYS_START_DATA int (*real_epoll_pwait)(int, struct epoll_event *, int, int,
                                               const sigset_t *);
ASYS_EXPORT int epoll_pwait(int fd, struct epoll_event *events, int max, int timeout,
                            const sigset_t *mask)
{
    RESOLVE(epoll_pwait, -1);
    TRACE_ERRNO(OSRT_epoll_pwait, int, real_epoll_pwait(fd, events, max, timeout, mask));
}

/* ---- sleeping and waiting for processes and signals -------------------------------- */

static ASYS_START_DATA int (*real_nanosleep)(const struct timespec *, struct timespec *);
ASYS_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
    RESOLVE(nanosleep, -1);
    TRACE_ERRNO(OSRT_nanosleep, int, real_nanosleep(req, rem));
}

static ASYS_START_DATA int (*real_clock_nanosleep)(clockid_t, int, const struct timespec *,
                                                   struct timespec *);
ASYS_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
                                struct timespec *rem)
{
    RESOLVE(clock_nanosleep, EINVAL);
    TRACE_RESULT(OSRT_clock_nanosleep, real_clock_nanosleep(clock, flags, req, rem));
}

static ASYS_START_DATA unsigned (*real_sleep)(unsigned);
ASYS_EXPORT unsigned sleep(unsigned seconds)
{
    RESOLVE(sleep, seconds);
    TRACE(OSRT_sleep, unsigned, real_sleep(seconds), 0);
}

static ASYS_START_DATA int (*real_usleep)(useconds_t);
ASYS_EXPORT int usleep(useconds_t us)
{
    RESOLVE(usleep, -1);
    TRACE_ERRNO(OSRT_usleep, int, real_usleep(us));
}

static ASYS_START_DATA int (*real_sched_yield)(void);
ASYS_EXPORT int sched_yield(void)
{
    /* unresolved only while OSRT is off (its init resolves every function):
     * the sanitizers' stop-the-world calls it with their allocator locked,
     * where asking the loader (which allocates) deadlocks */
    if (ASYS_UNLIKELY(!real_sched_yield))
        return (int)syscall(SYS_sched_yield);
    TRACE_ERRNO(OSRT_sched_yield, int, real_sched_yield());
}

static ASYS_START_DATA pid_t (*real_wait)(int *);
ASYS_EXPORT pid_t wait(int *status)
{
    RESOLVE(wait, -1);
    TRACE_ERRNO(OSRT_wait, pid_t, real_wait(status));
}

static ASYS_START_DATA pid_t (*real_waitpid)(pid_t, int *, int);
ASYS_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
    RESOLVE(waitpid, -1);
    TRACE_ERRNO(OSRT_waitpid, pid_t, real_waitpid(pid, status, options));
}

static ASYS_START_DATA int (*real_waitid)(idtype_t, id_t, siginfo_t *, int);
ASYS_EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    RESOLVE(waitid, -1);
    TRACE_ERRNO(OSRT_waitid, int, real_waitid(type, id, info, options));
}

static ASYS_START_DATA int (*real_sigsuspend)(const sigset_t *);
ASYS_EXPORT int sigsuspend(const sigset_t *mask)
{
    RESOLVE(sigsuspend, -1);
    TRACE_ERRNO(OSRT_sigsuspend, int, real_sigsuspend(mask));
}

static ASYS_START_DATA int (*real_sigtimedwait)(const sigset_t *, siginfo_t *,
                                                const struct timespec *);
ASYS_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    RESOLVE(sigtimedwait, -1);
    TRACE_ERRNO(OSRT_sigtimedwait, int, real_sigtimedwait(set, info, timeout));
}

static ASYS_START_DATA int (*real_sigwaitinfo)(const sigset_t *, siginfo_t *);
ASYS_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    RESOLVE(sigwaitinfo, -1);
    TRACE_ERRNO(OSRT_sigwaitinfo, int, real_sigwaitinfo(set, info));
}

static ASYS_START_DATA int (*real_sigwait)(const sigset_t *, int *);
ASYS_EXPORT int sigwait(const sigset_t *set, int *sig)
{
    RESOLVE(sigwait, EINVAL);
    TRACE_RESULT(OSRT_sigwait, real_sigwait(set, sig));
}

/* ---- locks and semaphores: timed only when the try failed ---------------------------- */

static ASYS_START_DATA int (*real_pthread_mutex_lock)(pthread_mutex_t *);
static ASYS_START_DATA int (*real_pthread_mutex_trylock)(pthread_mutex_t *);
ASYS_START_WRAPPER ASYS_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
    TRACE_CONTENDED(OSRT_pthread_mutex_lock, pthread_mutex_lock, pthread_mutex_trylock, m);
}

static ASYS_START_DATA int (*real_pthread_mutex_timedlock)(pthread_mutex_t *,
                                                           const struct timespec *);
ASYS_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *timeout)
{
    TRACE_CONTENDED(OSRT_pthread_mutex_timedlock, pthread_mutex_timedlock, pthread_mutex_trylock, m,
                    timeout);
}

/* The default pthread_cond_* in glibc is the GLIBC_2.3.2 version; plain dlsym
 * would return the legacy one. */
static ASYS_START_DATA int (*real_pthread_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
ASYS_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    RESOLVE_VERSION(pthread_cond_wait, "GLIBC_2.3.2", EINVAL);
    TRACE_RESULT(OSRT_pthread_cond_wait, real_pthread_cond_wait(c, m));
}

static ASYS_START_DATA int (*real_pthread_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *,
                                                          const struct timespec *);
ASYS_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                       const struct timespec *timeout)
{
    RESOLVE_VERSION(pthread_cond_timedwait, "GLIBC_2.3.2", EINVAL);
    TRACE_RESULT(OSRT_pthread_cond_timedwait, real_pthread_cond_timedwait(c, m, timeout));
}

static ASYS_START_DATA int (*real_pthread_rwlock_rdlock)(pthread_rwlock_t *);
static ASYS_START_DATA int (*real_pthread_rwlock_tryrdlock)(pthread_rwlock_t *);
ASYS_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    TRACE_CONTENDED(OSRT_pthread_rwlock_rdlock, pthread_rwlock_rdlock, pthread_rwlock_tryrdlock, l);
}

static ASYS_START_DATA int (*real_pthread_rwlock_wrlock)(pthread_rwlock_t *);
static ASYS_START_DATA int (*real_pthread_rwlock_trywrlock)(pthread_rwlock_t *);
ASYS_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    TRACE_CONTENDED(OSRT_pthread_rwlock_wrlock, pthread_rwlock_wrlock, pthread_rwlock_trywrlock, l);
}

static ASYS_START_DATA int (*real_pthread_spin_lock)(pthread_spinlock_t *);
static ASYS_START_DATA int (*real_pthread_spin_trylock)(pthread_spinlock_t *);
ASYS_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
    TRACE_CONTENDED(OSRT_pthread_spin_lock, pthread_spin_lock, pthread_spin_trylock, l);
}

static ASYS_START_DATA int (*real_pthread_barrier_wait)(pthread_barrier_t *);
ASYS_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
    RESOLVE(pthread_barrier_wait, EINVAL);
    /* PTHREAD_BARRIER_SERIAL_THREAD (-1) is a success: TRACE_RESULT keeps no error */
    TRACE_RESULT(OSRT_pthread_barrier_wait, real_pthread_barrier_wait(b));
}

static ASYS_START_DATA int (*real_pthread_join)(pthread_t, void **);
ASYS_EXPORT int pthread_join(pthread_t thread, void **result)
{
    RESOLVE(pthread_join, EINVAL);
    TRACE_RESULT(OSRT_pthread_join, real_pthread_join(thread, result));
}

static ASYS_START_DATA int (*real_sem_wait)(sem_t *);
static ASYS_START_DATA int (*real_sem_trywait)(sem_t *);
ASYS_EXPORT int sem_wait(sem_t *s)
{
    TRACE_CONTENDED_SEM(OSRT_sem_wait, sem_wait, s);
}

static ASYS_START_DATA int (*real_sem_timedwait)(sem_t *, const struct timespec *);
ASYS_EXPORT int sem_timedwait(sem_t *s, const struct timespec *timeout)
{
    TRACE_CONTENDED_SEM(OSRT_sem_timedwait, sem_timedwait, s, timeout);
}

/* ---- memory mappings ------------------------------------------------------------------ */

static ASYS_START_DATA void *(*real_mmap)(void *, size_t, int, int, int, off_t);
ASYS_START_WRAPPER ASYS_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
                                          off_t offset)
{
    RESOLVE(mmap, MAP_FAILED);
    TRACE(OSRT_mmap, void *, real_mmap(addr, len, prot, flags, fd, offset), rc_ == MAP_FAILED);
}

static ASYS_START_DATA void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);
ASYS_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t offset)
{
    RESOLVE(mmap64, MAP_FAILED);
    TRACE(OSRT_mmap, void *, real_mmap64(addr, len, prot, flags, fd, offset), rc_ == MAP_FAILED);
}

static ASYS_START_DATA int (*real_munmap)(void *, size_t);
ASYS_EXPORT int munmap(void *addr, size_t len)
{
    RESOLVE(munmap, -1);
    TRACE_ERRNO(OSRT_munmap, int, real_munmap(addr, len));
}

static ASYS_START_DATA int (*real_mprotect)(void *, size_t, int);
ASYS_EXPORT int mprotect(void *addr, size_t len, int prot)
{
    RESOLVE(mprotect, -1);
    TRACE_ERRNO(OSRT_mprotect, int, real_mprotect(addr, len, prot));
}

/* ---- stdio ------------------------------------------------------------------------------ */

static ASYS_START_DATA FILE *(*real_fopen)(const char *, const char *);
ASYS_EXPORT FILE *fopen(const char *path, const char *mode)
{
    RESOLVE(fopen, NULL);
    TRACE(OSRT_fopen, FILE *, real_fopen(path, mode), rc_ == NULL);
}

static ASYS_START_DATA FILE *(*real_fopen64)(const char *, const char *);
ASYS_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    RESOLVE(fopen64, NULL);
    TRACE(OSRT_fopen, FILE *, real_fopen64(path, mode), rc_ == NULL);
}

static ASYS_START_DATA size_t (*real_fread)(void *, size_t, size_t, FILE *);
ASYS_EXPORT size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
    RESOLVE(fread, 0);
    TRACE(OSRT_fread, size_t, real_fread(buf, size, n, f), rc_ < n && ferror(f));
}

static ASYS_START_DATA size_t (*real_fwrite)(const void *, size_t, size_t, FILE *);
ASYS_EXPORT size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    RESOLVE(fwrite, 0);
    TRACE(OSRT_fwrite, size_t, real_fwrite(buf, size, n, f), rc_ < n);
}

static ASYS_START_DATA int (*real_fflush)(FILE *);
ASYS_EXPORT int fflush(FILE *f)
{
    RESOLVE(fflush, EOF);
    TRACE(OSRT_fflush, int, real_fflush(f), rc_ == EOF);
}

static ASYS_START_DATA int (*real_fclose)(FILE *);
ASYS_EXPORT int fclose(FILE *f)
{
    RESOLVE(fclose, EOF);
    TRACE(OSRT_fclose, int, real_fclose(f), rc_ == EOF);
}

/* ---- processes ---------------------------------------------------------------------------- */

static ASYS_START_DATA int (*real_system)(const char *);
ASYS_EXPORT int system(const char *command)
{
    RESOLVE(system, -1);
    TRACE_ERRNO(OSRT_system, int, real_system(command));
}

static ASYS_START_DATA FILE *(*real_popen)(const char *, const char *);
ASYS_EXPORT FILE *popen(const char *command, const char *mode)
{
    RESOLVE(popen, NULL);
    TRACE(OSRT_popen, FILE *, real_popen(command, mode), rc_ == NULL);
}

static ASYS_START_DATA int (*real_pclose)(FILE *);
ASYS_EXPORT int pclose(FILE *f)
{
    RESOLVE(pclose, -1);
    TRACE_ERRNO(OSRT_pclose, int, real_pclose(f));
}

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

static ASYS_START_DATA spawn_fn real_posix_spawn;
ASYS_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                            const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    RESOLVE(posix_spawn, ENOSYS);
    TRACE_RESULT(OSRT_posix_spawn, real_posix_spawn(pid, path, actions, attr, argv, envp));
}

static ASYS_START_DATA spawn_fn real_posix_spawnp;
ASYS_EXPORT int posix_spawnp(pid_t *pid, const char *file,
                             const posix_spawn_file_actions_t *actions,
                             const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    RESOLVE(posix_spawnp, ENOSYS);
    TRACE_RESULT(OSRT_posix_spawnp, real_posix_spawnp(pid, file, actions, attr, argv, envp));
}

/* ---- syscall(SYS_futex, ...) ------------------------------------------------------------- */

/* libc exports no futex(): programs and libraries use syscall().  Only futex
 * calls are timed; every other syscall passes straight through (six argument
 * registers are forwarded whatever the call takes, as the ABI allows). */
static ASYS_START_DATA long (*real_syscall)(long, ...);
ASYS_START_WRAPPER ASYS_EXPORT long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    RESOLVE(syscall, -1);
    if (number != SYS_futex)
        return real_syscall(number, a, b, c, d, e, f);
    TRACE_ERRNO(OSRT_futex, long, real_syscall(number, a, b, c, d, e, f));
}

/* ---- eager resolution --------------------------------------------------------------- */

/* Every real function, looked up at init so that a first call inside a signal
 * handler (or while the loader lock is held) never has to ask the loader. */
static const struct asys_symbol_request real_functions[] = {
    {(void **)&real_read, "read", NULL},
    {(void **)&real_write, "write", NULL},
    {(void **)&real_pread, "pread", NULL},
    {(void **)&real_pread64, "pread64", NULL},
    {(void **)&real_pwrite, "pwrite", NULL},
    {(void **)&real_pwrite64, "pwrite64", NULL},
    {(void **)&real_readv, "readv", NULL},
    {(void **)&real_writev, "writev", NULL},
    {(void **)&real_open, "open", NULL},
    {(void **)&real_open64, "open64", NULL},
    {(void **)&real_openat, "openat", NULL},
    {(void **)&real_openat64, "openat64", NULL},
    {(void **)&real_creat, "creat", NULL},
    {(void **)&real_creat64, "creat64", NULL},
    {(void **)&real_close, "close", NULL},
    {(void **)&real_fsync, "fsync", NULL},
    {(void **)&real_fdatasync, "fdatasync", NULL},
    {(void **)&real_ioctl, "ioctl", NULL},
    {(void **)&real_accept, "accept", NULL},
    {(void **)&real_accept4, "accept4", NULL},
    {(void **)&real_connect, "connect", NULL},
    {(void **)&real_recv, "recv", NULL},
    {(void **)&real_recvfrom, "recvfrom", NULL},
    {(void **)&real_recvmsg, "recvmsg", NULL},
    {(void **)&real_send, "send", NULL},
    {(void **)&real_sendto, "sendto", NULL},
    {(void **)&real_sendmsg, "sendmsg", NULL},
    {(void **)&real_poll, "poll", NULL},
    {(void **)&real_ppoll, "ppoll", NULL},
    {(void **)&real_select, "select", NULL},
    {(void **)&real_pselect, "pselect", NULL},
    {(void **)&real_epoll_wait, "epoll_wait", NULL},
    {(void **)&real_epoll_pwait, "epoll_pwait", NULL},
    {(void **)&real_nanosleep, "nanosleep", NULL},
    {(void **)&real_clock_nanosleep, "clock_nanosleep", NULL},
    {(void **)&real_sleep, "sleep", NULL},
    {(void **)&real_usleep, "usleep", NULL},
    {(void **)&real_sched_yield, "sched_yield", NULL},
    {(void **)&real_wait, "wait", NULL},
    {(void **)&real_waitpid, "waitpid", NULL},
    {(void **)&real_waitid, "waitid", NULL},
    {(void **)&real_sigsuspend, "sigsuspend", NULL},
    {(void **)&real_sigtimedwait, "sigtimedwait", NULL},
    {(void **)&real_sigwaitinfo, "sigwaitinfo", NULL},
    {(void **)&real_sigwait, "sigwait", NULL},
    {(void **)&real_pthread_mutex_lock, "pthread_mutex_lock", NULL},
    {(void **)&real_pthread_mutex_trylock, "pthread_mutex_trylock", NULL},
    {(void **)&real_pthread_mutex_timedlock, "pthread_mutex_timedlock", NULL},
    {(void **)&real_pthread_cond_wait, "pthread_cond_wait", "GLIBC_2.3.2"},
    {(void **)&real_pthread_cond_timedwait, "pthread_cond_timedwait", "GLIBC_2.3.2"},
    {(void **)&real_pthread_rwlock_rdlock, "pthread_rwlock_rdlock", NULL},
    {(void **)&real_pthread_rwlock_tryrdlock, "pthread_rwlock_tryrdlock", NULL},
    {(void **)&real_pthread_rwlock_wrlock, "pthread_rwlock_wrlock", NULL},
    {(void **)&real_pthread_rwlock_trywrlock, "pthread_rwlock_trywrlock", NULL},
    {(void **)&real_pthread_spin_lock, "pthread_spin_lock", NULL},
    {(void **)&real_pthread_spin_trylock, "pthread_spin_trylock", NULL},
    {(void **)&real_pthread_barrier_wait, "pthread_barrier_wait", NULL},
    {(void **)&real_pthread_join, "pthread_join", NULL},
    {(void **)&real_sem_wait, "sem_wait", NULL},
    {(void **)&real_sem_trywait, "sem_trywait", NULL},
    {(void **)&real_sem_timedwait, "sem_timedwait", NULL},
    {(void **)&real_mmap, "mmap", NULL},
    {(void **)&real_mmap64, "mmap64", NULL},
    {(void **)&real_munmap, "munmap", NULL},
    {(void **)&real_mprotect, "mprotect", NULL},
    {(void **)&real_fopen, "fopen", NULL},
    {(void **)&real_fopen64, "fopen64", NULL},
    {(void **)&real_fread, "fread", NULL},
    {(void **)&real_fwrite, "fwrite", NULL},
    {(void **)&real_fflush, "fflush", NULL},
    {(void **)&real_fclose, "fclose", NULL},
    {(void **)&real_system, "system", NULL},
    {(void **)&real_popen, "popen", NULL},
    {(void **)&real_pclose, "pclose", NULL},
    {(void **)&real_syscall, "syscall", NULL},
    {(void **)&real_posix_spawn, "posix_spawn", NULL},
    {(void **)&real_posix_spawnp, "posix_spawnp", NULL},
};

ASYS_START_CODE static void resolve_all(void)
{
    size_t count = sizeof real_functions / sizeof *real_functions;
    asys_next_symbols((const void *)(uintptr_t)resolve_all, real_functions, count);
    for (size_t i = 0; i < count; i++) /* what the pass left to the loader */
        if (!*real_functions[i].slot)
            *real_functions[i].slot =
                next_symbol(real_functions[i].name, real_functions[i].version);
}
