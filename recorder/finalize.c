/* Finalize: turn a session directory into NAME.asys-rep.
 *
 * Every segment is scanned to its last complete record (a crashed thread's
 * segment simply ends at its first unwritten word), counted, and packed with
 * manifest.json into a tar+zstd archive that is written to a temporary file
 * and renamed into place, so no half-written report is ever left behind. */
#define _GNU_SOURCE
#include "finalize.h"
#include "hex.h"

#include "cleanup.h"
#include "read_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector.h"
#include "cpu_samples.h"
#include "finalize_ranks.h"
#include "grow.h"
#include "json_util.h"
#include "manifest.h"
#include "archive.h"
#include "arena_compressor.h"
#include "arena_frames.h"
#include "arena_read.h"
#include "segment_stream.h"
#include "symbolize.h"
#include "notes.h"
#include "window_filter.h"

struct segment_scan {
    char name[256];
    uint32_t pid;
    uint32_t tid;
    uint32_t ppid;
    uint32_t collector;
    uint64_t records;
    uint64_t end;
    uint64_t dropped_records;
    uint64_t dropped_bytes;
    uint64_t dropped_by_cause[4]; /* full, re-entry, too big, no room */
    uint32_t no_room_errno;
    uint64_t lost_threads, lost_thread_records;
    uint32_t lost_thread_errno;
    uint64_t lost_processes, lost_process_records;
    uint32_t lost_process_errno, lost_process_pid;
    uint32_t notices; /* enum asys_segment_notice */
    const struct asys_arena_segment *arena; /* NULL: a file of segments/ */
    /* a recording window's report: the segment without the other windows'
     * events, `end` bytes at this offset of the window file (window_filter.h) */
    int windowed;
    uint64_t window_offset;
    char error[512]; /* the error that made the segment unreadable */
};

/* Clock calibration pairs (ticks, CLOCK_MONOTONIC ns, CLOCK_REALTIME ns). */
struct clock_pairs {
    struct asys_clock_pair *items;
    uint32_t *kinds; /* headers' pairs: each one's clock (enum asys_clock_kind) */
    size_t count, cap, kind_cap;
    /* headers' list only: the latest record stamp of each clock kind, so
     * that a session whose launcher was killed ends where its records do */
    uint64_t last_ticks[ASYS_CLOCK_CNTVCT + 1];
};

/* Past this a value is no clock reading (2^62 ns: 146 years); a segment
 * header is as untrusted as any file. */
#define CLOCK_VALUE_MAX (UINT64_C(1) << 62)

static void pairs_add_kind(struct clock_pairs *p, uint64_t ticks, uint64_t mono, uint64_t real,
                           uint32_t kind)
{
    if (!ticks || !mono || ticks > CLOCK_VALUE_MAX || mono > CLOCK_VALUE_MAX ||
        real > CLOCK_VALUE_MAX || asys_grow(&p->items, &p->cap, p->count, sizeof *p->items, 16) ||
        asys_grow(&p->kinds, &p->kind_cap, p->count, sizeof *p->kinds, 16))
        return;
    p->kinds[p->count] = kind;
    p->items[p->count++] = (struct asys_clock_pair){ticks, mono, real};
}

static void pairs_add(struct clock_pairs *p, uint64_t ticks, uint64_t mono, uint64_t real)
{
    pairs_add_kind(p, ticks, mono, real, 0);
}

/* Counts a segment's records and finds where they end; the launcher's clock
 * pairs go to `launcher`, every segment header's creation pair to `headers`;
 * stacks go to the symbolizer. */
/* The collectors' finalize hooks, with their state for this report. */
struct collector_tallies {
    const struct asys_collector *collector[32];
    void *state[32];
    int count;
};

static void tallies_begin(struct collector_tallies *t)
{
    t->count = 0;
    for (const struct asys_collector *const *c = asys_collectors; *c && t->count < 32; c++) {
        if (!(*c)->built || !(*c)->finalize_begin)
            continue;
        t->collector[t->count] = *c;
        t->state[t->count++] = (*c)->finalize_begin();
    }
}

static void tallies_record(struct collector_tallies *t, const struct asys_segment_header *h,
                           const struct asys_record *rec)
{
    for (int i = 0; i < t->count; i++)
        if (t->collector[i]->feature & h->feature_mask)
            t->collector[i]->finalize_record(t->state[i], h, rec);
}

/* Each collector's manifest object under its name; frees the states (all
 * of them, also after a failure). */
static int tallies_end(struct collector_tallies *t, cJSON *root, struct asys_err *err)
{
    int rc = 0;
    for (int i = 0; i < t->count; i++) {
        cJSON *o = NULL;
        struct asys_err why = {0};
        if (t->collector[i]->finalize_end(t->state[i], &o, &why) != 0 && rc == 0) {
            *err = why;
            rc = asys_err_wrap(err, "%s", t->collector[i]->name);
        }
        if (o && root && rc == 0)
            cJSON_AddItemToObject(root, t->collector[i]->name, o);
        else
            cJSON_Delete(o);
    }
    t->count = 0;
    return rc;
}

/* Where a segment's bytes come from: its file, or its slots of the arena. */
struct segment_source {
    int fd;
    struct asys_arena_cursor cursor;
    long (*read)(void *ctx, void *buf, size_t size);
    void *ctx;
    uint64_t size;
};

static int source_open(struct segment_source *src, const char *segment_dir,
                       const struct segment_scan *scan, const struct asys_arena_index *arena,
                       int arena_fd, struct asys_arena_frames *frames)
{
    memset(src, 0, sizeof *src);
    src->fd = -1;
    if (scan->arena) {
        src->cursor = (struct asys_arena_cursor){arena_fd, arena, scan->arena, 0, NULL, NULL};
        asys_arena_frames_attach(frames, &src->cursor);
        src->read = asys_arena_cursor_read;
        src->ctx = &src->cursor;
        src->size = asys_arena_segment_size(arena, scan->arena);
        /* a writer that closed says where its records end: read no further */
        struct asys_segment_header h;
        if (scan->arena->count &&
            pread(arena_fd, &h, sizeof h, (off_t)(scan->arena->slots[0] + ASYS_SLOT_HEADER_SIZE)) ==
                (ssize_t)sizeof h &&
            h.data_end >= ASYS_SEGMENT_HEADER_SIZE && h.data_end < src->size)
            src->size = h.data_end;
        return 0;
    }
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", segment_dir, scan->name);
    struct stat st;
    struct asys_err ignored = {0}; /* the caller skips the segment and counts it */
    src->fd = asys_open_regular(path, &st, &ignored);
    if (src->fd < 0)
        return -1;
    src->read = asys_read_fd;
    src->ctx = &src->fd;
    src->size = (uint64_t)st.st_size;
    return 0;
}

