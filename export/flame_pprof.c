/* A pprof profile (github.com/google/pprof, proto/profile.proto), written
 * gzip-compressed as `go tool pprof` expects.
 *   - Values: two per sample where the source has them, named as Go's
 *     profiles name theirs: CPU samples and the CPU time they stand for
 *     (samples/count, cpu/nanoseconds), calls and their time (calls/count,
 *     time/nanoseconds), allocations and their bytes (alloc_objects/count,
 *     alloc_space/bytes; leaks: inuse_*).
 *   - Mappings: the loaded objects with their file, build id and address
 *     range; locations: one per frame address in its mapping, its lines the
 *     functions there (the ones inlined at it first), so -list, -disasm and
 *     -addresses work on the binaries.
 *   - One Sample per (thread, stack) with its values and the thread as
 *     labels (pid, tid, thread), so `-tagfocus` picks a thread.
 * Field numbers are profile.proto's. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "hashmap.h"
#include "protobuf.h"

enum {
    PROFILE_SAMPLE_TYPE = 1,
    PROFILE_SAMPLE = 2,
    PROFILE_MAPPING = 3,
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
    MAPPING_ID = 1,
    MAPPING_MEMORY_START = 2,
    MAPPING_MEMORY_LIMIT = 3,
    MAPPING_FILE_OFFSET = 4,
    MAPPING_FILENAME = 5,
    MAPPING_BUILD_ID = 6,
    MAPPING_HAS_FUNCTIONS = 7,
    MAPPING_HAS_FILENAMES = 8,
    MAPPING_HAS_LINE_NUMBERS = 9,
    LOCATION_ID = 1,
    LOCATION_MAPPING_ID = 2,
    LOCATION_ADDRESS = 3,
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
    struct pb_buf table; /* the string_table fields, in index order */
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

/* ---- locations ----------------------------------------------------------------
 * A frame address in its mapping is one location; the frames a chain has
 * there (the functions inlined at it, then the one holding them) are its
 * lines, innermost first.  A frame without an address (the call name a
 * source puts at the leaf) is a location of its function alone. */

struct locations {
    struct asys_strmap ids; /* (module, address) or (0, function) -> location id */
    uint32_t count;
    struct pb_buf out; /* the Location messages */
};

/* The frames of a chain from index `at` that share one location: 1 or more. */
static uint32_t location_run(const struct stack_set *set, const struct stack_chain *c, uint32_t at)
{
    const struct stack_frame_ref *f = &set->chain_frames[c->first];
    uint32_t n = 1;
    while (f[at].address && at + n < c->depth && f[at + n].address == f[at].address &&
           f[at + n].module == f[at].module)
        n++;
    return n;
}

/* The location of frames [at, at + n) of chain c, written the first time. */
static uint64_t location_of(struct locations *l, const struct stack_set *set,
                            const struct stack_chain *c, uint32_t at, uint32_t n)
{
    const struct stack_frame_ref *f = &set->chain_frames[c->first + at];
    const uint32_t *fn = &set->chain_functions[c->first + at];
    uint64_t key[2] = {f->address ? f->module : 0, f->address ? f->address : fn[0]};
    uint32_t known = asys_strmap_get(&l->ids, (const char *)key, sizeof key);
    if (known)
        return known;
    if (asys_strmap_put(&l->ids, (const char *)key, sizeof key, ++l->count) != 0) {
        l->out.oom = 1;
        return 0;
    }
    size_t loc = pb_open(&l->out, PROFILE_LOCATION);
    pb_uint(&l->out, LOCATION_ID, l->count);
    if (f->address && f->module) {
        pb_uint(&l->out, LOCATION_MAPPING_ID, f->module);
        pb_uint(&l->out, LOCATION_ADDRESS, f->address);
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct stack_function *func = &set->functions[fn[i]];
        int64_t number = f[i].line ? f[i].line : func->line; /* the frame's own line */
        size_t line = pb_open(&l->out, LOCATION_LINE);
        pb_uint(&l->out, LINE_FUNCTION_ID, fn[i] + 1);
        if (number > 0)
            pb_uint(&l->out, LINE_LINE, (uint64_t)number);
        pb_close(&l->out, line);
    }
    pb_close(&l->out, loc);
    return l->count;
}

/* ---- samples ------------------------------------------------------------------- */

struct sample_values {
    uint64_t weight, count;
};

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

