/* VIDEO_API / VIDEO_ACTIVITY / VIDEO_STATUS records (-t hgvideo) ->
 * video_api_calls, video_activities; the JPEG activities derived from the
 * HGGC work of the nvJPEG calls; the decode and encode work joins the PPU's
 * activities (schema/derived.sql).  Every id, kind and time read from a
 * record is checked: what fails is skipped, counted (session_info
 * video_skipped_*) and said once. */
#include <stdlib.h>
#include <string.h>

#include "import_family.h"

static const char *const function_names[ASYS_VIDEO_FUNCTION_MAX + 1] = {
#define VIDEO_NAME(id, api, name) [id] = #name,
    ASYS_VIDEO_FUNCTIONS(VIDEO_NAME)
#undef VIDEO_NAME
};

enum skip {
    SKIP_FUNCTION, /* an unknown function id */
    SKIP_KIND, /* an activity kind the recorder does not write */
    SKIP_TIME, /* times out of order */
    SKIP_NO_CALL, /* an activity whose call was not recorded (kept, api_id NULL) */
    SKIP_STATUS, /* a status record of an unknown code */
    SKIP_COUNT
};
static const char *const skip_keys[SKIP_COUNT] = {
    "video_skipped_unknown_function", "video_skipped_unknown_kind", "video_skipped_bad_time",
    "video_activities_without_call", "video_skipped_unknown_status"};
static const char *const skip_texts[SKIP_COUNT] = {
    "a video API call of an unknown function", "video work of an unknown kind",
    "a video record whose times are out of order", "video work whose API call was not recorded",
    "a video status record of an unknown code"};

struct video {
    struct asys_importer *imp;
    sqlite3_stmt *insert_call, *insert_activity;
    uint32_t names[ASYS_VIDEO_FUNCTION_MAX + 1]; /* function id -> strings.id */
    uint64_t skipped[SKIP_COUNT];
    uint64_t status_counts[5]; /* enum asys_video_status */
    uint32_t last_unknown_version;
};

