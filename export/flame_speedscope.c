/* A speedscope profile (https://www.speedscope.app/file-format-schema.json):
 * the functions as shared frames, one "sampled" profile per thread with its
 * stacks in time order (outermost frame first), consecutive samples of the
 * same stack merged into one weight.  CPU samples weigh 1 ("none"), calls
 * their duration ("nanoseconds"). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "output_format.h"

static void put_string(FILE *out, const char *s)
{
    asys_json_write_string(out, s, strlen(s));
}

static void write_frames(FILE *out, const struct stack_set *set)
{
    fputs("\"shared\":{\"frames\":[", out);
    for (size_t i = 0; i < set->function_count; i++) {
        const struct stack_function *f = &set->functions[i];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
        put_string(out, f->name);
        if (f->file) {
            fputs(",\"file\":", out);
            put_string(out, f->file);
            if (f->line > 0)
                fprintf(out, ",\"line\":%" PRId64, f->line);
        } else if (f->module) {
            fputs(",\"file\":", out);
            put_string(out, f->module);
        }
        putc('}', out);
    }
    fputs("]},\n", out);
}

static void write_stack(FILE *out, const struct stack_set *set, uint32_t chain)
{
    const struct stack_chain *c = &set->chains[chain];
    const uint32_t *fn = set->chain_functions + c->first;
    putc('[', out);
    for (uint32_t i = c->depth; i-- > 0;)
        fprintf(out, i + 1 < c->depth ? ",%" PRIu32 : "%" PRIu32, fn[i]);
    putc(']', out);
}

/* speedscope's unit of the weights: CPU samples weigh the CPU time they
 * stand for where the period is known, calls their time, allocations bytes. */
static const char *unit_of(const struct stack_set *set)
{
    if (!strcmp(set->source->unit, "ns") || set->ns_per_sample > 0)
        return "nanoseconds";
    return !strcmp(set->source->unit, "bytes") ? "bytes" : "none";
}

static uint64_t weight_of(const struct stack_set *set, const struct stack_sample *x)
{
    return set->ns_per_sample > 0 ? (uint64_t)((double)x->weight * set->ns_per_sample + 0.5)
                                  : x->weight;
}

/* One thread's profile; `order` lists its samples in time order. */
static void write_profile(FILE *out, const struct stack_set *set, uint32_t thread,
                          const uint32_t *order, size_t count)
{
    char label[320];
    stack_thread_label(&set->threads[thread], label, sizeof label);
    uint64_t whole = 0;
    for (size_t i = 0; i < count; i++)
        whole += weight_of(set, &set->samples[order[i]]);
    fputs("{\"type\":\"sampled\",\"name\":", out);
    put_string(out, label);
    fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
            unit_of(set), whole);
    size_t runs = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t chain = set->samples[order[i]].chain;
        if (i && set->samples[order[i - 1]].chain == chain)
            continue;
        fputs(runs++ ? ",\n" : "\n", out);
        write_stack(out, set, chain);
    }
    fputs("],\n\"weights\":[", out);
    uint64_t run = 0;
    runs = 0;
    for (size_t i = 0; i < count; i++) {
        run += weight_of(set, &set->samples[order[i]]);
        if (i + 1 < count && set->samples[order[i + 1]].chain == set->samples[order[i]].chain)
            continue;
        fprintf(out, runs++ ? ",%" PRIu64 : "%" PRIu64, run);
        run = 0;
    }
    fputs("]}", out);
}

int flame_write_speedscope(FILE *out, const struct flame_input *in, struct asys_err *err)
{
    const struct stack_set *set = in->set;
    size_t *first = calloc(set->thread_count + 1, sizeof *first);
    uint32_t *order = malloc((set->sample_count ? set->sample_count : 1) * sizeof *order);
    int rc = -1;
    if (!first || !order) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* samples grouped by thread, each group still in time order */
    for (size_t i = 0; i < set->sample_count; i++)
        first[set->samples[i].thread + 1]++;
    for (size_t t = 0; t < set->thread_count; t++)
        first[t + 1] += first[t];
    size_t *fill = calloc(set->thread_count ? set->thread_count : 1, sizeof *fill);
    if (!fill) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < set->sample_count; i++) {
        uint32_t t = set->samples[i].thread;
        order[first[t] + fill[t]++] = (uint32_t)i;
    }
    free(fill);
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", out);
    write_frames(out, set);
    fputs("\"profiles\":[\n", out);
    for (size_t t = 0; t < set->thread_count; t++) {
        if (t)
            fputs(",\n", out);
        write_profile(out, set, (uint32_t)t, order + first[t], first[t + 1] - first[t]);
    }
    fputs("],\n\"name\":", out);
    put_string(out, in->title);
    fputs(",\"activeProfileIndex\":0,\"exporter\":\"asys-export\"}\n", out);
    rc = ferror(out) ? asys_fail_errno(err, errno ? errno : EIO, "cannot write the profile") : 0;
out:
    free(first);
    free(order);
    return rc;
}
