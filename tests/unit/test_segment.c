/* Segment writer and reader: round trips, chunk growth, drops, crash safety,
 * damaged data. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "arena_read.h"
#include "segment_stream.h"
#include "segment_writer.h"
#include "test_util.h"
#include "json_util.h"
#include "window_filter.h"

static char dir[PATH_MAX];
static char path[PATH_MAX + 32];

static void setup(void)
{
    test_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/t.seg", dir);
}

static void teardown(void)
{
    test_rmdir(dir);
}

static struct asys_segment_header header_template(uint64_t base)
{
    struct asys_segment_header h;
    memset(&h, 0, sizeof h);
    h.collector = ASYS_SEGMENT_THREAD;
    h.feature_mask = ASYS_FEATURE_CORE | ASYS_FEATURE_HGTX;
    h.pid = 100;
    h.tid = 101;
    h.process_uid = 7;
    h.clock_kind = ASYS_CLOCK_MONOTONIC;
    h.base_ticks = base;
    return h;
}

static void open_writer(struct asys_segment_writer *w, uint64_t chunk, uint64_t max)
{
    struct asys_segment_header h = header_template(1000);
    ck_assert_int_eq(asys_segment_open(w, path, &h, chunk, max), 0);
}

static int write_word(struct asys_segment_writer *w, unsigned type, unsigned arg, uint64_t ticks)
{
    uint32_t delta;
    asys_rec_word *r = asys_segment_reserve(w, 8, ticks, &delta);
    if (!r)
        return 0;
    asys_segment_commit(r, ASYS_REC_WORD(type, 1, arg, delta));
    return 1;
}

static int write_string(struct asys_segment_writer *w, uint32_t id, const char *text, size_t len)
{
    uint32_t size = (uint32_t)(sizeof(struct asys_rec_string_def) + ((len + 7) & ~(size_t)7));
    uint32_t delta;
    struct asys_rec_string_def *r = asys_segment_reserve(w, size, w->last_ticks, &delta);
    if (!r)
        return 0;
    unsigned words = size / 8 < 255 ? size / 8 : 255;
    r->size_bytes = words == 255 ? size : 0;
    r->string_id = id;
    r->length = (uint32_t)len;
    r->flags = 0;
    memcpy(r + 1, text, len);
    memset((char *)(r + 1) + len, 0, size - sizeof *r - len);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_STRING_DEF, words, 0, delta));
    return 1;
}

struct reader {
    int fd;
    struct asys_segment_stream s;
    struct asys_err err;
};

static int open_reader(struct reader *r)
{
    struct stat st;
    r->fd = open(path, O_RDONLY);
    ck_assert_int_ge(r->fd, 0);
    ck_assert_int_eq(fstat(r->fd, &st), 0);
    memset(&r->err, 0, sizeof r->err);
    return asys_segment_stream_open(&r->s, asys_read_fd, &r->fd, (uint64_t)st.st_size, &r->err);
}

static void close_reader(struct reader *r)
{
    asys_segment_stream_close(&r->s);
    close(r->fd);
}

START_TEST(round_trip_with_time_base_and_long_strings)
{
    struct asys_segment_writer w;
    open_writer(&w, ASYS_MIN_CHUNK_SIZE, 1 << 30);
    ck_assert(write_word(&w, ASYS_REC_HGTX_PUSH, 5, 1010));
    ck_assert(write_word(&w, ASYS_REC_HGTX_POP, 0, 1020));
    /* a gap larger than 32 bits of ticks needs a TIME_BASE record */
    ck_assert(write_word(&w, ASYS_REC_HGTX_PUSH, 6, 1020 + (1ull << 33)));
    char big[5000];
    memset(big, 'x', sizeof big);
    ck_assert(write_string(&w, 9, big, sizeof big)); /* extended size */
    ck_assert(write_string(&w, 10, "short", 5));
    /* a counter read that runs slightly behind is clamped, not negative */
    ck_assert(write_word(&w, ASYS_REC_HGTX_POP, 0, 1020 + (1ull << 33) - 5));
    asys_segment_close(&w);

    struct reader r;
    ck_assert_int_eq(open_reader(&r), 0);
    struct asys_record rec;
    unsigned types[16];
    uint64_t ticks[16];
    unsigned args[16];
    int n = 0, rc;
    while ((rc = asys_segment_stream_next(&r.s, &rec, &r.err)) > 0 && n < 16) {
        types[n] = rec.type;
        ticks[n] = rec.ticks;
        args[n] = rec.arg;
        if (rec.type == ASYS_REC_STRING_DEF) {
            const struct asys_rec_string_def *s = (const void *)rec.data;
            if (s->string_id == 9) {
                ck_assert_uint_eq(s->length, sizeof big);
                ck_assert(!memcmp(s + 1, big, sizeof big));
                ck_assert_uint_eq(rec.size, s->size_bytes);
            }
        }
        n++;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, 7);
    ck_assert_uint_eq(types[0], ASYS_REC_HGTX_PUSH);
    ck_assert_uint_eq(args[0], 5);
    ck_assert_uint_eq(ticks[0], 1010);
    ck_assert_uint_eq(ticks[1], 1020);
    ck_assert_uint_eq(types[2], ASYS_REC_TIME_BASE);
    ck_assert_uint_eq(types[3], ASYS_REC_HGTX_PUSH);
    ck_assert_uint_eq(ticks[3], 1020 + (1ull << 33));
    ck_assert_uint_eq(types[4], ASYS_REC_STRING_DEF);
    ck_assert_uint_eq(types[6], ASYS_REC_HGTX_POP);
    ck_assert_uint_eq(ticks[6], ticks[3]);
    close_reader(&r);
}
END_TEST

