/* Importer: a session written record by record (no process involved), packed
 * by finalize and imported; reports that must be refused; the archive
 * writer's threads. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "finalize.h"
#include "importer.h"
#include "segment_writer.h"
#include "archive.h"
#include "test_util.h"

static char dir[PATH_MAX];
static char report[PATH_MAX + 32];

static void setup(void)
{
    test_mkdtemp(dir, sizeof dir);
    char seg[PATH_MAX + 32];
    snprintf(seg, sizeof seg, "%s/segments", dir);
    ck_assert_int_eq(mkdir(seg, 0700), 0);
    snprintf(report, sizeof report, "%s/out.asys-rep", dir);
}

static void teardown(void)
{
    test_rmdir(dir);
}

/* ---- writing records by hand ------------------------------------------------ */

static void seg_open_features(struct asys_segment_writer *w, const char *name, uint32_t pid,
                              uint32_t tid, uint64_t uid, uint64_t parent_uid,
                              uint32_t inherited_limit, uint64_t features)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/segments/%s", dir, name);
    struct asys_segment_header h;
    memset(&h, 0, sizeof h);
    h.collector = ASYS_SEGMENT_THREAD;
    h.feature_mask = features;
    h.pid = pid;
    h.tid = tid;
    h.process_uid = uid;
    h.parent_process_uid = parent_uid;
    h.inherited_string_limit = inherited_limit;
    h.clock_kind = ASYS_CLOCK_MONOTONIC;
    h.base_ticks = 0;
    ck_assert_int_eq(asys_segment_open(w, path, &h, ASYS_MIN_CHUNK_SIZE, 1 << 30), 0);
}

static void seg_open(struct asys_segment_writer *w, const char *name, uint32_t pid, uint32_t tid,
                     uint64_t uid, uint64_t parent_uid, uint32_t inherited_limit)
{
    seg_open_features(w, name, pid, tid, uid, parent_uid, inherited_limit,
                      ASYS_FEATURE_CORE | ASYS_FEATURE_HGTX);
}

static void *rec(struct asys_segment_writer *w, size_t size, uint64_t ticks, uint32_t *delta)
{
    void *r = asys_segment_reserve(w, (uint32_t)size, ticks, delta);
    ck_assert_ptr_nonnull(r);
    return r;
}

static void put_string(struct asys_segment_writer *w, uint32_t id, const char *text)
{
    size_t len = strlen(text);
    size_t size = sizeof(struct asys_rec_string_def) + ((len + 7) & ~(size_t)7);
    uint32_t delta;
    struct asys_rec_string_def *r = rec(w, size, w->last_ticks, &delta);
    r->size_bytes = 0;
    r->string_id = id;
    r->length = (uint32_t)len;
    r->flags = 0;
    memset(r + 1, 0, size - sizeof *r);
    memcpy(r + 1, text, len);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_STRING_DEF, size / 8, 0, delta));
}

static void put_word(struct asys_segment_writer *w, unsigned type, unsigned arg, uint64_t t)
{
    uint32_t delta;
    asys_rec_word *r = rec(w, 8, t, &delta);
    asys_segment_commit(r, ASYS_REC_WORD(type, 1, arg, delta));
}

static void put_range(struct asys_segment_writer *w, unsigned type, unsigned sid, uint64_t id,
                      uint64_t t)
{
    uint32_t delta;
    struct asys_rec_hgtx_range *r = rec(w, sizeof *r, t, &delta);
    r->range_id = id;
    asys_segment_commit(&r->header, ASYS_REC_WORD(type, 2, sid, delta));
}

static void put_ex(struct asys_segment_writer *w, unsigned type,
                   const struct asys_hgtx_attributes *a, uint64_t t)
{
    uint32_t delta;
    struct asys_rec_hgtx_ex *r = rec(w, sizeof *r, t, &delta);
    r->attr = *a;
    asys_segment_commit(&r->header, ASYS_REC_WORD(type, sizeof *r / 8, 0, delta));
}

