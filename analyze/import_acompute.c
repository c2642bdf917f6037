/* ACDNN_API/ACDNN_CALL and ACBLAS_API/ACBLAS_CALL records -> acompute_apis,
 * acompute_calls; once every family is in, each call's parent and the device
 * work it launched (acompute_work): the HGGC API calls made inside it on its
 * thread (the innermost library call takes them) and the kernels, copies and
 * memsets they caused (ppu_activities, joined by correlation id by HGGC's
 * analysis, which runs before this family's). */
#include <stdlib.h>
#include <string.h>

#include "import_family.h"

struct acompute {
    struct asys_importer *imp;
    int slot; /* per image: api_id -> name_id | library << 32 (asys_u64map) */
    sqlite3_stmt *insert_api, *insert_call;
    uint64_t unknown_apis, bad_libraries;
    /* the segment's last CALL record: what its CALL_SAME records repeat */
    int has_last;
    uint64_t last_handle, last_stream;
    uint32_t last_flags;
    uint64_t same_without_call;
};

static void apis_free(void *p)
{
    if (p) {
        asys_u64map_free(p);
        free(p);
    }
}

static struct asys_u64map *image_apis(struct acompute *a)
{
    struct imp_image *img = a->imp->seg.image;
    if (!img)
        return NULL;
    if (!img->slot[a->slot]) {
        struct asys_u64map *m = calloc(1, sizeof *m);
        if (!m)
            return NULL;
        asys_u64map_init(m);
        img->slot[a->slot] = m;
    }
    return img->slot[a->slot];
}

static int acompute_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct acompute *a = calloc(1, sizeof *a);
    if (!a)
        return asys_fail(err, "out of memory");
    *state = a;
    a->imp = imp;
    a->slot = imp_image_slot_new(imp, apis_free);
    if (a->slot < 0)
        return asys_fail(err, "acompute: no per-image slot left");
    if (imp_prepare(imp,
                    "INSERT INTO acompute_apis (pid, library, name_id, via_dlsym) VALUES (?,?,?,?) "
                    "ON CONFLICT (pid, name_id) DO UPDATE SET "
                    "via_dlsym = MAX(via_dlsym, excluded.via_dlsym)",
                    &a->insert_api, err) != 0)
        return -1;
    return imp_prepare(imp,
                       "INSERT INTO acompute_calls (start_ns, end_ns, pid, tid, domain, library, "
                       "name_id, depth, status, result, handle, stream, stream_arg, "
                       "unknown_handle, callchain_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       &a->insert_call, err);
}

static void acompute_free(void *state)
{
    struct acompute *a = state;
    if (a) {
        sqlite3_finalize(a->insert_api);
        sqlite3_finalize(a->insert_call);
    }
    free(a);
}

static int import_api(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    (void)ns;
    struct acompute *a = state;
    struct asys_importer *imp = a->imp;
    const struct asys_rec_acompute_api *r = (const void *)rec->data;
    unsigned library = rec->arg;
    int cudnn_record = rec->type == ASYS_REC_ACDNN_API;
    if (library == 0 || library > ASYS_ACOMPUTE_LIBRARY_MAX ||
        (library == ASYS_ACOMPUTE_CUDNN) != cudnn_record || r->api_id == 0) {
        a->bad_libraries++;
        imp_warn(imp, "%s: ACDNN/ACBLAS API record with library %u, id %u; ignored",
                 imp->seg.member, library, r->api_id);
        return 0;
    }
    struct asys_u64map *apis = image_apis(a);
    if (!apis)
        return imp->seg.image ? asys_fail(err, "out of memory") : 0;
    uint32_t name = imp_string(imp, imp->seg.image, r->name_id);
    if (asys_u64map_put(apis, r->api_id, (uint64_t)name | (uint64_t)library << 32) != 0)
        return asys_fail(err, "out of memory");
    sqlite3_stmt *st = a->insert_api;
    sqlite3_bind_int64(st, 1, imp->seg.pid);
    sqlite3_bind_int64(st, 2, library);
    sqlite3_bind_int64(st, 3, name);
    sqlite3_bind_int64(st, 4, (r->flags & ASYS_ACOMPUTE_API_DLSYM) ? 1 : 0);
    return imp_step(imp, st, err);
}

