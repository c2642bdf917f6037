/* Arena slots compressed while recording (recorder/arena_frames.c): the
 * report finalize writes with the frames holds the same members, byte for
 * byte, as without them; damaged index entries are not used. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <zstd.h>

#include "archive.h"
#include "arena_compressor.h"
#include "arena_frames.h"
#include "arena_read.h"
#include "finalize.h"
#include "segment_writer.h"
#include "test_util.h"

#define SLOT (512u << 10)
#define RECORDS 400000 /* 3.2 MB per writer: 6 slots, 3 of them sealed */

static char dir[PATH_MAX];
static char arena_path[PATH_MAX + 32], index_path[PATH_MAX + 32];

static void setup(void)
{
    char segments[PATH_MAX + 16];
    test_mkdtemp(dir, sizeof dir);
    snprintf(segments, sizeof segments, "%s/segments", dir);
    ck_assert_int_eq(mkdir(segments, 0700), 0);
    snprintf(arena_path, sizeof arena_path, "%s/" ASYS_ARENA_NAME, segments);
    snprintf(index_path, sizeof index_path, "%s/" ASYS_ARENA_FRAME_INDEX_NAME, dir);
    ck_assert_int_eq(asys_arena_create(arena_path, SLOT), 0);
}

static void teardown(void)
{
    test_rmdir(dir);
}

/* Two writers whose slots interleave, records of varied words, with the
 * compressor running (and finishing everything sealed). */
static void record(int finish_all)
{
    struct asys_err err = {0};
    struct asys_arena_compressor *c = NULL;
    ck_assert_msg(asys_arena_compressor_start(dir, finish_all, &c, &err) == 0, "%s", err.text);
    ck_assert_ptr_nonnull(c);
    struct asys_arena arena;
    ck_assert_int_eq(asys_arena_attach(&arena, arena_path), 0);
    struct asys_segment_writer w[2];
    for (int k = 0; k < 2; k++) {
        struct asys_segment_header h;
        memset(&h, 0, sizeof h);
        h.collector = ASYS_SEGMENT_THREAD;
        h.feature_mask = ASYS_FEATURE_CORE | ASYS_FEATURE_HGTX;
        h.pid = h.tid = 300 + (uint32_t)k;
        h.process_uid = 9;
        h.clock_kind = ASYS_CLOCK_MONOTONIC;
        h.base_ticks = 1000;
        ck_assert_int_eq(asys_segment_open_arena(&w[k], &arena, &h, 1ull << 30), 0);
    }
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < RECORDS; i++)
        for (int k = 0; k < 2; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            uint32_t delta;
            asys_rec_word *r = asys_segment_reserve(&w[k], 8, 2000 + (uint64_t)i * 3, &delta);
            ck_assert_ptr_nonnull(r);
            asys_segment_commit(r, ASYS_REC_WORD(ASYS_REC_HGTX_PUSH, 1, x >> 48, delta));
        }
    asys_segment_close(&w[0]);
    asys_segment_close(&w[1]);
    asys_arena_detach(&arena);
    asys_arena_compressor_finish(c);
    char report[PATH_MAX + 32];
    snprintf(report, sizeof report, "%s/early.asys-rep", dir);
    struct asys_finalize_result res;
    struct asys_finalize_aids aids = {c, NULL};
    ck_assert_msg(asys_finalize(dir, report, 0, NULL, &aids, &res, &err) == 0, "%s", err.text);
}

static void finalize_as(const char *name, char *report, size_t size)
{
    struct asys_finalize_result res;
    struct asys_err err = {0};
    snprintf(report, size, "%s/%s.asys-rep", dir, name);
    ck_assert_msg(asys_finalize(dir, report, 0, NULL, NULL, &res, &err) == 0, "%s", err.text);
}

static int zstd_frames(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    uint8_t *data = malloc((size_t)st.st_size);
    ck_assert_int_eq(read(fd, data, (size_t)st.st_size), st.st_size);
    close(fd);
    int frames = 0;
    for (size_t at = 0; at < (size_t)st.st_size;) {
        size_t n = ZSTD_findFrameCompressedSize(data + at, (size_t)st.st_size - at);
        ck_assert(!ZSTD_isError(n));
        /* the report mark is a skippable frame, not data */
        uint32_t magic;
        memcpy(&magic, data + at, sizeof magic);
        frames += (magic & 0xFFFFFFF0u) != 0x184D2A50u;
        at += n;
    }
    free(data);
    return frames;
}

static uint8_t *read_member(struct asys_archive_reader *r, uint64_t size)
{
    uint8_t *data = malloc(size + 1);
    uint64_t at = 0;
    long n;
    while ((n = asys_archive_read(r, data + at, size + 1 - at)) > 0)
        at += (uint64_t)n;
    ck_assert_int_eq(n, 0);
    ck_assert_uint_eq(at, size);
    return data;
}