static void source_close(struct segment_source *src)
{
    if (src->fd >= 0)
        close(src->fd);
    src->fd = -1;
}

static void scan_segment(struct segment_source *src, struct segment_scan *scan,
                         struct clock_pairs *launcher, struct clock_pairs *headers,
                         struct asys_symbolizer *symbols, struct collector_tallies *tallies)
{
    struct asys_err err = {0};
    struct asys_segment_stream s;
    if (asys_segment_stream_open(&s, src->read, src->ctx, src->size, &err) != 0) {
        snprintf(scan->error, sizeof scan->error, "%.*s", (int)sizeof scan->error - 1, err.text);
        return;
    }
    scan->pid = s.header.pid;
    scan->tid = s.header.tid;
    scan->ppid = s.header.ppid;
    scan->collector = s.header.collector;
    scan->dropped_records = s.header.dropped_records;
    scan->dropped_bytes = s.header.dropped_bytes;
    scan->dropped_by_cause[0] = s.header.dropped_full;
    scan->dropped_by_cause[1] = s.header.dropped_reentry;
    scan->dropped_by_cause[2] = s.header.dropped_big;
    scan->dropped_by_cause[3] = s.header.dropped_no_room;
    scan->no_room_errno = s.header.no_room_errno;
    scan->lost_processes = s.header.lost_processes;
    scan->lost_process_records = s.header.lost_process_records;
    scan->lost_process_errno = s.header.lost_process_errno;
    scan->lost_process_pid = s.header.lost_process_pid;
    scan->lost_threads = s.header.lost_threads;
    scan->lost_thread_records = s.header.lost_thread_records;
    scan->lost_thread_errno = s.header.lost_thread_errno;
    scan->notices = s.header.notices;
    scan->end = s.header.header_size;
    pairs_add_kind(headers, s.header.calib_ticks, s.header.calib_mono_ns, 0, s.header.clock_kind);
    struct asys_record rec;
    int rc;
    asys_symbolizer_begin_segment(symbols, &s.header);
    while ((rc = asys_segment_stream_next(&s, &rec, &err)) > 0) {
        scan->end = rec.offset + rec.size;
        if (rec.type == ASYS_REC_PAD)
            continue;
        scan->records++;
        asys_symbolizer_add(symbols, &rec);
        tallies_record(tallies, &s.header, &rec);
        if (rec.type == ASYS_REC_CLOCK_PAIR && s.header.collector == ASYS_SEGMENT_LAUNCHER) {
            const struct asys_rec_clock_pair *p = (const void *)rec.data;
            pairs_add(launcher, p->ticks, p->monotonic_ns, p->realtime_ns);
        }
    }
    if (rc < 0)
        snprintf(scan->error, sizeof scan->error, "%.*s", (int)sizeof scan->error - 1, err.text);
    if (s.header.clock_kind <= ASYS_CLOCK_CNTVCT && s.ticks <= CLOCK_VALUE_MAX &&
        s.ticks > headers->last_ticks[s.header.clock_kind])
        headers->last_ticks[s.header.clock_kind] = s.ticks;
    asys_symbolizer_end_segment(symbols);
    asys_segment_stream_close(&s);
}

static int by_name(const void *a, const void *b)
{
    const struct segment_scan *x = a, *y = b;
    int xl = !strcmp(x->name, ASYS_LAUNCHER_SEGMENT), yl = !strcmp(y->name, ASYS_LAUNCHER_SEGMENT);
    if (xl != yl)
        return yl - xl; /* the launcher's segment (clock pairs) first */
    return strcmp(x->name, y->name);
}

static int list_segments(const char *dir, struct segment_scan **out, size_t *count,
                         struct asys_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return asys_fail(err, "cannot open '%s': %s", dir, strerror(errno));
    struct segment_scan *list = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        size_t suffix = strlen(ASYS_SEGMENT_SUFFIX);
        if (len <= suffix || strcmp(e->d_name + len - suffix, ASYS_SEGMENT_SUFFIX) ||
            len >= sizeof list->name)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct segment_scan *bigger = realloc(list, cap * sizeof *list);
            if (!bigger) {
                free(list);
                closedir(d);
                return asys_fail(err, "out of memory");
            }
            list = bigger;
        }
        memset(&list[n], 0, sizeof list[n]);
        memcpy(list[n].name, e->d_name, len + 1);
        n++;
    }
    closedir(d);
    if (n)
        qsort(list, n, sizeof *list, by_name);
    *out = list;
    *count = n;
    return 0;
}

/* Whether arena segment `k` is the CPU sampler's of another recording of
 * the session than `recording` (0: a report of the whole run, every one
 * kept): each recording's sampler wrote its own, whole (thread index 1 +
 * its number), and the report of one needs none of the others'. */
static int other_recordings_samples(const struct asys_slot_header *k, uint32_t recording)
{
    return recording && asys_is_sampler_uid(k->process_uid) && k->thread_index != 1 + recording;
}

/* The recording a session's report is of (asys stop: the manifest's
 * recording_window.index), or 0. */
static uint32_t report_recording(const cJSON *root)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "recording_window");
    uint64_t index = 0;
    if (!cJSON_IsObject(w) || asys_json_get_u64(w, "index", &index) != 0 || index > UINT32_MAX - 1)
        return 0;
    return (uint32_t)index;
}