static int import_call(void *state, const struct asys_record *rec, uint64_t end_ns,
                       struct asys_err *err)
{
    struct acompute *a = state;
    struct asys_importer *imp = a->imp;
    const struct asys_rec_acompute_call *r = (const void *)rec->data;
    int same = rec->type == ASYS_REC_ACDNN_CALL_SAME || rec->type == ASYS_REC_ACBLAS_CALL_SAME;
    uint64_t handle = 0, stream = 0;
    uint32_t flags = r->flags;
    if (!same) {
        a->has_last = 1;
        a->last_handle = handle = r->handle;
        a->last_stream = stream = r->stream;
        a->last_flags = flags & (ASYS_ACOMPUTE_CALL_HANDLE | ASYS_ACOMPUTE_CALL_STREAM);
    } else if (a->has_last) {
        handle = a->last_handle;
        stream = a->last_stream;
        flags = (flags & ~(ASYS_ACOMPUTE_CALL_HANDLE | ASYS_ACOMPUTE_CALL_STREAM)) | a->last_flags;
    } else {
        if (!a->same_without_call++)
            imp_warn(imp,
                     "%s: a library call repeats the handle and stream of a call the "
                     "segment does not have; they are unknown",
                     imp->seg.member);
        flags &= ~(ASYS_ACOMPUTE_CALL_HANDLE | ASYS_ACOMPUTE_CALL_STREAM);
    }
    struct asys_u64map *apis = image_apis(a);
    uint64_t *api = apis ? asys_u64map_get(apis, r->api_id) : NULL;
    if (!api) {
        a->unknown_apis++;
        imp_warn(imp, "%s: library call of API id %u, which no API record names; call ignored",
                 imp->seg.member, r->api_id);
        return 0;
    }
    unsigned library = (unsigned)(*api >> 32);
    uint64_t start_ticks = r->duration_ticks <= rec->ticks ? rec->ticks - r->duration_ticks : 0;
    uint64_t start_ns = imp_ns(imp, start_ticks);
    if (start_ns > end_ns)
        start_ns = end_ns;
    int64_t chain = imp_callchain(imp, r->callchain_id);
    sqlite3_stmt *st = a->insert_call;
    sqlite3_bind_int64(st, 1, (int64_t)start_ns);
    sqlite3_bind_int64(st, 2, (int64_t)end_ns);
    sqlite3_bind_int64(st, 3, imp->seg.pid);
    sqlite3_bind_int64(st, 4, imp->seg.tid);
    sqlite3_bind_int64(
        st, 5, rec->type == ASYS_REC_ACDNN_CALL || rec->type == ASYS_REC_ACDNN_CALL_SAME ? 1 : 2);
    sqlite3_bind_int64(st, 6, library);
    sqlite3_bind_int64(st, 7, (int64_t)(uint32_t)*api);
    sqlite3_bind_int64(st, 8, rec->arg);
    imp_bind_optional(st, 9, r->status, (flags & ASYS_ACOMPUTE_CALL_STATUS) != 0);
    imp_bind_optional(st, 10, r->status, (flags & ASYS_ACOMPUTE_CALL_RESULT) != 0);
    imp_bind_optional(st, 11, (int64_t)handle, (flags & ASYS_ACOMPUTE_CALL_HANDLE) != 0);
    imp_bind_optional(st, 12, (int64_t)stream, (flags & ASYS_ACOMPUTE_CALL_STREAM) != 0);
    sqlite3_bind_int64(st, 13, (flags & ASYS_ACOMPUTE_CALL_STREAM_ARG) ? 1 : 0);
    sqlite3_bind_int64(st, 14, (flags & ASYS_ACOMPUTE_CALL_UNKNOWN_HANDLE) ? 1 : 0);
    imp_bind_optional(st, 15, chain, chain != 0);
    return imp_step(imp, st, err);
}

static int acompute_segment_end(void *state, struct asys_err *err)
{
    (void)err;
    struct acompute *a = state;
    a->has_last = 0;
    return 0;
}