/* Every member of `b` equals `a`'s (the manifest's report id aside). */
static void assert_same_members(const char *a, const char *b)
{
    struct asys_archive_reader *r[2];
    struct asys_err err = {0};
    ck_assert_msg(asys_archive_reader_open(&r[0], a, NULL, &err) == 0, "%s", err.text);
    ck_assert_msg(asys_archive_reader_open(&r[1], b, NULL, &err) == 0, "%s", err.text);
    int members = 0;
    for (;;) {
        struct asys_archive_member m[2];
        int more = asys_archive_next(r[0], &m[0], &err);
        ck_assert_int_eq(asys_archive_next(r[1], &m[1], &err), more);
        if (more <= 0)
            break;
        ck_assert_str_eq(m[0].name, m[1].name);
        ck_assert_uint_eq(m[0].size, m[1].size);
        if (!strcmp(m[0].name, ASYS_MANIFEST_NAME))
            continue;
        members++;
        uint8_t *data[2] = {read_member(r[0], m[0].size), read_member(r[1], m[1].size)};
        ck_assert_msg(!memcmp(data[0], data[1], m[0].size), "member %s differs", m[0].name);
        free(data[0]);
        free(data[1]);
    }
    ck_assert_int_eq(members, 2);
    asys_archive_reader_close(r[0]);
    asys_archive_reader_close(r[1]);
}

static size_t read_index(struct asys_arena_frame *entries, size_t max)
{
    int fd = open(index_path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ssize_t n = read(fd, entries, max * sizeof *entries);
    close(fd);
    ck_assert_int_ge(n, 0);
    ck_assert_int_eq(n % (ssize_t)sizeof *entries, 0);
    return (size_t)n / sizeof *entries;
}

static void write_index(const struct asys_arena_frame *entries, size_t count)
{
    int fd = open(index_path, O_WRONLY | O_TRUNC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, entries, count * sizeof *entries),
                     (ssize_t)(count * sizeof *entries));
    close(fd);
}

/* Each segment's slots but its first (the header's) and last two (not sealed). */
static size_t sealed_slots(void)
{
    struct asys_arena_index index;
    struct asys_err err = {0};
    ck_assert_int_eq(asys_arena_index_read(arena_path, &index, &err), 0);
    ck_assert_uint_eq(index.count, 2);
    size_t sealed = 0;
    for (size_t i = 0; i < index.count; i++) {
        ck_assert_uint_ge(index.segments[i].count, 5);
        sealed += index.segments[i].count - 3;
    }
    asys_arena_index_free(&index);
    return sealed;
}

START_TEST(frames_stand_for_sealed_slots)
{
    record(1);
    char early[PATH_MAX + 32], plain[PATH_MAX + 32];
    snprintf(early, sizeof early, "%s/early.asys-rep", dir);
    struct asys_arena_frame entries[64];
    size_t count = read_index(entries, 64);
    ck_assert_uint_eq(count, sealed_slots());
    for (size_t i = 0; i < count; i++)
        ck_assert_uint_ge(entries[i].sequence, 1);
    ck_assert_int_ge(zstd_frames(early), 1 + (int)count);
    ck_assert_int_eq(unlink(index_path), 0);
    finalize_as("plain", plain, sizeof plain);
    ck_assert_int_eq(zstd_frames(plain), 1);
    assert_same_members(early, plain);
}
END_TEST

START_TEST(damaged_entries_are_not_used)
{
    record(1);
    char early[PATH_MAX + 32], damaged[PATH_MAX + 32];
    snprintf(early, sizeof early, "%s/early.asys-rep", dir);
    struct asys_arena_frame entries[64];
    size_t count = read_index(entries, 64);
    ck_assert_uint_ge(count, 5);
    entries[0].sequence++; /* not that slot's */
    entries[1].slot_offset = SLOT; /* the arena's first slot: a segment header's */
    entries[2].slot_offset += 1; /* no slot there */
    entries[3].frame_size = 3; /* shorter than a frame header: and the next... */
    write_index(entries, count); /* ...entries are out of order: none is used */
    finalize_as("damaged", damaged, sizeof damaged);
    ck_assert_int_eq(zstd_frames(damaged), 1);
    assert_same_members(early, damaged);
}
END_TEST

/* Not waiting for every sealed slot (what `asys profile` does): however
 * many frames there are, the members are the same. */
START_TEST(frames_as_they_come_change_nothing)
{
    record(0);
    char early[PATH_MAX + 32], plain[PATH_MAX + 32];
    snprintf(early, sizeof early, "%s/early.asys-rep", dir);
    struct asys_arena_frame entries[64];
    ck_assert_uint_le(read_index(entries, 64), sealed_slots());
    ck_assert_int_eq(unlink(index_path), 0);
    finalize_as("plain", plain, sizeof plain);
    assert_same_members(early, plain);
}
END_TEST

/* A session without an arena has no compressor; stopping NULL is fine. */
START_TEST(no_arena_no_compressor)
{
    struct asys_err err = {0};
    struct asys_arena_compressor *c = (void *)1;
    ck_assert_int_eq(unlink(arena_path), 0);
    ck_assert_int_eq(asys_arena_compressor_start(dir, 0, &c, &err), 0);
    ck_assert_ptr_null(c);
    asys_arena_compressor_finish(NULL);
    asys_arena_compressor_stop(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("arena_frames");
    TCase *tc = tcase_create("arena_frames");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, frames_stand_for_sealed_slots);
    tcase_add_test(tc, damaged_entries_are_not_used);
    tcase_add_test(tc, frames_as_they_come_change_nothing);
    tcase_add_test(tc, no_arena_no_compressor);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