static void put_process(struct asys_segment_writer *w, uint32_t pid, uint32_t ppid, uint32_t exe,
                        uint32_t cmd, uint32_t origin, uint64_t t)
{
    uint32_t delta;
    struct asys_rec_process_info *r = rec(w, sizeof *r, t, &delta);
    r->pid = pid;
    r->ppid = ppid;
    r->exe_string_id = exe;
    r->cmdline_string_id = cmd;
    r->origin = origin;
    r->reserved = 0;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_PROCESS_INFO, 4, 0, delta));
}

static void put_pair(struct asys_segment_writer *w, unsigned type, unsigned arg, uint32_t a,
                     uint32_t b, uint64_t t)
{
    uint32_t delta;
    struct asys_rec_thread *r = rec(w, 16, t, &delta); /* every 16-byte (u32, u32) record */
    r->tid = a;
    r->name_string_id = b;
    asys_segment_commit(&r->header, ASYS_REC_WORD(type, 2, arg, delta));
}

/* ---- a session with two processes ------------------------------------------------ */

#define RANGE_ID 0x10000000001ull

static void write_session(void)
{
    struct asys_segment_writer w;
    /* thread 11 of process 10: its segment is read first (names sort) and
     * ends a range, uses a registered string and a domain defined later */
    seg_open(&w, "a-t11.seg", 10, 11, 0xA, 0, 0);
    put_string(&w, 20, "comm11");
    put_pair(&w, ASYS_REC_THREAD_START, 0, 11, 20, 540);
    put_range(&w, ASYS_REC_HGTX_END, 0, RANGE_ID, 550);
    struct asys_hgtx_attributes a = {0};
    a.message_string_id = 8;
    a.message_type = 3;
    a.domain_id = 1;
    put_ex(&w, ASYS_REC_HGTX_PUSH_EX, &a, 560);
    put_word(&w, ASYS_REC_HGTX_POP, 1, 570);
    asys_segment_close(&w);

    /* the main thread of process 10 */
    seg_open(&w, "b-t10.seg", 10, 10, 0xA, 0, 0);
    put_string(&w, 1, "main");
    put_string(&w, 2, "/usr/bin/prog");
    put_string(&w, 3, "prog --x");
    put_process(&w, 10, 1, 2, 3, ASYS_PROCESS_LAUNCHED, 50);
    put_pair(&w, ASYS_REC_THREAD_START, 0, 10, 1, 60);
    put_string(&w, 4, "outer");
    put_word(&w, ASYS_REC_HGTX_PUSH, 4, 100);
    put_string(&w, 5, "inner");
    put_word(&w, ASYS_REC_HGTX_PUSH, 5, 200);
    put_word(&w, ASYS_REC_HGTX_POP, 0, 300);
    put_word(&w, ASYS_REC_HGTX_POP, 0, 400);
    put_string(&w, 6, "async");
    put_range(&w, ASYS_REC_HGTX_START, 6, RANGE_ID, 500);
    put_string(&w, 7, "mydomain");
    put_pair(&w, ASYS_REC_HGTX_DOMAIN, 1, 7, 0, 510);
    put_string(&w, 8, "reg");
    memset(&a, 0, sizeof a);
    a.message_string_id = 8;
    a.message_type = 3;
    a.domain_id = 1;
    a.category = 3;
    a.color_argb = 0xff00ff00u;
    a.payload_type = 2;
    a.payload = (uint64_t)(int64_t)-5;
    a.flags = ASYS_HGTX_HAS_COLOR | ASYS_HGTX_HAS_PAYLOAD | ASYS_HGTX_HAS_CATEGORY;
    put_ex(&w, ASYS_REC_HGTX_PUSH_EX, &a, 600);
    put_string(&w, 9, "cat3");
    put_pair(&w, ASYS_REC_HGTX_CATEGORY, 1, 3, 9, 610);
    put_string(&w, 10, "tick");
    put_word(&w, ASYS_REC_HGTX_MARK, 10, 650);
    put_string(&w, 12, "named-worker");
    put_pair(&w, ASYS_REC_HGTX_THREAD_NAME, 0, 11, 12, 660);
    put_word(&w, ASYS_REC_HGTX_POP, 1, 700);
    put_word(&w, ASYS_REC_HGTX_POP, 0, 800); /* a pop without a push */
    put_string(&w, 13, "never-ended");
    put_word(&w, ASYS_REC_HGTX_PUSH, 13, 900);
    asys_segment_close(&w);

    /* a fork child of process 10: ids below 14 are the parent's */
    seg_open(&w, "c-t20.seg", 20, 20, 0xB, 0xA, 14);
    put_process(&w, 20, 10, 2, 3, ASYS_PROCESS_FORKED, 950);
    put_string(&w, 14, "child");
    put_pair(&w, ASYS_REC_THREAD_START, 0, 20, 14, 960);
    put_word(&w, ASYS_REC_HGTX_PUSH, 4, 1000);
    put_word(&w, ASYS_REC_HGTX_POP, 0, 1100);
    memset(&a, 0, sizeof a);
    a.message_string_id = 5;
    a.message_type = 1;
    a.domain_id = 1;
    put_ex(&w, ASYS_REC_HGTX_PUSH_EX, &a, 1200);
    put_word(&w, ASYS_REC_HGTX_POP, 1, 1300);
    put_word(&w, ASYS_REC_HGTX_PUSH, 50, 1400); /* never defined */
    put_word(&w, ASYS_REC_HGTX_POP, 0, 1500);
    asys_segment_close(&w);
}

