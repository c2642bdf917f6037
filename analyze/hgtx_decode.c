#include "hgtx_decode.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hgtx_payload.h"

#define MAX_DEPTH 8
#define MAX_ELEMENTS 4096 /* per array */
#define MAX_FIELDS 65536 /* per payload */
#define VALUE_SLOTS 256 /* entries whose values a length index can name */
#define PATH_MAX_LEN 512

static const char *const type_names[] = {
    [1] = "char",
    [2] = "uchar",
    [3] = "short",
    [4] = "ushort",
    [5] = "int",
    [6] = "uint",
    [7] = "long",
    [8] = "ulong",
    [9] = "longlong",
    [10] = "ulonglong",
    [11] = "int8",
    [12] = "uint8",
    [13] = "int16",
    [14] = "uint16",
    [15] = "int32",
    [16] = "uint32",
    [17] = "int64",
    [18] = "uint64",
    [19] = "float",
    [20] = "double",
    [21] = "longdouble",
    [22] = "size",
    [23] = "address",
    [24] = "wchar",
    [25] = "char8",
    [26] = "char16",
    [27] = "char32",
    [32] = "byte",
    [33] = "int128",
    [34] = "uint128",
    [42] = "float16",
    [43] = "float32",
    [44] = "float64",
    [45] = "float128",
    [50] = "bf16",
    [52] = "tf32",
    [68] = "category",
    [69] = "color_argb",
    [70] = "scope_id",
    [71] = "pid",
    [72] = "pid",
    [73] = "tid",
    [74] = "tid",
    [75] = "cstring",
    [76] = "cstring_utf8",
    [77] = "cstring_utf16",
    [78] = "cstring_utf32",
    [80] = "registered_string",
};

const char *hgtx_type_name(uint64_t type)
{
    return type < sizeof type_names / sizeof type_names[0] ? type_names[type] : NULL;
}

/* One decoding pass. */
struct walk {
    struct hgtx_decoder *d;
    const uint8_t *base;
    size_t size;
    uint32_t flags;
    int fields;
    int stopped;
    char path[PATH_MAX_LEN];
};

static int emit(struct walk *w, struct hgtx_field *f, const struct asys_hgtx_schema_entry *e)
{
    if (w->stopped || w->fields >= MAX_FIELDS)
        return -1;
    f->path = w->path;
    if (e) {
        f->entry_flags = e->flags;
        f->entry_type = e->type;
        f->time_domain = e->time_domain;
        f->unit_sid = e->unit_string_id;
    }
    w->fields++;
    if (w->d->field(w->d->field_ctx, f) != 0) {
        w->stopped = 1;
        return -1;
    }
    return 0;
}

/* ---- scalars ----------------------------------------------------------------- */

static uint64_t read_uint(const uint8_t *p, unsigned size)
{
    uint64_t v = 0;
    memcpy(&v, p, size > 8 ? 8 : size); /* little-endian */
    return v;
}

static int64_t read_int(const uint8_t *p, unsigned size)
{
    uint64_t v = read_uint(p, size);
    if (size < 8 && (v >> (size * 8 - 1)) & 1)
        v |= ~UINT64_C(0) << (size * 8);
    return (int64_t)v;
}

/* IEEE half precision and bfloat16 to double. */
static double half_to_double(uint16_t h)
{
    int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    double v;
    if (exponent == 0)
        v = ldexp(mantissa, -24);
    else if (exponent == 31)
        v = mantissa ? NAN : INFINITY;
    else
        v = ldexp(mantissa + 1024, exponent - 25);
    return sign ? -v : v;
}

