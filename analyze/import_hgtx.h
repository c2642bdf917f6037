/* The HGTX importer family's shared state: its core (import_hgtx.c:
 * ranges, marks, domains, categories) and its extensions (payloads and
 * time: import_hgtx_payload.c; counters: import_hgtx_counters.c; memory,
 * named resources, user synchronization: import_hgtx_objects.c).  One
 * family, so that an extension record can reach the event it belongs to. */
#ifndef ASYS_IMPORT_HGTX_H
#define ASYS_IMPORT_HGTX_H

#include "hgtx_decode.h"
#include "import_family.h"

enum { KIND_PUSHPOP = 1, KIND_STARTEND = 2, KIND_MARK = 3 };

/* A range waiting for its end (push/pop or start/end). */
struct hgtx_open {
    int64_t id;
    uint64_t start_ns;
    uint32_t pid;
    uint32_t tid;
    uint32_t domain; /* global hgtx_domains.id */
    uint32_t text_id;
    int64_t category; /* -1: none */
    int64_t color; /* -1: none */
    uint32_t payload_type; /* 0: none */
    uint64_t payload;
    int32_t level; /* -1: not nested (start/end) */
    int64_t parent; /* -1: none */
};

struct hgtx_end {
    uint64_t end_ns;
    uint32_t tid;
};

struct imp_domain {
    uint32_t pid;
    uint32_t name_id;
    uint64_t created_ns;
    uint64_t destroyed_ns;
    uint64_t pending_uid; /* placeholder: image that used it before it was defined */
    uint32_t pending_local; /* its local id there */
};

/* The push/pop stack of one domain in the current segment. */
struct hgtx_stack {
    uint16_t domain_local;
    struct hgtx_open *items;
    size_t count;
    size_t cap;
};

/* Per process image: its domain and range ids. */
struct hgtx_image {
    struct asys_u64map domains; /* local domain id -> global id */
    struct asys_u64map starts; /* range id -> index in the open pool */
    struct asys_u64map ends; /* range id -> index in the end pool */
    struct asys_u64map range_events; /* start/end range id -> hgtx_events.id */
};

struct hgtx_payloads;
struct hgtx_counters;
struct hgtx_objects;

/* An hgtx_events row waiting in the batch (struct hgtx.batch). */
struct hgtx_row {
    struct hgtx_open o;
    int64_t end_ns; /* -1: never ended */
    uint32_t end_tid; /* 0: none */
    int kind;
};

/* Rows per multi-row INSERT while the segments are read: one statement of
 * 64 rows costs 0.55x of 64 single-row ones (bench/RESULTS.md, 2026-12-04
 * later); 64 x 15 = 960 parameters, under SQLite's 999 of old versions. */
#define HGTX_BATCH_ROWS 64

struct hgtx {
    struct asys_importer *imp;
    int slot;
    sqlite3_stmt *insert_hgtx;
    sqlite3_stmt *insert_batch; /* HGTX_BATCH_ROWS rows */
    struct hgtx_row batch[HGTX_BATCH_ROWS];
    size_t batch_count;
    int unbatched; /* from the family's finish on: each row at once (later phases read them) */
    int64_t next_hgtx_id;
    struct imp_domain *domains; /* index = global id; 0 = default */
    size_t domain_count;
    size_t domain_cap;
    struct asys_u64map categories; /* domain << 32 | category -> name id */
    struct hgtx_open *open_pool; /* start/end ranges waiting for their end */
    size_t open_count, open_cap;
    int64_t open_free; /* free list through .id, -1 = empty */
    struct hgtx_end *end_pool;
    size_t end_count, end_cap;
    uint64_t unmatched_pops;
    uint64_t unmatched_ends;
    uint64_t open_ranges;
    struct hgtx_stack *stacks; /* of the current segment */
    size_t stack_count;
    int64_t last_event; /* the current segment's last push, mark or start (0: none) */
    struct asys_err *finish_err; /* for finish_open_ranges */
    /* the extensions' state */
    struct hgtx_payloads *payloads;
    struct hgtx_counters *counters;
    struct hgtx_objects *objects;
};

/* ---- the core, for the extensions (import_hgtx.c) ---- */
struct hgtx_image *hgtx_image(struct hgtx *h, struct imp_image *img);
/* The global id of a domain of the current image. */
uint32_t hgtx_domain_global(struct hgtx *h, uint16_t local);
/* A range or mark of the current segment's thread at `ns`, no attributes. */
void hgtx_open_plain(struct hgtx *h, struct hgtx_open *o, uint32_t sid, uint64_t ns);
int hgtx_push(struct hgtx *h, uint16_t domain_local, struct hgtx_open *o, struct asys_err *err);
/* *event gets the popped range's id (0: no push to pop). */
int hgtx_pop(struct hgtx *h, uint16_t domain_local, uint64_t ns, int64_t *event,
             struct asys_err *err);
int hgtx_mark(struct hgtx *h, uint16_t domain_local, struct hgtx_open *o, struct asys_err *err);
int hgtx_start(struct hgtx *h, uint64_t range_id, struct hgtx_open *o, struct asys_err *err);
int hgtx_end(struct hgtx *h, uint64_t range_id, uint64_t ns, struct asys_err *err);
/* An event whose begin and end are both known (deferred events).  While
 * the segments are read the row may wait in the batch: nothing reads
 * hgtx_events until the family's finish, which writes what waits. */
int hgtx_insert_event(struct hgtx *h, int kind, const struct hgtx_open *o, int64_t end_ns,
                      uint32_t end_tid, struct asys_err *err);
/* Writes the rows waiting in the batch. */
int hgtx_flush_events(struct hgtx *h, struct asys_err *err);

/* ---- the extensions ---- */
/* An extension of the family: its record handlers (given the family's
 * state) and its phases, in the family's registry (import_hgtx.c). */
struct hgtx_extension {
    const char *name;
    struct imp_record_ops records;
    int (*init)(struct hgtx *h, struct asys_err *err);
    int (*finish)(struct hgtx *h, struct asys_err *err); /* with the family's finish */
    int (*derive)(struct hgtx *h, struct asys_err *err); /* every schema known */
    void (*free)(struct hgtx *h);
};

/* payloads and time (import_hgtx_payload.c) */
extern const struct hgtx_extension hgtx_payloads_extension;
/* A decoder over the schemas of image `uid` (and its parents) in a domain;
 * valid until the next call. */
struct hgtx_decoder *hgtx_payload_decoder(struct hgtx *h, uint64_t image_uid, uint32_t domain,
                                          int (*field)(void *, const struct hgtx_field *),
                                          void *ctx);
/* A timestamp of time domain (or timestamp type) `time_domain` of image
 * `uid` as CLOCK_MONOTONIC ns; -1 when it cannot be converted. */
int64_t hgtx_time_to_ns(struct hgtx *h, uint64_t image_uid, uint32_t domain, uint64_t time_domain,
                        int64_t timestamp);

/* counters (import_hgtx_counters.c) */
extern const struct hgtx_extension hgtx_counters_extension;

/* memory, resources, user synchronization, injection (import_hgtx_objects.c) */
extern const struct hgtx_extension hgtx_objects_extension;

#endif