static int warnings;
static void count_warning(void *ctx, const char *text)
{
    (void)ctx;
    (void)text;
    warnings++;
}

static sqlite3 *import_report(uint64_t segments)
{
    struct asys_finalize_result res;
    struct asys_err err = {0};
    ck_assert_msg(asys_finalize(dir, report, 0, NULL, NULL, &res, &err) == 0, "%s", err.text);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    struct asys_import_stats stats;
    warnings = 0;
    ck_assert_msg(
        asys_import_report(report, db, NULL, count_warning, NULL, NULL, NULL, &stats, &err) == 0,
        "%s", err.text);
    ck_assert_uint_eq(stats.segments, segments);
    ck_assert_uint_eq(stats.bad_segments, 0);
    return db;
}

static long long query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(db));
    ck_assert_msg(sqlite3_step(st) == SQLITE_ROW, "no row: %s", sql);
    long long v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -999 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void query_text(sqlite3 *db, const char *sql, char *out, size_t size)
{
    sqlite3_stmt *st = NULL;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(db));
    ck_assert_msg(sqlite3_step(st) == SQLITE_ROW, "no row: %s", sql);
    const unsigned char *t = sqlite3_column_text(st, 0);
    snprintf(out, size, "%s", t ? (const char *)t : "(null)");
    sqlite3_finalize(st);
}

#define EVENT(cond) \
    "SELECT %s FROM hgtx_events e LEFT JOIN strings s ON s.id = e.text_id WHERE " cond