static double read_real(const uint8_t *p, uint64_t type, unsigned size)
{
    if (type == ASYS_NVTX_TYPE_FLOAT16)
        return half_to_double((uint16_t)read_uint(p, 2));
    if (type == ASYS_NVTX_TYPE_BF16) {
        uint32_t bits = (uint32_t)read_uint(p, 2) << 16;
        float f;
        memcpy(&f, &bits, sizeof f);
        return f;
    }
    if (size == 4) {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    if (size == 16) { /* x87 extended precision in 16 bytes */
        long double l;
        memcpy(&l, p, sizeof l < 16 ? sizeof l : 16);
        return (double)l;
    }
    double v;
    memcpy(&v, p, sizeof v);
    return v;
}

static int emit_hex(struct walk *w, struct hgtx_field *f, const uint8_t *p, size_t n,
                    const struct asys_hgtx_schema_entry *e)
{
    char hex[2 + 2 * 64 + 1] = "0x";
    size_t shown = n > 64 ? 64 : n;
    for (size_t i = 0; i < shown; i++) /* most significant byte first */
        snprintf(hex + 2 + 2 * i, 3, "%02x", p[n - 1 - i]);
    f->kind = HGTX_TEXT;
    f->text = hex;
    f->text_length = strlen(hex);
    return emit(w, f, e);
}

static int emit_text(struct walk *w, struct hgtx_field *f, const char *text, size_t n,
                     const struct asys_hgtx_schema_entry *e)
{
    f->kind = HGTX_TEXT;
    f->text = text ? text : "";
    f->text_length = text ? n : 0;
    return emit(w, f, e);
}

/* A string id's text (replaced pointer, registered handle). */
static int emit_string_id(struct walk *w, struct hgtx_field *f, uint64_t sid,
                          const struct asys_hgtx_schema_entry *e)
{
    const char *text = sid && sid <= UINT32_MAX ? w->d->text(w->d->ctx, (uint32_t)sid) : NULL;
    if (!text) {
        f->kind = HGTX_UINT;
        f->u = sid;
        return emit(w, f, e);
    }
    return emit_text(w, f, text, strlen(text), e);
}

/* Characters of `width` bytes as UTF-8 (UTF-16 surrogates are kept apart). */
static size_t chars_to_utf8(const uint8_t *p, size_t count, unsigned width, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t c = (uint32_t)read_uint(p + i * width, width);
        if (!c)
            break;
        if (width == 1) {
            if (n + 1 >= cap)
                break;
            out[n++] = (char)c;
            continue;
        }
        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            c = 0xfffd;
        char buf[4];
        size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (k == 1) {
            buf[0] = (char)c;
        } else {
            for (size_t j = k; j-- > 1; c >>= 6)
                buf[j] = (char)(0x80 | (c & 0x3f));
            buf[0] = (char)((0xf0u << (4 - k)) | c);
        }
        if (n + k >= cap)
            break;
        memcpy(out + n, buf, k);
        n += k;
    }
    return n;
}

static int emit_chars(struct walk *w, struct hgtx_field *f, const uint8_t *p, size_t count,
                      unsigned width, const struct asys_hgtx_schema_entry *e)
{
    char text[4096];
    size_t n = chars_to_utf8(p, count, width, text, sizeof text);
    return emit_text(w, f, text, n, e);
}

/* One value of a predefined type at p (size bytes are there). */
static int emit_scalar(struct walk *w, const struct asys_hgtx_type_info *info, uint64_t type,
                       const uint8_t *p, const struct asys_hgtx_schema_entry *e)
{
    struct hgtx_field f;
    memset(&f, 0, sizeof f);
    f.type = hgtx_type_name(type);
    switch (info->kind) {
    case ASYS_HGTX_VALUE_SIGNED:
        f.kind = HGTX_INT;
        f.i = read_int(p, info->size);
        return emit(w, &f, e);
    case ASYS_HGTX_VALUE_UNSIGNED:
        f.kind = HGTX_UINT;
        f.u = read_uint(p, info->size);
        return emit(w, &f, e);
    case ASYS_HGTX_VALUE_FLOAT:
        f.kind = HGTX_REAL;
        f.d = read_real(p, type, info->size);
        return emit(w, &f, e);
    case ASYS_HGTX_VALUE_CHAR:
        return emit_chars(w, &f, p, 1, info->size, e);
    case ASYS_HGTX_VALUE_ADDRESS:
        return emit_hex(w, &f, p, info->size, e);
    case ASYS_HGTX_VALUE_REGISTERED_STRING:
        f.type = "string";
        return emit_string_id(w, &f, read_uint(p, 8), e);
    case ASYS_HGTX_VALUE_BYTES:
    default:
        return emit_hex(w, &f, p, info->size, e);
    }
}