START_TEST(chunks_grow_and_pad)
{
    struct asys_segment_writer w;
    open_writer(&w, ASYS_MIN_CHUNK_SIZE, 1 << 30);
    const int count = 500000; /* 4 MB of one-word records: several chunks */
    for (int i = 0; i < count; i++)
        ck_assert(
            write_word(&w, i % 2 ? ASYS_REC_HGTX_POP : ASYS_REC_HGTX_PUSH, 1, 2000 + (uint64_t)i));
    /* records of an odd size leave a tail that must be padded */
    for (int i = 0; i < 20000; i++)
        ck_assert(
            write_string(&w, (uint32_t)i + 1, "abcdefghijklmnopqrstuvwxyz0123456789abcde", 41));
    uint64_t dropped = w.header->dropped_records;
    asys_segment_close(&w);
    ck_assert_uint_eq(dropped, 0);

    struct reader r;
    ck_assert_int_eq(open_reader(&r), 0);
    struct asys_record rec;
    int words = 0, strings = 0, pads = 0, rc;
    uint64_t last = 0;
    while ((rc = asys_segment_stream_next(&r.s, &rec, &r.err)) > 0) {
        if (rec.type == ASYS_REC_PAD) {
            pads++;
            continue;
        }
        if (rec.type == ASYS_REC_STRING_DEF) {
            strings++;
            continue;
        }
        ck_assert_uint_eq(rec.ticks, 2000 + (uint64_t)words);
        ck_assert_uint_ge(rec.ticks, last);
        last = rec.ticks;
        words++;
    }
    ck_assert_msg(rc == 0, "%s", r.err.text);
    ck_assert_int_eq(words, count);
    ck_assert_int_eq(strings, 20000);
    ck_assert_int_ge(pads, 1);
    close_reader(&r);
}
END_TEST

START_TEST(full_segment_counts_every_drop)
{
    struct asys_segment_writer w;
    open_writer(&w, ASYS_MIN_CHUNK_SIZE, ASYS_MIN_CHUNK_SIZE); /* one chunk, no growth */
    int written = 0, attempts = 100000;
    for (int i = 0; i < attempts; i++)
        written += write_word(&w, ASYS_REC_HGTX_PUSH, 1, 5000 + (uint64_t)i);
    ck_assert_int_lt(written, attempts);
    ck_assert_uint_eq(w.header->dropped_records, (uint64_t)(attempts - written));
    ck_assert_uint_eq(w.header->dropped_bytes, 8ull * (uint64_t)(attempts - written));
    /* every one of them for want of room */
    ck_assert_uint_eq(w.header->dropped_full, (uint64_t)(attempts - written));
    ck_assert_uint_eq(w.header->dropped_reentry, 0);
    ck_assert_uint_eq(w.header->dropped_big, 0);
    asys_segment_close(&w);

    struct reader r;
    ck_assert_int_eq(open_reader(&r), 0);
    ck_assert_uint_eq(r.s.header.dropped_records, (uint64_t)(attempts - written));
    struct asys_record rec;
    int n = 0;
    while (asys_segment_stream_next(&r.s, &rec, &r.err) > 0)
        n++;
    ck_assert_int_eq(n, written);
    close_reader(&r);
}
END_TEST

START_TEST(drops_are_counted_by_cause)
{
    struct asys_segment_writer w;
    open_writer(&w, ASYS_MIN_CHUNK_SIZE, 4 * ASYS_MIN_CHUNK_SIZE);
    uint32_t delta;
    /* a record larger than the format allows never fits, whatever the room */
    ck_assert_ptr_null(asys_segment_reserve(&w, ASYS_REC_MAX_SIZE + 8, 100, &delta));
    ck_assert_ptr_null(asys_segment_reserve(&w, ASYS_REC_MAX_SIZE + 8, 101, &delta));
    /* an event the collector gave up on inside its own work */
    asys_segment_count_lost(w.header, 16, ASYS_DROP_REENTRY);
    ck_assert_int_eq(write_word(&w, ASYS_REC_HGTX_PUSH, 1, 200), 1);
    ck_assert_uint_eq(w.header->dropped_big, 2);
    ck_assert_uint_eq(w.header->dropped_reentry, 1);
    ck_assert_uint_eq(w.header->dropped_full, 0);
    ck_assert_uint_eq(w.header->dropped_records, 3);
    ck_assert_uint_eq(w.header->dropped_bytes, 2ull * (ASYS_REC_MAX_SIZE + 8) + 16);
    asys_segment_close(&w);
}
END_TEST