START_TEST(imports_ranges_threads_processes)
{
    write_session();
    sqlite3 *db = import_report(3);
    char text[256];
    ck_assert_int_eq(query_int(db, "SELECT COUNT(*) FROM hgtx_events"), 10);
    /* nesting */
    ck_assert_int_eq(query_int(db, "SELECT e.start_ns FROM hgtx_events e JOIN strings s ON s.id = "
                                   "e.text_id WHERE s.value = 'outer' AND e.pid = 10"),
                     100);
    ck_assert_int_eq(query_int(db, "SELECT e.end_ns FROM hgtx_events e JOIN strings s ON s.id = "
                                   "e.text_id WHERE s.value = 'outer' AND e.pid = 10"),
                     400);
    ck_assert_int_eq(query_int(db, "SELECT e.nesting_level FROM hgtx_events e JOIN strings s ON "
                                   "s.id = e.text_id WHERE s.value = 'inner' AND e.pid = 10"),
                     1);
    ck_assert_int_eq(
        query_int(db,
                  "SELECT p.start_ns FROM hgtx_events e JOIN strings s ON s.id = e.text_id JOIN "
                  "hgtx_events p ON p.id = e.parent_id WHERE s.value = 'inner' AND e.pid = 10"),
        100);
    /* a start/end range ended on another thread, read in the other order */
    ck_assert_int_eq(query_int(db, "SELECT e.end_ns - e.start_ns FROM hgtx_events e JOIN strings s "
                                   "ON s.id = e.text_id WHERE s.value = 'async'"),
                     50);
    ck_assert_int_eq(query_int(db, "SELECT e.end_tid FROM hgtx_events e JOIN strings s ON s.id = "
                                   "e.text_id WHERE s.value = 'async'"),
                     11);
    /* attributes, domain, category */
    ck_assert_int_eq(query_int(db, "SELECT color FROM hgtx_events WHERE color IS NOT NULL"),
                     0xff00ff00);
    ck_assert_int_eq(query_int(db, "SELECT payload FROM hgtx_events WHERE payload IS NOT NULL"),
                     -5);
    query_text(db,
               "SELECT s.value FROM hgtx_events e JOIN hgtx_domains d ON d.id = e.domain_id JOIN "
               "strings s ON s.id = d.name_id WHERE e.color IS NOT NULL",
               text, sizeof text);
    ck_assert_str_eq(text, "mydomain");
    query_text(db,
               "SELECT s.value FROM hgtx_categories c JOIN strings s ON s.id = c.name_id WHERE "
               "c.category = 3",
               text, sizeof text);
    ck_assert_str_eq(text, "cat3");
    /* the other thread's registered string and domain, defined after their use */
    query_text(db,
               "SELECT s.value || '@' || ds.value FROM hgtx_events e JOIN strings s ON s.id = "
               "e.text_id JOIN hgtx_domains d ON d.id = e.domain_id JOIN strings ds ON ds.id = "
               "d.name_id WHERE e.tid = 11",
               text, sizeof text);
    ck_assert_str_eq(text, "reg@mydomain");
    /* marks, open ranges, unmatched pops */
    ck_assert_int_eq(query_int(db, "SELECT end_ns - start_ns FROM hgtx_events WHERE kind = 3"), 0);
    ck_assert_int_eq(query_int(db, "SELECT COUNT(*) FROM hgtx_events WHERE end_ns IS NULL"), 1);
    ck_assert_int_eq(
        query_int(db, "SELECT value FROM session_info WHERE key = 'hgtx_unmatched_pops'"), 1);
    ck_assert_int_eq(query_int(db, "SELECT value FROM session_info WHERE key = 'hgtx_open_ranges'"),
                     1);
    /* threads: the HGTX name wins over comm */
    query_text(db,
               "SELECT s.value FROM threads t JOIN strings s ON s.id = t.name_id WHERE t.tid = 11",
               text, sizeof text);
    ck_assert_str_eq(text, "named-worker");
    query_text(db,
               "SELECT s.value FROM threads t JOIN strings s ON s.id = t.name_id WHERE t.tid = 10",
               text, sizeof text);
    ck_assert_str_eq(text, "main");
    ck_assert_int_eq(query_int(db, "SELECT COUNT(*) FROM threads"), 3);
    /* processes, and the fork child resolving the parent's ids */
    query_text(
        db, "SELECT s.value FROM processes p JOIN strings s ON s.id = p.name_id WHERE p.pid = 10",
        text, sizeof text);
    ck_assert_str_eq(text, "prog");
    ck_assert_int_eq(query_int(db, "SELECT forked FROM processes WHERE pid = 20"), 1);
    query_text(db,
               "SELECT s.value FROM processes p JOIN strings s ON s.id = p.exe_id WHERE p.pid = 20",
               text, sizeof text);
    ck_assert_str_eq(text, "/usr/bin/prog");
    query_text(db,
               "SELECT s.value FROM hgtx_events e JOIN strings s ON s.id = e.text_id WHERE e.pid = "
               "20 AND e.start_ns = 1000",
               text, sizeof text);
    ck_assert_str_eq(text, "outer");
    query_text(db,
               "SELECT s.value FROM hgtx_events e JOIN hgtx_domains d ON d.id = e.domain_id JOIN "
               "strings s ON s.id = d.name_id WHERE e.pid = 20 AND e.start_ns = 1200",
               text, sizeof text);
    ck_assert_str_eq(text, "mydomain");
    query_text(db,
               "SELECT s.value FROM hgtx_events e JOIN strings s ON s.id = e.text_id WHERE e.pid = "
               "20 AND e.start_ns = 1400",
               text, sizeof text);
    ck_assert_str_eq(text, "[unknown string 50]");
    ck_assert_int_eq(warnings, 1); /* the unmatched pop */
    sqlite3_close(db);
}
END_TEST

