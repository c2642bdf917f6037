/* The CPU sampler's offline half (cpu_samples_write.c) on crafted perf
 * rings: good records become segments, damaged ones are skipped without
 * reading past them. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/stat.h>

#include "cpu_sampler.h"
#include "segment_stream.h"
#include "test_util.h"

static char dir[PATH_MAX];

static void setup(void)
{
    test_mkdtemp(dir, sizeof dir);
    char sub[PATH_MAX + 64];
    snprintf(sub, sizeof sub, "%s/segments", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof sub, "%s/%s", dir, ASYS_CPU_RAW_DIR);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
}

static void teardown(void)
{
    test_rmdir(dir);
}

/* A growing perf ring image. */
struct ring {
    uint8_t data[1 << 16];
    size_t used;
};

static void put(struct ring *r, const void *p, size_t n)
{
    ck_assert_uint_le(r->used + n, sizeof r->data);
    memcpy(r->data + r->used, p, n);
    r->used += n;
}

static void put_u32(struct ring *r, uint32_t v)
{
    put(r, &v, 4);
}

static void put_u64(struct ring *r, uint64_t v)
{
    put(r, &v, 8);
}

static void put_header(struct ring *r, uint32_t type, uint16_t misc, uint16_t size)
{
    struct perf_event_header h = {type, misc, size};
    put(r, &h, sizeof h);
}

static void put_trailer(struct ring *r, uint32_t pid, uint64_t time)
{
    put_u32(r, pid);
    put_u32(r, pid);
    put_u64(r, time);
    put_u64(r, 0);
}

/* A frame-pointer sample of `pid` at `time` with `n` user frames. */
static void put_sample(struct ring *r, uint32_t pid, uint64_t time, const uint64_t *ips, uint64_t n)
{
    put_header(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)(8 + 40 + 8 + 8 * n));
    put_u64(r, ips[0]);
    put_u32(r, pid);
    put_u32(r, pid);
    put_u64(r, time);
    put_u64(r, 1); /* cpu 1 */
    put_u64(r, 1000);
    put_u64(r, n);
    for (uint64_t i = 0; i < n; i++)
        put_u64(r, ips[i]);
}

static void save(const struct ring *r, const char *name)
{
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s/%s", dir, ASYS_CPU_RAW_DIR, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(r->data, 1, r->used, f), r->used);
    fclose(f);
}

/* Records of `type` in segments/NAME.seg; -1 when it does not exist. */
static int count_records(const char *name, unsigned type, uint32_t *first_chain_depth)
{
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/segments/%s.seg", dir, name);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    struct asys_segment_stream s;
    struct asys_err err = {0};
    ck_assert_int_eq(asys_segment_stream_open(&s, asys_read_fd, &fd, (uint64_t)st.st_size, &err),
                     0);
    struct asys_record rec;
    int n = 0, rc;
    while ((rc = asys_segment_stream_next(&s, &rec, &err)) > 0) {
        if (rec.type == ASYS_REC_CALLCHAIN && first_chain_depth && !*first_chain_depth)
            *first_chain_depth = ((const struct asys_rec_callchain *)(const void *)rec.data)->depth;
        n += rec.type == type;
    }
    ck_assert_int_eq(rc, 0);
    asys_segment_stream_close(&s);
    close(fd);
    return n;
}

static int write_run(enum asys_cpu_backtrace backtrace)
{
    static struct asys_cpu_sampler_config cfg;
    static struct asys_cpu_sampler_result res;
    cfg = (struct asys_cpu_sampler_config){.scope = ASYS_SAMPLE_PROCESS_TREE,
                                           .backtrace = backtrace,
                                           .period_cycles = 2000000,
                                           .depth = 24,
                                           .stack_bytes = 8192,
                                           .session_dir = dir};
    res = (struct asys_cpu_sampler_result){.status = ASYS_CPU_SAMPLING_RECORDED,
                                           .event = ASYS_CPU_EVENT_CPU_CLOCK,
                                           .period = 869565,
                                           .nominal_mhz = 2300};
    struct asys_cpu_raw_run run = {dir, &cfg, &res, 0, 0, 2, 4242, 24, 32, 8, 56};
    run.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                      PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
    struct asys_err err = {0};
    return asys_cpu_samples_write(&run, &err);
}

START_TEST(good_samples_become_a_segment)
{
    struct ring r = {.used = 0};
    const uint64_t ips[] = {0x401000, 0x401100, 0x401200};
    /* COMM, then three samples: two share their chain */
    put_header(&r, PERF_RECORD_COMM, 0, 8 + 8 + 8 + 24);
    put_u32(&r, 4242);
    put_u32(&r, 4242);
    put(&r, "burner\0\0", 8);
    put_trailer(&r, 4242, 100);
    put_sample(&r, 4242, 200, ips, 3);
    put_sample(&r, 4242, 300, ips, 3);
    put_sample(&r, 4242, 400, ips, 2);
    /* LOST and THROTTLE are counted */
    put_header(&r, PERF_RECORD_LOST, 0, 24);
    put_u64(&r, 1);
    put_u64(&r, 7);
    put_header(&r, PERF_RECORD_THROTTLE, 0, 32);
    put_u64(&r, 500);
    put_u64(&r, 1);
    put_u64(&r, 1);
    save(&r, "samples-cpu1.perf");
    ck_assert_int_eq(write_run(ASYS_BACKTRACE_FP), 0);
    uint32_t depth = 0;
    ck_assert_int_eq(count_records("cpu-p4242-0", ASYS_REC_CPU_SAMPLE, &depth), 3);
    ck_assert_uint_eq(depth, 3);
    ck_assert_int_eq(count_records("cpu-p4242-0", ASYS_REC_CALLCHAIN, NULL), 2);
    ck_assert_int_eq(count_records("cpu-p4242-0", ASYS_REC_THREAD_START, NULL), 1);
    ck_assert_int_eq(count_records("cpu-sched", ASYS_REC_CPU_SAMPLING_INFO, NULL), 1);
    /* the raw rings are gone: never part of the report */
    char raw[PATH_MAX + 64];
    snprintf(raw, sizeof raw, "%s/%s", dir, ASYS_CPU_RAW_DIR);
    ck_assert_int_ne(access(raw, F_OK), 0);
}
END_TEST

