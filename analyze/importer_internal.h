/* State shared by the importer's parts (importer.c: driver, strings,
 * processes and threads; import_hgtx.c: HGTX events). */
#ifndef ASYS_IMPORTER_INTERNAL_H
#define ASYS_IMPORTER_INTERNAL_H

#include <cJSON.h>
#include <sqlite3.h>
#include <stdint.h>

#include "asys_error.h"
#include "clock_map.h"
#include "hashmap.h"
#include "importer.h"
#include "segment_stream.h"

/* A range waiting for its end (push/pop or start/end). */
struct hgtx_open {
    int64_t id;
    uint64_t start_ns;
    uint32_t pid;
    uint32_t tid;
    uint32_t domain; /* global hgtx_domains.id */
    uint32_t text_id;
    int64_t category;      /* -1: none */
    int64_t color;         /* -1: none */
    uint32_t payload_type; /* 0: none */
    uint64_t payload;
    int32_t level;  /* -1: not nested (start/end) */
    int64_t parent; /* -1: none */
};

struct hgtx_end {
    uint64_t end_ns;
    uint32_t tid;
};

/* One process image (a process between exec/fork boundaries): the namespace
 * of string ids, domain ids and range ids. */
struct imp_image {
    uint64_t uid;
    uint64_t parent_uid;
    uint32_t inherited_limit;
    uint32_t pid;
    uint32_t *sids; /* local string id -> global id | SID_PENDING */
    size_t sid_cap;
    struct asys_u64map domains; /* local domain id -> global id | DOMAIN_PENDING */
    struct asys_u64map starts;  /* range id -> index in hgtx open pool */
    struct asys_u64map ends;    /* range id -> index in hgtx end pool */
    /* stacks */
    struct asys_u64map chains;  /* local callchain id -> global id */
    struct asys_u64map frames;  /* return address -> frames.id */
    struct imp_module *modules; /* loaded objects, for address -> module */
    size_t module_count;
    size_t module_cap;
    struct asys_u64map *symbols; /* address -> cJSON frame of symbols.json, or NULL */
};

struct imp_module {
    uint64_t start;
    uint64_t end;
    int64_t id; /* modules.id */
};

struct imp_thread {
    uint32_t pid;
    uint32_t tid;
    uint32_t name_id; /* comm, latest by time */
    uint64_t name_ns;
    uint32_t hgtx_name_id; /* nvtxNameOsThread, latest */
    uint64_t hgtx_name_ns;
    uint64_t start_ns;
    uint64_t end_ns;
    int seen; /* has records of its own (not only a name) */
};

struct imp_process {
    uint32_t pid;
    uint32_t ppid;
    uint32_t exe_id;
    uint32_t cmdline_id;
    uint64_t info_ns; /* time of the PROCESS_INFO that named it */
    int exec_named;   /* named by an exec'd image (not a fork copy) */
    uint64_t start_ns;
    uint64_t end_ns;
};

struct imp_domain {
    uint32_t pid;
    uint32_t name_id;
    uint64_t created_ns;
    uint64_t destroyed_ns;
    uint64_t pending_uid;   /* placeholder: image that used it before it was defined */
    uint32_t pending_local; /* its local id there */
};

struct hgtx_stack {
    uint16_t domain_local;
    struct hgtx_open *items;
    size_t count;
    size_t cap;
};

/* Per segment being imported. */
struct imp_segment {
    const char *member;
    struct imp_image *image;
    uint32_t pid;
    uint32_t tid;
    int clock_kind;
    uint64_t first_ns;
    uint64_t last_ns;
    int any_time;
    struct hgtx_stack *stacks;
    size_t stack_count;
};

struct asys_importer {
    sqlite3 *db;
    asys_warn_fn warn;
    void *warn_ctx;
    struct asys_clock_map clock;
    int has_clock_pairs;

    /* strings */
    struct asys_strmap string_ids;
    uint32_t next_string_id;
    uint64_t pending_strings;
    sqlite3_stmt *insert_string;

    /* images, threads, processes */
    struct asys_u64map images;    /* uid -> struct imp_image * */
    struct asys_u64map threads;   /* pid << 32 | tid -> struct imp_thread * */
    struct asys_u64map processes; /* pid -> struct imp_process * */

    /* records by family */
    uint64_t records_core;
    uint64_t records_hgtx;
    uint64_t records_osrt;
    uint64_t records_stacks;
    uint64_t records_hggc;
    sqlite3_stmt *insert_drop;