/* ---- reports that must be refused -------------------------------------------------- */

static void expect_refused(const char *path, const char *reason)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    struct asys_import_stats stats;
    struct asys_err err = {0};
    ck_assert_int_eq(asys_import_report(path, db, NULL, NULL, NULL, NULL, NULL, &stats, &err), -1);
    ck_assert_msg(strstr(err.text, reason) != NULL, "expected '%s' in '%s'", reason, err.text);
    sqlite3_close(db);
}

static void write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, size, f), size);
    fclose(f);
}

/* A zstd tar with the given members (name, text), as finalize writes one. */
static void write_archive(const char *path, const char *const *members, int count)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ck_assert_int_ge(fd, 0);
    struct asys_archive_writer *w = NULL;
    struct asys_err err = {0};
    ck_assert_int_eq(asys_archive_writer_open(&w, fd, &err), 0);
    for (int i = 0; i < count; i++)
        ck_assert_int_eq(asys_archive_add_buffer(w, members[2 * i], members[2 * i + 1],
                                                 strlen(members[2 * i + 1]), &err),
                         0);
    ck_assert_int_eq(asys_archive_writer_close(w, &err), 0);
    close(fd);
}

#define MEMBER_BYTES (2u << 20)

/* This process's threads (its /proc/self/task entries). */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The threads while a 2 MiB member is compressed (told `expect` bytes to
 * come, or nothing when 0); the archive reads back whole either way. */
static int threads_compressing(uint64_t expect)
{
    static char data[MEMBER_BYTES];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)('a' + (i * 2654435761u >> 13) % 26);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/threads.asys-rep", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ck_assert_int_ge(fd, 0);
    struct asys_archive_writer *w = NULL;
    struct asys_err err = {0};
    ck_assert_int_eq(asys_archive_writer_open(&w, fd, &err), 0);
    if (expect)
        asys_archive_writer_expect(w, expect);
    ck_assert_int_eq(asys_archive_add_buffer(w, "manifest.json", data, sizeof data, &err), 0);
    int threads = thread_count();
    ck_assert_int_eq(asys_archive_writer_close(w, &err), 0);
    close(fd);
    struct asys_archive_reader *r = NULL;
    ck_assert_int_eq(asys_archive_reader_open(&r, path, NULL, &err), 0);
    struct asys_archive_member entry;
    ck_assert_int_eq(asys_archive_next(r, &entry, &err), 1);
    ck_assert_uint_eq(entry.size, sizeof data);
    static char back[MEMBER_BYTES];
    size_t got = 0;
    long n;
    while (got < sizeof back && (n = asys_archive_read(r, back + got, sizeof back - got)) > 0)
        got += (size_t)n;
    ck_assert_uint_eq(got, sizeof data);
    ck_assert_int_eq(memcmp(back, data, sizeof data), 0);
    asys_archive_reader_close(r);
    unlink(path);
    return threads;
}

START_TEST(small_archives_compress_on_the_callers_thread)
{
    int alone = thread_count();
    ck_assert_int_eq(threads_compressing(MEMBER_BYTES + 1024), alone);
    /* with nothing said (or 16 MiB and more), zstd's workers where it has them */
    ZSTD_bounds workers = ZSTD_cParam_getBounds(ZSTD_c_nbWorkers);
    if (sysconf(_SC_NPROCESSORS_ONLN) > 1 && !ZSTD_isError(workers.error) &&
        workers.upperBound > 0) {
        ck_assert_int_gt(threads_compressing(0), alone);
        ck_assert_int_gt(threads_compressing(64ull << 20), alone);
    }
}
END_TEST

