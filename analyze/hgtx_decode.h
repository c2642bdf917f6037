/* Decodes NVTX binary payloads (nvToolsExtPayload.h) by their registered
 * schema into named fields: scalars, strings, enums, fixed and
 * length-indexed arrays, nested schemas.  Pure: the schemas and string
 * texts come through callbacks, the fields go out through one; everything
 * in a payload is untrusted and bounded (nesting, array lengths, fields).
 *
 * Not decoded (counted in `unsupported`): unions, arrays whose length is in
 * another payload, pointers into other payloads of the event. */
#ifndef ASYS_HGTX_DECODE_H
#define ASYS_HGTX_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "asys_format.h"

/* A schema or enum as registered (the entries are borrowed). */
struct hgtx_schema {
    uint64_t id;
    uint32_t kind; /* enum asys_hgtx_schema_kind */
    uint32_t type; /* NVTX_PAYLOAD_SCHEMA_TYPE_* */
    uint64_t static_size;
    uint64_t pack_align;
    uint32_t name_sid; /* string id in the image that registered it */
    uint32_t entry_count;
    const struct asys_hgtx_schema_entry *entries; /* kind PAYLOAD */
    const struct asys_hgtx_enum_entry *enums; /* kind ENUM */
};

enum hgtx_value { HGTX_INT, HGTX_UINT, HGTX_REAL, HGTX_TEXT };

struct hgtx_field {
    const char *path; /* "name", "outer.inner", "values[2]" */
    const char *type; /* "int32", "double", "string", "enum", "address", "bytes", ... */
    enum hgtx_value kind;
    int64_t i;
    uint64_t u;
    double d;
    const char *text; /* HGTX_TEXT, not NUL-terminated */
    size_t text_length;
    /* what the entry says of itself */
    uint64_t entry_flags; /* NVTX_PAYLOAD_ENTRY_FLAG_* */
    uint64_t entry_type;
    uint64_t time_domain;
    uint32_t unit_sid;
};

struct hgtx_decoder {
    /* the schema or enum registered as `id`; NULL: unknown */
    const struct hgtx_schema *(*schema)(void *ctx, uint64_t id);
    /* the text of string id `sid` (entry names, registered strings and
     * string pointers the recorder replaced); NULL: unknown */
    const char *(*text)(void *ctx, uint32_t sid);
    int (*field)(void *field_ctx, const struct hgtx_field *f); /* non-zero stops */
    void *ctx; /* of schema and text */
    void *field_ctx; /* of field */
    uint64_t unsupported; /* entries that could not be decoded */
    uint64_t cut; /* entries that did not fit the payload's bytes */
};

/* Decodes one payload of `schema_id` (a registered schema or enum, or a
 * predefined entry type).  `flags` are the payload's
 * (ASYS_HGTX_PAYLOAD_STRINGS: string pointers hold string ids).  Returns the
 * number of fields, or -1 when `field` stopped it. */
int hgtx_decode(struct hgtx_decoder *d, uint64_t schema_id, const uint8_t *data, size_t size,
                uint32_t flags);

/* The fixed size of a payload of `schema_id` (batches of deferred events);
 * 0 when unknown or variable. */
uint64_t hgtx_payload_size(struct hgtx_decoder *d, uint64_t schema_id);

/* The name of a predefined entry type ("int32", "cstring", ...), or NULL. */
const char *hgtx_type_name(uint64_t type);

#endif
