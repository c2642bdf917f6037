/* A pprof profile (github.com/google/pprof, proto/profile.proto), written
 * gzip-compressed as `go tool pprof` expects: one Function and one Location
 * per function of the stack set, one Sample per (thread, stack) with its
 * weight and the thread as labels (pid, tid, thread), so `-tagfocus` picks
 * a thread.  Field numbers are profile.proto's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "hashmap.h"
#include "protobuf.h"

enum {
    PROFILE_SAMPLE_TYPE = 1,
    PROFILE_SAMPLE = 2,
    PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6,
    PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12,
    PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUE_TYPE_TYPE = 1,
    VALUE_TYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1,
    SAMPLE_VALUE = 2,
    SAMPLE_LABEL = 3,
    LABEL_KEY = 1,
    LABEL_STR = 2,
    LABEL_NUM = 3,
    LOCATION_ID = 1,
    LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1,
    LINE_LINE = 2,
    FUNCTION_ID = 1,
    FUNCTION_NAME = 2,
    FUNCTION_SYSTEM_NAME = 3,
    FUNCTION_FILENAME = 4,
};

/* The string table: index 0 is "", each text once. */
struct strings {
    struct asys_strmap ids; /* text -> index */
    struct pb_buf table;    /* the string_table fields, in index order */
    uint32_t count;
};

static uint64_t string_id(struct strings *s, const char *text)
{
    if (!text || !*text)
        return 0;
    size_t len = strlen(text);
    uint32_t known = asys_strmap_get(&s->ids, text, len);
    if (known)
        return known;
    if (asys_strmap_put(&s->ids, text, len, ++s->count) != 0) {
        s->table.oom = 1;
        return 0;
    }
    pb_string(&s->table, PROFILE_STRING_TABLE, text);
    return s->count;
}

static void value_type(struct pb_buf *b, uint32_t field, struct strings *s, const char *type,
                       const char *unit)
{
    size_t at = pb_open(b, field);
    pb_uint(b, VALUE_TYPE_TYPE, string_id(s, type));
    pb_uint(b, VALUE_TYPE_UNIT, string_id(s, unit));
    pb_close(b, at);
}

static void label(struct pb_buf *b, struct strings *s, const char *key, const char *text,
                  int64_t number)
{
    size_t at = pb_open(b, SAMPLE_LABEL);
    pb_uint(b, LABEL_KEY, string_id(s, key));
    if (text)
        pb_uint(b, LABEL_STR, string_id(s, text));
    else
        pb_uint(b, LABEL_NUM, (uint64_t)number);
    pb_close(b, at);
}

static void write_sample(struct pb_buf *b, struct strings *s, const struct stack_set *set,
                         uint32_t thread, uint32_t chain, uint64_t weight)
{
    const struct stack_chain *c = &set->chains[chain];
    const struct stack_thread *t = &set->threads[thread];
    size_t at = pb_open(b, PROFILE_SAMPLE);
    size_t ids = pb_open(b, SAMPLE_LOCATION_ID); /* packed; the leaf first */
    for (uint32_t i = 0; i < c->depth; i++)
        pb_varint(b, (uint64_t)set->chain_functions[c->first + i] + 1);
    pb_close(b, ids);
    pb_uint(b, SAMPLE_VALUE, weight);
    label(b, s, "pid", NULL, t->pid);
    label(b, s, "tid", NULL, t->tid);
    if (t->name)
        label(b, s, "thread", t->name, 0);
    pb_close(b, at);
}

/* Samples per (thread, stack), in the order each pair first occurs. */
static int write_samples(struct pb_buf *b, struct strings *s, const struct stack_set *set)
{
    struct asys_u64map slots; /* thread << 32 | chain -> index into weights */
    uint64_t *weights = malloc((set->sample_count ? set->sample_count : 1) * sizeof *weights);
    const struct stack_sample **firsts =
        malloc((set->sample_count ? set->sample_count : 1) * sizeof *firsts);
    size_t used = 0;
    int rc = -1;
    asys_u64map_init(&slots);
    if (!weights || !firsts)
        goto out;
    for (size_t i = 0; i < set->sample_count; i++) {
        const struct stack_sample *x = &set->samples[i];
        uint64_t key = (uint64_t)x->thread << 32 | x->chain;
        uint64_t *slot = asys_u64map_get(&slots, key);
        if (slot) {
            weights[*slot] += x->weight;
            continue;
        }
        if (asys_u64map_put(&slots, key, used) != 0)
            goto out;
        firsts[used] = x;
        weights[used++] = x->weight;
    }
    for (size_t i = 0; i < used; i++)
        write_sample(b, s, set, firsts[i]->thread, firsts[i]->chain, weights[i]);
    rc = 0;
out:
    asys_u64map_free(&slots);
    free(weights);
    free(firsts);
    return rc;
}

static void write_functions(struct pb_buf *b, struct strings *s, const struct stack_set *set)
{
    for (size_t i = 0; i < set->function_count; i++) {
        const struct stack_function *f = &set->functions[i];
        size_t at = pb_open(b, PROFILE_FUNCTION);
        pb_uint(b, FUNCTION_ID, i + 1);
        pb_uint(b, FUNCTION_NAME, string_id(s, f->name));
        pb_uint(b, FUNCTION_SYSTEM_NAME, string_id(s, f->name));
        pb_uint(b, FUNCTION_FILENAME, string_id(s, f->file ? f->file : f->module));
        pb_close(b, at);
        at = pb_open(b, PROFILE_LOCATION);
        pb_uint(b, LOCATION_ID, i + 1);
        size_t line = pb_open(b, LOCATION_LINE);
        pb_uint(b, LINE_FUNCTION_ID, i + 1);
        if (f->line > 0)
            pb_uint(b, LINE_LINE, (uint64_t)f->line);
        pb_close(b, line);
        pb_close(b, at);
    }
}

int flame_write_pprof(FILE *out, const struct flame_input *in, struct asys_err *err)
{
    const struct stack_set *set = in->set;
    struct strings s = {0};
    struct pb_buf body = {0};
    int is_cpu = !strcmp(set->source->unit, "samples");
    int rc = -1;
    asys_strmap_init(&s.ids);
    value_type(&body, PROFILE_SAMPLE_TYPE, &s, is_cpu ? "samples" : set->source->name,
               is_cpu ? "count" : "nanoseconds");
    if (write_samples(&body, &s, set) != 0) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    write_functions(&body, &s, set);
    value_type(&body, PROFILE_PERIOD_TYPE, &s, is_cpu ? "samples" : set->source->name,
               is_cpu ? "count" : "nanoseconds");
    pb_uint(&body, PROFILE_PERIOD, 1);
    pb_uint(&body, PROFILE_DEFAULT_SAMPLE_TYPE,
            string_id(&s, is_cpu ? "samples" : set->source->name));
    if (body.oom || s.table.oom) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* string_table[0] must be "": an empty string field first */
    static const uint8_t empty_string[] = {PROFILE_STRING_TABLE << 3 | PB_LEN, 0};
    if (fwrite(empty_string, 1, sizeof empty_string, out) != sizeof empty_string ||
        fwrite(s.table.data, 1, s.table.len, out) != s.table.len ||
        fwrite(body.data, 1, body.len, out) != body.len) {
        asys_fail_errno(err, errno ? errno : EIO, "cannot write the profile");
        goto out;
    }
    rc = 0;
out:
    asys_strmap_free(&s.ids);
    pb_free(&s.table);
    pb_free(&body);
    return rc;
}
