/* call_tree: the call-tree builder as an SQL table-valued function, so the
 * Function View reports are queries like any other (queries/stack_*.sql):
 *
 *   SELECT * FROM call_tree('cpu', 'topdown', :filter_start, :filter_end, :pid, :tid)
 *
 * source: cpu, osrt, hggc (stack_samples.h); view: topdown, bottomup, flat.
 * Rows come depth first, siblings by weight; flat rows by self weight. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "sql_functions.h"

enum column {
    COL_ID,
    COL_PARENT,
    COL_LEVEL,
    COL_FUNCTION,
    COL_MODULE,
    COL_FILE,
    COL_LINE,
    COL_SELF,
    COL_TOTAL,
    COL_SELF_PCT,
    COL_TOTAL_PCT,
    COL_UNIT,
    /* hidden: the arguments */
    COL_SOURCE,
    COL_VIEW,
    COL_START,
    COL_END,
    COL_PID,
    COL_TID,
    COL_COUNT
};
#define FIRST_ARGUMENT COL_SOURCE
#define ARGUMENT_COUNT (COL_COUNT - FIRST_ARGUMENT)

struct tree_vtab {
    sqlite3_vtab base;
    sqlite3 *db;
};

struct tree_row {
    int64_t parent; /* row id of the parent, 0: none */
    uint32_t level;
    uint32_t function;
    uint64_t self, total;
};

struct tree_cursor {
    sqlite3_vtab_cursor base;
    struct stack_set *set;
    struct tree_row *rows;
    size_t count, cap, at;
    uint32_t *node_rows; /* tree node -> row id while walking */
    const struct calltree *tree;
};

static int tree_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **error)
{
    (void)aux;
    (void)argc;
    (void)argv;
    (void)error;
    int rc = sqlite3_declare_vtab(
        db, "CREATE TABLE x(id INTEGER, parent_id INTEGER, level INTEGER, function TEXT, "
            "module TEXT, file TEXT, line INTEGER, self INTEGER, total INTEGER, self_pct REAL, "
            "total_pct REAL, unit TEXT, source HIDDEN, view HIDDEN, filter_start HIDDEN, "
            "filter_end HIDDEN, pid HIDDEN, tid HIDDEN)");
    if (rc != SQLITE_OK)
        return rc;
    struct tree_vtab *v = sqlite3_malloc(sizeof *v);
    if (!v)
        return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    v->db = db;
    sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
    *out = &v->base;
    return SQLITE_OK;
}

static int tree_disconnect(sqlite3_vtab *v)
{
    sqlite3_free(v);
    return SQLITE_OK;
}

/* Arguments are equality constraints on the hidden columns; source and view
 * are required, the rest default to "everything". */
static int tree_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
    (void)v;
    int slot[ARGUMENT_COUNT];
    for (int i = 0; i < ARGUMENT_COUNT; i++)
        slot[i] = -1;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];
        if (c->iColumn < FIRST_ARGUMENT || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
            continue;
        if (!c->usable)
            return SQLITE_CONSTRAINT;
        slot[c->iColumn - FIRST_ARGUMENT] = i;
    }
    if (slot[0] < 0 || slot[1] < 0)
        return SQLITE_CONSTRAINT;
    int next = 1, mask = 0;
    for (int a = 0; a < ARGUMENT_COUNT; a++)
        if (slot[a] >= 0) {
            info->aConstraintUsage[slot[a]].argvIndex = next++;
            info->aConstraintUsage[slot[a]].omit = 1;
            mask |= 1 << a;
        }
    info->idxNum = mask;
    info->estimatedCost = 1000;
    return SQLITE_OK;
}

static int tree_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
    (void)v;
    struct tree_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    *out = &c->base;
    return SQLITE_OK;
}

static void cursor_reset(struct tree_cursor *c)
{
    stack_set_free(c->set);
    free(c->rows);
    free(c->node_rows);
    c->set = NULL;
    c->rows = NULL;
    c->node_rows = NULL;
    c->count = c->cap = c->at = 0;
}

