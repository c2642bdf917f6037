/* HGGC API calls on their thread's "HGGC API" row, with flows to the device
 * work each call launched and from the work a synchronizing call waited for;
 * each call's result and correlation id as its arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activity_pages.h"
#include "timeline_walk.h"

static void api_row_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "HGGC API");
}

static const struct tl_thread_row api_row = {TL_RANK_HGGC_API, api_row_name, 0, NULL};

/* The calls in the window, in id order, with `name` as their name id. */
/* clang-format off */
#define API_QUERY(name) \
    "SELECT a.pid, a.tid, a.start_ns, a.end_ns, " name ",\n" \
    "       a.id, a.result, a.correlation_id\n" \
    "FROM hggc_api_calls AS a\n" \
    "WHERE " IN_WINDOW("a") "\n" \
    "ORDER BY a.id"
/* --api-name-mode kernel: a call that launched one kernel, outside a graph,
 * is named by it */
#define KERNEL_NAME_OR(call_name) \
    "COALESCE((SELECT CASE WHEN COUNT(*) = 1 AND MAX(p.graph_id) IS NULL\n" \
    "                      THEN MAX(p.name_id) END\n" \
    "          FROM ppu_activities AS p\n" \
    "          WHERE p.api_id = a.id AND p.kind = 1), " call_name ")"
/* clang-format on */

/* One call in the window (its fields as hggc_api_pages has them), with its
 * flows: to the work it launched, from the work it waited for. */
static void draw_call(struct walk *w, const int64_t *c, struct ref_cursor *waited)
{
    uint32_t row = tw_thread_child_row(w, (uint32_t)c[CP_PID], (uint32_t)c[CP_TID], &api_row, 0);
    int64_t start = tw_clip_start(w, c[CP_START]);
    int64_t end = tw_clip_end(w, c[CP_END], start);
    tw_flows_clear(w);
    /* to the work launched; a call that launched one thing points at it alone */
    int one_to_one = 0;
    if (tw_activities_launched(w, c[CP_ID]) == 1) {
        int64_t dest_start = tw_clip_start(w, w->refs[0].start);
        one_to_one = tw_flow_place(start, dest_start, tw_clip_end(w, w->refs[0].end, dest_start)) ==
                     FLOW_AT_BEGIN;
    }
    tw_flows_add_out(w, TL_FLOW_HOST, start);
    /* from the work a synchronizing call waited for */
    tw_cursor_refs(w, waited, c[CP_ID], 0);
    for (size_t i = 0; i < w->ref_count; i++)
        tw_flows_add_in(w, TL_FLOW_DEPENDENCY | w->refs[i].id, w->refs[i].start, start, end);
    struct tl_flows f = tw_flows_of(w, one_to_one);
    struct tl_args args;
    args.count = 0;
    tw_arg_int(&args, "result", c[CP_RESULT]);
    tw_arg_uint(&args, "correlation_id", (uint64_t)c[CP_CORRELATION]);
    tw_emit_slice(w, row, start, end, tw_string_name(w, c[CP_NAME]), tw_category(w, "hggc"), &f,
                  &args);
}

/* The calls in the window from the call query. */
static int calls_query(struct walk *w, int by_kernel, struct ref_cursor *waited)
{
    /* the query's columns by field */
    static const int column[CP_FIELDS] = {
        [CP_PID] = 0,  [CP_TID] = 1, [CP_START] = 2,  [CP_END] = 3,
        [CP_NAME] = 4, [CP_ID] = 5,  [CP_RESULT] = 6, [CP_CORRELATION] = 7};
    sqlite3_stmt *st =
        tw_prepare(w, by_kernel ? API_QUERY(KERNEL_NAME_OR("a.name_id")) : API_QUERY("a.name_id"));
    int64_t c[CP_FIELDS];
    while (st && !w->failed && sqlite3_step(st) == SQLITE_ROW) {
        for (int f = 0; f < CP_FIELDS; f++)
            c[f] = sqlite3_column_int64(st, column[f]);
        draw_call(w, c, waited);
    }
    sqlite3_finalize(st);
    return st && !w->failed ? 0 : -1;
}

static int page_call(struct walk *w, const struct asys_page_row *row, void *waited)
{
    draw_call(w, row->v, waited);
    return w->failed ? -1 : 0;
}

static int walk_api(struct walk *w)
{
    /* flows to the call's work, and from the work a synchronizing call waited for */
    int flows = tw_table_wanted(w, "ppu_activities");
    int deps = flows && tw_table_wanted(w, "ppu_deps");
    /* the kernel's name only when asked: a subquery a call otherwise */
    int by_kernel = w->o->api_name_mode && !strcmp(w->o->api_name_mode, "kernel");
    /* the work each call launched: the activities, read now in their id order
     * (tw_activities_launched); and read alongside the calls, in their id
     * order, the work each synchronizing call waited for */
    struct ref_cursor waited = {NULL, 0, 0, {0}};
    int rc = flows ? tw_activities_load(w) : 0;
    /* clang-format off */
    if (rc == 0 && deps)
        rc = tw_cursor_open(w, &waited,
            "SELECT d.wait_api_id, 0, d.id, p.start_ns, p.start_ns\n"
            "FROM ppu_deps AS d JOIN ppu_activities AS p ON p.id = d.depends_on\n"
            "WHERE d.kind = 5 AND d.effective AND " IN_WINDOW("p") "\n"
            "ORDER BY d.wait_api_id, d.id");
    /* clang-format on */
    static const struct tw_pages pages = {"hggc_api_calls", "hggc_api_pages", CP_FIELDS, CP_START,
                                          CP_END};
    if (rc == 0)
        rc = !by_kernel && tw_pages_usable(w, &pages, NULL)
                 ? tw_pages_walk(w, &pages, page_call, &waited)
                 : calls_query(w, by_kernel, &waited);
    tw_cursor_close(&waited);
    return rc == 0 && !w->failed ? 0 : -1;
}

const struct tl_family tl_family_hggc_api = {"hggc_api_calls", 1, walk_api};