static int acompute_finish(void *state, struct asys_err *err)
{
    struct acompute *a = state;
    if (a->unknown_apis && imp_session_info(a->imp, "acompute_unknown_api_calls", NULL,
                                            (int64_t)a->unknown_apis, err) != 0)
        return -1;
    return 0;
}

/* Parents, then the work each call launched, then its sums.  The window of
 * start times searched is bounded by the longest call, so each lookup is an
 * index range. */
static const char acompute_analysis[] =
    "UPDATE acompute_calls AS c SET parent_id = ("
    "  SELECT p.id FROM acompute_calls AS p"
    "  WHERE p.pid = c.pid AND p.tid = c.tid AND p.depth = c.depth - 1"
    "    AND p.start_ns BETWEEN c.start_ns - (SELECT MAX(end_ns - start_ns) FROM acompute_calls)"
    "                       AND c.start_ns"
    "    AND p.end_ns >= c.end_ns"
    "  ORDER BY p.start_ns DESC LIMIT 1)"
    " WHERE c.depth > 0;"
    "CREATE TEMP TABLE acompute_launches AS"
    "  SELECT h.id AS hggc_call_id,"
    "    (SELECT c.id FROM acompute_calls AS c"
    "     WHERE c.pid = h.pid AND c.tid = h.tid"
    "       AND c.start_ns BETWEEN h.start_ns - (SELECT MAX(end_ns - start_ns) FROM "
    "acompute_calls)"
    "                          AND h.start_ns"
    "       AND c.end_ns >= h.end_ns"
    "     ORDER BY c.depth DESC, c.start_ns DESC LIMIT 1) AS call_id"
    "  FROM hggc_api_calls AS h"
    "  WHERE EXISTS (SELECT 1 FROM acompute_calls);"
    "DELETE FROM temp.acompute_launches WHERE call_id IS NULL;"
    "INSERT INTO acompute_work (call_id, hggc_call_id, kind, activity_id, source_id, start_ns, "
    "end_ns, stream)"
    "  SELECT l.call_id, l.hggc_call_id, p.kind, p.id, p.source_id, p.start_ns, p.end_ns, p.stream"
    "  FROM temp.acompute_launches AS l JOIN ppu_activities AS p ON p.api_id = l.hggc_call_id"
    "  WHERE p.kind IN (1, 2, 3);"
    "DROP TABLE temp.acompute_launches;"
    "CREATE INDEX acompute_work_by_call ON acompute_work (call_id);"
    "UPDATE acompute_calls AS c SET"
    "  kernels = (SELECT COUNT(*) FROM acompute_work AS w WHERE w.call_id = c.id AND w.kind = 1),"
    "  device_ns = COALESCE((SELECT SUM(w.end_ns - w.start_ns) FROM acompute_work AS w"
    "                        WHERE w.call_id = c.id), 0)"
    " WHERE EXISTS (SELECT 1 FROM acompute_work AS w WHERE w.call_id = c.id);";

static int acompute_analyze(void *state, struct asys_err *err)
{
    struct acompute *a = state;
    return imp_exec(a->imp, acompute_analysis, err);
}

static const struct imp_record_op acompute_ops[] = {
    {ASYS_REC_ACDNN_API, import_api},        {ASYS_REC_ACDNN_CALL, import_call},
    {ASYS_REC_ACBLAS_API, import_api},       {ASYS_REC_ACBLAS_CALL, import_call},
    {ASYS_REC_ACDNN_CALL_SAME, import_call}, {ASYS_REC_ACBLAS_CALL_SAME, import_call},
};

const struct imp_family imp_family_acompute = {
    .name = "acompute",
    .feature = ASYS_FEATURE_ACDNN | ASYS_FEATURE_ACBLAS,
    .schema = "acompute.sql",
    .ops = acompute_ops,
    .op_count = sizeof acompute_ops / sizeof acompute_ops[0],
    .init = acompute_init,
    .segment_end = acompute_segment_end,
    .finish = acompute_finish,
    .analyze = acompute_analyze,
    .free = acompute_free,
};