START_TEST(refuses_bad_reports)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/bad.asys-rep", dir);

    write_file(path, "", 0);
    expect_refused(path, "empty file");

    unsigned char noise[4096];
    for (size_t i = 0; i < sizeof noise; i++)
        noise[i] = (unsigned char)(i * 7919u >> 3);
    write_file(path, noise, sizeof noise);
    expect_refused(path, "not an asys report");

    const char *manifest = "{\"format_version\": 1}";
    const char *escape[] = {"manifest.json", manifest, "../x", "boo"};
    write_archive(path, escape, 2);
    expect_refused(path, "unsafe member name '../x'");
    const char *absolute[] = {"manifest.json", manifest, "/etc/x.seg", "boo"};
    write_archive(path, absolute, 2);
    expect_refused(path, "unsafe member name");

    const char *future[] = {"manifest.json", "{\"format_version\": 99}"};
    write_archive(path, future, 1);
    expect_refused(path, "format version 99 is newer");

    const char *no_manifest[] = {"segments/x.seg", "boo"};
    write_archive(path, no_manifest, 1);
    expect_refused(path, "not manifest.json");
}
END_TEST

/* Manifest numbers come from a file: out of range ones are left out, an end
 * before the start is not used, nothing overflows (issue 12.2). */
START_TEST(hostile_manifest_numbers)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/m.asys-rep", dir);
    const char *members[] = {
        "manifest.json",
        "{\"format_version\": 2, \"session\": {\"start_monotonic_ns\": \"5\", "
        "\"end_monotonic_ns\": \"18446744073709551615\", \"start_realtime_ns\": 1e300}, "
        "\"clock\": {\"tick_hz\": -1e308, \"realtime_minus_monotonic_ns\": -1e300, "
        "\"pairs\": [[1e300, 5], [\"-3\", 7]]}, \"target\": {\"pid\": 1e19}}"};
    write_archive(path, members, 1);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    struct asys_import_stats stats;
    struct asys_err err = {0};
    warnings = 0;
    ck_assert_msg(
        asys_import_report(path, db, NULL, count_warning, NULL, NULL, NULL, &stats, &err) == 0,
        "%s", err.text);
    ck_assert_int_eq(query_int(db, "SELECT value FROM session_info WHERE key = 'start_ns'"), 5);
    ck_assert_int_eq(query_int(db, "SELECT COUNT(*) FROM session_info WHERE key IN "
                                   "('end_ns', 'duration_ns', 'start_realtime_ns', "
                                   "'clock_tick_hz', 'target_pid')"),
                     0);
    sqlite3_close(db);
    /* an end before the start */
    const char *backwards[] = {"manifest.json",
                               "{\"format_version\": 2, \"session\": {\"start_monotonic_ns\": "
                               "900, \"end_monotonic_ns\": 100}}"};
    write_archive(path, backwards, 1);
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    warnings = 0;
    ck_assert_int_eq(
        asys_import_report(path, db, NULL, count_warning, NULL, NULL, NULL, &stats, &err), 0);
    ck_assert_int_eq(warnings, 1);
    ck_assert_int_eq(query_int(db, "SELECT COUNT(*) FROM session_info WHERE key IN "
                                   "('end_ns', 'duration_ns')"),
                     0);
    sqlite3_close(db);
}
END_TEST

START_TEST(refuses_truncated_report)
{
    /* enough records that the archive spans many compressed blocks */
    struct asys_segment_writer w;
    seg_open(&w, "big.seg", 5, 5, 0xC, 0, 0);
    uint64_t t = 0, x = 88172645463325252ull;
    for (int i = 0; i < 400000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t += 1 + (x & 0xffff);
        put_word(&w, i % 2 ? ASYS_REC_HGTX_POP : ASYS_REC_HGTX_PUSH, (unsigned)(x >> 48), t);
    }
    asys_segment_close(&w);
    struct asys_finalize_result res;
    struct asys_err err = {0};
    ck_assert_msg(asys_finalize(dir, report, 0, NULL, NULL, &res, &err) == 0, "%s", err.text);
    struct stat st;
    ck_assert_int_eq(stat(report, &st), 0);
    ck_assert_int_gt(st.st_size, 100000);
    ck_assert_int_eq(truncate(report, st.st_size / 2), 0);
    expect_refused(report, "truncated");
}
END_TEST

/* A format 1 segment (no drop counts by cause) is still read; its drops
 * are counted, with no cause; a format 2 one's by cause. */