static int tree_close(sqlite3_vtab_cursor *cur)
{
    struct tree_cursor *c = (struct tree_cursor *)cur;
    cursor_reset(c);
    free(c);
    return SQLITE_OK;
}

static int push_row(struct tree_cursor *c, struct tree_row row)
{
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        struct tree_row *bigger = realloc(c->rows, cap * sizeof *bigger);
        if (!bigger)
            return -1;
        c->rows = bigger;
        c->cap = cap;
    }
    c->rows[c->count++] = row;
    return 0;
}

static int visit_node(void *ctx, uint32_t node)
{
    struct tree_cursor *c = ctx;
    const struct calltree_node *n = &c->tree->nodes[node];
    int64_t parent = n->parent == CALLTREE_ROOT ? 0 : c->node_rows[n->parent];
    int bottom_up = c->tree->view == CALLTREE_BOTTOM_UP;
    /* bottom-up: all of a row's weight is self weight of its first function */
    struct tree_row row = {parent, n->depth - 1, n->function,
                           bottom_up ? (n->depth == 1 ? n->total : 0) : n->self, n->total};
    if (push_row(c, row) != 0)
        return -1;
    c->node_rows[node] = (uint32_t)c->count;
    return 0;
}

static int fill_tree(struct tree_cursor *c, enum calltree_view view, struct asys_err *err)
{
    struct calltree *t = NULL;
    if (calltree_build(c->set, view, &t, err) != 0)
        return -1;
    c->tree = t;
    c->node_rows = calloc(t->count, sizeof *c->node_rows);
    int rc = c->node_rows && calltree_walk(t, visit_node, c) == 0
                 ? 0
                 : asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    c->tree = NULL;
    calltree_free(t);
    return rc;
}

