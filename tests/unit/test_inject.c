/* The HGTX collector in-process: the test plays the NVTX side (a module's
 * function tables and export table), calls the hooks, and reads back what
 * the thread's segment holds.  The process re-executes itself once with a
 * session in the environment, as asys profile would set it up. */
#define _GNU_SOURCE
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "elf_symbols.h"
#include "inject.h"
#include "segment_stream.h"
#include "test_util.h"

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

/* ---- a fake NVTX module --------------------------------------------------- */

struct module {
    NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE + 1];
    NvtxFunctionPointer *core_table[NVTX_CBID_CORE_SIZE + 1];
    NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE + 1];
    NvtxFunctionPointer *core2_table[NVTX_CBID_CORE2_SIZE + 1];
};

static struct module modules[2];
static struct module *current;

static int NVTX_API get_module_table(NvtxCallbackModule m, NvtxFunctionTable *out, unsigned *size)
{
    if (m == NVTX_CB_MODULE_CORE) {
        *out = current->core_table;
        *size = NVTX_CBID_CORE_SIZE;
        return 1;
    }
    if (m == NVTX_CB_MODULE_CORE2) {
        *out = current->core2_table;
        *size = NVTX_CBID_CORE2_SIZE;
        return 1;
    }
    return 0;
}

static const NvtxExportTableCallbacks callbacks = {sizeof callbacks, get_module_table};

static const void *NVTX_API get_export_table(uint32_t id)
{
    return id == NVTX_ETID_CALLBACKS ? &callbacks : NULL;
}

static int attach(struct module *m)
{
    for (int i = 0; i <= NVTX_CBID_CORE_SIZE; i++)
        m->core_table[i] = &m->core[i];
    for (int i = 0; i <= NVTX_CBID_CORE2_SIZE; i++)
        m->core2_table[i] = &m->core2[i];
    current = m;
    return InitializeInjectionNvtx2(get_export_table);
}

#define CORE(m, id, type) ((type)(m)->core[NVTX_CBID_CORE_##id])
#define CORE2(m, id, type) ((type)(m)->core2[NVTX_CBID_CORE2_##id])
#define PUSH_A(m) CORE(m, RangePushA, nvtxRangePushA_impl_fntype)
#define POP(m) CORE(m, RangePop, nvtxRangePop_impl_fntype)

/* ---- reading back ------------------------------------------------------------- */

struct seen {
    unsigned types[4096];
    unsigned args[4096];
    uint64_t ranges[4096];
    int count;
    int strings;
    uint64_t uid;
    uint64_t parent_uid;
    uint32_t inherited_limit;
    uint64_t dropped;
    uint64_t data_end;
};

/* Reads the segment of thread `tid` of this process. */
static void read_segment(uint32_t tid, struct seen *out)
{
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1; /* the reading itself is not traced */
    memset(out, 0, sizeof *out);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "p%d-t%u-", (int)getpid(), tid);
    DIR *d = opendir(asys_proc.segment_dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    char path[2048] = "";
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            snprintf(path, sizeof path, "%s%s", asys_proc.segment_dir, e->d_name);
    closedir(d);
    ck_assert_msg(path[0], "no segment for thread %u", tid);
    int fd = open(path, O_RDONLY);
    struct stat st;
    fstat(fd, &st);
    struct asys_segment_stream s;
    struct asys_err err;
    ck_assert_int_eq(asys_segment_stream_open(&s, asys_read_fd, &fd, (uint64_t)st.st_size, &err),
                     0);
    out->uid = s.header.process_uid;
    out->parent_uid = s.header.parent_process_uid;
    out->inherited_limit = s.header.inherited_string_limit;
    out->dropped = s.header.dropped_records;
    out->data_end = s.header.data_end;
    struct asys_record rec;
    while (asys_segment_stream_next(&s, &rec, &err) > 0 && out->count < 4096) {
        if (rec.type == ASYS_REC_STRING_DEF) {
            out->strings++;
            continue;
        }
        if (rec.type == ASYS_REC_PAD)
            continue;
        out->types[out->count] = rec.type;
        out->args[out->count] = rec.arg;
        if (rec.type == ASYS_REC_HGTX_START || rec.type == ASYS_REC_HGTX_END)
            out->ranges[out->count] =
                ((const struct asys_rec_hgtx_range *)(const void *)rec.data)->range_id;
        out->count++;
    }
    asys_segment_stream_close(&s);
    close(fd);
    asys_tls_busy = was_busy;
}