/* The arena's segments, after the files, named as their files would be. */
static int add_arena_segments(const struct asys_arena_index *arena, uint32_t recording,
                              struct segment_scan **list, size_t *count, struct asys_err *err)
{
    if (!arena->count)
        return 0;
    struct segment_scan *bigger = realloc(*list, (*count + arena->count) * sizeof *bigger);
    if (!bigger)
        return asys_fail(err, "out of memory");
    *list = bigger;
    for (size_t i = 0; i < arena->count; i++) {
        const struct asys_slot_header *k = &arena->segments[i].key;
        if (other_recordings_samples(k, recording))
            continue;
        struct segment_scan *s = &bigger[(*count)++];
        memset(s, 0, sizeof *s);
        s->arena = &arena->segments[i];
        snprintf(s->name, sizeof s->name, "p%u-t%u-%" PRIx64 "-%u%s", k->pid, k->tid,
                 k->process_uid, k->thread_index, ASYS_SEGMENT_SUFFIX);
    }
    return 0;
}

static const char *collector_name(uint32_t c)
{
    return c == ASYS_SEGMENT_LAUNCHER ? "launcher"
           : c == ASYS_SEGMENT_THREAD ? "thread"
                                      : "unknown";
}

static void add_report_id(cJSON *root)
{
    uint8_t bytes[16];
    if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes) {
        uint64_t t = asys_monotonic_ns() ^ asys_cpu_counter();
        memcpy(bytes, &t, 8);
        t ^= (uint64_t)getpid() << 17;
        memcpy(bytes + 8, &t, 8);
    }
    char hex[33];
    asys_hex_encode(bytes, sizeof bytes, hex);
    cJSON_DeleteItemFromObjectCaseSensitive(root, "report_id");
    cJSON_AddStringToObject(root, "report_id", hex);
}

static void add_target(cJSON *root, const struct asys_target *t)
{
    if (!t)
        return;
    cJSON *target = cJSON_AddObjectToObject(root, "target");
    cJSON_AddNumberToObject(target, "pid", t->pid);
    if (WIFEXITED(t->status))
        cJSON_AddNumberToObject(target, "exit_code", WEXITSTATUS(t->status));
    else if (WIFSIGNALED(t->status))
        cJSON_AddNumberToObject(target, "signal", WTERMSIG(t->status));
    if (!t->survivor_count)
        return;
    cJSON_AddNumberToObject(target, "still_running", t->survivor_count);
    cJSON *list = cJSON_AddArrayToObject(target, "still_running_listed");
    for (int i = 0; i < t->survivor_count && i < ASYS_SURVIVORS_LISTED; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "pid", t->survivors[i].pid);
        cJSON_AddStringToObject(p, "name", t->survivors[i].name);
        cJSON_AddItemToArray(list, p);
    }
}

static int by_ticks(const void *a, const void *b)
{
    const struct asys_clock_pair *x = a, *y = b;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* Whether `hz` can be the rate of the session's clock: CLOCK_MONOTONIC
 * ticks are nanoseconds; a TSC or an arm64 counter runs at 1 MHz to 100 GHz. */
static int tick_rate_plausible(int clock_kind, double hz)
{
    if (clock_kind == ASYS_CLOCK_MONOTONIC)
        return hz > 0.99e9 && hz < 1.01e9;
    return hz >= 1e6 && hz <= 1e11;
}

/* clock.pairs, clock.tick_hz and session.end_monotonic_ns.  The launcher's
 * pairs (start, every second, end) serve when there are two of them; a
 * launcher killed early left fewer, and then every segment's creation pair
 * stands in, and a pair taken now when this is still the session's boot. */
/* CLOCK_REALTIME - CLOCK_MONOTONIC over the run (NTP slews it, a step moves
 * it): the spread is part of the error of one offset per report. */
static void realtime_offsets_json(cJSON *clock, const struct clock_pairs *pairs)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t samples = 0;
    for (size_t i = 0; i < pairs->count; i++) {
        const struct asys_clock_pair *p = &pairs->items[i];
        if (!p->realtime_ns) /* a recovered pair: no realtime read */
            continue;
        int64_t off = (int64_t)p->realtime_ns - (int64_t)p->monotonic_ns;
        lo = off < lo ? off : lo;
        hi = off > hi ? off : hi;
        samples++;
    }
    if (!samples)
        return;
    cJSON *j = cJSON_AddObjectToObject(clock, "realtime_offsets");
    cJSON_AddNumberToObject(j, "samples", (double)samples);
    asys_json_add_i64(j, "min_ns", lo);
    asys_json_add_i64(j, "max_ns", hi);
}