START_TEST(torn_record_reads_as_end)
{
    struct asys_segment_writer w;
    open_writer(&w, ASYS_MIN_CHUNK_SIZE, 1 << 30);
    ck_assert(write_word(&w, ASYS_REC_HGTX_PUSH, 1, 1001));
    /* a crash between writing a body and publishing its header word */
    uint32_t delta;
    struct asys_rec_hgtx_range *r0 = asys_segment_reserve(&w, sizeof *r0, 1002, &delta);
    r0->range_id = 77;
    /* no commit, no close: the file is what a SIGKILL'd writer leaves */
    asys_segment_abandon(&w);

    struct reader r;
    ck_assert_int_eq(open_reader(&r), 0);
    struct asys_record rec;
    ck_assert_int_eq(asys_segment_stream_next(&r.s, &rec, &r.err), 1);
    ck_assert_uint_eq(rec.type, ASYS_REC_HGTX_PUSH);
    ck_assert_int_eq(asys_segment_stream_next(&r.s, &rec, &r.err), 0);
    close_reader(&r);
}
END_TEST

static void write_raw(const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, size, f), size);
    fclose(f);
}

START_TEST(damaged_records_are_reported)
{
    uint8_t buf[ASYS_SEGMENT_HEADER_SIZE + 64];
    memset(buf, 0, sizeof buf);
    struct asys_segment_header h = header_template(0);
    memcpy(h.magic, ASYS_SEGMENT_MAGIC, 8);
    h.format_version = ASYS_FORMAT_VERSION;
    h.header_size = ASYS_SEGMENT_HEADER_SIZE;
    memcpy(buf, &h, sizeof h);
    asys_rec_word good = ASYS_REC_WORD(ASYS_REC_HGTX_PUSH, 1, 1, 0);
    asys_rec_word bad_size = ASYS_REC_WORD(ASYS_REC_HGTX_PUSH_EX, 1, 0, 0); /* needs 40 bytes */
    memcpy(buf + ASYS_SEGMENT_HEADER_SIZE, &good, 8);
    memcpy(buf + ASYS_SEGMENT_HEADER_SIZE + 8, &bad_size, 8);
    write_raw(buf, sizeof buf);
    struct reader r;
    ck_assert_int_eq(open_reader(&r), 0);
    struct asys_record rec;
    ck_assert_int_eq(asys_segment_stream_next(&r.s, &rec, &r.err), 1);
    ck_assert_int_eq(asys_segment_stream_next(&r.s, &rec, &r.err), -1);
    ck_assert_ptr_nonnull(strstr(r.err.text, "bad size"));
    ck_assert_ptr_nonnull(strstr(r.err.text, "offset 264"));
    close_reader(&r);

    asys_rec_word unknown = ASYS_REC_WORD(200, 1, 0, 0);
    memcpy(buf + ASYS_SEGMENT_HEADER_SIZE + 8, &unknown, 8);
    write_raw(buf, sizeof buf);
    ck_assert_int_eq(open_reader(&r), 0);
    ck_assert_int_eq(asys_segment_stream_next(&r.s, &rec, &r.err), 1);
    ck_assert_int_eq(asys_segment_stream_next(&r.s, &rec, &r.err), -1);
    ck_assert_ptr_nonnull(strstr(r.err.text, "unknown record type 200"));
    close_reader(&r);

    /* a record running past the end of the file */
    asys_rec_word past = ASYS_REC_WORD(ASYS_REC_STRING_DEF, 100, 0, 0);
    memcpy(buf + ASYS_SEGMENT_HEADER_SIZE + 8, &past, 8);
    write_raw(buf, sizeof buf);
    ck_assert_int_eq(open_reader(&r), 0);
    ck_assert_int_eq(asys_segment_stream_next(&r.s, &rec, &r.err), 1);
    ck_assert_int_eq(asys_segment_stream_next(&r.s, &rec, &r.err), -1);
    ck_assert_ptr_nonnull(strstr(r.err.text, "cut short"));
    close_reader(&r);
}
END_TEST

START_TEST(bad_headers_are_refused)
{
    struct asys_segment_header h = header_template(0);
    memcpy(h.magic, ASYS_SEGMENT_MAGIC, 8);
    h.format_version = ASYS_FORMAT_VERSION;
    h.header_size = ASYS_SEGMENT_HEADER_SIZE;
    struct asys_err err;
    ck_assert_int_eq(asys_segment_header_check(&h, sizeof h, &err), 0);

    struct asys_segment_header bad = h;
    bad.magic[0] = 'X';
    ck_assert_int_eq(asys_segment_header_check(&bad, sizeof bad, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "bad magic"));
    bad = h;
    bad.format_version = ASYS_FORMAT_VERSION + 1;
    ck_assert_int_eq(asys_segment_header_check(&bad, sizeof bad, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "newer"));
    bad = h;
    bad.feature_mask |= 1u << 20;
    ck_assert_int_eq(asys_segment_header_check(&bad, sizeof bad, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "cannot read"));
    ck_assert_int_eq(asys_segment_header_check(&h, 100, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "shorter"));

    write_raw(&h, 100); /* cut inside the header */
    struct reader r;
    ck_assert_int_eq(open_reader(&r), -1);
    close(r.fd);
}
END_TEST

/* A page helper that keeps the jobs it takes (declining every fifth, which
 * the writer then does itself) and runs them, in order, when drained. */
#define TEST_JOBS 4096
static struct test_job {
    enum asys_page_job job;
    void *addr;
    uint64_t len;
    int ran;
} test_jobs[TEST_JOBS];
static int test_job_count, test_job_offers;

static int test_take(enum asys_page_job job, void *addr, uint64_t len)
{
    if (++test_job_offers % 5 == 0 || test_job_count == TEST_JOBS)
        return 0;
    test_jobs[test_job_count++] = (struct test_job){job, addr, len, 0};
    return 1;
}