static int count_type(const struct seen *s, unsigned type)
{
    int n = 0;
    for (int i = 0; i < s->count; i++)
        n += s->types[i] == type;
    return n;
}

static uint32_t my_tid(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

/* ---- tests (each runs in its own forked process) --------------------------------- */

/* Registers the test thread (its segment exists to be read). */
#define PUSH_A_BOOT() \
    do { \
        ck_assert_int_eq(attach(&modules[0]), 1); \
        PUSH_A (&modules[0])("boot"); \
        POP (&modules[0])(); \
    } while (0)

START_TEST(injection_fills_every_module)
{
    ck_assert_int_eq(attach(&modules[0]), 1);
    ck_assert_int_eq(attach(&modules[1]), 1); /* a second library: same state */
    ck_assert_ptr_nonnull(modules[0].core[NVTX_CBID_CORE_RangePushA]);
    ck_assert_ptr_eq(modules[0].core[NVTX_CBID_CORE_RangePushA],
                     modules[1].core[NVTX_CBID_CORE_RangePushA]);
    ck_assert_ptr_nonnull(modules[1].core2[NVTX_CBID_CORE2_DomainRangePushEx]);
    ck_assert_ptr_null(modules[0].core[NVTX_CBID_CORE_INVALID]);
}
END_TEST

START_TEST(levels_and_records)
{
    struct module *m = &modules[0];
    ck_assert_int_eq(attach(m), 1);
    /* the fork child registers its thread eagerly: start from a known point */
    ck_assert_int_eq(PUSH_A(m)("a"), 0);
    ck_assert_int_eq(PUSH_A(m)("b"), 1);
    ck_assert_int_eq(POP(m)(), 1);
    ck_assert_int_eq(POP(m)(), 0);
    ck_assert_int_eq(POP(m)(), -1);
    nvtxRangeId_t id = CORE(m, RangeStartA, nvtxRangeStartA_impl_fntype)("se");
    ck_assert_uint_ne(id, 0);
    CORE(m, RangeEnd, nvtxRangeEnd_impl_fntype)(id);
    CORE(m, MarkA, nvtxMarkA_impl_fntype)("mark");

    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xff00ff00u;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "colored";
    ck_assert_int_eq(CORE(m, RangePushEx, nvtxRangePushEx_impl_fntype)(&a), 0);
    ck_assert_int_eq(POP(m)(), 0);

    nvtxDomainHandle_t d = CORE2(m, DomainCreateA, nvtxDomainCreateA_impl_fntype)("dom");
    ck_assert_ptr_eq(d, CORE2(m, DomainCreateA, nvtxDomainCreateA_impl_fntype)("dom"));
    ck_assert_int_eq(CORE2(m, DomainRangePushEx, nvtxDomainRangePushEx_impl_fntype)(d, &a), 0);
    ck_assert_int_eq(PUSH_A(m)("default-while-domain-open"), 0); /* levels are per domain */
    ck_assert_int_eq(CORE2(m, DomainRangePop, nvtxDomainRangePop_impl_fntype)(d), 0);
    ck_assert_int_eq(POP(m)(), 0);
    CORE(m, RangePushW, nvtxRangePushW_impl_fntype)(L"wide");
    POP(m)();

    struct seen s;
    read_segment(my_tid(), &s);
    ck_assert_int_eq(count_type(&s, ASYS_REC_HGTX_PUSH), 3);
    ck_assert_int_eq(count_type(&s, ASYS_REC_HGTX_PUSH_EX), 3); /* colored, domain, wide */
    ck_assert_int_eq(count_type(&s, ASYS_REC_HGTX_POP), 6); /* the failed pop is not recorded */
    ck_assert_int_eq(count_type(&s, ASYS_REC_HGTX_START), 1);
    ck_assert_int_eq(count_type(&s, ASYS_REC_HGTX_END), 1);
    ck_assert_int_eq(count_type(&s, ASYS_REC_HGTX_MARK), 1);
    ck_assert_int_eq(count_type(&s, ASYS_REC_HGTX_DOMAIN), 1);
    ck_assert_int_eq(count_type(&s, ASYS_REC_PROCESS_INFO), 1);
    ck_assert_int_eq(count_type(&s, ASYS_REC_THREAD_START), 1);
    for (int i = 0; i < s.count; i++)
        if (s.types[i] == ASYS_REC_HGTX_END)
            ck_assert_uint_eq(s.ranges[i], id);
    /* this is a fork child of the test runner: its ids continue the parent's */
    ck_assert_uint_ne(s.parent_uid, 0);
    ck_assert_uint_gt(s.inherited_limit, 0);
}
END_TEST

/* A literal's second push takes the hooks' fast path (its id cached):
 * the same record and levels as the first, which went the general way;
 * so do pushes whose attributes hold only that message. */
START_TEST(fast_path_writes_what_the_general_path_writes)
{
    struct module *m = &modules[0];
    ck_assert_int_eq(attach(m), 1);
    struct seen before;
    read_segment(my_tid(), &before);
    for (int round = 0; round < 2; round++) {
        ck_assert_int_eq(PUSH_A(m)("fast-outer"), 0);
        ck_assert_int_eq(PUSH_A(m)("fast-inner"), 1);
        ck_assert_int_eq(POP(m)(), 1);
        ck_assert_int_eq(POP(m)(), 0);
    }
    ck_assert_int_eq(POP(m)(), -1); /* nothing open: the general path answers */
    /* attributes holding only an ASCII message, in the default domain (a
     * NULL handle: NVTX3's C++ ranges): the same one-word record */
    nvtxEventAttributes_t plain = {0};
    plain.version = NVTX_VERSION;
    plain.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    plain.messageType = NVTX_MESSAGE_TYPE_ASCII;
    plain.message.ascii = "fast-outer";
    ck_assert_int_eq(CORE(m, RangePushEx, nvtxRangePushEx_impl_fntype)(&plain), 0);
    ck_assert_int_eq(CORE2(m, DomainRangePushEx, nvtxDomainRangePushEx_impl_fntype)(NULL, &plain),
                     1);
    ck_assert_int_eq(CORE2(m, DomainRangePop, nvtxDomainRangePop_impl_fntype)(NULL), 1);
    ck_assert_int_eq(POP(m)(), 0);
    struct seen after;
    read_segment(my_tid(), &after);
    ck_assert_int_eq(after.strings - before.strings, 2);
    unsigned pushes[6], n = 0, pops = 0;
    for (int i = before.count; i < after.count; i++) {
        ck_assert_uint_ne(after.types[i], ASYS_REC_HGTX_PUSH_EX);
        if (after.types[i] == ASYS_REC_HGTX_PUSH && n < 6)
            pushes[n++] = after.args[i];
        pops += after.types[i] == ASYS_REC_HGTX_POP;
    }
    ck_assert_uint_eq(n, 6);
    ck_assert_uint_eq(pops, 6);
    ck_assert_uint_ne(pushes[0], pushes[1]);
    ck_assert_uint_eq(pushes[0], pushes[2]);
    ck_assert_uint_eq(pushes[1], pushes[3]);
    ck_assert_uint_eq(pushes[0], pushes[4]);
    ck_assert_uint_eq(pushes[0], pushes[5]);
}
END_TEST

START_TEST(strings_are_interned_by_content)
{
    struct module *m = &modules[0];
    ck_assert_int_eq(attach(m), 1);
    PUSH_A(m)("ready");
    POP(m)();
    struct seen before;
    read_segment(my_tid(), &before);
    for (int i = 0; i < 100; i++) { /* a literal: one definition */
        PUSH_A(m)("literal-name");
        POP(m)();
    }
    char buf[32];
    strcpy(buf, "buffer-one");
    PUSH_A(m)(buf);
    POP(m)();
    strcpy(buf, "buffer-two"); /* same pointer, new text: a new definition */
    PUSH_A(m)(buf);
    POP(m)();
    char other[32];
    strcpy(other, "buffer-one"); /* other pointer, known text: no new definition */
    PUSH_A(m)(other);
    POP(m)();
    struct seen after;
    read_segment(my_tid(), &after);
    ck_assert_int_eq(after.strings - before.strings, 3);
    /* the ids of the last three pushes: one, two, one */
    unsigned first_buffer = 0, second_buffer = 0, third = 0;
    int pushes = 0;
    for (int i = before.count; i < after.count; i++) {
        if (after.types[i] != ASYS_REC_HGTX_PUSH)
            continue;
        pushes++;
        if (pushes == 101)
            first_buffer = after.args[i];
        if (pushes == 102)
            second_buffer = after.args[i];
        if (pushes == 103)
            third = after.args[i];
    }
    ck_assert_int_eq(pushes, 103);
    ck_assert_uint_ne(first_buffer, second_buffer);
    ck_assert_uint_eq(first_buffer, third);
}
END_TEST

START_TEST(reentry_keeps_levels_and_counts_the_loss)
{
    struct module *m = &modules[0];
    ck_assert_int_eq(attach(m), 1);
    ck_assert_int_eq(PUSH_A(m)("outer"), 0);
    asys_tls_busy = 1; /* as if a signal handler interrupted a hook */
    ck_assert_int_eq(PUSH_A(m)("inner"), 1);
    ck_assert_int_eq(POP(m)(), 1);
    asys_tls_busy = 0;
    ck_assert_int_eq(POP(m)(), 0);
    struct seen s;
    read_segment(my_tid(), &s);
    ck_assert_uint_eq(s.dropped, 2);
    ck_assert_int_eq(count_type(&s, ASYS_REC_HGTX_PUSH), 1);
}
END_TEST

static void *thread_body(void *arg)
{
    struct module *m = arg;
    pthread_setname_np(pthread_self(), "inject-worker");
    for (int i = 0; i < 1000; i++) {
        PUSH_A(m)("t");
        POP(m)();
    }
    return (void *)(uintptr_t)my_tid();
}

START_TEST(threads_get_their_own_segments)
{
    struct module *m = &modules[0];
    ck_assert_int_eq(attach(m), 1);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, thread_body, m);
    for (int i = 0; i < 3; i++) {
        void *tid;
        pthread_join(t[i], &tid);
        struct seen s;
        read_segment((uint32_t)(uintptr_t)tid, &s);
        ck_assert_int_eq(count_type(&s, ASYS_REC_HGTX_PUSH), 1000);
        ck_assert_int_eq(count_type(&s, ASYS_REC_THREAD_START), 1);
        ck_assert_int_eq(count_type(&s, ASYS_REC_THREAD_END), 1);
        ck_assert_uint_ne(s.data_end, 0); /* closed cleanly at thread exit */
    }
}
END_TEST