static void add_clock(cJSON *root, struct clock_pairs *launcher, struct clock_pairs *headers)
{
    cJSON *clock = cJSON_GetObjectItemCaseSensitive(root, "clock");
    if (!clock)
        clock = cJSON_AddObjectToObject(root, "clock");
    cJSON *session = cJSON_GetObjectItemCaseSensitive(root, "session");
    if (!session)
        session = cJSON_AddObjectToObject(root, "session");
    struct clock_pairs *use = launcher;
    uint64_t end = 0;
    for (size_t i = 0; i < launcher->count; i++)
        end = launcher->items[i].monotonic_ns > end ? launcher->items[i].monotonic_ns : end;
    int clock_kind = asys_clock_from_name(asys_json_get_str(clock, "kind", NULL));
    if (launcher->count < 2) {
        /* the segments of the session's clock only: a launcher sampler's are
         * CLOCK_MONOTONIC ns, which read as ticks squeeze the timeline */
        for (size_t i = 0; i < headers->count; i++) {
            if (headers->kinds[i] != (uint32_t)clock_kind)
                continue;
            pairs_add(launcher, headers->items[i].ticks, headers->items[i].monotonic_ns, 0);
            end = headers->items[i].monotonic_ns > end ? headers->items[i].monotonic_ns : end;
        }
        char now_boot[64] = "";
        asys_read_first_line(ASYS_BOOT_ID_FILE, now_boot, sizeof now_boot);
        const char *boot = asys_json_get_str(clock, "boot_id", "");
        if (clock_kind && now_boot[0] && !strcmp(boot, now_boot)) {
            struct asys_clock_pair now;
            asys_clock_pair_take(clock_kind, &now);
            pairs_add(launcher, now.ticks, now.monotonic_ns, now.realtime_ns);
        }
        cJSON_AddBoolToObject(clock, "recovered_pairs", 1);
    }
    if (use->count)
        qsort(use->items, use->count, sizeof *use->items, by_ticks);
    double tick_hz = 0;
    int refused = 0;
    while (use->count >= 2) {
        const struct asys_clock_pair *first = &use->items[0], *last = &use->items[use->count - 1];
        tick_hz = last->monotonic_ns > first->monotonic_ns
                      ? (double)(last->ticks - first->ticks) * 1e9 /
                            (double)(last->monotonic_ns - first->monotonic_ns)
                      : 0;
        if (tick_rate_plausible(clock_kind, tick_hz))
            break;
        /* a pair that cannot be (a damaged header): the rest are tried
         * without the earliest or the latest, and at worst no rate is
         * claimed at all */
        const struct asys_clock_pair *second = &use->items[1];
        double without_first = last->monotonic_ns > second->monotonic_ns
                                   ? (double)(last->ticks - second->ticks) * 1e9 /
                                         (double)(last->monotonic_ns - second->monotonic_ns)
                                   : 0;
        if (tick_rate_plausible(clock_kind, without_first))
            memmove(use->items, use->items + 1, (use->count - 1) * sizeof *use->items);
        use->count--;
        refused++;
        tick_hz = 0;
    }
    /* and the pairs between that disagree with that rate (by more than 1 %
     * of their distance from the first, or 1 ms) */
    for (size_t i = 1; tick_hz > 0 && i + 1 < use->count;) {
        const struct asys_clock_pair *first = &use->items[0], *p = &use->items[i];
        double expected =
            (double)first->monotonic_ns + (double)(p->ticks - first->ticks) * 1e9 / tick_hz;
        double off = (double)p->monotonic_ns - expected;
        double allowed = 0.01 * (expected - (double)first->monotonic_ns);
        if (allowed < 1e6)
            allowed = 1e6;
        if (off > allowed || off < -allowed) {
            memmove(use->items + i, use->items + i + 1, (use->count - i - 1) * sizeof *use->items);
            use->count--;
            refused++;
        } else {
            i++;
        }
    }
    if (refused)
        cJSON_AddNumberToObject(clock, "pairs_refused", refused);
    cJSON_AddNumberToObject(clock, "pair_count", (double)use->count);
    if (tick_hz > 0)
        cJSON_AddNumberToObject(clock, "tick_hz", tick_hz);
    /* the latest record of any segment, when later than the last pair */
    uint64_t last_record = headers->last_ticks[ASYS_CLOCK_MONOTONIC];
    if (clock_kind > ASYS_CLOCK_MONOTONIC && clock_kind <= ASYS_CLOCK_CNTVCT && tick_hz > 0 &&
        use->count && headers->last_ticks[clock_kind] > use->items[use->count - 1].ticks) {
        const struct asys_clock_pair *last = &use->items[use->count - 1];
        double ns = (double)last->monotonic_ns +
                    (double)(headers->last_ticks[clock_kind] - last->ticks) * 1e9 / tick_hz;
        if (ns > (double)last_record && ns < (double)CLOCK_VALUE_MAX)
            last_record = (uint64_t)ns;
    }
    uint64_t start = 0;
    if (asys_json_get_u64(session, "start_monotonic_ns", &start) != 0 || last_record < start)
        last_record = 0;
    if (last_record > end)
        end = last_record;
    if (end)
        asys_json_add_u64(session, "end_monotonic_ns", end);
    realtime_offsets_json(clock, use);
    cJSON *pairs = cJSON_AddArrayToObject(clock, "pairs");
    for (size_t i = 0; i < use->count; i++) {
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, asys_json_u64(use->items[i].ticks));
        cJSON_AddItemToArray(pair, asys_json_u64(use->items[i].monotonic_ns));
        cJSON_AddItemToArray(pair, asys_json_u64(use->items[i].realtime_ns));
        cJSON_AddItemToArray(pairs, pair);
    }
}

static cJSON *segments_json(const struct segment_scan *scans, size_t n,
                            struct asys_finalize_result *result)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const struct segment_scan *s = &scans[i];
        cJSON *seg = cJSON_CreateObject();
        char file[300];
        snprintf(file, sizeof file, "%s%s", ASYS_SEGMENT_DIR, s->name);
        cJSON_AddStringToObject(seg, "file", file);
        cJSON_AddNumberToObject(seg, "pid", s->pid);
        cJSON_AddNumberToObject(seg, "tid", s->tid);
        cJSON_AddStringToObject(seg, "collector", collector_name(s->collector));
        cJSON_AddNumberToObject(seg, "records", (double)s->records);
        cJSON_AddNumberToObject(seg, "bytes", (double)s->end);
        cJSON_AddNumberToObject(seg, "dropped_records", (double)s->dropped_records);
        cJSON_AddNumberToObject(seg, "dropped_bytes", (double)s->dropped_bytes);
        if (s->dropped_records) {
            cJSON *causes = cJSON_AddObjectToObject(seg, "dropped_by_cause");
            cJSON_AddNumberToObject(causes, "full", (double)s->dropped_by_cause[0]);
            cJSON_AddNumberToObject(causes, "reentry", (double)s->dropped_by_cause[1]);
            cJSON_AddNumberToObject(causes, "big", (double)s->dropped_by_cause[2]);
            if (s->dropped_by_cause[3]) {
                cJSON_AddNumberToObject(causes, "no_room", (double)s->dropped_by_cause[3]);
                cJSON_AddStringToObject(causes, "no_room_reason", strerror((int)s->no_room_errno));
            }
            result->dropped_no_room += s->dropped_by_cause[3];
            if (s->dropped_by_cause[3])
                result->no_room_errno = (int)s->no_room_errno;
        }
        if (s->lost_processes) {
            cJSON_AddNumberToObject(seg, "lost_processes", (double)s->lost_processes);
            cJSON_AddNumberToObject(seg, "lost_process_records", (double)s->lost_process_records);
            cJSON_AddStringToObject(seg, "lost_process_reason",
                                    strerror((int)s->lost_process_errno));
            cJSON_AddNumberToObject(seg, "lost_process_pid", s->lost_process_pid);
            result->lost_processes += s->lost_processes;
            result->lost_process_records += s->lost_process_records;
            result->lost_process_errno = (int)s->lost_process_errno;
            result->lost_process_pid = s->lost_process_pid;
        }
        if (s->lost_threads) {
            cJSON_AddNumberToObject(seg, "lost_threads", (double)s->lost_threads);
            cJSON_AddNumberToObject(seg, "lost_thread_records", (double)s->lost_thread_records);
            cJSON_AddStringToObject(seg, "lost_thread_reason", strerror((int)s->lost_thread_errno));
            result->lost_thread_errno = (int)s->lost_thread_errno;
        }
        if (s->error[0])
            cJSON_AddStringToObject(seg, "error", s->error);
        cJSON_AddItemToArray(arr, seg);
        result->records += s->records;
        result->dropped_records += s->dropped_records;
        result->lost_threads += s->lost_threads;
        result->lost_thread_records += s->lost_thread_records;
        if ((s->notices & ASYS_NOTICE_NVTX_REPLACED) && !result->nvtx_replaced_pid)
            result->nvtx_replaced_pid = s->pid;
        result->nvtx_replaced += (s->notices & ASYS_NOTICE_NVTX_REPLACED) != 0;
    }
    return arr;
}