START_TEST(damaged_records_are_skipped)
{
    struct ring r = {.used = 0};
    const uint64_t ips[] = {0x401000, 0x401100};
    put_sample(&r, 4242, 200, ips, 2);
    /* a sample whose call chain claims more frames than the record holds */
    put_header(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 8 + 40 + 8 + 8);
    put_u64(&r, 0x401000);
    put_u32(&r, 4242);
    put_u32(&r, 4242);
    put_u64(&r, 300);
    put_u64(&r, 0);
    put_u64(&r, 1000);
    put_u64(&r, 1u << 30);
    put_u64(&r, 0x401000);
    /* an MMAP2 whose name runs into the trailer: no terminator */
    put_header(&r, PERF_RECORD_MMAP2, 0, 72 + 8 + 24);
    uint8_t body[64];
    memset(body, 0xff, sizeof body); /* every prot bit, so the name is what is checked */
    put(&r, body, 64);
    put(&r, "xxxxxxxx", 8);
    put_trailer(&r, 4242, 350);
    /* a record too short to be a sample */
    put_header(&r, PERF_RECORD_SAMPLE, 0, 16);
    put_u64(&r, 0);
    /* and a torn tail: a header claiming more than the file has */
    put_header(&r, PERF_RECORD_SAMPLE, 0, 4000);
    put_u64(&r, 1);
    save(&r, "samples-cpu0.perf");
    /* a scheduling ring of garbage */
    struct ring g = {.used = 0};
    for (int i = 0; i < 100; i++) { /* samples too short to hold a switch */
        put_u64(&g, (uint64_t)16 << 48 | PERF_RECORD_SAMPLE);
        put_u64(&g, (uint64_t)i);
    }
    save(&g, "sched-cpu0.perf");
    ck_assert_int_eq(write_run(ASYS_BACKTRACE_FP), 0);
    /* the good sample, and the damaged one without its stack */
    uint32_t depth = 0;
    ck_assert_int_eq(count_records("cpu-p4242-0", ASYS_REC_CPU_SAMPLE, &depth), 2);
    ck_assert_int_eq(count_records("cpu-p4242-0", ASYS_REC_MODULE, NULL), 1); /* [kernel] only */
    ck_assert_int_ge(count_records("cpu-sched", ASYS_REC_CPU_SAMPLING_INFO, NULL), 1);
}
END_TEST

START_TEST(nothing_recorded_still_says_what_the_sampler_did)
{
    ck_assert_int_eq(write_run(ASYS_BACKTRACE_DWARF), 0);
    ck_assert_int_eq(count_records("cpu-sched", ASYS_REC_CPU_SAMPLING_INFO, NULL), 1);
    ck_assert_int_eq(count_records("cpu-sched", ASYS_REC_SCHED_SWITCH, NULL), 0);
}
END_TEST

static void write_text(const char *name, const char *text)
{
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s/%s", dir, ASYS_CPU_RAW_DIR, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

#define RUN_JSON(depth) \
    "{\"scope\":1,\"backtrace\":1,\"period_cycles\":2000000,\"depth\":" depth \
    ",\"stack_bytes\":0,\"status\":1,\"event\":2,\"period\":869565,\"nominal_mhz\":2300," \
    "\"sched_source\":1,\"sample_type\":\"423\",\"regs_mask\":0,\"cpus\":2,\"target\":4242," \
    "\"prev_pid_offset\":24,\"prev_state_offset\":32,\"prev_state_size\":8," \
    "\"next_pid_offset\":56,\"reason\":\"\"}"

/* asys finalize of a session whose launcher died: the rings it left become
 * segments; a run description out of range is refused, not trusted. */
START_TEST(recovery_reads_the_run_description)
{
    struct asys_err err = {0};
    ck_assert_int_eq(asys_cpu_samples_recover(dir, &err), 0); /* nothing to recover */
    ck_assert_int_eq(count_records("cpu-sched", ASYS_REC_CPU_SAMPLING_INFO, NULL), -1);
    write_text(ASYS_CPU_RUN_FILE, RUN_JSON("100000"));
    ck_assert_int_eq(asys_cpu_samples_recover(dir, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "'depth' missing or out of range"));
    struct ring r = {.used = 0};
    const uint64_t ips[] = {0x401000, 0x401100};
    put_sample(&r, 4242, 200, ips, 2);
    save(&r, "samples-cpu0.perf");
    write_text(ASYS_CPU_RUN_FILE, RUN_JSON("24"));
    ck_assert_int_eq(asys_cpu_samples_recover(dir, &err), 0);
    ck_assert_int_eq(count_records("cpu-p4242-0", ASYS_REC_CPU_SAMPLE, NULL), 1);
    ck_assert_int_eq(count_records("cpu-sched", ASYS_REC_CPU_SAMPLING_INFO, NULL), 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cpu_sampling");
    TCase *tc = tcase_create("offline");
    /* Check's default is 4 s: an ASan build on a loaded CI machine ran over */
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, good_samples_become_a_segment);
    tcase_add_test(tc, damaged_records_are_skipped);
    tcase_add_test(tc, nothing_recorded_still_says_what_the_sampler_did);
    tcase_add_test(tc, recovery_reads_the_run_description);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
