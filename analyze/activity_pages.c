/* ppu_activity_pages, hggc_api_pages: rows packed for the timeline export
 * (activity_pages.h has the format). */
#include "activity_pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the most bytes one activity takes: its nulls, then a 10-byte varint a field */
#define ROW_MAX (10 * (AP_FIELDS + 1))

/* ---- writing ---------------------------------------------------------------------- */

int asys_page_writer_open(struct asys_page_writer *pw, sqlite3 *db, const char *table, int fields,
                          struct asys_err *err)
{
    char sql[128];
    memset(pw, 0, sizeof *pw);
    pw->table = table;
    pw->fields = fields < 0 ? 0 : fields > AP_FIELDS ? AP_FIELDS : fields;
    snprintf(sql, sizeof sql, "INSERT INTO %s (first_id, rows, data) VALUES (?,?,?)", table);
    if (sqlite3_prepare_v2(db, sql, -1, &pw->insert, NULL) != SQLITE_OK)
        return asys_fail(err, "%s: %s", table, sqlite3_errmsg(db));
    return 0;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Writes the page and starts the next. */
static int page_flush(struct asys_page_writer *pw, struct asys_err *err)
{
    int rc = 0;
    if (!pw->rows)
        return 0;
    sqlite3_bind_int64(pw->insert, 1, pw->first_id);
    sqlite3_bind_int64(pw->insert, 2, pw->rows);
    sqlite3_bind_blob(pw->insert, 3, pw->data, (int)pw->len, SQLITE_STATIC);
    if (sqlite3_step(pw->insert) != SQLITE_DONE)
        rc = asys_fail(err, "%s: %s", pw->table, sqlite3_errmsg(sqlite3_db_handle(pw->insert)));
    sqlite3_reset(pw->insert);
    pw->rows = 0;
    pw->len = 0;
    memset(pw->prev, 0, sizeof pw->prev);
    return rc;
}

int asys_page_writer_add(struct asys_page_writer *pw, const struct asys_page_row *row,
                         struct asys_err *err)
{
    if (pw->rows && row->v[AP_ID] <= pw->last_id)
        return asys_fail(err, "%s: id %lld after %lld", pw->table, (long long)row->v[AP_ID],
                         (long long)pw->last_id);
    if (pw->cap - pw->len < ROW_MAX) {
        size_t cap = pw->cap ? pw->cap * 2 : (size_t)ROW_MAX * 1024;
        uint8_t *bigger = realloc(pw->data, cap);
        if (!bigger)
            return asys_fail(err, "out of memory");
        pw->data = bigger;
        pw->cap = cap;
    }
    if (!pw->rows)
        pw->first_id = row->v[AP_ID];
    uint8_t *p = put_varint(pw->data + pw->len, row->nulls);
    for (int f = 0; f < pw->fields; f++) {
        if (row->nulls & (1u << f))
            continue;
        uint64_t d = (uint64_t)row->v[f] - (uint64_t)pw->prev[f];
        p = put_varint(p, (d << 1) ^ (0 - (d >> 63))); /* zigzag */
        pw->prev[f] = row->v[f];
    }
    pw->len = (size_t)(p - pw->data);
    pw->last_id = row->v[AP_ID];
    if (++pw->rows == ASYS_PAGE_ROWS)
        return page_flush(pw, err);
    return 0;
}

int asys_page_writer_close(struct asys_page_writer *pw, struct asys_err *err)
{
    int rc = page_flush(pw, err);
    asys_page_writer_free(pw);
    return rc;
}

void asys_page_writer_free(struct asys_page_writer *pw)
{
    sqlite3_finalize(pw->insert);
    free(pw->data);
    memset(pw, 0, sizeof *pw);
}

/* ---- reading ---------------------------------------------------------------------- */

int asys_page_begin(struct asys_page_reader *r, const void *data, size_t len, int64_t rows,
                    int fields)
{
    memset(r, 0, sizeof *r);
    if (fields < 1 || fields > AP_FIELDS)
        return -1;
    r->fields = fields;
    /* an activity takes a byte at least */
    if (rows < 0 || (uint64_t)rows > len || rows > ASYS_PAGE_ROWS || (len && !data))
        return -1;
    r->at = data;
    r->end = r->at + len;
    r->left = (uint32_t)rows;
    return 0;
}

/* A varint within the page: 0, or -1 when it runs past the end or is too long. */
static int get_varint(struct asys_page_reader *r, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64 && r->at < r->end; shift += 7) {
        uint8_t b = *r->at++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

int asys_page_next(struct asys_page_reader *r, struct asys_page_row *row)
{
    if (!r->left)
        return r->at == r->end ? 0 : -1;
    uint64_t nulls;
    if (get_varint(r, &nulls) != 0 || nulls >> r->fields)
        return -1;
    row->nulls = (uint32_t)nulls;
    for (int f = 0; f < r->fields; f++) {
        uint64_t z;
        if (nulls & (1u << f)) {
            row->v[f] = 0;
            continue;
        }
        if (get_varint(r, &z) != 0)
            return -1;
        uint64_t d = (z >> 1) ^ (0 - (z & 1));
        r->prev[f] = (int64_t)((uint64_t)r->prev[f] + d);
        row->v[f] = r->prev[f];
    }
    r->left--;
    return 1;
}