/* What could not be read of the session, in the manifest's "damage" (none
 * when all was read): slots the control block says were claimed but the
 * file cut off, slots whose header is unreadable, slots missing inside a
 * segment's sequence and the readable ones after them (left out: their
 * time deltas and string ids build on what was lost), slots released from
 * the arena whose frame is unusable, segments that ended on an error, an
 * arena gone while the launcher's segment is there. */
static void add_damage(cJSON *root, const struct asys_arena_index *arena, uint64_t released_lost,
                       const char *arena_path, const char *segment_dir,
                       const struct segment_scan *scans, size_t n,
                       struct asys_finalize_result *result)
{
    char launcher[PATH_MAX + 64];
    snprintf(launcher, sizeof launcher, "%s/%s", segment_dir, ASYS_LAUNCHER_SEGMENT);
    result->arena_missing = access(arena_path, F_OK) != 0 && access(launcher, F_OK) == 0;
    /* a damaged header inside a segment is both unreadable and a gap in its
     * sequence: the larger of the two counts it once */
    uint64_t inside =
        arena->skipped_slots > arena->sequence_gaps ? arena->skipped_slots : arena->sequence_gaps;
    result->damaged_slots = arena->missing_slots + inside + arena->slots_after_gap + released_lost;
    result->damaged_bytes = result->damaged_slots * arena->slot_size;
    result->damaged_segments = 0;
    for (size_t i = 0; i < n; i++)
        result->damaged_segments +=
            scans[i].error[0] && strcmp(scans[i].error, "duplicate segment");
    result->control_damaged = arena->control_damaged;
    if (!result->damaged_slots && !result->damaged_segments && !result->arena_missing &&
        !result->control_damaged)
        return;
    cJSON *d = cJSON_AddObjectToObject(root, "damage");
    cJSON_AddNumberToObject(d, "slots_cut_off", (double)arena->missing_slots);
    cJSON_AddNumberToObject(d, "slots_unreadable", (double)arena->skipped_slots);
    cJSON_AddNumberToObject(d, "slots_out_of_sequence", (double)arena->sequence_gaps);
    cJSON_AddNumberToObject(d, "slots_after_a_gap", (double)arena->slots_after_gap);
    cJSON_AddNumberToObject(d, "slots_released_unreadable", (double)released_lost);
    cJSON_AddNumberToObject(d, "bytes", (double)result->damaged_bytes);
    cJSON_AddNumberToObject(d, "segments_ended_early", (double)result->damaged_segments);
    cJSON_AddBoolToObject(d, "arena_missing", result->arena_missing);
    cJSON_AddBoolToObject(d, "control_block_damaged", result->control_damaged);
}

void asys_finalize_result_free(struct asys_finalize_result *r)
{
    for (size_t i = 0; i < r->rank_report_count; i++)
        free(r->rank_reports[i]);
    free(r->rank_reports);
    r->rank_reports = NULL;
    r->rank_report_count = r->rank_report_cap = 0;
}

void asys_finalize_warn_damage(const struct asys_finalize_result *r)
{
    if (r->arena_missing)
        asys_note(ASYS_NOTE_WARNING, "the session's arena is missing: the threads' records are "
                                     "lost (see report_info)");
    else if (r->damaged_slots || r->damaged_segments || r->control_damaged) {
        char segments[96] = "";
        if (r->damaged_segments)
            snprintf(segments, sizeof segments, "%s%" PRIu64 " segments ended early",
                     r->damaged_slots ? " and " : "", r->damaged_segments);
        char slots[96] = "";
        if (r->damaged_slots)
            snprintf(slots, sizeof slots, "%" PRIu64 " slots (%.1f MiB) could not be read",
                     r->damaged_slots, (double)r->damaged_bytes / (1 << 20));
        if (r->control_damaged && !slots[0] && !segments[0])
            snprintf(slots, sizeof slots, "the arena's control block is unreadable");
        asys_note(ASYS_NOTE_WARNING, "the session was damaged: %s%s; %s (see report_info)", slots,
                  segments,
                  r->control_damaged ? "slots claimed past the file's end cannot be counted"
                                     : "their records are lost");
    }
}

/* Where the archive's segments come from. */
struct archive_sources {
    const char *segment_dir;
    const struct asys_arena_index *arena;
    int arena_fd;
    struct asys_arena_frames *frames; /* arena slots compressed while recording */
    int window_fd; /* the segments of one recording window (scan->windowed) */
};

static int add_segment(struct asys_archive_writer *w, const struct archive_sources *from,
                       const struct segment_scan *scan, struct asys_err *err)
{
    char member[300];
    snprintf(member, sizeof member, "%s%s", ASYS_SEGMENT_DIR, scan->name);
    if (scan->windowed) {
        struct asys_file_range range = {from->window_fd, scan->window_offset,
                                        scan->window_offset + scan->end};
        return asys_archive_add_stream(w, member, scan->end, asys_file_range_read, &range, err);
    }
    if (scan->arena)
        return asys_arena_frames_add_member(w, from->frames, member, scan->end, scan->arena, err);
    struct segment_source src;
    if (source_open(&src, from->segment_dir, scan, from->arena, from->arena_fd, from->frames) != 0)
        return asys_fail_errno(err, errno, "cannot open segment '%s'", scan->name);
    int added = asys_archive_add_stream(w, member, scan->end, src.read, src.ctx, err);
    source_close(&src);
    return added;
}