START_TEST(fork_child_writes_its_own_segment)
{
    struct module *m = &modules[0];
    ck_assert_int_eq(attach(m), 1);
    nvtxDomainHandle_t d = CORE2(m, DomainCreateA, nvtxDomainCreateA_impl_fntype)("inherited");
    PUSH_A(m)("parent");
    struct seen parent_before;
    read_segment(my_tid(), &parent_before);
    pid_t child = fork();
    if (child == 0) {
        nvtxEventAttributes_t a = {0};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = "in-child";
        int level = CORE2(m, DomainRangePushEx, nvtxDomainRangePushEx_impl_fntype)(d, &a);
        CORE2(m, DomainRangePop, nvtxDomainRangePop_impl_fntype)(d);
        struct seen s;
        read_segment(my_tid(), &s);
        int ok = level == 0 && s.parent_uid == parent_before.uid && s.uid != parent_before.uid &&
                 count_type(&s, ASYS_REC_HGTX_PUSH_EX) == 1 &&
                 count_type(&s, ASYS_REC_PROCESS_INFO) == 1;
        _exit(ok ? 0 : 1);
    }
    int status;
    waitpid(child, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct seen parent_after;
    read_segment(my_tid(), &parent_after);
    /* the child's range went into its own segment, not here */
    ck_assert_int_eq(count_type(&parent_after, ASYS_REC_HGTX_PUSH_EX), 0);
    ck_assert_int_eq(count_type(&parent_after, ASYS_REC_HGTX_PUSH),
                     count_type(&parent_before, ASYS_REC_HGTX_PUSH));
}
END_TEST

START_TEST(dlclose_forgets_cached_literals)
{
    uint32_t before = asys_proc.code_generation;
    void *h = dlopen("libm.so.6", RTLD_NOW);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(dlclose(h), 0);
    ck_assert_uint_eq(asys_proc.code_generation, before + 2);
}
END_TEST

START_TEST(osrt_call_with_stack)
{
    struct seen before;
    PUSH_A_BOOT();
    read_segment(my_tid(), &before);
    usleep(100000); /* over both thresholds: recorded with a stack */
    struct seen after;
    read_segment(my_tid(), &after);
    int calls = 0, chains = 0, modules = 0;
    for (int i = before.count; i < after.count; i++) {
        calls += after.types[i] == ASYS_REC_OSRT_CALL && after.args[i] == 23; /* usleep */
        chains += after.types[i] == ASYS_REC_CALLCHAIN;
    }
    /* the module list comes before the thread's first chain, which may be
     * an earlier call's (a read of the segment that was slow on a busy machine) */
    for (int i = 0; i < after.count; i++)
        modules += after.types[i] == ASYS_REC_MODULE;
    ck_assert_int_eq(calls, 1);
    ck_assert_int_eq(chains, 1);
    ck_assert_int_ge(modules, 2); /* the program and libc at least */
    usleep(100000); /* the same stack: no new chain, no new module list */
    struct seen again;
    read_segment(my_tid(), &again);
    int more_chains = 0;
    for (int i = after.count; i < again.count; i++)
        more_chains += again.types[i] == ASYS_REC_CALLCHAIN || again.types[i] == ASYS_REC_MODULE;
    ck_assert_int_le(more_chains, 1); /* a different return address in this test is possible */
}
END_TEST

START_TEST(disabled_collector_declines_injection)
{
    /* a process whose session lacks hgtx: NVTX turns the module into no-ops */
    asys_proc.features = 0;
    ck_assert_int_eq(attach(&modules[0]), 0);
}
END_TEST

int main(int argc, char **argv);

START_TEST(next_symbols_are_what_dlsym_finds)
{
    /* the OSRT wrappers' real functions: the loader's own answer for each
     * (this executable defines read, write... itself: RTLD_NEXT skips it);
     * memcpy, realpath, posix_spawn and pthread_cond_wait have a hidden older
     * version beside the default one; clock_gettime is in the vDSO too */
    static const struct {
        const char *name, *version;
    } names[] = {{"read", NULL},
                 {"write", NULL},
                 {"pthread_mutex_lock", NULL},
                 {"memcpy", NULL},
                 {"realpath", NULL},
                 {"posix_spawn", NULL},
                 {"pthread_cond_wait", NULL},
                 {"pthread_cond_wait", "GLIBC_2.3.2"},
                 {"pthread_cond_wait", "GLIBC_2.2.5"},
                 {"clock_gettime", NULL},
                 {"read", "GLIBC_9.9"},
                 {"asys_no_such_function", NULL}};
    enum { COUNT = sizeof names / sizeof *names };
    void *found[COUNT] = {NULL};
    struct asys_symbol_request requests[COUNT];
    for (size_t i = 0; i < COUNT; i++)
        requests[i] = (struct asys_symbol_request){&found[i], names[i].name, names[i].version};
    asys_next_symbols((const void *)(uintptr_t)main, requests, COUNT);
    for (size_t i = 0; i < COUNT; i++) {
        void *expected = names[i].version ? dlvsym(RTLD_NEXT, names[i].name, names[i].version)
                                          : dlsym(RTLD_NEXT, names[i].name);
        ck_assert_msg(found[i] == expected, "%s@%s: %p, the loader %p", names[i].name,
                      names[i].version ? names[i].version : "", found[i], expected);
    }
    ck_assert_ptr_nonnull(found[0]);
    ck_assert_ptr_ne(found[0], (void *)(uintptr_t)read); /* not this executable's wrapper */
    ck_assert_ptr_ne(found[7], found[8]);
    /* a slot already set is kept */
    void *kept = (void *)(uintptr_t)main;
    struct asys_symbol_request again = {&kept, "read", NULL};
    asys_next_symbols((const void *)(uintptr_t)main, &again, 1);
    ck_assert_ptr_eq(kept, (void *)(uintptr_t)main);
}
END_TEST

int main(int argc, char **argv)
{
    (void)argc;
    int status = test_run_in_session(argv, "hgtx,osrt");
    if (status >= 0)
        return status;
    Suite *s = suite_create("inject");
    TCase *tc = tcase_create("inject");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, injection_fills_every_module);
    tcase_add_test(tc, levels_and_records);
    tcase_add_test(tc, strings_are_interned_by_content);
    tcase_add_test(tc, fast_path_writes_what_the_general_path_writes);
    tcase_add_test(tc, reentry_keeps_levels_and_counts_the_loss);
    tcase_add_test(tc, threads_get_their_own_segments);
    tcase_add_test(tc, fork_child_writes_its_own_segment);
    tcase_add_test(tc, dlclose_forgets_cached_literals);
    tcase_add_test(tc, osrt_call_with_stack);
    tcase_add_test(tc, disabled_collector_declines_injection);
    tcase_add_test(tc, next_symbols_are_what_dlsym_finds);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