static int fill_flat(struct tree_cursor *c, struct asys_err *err)
{
    struct calltree_flat_row *flat = NULL;
    size_t n = 0;
    if (calltree_flat(c->set, &flat, &n, err) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (push_row(c, (struct tree_row){0, 0, flat[i].function, flat[i].self, flat[i].total}))
            rc = asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    free(flat);
    return rc;
}

static long long int_argument(sqlite3_value *v, long long fallback)
{
    return v && sqlite3_value_type(v) != SQLITE_NULL ? sqlite3_value_int64(v) : fallback;
}

static int tree_filter(sqlite3_vtab_cursor *cur, int mask, const char *unused, int argc,
                       sqlite3_value **argv)
{
    (void)unused;
    struct tree_cursor *c = (struct tree_cursor *)cur;
    sqlite3_value *arg[ARGUMENT_COUNT] = {0};
    struct asys_err err = {0};
    cursor_reset(c);
    for (int a = 0, next = 0; a < ARGUMENT_COUNT && next < argc; a++)
        if (mask & (1 << a))
            arg[a] = argv[next++];
    const char *source_name = (const char *)sqlite3_value_text(arg[0]);
    const char *view = (const char *)sqlite3_value_text(arg[1]);
    const struct stack_source *source = stack_source_find(source_name);
    int is_flat = view && !strcmp(view, "flat");
    int is_top = view && !strcmp(view, "topdown");
    if (!source) {
        char names[64];
        stack_source_names(names, sizeof names);
        asys_fail_kind(&err, ASYS_ERR_USAGE, "unknown stack source '%s' (%s)",
                       source_name ? source_name : "", names);
    } else if (!is_flat && !is_top && !(view && !strcmp(view, "bottomup"))) {
        asys_fail_kind(&err, ASYS_ERR_USAGE,
                       "unknown call tree view '%s' (topdown, bottomup, flat)", view ? view : "");
    } else {
        struct stack_filter f = {int_argument(arg[2], LLONG_MIN), int_argument(arg[3], LLONG_MAX),
                                 int_argument(arg[4], -1), int_argument(arg[5], -1)};
        if (stack_set_load(((struct tree_vtab *)cur->pVtab)->db, source, &f, &c->set, &err) == 0) {
            if (is_flat)
                fill_flat(c, &err);
            else
                fill_tree(c, is_top ? CALLTREE_TOP_DOWN : CALLTREE_BOTTOM_UP, &err);
        }
    }
    if (err.kind == ASYS_ERR_NONE)
        return SQLITE_OK;
    sqlite3_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = sqlite3_mprintf("%s", err.text);
    return SQLITE_ERROR;
}

static int tree_next(sqlite3_vtab_cursor *cur)
{
    ((struct tree_cursor *)cur)->at++;
    return SQLITE_OK;
}

static int tree_eof(sqlite3_vtab_cursor *cur)
{
    struct tree_cursor *c = (struct tree_cursor *)cur;
    return c->at >= c->count;
}

static void text_or_null(sqlite3_context *ctx, const char *s)
{
    if (s)
        sqlite3_result_text(ctx, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_result_null(ctx);
}

static int tree_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int column)
{
    struct tree_cursor *c = (struct tree_cursor *)cur;
    const struct tree_row *r = &c->rows[c->at];
    const struct stack_function *f = &c->set->functions[r->function];
    double whole = (double)c->set->total_weight;
    switch (column) {
    case COL_ID:
        sqlite3_result_int64(ctx, (sqlite3_int64)c->at + 1);
        break;
    case COL_PARENT:
        if (r->parent)
            sqlite3_result_int64(ctx, r->parent);
        else
            sqlite3_result_null(ctx);
        break;
    case COL_LEVEL:
        sqlite3_result_int64(ctx, r->level);
        break;
    case COL_FUNCTION:
        text_or_null(ctx, f->name);
        break;
    case COL_MODULE:
        text_or_null(ctx, f->module);
        break;
    case COL_FILE:
        text_or_null(ctx, f->file);
        break;
    case COL_LINE:
        if (f->line > 0)
            sqlite3_result_int64(ctx, f->line);
        else
            sqlite3_result_null(ctx);
        break;
    case COL_SELF:
        sqlite3_result_int64(ctx, (sqlite3_int64)r->self);
        break;
    case COL_TOTAL:
        sqlite3_result_int64(ctx, (sqlite3_int64)r->total);
        break;
    case COL_SELF_PCT:
        sqlite3_result_double(ctx, 100.0 * (double)r->self / whole);
        break;
    case COL_TOTAL_PCT:
        sqlite3_result_double(ctx, 100.0 * (double)r->total / whole);
        break;
    case COL_UNIT:
        sqlite3_result_text(ctx, c->set->source->unit, -1, SQLITE_STATIC);
        break;
    default: /* the hidden arguments read back as NULL */
        sqlite3_result_null(ctx);
        break;
    }
    return SQLITE_OK;
}

static int tree_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    *rowid = (sqlite3_int64)((struct tree_cursor *)cur)->at + 1;
    return SQLITE_OK;
}

static const sqlite3_module call_tree_module = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous only: no CREATE VIRTUAL TABLE */
    .xConnect = tree_connect,
    .xBestIndex = tree_best_index,
    .xDisconnect = tree_disconnect,
    .xDestroy = tree_disconnect,
    .xOpen = tree_open,
    .xClose = tree_close,
    .xFilter = tree_filter,
    .xNext = tree_next,
    .xEof = tree_eof,
    .xColumn = tree_column,
    .xRowid = tree_rowid,
};

int asys_sql_register_call_tree(sqlite3 *db)
{
    if (sqlite3_create_module(db, "call_tree", &call_tree_module, NULL) != SQLITE_OK)
        return -1;
    /* Connect the table now: a report's query is prepared under a read-only
     * authorizer, which refuses the table declaration a first use makes. */
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT id FROM call_tree('cpu', 'flat')", -1, &st, NULL);
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0 : -1;
}
