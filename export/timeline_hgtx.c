/* HGTX ranges and marks on their thread, one row per domain ("HGTX",
 * "HGTX: domain"), with their attributes as arguments: category (its name
 * when one was given), color (#AARRGGBB) and payload (as recorded). */
#include <stdio.h>
#include <stdlib.h>

#include "timeline_walk.h"

static void hgtx_row_name(struct walk *w, int64_t domain, char *out, size_t size)
{
    snprintf(out, size, "HGTX");
    sqlite3_stmt *st = tw_prepare(w, "SELECT s.value FROM hgtx_domains AS d\n"
                                     "JOIN strings AS s ON s.id = d.name_id WHERE d.id = ?");
    if (!st)
        return;
    sqlite3_bind_int64(st, 1, domain);
    const char *text =
        sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (text && *text)
        snprintf(out, size, "HGTX: %s", text);
    sqlite3_finalize(st);
}

/* after the API row, by domain */
static const struct tl_thread_row hgtx_row = {10, hgtx_row_name};

/* Category names by (domain, number): the string id (a small table). */
static int load_categories(struct walk *w, struct asys_u64map *names)
{
    sqlite3_stmt *st = tw_prepare(w, "SELECT domain_id, category, name_id FROM hgtx_categories");
    while (st && !w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint64_t key =
            (uint64_t)sqlite3_column_int64(st, 0) << 32 | (uint32_t)sqlite3_column_int64(st, 1);
        if (asys_u64map_put(names, key, (uint64_t)sqlite3_column_int64(st, 2)) != 0)
            tw_fail(w, "out of memory");
    }
    sqlite3_finalize(st);
    return st && !w->failed ? 0 : -1;
}

/* The attributes of event `id` (category, color, payload) as arguments: read
 * by id for the events that have some (most have none, and reading four more
 * columns of every row in the walk's query costs a sixth of an HGTX walk). */
static void event_args(struct walk *w, sqlite3_stmt *attrs, int64_t id, int64_t domain,
                       const struct asys_u64map *categories, struct tl_args *a, char *color,
                       size_t color_size)
{
    a->count = 0;
    sqlite3_reset(attrs);
    sqlite3_bind_int64(attrs, 1, id);
    if (sqlite3_step(attrs) != SQLITE_ROW)
        return;
    if (sqlite3_column_type(attrs, 0) != SQLITE_NULL) {
        int64_t number = sqlite3_column_int64(attrs, 0);
        const uint64_t *name =
            asys_u64map_get(categories, (uint64_t)domain << 32 | (uint32_t)number);
        if (name)
            tw_arg_string(a, "category", tw_string_name(w, (int64_t)*name).text);
        else
            tw_arg_int(a, "category", number);
    }
    if (sqlite3_column_type(attrs, 1) != SQLITE_NULL) {
        snprintf(color, color_size, "#%08llX",
                 (unsigned long long)(uint32_t)sqlite3_column_int64(attrs, 1));
        tw_arg_string(a, "color", color);
    }
    int type = sqlite3_column_type(attrs, 3);
    if (type == SQLITE_NULL)
        return;
    switch (sqlite3_column_int(attrs, 2)) {
    case 1: /* uint64: above INT64_MAX, TEXT of its digits */
    case 4: /* uint32 */
        tw_arg_uint(a, "payload",
                    type == SQLITE_TEXT
                        ? strtoull((const char *)sqlite3_column_text(attrs, 3), NULL, 10)
                        : (uint64_t)sqlite3_column_int64(attrs, 3));
        break;
    case 3: /* double */
    case 6: /* float */
        tw_arg_double(a, "payload", sqlite3_column_double(attrs, 3));
        break;
    default: /* int64, int32 */
        tw_arg_int(a, "payload", sqlite3_column_int64(attrs, 3));
    }
}

/* HGTX: push/pop and start/end ranges and marks on the (starting) thread, a
 * row per domain.  Row id order is start order within a thread. */
static int walk_hgtx(struct walk *w)
{
    struct asys_u64map categories;
    asys_u64map_init(&categories);
    /* clang-format off */
    sqlite3_stmt *st = load_categories(w, &categories) != 0 ? NULL : tw_prepare(w,
        "SELECT e.pid, e.tid, e.kind, e.domain_id, e.start_ns, e.end_ns, e.text_id,\n"
        /* 7: NULL when the event has no attributes; 8: its id */
        "       COALESCE(e.payload_type, e.category, e.color), e.id\n"
        "FROM hgtx_events AS e\n"
        "WHERE e.end_ns IS NOT NULL AND " IN_WINDOW("e") "\n"
        "ORDER BY e.rowid");
    sqlite3_stmt *attrs = st ? tw_prepare(w,
        "SELECT category, color, payload_type, payload FROM hgtx_events WHERE id = ?") : NULL;
    /* clang-format on */
    if (!st || !attrs) {
        sqlite3_finalize(st);
        asys_u64map_free(&categories);
        return -1;
    }
    struct tl_args args;
    char color[16];
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                           (uint32_t)sqlite3_column_int64(st, 1), &hgtx_row,
                                           sqlite3_column_int64(st, 3));
        struct tl_name name = tw_string_name(w, sqlite3_column_int64(st, 6));
        args.count = 0;
        if (sqlite3_column_type(st, 7) != SQLITE_NULL)
            event_args(w, attrs, sqlite3_column_int64(st, 8), sqlite3_column_int64(st, 3),
                       &categories, &args, color, sizeof color);
        if (sqlite3_column_int(st, 2) == 3)
            tw_emit_instant(w, row, sqlite3_column_int64(st, 4), name, tw_category(w, "hgtx"),
                            &args);
        else
            tw_emit_slice(w, row, sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5), name,
                          tw_category(w, "hgtx"), NULL, &args);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(attrs);
    asys_u64map_free(&categories);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_hgtx = {"hgtx_events", 1, walk_hgtx};