    /* hgtx */
    sqlite3_stmt *insert_hgtx;
    int64_t next_hgtx_id;
    struct imp_domain *domains; /* index = global id; 0 = default */
    size_t domain_count;
    size_t domain_cap;
    struct asys_u64map categories; /* domain << 32 | category -> name id */
    struct hgtx_open *open_pool;   /* start/end ranges waiting for their end */
    size_t open_count, open_cap;
    int64_t open_free; /* free list through .id, -1 = empty */
    struct hgtx_end *end_pool;
    size_t end_count, end_cap;
    uint64_t unmatched_pops;
    uint64_t unmatched_ends;
    uint64_t open_ranges;

    /* stacks */
    struct asys_u64map symbol_images; /* uid -> struct asys_u64map * (address -> cJSON) */
    sqlite3_stmt *insert_module;
    sqlite3_stmt *insert_frame;
    sqlite3_stmt *insert_callchain;
    sqlite3_stmt *insert_callchain_frame;
    int64_t next_module_id;
    int64_t next_frame_id;
    int64_t next_callchain_id;

    /* osrt */
    sqlite3_stmt *insert_osrt;
    uint32_t osrt_names[ASYS_OSRT_FUNCTION_COUNT + 1]; /* function id -> strings.id */

    /* hggc (import_hggc.c's own state) */
    struct imp_hggc *hggc;

    struct asys_import_stats *stats;
    struct imp_segment seg;
};

/* importer.c */
uint64_t imp_ns(struct asys_importer *imp, uint64_t ticks);
uint32_t imp_string(struct asys_importer *imp, struct imp_image *img, uint32_t sid);
struct imp_image *imp_image_get(struct asys_importer *imp, uint64_t uid);
struct imp_thread *imp_thread_get(struct asys_importer *imp, uint32_t pid, uint32_t tid);
void imp_warn(struct asys_importer *imp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int imp_sql_error(struct asys_importer *imp, struct asys_err *err);

int imp_intern_text(struct asys_importer *imp, const char *text, size_t len, uint32_t *id,
                    struct asys_err *err);
int imp_prepare(struct asys_importer *imp, const char *sql, sqlite3_stmt **stmt,
                struct asys_err *err);
int imp_step(struct asys_importer *imp, sqlite3_stmt *stmt, struct asys_err *err);
void imp_bind_optional(sqlite3_stmt *st, int col, int64_t value, int present);

/* import_hggc.c */
int imp_hggc_init(struct asys_importer *imp, struct asys_err *err);
int imp_hggc_record(struct asys_importer *imp, const struct asys_record *rec, uint64_t ns,
                    struct asys_err *err);
int imp_hggc_finish(struct asys_importer *imp, struct asys_err *err);
/* After derived.sql: fills ppu_activity_groups from ppu_activities. */
int imp_hggc_activity_groups(struct asys_importer *imp, struct asys_err *err);
void imp_hggc_free(struct asys_importer *imp);

/* import_stacks.c */
int imp_stacks_init(struct asys_importer *imp, const cJSON *symbols, struct asys_err *err);
int imp_stacks_record(struct asys_importer *imp, const struct asys_record *rec,
                      struct asys_err *err);
/* The global id of a call chain of the current segment's image; 0 if unknown. */
int64_t imp_callchain(struct asys_importer *imp, uint32_t local_id);
void imp_stacks_free_image(struct imp_image *img);
void imp_stacks_free(struct asys_importer *imp);

/* import_osrt.c */
int imp_osrt_init(struct asys_importer *imp, struct asys_err *err);
int imp_osrt_record(struct asys_importer *imp, const struct asys_record *rec, uint64_t end_ns,
                    struct asys_err *err);
/* Derived thread_states, after threads are in place. */
int imp_osrt_finish(struct asys_importer *imp, struct asys_err *err);
void imp_osrt_free(struct asys_importer *imp);

/* import_hgtx.c */
int imp_hgtx_init(struct asys_importer *imp, struct asys_err *err);
int imp_hgtx_record(struct asys_importer *imp, const struct asys_record *rec, uint64_t ns,
                    struct asys_err *err);
int imp_hgtx_segment_end(struct asys_importer *imp, struct asys_err *err);
int imp_hgtx_finish(struct asys_importer *imp, struct asys_err *err);
void imp_hgtx_free(struct asys_importer *imp);

#endif