/* ---- entries --------------------------------------------------------------- */

static int decode_struct(struct walk *w, const struct hgtx_schema *s, size_t at, size_t limit,
                         int depth, size_t *used);

/* Appends to the field path; returns the length to cut it back to. */
static size_t path_push_name(struct walk *w, const char *name)
{
    size_t n = strlen(w->path);
    snprintf(w->path + n, sizeof w->path - n, "%s", name);
    return n;
}

static size_t path_push_index(struct walk *w, const char *format, unsigned long long index)
{
    size_t n = strlen(w->path);
    snprintf(w->path + n, sizeof w->path - n, format, index);
    return n;
}

static void path_pop(struct walk *w, size_t n)
{
    w->path[n] = '\0';
}

/* An enum value: its number and, when registered, its name. */
static int emit_enum(struct walk *w, const struct hgtx_schema *en, const uint8_t *p,
                     const struct asys_hgtx_schema_entry *e)
{
    unsigned size = en->static_size && en->static_size <= 8 ? (unsigned)en->static_size : 4;
    uint64_t value = read_uint(p, size);
    struct hgtx_field f;
    memset(&f, 0, sizeof f);
    f.type = "enum";
    for (uint32_t i = 0; i < en->entry_count; i++) {
        if (en->enums[i].value == value && !en->enums[i].is_flag) {
            const char *name = w->d->text(w->d->ctx, en->enums[i].name_string_id);
            if (name)
                return emit_text(w, &f, name, strlen(name), e);
        }
    }
    f.kind = HGTX_UINT;
    f.u = value;
    return emit(w, &f, e);
}

/* One element of entry e at `at`: *size gets its byte size; -1 if it does not fit. */
static int decode_element(struct walk *w, const struct asys_hgtx_schema_entry *e, size_t at,
                          size_t limit, int depth, size_t *size)
{
    struct asys_hgtx_type_info info;
    if (asys_hgtx_type_info(e->type, &info)) {
        if (at + info.size > limit) {
            w->d->cut++;
            return -1;
        }
        *size = info.size;
        return emit_scalar(w, &info, e->type, w->base + at, e);
    }
    const struct hgtx_schema *nested = w->d->schema(w->d->ctx, e->type);
    if (!nested) {
        w->d->unsupported++;
        return -1;
    }
    if (nested->kind == ASYS_HGTX_SCHEMA_ENUM) {
        unsigned n =
            nested->static_size && nested->static_size <= 8 ? (unsigned)nested->static_size : 4;
        if (at + n > limit) {
            w->d->cut++;
            return -1;
        }
        *size = n;
        return emit_enum(w, nested, w->base + at, e);
    }
    size_t n = strlen(w->path);
    if (n + 1 < sizeof w->path)
        strcat(w->path, ".");
    int rc = decode_struct(w, nested, at, limit, depth + 1, size);
    path_pop(w, n);
    return rc;
}

/* A string entry that is not a pointer: fixed size, zero-terminated, or
 * length-indexed. */
static int decode_string(struct walk *w, const struct asys_hgtx_schema_entry *e, unsigned width,
                         size_t at, size_t limit, uint64_t length, size_t *size)
{
    uint64_t array = e->flags & ASYS_NVTX_FLAG_ARRAY_MASK;
    size_t room = at < limit ? (limit - at) / width : 0;
    size_t count;
    if (array == ASYS_NVTX_FLAG_ARRAY_ZERO_TERMINATED || (!array && !length)) {
        count = 0;
        while (count < room && read_uint(w->base + at + count * width, width))
            count++;
        *size = (count < room ? count + 1 : count) * width; /* with its terminator */
    } else {
        count = (size_t)length;
        if (count > room) {
            w->d->cut++;
            count = room;
        }
        *size = count * width;
    }
    struct hgtx_field f;
    memset(&f, 0, sizeof f);
    f.type = "string";
    return emit_chars(w, &f, w->base + at, count, width, e);
}

