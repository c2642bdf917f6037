/* Importer families: one per record family of schema/asys_format.h (core,
 * call stacks, and one per collector).  importer.c drives the registry in
 * order; each import_NAME.c defines one struct imp_family and keeps its
 * state opaque.
 *
 * The phases of an import, in order:
 *   init          prepare statements; read what the manifest says of the family
 *   ops[type]     one handler per record type of the family (a table, not a switch)
 *   segment_end   after each thread segment (per-segment state: HGTX's push stacks)
 *   finish        after the last segment, while strings may still be referenced
 *   -- the strings, processes and threads tables are written --
 *   derive        tables computed from the family's rows and the core tables
 *   -- every family's indexes are created (its schema file after "-- after load") --
 *   analyze       derived tables that need the indexes (schema/derived.sql ...)
 *   free
 */
#ifndef ASYS_IMPORT_FAMILY_H
#define ASYS_IMPORT_FAMILY_H

#include "import_context.h"

typedef int (*imp_record_fn)(void *state, const struct asys_record *rec, uint64_t ns,
                             struct asys_err *err);

struct imp_record_op {
    unsigned type; /* enum asys_record_type */
    imp_record_fn import; /* NULL: read and counted, nothing to store */
};

/* Record handlers that an extension of a family registers (HGTX's payloads,
 * counters and objects); they get the family's state. */
struct imp_record_ops {
    const struct imp_record_op *ops;
    size_t count;
};

struct imp_family {
    const char *name; /* collector_records.collector */
    uint64_t feature; /* enum asys_feature of its records */
    /* schema/NAME.sql: tables (documented there), then after a line
     * "-- after load" the indexes built once the rows are in */
    const char *schema;
    const struct imp_record_op *ops;
    size_t op_count;
    const struct imp_record_ops *const *extension_ops; /* NULL-terminated; NULL: none */
    /* hooks; NULL: nothing to do.  init returns the state the others get. */
    int (*init)(struct asys_importer *imp, void **state, struct asys_err *err);
    int (*segment_end)(void *state, struct asys_err *err);
    int (*finish)(void *state, struct asys_err *err);
    int (*derive)(void *state, struct asys_err *err);
    int (*analyze)(void *state, struct asys_err *err);
    void (*free)(void *state);
};

#endif
