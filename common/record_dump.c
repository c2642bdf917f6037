#include "record_dump.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void asys_dump_strings_init(struct asys_dump_strings *s)
{
    memset(s, 0, sizeof *s);
    asys_u64map_init(&s->ids);
}

void asys_dump_strings_free(struct asys_dump_strings *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->texts[i]);
    free(s->texts);
    asys_u64map_free(&s->ids);
}

static void remember(struct asys_dump_strings *s, uint32_t id, const char *text, size_t len)
{
    if (!s || asys_u64map_get(&s->ids, id))
        return;
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **bigger = realloc(s->texts, cap * sizeof *bigger);
        if (!bigger)
            return;
        s->texts = bigger;
        s->cap = cap;
    }
    char *copy = strndup(text, len);
    if (!copy || asys_u64map_put(&s->ids, id, s->count) != 0) {
        free(copy);
        return;
    }
    s->texts[s->count++] = copy;
}

static const char *lookup(const struct asys_dump_strings *s, uint64_t id)
{
    const uint64_t *i = s ? asys_u64map_get(&s->ids, id) : NULL;
    return i ? s->texts[*i] : NULL;
}

/* Text in double quotes; quotes, backslashes and bytes outside printable
 * ASCII escaped, so a line stays one line whatever the record holds. */