START_TEST(reads_format_1_segments)
{
    write_session();
    struct asys_segment_writer w;
    seg_open(&w, "d-t30.seg", 30, 30, 0xC, 0, 0);
    put_string(&w, 1, "old");
    put_pair(&w, ASYS_REC_THREAD_START, 0, 30, 1, 2000);
    w.header->format_version = 1;
    w.header->dropped_records = 5;
    w.header->dropped_bytes = 40;
    asys_segment_close(&w);
    seg_open(&w, "e-t40.seg", 40, 40, 0xD, 0, 0);
    put_pair(&w, ASYS_REC_THREAD_START, 0, 40, 0, 2100);
    asys_segment_count_lost(w.header, 8, ASYS_DROP_REENTRY);
    asys_segment_close(&w);

    struct asys_finalize_result res;
    struct asys_err err = {0};
    ck_assert_msg(asys_finalize(dir, report, 0, NULL, NULL, &res, &err) == 0, "%s", err.text);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    struct asys_import_stats stats;
    ck_assert_msg(asys_import_report(report, db, NULL, NULL, NULL, NULL, NULL, &stats, &err) == 0,
                  "%s", err.text);
    ck_assert_uint_eq(stats.bad_segments, 0);
    ck_assert_int_eq(query_int(db, "SELECT format_version FROM segments WHERE pid = 30"), 1);
    ck_assert_int_eq(query_int(db, "SELECT dropped_records FROM segments WHERE pid = 30"), 5);
    ck_assert_int_eq(query_int(db, "SELECT dropped_full FROM segments WHERE pid = 30"), -999);
    ck_assert_int_eq(query_int(db, "SELECT dropped_reentry FROM segments WHERE pid = 40"), 1);
    ck_assert_int_eq(query_int(db, "SELECT dropped_full FROM segments WHERE pid = 40"), 0);
    ck_assert_int_eq(query_int(db, "SELECT COUNT(*) FROM threads WHERE pid = 30"), 1);
    sqlite3_close(db);
}
END_TEST

/* Ids come from a file: a huge string id costs a slot, not an array that
 * size, and a fork chain that loops ends (issue 12.1). */
START_TEST(hostile_string_ids_are_bounded)
{
    struct asys_segment_writer w;
    seg_open(&w, "a-t50.seg", 50, 50, 0xE, 0xF, 0xffffffffu); /* its parent: 0xF */
    put_pair(&w, ASYS_REC_THREAD_START, 0, 50, 0x7fffffffu, 100);
    struct asys_hgtx_attributes a = {0};
    a.message_string_id = 0xfffffff0u;
    a.message_type = 3;
    put_ex(&w, ASYS_REC_HGTX_MARK_EX, &a, 200);
    put_string(&w, 0x80000001u, "far");
    put_word(&w, ASYS_REC_HGTX_MARK, 0xffff, 300);
    asys_segment_close(&w);
    seg_open(&w, "b-t60.seg", 60, 60, 0xF, 0xE, 0xffffffffu); /* ...whose parent is 0xE */
    put_pair(&w, ASYS_REC_THREAD_START, 0, 60, 0x7ffffffeu, 400);
    asys_segment_close(&w);

    struct asys_finalize_result res;
    struct asys_err err = {0};
    ck_assert_msg(asys_finalize(dir, report, 0, NULL, NULL, &res, &err) == 0, "%s", err.text);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    struct asys_import_stats stats;
    ck_assert_msg(asys_import_report(report, db, NULL, NULL, NULL, NULL, NULL, &stats, &err) == 0,
                  "%s", err.text);
    ck_assert_int_eq(query_int(db, "SELECT COUNT(*) FROM threads"), 2);
    char text[256];
    query_text(db,
               "SELECT s.value FROM hgtx_events e JOIN strings s ON s.id = e.text_id "
               "WHERE e.start_ns = 200",
               text, sizeof text);
    ck_assert_str_eq(text, "[unknown string 4294967280]");
    /* the three references of the first segment (their owner: image 0xF, not read yet);
     * the second segment's, once 0xF names 0xE as its parent, loop and resolve to nothing */
    ck_assert_int_eq(query_int(db, "SELECT value FROM session_info "
                                   "WHERE key = 'strings_never_defined'"),
                     3);
    sqlite3_close(db);
}
END_TEST

