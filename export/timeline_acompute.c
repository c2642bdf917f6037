/* cuDNN and cuBLAS calls on their thread's "ACDNN" and "ACBLAS" rows (manual
 * 1.2.2, 1.2.3), nested as they were made, with their status, handle and
 * stream (cudaStream_t values, as integers: a slice's arguments are written
 * when it ends, so no text of the row's may be kept) and device work as
 * arguments, and a flow from each call to the kernels,
 * copies and memsets it launched (timeline_device.c draws their ends). */
#include <stdio.h>

#include "timeline_walk.h"

static void acdnn_row_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "ACDNN");
}

static void acblas_row_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "ACBLAS");
}

/* after the HGGC API row, as the manual shows them */
static const struct tl_thread_row acdnn_row = {TL_RANK_ACDNN_API, acdnn_row_name, 0, NULL};
static const struct tl_thread_row acblas_row = {TL_RANK_ACBLAS_API, acblas_row_name, 0, NULL};

static const char *const library_names[] = {"?", "cuDNN", "cuBLAS", "cuBLASLt", "cuBLASXt"};

static int walk_acompute(struct walk *w)
{
    /* clang-format off */
    sqlite3_stmt *st = tw_prepare(w,
        "SELECT c.pid, c.tid, c.start_ns, c.end_ns, c.name_id, c.domain, c.library, c.depth,\n"
        "       c.status, c.result, c.handle, c.stream, c.kernels, c.device_ns, c.id\n"
        "FROM acompute_calls AS c\n"
        "WHERE " IN_WINDOW("c") " ORDER BY c.start_ns, c.id");
    /* clang-format on */
    struct ref_cursor work = {NULL, 0, 0, {0}};
    int rc = st ? 0 : -1;
    /* clang-format off */
    if (rc == 0 && tw_table_wanted(w, "ppu_activities"))
        rc = tw_cursor_open(w, &work,
            "SELECT c.start_ns, c.id, x.rowid, p.start_ns, p.end_ns\n"
            "FROM acompute_work AS x JOIN acompute_calls AS c ON c.id = x.call_id\n"
            "JOIN ppu_activities AS p ON p.id = x.activity_id\n"
            "WHERE " IN_WINDOW("p") "\n"
            "ORDER BY c.start_ns, c.id, x.rowid");
    /* clang-format on */
    while (rc == 0 && !w->failed && sqlite3_step(st) == SQLITE_ROW) {
        int domain = sqlite3_column_int(st, 5);
        uint32_t row = tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                           (uint32_t)sqlite3_column_int64(st, 1),
                                           domain == 1 ? &acdnn_row : &acblas_row, 0);
        int64_t start = tw_clip_start(w, sqlite3_column_int64(st, 2));
        int64_t end = tw_clip_end(w, sqlite3_column_int64(st, 3), start);
        tw_flows_clear(w);
        tw_cursor_refs(w, &work, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 14));
        tw_flows_add_out(w, TL_FLOW_ACOMPUTE, start);
        struct tl_flows flows = tw_flows_of(w, 0);
        struct tl_args args;
        args.count = 0;
        int library = sqlite3_column_int(st, 6);
        tw_arg_string(&args, "library", library_names[library >= 1 && library <= 4 ? library : 0]);
        if (sqlite3_column_type(st, 8) != SQLITE_NULL)
            tw_arg_int(&args, "status", sqlite3_column_int64(st, 8));
        else if (sqlite3_column_type(st, 9) != SQLITE_NULL)
            tw_arg_int(&args, "result", sqlite3_column_int64(st, 9));
        if (sqlite3_column_type(st, 10) != SQLITE_NULL) {
            tw_arg_uint(&args, "handle", (uint64_t)sqlite3_column_int64(st, 10));
        }
        if (sqlite3_column_type(st, 11) != SQLITE_NULL) {
            tw_arg_uint(&args, "stream", (uint64_t)sqlite3_column_int64(st, 11));
        }
        tw_arg_int(&args, "depth", sqlite3_column_int64(st, 7));
        tw_arg_int(&args, "kernels", sqlite3_column_int64(st, 12));
        tw_arg_int(&args, "device_ns", sqlite3_column_int64(st, 13));
        tw_emit_slice(w, row, start, end, tw_string_name(w, sqlite3_column_int64(st, 4)),
                      tw_category(w, domain == 1 ? "acdnn" : "acblas"), &flows, &args);
    }
    tw_cursor_close(&work);
    sqlite3_finalize(st);
    return rc != 0 || w->failed ? -1 : 0;
}

const struct tl_family tl_family_acompute = {"acompute_calls", 1, walk_acompute};