static void test_drain(void)
{
    for (int i = 0; i < test_job_count; i++) {
        struct test_job *j = &test_jobs[i];
        if (j->ran++)
            continue;
        if (j->job == ASYS_PAGE_UNMAP)
            ck_assert_int_eq(munmap(j->addr, j->len), 0);
        else
            ck_assert_int_eq(madvise(j->addr, j->len, MADV_WILLNEED), 0); /* still mapped */
    }
}

static const struct asys_page_helper test_helper = {test_take, test_drain};

/* The index of an arena that holds `segments` segments, every slot claimed
 * written and in sequence; a descriptor to read them. */
static int open_whole_arena(const char *arena_path, struct asys_arena_index *index, size_t segments)
{
    struct asys_err err = {0};
    ck_assert_int_eq(asys_arena_index_read(arena_path, index, &err), 0);
    ck_assert_uint_eq(index->count, segments);
    ck_assert_uint_eq(index->sequence_gaps, 0);
    ck_assert_uint_eq(index->unwritten_slots, 0);
    int fd = open(arena_path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    return fd;
}

/* A new arena of `slot`-byte slots in the test directory (its path written
 * to `path`), attached. */
static void new_arena(char *path, size_t size, uint64_t slot, struct asys_arena *arena)
{
    snprintf(path, size, "%s/arena", dir);
    ck_assert_int_eq(asys_arena_create(path, slot), 0);
    ck_assert_int_eq(asys_arena_attach(arena, path), 0);
}

/* Two writers share an arena, their slots interleaved; each reads back as
 * one segment, its records in order across its slots.  With a page helper,
 * each writer claims its next slot ahead and hands the populating and
 * unmapping over; the slots stay gapless and read back the same. */
static void interleave_and_read_back(const struct asys_page_helper *helper)
{
    char arena_path[PATH_MAX + 32];
    struct asys_arena arena;
    new_arena(arena_path, sizeof arena_path, ASYS_MIN_CHUNK_SIZE, &arena);
    arena.helper = helper;
    test_job_count = test_job_offers = 0;
    struct asys_segment_writer w[2];
    for (int k = 0; k < 2; k++) {
        struct asys_segment_header h = header_template(1000);
        h.tid = 200 + (uint32_t)k;
        h.thread_index = 1 + (uint32_t)k;
        ck_assert_int_eq(asys_segment_open_arena(&w[k], &arena, &h, 1 << 30), 0);
    }
    const int count = 300000; /* 2.4 MB each: several slots, taken in turns */
    for (int i = 0; i < count; i++)
        for (int k = 0; k < 2; k++)
            ck_assert(write_word(&w[k], ASYS_REC_HGTX_PUSH, (unsigned)k + 1, 2000 + (uint64_t)i));
    asys_segment_close(&w[0]);
    /* w[1] never closes: a process that died; its records read to their end */
    asys_segment_abandon(&w[1]);
    test_drain();
    asys_arena_detach(&arena);
    if (helper) {
        /* two jobs a slot, its populate and later its unmap (each populate
         * ran while its slot was mapped: test_drain checks), some declined */
        int unmaps = 0;
        for (int i = 0; i < test_job_count; i++)
            unmaps += test_jobs[i].job == ASYS_PAGE_UNMAP;
        ck_assert_int_ge(unmaps, 4);
        ck_assert_int_ge(test_job_count - unmaps, 4);
        ck_assert_int_gt(test_job_offers, test_job_count);
    }

    struct asys_arena_index index;
    struct asys_err err = {0};
    int fd = open_whole_arena(arena_path, &index, 2);
    for (size_t s = 0; s < index.count; s++) {
        const struct asys_arena_segment *seg = &index.segments[s];
        ck_assert_uint_ge(seg->count, 4);
        struct asys_arena_cursor cursor = {fd, &index, seg, 0, NULL, NULL};
        struct asys_segment_stream st;
        ck_assert_int_eq(asys_segment_stream_open(&st, asys_arena_cursor_read, &cursor,
                                                  asys_arena_segment_size(&index, seg), &err),
                         0);
        ck_assert_uint_eq(st.header.tid, seg->key.tid);
        struct asys_record rec;
        int words = 0, rc;
        while ((rc = asys_segment_stream_next(&st, &rec, &err)) > 0) {
            if (rec.type == ASYS_REC_PAD)
                continue;
            ck_assert_uint_eq(rec.arg, seg->key.tid - 199);
            ck_assert_uint_eq(rec.ticks, 2000 + (uint64_t)words);
            words++;
        }
        ck_assert_msg(rc == 0, "%s", err.text);
        ck_assert_int_eq(words, count);
        asys_segment_stream_close(&st);
    }
    close(fd);
    asys_arena_index_free(&index);
}

START_TEST(arena_segments_interleave_and_read_back)
{
    interleave_and_read_back(NULL);
}
END_TEST

START_TEST(arena_slots_prepared_by_a_page_helper)
{
    interleave_and_read_back(&test_helper);
}
END_TEST

/* Staged writers (the launcher's at finalize): records in a buffer, written
 * a slot at a time.  Two segments of several slots through one buffer read
 * back whole and apart, beside a mapped writer's slots taken in between;
 * the second reaches its maximum, and its drops are in the header written
 * at close; the buffer is all zeros after each. */
START_TEST(staged_segments_read_back_like_mapped_ones)
{
    char arena_path[PATH_MAX + 32];
    struct asys_arena arena;
    new_arena(arena_path, sizeof arena_path, ASYS_MIN_CHUNK_SIZE, &arena);
    uint8_t *buffer = calloc(1, arena.slot_size);
    ck_assert_ptr_nonnull(buffer);
    struct asys_segment_header h = header_template(1000);
    h.tid = 200;
    struct asys_segment_writer mapped, staged;
    ck_assert_int_eq(asys_segment_open_arena(&mapped, &arena, &h, 1 << 30), 0);
    const int count = 200000; /* 1.6 MB: four slots */
    int written[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        h.tid = 201 + (uint32_t)k;
        h.thread_index = 1 + (uint32_t)k;
        uint64_t max = k ? 2 * arena.slot_size : 1 << 30;
        ck_assert_int_eq(asys_segment_open_staged(&staged, &arena, &h, max, buffer), 0);
        for (int i = 0; i < count; i++) {
            written[k] +=
                write_word(&staged, ASYS_REC_HGTX_PUSH, 2 + (unsigned)k, 2000 + (uint64_t)i);
            ck_assert(write_word(&mapped, ASYS_REC_HGTX_PUSH, 1, 2000 + (uint64_t)(k * count + i)));
        }
        ck_assert_int_eq(asys_segment_close(&staged), 0);
        for (uint64_t b = 0; b < arena.slot_size; b++)
            ck_assert_uint_eq(buffer[b], 0);
    }
    ck_assert_int_eq(written[0], count);
    ck_assert_int_lt(written[1], count);
    asys_segment_close(&mapped);
    asys_arena_detach(&arena);
    free(buffer);

    struct asys_arena_index index;
    struct asys_err err = {0};
    int fd = open_whole_arena(arena_path, &index, 3);
    for (size_t s = 0; s < index.count; s++) {
        const struct asys_arena_segment *seg = &index.segments[s];
        struct asys_arena_cursor cursor = {fd, &index, seg, 0, NULL, NULL};
        struct asys_segment_stream st;
        ck_assert_int_eq(asys_segment_stream_open(&st, asys_arena_cursor_read, &cursor,
                                                  asys_arena_segment_size(&index, seg), &err),
                         0);
        int words = 0, rc;
        struct asys_record rec;
        while ((rc = asys_segment_stream_next(&st, &rec, &err)) > 0)
            if (rec.type == ASYS_REC_HGTX_PUSH) {
                ck_assert_uint_eq(rec.arg, st.header.tid - 199);
                words++;
            }
        ck_assert_msg(rc == 0, "%s", err.text);
        if (st.header.tid == 200) {
            ck_assert_int_eq(words, 2 * count);
        } else {
            int k = (int)st.header.tid - 201;
            ck_assert_int_eq(words, written[k]);
            ck_assert_uint_eq(st.header.dropped_records, (uint64_t)(count - written[k]));
            ck_assert_uint_eq(seg->count, k ? 2 : 4);
            ck_assert_uint_gt(st.header.data_end, 0);
        }
        asys_segment_stream_close(&st);
    }
    close(fd);
    asys_arena_index_free(&index);
}
END_TEST

/* A new arena of `slot`-byte slots in the test directory, attached, with one
 * segment open that holds 100 HGTX pushes. */
static void arena_with_100_pushes(char *path, size_t size, uint64_t slot, struct asys_arena *arena,
                                  struct asys_segment_writer *w)
{
    new_arena(path, size, slot, arena);
    struct asys_segment_header h = header_template(1000);
    ck_assert_int_eq(asys_segment_open_arena(w, arena, &h, 1 << 30), 0);
    for (int i = 0; i < 100; i++)
        ck_assert(write_word(w, ASYS_REC_HGTX_PUSH, 1, 2000 + (uint64_t)i));
}

/* The HGTX pushes of an arena's `segments` segments, each read to its end
 * without error. */
static int arena_pushes_in(const char *arena_path, size_t segments)
{
    struct asys_arena_index index;
    struct asys_err err = {0};
    ck_assert_int_eq(asys_arena_index_read(arena_path, &index, &err), 0);
    ck_assert_uint_eq(index.count, segments);
    int fd = open(arena_path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    int words = 0;
    for (size_t i = 0; i < index.count; i++) {
        struct asys_arena_cursor cursor = {fd, &index, &index.segments[i], 0, NULL, NULL};
        struct asys_segment_stream stream;
        ck_assert_int_eq(
            asys_segment_stream_open(&stream, asys_arena_cursor_read, &cursor,
                                     asys_arena_segment_size(&index, &index.segments[i]), &err),
            0);
        struct asys_record rec;
        int rc;
        while ((rc = asys_segment_stream_next(&stream, &rec, &err)) > 0)
            words += rec.type == ASYS_REC_HGTX_PUSH;
        ck_assert_msg(rc == 0, "%s", err.text);
        asys_segment_stream_close(&stream);
    }
    close(fd);
    asys_arena_index_free(&index);
    return words;
}

/* The HGTX pushes of an arena's only segment. */
static int arena_pushes(const char *arena_path)
{
    return arena_pushes_in(arena_path, 1);
}

/* A segment's first slot reserves its blocks as it fills: a short writer
 * holds 64 KiB of disk, not a slot; a longer one reserves more, and an arena
 * that ends inside a slot reserved in part reads back whole. */
START_TEST(arena_slot_is_reserved_as_it_fills)
{
    char arena_path[PATH_MAX + 32];
    const uint64_t slot = 1u << 20;
    struct asys_arena arena;
    struct asys_segment_writer w;
    arena_with_100_pushes(arena_path, sizeof arena_path, slot, &arena, &w);
    struct stat st;
    ck_assert_int_eq(stat(arena_path, &st), 0);
    ck_assert_uint_lt((uint64_t)st.st_size, 2 * slot); /* the slot is not reserved whole */
    ck_assert_uint_le((uint64_t)st.st_blocks * 512, (64u << 10) + 8192);
    const int more = 40000; /* 320 kB: the reservation doubles three times */
    for (int i = 0; i < more; i++)
        ck_assert(write_word(&w, ASYS_REC_HGTX_PUSH, 1, 3000 + (uint64_t)i));
    ck_assert_int_eq(stat(arena_path, &st), 0);
    ck_assert_uint_ge((uint64_t)st.st_blocks * 512, 320u << 10);
    ck_assert_uint_lt((uint64_t)st.st_size, 2 * slot);
    asys_segment_close(&w);
    asys_arena_detach(&arena);
    ck_assert_int_eq(arena_pushes(arena_path), 100 + more);
}
END_TEST

/* The descriptor attach opened serves the first claim and is closed with
 * it: a process's first slot costs no second open, and no descriptor of the
 * arena is left to the program.  A writer whose header mapping is kept (the
 * process's anchor) leaves it mapped when it closes. */
START_TEST(attach_descriptor_serves_the_first_claim_only)
{
    char arena_path[PATH_MAX + 32];
    struct asys_arena arena;
    new_arena(arena_path, sizeof arena_path, 1u << 20, &arena);
    int spare = arena.spare_fd;
    ck_assert_int_ge(spare, 0);
    ck_assert_int_ne(fcntl(spare, F_GETFD) & FD_CLOEXEC, 0);
    struct asys_segment_header h = header_template(1000);
    struct asys_segment_writer first, second;
    ck_assert_int_eq(asys_segment_open_arena(&first, &arena, &h, 1 << 30), 0);
    ck_assert_int_eq(arena.spare_fd, -1);
    errno = 0;
    ck_assert_int_eq(fcntl(spare, F_GETFD), -1); /* closed with the claim */
    ck_assert_int_eq(errno, EBADF);
    ck_assert_int_eq(asys_segment_open_arena(&second, &arena, &h, 1 << 30), 0); /* by path */
    first.keep_header_map = 1;
    struct asys_segment_header *anchor = first.header;
    asys_segment_close(&first);
    __atomic_fetch_add(&anchor->lost_threads, 1, __ATOMIC_RELAXED); /* still mapped */
    asys_segment_close(&second);
    asys_arena_detach(&arena);

    /* a spare no claim took is closed by drop_spare, once; an arena never
     * attached (zeroed: its spare reads as 0) closes nothing */
    ck_assert_int_eq(asys_arena_attach(&arena, arena_path), 0);
    spare = arena.spare_fd;
    asys_arena_drop_spare(&arena);
    ck_assert_int_eq(fcntl(spare, F_GETFD), -1);
    asys_arena_drop_spare(&arena);
    asys_arena_detach(&arena);
    if (fcntl(0, F_GETFD) < 0) /* descriptor 0 open, to see it stay so */
        ck_assert_int_eq(open("/dev/null", O_RDONLY), 0);
    struct asys_arena zeroed;
    memset(&zeroed, 0, sizeof zeroed);
    asys_arena_drop_spare(&zeroed);
    ck_assert_int_ge(fcntl(0, F_GETFD), 0);
}
END_TEST

/* A thread's first slot is asked for just past the loader's image, where
 * it needs no page table of its own; the second thread's first slot, the
 * place taken, lands where the kernel puts it.  Both read back. */
START_TEST(first_slot_goes_past_the_loader)
{
    char arena_path[PATH_MAX + 32];
    struct asys_arena arena;
    new_arena(arena_path, sizeof arena_path, 1u << 20, &arena);
    ck_assert_uint_ne(arena.first_slot_at, 0); /* a dynamic program */
    ck_assert_uint_eq(arena.first_slot_at % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
    struct asys_segment_header h = header_template(1000), h2 = h;
    h2.tid = h.tid + 1;
    h2.thread_index = h.thread_index + 1;
    struct asys_segment_writer first, second;
    ck_assert_int_eq(asys_segment_open_arena(&first, &arena, &h, 1 << 30), 0);
    ck_assert_int_eq(asys_segment_open_arena(&second, &arena, &h2, 1 << 30), 0);
    if (getenv("CK_FORK") == NULL || strcmp(getenv("CK_FORK"), "no") != 0)
        ck_assert_ptr_eq(first.map, (void *)arena.first_slot_at); /* a fresh address space */
    ck_assert_ptr_ne(second.map, (void *)arena.first_slot_at);
    for (int i = 0; i < 50; i++) {
        ck_assert(write_word(&first, ASYS_REC_HGTX_PUSH, 1, 2000 + (uint64_t)i));
        ck_assert(write_word(&second, ASYS_REC_HGTX_PUSH, 1, 2000 + (uint64_t)i));
    }
    asys_segment_close(&first);
    asys_segment_close(&second);
    asys_arena_detach(&arena);
    ck_assert_int_eq(arena_pushes_in(arena_path, 2), 100);
}
END_TEST

/* A program that writes to the number of its inherited arena descriptor
 * (append-only) appends at the file's end, inside the slot reserved in part
 * when that slot is the last: the slot's later reservations clear it, and a
 * segment its writer never closed (no data_end) still reads to its last
 * record and no further. */
START_TEST(a_stray_append_inside_a_slot_is_not_read_as_records)
{
    char arena_path[PATH_MAX + 32];
    struct asys_arena arena;
    struct asys_segment_writer w;
    arena_with_100_pushes(arena_path, sizeof arena_path, 1u << 20, &arena, &w);
    int stray = open(arena_path, O_WRONLY | O_APPEND);
    ck_assert_int_ge(stray, 0);
    char garbage[7000];
    memset(garbage, 'g', sizeof garbage);
    ck_assert_int_eq(write(stray, garbage, sizeof garbage), (ssize_t)sizeof garbage);
    const int more = 1000; /* past the garbage's start, not its end */
    for (int i = 0; i < more; i++)
        ck_assert(write_word(&w, ASYS_REC_HGTX_PUSH, 1, 3000 + (uint64_t)i));
    ck_assert_int_eq(write(stray, garbage, sizeof garbage), (ssize_t)sizeof garbage);
    close(stray);
    asys_segment_abandon(&w); /* as a process killed: no data_end */
    asys_arena_detach(&arena);
    ck_assert_int_eq(arena_pushes(arena_path), 100 + more);
}
END_TEST

/* A file that is not an arena is refused; an arena that does not exist is empty. */
START_TEST(arena_index_refuses_other_files)
{
    struct asys_arena_index index;
    struct asys_err err = {0};
    char missing[PATH_MAX + 32];
    snprintf(missing, sizeof missing, "%s/none", dir);
    ck_assert_int_eq(asys_arena_index_read(missing, &index, &err), 0);
    ck_assert_uint_eq(index.count, 0);
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    ck_assert_int_eq(write(fd, "not an arena, not at all.......", 32), 32);
    close(fd);
    ck_assert_int_eq(asys_arena_index_read(path, &index, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "not an asys arena"));
    struct asys_arena arena;
    ck_assert_int_eq(asys_arena_attach(&arena, path), -EINVAL);
}
END_TEST

START_TEST(existing_file_is_not_overwritten)
{
    write_raw("x", 1);
    struct asys_segment_writer w;
    struct asys_segment_header h = header_template(0);
    ck_assert_int_eq(asys_segment_open(&w, path, &h, ASYS_MIN_CHUNK_SIZE, 1 << 30), -EEXIST);
}
END_TEST

static int write_kernel(struct asys_segment_writer *w, uint64_t ticks, uint64_t start_ns)
{
    uint32_t delta;
    struct asys_rec_hggc_kernel *r = asys_segment_reserve(w, sizeof *r, ticks, &delta);
    if (!r)
        return 0;
    memset((char *)r + 8, 0, sizeof *r - 8);
    r->start_ns = start_ns;
    r->end_ns = start_ns + 10;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGGC_KERNEL, sizeof *r / 8, 0, delta));
    return 1;
}

/* A recording window's report: the definitions kept, the events of other
 * windows left out, every kept record at its own time (new deltas, a
 * TIME_BASE where a gap does not fit in 32 bits), data_end where it ends. */
START_TEST(window_filter_keeps_definitions_and_the_window)
{
    struct asys_segment_writer w;
    struct asys_segment_header h = header_template(1000);
    h.feature_mask |= ASYS_FEATURE_HGGC;
    ck_assert_int_eq(asys_segment_open(&w, path, &h, ASYS_MIN_CHUNK_SIZE, 1 << 30), 0);
    const uint64_t lo = 4000, hi = 1ull << 34;
    ck_assert(write_string(&w, 1, "before", 6)); /* kept, 1000 */
    ck_assert(write_word(&w, ASYS_REC_HGTX_PUSH, 1, 1010)); /* before: out */
    ck_assert(write_kernel(&w, 1015, 900)); /* started before: out */
    ck_assert(write_word(&w, ASYS_REC_HGTX_POP, 0, 1020)); /* before: out */
    ck_assert(write_string(&w, 2, "between", 7)); /* kept, 1020 */
    ck_assert(write_word(&w, ASYS_REC_HGTX_PUSH, 2, 5000)); /* in */
    char big[3000];
    memset(big, 'y', sizeof big);
    ck_assert(write_string(&w, 3, big, sizeof big)); /* extended size, 5000 */
    ck_assert(write_kernel(&w, 6000, 4500)); /* started inside: in */
    ck_assert(write_word(&w, ASYS_REC_HGTX_POP, 0, 5000 + (1ull << 33))); /* in, far */
    ck_assert(write_kernel(&w, (1ull << 35) - 1, 4600)); /* stamped after: in */
    ck_assert(write_word(&w, ASYS_REC_HGTX_PUSH, 4, 1ull << 35)); /* after: out */
    ck_assert(write_string(&w, 4, "after", 5)); /* kept, 2^35 */
    asys_segment_close(&w);

    cJSON *manifest = cJSON_CreateObject();
    cJSON *win = cJSON_AddObjectToObject(manifest, "recording_window");
    asys_json_add_u64(win, "start_ns", lo);
    asys_json_add_u64(win, "end_ns", hi);
    struct asys_window_filter f;
    struct asys_err err = {0};
    ck_assert_int_eq(asys_window_filter_init(&f, manifest, &err), 0);
    ck_assert(f.active);
    struct reader src;
    ck_assert_int_eq(open_reader(&src), 0);
    uint64_t size = src.s.limit;
    close_reader(&src);
    char out_path[PATH_MAX + 32];
    snprintf(out_path, sizeof out_path, "%s/window", dir);
    int out = open(out_path, O_RDWR | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(out, 0);
    int in = open(path, O_RDONLY);
    ck_assert_int_ge(in, 0);
    uint64_t written = 0, records = 0;
    ck_assert_int_eq(
        asys_window_filter_segment(&f, asys_read_fd, &in, size, out, 100, &written, &records, &err),
        0);
    close(in);
    ck_assert_uint_eq(f.left_out, 4);
    ck_assert_uint_lt(written, size);

    struct asys_file_range range = {out, 100, 100 + written};
    struct asys_segment_stream s;
    ck_assert_int_eq(asys_segment_stream_open(&s, asys_file_range_read, &range, written, &err), 0);
    ck_assert_uint_eq(s.header.data_end, written);
    ck_assert_uint_eq(s.header.pid, 100);
    struct {
        unsigned type;
        uint64_t ticks;
        uint64_t id; /* a string's id, a kernel's start */
    } want[] = {
        {ASYS_REC_STRING_DEF, 1000, 1},
        {ASYS_REC_STRING_DEF, 1020, 2},
        {ASYS_REC_HGTX_PUSH, 5000, 2},
        {ASYS_REC_STRING_DEF, 5000, 3},
        {ASYS_REC_HGGC_KERNEL, 6000, 4500},
        {ASYS_REC_TIME_BASE, 5000 + (1ull << 33), 0},
        {ASYS_REC_HGTX_POP, 5000 + (1ull << 33), 0},
        {ASYS_REC_TIME_BASE, (1ull << 35) - 1, 0},
        {ASYS_REC_HGGC_KERNEL, (1ull << 35) - 1, 4600},
        {ASYS_REC_STRING_DEF, 1ull << 35, 4},
    };
    size_t n = 0;
    struct asys_record rec;
    int rc;
    while ((rc = asys_segment_stream_next(&s, &rec, &err)) > 0) {
        ck_assert_uint_lt(n, sizeof want / sizeof want[0]);
        ck_assert_uint_eq(rec.type, want[n].type);
        ck_assert_uint_eq(rec.ticks, want[n].ticks);
        if (rec.type == ASYS_REC_STRING_DEF) {
            const struct asys_rec_string_def *d = (const void *)rec.data;
            ck_assert_uint_eq(d->string_id, want[n].id);
            if (d->string_id == 3) {
                ck_assert_uint_eq(rec.size, d->size_bytes);
                ck_assert(!memcmp(d + 1, big, sizeof big));
            }
        } else if (rec.type == ASYS_REC_HGGC_KERNEL) {
            const struct asys_rec_hggc_kernel *k = (const void *)rec.data;
            ck_assert_uint_eq(k->start_ns, want[n].id);
        } else if (rec.type == ASYS_REC_HGTX_PUSH) {
            ck_assert_uint_eq(rec.arg, want[n].id);
        }
        n++;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(n, sizeof want / sizeof want[0]);
    ck_assert_uint_eq(records, n);
    asys_segment_stream_close(&s);
    close(out);
    asys_window_filter_free(&f);
    cJSON_Delete(manifest);

    /* a report of no window: nothing to filter */
    manifest = cJSON_CreateObject();
    ck_assert_int_eq(asys_window_filter_init(&f, manifest, &err), 0);
    ck_assert(!f.active);
    asys_window_filter_free(&f);
    cJSON_Delete(manifest);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("segment");
    TCase *tc = tcase_create("segment");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, round_trip_with_time_base_and_long_strings);
    tcase_add_test(tc, chunks_grow_and_pad);
    tcase_add_test(tc, full_segment_counts_every_drop);
    tcase_add_test(tc, drops_are_counted_by_cause);
    tcase_add_test(tc, torn_record_reads_as_end);
    tcase_add_test(tc, damaged_records_are_reported);
    tcase_add_test(tc, bad_headers_are_refused);
    tcase_add_test(tc, existing_file_is_not_overwritten);
    tcase_add_test(tc, arena_segments_interleave_and_read_back);
    tcase_add_test(tc, arena_slots_prepared_by_a_page_helper);
    tcase_add_test(tc, staged_segments_read_back_like_mapped_ones);
    tcase_add_test(tc, arena_slot_is_reserved_as_it_fills);
    tcase_add_test(tc, attach_descriptor_serves_the_first_claim_only);
    tcase_add_test(tc, first_slot_goes_past_the_loader);
    tcase_add_test(tc, a_stray_append_inside_a_slot_is_not_read_as_records);
    tcase_add_test(tc, arena_index_refuses_other_files);
    tcase_add_test(tc, window_filter_keeps_definitions_and_the_window);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