static int video_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct video *v = calloc(1, sizeof *v);
    if (!v)
        return asys_fail(err, "out of memory");
    *state = v;
    v->imp = imp;
    if (imp_prepare(
            imp,
            "INSERT INTO video_api_calls (start_ns, end_ns, pid, tid, api, name_id, status, "
            "handle, stream_handle, stream, image, call_id) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            &v->insert_call, err) != 0)
        return -1;
    return imp_prepare(imp,
                       "INSERT INTO video_activities (kind, start_ns, end_ns, pid, handle, "
                       "stream_handle, stream, bytes, picture, image, call_id) "
                       "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       &v->insert_activity, err);
}

static void video_free(void *state)
{
    struct video *v = state;
    if (!v)
        return;
    sqlite3_finalize(v->insert_call);
    sqlite3_finalize(v->insert_activity);
    free(v);
}

static int skip(struct video *v, enum skip why)
{
    if (v->skipped[why]++ == 0)
        imp_warn(v->imp, "%s: %s; skipped (counted in session_info %s)", v->imp->seg.member,
                 skip_texts[why], skip_keys[why]);
    return 0;
}

/* The image a record belongs to (0 for a launcher segment, which has none). */
static int64_t image_of(const struct asys_importer *imp)
{
    return imp->seg.image ? (int64_t)imp->seg.image->uid : 0;
}

/* VIDEO_API and VIDEO_API_STREAM: the two share their first 32 bytes. */
static int import_call(void *state, const struct asys_record *rec, uint64_t end_ns,
                       struct asys_err *err)
{
    struct video *v = state;
    struct asys_importer *imp = v->imp;
    const struct asys_rec_video_api *r = (const void *)rec->data;
    const struct asys_rec_video_api_stream *rs =
        rec->type == ASYS_REC_VIDEO_API_STREAM ? (const void *)rec->data : NULL;
    unsigned fn = rec->arg;
    if (fn == 0 || fn > ASYS_VIDEO_FUNCTION_MAX || !function_names[fn])
        return skip(v, SKIP_FUNCTION);
    if (r->start_ticks > rec->ticks)
        return skip(v, SKIP_TIME);
    if (!v->names[fn] && imp_intern_text(imp, function_names[fn], strlen(function_names[fn]),
                                         &v->names[fn], err) != 0)
        return -1;
    sqlite3_stmt *st = v->insert_call;
    sqlite3_bind_int64(st, 1, (int64_t)imp_ns(imp, r->start_ticks));
    sqlite3_bind_int64(st, 2, (int64_t)end_ns);
    sqlite3_bind_int64(st, 3, imp->seg.pid);
    sqlite3_bind_int64(st, 4, imp->seg.tid);
    sqlite3_bind_int64(st, 5, ASYS_VIDEO_API_OF(fn));
    sqlite3_bind_int64(st, 6, v->names[fn]);
    sqlite3_bind_int64(st, 7, r->status);
    imp_bind_optional(st, 8, (int64_t)r->handle, r->handle != 0);
    imp_bind_optional(st, 9, rs ? (int64_t)rs->stream : 0, rs != NULL);
    imp_bind_optional(st, 10, rs ? rs->stream_id : 0, rs && (rs->flags & ASYS_VIDEO_STREAM_ID));
    sqlite3_bind_int64(st, 11, image_of(imp));
    sqlite3_bind_int64(
        st, 12, (int64_t)((uint64_t)imp->seg.thread_index << ASYS_VIDEO_CALL_SHIFT | r->sequence));
    return imp_step(imp, st, err);
}

static int import_activity(void *state, const struct asys_record *rec, uint64_t ns,
                           struct asys_err *err)
{
    (void)ns;
    struct video *v = state;
    struct asys_importer *imp = v->imp;
    const struct asys_rec_video_activity *r = (const void *)rec->data;
    unsigned kind = rec->arg;
    if (kind != ASYS_VIDEO_DECODE && kind != ASYS_VIDEO_ENCODE)
        return skip(v, SKIP_KIND);
    if (r->start_ticks > r->end_ticks || r->end_ticks > rec->ticks)
        return skip(v, SKIP_TIME);
    int has_stream = (r->flags & ASYS_VIDEO_STREAM_ID) != 0;
    sqlite3_stmt *st = v->insert_activity;
    sqlite3_bind_int64(st, 1, kind);
    sqlite3_bind_int64(st, 2, (int64_t)imp_ns(imp, r->start_ticks));
    sqlite3_bind_int64(st, 3, (int64_t)imp_ns(imp, r->end_ticks));
    sqlite3_bind_int64(st, 4, imp->seg.pid);
    imp_bind_optional(st, 5, (int64_t)r->handle, r->handle != 0);
    sqlite3_bind_int64(st, 6, (int64_t)r->stream);
    imp_bind_optional(st, 7, r->stream_id, has_stream);
    sqlite3_bind_int64(st, 8, (int64_t)r->bytes);
    imp_bind_optional(st, 9, r->picture, kind == ASYS_VIDEO_DECODE && r->picture >= 0);
    sqlite3_bind_int64(st, 10, image_of(imp));
    sqlite3_bind_int64(st, 11, (int64_t)r->call_id);
    return imp_step(imp, st, err);
}

static int import_status(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    (void)err;
    struct video *v = state;
    const struct asys_rec_video_status *r = (const void *)rec->data;
    unsigned status = rec->arg;
    if (status < ASYS_VIDEO_TABLE_UNKNOWN || status > ASYS_VIDEO_NO_REAL)
        return skip(v, SKIP_STATUS);
    uint64_t before = v->status_counts[status];
    v->status_counts[status] += r->count ? r->count : 1;
    if (before)
        return 0;
    switch (status) {
    case ASYS_VIDEO_TABLE_UNKNOWN:
        imp_warn(v->imp,
                 "hgvideo: pid %u: an NVENC function list of version 0x%x is not one asys knows; "
                 "its calls were not traced",
                 v->imp->seg.pid, r->value);
        break;
    case ASYS_VIDEO_TABLE_CHANGED:
        imp_warn(v->imp,
                 "hgvideo: pid %u: a second NVENC function list held other functions; its calls "
                 "were not traced",
                 v->imp->seg.pid);
        break;
    case ASYS_VIDEO_PENDING_FULL:
        imp_warn(v->imp,
                 "hgvideo: pid %u: more than %u decodes/encodes were in flight; the work of some "
                 "was not timed (session_info video_untimed_work)",
                 v->imp->seg.pid, ASYS_VIDEO_PENDING_MAX);
        break;
    default:
        imp_warn(v->imp, "hgvideo: pid %u: %s was called but its library could not be found",
                 v->imp->seg.pid,
                 r->value <= ASYS_VIDEO_FUNCTION_MAX && function_names[r->value]
                     ? function_names[r->value]
                     : "a video function");
    }
    return 0;
}

static int video_finish(void *state, struct asys_err *err)
{
    struct video *v = state;
    static const char *const status_keys[5] = {NULL, "video_untraced_function_lists",
                                               "video_changed_function_lists", "video_untimed_work",
                                               "video_calls_without_library"};
    for (int i = 1; i < 5; i++)
        if (v->status_counts[i] &&
            imp_session_info(v->imp, status_keys[i], NULL, (int64_t)v->status_counts[i], err) != 0)
            return -1;
    return 0;
}

/* After the indexes (and HGGC's derived tables): each activity's call, the
 * JPEG work, and the counts of what was skipped. */
static int video_analyze(void *state, struct asys_err *err)
{
    struct video *v = state;
    struct asys_importer *imp = v->imp;
    if (imp_exec(imp,
                 "UPDATE video_activities SET api_id = (SELECT a.id FROM video_api_calls AS a "
                 "WHERE a.image = video_activities.image AND a.call_id = video_activities.call_id) "
                 "WHERE api_id IS NULL",
                 err) != 0 ||
        /* nvJPEG: the device work of the HGGC calls made inside each call on its thread */
        imp_exec(imp,
                 "INSERT INTO video_activities (kind, start_ns, end_ns, pid, api_id, handle, "
                 "stream_handle, stream, bytes, picture, image, call_id) "
                 "SELECT 3, MIN(p.start_ns), MAX(p.end_ns), v.pid, v.id, v.handle, "
                 "v.stream_handle, p.stream, SUM(CASE WHEN p.kind = 2 THEN p.bytes END), NULL, "
                 "v.image, v.call_id "
                 "FROM video_api_calls AS v "
                 "CROSS JOIN hggc_api_calls AS a ON a.pid = v.pid AND a.tid = v.tid "
                 "  AND a.start_ns >= v.start_ns AND a.start_ns <= v.end_ns "
                 "CROSS JOIN ppu_activities AS p ON p.api_id = a.id AND p.kind IN (1, 2, 3) "
                 "WHERE v.api = 3 GROUP BY v.id, p.stream",
                 err) != 0)
        return -1;
    sqlite3_stmt *st = NULL;
    if (imp_prepare(imp, "SELECT COUNT(*) FROM video_activities WHERE api_id IS NULL", &st, err) !=
        0)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        v->skipped[SKIP_NO_CALL] += (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (v->skipped[SKIP_NO_CALL])
        imp_warn(imp, "hgvideo: %llu pieces of video work whose API call was not recorded",
                 (unsigned long long)v->skipped[SKIP_NO_CALL]);
    for (int i = 0; i < SKIP_COUNT; i++)
        if (v->skipped[i] &&
            imp_session_info(imp, skip_keys[i], NULL, (int64_t)v->skipped[i], err) != 0)
            return -1;
    return 0;
}

static const struct imp_record_op video_ops[] = {
    {ASYS_REC_VIDEO_API, import_call},
    {ASYS_REC_VIDEO_API_STREAM, import_call},
    {ASYS_REC_VIDEO_ACTIVITY, import_activity},
    {ASYS_REC_VIDEO_STATUS, import_status},
};

const struct imp_family imp_family_video = {
    .name = "hgvideo",
    .feature = ASYS_FEATURE_HGVIDEO,
    .schema = "video.sql",
    .ops = video_ops,
    .op_count = sizeof video_ops / sizeof video_ops[0],
    .init = video_init,
    .finish = video_finish,
    .analyze = video_analyze,
    .free = video_free,
};
