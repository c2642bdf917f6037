/* Video (-t hgvideo): the calls of the Decode, Encode and JPEG APIs on their
 * thread's "Decode API", "Encode API" and "JPEG API" rows, with flows to the
 * work each call submitted, and nvJPEG's work on the stream's "Video" row.
 * The decodes and encodes themselves are PPU activities (kind 5): the
 * device walk (timeline_device.c) draws them on the stream's Video row and
 * on the device's "Video (all streams)" row. */
#include <stdio.h>
#include <string.h>

#include "sql_functions.h"
#include "timeline_walk.h"

static void decode_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "Decode API");
}
static void encode_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "Encode API");
}
static void jpeg_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "JPEG API");
}

/* one rank for the three, told apart by name */
static const struct tl_thread_row api_rows[3] = {
    {TL_RANK_VIDEO_API, decode_name, 0, NULL},
    {TL_RANK_VIDEO_API, encode_name, 0, NULL},
    {TL_RANK_VIDEO_API, jpeg_name, 0, NULL},
};

static int walk_calls(struct walk *w)
{
    int flows = tw_table_wanted(w, "ppu_activities");
    /* clang-format off */
    sqlite3_stmt *st = tw_prepare(w,
        "SELECT v.pid, v.tid, v.start_ns, v.end_ns, v.name_id, v.id, v.api, v.status,\n"
        "       v.handle, v.stream\n"
        "FROM video_api_calls AS v\n"
        "WHERE " IN_WINDOW("v") "\n"
        "ORDER BY v.id");
    /* clang-format on */
    /* read alongside the calls, in their id order: the work each submitted (a
     * decode or encode where the device tree has its stream; nvJPEG's work) */
    struct ref_cursor work = {NULL, 0, 0, {0}};
    int rc = st ? 0 : -1;
    /* clang-format off */
    if (rc == 0 && flows)
        rc = tw_cursor_open(w, &work,
            "SELECT api_id, 0, id, start_ns, end_ns FROM (\n"
            "  SELECT va.api_id, p.id, p.start_ns, p.end_ns\n"
            "  FROM video_activities AS va\n"
            "  JOIN ppu_activities AS p ON p.source_id = va.id AND p.kind = 5\n"
            "  WHERE va.api_id IS NOT NULL AND " IN_WINDOW("p") "\n"
            "  UNION ALL\n"
            "  SELECT va.api_id, va.id | 1152921504606846976, va.start_ns, va.end_ns\n"
            "  FROM video_activities AS va\n"
            "  WHERE va.kind = 3 AND va.api_id IS NOT NULL AND va.stream IS NOT NULL\n"
            "    AND " IN_WINDOW("va") ")\n"
            "ORDER BY api_id, start_ns");
    /* clang-format on */
    if (rc != 0) {
        tw_cursor_close(&work);
        sqlite3_finalize(st);
        return -1;
    }
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        int api = sqlite3_column_int(st, 6);
        if (api < 1 || api > 3)
            continue;
        uint32_t row =
            tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                (uint32_t)sqlite3_column_int64(st, 1), &api_rows[api - 1], 0);
        int64_t start = tw_clip_start(w, sqlite3_column_int64(st, 2));
        int64_t end = tw_clip_end(w, sqlite3_column_int64(st, 3), start);
        tw_flows_clear(w);
        int one_to_one = 0;
        if (flows && tw_cursor_refs(w, &work, sqlite3_column_int64(st, 5), 0) == 1) {
            int64_t dest_start = tw_clip_start(w, w->refs[0].start);
            one_to_one = tw_flow_place(start, dest_start,
                                       tw_clip_end(w, w->refs[0].end, dest_start)) == FLOW_AT_BEGIN;
        }
        tw_flows_add_out(w, TL_FLOW_HOST, start);
        struct tl_flows f = tw_flows_of(w, one_to_one);
        struct tl_args args = {.count = 0};
        char handle[32]; /* the args point at it until the slice is written */
        tw_arg_int(&args, "status", sqlite3_column_int64(st, 7));
        if (sqlite3_column_type(st, 8) != SQLITE_NULL) {
            snprintf(handle, sizeof handle, "0x%llx",
                     (unsigned long long)sqlite3_column_int64(st, 8));
            tw_arg_string(&args, "handle", handle);
        }
        if (sqlite3_column_type(st, 9) != SQLITE_NULL)
            tw_arg_int(&args, "stream", sqlite3_column_int64(st, 9));
        tw_emit_slice(w, row, start, end, tw_string_name(w, sqlite3_column_int64(st, 4)),
                      tw_category(w, "hgvideo"), &f, &args);
    }
    tw_cursor_close(&work);
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