static int write_archive(int fd, const struct archive_sources *from, const cJSON *manifest,
                         const cJSON *symbols, const struct segment_scan *scans, size_t n,
                         struct asys_err *err)
{
    struct asys_archive_writer *w = NULL;
    char *text = asys_json_print(manifest, 1);
    char *symbol_text = symbols ? asys_json_print(symbols, 0) : NULL;
    int rc = -1;
    if (!text || (symbols && !symbol_text)) {
        asys_fail(err, "out of memory");
        goto out;
    }
    if (asys_archive_writer_open(&w, fd, err) != 0)
        goto out;
    uint64_t bytes = strlen(text) + (symbol_text ? strlen(symbol_text) : 0);
    for (size_t i = 0; i < n; i++)
        bytes += scans[i].end;
    asys_archive_writer_expect(w, bytes);
    if (asys_archive_add_buffer(w, ASYS_MANIFEST_NAME, text, strlen(text), err) != 0)
        goto out;
    if (symbol_text &&
        asys_archive_add_buffer(w, ASYS_SYMBOLS_NAME, symbol_text, strlen(symbol_text), err) != 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (scans[i].end && add_segment(w, from, &scans[i], err) != 0)
            goto out; /* end 0: unreadable from the start, listed in the manifest only */
    rc = 0;
out:
    if (w && asys_archive_writer_close(w, rc == 0 ? err : NULL) != 0)
        rc = -1;
    free(text);
    free(symbol_text);
    return rc;
}

static void add_totals(cJSON *root, size_t segments, const struct asys_finalize_result *r)
{
    cJSON *totals = cJSON_AddObjectToObject(root, "totals");
    cJSON_AddNumberToObject(totals, "segments", (double)segments);
    cJSON_AddNumberToObject(totals, "records", (double)r->records);
    cJSON_AddNumberToObject(totals, "dropped_records", (double)r->dropped_records);
    cJSON_AddNumberToObject(totals, "lost_threads", (double)r->lost_threads);
    cJSON_AddNumberToObject(totals, "lost_thread_records", (double)r->lost_thread_records);
    cJSON_AddNumberToObject(totals, "lost_processes", (double)r->lost_processes);
    cJSON_AddNumberToObject(totals, "lost_process_records", (double)r->lost_process_records);
}

/* What every report of one session shares. */
struct report_set {
    const char *report_path; /* may hold a %r kept for the ranks */
    int force;
    const cJSON *symbols;
    const struct archive_sources *from;
    const struct segment_scan *scans;
    size_t n;
    struct asys_finalize_result *result;
};

/* One report: a temporary file beside it, renamed into place when whole. */
static int write_report(const struct report_set *set, const char *path, const cJSON *manifest,
                        const struct segment_scan *scans, size_t n, struct asys_err *err)
{
    char tmp[PATH_MAX + 32];
    int rc = -1;
    /* .NAME.PID.XXXXXX: one that a killed finalize left is removed here */
    asys_remove_stale_temps(path, 1);
    int fd = asys_temp_template(path, 1, tmp, sizeof tmp) == 0 ? mkostemp(tmp, O_CLOEXEC) : -1;
    if (fd < 0) {
        asys_fail(err, "%s", strerror(errno));
        return -1;
    }
    if (write_archive(fd, set->from, manifest, set->symbols, scans, n, err) != 0)
        goto out;
    int closed = close(fd) == 0;
    fd = -1;
    if (!closed) {
        asys_fail(err, "%s", strerror(errno));
        goto out;
    }
    int published = asys_publish_temp(
        tmp, path, set->force ? ASYS_PUBLISH_REPLACE : ASYS_PUBLISH_NO_REPLACE, err);
    tmp[0] = '\0'; /* gone either way */
    if (published != 0)
        goto out;
    struct stat st;
    if (stat(path, &st) == 0)
        set->result->report_bytes += (uint64_t)st.st_size;
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (tmp[0])
        unlink(tmp);
    return rc;
}

/* A segment's rank: its process's, or its nearest ancestor's among the
 * program's processes (a fork child keeps its parent's variables);
 * RANK_NONE for a process of the launcher's own (torchrun itself),
 * RANK_EVERY for the launcher's and its samplers' segments, which every
 * report needs (the clock pairs). */
#define RANK_NONE (-1L)
#define RANK_EVERY (-2L)
static long segment_rank(const struct asys_rank_map *ranks, const struct segment_scan *scans,
                         size_t n, const struct segment_scan *seg)
{
    if (seg->collector != ASYS_SEGMENT_THREAD)
        return RANK_EVERY;
    uint32_t pid = seg->pid;
    for (int depth = 0; depth < 64 && pid; depth++) {
        const struct asys_rank *r = asys_rank_map_find(ranks, pid);
        if (r)
            return r->rank;
        uint32_t parent = 0;
        for (size_t i = 0; i < n && !parent; i++)
            if (scans[i].pid == pid && scans[i].collector == ASYS_SEGMENT_THREAD)
                parent = scans[i].ppid;
        pid = parent;
    }
    return RANK_NONE;
}

/* The ranks among the program's processes, in order; their count. */
static size_t list_ranks(const struct asys_rank_map *ranks, const struct segment_scan *scans,
                         size_t n, long *out, size_t max)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        long r = segment_rank(ranks, scans, n, &scans[i]);
        if (r < 0)
            continue;
        size_t at = 0;
        while (at < count && out[at] < r)
            at++;
        if ((at < count && out[at] == r) || count == max)
            continue;
        memmove(out + at + 1, out + at, (count - at) * sizeof *out);
        out[at] = r;
        count++;
    }
    return count;
}

#define MAX_RANK_REPORTS 1024

static size_t rank_count(const struct asys_rank_map *ranks, const struct segment_scan *scans,
                         size_t n)
{
    long found[2];
    return ranks->count ? list_ranks(ranks, scans, n, found, 2) : 0;
}