static void write_sample(struct pb_buf *b, struct strings *s, struct locations *l,
                         const struct stack_set *set, uint32_t thread, uint32_t chain,
                         const struct sample_values *v, int with_count)
{
    const struct stack_chain *c = &set->chains[chain];
    const struct stack_thread *t = &set->threads[thread];
    size_t at = pb_open(b, PROFILE_SAMPLE);
    size_t ids = pb_open(b, SAMPLE_LOCATION_ID); /* packed; the leaf first */
    for (uint32_t i = 0; i < c->depth;) {
        uint32_t n = location_run(set, c, i);
        pb_varint(b, location_of(l, set, c, i, n));
        i += n;
    }
    pb_close(b, ids);
    size_t values = pb_open(b, SAMPLE_VALUE); /* packed: the count first, as Go's */
    if (with_count)
        pb_varint(b, v->count);
    pb_varint(b, v->weight);
    pb_close(b, values);
    label(b, s, "pid", NULL, t->pid);
    label(b, s, "tid", NULL, t->tid);
    if (t->name)
        label(b, s, "thread", t->name, 0);
    pb_close(b, at);
}

/* Samples per (thread, stack), in the order each pair first occurs.  For
 * CPU samples the second value is the CPU time: the count times the period. */
static int write_samples(struct pb_buf *b, struct strings *s, struct locations *l,
                         const struct stack_set *set, int cpu_time)
{
    struct asys_u64map slots; /* thread << 32 | chain -> index into values */
    struct sample_values *values =
        calloc(set->sample_count ? set->sample_count : 1, sizeof *values);
    const struct stack_sample **firsts =
        malloc((set->sample_count ? set->sample_count : 1) * sizeof *firsts);
    size_t used = 0;
    int rc = -1;
    asys_u64map_init(&slots);
    if (!values || !firsts)
        goto out;
    for (size_t i = 0; i < set->sample_count; i++) {
        const struct stack_sample *x = &set->samples[i];
        uint64_t key = (uint64_t)x->thread << 32 | x->chain;
        uint64_t *slot = asys_u64map_get(&slots, key);
        if (!slot) {
            if (asys_u64map_put(&slots, key, used) != 0)
                goto out;
            firsts[used++] = x;
            slot = asys_u64map_get(&slots, key);
        }
        values[*slot].weight += x->weight;
        values[*slot].count += x->count;
    }
    for (size_t i = 0; i < used; i++) {
        struct sample_values v = values[i];
        if (cpu_time) { /* samples, CPU ns */
            v.count = v.weight;
            v.weight = (uint64_t)((double)v.weight * set->ns_per_sample + 0.5);
        }
        write_sample(b, s, l, set, firsts[i]->thread, firsts[i]->chain, &v,
                     cpu_time || set->source->count_type != NULL);
    }
    rc = 0;
out:
    asys_u64map_free(&slots);
    free(values);
    free(firsts);
    return rc;
}

/* A function's name for pprof, which marks inlined lines itself. */
static uint64_t function_name_id(struct strings *s, const char *name)
{
    size_t len = strlen(name), mark = sizeof " (inlined)" - 1;
    if (len <= mark || strcmp(name + len - mark, " (inlined)"))
        return string_id(s, name);
    char *plain = strndup(name, len - mark);
    uint64_t id = plain ? string_id(s, plain) : string_id(s, name);
    free(plain);
    return id;
}

static void write_functions(struct pb_buf *b, struct strings *s, const struct stack_set *set)
{
    for (size_t i = 0; i < set->function_count; i++) {
        const struct stack_function *f = &set->functions[i];
        size_t at = pb_open(b, PROFILE_FUNCTION);
        pb_uint(b, FUNCTION_ID, i + 1);
        pb_uint(b, FUNCTION_NAME, function_name_id(s, f->name));
        pb_uint(b, FUNCTION_SYSTEM_NAME, function_name_id(s, f->name));
        pb_uint(b, FUNCTION_FILENAME, string_id(s, f->file ? f->file : f->module));
        pb_close(b, at);
    }
}

/* Where a module's file begins in memory, and the file offset there: the
 * first loaded segment of the file (from its program headers; pprof finds
 * a binary's symbols for an address from them), else the lowest address
 * seen, at its virtual address as offset (what linkers lay out for
 * position-independent files). */
static void mapping_start(const struct stack_module *m, uint64_t *start, uint64_t *offset)
{
    *start = m->start;
    *offset = m->start - m->load_bias;
    FILE *f = m->path[0] == '/' ? fopen(m->path, "rb") : NULL;
    Elf64_Ehdr eh;
    if (!f)
        return;
    if (fread(&eh, sizeof eh, 1, f) == 1 && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) &&
        eh.e_phnum < 256 && fseek(f, (long)eh.e_phoff, SEEK_SET) == 0) {
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (fread(&ph, sizeof ph, 1, f) != 1)
                break;
            if (ph.p_type == PT_LOAD) { /* the first: the lowest, by the ELF rules */
                uint64_t at = (ph.p_vaddr & ~(uint64_t)0xfff) + m->load_bias;
                if (at <= m->start) {
                    *start = at;
                    *offset = ph.p_offset & ~(uint64_t)0xfff;
                }
                break;
            }
        }
    }
    fclose(f);
}

