/* ppu_activity_pages and hggc_api_pages: the columns of ppu_activities and
 * hggc_api_calls the timeline export reads, packed in id order at import (a
 * page of up to ASYS_PAGE_ROWS rows a row), so that the export decodes them
 * without a SQLite step and a column read per field (half a GPU export's
 * reading).
 *
 * A page's data, per activity: a varint whose bit i says field i is NULL,
 * then each other field as the zigzag varint of its difference from the
 * same field's last value in the page (0 at its start).  The pages come
 * from a file: the reader bounds every varint and the rows a page claims. */
#ifndef ASYS_ACTIVITY_PAGES_H
#define ASYS_ACTIVITY_PAGES_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "asys_error.h"

/* the fields, in the order ppu_activity_pages' writer reads them */
enum asys_page_field {
    AP_ID,
    AP_KIND,
    AP_PHYSICAL,
    AP_PID,
    AP_CONTEXT,
    AP_STREAM,
    AP_START,
    AP_END,
    AP_NAME, /* name_id */
    AP_COPY_KIND,
    AP_BASE_NAME, /* base_name_id */
    AP_DOMAIN, /* the HGTX range's domain_id (the range: hgtx_range_id) */
    AP_TEXT, /* and its text_id */
    AP_GRAPH, /* graph_id */
    AP_EXEC, /* graph_exec_id */
    AP_API, /* api_id */
    AP_SOURCE, /* source_id */
    AP_API_START, /* api_start_ns */
    AP_FIELDS
};

/* hggc_api_pages' fields, in the order the importer writes them */
enum asys_call_field {
    CP_ID,
    CP_PID,
    CP_TID,
    CP_START,
    CP_END,
    CP_NAME, /* name_id */
    CP_RESULT,
    CP_CORRELATION, /* correlation_id */
    CP_FIELDS
};

#define ASYS_PAGE_ROWS 4096

/* One row (an activity, a call: its first `fields` values); a NULL field
 * is 0 (as sqlite3_column_int64 reads it) with its bit in nulls. */
struct asys_page_row {
    int64_t v[AP_FIELDS];
    uint32_t nulls;
};

/* ---- writing (the importer) ---- */
struct asys_page_writer {
    sqlite3_stmt *insert; /* INSERT INTO the table */
    const char *table; /* its name (a literal) */
    int fields;
    uint8_t *data;
    size_t len, cap;
    uint32_t rows;
    int64_t first_id, last_id;
    int64_t prev[AP_FIELDS];
};

/* Pages of rows of `fields` fields into `table` (first_id, rows, data; a
 * literal: kept for messages). */
int asys_page_writer_open(struct asys_page_writer *pw, sqlite3 *db, const char *table, int fields,
                          struct asys_err *err);
/* Adds a row (ids, field 0, rising); writes the page once full. */
int asys_page_writer_add(struct asys_page_writer *pw, const struct asys_page_row *row,
                         struct asys_err *err);
/* Writes the last page, and frees. */
int asys_page_writer_close(struct asys_page_writer *pw, struct asys_err *err);
/* Frees without writing (after a failure). */
void asys_page_writer_free(struct asys_page_writer *pw);

/* ---- reading (the export) ---- */
struct asys_page_reader {
    const uint8_t *at, *end;
    int fields;
    uint32_t left; /* rows still to read */
    int64_t prev[AP_FIELDS];
};

/* Starts on a page of `rows` rows of `fields` fields in `data` (-1: more
 * rows than its bytes could hold). */
int asys_page_begin(struct asys_page_reader *r, const void *data, size_t len, int64_t rows,
                    int fields);
/* The next row: 1, 0 at the page's end (all its bytes read), -1 when the
 * page is corrupt. */
int asys_page_next(struct asys_page_reader *r, struct asys_page_row *row);

#endif