/* The "Video" row of a stream node (or of its context or device when the
 * tree hides it), made when the device walk made none. */
static uint32_t video_row(struct walk *w, const char *ctx_key, const char *stream_suffix,
                          const char *dev_key)
{
    char key[300];
    int n = snprintf(key, sizeof key, "%s%s/RVideo", ctx_key, stream_suffix);
    uint32_t row = tw_row_find(w, key, (size_t)n);
    if (row)
        return row;
    n = snprintf(key, sizeof key, "%s%s", ctx_key, stream_suffix);
    uint32_t parent = tw_row_find(w, key, (size_t)n);
    if (!parent)
        parent = tw_row_find(w, ctx_key, strlen(ctx_key));
    if (!parent)
        parent = tw_row_find(w, dev_key, strlen(dev_key));
    struct row *p = tw_row_at(w, parent);
    if (!p)
        return 0;
    n = snprintf(key, sizeof key, "%u/vj%s", parent, stream_suffix);
    row = tw_row_find(w, key, (size_t)n);
    if (!row) {
        row = tw_row_new(w, key, (size_t)n, p->lanes[0].uuid, p->sort_index, TL_PLAIN, "Video", 150,
                         0);
        tw_row_set_flat(w, row);
    }
    return row;
}

/* nvJPEG's work per call and stream, where the device tree has the stream. */
static int walk_jpeg(struct walk *w)
{
    int host = tw_table_wanted(w, "video_api_calls");
    /* clang-format off */
    sqlite3_stmt *st = tw_prepare(w,
        "SELECT va.id, va.start_ns, va.end_ns, va.bytes, c.start_ns,\n"
        "       'D' || COALESCE(d.physical_index, x.device) || '/C' || va.pid || '.' || s.context,\n"
        "       '/S' || va.stream, 'D' || COALESCE(d.physical_index, x.device)\n"
        "FROM video_activities AS va\n"
        "JOIN ppu_streams AS s ON s.pid = va.pid AND s.stream = va.stream\n"
        "JOIN ppu_contexts AS x ON x.pid = s.pid AND x.context = s.context\n"
        "LEFT JOIN ppu_devices AS d ON d.pid = x.pid AND d.device = x.device\n"
        "LEFT JOIN video_api_calls AS c ON c.id = va.api_id AND :host AND " IN_WINDOW("c") "\n"
        "WHERE va.kind = 3 AND " IN_WINDOW("va") "\n"
        "ORDER BY va.start_ns, va.id");
    /* clang-format on */
    if (!st)
        return -1;
    sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, ":host"), host);
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row =
            video_row(w, asys_column_text(st, 5), asys_column_text(st, 6), asys_column_text(st, 7));
        if (!row)
            continue;
        int64_t start = tw_clip_start(w, sqlite3_column_int64(st, 1));
        int64_t end = tw_clip_end(w, sqlite3_column_int64(st, 2), start);
        tw_flows_clear(w);
        int one_to_one = 0;
        if (sqlite3_column_type(st, 4) != SQLITE_NULL)
            one_to_one = tw_flows_add_in(w,
                                         TL_FLOW_HOST | TL_FLOW_VIDEO_JPEG |
                                             (uint64_t)sqlite3_column_int64(st, 0),
                                         sqlite3_column_int64(st, 4), start, end) == FLOW_AT_BEGIN;
        struct tl_flows f = tw_flows_of(w, one_to_one);
        struct tl_args args = {.count = 0};
        if (sqlite3_column_type(st, 3) != SQLITE_NULL)
            tw_arg_int(&args, "bytes", sqlite3_column_int64(st, 3));
        tw_emit_slice(w, row, start, end, tw_synthetic_name(w, "[Video JPEG]"),
                      tw_category(w, "hgvideo"), &f, args.count ? &args : NULL);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

static int walk_video(struct walk *w)
{
    if (walk_calls(w) != 0)
        return -1;
    return tw_table_wanted(w, "ppu_activities") ? walk_jpeg(w) : 0;
}

const struct tl_family tl_family_video = {"video_api_calls", 1, walk_video};