/* The program's own object, which pprof takes to be the first mapping: the
 * one `main` is in, else the first that is neither a library nor a pseudo
 * file ([kernel]), else the first. */
static size_t main_module(const struct stack_set *set)
{
    for (size_t i = 0; i < set->chain_function_count; i++)
        if (set->chain_frames[i].module &&
            !strcmp(set->functions[set->chain_functions[i]].name, "main"))
            return set->chain_frames[i].module - 1;
    for (size_t i = 0; i < set->module_count; i++) {
        const char *base = strrchr(set->modules[i].path, '/');
        if (base && !strstr(base, ".so"))
            return i;
    }
    return 0;
}

/* The objects the frames lie in, the program's first; a mapping's file
 * offset is that of its lowest address (0 for the first loaded segment of
 * an ELF file). */
static void write_mappings(struct pb_buf *b, struct strings *s, const struct stack_set *set)
{
    size_t first = main_module(set);
    for (size_t k = 0; k < set->module_count; k++) {
        size_t i = k == 0 ? first : k <= first ? k - 1 : k;
        const struct stack_module *m = &set->modules[i];
        size_t at = pb_open(b, PROFILE_MAPPING);
        pb_uint(b, MAPPING_ID, i + 1);
        uint64_t start, offset;
        if (m->path[0] == '[') /* [kernel], [vdso]: not files */
            start = m->start, offset = 0;
        else
            mapping_start(m, &start, &offset);
        pb_uint(b, MAPPING_MEMORY_START, start);
        pb_uint(b, MAPPING_MEMORY_LIMIT, m->end);
        pb_uint(b, MAPPING_FILE_OFFSET, offset);
        pb_uint(b, MAPPING_FILENAME, string_id(s, m->path));
        if (m->build_id)
            pb_uint(b, MAPPING_BUILD_ID, string_id(s, m->build_id));
        pb_uint(b, MAPPING_HAS_FUNCTIONS, 1);
        pb_uint(b, MAPPING_HAS_FILENAMES, 1);
        pb_uint(b, MAPPING_HAS_LINE_NUMBERS, 1);
        pb_close(b, at);
    }
}

int flame_write_pprof(FILE *out, const struct flame_input *in, struct asys_err *err)
{
    const struct stack_set *set = in->set;
    const struct stack_source *src = set->source;
    struct strings s = {0};
    struct locations l = {0};
    struct pb_buf body = {0};
    int cpu_time = set->ns_per_sample > 0;
    const char *unit = !strcmp(src->unit, "ns") ? "nanoseconds" : src->unit;
    const char *weight_type = cpu_time ? "cpu" : src->weight_type;
    int rc = -1;
    asys_strmap_init(&s.ids);
    asys_strmap_init(&l.ids);
    /* the count first (samples, calls, objects), then its weight */
    if (cpu_time)
        value_type(&body, PROFILE_SAMPLE_TYPE, &s, src->weight_type, "count");
    else if (src->count_type)
        value_type(&body, PROFILE_SAMPLE_TYPE, &s, src->count_type, "count");
    value_type(&body, PROFILE_SAMPLE_TYPE, &s, weight_type,
               cpu_time                   ? "nanoseconds"
               : !strcmp(unit, "samples") ? "count"
                                          : unit);
    if (write_samples(&body, &s, &l, set, cpu_time) != 0) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    write_mappings(&body, &s, set);
    write_functions(&body, &s, set);
    if (cpu_time) { /* a sample every period of CPU time */
        value_type(&body, PROFILE_PERIOD_TYPE, &s, "cpu", "nanoseconds");
        pb_uint(&body, PROFILE_PERIOD, (uint64_t)(set->ns_per_sample + 0.5));
    }
    pb_uint(&body, PROFILE_DEFAULT_SAMPLE_TYPE, string_id(&s, weight_type));
    if (body.oom || s.table.oom || l.out.oom) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* string_table[0] must be "": an empty string field first */
    static const uint8_t empty_string[] = {PROFILE_STRING_TABLE << 3 | PB_LEN, 0};
    if (fwrite(empty_string, 1, sizeof empty_string, out) != sizeof empty_string ||
        fwrite(s.table.data, 1, s.table.len, out) != s.table.len ||
        fwrite(body.data, 1, body.len, out) != body.len ||
        fwrite(l.out.data, 1, l.out.len, out) != l.out.len) {
        asys_fail_errno(err, errno ? errno : EIO, "cannot write the profile");
        goto out;
    }
    rc = 0;
out:
    asys_strmap_free(&s.ids);
    asys_strmap_free(&l.ids);
    pb_free(&s.table);
    pb_free(&body);
    pb_free(&l.out);
    return rc;
}