/* A pointer entry: a string the recorder replaced by its id, or an address. */
static int decode_pointer(struct walk *w, const struct asys_hgtx_schema_entry *e, size_t at,
                          size_t limit)
{
    if (at + 8 > limit) {
        w->d->cut++;
        return -1;
    }
    struct hgtx_field f;
    memset(&f, 0, sizeof f);
    struct asys_hgtx_layout_entry le = {e->flags, e->type, e->array_or_union_detail, e->offset};
    if (asys_hgtx_is_string_pointer(&le) && (w->flags & ASYS_HGTX_PAYLOAD_STRINGS) &&
        e->type <= ASYS_NVTX_TYPE_CSTRING_UTF8) {
        f.type = "string";
        return emit_string_id(w, &f, read_uint(w->base + at, 8), e);
    }
    f.type = "address";
    return emit_hex(w, &f, w->base + at, 8, e);
}

static int decode_entry(struct walk *w, const struct hgtx_schema *s, uint32_t index,
                        const int64_t *values, size_t at, size_t limit, int depth, size_t *size)
{
    const struct asys_hgtx_schema_entry *e = &s->entries[index];
    uint64_t array = e->flags & ASYS_NVTX_FLAG_ARRAY_MASK;
    if (e->flags & ASYS_NVTX_FLAG_POINTER) {
        *size = 8;
        return decode_pointer(w, e, at, limit);
    }
    uint64_t length = e->array_or_union_detail;
    if (array == ASYS_NVTX_FLAG_ARRAY_LENGTH_INDEX) {
        if (length >= index || length >= VALUE_SLOTS || values[length] < 0) {
            w->d->unsupported++;
            return -1;
        }
        length = (uint64_t)values[length];
    } else if (array == ASYS_NVTX_FLAG_ARRAY_LENGTH_PAYLOAD) {
        w->d->unsupported++;
        return -1;
    }
    struct asys_hgtx_type_info info;
    if (asys_hgtx_type_info(e->type, &info) && info.kind == ASYS_HGTX_VALUE_STRING)
        return decode_string(w, e, info.size, at, limit, length, size);
    if (!array) {
        *size = 0;
        return decode_element(w, e, at, limit, depth, size);
    }
    /* an array of elements */
    size_t offset = at, count = 0;
    uint64_t n = array == ASYS_NVTX_FLAG_ARRAY_ZERO_TERMINATED ? MAX_ELEMENTS : length;
    if (n > MAX_ELEMENTS) {
        w->d->cut++;
        n = MAX_ELEMENTS;
    }
    for (; count < n; count++) {
        size_t element = 0;
        if (array == ASYS_NVTX_FLAG_ARRAY_ZERO_TERMINATED && asys_hgtx_type_info(e->type, &info) &&
            offset + info.size <= limit && !read_uint(w->base + offset, info.size)) {
            offset += info.size; /* the terminator */
            break;
        }
        size_t mark = path_push_index(w, "[%llu]", (unsigned long long)count);
        int rc = decode_element(w, e, offset, limit, depth, &element);
        path_pop(w, mark);
        if (rc != 0 || !element)
            break;
        offset += element;
    }
    *size = offset - at;
    return w->stopped ? -1 : 0;
}

