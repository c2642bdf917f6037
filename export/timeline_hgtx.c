/* HGTX ranges and marks on their thread, one row per domain ("HGTX",
 * "HGTX: domain"), with their attributes as arguments: category (its name
 * when one was given), color (#AARRGGBB), payload (as recorded) and the
 * decoded fields of extended payloads ("payload.FIELD", as many as fit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static const struct tl_thread_row hgtx_row = {TL_RANK_HGTX, hgtx_row_name, 0, NULL};

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

/* Events with extended payloads (few: a set read once). */
static int load_payload_events(struct walk *w, struct asys_u64map *events)
{
    sqlite3_stmt *st =
        tw_prepare(w, "SELECT DISTINCT event_id FROM hgtx_payloads WHERE event_id IS NOT NULL");
    while (st && !w->failed && sqlite3_step(st) == SQLITE_ROW)
        if (asys_u64map_put(events, (uint64_t)sqlite3_column_int64(st, 0), 1) != 0)
            tw_fail(w, "out of memory");
    sqlite3_finalize(st);
    return st && !w->failed ? 0 : -1;
}

/* The decoded payload fields of event `id` as arguments, in the slots left;
 * `text` holds their names and texts during the emit. */
#define FIELD_TEXT 256
static void payload_args(sqlite3_stmt *fields, int64_t id, struct tl_args *a,
                         char text[][2][FIELD_TEXT])
{
    sqlite3_reset(fields);
    sqlite3_bind_int64(fields, 1, id);
    for (size_t n = 0; a->count < TL_MAX_ARGS && sqlite3_step(fields) == SQLITE_ROW; n++) {
        char *name = text[a->count][0], *value = text[a->count][1];
        const char *at = (const char *)sqlite3_column_text(fields, 0);
        snprintf(name, FIELD_TEXT, "payload%s.%s", at && !strcmp(at, "end") ? "_end" : "",
                 (const char *)sqlite3_column_text(fields, 1));
        const char *type = (const char *)sqlite3_column_text(fields, 2);
        switch (sqlite3_column_type(fields, 3)) {
        case SQLITE_INTEGER:
            tw_arg_int(a, name, sqlite3_column_int64(fields, 3));
            break;
        case SQLITE_FLOAT:
            tw_arg_double(a, name, sqlite3_column_double(fields, 3));
            break;
        case SQLITE_TEXT: /* a string, or a uint64 above INT64_MAX as its digits */
            if (type && !strncmp(type, "uint", 4))
                tw_arg_uint(a, name,
                            strtoull((const char *)sqlite3_column_text(fields, 3), NULL, 10));
            else {
                snprintf(value, FIELD_TEXT, "%s", (const char *)sqlite3_column_text(fields, 3));
                tw_arg_string(a, name, value);
            }
            break;
        default:
            break;
        }
    }
}

/* HGTX: push/pop and start/end ranges and marks on the (starting) thread, a
 * row per domain.  Row id order is start order within a thread. */
static int walk_hgtx(struct walk *w)
{
    struct asys_u64map categories, with_payloads;
    asys_u64map_init(&categories);
    asys_u64map_init(&with_payloads);
    /* clang-format off */
    sqlite3_stmt *st = load_categories(w, &categories) != 0 ||
                       load_payload_events(w, &with_payloads) != 0 ? NULL : tw_prepare(w,
        "SELECT e.pid, e.tid, e.kind, e.domain_id, e.start_ns, e.end_ns, e.text_id,\n"
        /* 7: NULL when the event has no attributes; 8: its id */
        "       COALESCE(e.payload_type, e.category, e.color), e.id\n"
        "FROM hgtx_events AS e\n"
        "WHERE e.end_ns IS NOT NULL AND " IN_WINDOW("e") "\n"
        "ORDER BY e.rowid");
    sqlite3_stmt *attrs = st ? tw_prepare(w,
        "SELECT category, color, payload_type, payload FROM hgtx_events WHERE id = ?") : NULL;
    sqlite3_stmt *fields = attrs ? tw_prepare(w,
        "SELECT p.at, f.field, f.type, f.value FROM hgtx_payloads AS p\n"
        "JOIN hgtx_payload_fields AS f ON f.payload_id = p.id\n"
        "WHERE p.event_id = ? ORDER BY p.id, f.rowid") : NULL;
    /* clang-format on */
    if (!st || !attrs || !fields) {
        sqlite3_finalize(st);
        sqlite3_finalize(attrs);
        asys_u64map_free(&categories);
        asys_u64map_free(&with_payloads);
        return -1;
    }
    struct tl_args args;
    char color[16];
    char field_text[TL_MAX_ARGS][2][FIELD_TEXT];
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                           (uint32_t)sqlite3_column_int64(st, 1), &hgtx_row,
                                           sqlite3_column_int64(st, 3));
        struct tl_name name = tw_string_name(w, sqlite3_column_int64(st, 6));
        args.count = 0;
        if (sqlite3_column_type(st, 7) != SQLITE_NULL)
            event_args(w, attrs, sqlite3_column_int64(st, 8), sqlite3_column_int64(st, 3),
                       &categories, &args, color, sizeof color);
        if (with_payloads.count &&
            asys_u64map_get(&with_payloads, (uint64_t)sqlite3_column_int64(st, 8)))
            payload_args(fields, sqlite3_column_int64(st, 8), &args, field_text);
        if (sqlite3_column_int(st, 2) == 3)
            tw_emit_instant(w, row, sqlite3_column_int64(st, 4), name, tw_category(w, "hgtx"),
                            &args);
        else
            tw_emit_slice(w, row, sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5), name,
                          tw_category(w, "hgtx"), NULL, &args);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(attrs);
    sqlite3_finalize(fields);
    asys_u64map_free(&categories);
    asys_u64map_free(&with_payloads);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_hgtx = {"hgtx_events", 1, walk_hgtx};