static void put_switch(struct asys_segment_writer *w, uint32_t cpu, uint32_t prev, uint32_t next,
                       uint32_t prev_state, uint64_t t)
{
    uint32_t delta;
    struct asys_rec_sched_switch *r = rec(w, sizeof *r, t, &delta);
    r->cpu = cpu;
    r->prev_tid = prev;
    r->next_tid = next;
    r->prev_pid = prev == 11 || prev == 10 ? 10 : 0; /* 10 and 11 are the tree's */
    r->next_pid = next == 11 || next == 10 ? 10 : 0;
    r->prev_state = prev_state;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_SCHED_SWITCH, sizeof *r / 8, 0, delta));
}

/* Thread 11 runs on core 0, is preempted and moves to core 1, which had
 * gone idle, but the switch that brought it in there was lost: it cannot
 * have run on core 1 before it left core 0, nor while core 0's switches say
 * it ran there. */
START_TEST(missing_switches_never_run_a_thread_twice)
{
    write_session();
    struct asys_segment_writer w;
    seg_open_features(&w, "d-cpu-sched.seg", 10, 12, 0xA, 0, 0,
                      ASYS_FEATURE_CORE | ASYS_FEATURE_CPU_SAMPLING);
    put_switch(&w, 0, 0, 11, 0, 2000);
    put_switch(&w, 1, 10, 0, ASYS_TASK_INTERRUPTIBLE, 2100); /* core 1 idle */
    put_switch(&w, 0, 11, 99, 0, 2500); /* preempted */
    put_switch(&w, 1, 11, 0, ASYS_TASK_INTERRUPTIBLE, 3000); /* in at 2500-3000: lost */
    put_switch(&w, 0, 99, 11, 0, 3100);
    put_switch(&w, 1, 0, 10, 0, 3200);
    put_switch(&w, 1, 10, 0, ASYS_TASK_INTERRUPTIBLE, 3300); /* core 1 idle */
    put_switch(&w, 1, 11, 0, ASYS_TASK_INTERRUPTIBLE, 3500); /* contradicts core 0 */
    put_switch(&w, 0, 11, 0, ASYS_TASK_INTERRUPTIBLE, 3600);
    asys_segment_close(&w);
    sqlite3 *db = import_report(4);
    char text[128];
    query_text(db,
               "SELECT group_concat(start_ns || '-' || end_ns) FROM (SELECT * FROM sched_slices "
               "WHERE tid = 11 ORDER BY start_ns)",
               text, sizeof text);
    ck_assert_str_eq(text, "2000-2500,2500-3000,3100-3600");
    ck_assert_int_eq(query_int(db, "SELECT COUNT(*) FROM (SELECT start_ns, LAG(end_ns) OVER "
                                   "(PARTITION BY tid ORDER BY start_ns) AS before FROM "
                                   "thread_states) WHERE before > start_ns"),
                     0);
    ck_assert_int_eq(query_int(db, "SELECT value FROM session_info WHERE key = "
                                   "'sched_switches_missing'"),
                     2);
    sqlite3_close(db);
}
END_TEST

START_TEST(finalize_refuses_to_overwrite)
{
    write_session();
    struct asys_finalize_result res;
    struct asys_err err = {0};
    ck_assert_int_eq(asys_finalize(dir, report, 0, NULL, NULL, &res, &err), 0);
    ck_assert_int_eq(asys_finalize(dir, report, 0, NULL, NULL, &res, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "file exists"));
    ck_assert_int_eq(asys_finalize(dir, report, 1, NULL, NULL, &res, &err), 0);
    ck_assert_uint_eq(res.segments, 3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("import");
    TCase *tc = tcase_create("import");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, imports_ranges_threads_processes);
    tcase_add_test(tc, refuses_bad_reports);
    tcase_add_test(tc, small_archives_compress_on_the_callers_thread);
    tcase_add_test(tc, refuses_truncated_report);
    tcase_add_test(tc, hostile_manifest_numbers);
    tcase_add_test(tc, reads_format_1_segments);
    tcase_add_test(tc, hostile_string_ids_are_bounded);
    tcase_add_test(tc, finalize_refuses_to_overwrite);
    tcase_add_test(tc, missing_switches_never_run_a_thread_twice);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