/* The entries of schema s laid out from `at`; *used gets the bytes they take. */
static int decode_struct(struct walk *w, const struct hgtx_schema *s, size_t at, size_t limit,
                         int depth, size_t *used)
{
    if (depth >= MAX_DEPTH || s->kind != ASYS_HGTX_SCHEMA_PAYLOAD ||
        s->type == ASYS_NVTX_SCHEMA_UNION || s->type == ASYS_NVTX_SCHEMA_UNION_SELECTOR) {
        w->d->unsupported++;
        return -1;
    }
    if (at > limit) {
        w->d->cut++;
        return -1;
    }
    int64_t values[VALUE_SLOTS]; /* integer entries, for length indexes */
    size_t end = 0;
    for (uint32_t i = 0; i < s->entry_count && !w->stopped; i++) {
        const struct asys_hgtx_schema_entry *e = &s->entries[i];
        if (i < VALUE_SLOTS)
            values[i] = -1;
        struct asys_hgtx_layout_entry le = {e->flags, e->type, e->array_or_union_detail, e->offset};
        uint64_t size = 0, align = 1;
        struct asys_hgtx_type_info info;
        if (asys_hgtx_entry_extent(&le, NULL, NULL, &size, &align) != 0) {
            align = (e->flags & ASYS_NVTX_FLAG_POINTER)   ? 8
                    : asys_hgtx_type_info(e->type, &info) ? info.align
                                                          : 8;
        }
        uint64_t offset = asys_hgtx_entry_offset(&le, i, end, align, s->pack_align);
        if (offset > limit - at) {
            w->d->cut++;
            break;
        }
        const char *name = e->name_string_id ? w->d->text(w->d->ctx, e->name_string_id) : NULL;
        size_t mark = name && *name ? path_push_name(w, name)
                                    : path_push_index(w, "#%llu", (unsigned long long)i);
        size_t taken = 0;
        int rc = decode_entry(w, s, i, values, at + offset, limit, depth, &taken);
        path_pop(w, mark);
        if (i < VALUE_SLOTS && asys_hgtx_type_info(e->type, &info) &&
            (info.kind == ASYS_HGTX_VALUE_SIGNED || info.kind == ASYS_HGTX_VALUE_UNSIGNED) &&
            !(e->flags & (ASYS_NVTX_FLAG_POINTER | ASYS_NVTX_FLAG_ARRAY_MASK)) &&
            at + offset + info.size <= limit)
            values[i] = read_int(w->base + at + offset, info.size);
        if (rc != 0 && w->stopped)
            return -1;
        if (offset + taken > end)
            end = offset + taken;
    }
    *used = s->static_size && s->type == ASYS_NVTX_SCHEMA_STATIC ? s->static_size : end;
    return w->stopped ? -1 : 0;
}

int hgtx_decode(struct hgtx_decoder *d, uint64_t schema_id, const uint8_t *data, size_t size,
                uint32_t flags)
{
    struct walk w = {.d = d, .base = data, .size = size, .flags = flags};
    struct asys_hgtx_type_info info;
    if (asys_hgtx_type_info(schema_id, &info)) { /* a payload of one predefined value */
        struct asys_hgtx_schema_entry e;
        memset(&e, 0, sizeof e);
        e.type = schema_id;
        if (info.kind == ASYS_HGTX_VALUE_STRING) {
            size_t used;
            e.flags = ASYS_NVTX_FLAG_ARRAY_ZERO_TERMINATED | ASYS_NVTX_FLAG_EVENT_MESSAGE;
            decode_string(&w, &e, info.size, 0, size, 0, &used);
        } else if (size >= info.size) {
            emit_scalar(&w, &info, schema_id, data, &e);
        }
        return w.stopped ? -1 : w.fields;
    }
    const struct hgtx_schema *s = d->schema(d->ctx, schema_id);
    if (!s) {
        d->unsupported++;
        return 0;
    }
    size_t used;
    if (s->kind == ASYS_HGTX_SCHEMA_ENUM) {
        struct asys_hgtx_schema_entry e;
        memset(&e, 0, sizeof e);
        e.type = schema_id;
        decode_element(&w, &e, 0, size, 0, &used);
    } else {
        decode_struct(&w, s, 0, size, 0, &used);
    }
    return w.stopped ? -1 : w.fields;
}

uint64_t hgtx_payload_size(struct hgtx_decoder *d, uint64_t schema_id)
{
    struct asys_hgtx_type_info info;
    if (asys_hgtx_type_info(schema_id, &info))
        return info.kind == ASYS_HGTX_VALUE_STRING ? 0 : info.size;
    const struct hgtx_schema *s = d->schema(d->ctx, schema_id);
    if (!s)
        return 0;
    if (s->kind == ASYS_HGTX_SCHEMA_ENUM)
        return s->static_size;
    return s->static_size; /* a batch needs the registered size */
}
