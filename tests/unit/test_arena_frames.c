/* Arena slots compressed while recording (recorder/arena_frames.c): the
 * report finalize writes with the frames holds the same members, byte for
 * byte, as without them; damaged index entries are not used; slots
 * released from the arena are read from their frames, and counted as
 * damage when their frames are gone. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
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

/* A session directory with an empty arena in `d`. */
static void make_session(char *d, size_t size, char *arena, size_t arena_size)
{
    char segments[PATH_MAX + 16];
    test_mkdtemp(d, size);
    snprintf(segments, sizeof segments, "%s/segments", d);
    ck_assert_int_eq(mkdir(segments, 0700), 0);
    snprintf(arena, arena_size, "%s/" ASYS_ARENA_NAME, segments);
    ck_assert_int_eq(asys_arena_create(arena, SLOT), 0);
}

static void setup(void)
{
    make_session(dir, sizeof dir, arena_path, sizeof arena_path);
    snprintf(index_path, sizeof index_path, "%s/" ASYS_ARENA_FRAME_INDEX_NAME, dir);
}

static void teardown(void)
{
    test_rmdir(dir);
}

/* Index entries in `d`, waiting up to 60 s for `want` of them. */
static size_t wait_for_frames(const char *d, size_t want)
{
    char path[PATH_MAX + 32];
    struct stat st;
    snprintf(path, sizeof path, "%s/" ASYS_ARENA_FRAME_INDEX_NAME, d);
    for (int i = 0; i < 3000; i++) {
        if (stat(path, &st) == 0 && (size_t)st.st_size / sizeof(struct asys_arena_frame) >= want)
            break;
        usleep(20000);
    }
    return stat(path, &st) == 0 ? (size_t)st.st_size / sizeof(struct asys_arena_frame) : 0;
}

/* Two writers whose slots interleave, records of varied words, into the
 * arena of session `d`; with the compressor (`flags`) unless `flags` is
 * ~0u, which waits for `frames` index entries before the writers close;
 * finalized into d/early.asys-rep. */
static void record_in(const char *d, const char *arena_file, unsigned flags, size_t frames)
{
    struct asys_err err = {0};
    struct asys_arena_compressor *c = NULL;
    if (flags != ~0u) {
        ck_assert_msg(asys_arena_compressor_start(d, flags, &c, &err) == 0, "%s", err.text);
        ck_assert_ptr_nonnull(c);
    }
    struct asys_arena arena;
    ck_assert_int_eq(asys_arena_attach(&arena, arena_file), 0);
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
    if (frames)
        ck_assert_uint_ge(wait_for_frames(d, frames), frames);
    asys_segment_close(&w[0]);
    asys_segment_close(&w[1]);
    asys_arena_detach(&arena);
    asys_arena_compressor_finish(c);
    char report[PATH_MAX + 32];
    snprintf(report, sizeof report, "%s/early.asys-rep", d);
    struct asys_finalize_result res;
    struct asys_finalize_aids aids = {c, NULL, NULL, 0};
    ck_assert_msg(asys_finalize(d, report, 0, NULL, &aids, &res, &err) == 0, "%s", err.text);
    ck_assert_uint_eq(res.damaged_slots, 0);
}

static void record(int finish_all)
{
    record_in(dir, arena_path, finish_all ? ASYS_COMPRESS_FINISH_ALL : 0, 0);
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

/* Whether the slot at `offset`'s pages after its first are a hole. */
static int released_pages(uint64_t offset)
{
    int fd = open(arena_path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    off_t data = lseek(fd, (off_t)(offset + (uint64_t)sysconf(_SC_PAGESIZE)), SEEK_DATA);
    close(fd);
    return data < 0 || (uint64_t)data >= offset + SLOT;
}

/* Slots released while the writers still write (what `asys profile`
 * does): their pages are given back, and the report is the one the same
 * records make without any compression. */
START_TEST(released_slots_read_from_their_frames)
{
    record_in(dir, arena_path,
              ASYS_COMPRESS_RELEASE | ASYS_COMPRESS_EAGER | ASYS_COMPRESS_FINISH_ALL, 4);
    struct asys_arena_frame entries[64];
    size_t count = read_index(entries, 64), released = 0;
    for (size_t i = 0; i < count; i++)
        if (entries[i].flags & ASYS_ARENA_FRAME_RELEASED) {
            released++;
            ck_assert_msg(released_pages(entries[i].slot_offset), "slot %" PRIu64 " still there",
                          entries[i].slot_offset);
        }
    ck_assert_uint_ge(released, 4);
    ck_assert_uint_eq(count, sealed_slots()); /* the rest once the program had exited */
    char other[PATH_MAX], other_arena[PATH_MAX + 32], early[PATH_MAX + 32], plain[PATH_MAX + 32];
    make_session(other, sizeof other, other_arena, sizeof other_arena);
    record_in(other, other_arena, ~0u, 0);
    snprintf(early, sizeof early, "%s/early.asys-rep", dir);
    snprintf(plain, sizeof plain, "%s/early.asys-rep", other);
    assert_same_members(early, plain);
    test_rmdir(other);
}
END_TEST

/* Without the frames of the released slots, their records are lost:
 * counted as damage, their segments ending there. */
START_TEST(released_slots_without_frames_are_damage)
{
    record_in(dir, arena_path, ASYS_COMPRESS_RELEASE | ASYS_COMPRESS_EAGER, 2);
    struct asys_arena_frame entries[64];
    size_t count = read_index(entries, 64), released = 0;
    for (size_t i = 0; i < count; i++)
        released += (entries[i].flags & ASYS_ARENA_FRAME_RELEASED) != 0;
    ck_assert_uint_ge(released, 2);
    ck_assert_int_eq(unlink(index_path), 0);
    struct asys_finalize_result res;
    struct asys_err err = {0};
    char report[PATH_MAX + 32];
    snprintf(report, sizeof report, "%s/lost.asys-rep", dir);
    ck_assert_msg(asys_finalize(dir, report, 0, NULL, NULL, &res, &err) == 0, "%s", err.text);
    ck_assert_uint_eq(res.damaged_slots, released);
    ck_assert_uint_ge(res.damaged_segments, 1);
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
    tcase_add_test(tc, released_slots_read_from_their_frames);
    tcase_add_test(tc, released_slots_without_frames_are_damage);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