/* The one rank of a recording that is not split (-1: none): what a kept %r
 * becomes. */
static long single_rank(const struct asys_rank_map *ranks, const struct segment_scan *scans,
                        size_t n)
{
    long found[1];
    return ranks->count && list_ranks(ranks, scans, n, found, 1) ? found[0] : RANK_NONE;
}

/* The manifest's rank: the one its processes' launcher gave them. */
static void set_rank(cJSON *manifest, const struct asys_rank_map *ranks, long rank, long lowest)
{
    const struct asys_rank *r = NULL;
    for (size_t i = 0; i < ranks->count && !r; i++)
        if (ranks->items[i].rank.rank == rank)
            r = &ranks->items[i].rank;
    cJSON_DeleteItemFromObjectCaseSensitive(manifest, "multi_node");
    cJSON *mn = cJSON_AddObjectToObject(manifest, "multi_node");
    asys_rank_json(mn, r);
    /* one asys profile around the launcher: the launcher's own processes are
     * in the lowest rank's report */
    cJSON_AddBoolToObject(mn, "split_from_launcher", 1);
    cJSON_AddBoolToObject(mn, "launcher_processes", rank == lowest);
}

/* One report per rank, each with the segments of its processes and the
 * launcher's; the results added up. */
static int write_rank_reports(const struct report_set *set, const cJSON *root,
                              const struct asys_rank_map *ranks, struct asys_err *err)
{
    long *list = calloc(MAX_RANK_REPORTS, sizeof *list);
    struct segment_scan *subset = calloc(set->n ? set->n : 1, sizeof *subset);
    int rc = -1;
    if (!list || !subset) {
        asys_fail(err, "out of memory");
        goto out;
    }
    size_t count = list_ranks(ranks, set->scans, set->n, list, MAX_RANK_REPORTS);
    for (size_t k = 0; k < count; k++) {
        size_t m = 0;
        for (size_t i = 0; i < set->n; i++) {
            long r = segment_rank(ranks, set->scans, set->n, &set->scans[i]);
            if (r == list[k] || r == RANK_EVERY || (r == RANK_NONE && k == 0))
                subset[m++] = set->scans[i];
        }
        char path[PATH_MAX];
        if (asys_rank_report_path(set->report_path, list[k], 1, path, sizeof path) != 0) {
            asys_fail(err, "report name is too long");
            goto out;
        }
        cJSON *manifest = cJSON_Duplicate(root, 1);
        if (!manifest) {
            asys_fail(err, "out of memory");
            goto out;
        }
        struct asys_finalize_result part = {0};
        cJSON_AddItemToObject(manifest, "segments", segments_json(subset, m, &part));
        add_totals(manifest, m, &part);
        set_rank(manifest, ranks, list[k], list[0]);
        add_report_id(manifest);
        int written = write_report(set, path, manifest, subset, m, err);
        cJSON_Delete(manifest);
        if (written != 0) {
            asys_err_wrap(err, "'%s'", path);
            goto out;
        }
        struct asys_finalize_result *res = set->result;
        char *copy = strdup(path);
        if (!copy || asys_grow(&res->rank_reports, &res->rank_report_cap, res->rank_report_count,
                               sizeof *res->rank_reports, 8) != 0) {
            free(copy);
            asys_fail(err, "out of memory");
            goto out;
        }
        res->rank_reports[res->rank_report_count++] = copy;
    }
    rc = 0;
out:
    free(list);
    free(subset);
    return rc;
}

/* A recording window's report (asys stop): the injected threads' segments
 * of the arena without the events of the session's other windows
 * (window_filter.h), into a file of their own in the session directory,
 * unlinked at once; its descriptor, or -1 when the report is of no window.
 * Whatever cannot be filtered goes into the report whole, as before: the
 * importer keeps only the window's events either way. */
static int window_segments(const char *session_dir, cJSON *root, struct segment_scan *scans,
                           size_t n, const struct asys_arena_index *arena, int arena_fd,
                           struct asys_arena_frames *frames)
{
    struct asys_window_filter filter;
    struct asys_err err = {0};
    int fd = -1;
    uint64_t at = 0, bytes = 0;
    if (asys_window_filter_init(&filter, root, &err) != 0 || !filter.active)
        goto out;
    fd = open(session_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) { /* a file system without O_TMPFILE */
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/.window.XXXXXX", session_dir);
        fd = mkostemp(path, O_CLOEXEC);
        if (fd >= 0)
            unlink(path);
    }
    if (fd < 0) {
        asys_fail_errno(&err, errno, "cannot create a file in '%s'", session_dir);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        struct segment_scan *scan = &scans[i];
        if (!scan->arena || scan->collector != ASYS_SEGMENT_THREAD || !scan->end)
            continue;
        struct asys_arena_cursor cursor = {arena_fd, arena, scan->arena, 0, NULL, NULL};
        asys_arena_frames_attach(frames, &cursor);
        uint64_t written = 0, kept = 0;
        if (asys_window_filter_segment(&filter, asys_arena_cursor_read, &cursor, scan->end, fd, at,
                                       &written, &kept, &err) != 0)
            goto out; /* this segment and the rest whole */
        scan->windowed = 1;
        scan->window_offset = at;
        at += written;
        bytes += scan->end > written ? scan->end - written : 0;
        scan->end = written;
        scan->records = kept;
    }
out:
    if (err.text[0])
        asys_note(ASYS_NOTE_WARNING,
                  "the report holds the session's earlier recordings too (the importer leaves "
                  "them out): %s",
                  err.text);
    if (filter.active) {
        cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "recording_window");
        asys_json_add_u64(w, "left_out_records", filter.left_out);
        asys_json_add_u64(w, "left_out_bytes", bytes);
    }
    asys_window_filter_free(&filter);
    return fd;
}

