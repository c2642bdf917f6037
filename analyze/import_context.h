/* What every importer family shares (import_context.c): the database and its
 * statements, strings, process images, threads, processes, the clock and
 * the segment being read.  A family (import_family.h) keeps its own state
 * opaque and reaches the rest only through these functions.
 *
 * One pass over the archive: a string may be referenced before the record
 * that defines it (another thread's segment comes later), so references get
 * placeholder ids that the definition fills in. */
#ifndef ASYS_IMPORT_CONTEXT_H
#define ASYS_IMPORT_CONTEXT_H

#include <cJSON.h>
#include <sqlite3.h>
#include <stdint.h>

#include "asys_error.h"
#include "clock_map.h"
#include "hashmap.h"
#include "importer.h"
#include "segment_stream.h"

/* Per-image state slots a family may ask for (imp_image_slot_new). */
#define IMP_IMAGE_SLOTS 8

/* One process image (a process between exec/fork boundaries): the namespace
 * of string ids and of every id a family keeps per image. */
struct imp_image {
    uint64_t uid;
    uint64_t parent_uid;
    uint32_t inherited_limit;
    uint32_t pid;
    uint32_t *sids; /* local string id -> global id | SID_PENDING, for the dense ids */
    size_t sid_cap;
    struct asys_u64map sparse_sids; /* the same for ids a dense array would not bound */
    uint32_t defined_strings; /* STRING_DEFs read for this image */
    struct asys_u64map chains; /* local call chain id -> callchains.id (every family's stacks) */
    void *slot[IMP_IMAGE_SLOTS]; /* the families' own per-image state */
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
    int exec_named; /* named by an exec'd image (not a fork copy) */
    uint64_t start_ns;
    uint64_t end_ns;
};

/* The segment being imported. */
struct imp_segment {
    const char *member;
    struct imp_image *image; /* NULL: not a thread's segment (the launcher's) */
    uint32_t pid;
    uint32_t tid;
    uint32_t thread_index; /* the segment header's: 1-based in its process image */
    int clock_kind;
    uint64_t first_ns;
    uint64_t last_ns;
    int any_time;
};

/* Warnings kept in import_warnings (more are counted, not kept). */
#define IMP_MAX_WARNINGS 1000

struct asys_importer {
    sqlite3 *db;
    asys_warn_fn warn;
    void *warn_ctx;
    sqlite3_stmt *insert_warning;
    uint64_t warnings;
    const cJSON *manifest; /* borrowed from the reader */
    const cJSON *symbols; /* symbols.json, or NULL */
    struct asys_clock_map clock;
    int has_clock_pairs;

    /* strings */
    struct asys_strmap string_ids;
    uint32_t next_string_id;
    uint64_t pending_strings;
    uint64_t cut_strings; /* longer than ASYS_DB_TEXT_MAX: cut */
    sqlite3_stmt *insert_string;

    /* images, threads, processes */
    struct asys_u64map images; /* uid -> struct imp_image * */
    struct asys_u64map threads; /* pid << 32 | tid -> struct imp_thread * */
    struct asys_u64map processes; /* pid -> struct imp_process * */
    void (*slot_free[IMP_IMAGE_SLOTS])(void *);
    int slot_count;

    struct asys_import_stats *stats;
    struct imp_segment seg;
};

/* ---- the database ---- */
int imp_sql_error(struct asys_importer *imp, struct asys_err *err);
int imp_exec(struct asys_importer *imp, const char *sql, struct asys_err *err);
int imp_prepare(struct asys_importer *imp, const char *sql, sqlite3_stmt **stmt,
                struct asys_err *err);
/* Steps and resets; 0 when the statement is done. */
int imp_step(struct asys_importer *imp, sqlite3_stmt *stmt, struct asys_err *err);
void imp_bind_optional(sqlite3_stmt *st, int col, int64_t value, int present);
/* INSERT OR REPLACE INTO session_info: a number (text NULL) or a text. */
int imp_session_info(struct asys_importer *imp, const char *key, const char *text, int64_t number,
                     struct asys_err *err);

/* ---- problems that do not stop the import ---- */
void imp_warn(struct asys_importer *imp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- time: the segment's ticks as CLOCK_MONOTONIC ns ---- */
uint64_t imp_ns(struct asys_importer *imp, uint64_t ticks);

/* ---- strings ---- */
/* The global id of `text`, inserting it on first sight. */
int imp_intern_text(struct asys_importer *imp, const char *text, size_t len, uint32_t *id,
                    struct asys_err *err);
/* The global id of string `sid` of image `img` (a placeholder until defined). */
uint32_t imp_string(struct asys_importer *imp, struct imp_image *img, uint32_t sid);
int imp_define_string(struct asys_importer *imp, struct imp_image *img, uint32_t sid,
                      const char *text, size_t len, struct asys_err *err);

/* ---- call stacks: the global id of a call chain of the current segment's
 * image (import_stacks.c defines them); 0 if unknown ---- */
int64_t imp_callchain(struct asys_importer *imp, uint32_t local_id);

/* ---- images, threads, processes (created on first use; NULL: out of memory) ---- */
struct imp_image *imp_image_get(struct asys_importer *imp, uint64_t uid);
struct imp_thread *imp_thread_get(struct asys_importer *imp, uint32_t pid, uint32_t tid);
struct imp_process *imp_process_get(struct asys_importer *imp, uint32_t pid);
/* A per-image slot for a family's state, freed with `free_fn` when the image
 * goes; -1 when every slot is taken. */
int imp_image_slot_new(struct asys_importer *imp, void (*free_fn)(void *));
/* Calls fn for every image. */
int imp_each_image(struct asys_importer *imp,
                   int (*fn)(struct asys_importer *imp, struct imp_image *img, void *arg),
                   void *arg);

/* ---- the whole import ---- */
int imp_context_init(struct asys_importer *imp, sqlite3 *db, struct asys_err *err);
/* strings, processes and threads tables, once every segment is read */
int imp_context_write_tables(struct asys_importer *imp, struct asys_err *err);
void imp_context_free(struct asys_importer *imp);

#endif