static void put_quoted(FILE *out, const char *text, size_t len)
{
    fputc('"', out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static uint64_t read_uint(const uint8_t *p, unsigned size)
{
    uint64_t v = 0;
    memcpy(&v, p, size > 8 ? 8 : size); /* little-endian, as the format is */
    return v;
}

static int64_t read_int(const uint8_t *p, unsigned size)
{
    uint64_t v = read_uint(p, size);
    if (size < 8 && (v >> (size * 8 - 1)) & 1)
        v |= ~0ull << (size * 8);
    return (int64_t)v;
}

static void put_value(FILE *out, const uint8_t *p, unsigned size, unsigned kind,
                      const struct asys_dump_strings *strings)
{
    switch (kind) {
    case ASYS_FIELD_SIGNED:
        fprintf(out, "%" PRId64, read_int(p, size));
        break;
    case ASYS_FIELD_HEX:
        fprintf(out, "0x%" PRIx64, read_uint(p, size));
        break;
    case ASYS_FIELD_BYTES:
        for (unsigned i = 0; i < size; i++)
            fprintf(out, "%02x", p[i]);
        break;
    case ASYS_FIELD_STRING: {
        uint64_t id = read_uint(p, size);
        fprintf(out, "%" PRIu64, id);
        const char *text = id ? lookup(strings, id) : NULL;
        if (text) {
            fputc(':', out);
            put_quoted(out, text, strlen(text));
        }
        break;
    }
    default:
        fprintf(out, "%" PRIu64, read_uint(p, size));
    }
}

static void put_field(FILE *out, const struct asys_record *rec, const struct asys_rec_field *f,
                      const struct asys_dump_strings *strings)
{
    if (f->kind == ASYS_FIELD_RESERVED) {
        /* only worth a look when a writer put something there */
        for (unsigned i = 0; i < f->size; i++)
            if (rec->data[f->offset + i]) {
                fprintf(out, " %s=", f->name);
                put_value(out, rec->data + f->offset, f->size, ASYS_FIELD_BYTES, NULL);
                return;
            }
        return;
    }
    fprintf(out, " %s=", f->name);
    if (!f->elem_size || f->kind == ASYS_FIELD_BYTES) {
        put_value(out, rec->data + f->offset, f->size, f->kind, strings);
        return;
    }
    fputc('[', out);
    for (unsigned i = 0; i < f->size / f->elem_size; i++) {
        if (i)
            fputc(',', out);
        put_value(out, rec->data + f->offset + i * f->elem_size, f->elem_size, f->kind, strings);
    }
    fputc(']', out);
}

/* What follows the struct, bounded by the record's size whatever the count says. */
static void put_tail(FILE *out, const struct asys_record *rec, const struct asys_rec_info *info,
                     struct asys_dump_strings *strings)
{
    uint32_t count = (uint32_t)read_uint(rec->data + info->tail_offset, 4);
    const uint8_t *body = rec->data + info->min_size;
    size_t room = rec->size - info->min_size;
    if (info->tail == ASYS_TAIL_TEXT) {
        size_t len = count < room ? count : room;
        fprintf(out, " text=");
        put_quoted(out, (const char *)body, len);
        if (count > room)
            fprintf(out, " (length %" PRIu32 " is past the record's end)", count);
        if (rec->type == ASYS_REC_STRING_DEF) {
            const struct asys_rec_string_def *s = (const void *)rec->data;
            remember(strings, s->string_id, (const char *)body, len);
        }
    } else if (info->tail == ASYS_TAIL_FRAMES) {
        size_t n = count < room / 8 ? count : room / 8;
        fprintf(out, " frames=[");
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s0x%" PRIx64, i ? "," : "", read_uint(body + 8 * i, 8));
        fputc(']', out);
        if (count > room / 8)
            fprintf(out, " (depth %" PRIu32 " is past the record's end)", count);
    } else if (info->tail == ASYS_TAIL_REALS) {
        size_t n = count < room / 8 ? count : room / 8;
        fprintf(out, " values=[");
        for (size_t i = 0; i < n; i++) {
            double v;
            memcpy(&v, body + 8 * i, sizeof v);
            fprintf(out, "%s%.17g", i ? "," : "", v);
        }
        fputc(']', out);
        if (count > room / 8)
            fprintf(out, " (count %" PRIu32 " is past the record's end)", count);
    }
}

void asys_dump_record(FILE *out, const struct asys_record *rec, struct asys_dump_strings *strings)
{
    const struct asys_rec_info *info = asys_rec_info(rec->type);
    fprintf(out, "@%08" PRIx64 " %s t=%" PRIu64, rec->offset, info ? info->name : "UNKNOWN",
            rec->ticks);
    if (!info) { /* the stream hands out known types only; a caller may not */
        fprintf(out, " type=%u size=%" PRIu32 "\n", rec->type, rec->size);
        return;
    }
    if (rec->type == ASYS_REC_PAD) {
        fprintf(out, " size=%" PRIu32 "\n", rec->size);
        return;
    }
    if (info->arg_name) {
        uint8_t arg[2] = {(uint8_t)rec->arg, (uint8_t)(rec->arg >> 8)};
        fprintf(out, " %s=", info->arg_name);
        put_value(out, arg, 2, info->arg_kind, strings);
    } else if (rec->arg) {
        fprintf(out, " arg=%u", rec->arg);
    }
    for (uint16_t i = 0; i < info->field_count; i++)
        put_field(out, rec, &info->fields[i], strings);
    if (info->tail != ASYS_TAIL_NONE)
        put_tail(out, rec, info, strings);
    fputc('\n', out);
}

static const char *collector_name(uint32_t c)
{
    return c == ASYS_SEGMENT_THREAD ? "thread" : c == ASYS_SEGMENT_LAUNCHER ? "launcher" : "?";
}

void asys_dump_segment_header(FILE *out, const char *name, const struct asys_segment_header *h)
{
    static const char *const features[] = {"core",   "hgtx", "osrt",
                                           "stacks", "hggc", [12] = "memory"};
    fprintf(out, "# segment %s: %s pid %" PRIu32 " tid %" PRIu32 " ppid %" PRIu32, name,
            collector_name(h->collector), h->pid, h->tid, h->ppid);
    fprintf(out,
            ", format %u, image %016" PRIx64 " (parent %016" PRIx64 ", inherited < %" PRIu32
            "), features ",
            h->format_version, h->process_uid, h->parent_process_uid, h->inherited_string_limit);
    int any = 0;
    for (unsigned i = 0; i < sizeof features / sizeof features[0]; i++)
        if ((h->feature_mask & (1ull << i)) && features[i])
            fprintf(out, "%s%s", any++ ? "," : "", features[i]);
    fprintf(out, ", clock %s, base %" PRIu64 ", calibration %" PRIu64 "=%" PRIu64 "ns",
            h->clock_kind == ASYS_CLOCK_MONOTONIC ? "monotonic"
            : h->clock_kind == ASYS_CLOCK_TSC     ? "tsc"
                                                  : "cntvct",
            h->base_ticks, h->calib_ticks, h->calib_mono_ns);
    fprintf(out,
            ", dropped %" PRIu64 " (full %" PRIu64 ", re-entry %" PRIu64 ", too big %" PRIu64
            "), data end %" PRIu64 "\n",
            h->dropped_records, h->dropped_full, h->dropped_reentry, h->dropped_big, h->data_end);
}
