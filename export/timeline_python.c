/* Python samples on the timeline: a "Python samples" row under each
 * thread, a point per sample named by the running function, its Python
 * stack (function (file:line), innermost first) as an argument. */
#include <stdio.h>

#include "timeline_walk.h"

static void python_row_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "Python samples");
}

/* under the thread, after the CPU backtrace samples (7) */
static const struct tl_thread_row python_row = {TL_RANK_PYTHON_SAMPLES, python_row_name, 0, NULL};

static int walk_python_samples(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT s.pid, s.tid, s.ns, n.value,\n"
           "       (SELECT group_concat(frame, ' <- ') FROM (\n"
           "          SELECT fs.value || ' (' || COALESCE(fl.value, '?') || ':' || f.line || ')'\n"
           "                 AS frame\n"
           "          FROM callchain_frames AS cf JOIN frames AS f ON f.id = cf.frame_id\n"
           "          LEFT JOIN strings AS fs ON fs.id = f.function_id\n"
           "          LEFT JOIN strings AS fl ON fl.id = f.file_id\n"
           "          WHERE cf.callchain_id = s.callchain_id ORDER BY cf.level))\n"
           "FROM python_samples AS s\n"
           "LEFT JOIN python_code AS c ON c.id = s.code_id\n"
           "LEFT JOIN strings AS n ON n.id = c.name_id\n"
           "WHERE s.tid <> 0 AND (:all OR (s.ns >= :lo AND s.ns <= :hi))\n"
           "ORDER BY s.pid, s.tid, s.ns");
    if (!st)
        return -1;
    struct tl_args args;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                           (uint32_t)sqlite3_column_int64(st, 1), &python_row, 0);
        const char *name = (const char *)sqlite3_column_text(st, 3);
        args.count = 0;
        if (sqlite3_column_type(st, 4) != SQLITE_NULL)
            tw_arg_string(&args, "stack", (const char *)sqlite3_column_text(st, 4));
        if (!row || tw_emit_instant(w, row, sqlite3_column_int64(st, 2),
                                    tw_synthetic_name(w, name ? name : "?"),
                                    tw_category(w, "python"), &args) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_python_samples = {"python_samples", 1, walk_python_samples};
