/* NVTX payload layout (nvToolsExtPayload.h), shared by the recorder, which
 * replaces string pointers in fixed layouts by string ids, and the
 * importer, which decodes payloads into named fields.
 *
 * Sizes and alignments are those of the LP64 ABI asys is built for (the
 * same table NVTX passes to InitializeInjectionNvtxExtension there). */
#ifndef ASYS_HGTX_PAYLOAD_H
#define ASYS_HGTX_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

/* NVTX's numbers (nvToolsExtPayload.h), so that neither side needs the header. */
enum {
    ASYS_NVTX_FLAG_POINTER = 1u << 1,
    ASYS_NVTX_FLAG_OFFSET_FROM_BASE = 1u << 2,
    ASYS_NVTX_FLAG_OFFSET_FROM_HERE = 1u << 3,
    ASYS_NVTX_FLAG_ARRAY_MASK = 7u << 4,
    ASYS_NVTX_FLAG_ARRAY_FIXED = 1u << 4,
    ASYS_NVTX_FLAG_ARRAY_ZERO_TERMINATED = 2u << 4,
    ASYS_NVTX_FLAG_ARRAY_LENGTH_INDEX = 3u << 4,
    ASYS_NVTX_FLAG_ARRAY_LENGTH_PAYLOAD = 4u << 4,
    ASYS_NVTX_FLAG_HIDE = 1u << 9,
    ASYS_NVTX_FLAG_KIND_MASK = 3u << 10,
    ASYS_NVTX_FLAG_EVENT_MESSAGE = 1u << 10,
    ASYS_NVTX_FLAG_TIMESTAMP = 2u << 10,
    ASYS_NVTX_FLAG_EVENT_MASK = 7u << 12,
    ASYS_NVTX_FLAG_RANGE_BEGIN = 1u << 12,
    ASYS_NVTX_FLAG_RANGE_END = 2u << 12,
    ASYS_NVTX_FLAG_MARK = 3u << 12,
    ASYS_NVTX_FLAG_COUNTER = 4u << 12,
};

enum {
    ASYS_NVTX_TYPE_CHAR = 1,
    ASYS_NVTX_TYPE_LONGDOUBLE = 21,
    ASYS_NVTX_TYPE_ADDRESS = 23,
    ASYS_NVTX_TYPE_BYTE = 32,
    ASYS_NVTX_TYPE_INT128 = 33,
    ASYS_NVTX_TYPE_UINT128 = 34,
    ASYS_NVTX_TYPE_FLOAT16 = 42,
    ASYS_NVTX_TYPE_FLOAT128 = 45,
    ASYS_NVTX_TYPE_BF16 = 50,
    ASYS_NVTX_TYPE_TF32 = 52,
    ASYS_NVTX_TYPE_CATEGORY = 68,
    ASYS_NVTX_TYPE_COLOR_ARGB = 69,
    ASYS_NVTX_TYPE_SCOPE_ID = 70,
    ASYS_NVTX_TYPE_CSTRING = 75,
    ASYS_NVTX_TYPE_CSTRING_UTF8 = 76,
    ASYS_NVTX_TYPE_CSTRING_UTF16 = 77,
    ASYS_NVTX_TYPE_CSTRING_UTF32 = 78,
    ASYS_NVTX_TYPE_REGISTERED_STRING = 80,
    ASYS_NVTX_TYPE_UNION_SELECTOR = 100,
    ASYS_NVTX_SCHEMA_REFERENCED = 1022,
    ASYS_NVTX_SCHEMA_RAW = 1023,
};

enum {
    ASYS_NVTX_SCHEMA_STATIC = 1,
    ASYS_NVTX_SCHEMA_DYNAMIC = 2,
    ASYS_NVTX_SCHEMA_UNION = 3,
    ASYS_NVTX_SCHEMA_UNION_SELECTOR = 4,
};

/* How a predefined entry type reads. */
enum asys_hgtx_value_kind {
    ASYS_HGTX_VALUE_NONE = 0, /* not a predefined type (a schema id) */
    ASYS_HGTX_VALUE_SIGNED,
    ASYS_HGTX_VALUE_UNSIGNED,
    ASYS_HGTX_VALUE_FLOAT, /* float, double, long double, float16, bf16, tf32 */
    ASYS_HGTX_VALUE_CHAR, /* one character (char, wchar_t, char8/16/32) */
    ASYS_HGTX_VALUE_ADDRESS, /* shown in hex */
    ASYS_HGTX_VALUE_BYTES, /* BYTE, 128-bit integers and floats: hex */
    ASYS_HGTX_VALUE_STRING, /* a C string type: its characters are `size` bytes wide */
    ASYS_HGTX_VALUE_REGISTERED_STRING,
};

struct asys_hgtx_type_info {
    uint16_t size; /* bytes of one value (a string type: of one character) */
    uint16_t align;
    uint8_t kind; /* enum asys_hgtx_value_kind */
};

/* A predefined entry type; 0 when `type` is not one (a schema id or unknown). */
int asys_hgtx_type_info(uint64_t type, struct asys_hgtx_type_info *out);

/* One schema entry as the layout needs it. */
struct asys_hgtx_layout_entry {
    uint64_t flags;
    uint64_t type;
    uint64_t detail; /* arrayOrUnionDetail */
    uint64_t offset; /* as registered; 0 after the first: natural alignment */
};

/* Size and alignment of a schema used as an entry type; 0 when unknown. */
typedef int (*asys_hgtx_schema_size_fn)(void *ctx, uint64_t schema_id, uint64_t *size,
                                        uint64_t *align);

/* The byte size and alignment of entry `e` when they do not depend on the
 * data: 0, or -1 (zero-terminated or length-indexed embedded arrays, unions,
 * unknown types or schemas). */
int asys_hgtx_entry_extent(const struct asys_hgtx_layout_entry *e, asys_hgtx_schema_size_fn size_of,
                           void *ctx, uint64_t *size, uint64_t *align);

/* Where entry i starts after the previous entry ends at `end`: its own
 * offset, else `end` rounded up to its alignment (capped by pack_align). */
uint64_t asys_hgtx_entry_offset(const struct asys_hgtx_layout_entry *e, size_t index, uint64_t end,
                                uint64_t align, uint64_t pack_align);

/* Whether entry `e` is a pointer to a NUL-terminated string (what the
 * recorder copies and replaces by a string id). */
int asys_hgtx_is_string_pointer(const struct asys_hgtx_layout_entry *e);

#endif
