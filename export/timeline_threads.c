/* The timeline's host side: processes > threads > one row per kind of
 * thread row (the families' struct tl_thread_row).  Processes and threads
 * are tracks of their own kind (TL_PROCESS, TL_THREAD) with their real pid
 * and tid, for the formats that have processes and threads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline_walk.h"

uint32_t tw_process_row(struct walk *w, uint32_t pid)
{
    uint8_t key[5] = {'p'};
    memcpy(key + 1, &pid, 4);
    uint32_t id = tw_row_find(w, key, sizeof key);
    if (id)
        return id;
    char name[512];
    sqlite3_stmt *st = tw_prepare(w, "SELECT s.value, p.ppid, c.value FROM processes AS p\n"
                                     "LEFT JOIN strings AS s ON s.id = p.name_id\n"
                                     "LEFT JOIN strings AS c ON c.id = p.cmdline_id\n"
                                     "WHERE p.pid = ?");
    if (!st)
        return 0;
    sqlite3_bind_int64(st, 1, pid);
    int found = sqlite3_step(st) == SQLITE_ROW;
    const char *exe = found ? (const char *)sqlite3_column_text(st, 0) : NULL;
    char label[480];
    snprintf(label, sizeof label, "%s", exe ? exe : "process");
    snprintf(name, sizeof name, "%s (%u)", label, pid);
    int64_t ppid = found ? sqlite3_column_int64(st, 1) : 0;
    w->process_ppid = ppid > 0 && ppid <= UINT32_MAX ? (uint32_t)ppid : 0;
    w->process_cmdline = found ? (const char *)sqlite3_column_text(st, 2) : NULL;
    /* processes after the devices */
    id =
        tw_row_new_entity(w, key, sizeof key, 0, 0, TL_PROCESS, name, label, 1000000 + pid, pid, 0);
    w->process_ppid = 0;
    w->process_cmdline = NULL;
    sqlite3_finalize(st);
    return id;
}

/* Every traced process, with or without events: a report whose program
 * recorded nothing still shows what ran (and the trace is not empty). */
static int walk_processes(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(w, "SELECT pid FROM processes ORDER BY pid");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        int64_t pid = sqlite3_column_int64(st, 0);
        if (pid > 0 && pid <= UINT32_MAX)
            tw_process_row(w, (uint32_t)pid);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_processes = {"processes", 0, walk_processes};

static uint32_t thread_row(struct walk *w, uint32_t pid, uint32_t tid)
{
    uint8_t key[9] = {'t'};
    memcpy(key + 1, &pid, 4);
    memcpy(key + 5, &tid, 4);
    uint32_t id = tw_row_find(w, key, sizeof key);
    if (id)
        return id;
    uint32_t process = tw_process_row(w, pid);
    if (!process)
        return 0;
    /* a thread that was never named has its process's name, as Linux's comm
     * and Perfetto have it */
    sqlite3_stmt *st = tw_prepare(w, "SELECT COALESCE(\n"
                                     "  (SELECT s.value FROM threads AS t\n"
                                     "   JOIN strings AS s ON s.id = t.name_id\n"
                                     "   WHERE t.pid = ?1 AND t.tid = ?2),\n"
                                     "  (SELECT s.value FROM processes AS p\n"
                                     "   JOIN strings AS s ON s.id = p.name_id WHERE p.pid = ?1))");
    if (!st)
        return 0;
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, tid);
    const char *comm =
        sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    char name[512], label[480];
    snprintf(label, sizeof label, "%s", comm ? comm : "thread");
    snprintf(name, sizeof name, "%s (%u)", label, tid);
    sqlite3_finalize(st);
    struct row *p = tw_row_at(w, process);
    /* the main thread first, then by tid */
    return tw_row_new_entity(w, key, sizeof key, p->lanes[0].uuid, p->sort_index, TL_THREAD, name,
                             label, tid == pid ? 1 : 2 + (tid & 0xffff), pid, tid);
}

/* Rows come in runs of one thread: the last one found is kept at hand. */
uint32_t tw_thread_child_row(struct walk *w, uint32_t pid, uint32_t tid,
                             const struct tl_thread_row *kind, int64_t sub)
{
    uint8_t key[1 + 4 + 4 + 8 + 8] = {'r'};
    uint64_t kind_key = (uintptr_t)kind;
    _Static_assert(sizeof key == sizeof w->last_row_key, "the last key kept is a whole key");
    memcpy(key + 1, &pid, 4);
    memcpy(key + 5, &tid, 4);
    memcpy(key + 9, &kind_key, 8);
    memcpy(key + 17, &sub, 8);
    if (w->last_row && !memcmp(key, w->last_row_key, sizeof key))
        return w->last_row;
    uint32_t id = tw_row_find(w, key, sizeof key);
    if (!id) {
        uint32_t thread = thread_row(w, pid, tid);
        if (!thread)
            return 0;
        char name[512];
        kind->name(w, sub, name, sizeof name);
        struct row *t = tw_row_at(w, thread);
        uint32_t order = kind->order + (sub ? (uint32_t)(sub & 0xff) : 0);
        id = kind->counter ? tw_counter_row_new(w, key, sizeof key, t->lanes[0].uuid, t->sort_index,
                                                name, order, NULL, kind->unit)
                           : tw_row_new(w, key, sizeof key, t->lanes[0].uuid, t->sort_index,
                                        TL_PLAIN, name, order, 0);
    }
    memcpy(w->last_row_key, key, sizeof key);
    w->last_row = id;
    return id;
}

/* A counter row under process `pid`, created on first use. */
uint32_t tw_process_counter(struct walk *w, uint32_t pid, const char *key_kind, int64_t key_id,
                            const char *field, const char *name, uint32_t order, const char *axis,
                            const char *unit)
{
    char key[512];
    int n = snprintf(key, sizeof key, "%s/%u/%lld/%s", key_kind, pid, (long long)key_id,
                     field ? field : "");
    if (n < 0 || (size_t)n >= sizeof key)
        n = (int)sizeof key - 1;
    uint32_t row = tw_row_find(w, key, (size_t)n);
    if (row)
        return row;
    uint32_t process = tw_process_row(w, pid);
    struct row *p = tw_row_at(w, process);
    if (!p)
        return 0;
    return tw_counter_row_new(w, key, (size_t)n, p->lanes[0].uuid, p->sort_index, name, order, axis,
                              unit);
}

int tw_emit_counter(struct walk *w, uint32_t row, int64_t ts, double value)
{
    struct row *r = tw_row_at(w, row);
    if (!r)
        return -1;
    if (ts < w->o->filter_start)
        ts = w->o->filter_start;
    w->stats->counter_values++;
    tw_progress(w);
    if (w->ops->counter(w->sink, r->lanes[0].uuid, ts, value))
        return tw_sink_failed(w);
    return 0;
}
