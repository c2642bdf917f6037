/* Files compiled into the binaries: the schema DDL and the report queries. */
#ifndef ASYS_EMBEDDED_FILES_H
#define ASYS_EMBEDDED_FILES_H

struct asys_embedded_file {
    const char *name; /* file name, e.g. "hgtx_sum.sql" */
    const char *text; /* NUL-terminated contents */
};

/* Both end with {NULL, NULL}. */
extern const struct asys_embedded_file asys_schema_files[];
/* asys-export --schema nsys: export/nsys_schema.sql */
extern const struct asys_embedded_file asys_nsys_schema_files[];
extern const struct asys_embedded_file asys_query_files[];

/* The schema file `name`, or NULL. */
const char *asys_schema_text(const char *name);

#endif