int asys_finalize(const char *session_dir, const char *report_path, int force,
                  const struct asys_target *target, struct asys_finalize_aids *aids,
                  struct asys_finalize_result *result, struct asys_err *err)
{
    struct asys_arena_compressor *compressor = aids ? aids->compressor : NULL;
    int rc = -1;
    struct segment_scan *scans = NULL;
    size_t n = 0;
    cJSON *symbols = NULL;
    /* the one frames were resolved into while the program ran, else a new one */
    struct asys_symbolizer *symbolizer =
        aids && aids->symbolizer ? aids->symbolizer : asys_symbolizer_new();
    if (aids)
        aids->symbolizer = NULL; /* finalize's now */
    struct collector_tallies tallies;
    struct clock_pairs launcher_pairs = {0}, header_pairs = {0};
    struct asys_arena_index arena = {0};
    struct asys_arena_frames frames;
    struct asys_rank_map ranks = {0};
    int arena_fd = -1, window_fd = -1;
    tallies_begin(&tallies);
    asys_arena_frames_init(&frames, &arena, -1);
    char segment_dir[PATH_MAX], session_file[PATH_MAX + 32];
    memset(result, 0, sizeof *result);
    snprintf(segment_dir, sizeof segment_dir, "%s/segments", session_dir);
    snprintf(session_file, sizeof session_file, "%s/%s", session_dir, ASYS_SESSION_FILE);

    struct asys_err ignored;
    cJSON *root = asys_json_load(session_file, &ignored);
    if (!root) { /* recovering a session that lost its description */
        root = cJSON_CreateObject();
        cJSON_AddNumberToObject(root, "format_version", ASYS_FORMAT_VERSION);
    }
    if (!symbolizer) {
        asys_fail(err, "out of memory");
        goto out;
    }
    if (aids && aids->warmer)
        asys_symbolizer_adopt(symbolizer, aids->warmer);
    if (list_segments(segment_dir, &scans, &n, err) != 0)
        goto out;
    char arena_path[PATH_MAX + 32];
    if (asys_arena_path(session_dir, arena_path, sizeof arena_path) != 0) {
        asys_fail(err, "session directory name too long");
        goto out;
    }
    if (asys_arena_index_read(arena_path, &arena, err) != 0 ||
        add_arena_segments(&arena, report_recording(root), &scans, &n, err) != 0)
        goto out;
    struct stat arena_st;
    arena_fd = arena.count ? asys_open_regular(arena_path, &arena_st, err) : -1;
    if (arena.count && arena_fd < 0) {
        asys_err_wrap(err, "cannot open '%s'", arena_path);
        goto out;
    }
    /* segments are read from where their records start, a few kB each for
     * short processes: read-ahead would fill large folios past their ends,
     * most of them holes (released slot tails), with zeros */
    if (arena_fd >= 0)
        posix_fadvise(arena_fd, 0, 0, POSIX_FADV_RANDOM);
    /* the slots released while the program ran are read from their frames;
     * those the compressor writes from now on are only copied (below) */
    asys_arena_frames_init(&frames, &arena, arena_fd);
    if (asys_arena_frames_open(&frames, session_dir, err) != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        struct segment_source src;
        if (source_open(&src, segment_dir, &scans[i], &arena, arena_fd, &frames) != 0) {
            snprintf(scans[i].error, sizeof scans[i].error, "%s", strerror(errno));
            continue;
        }
        scan_segment(&src, &scans[i], &launcher_pairs, &header_pairs, symbolizer, &tallies);
        source_close(&src);
    }
    if (tallies_end(&tallies, root, err) != 0)
        goto out;
    symbols = asys_symbolizer_resolve(symbolizer);
    add_clock(root, &launcher_pairs, &header_pairs);
    add_report_id(root);
    add_target(root, target);
    window_fd = window_segments(session_dir, root, scans, n, &arena, arena_fd, &frames);
    cJSON *all_segments = segments_json(scans, n, result);
    add_damage(root, &arena, frames.released_lost, arena_path, segment_dir, scans, n, result);
    /* only a multi-node session's name may hold a kept %r (else "%%r" meant one) */
    const cJSON *options = cJSON_GetObjectItemCaseSensitive(root, "options");
    int multi_node = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(options, "multi-node-mode"));
    if (multi_node && asys_rank_map_read(session_dir, &ranks) != 0) {
        cJSON_Delete(all_segments);
        asys_fail(err, "out of memory");
        goto out;
    }
    asys_arena_compressor_stop(compressor); /* it compressed while the segments were read */
    compressor = NULL;
    asys_arena_frames_close(&frames);
    if (asys_arena_frames_open(&frames, session_dir, err) != 0) {
        cJSON_Delete(all_segments);
        goto out;
    }
    struct archive_sources from = {segment_dir, &arena, arena_fd, &frames, window_fd};
    struct report_set set = {report_path, force, symbols, &from, scans, n, result};
    if (rank_count(&ranks, scans, n) >= 2) {
        cJSON_Delete(all_segments);
        if (write_rank_reports(&set, root, &ranks, err) != 0)
            goto out;
    } else {
        cJSON_AddItemToObject(root, "segments", all_segments);
        add_totals(root, n, result);
        char path[PATH_MAX];
        if (!multi_node)
            snprintf(path, sizeof path, "%s", report_path);
        else if (asys_rank_report_path(report_path, single_rank(&ranks, scans, n), 0, path,
                                       sizeof path) != 0) {
            asys_fail(err, "report name is too long");
            goto out;
        }
        if (write_report(&set, path, root, scans, n, err) != 0)
            goto out;
    }
    result->segments = (int)n;
    rc = 0;
out:
    if (rc != 0) /* the reports of the ranks written before: whole, but not said */
        asys_finalize_result_free(result);
    asys_rank_map_free(&ranks);
    if (aids && !symbolizer)
        asys_symbols_warmer_free(aids->warmer);
    asys_arena_compressor_stop(compressor);
    free(scans);
    if (rc != 0 || !aids || !aids->exiting || ASYS_FREE_BEFORE_EXIT) {
        cJSON_Delete(root);
        cJSON_Delete(symbols);
        asys_symbolizer_free(symbolizer);
    }
    struct asys_err end_err = {0}; /* after a failure: frees what was left */
    tallies_end(&tallies, NULL, &end_err);
    free(launcher_pairs.items);
    free(header_pairs.items);
    free(header_pairs.kinds);
    free(launcher_pairs.kinds);
    if (arena_fd >= 0)
        close(arena_fd);
    if (window_fd >= 0)
        close(window_fd);
    asys_arena_frames_close(&frames);
    asys_arena_index_free(&arena);
    return rc;
}
