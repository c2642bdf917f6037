#include "clock_map.h"

#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "json_util.h"

void asys_clock_map_init(struct asys_clock_map *m)
{
    memset(m, 0, sizeof *m);
}

void asys_clock_map_free(struct asys_clock_map *m)
{
    free(m->ticks);
    free(m->ns);
    free(m->slope);
    memset(m, 0, sizeof *m);
}

int asys_clock_map_add(struct asys_clock_map *m, uint64_t ticks, uint64_t ns)
{
    if (ticks > ASYS_CLOCK_VALUE_MAX || ns > ASYS_CLOCK_VALUE_MAX)
        return 0; /* from a file: not a clock reading */
    if (m->count == m->capacity) {
        size_t cap = m->capacity ? m->capacity * 2 : 16;
        uint64_t *t = realloc(m->ticks, cap * sizeof *t);
        if (!t)
            return -1;
        m->ticks = t;
        uint64_t *n = realloc(m->ns, cap * sizeof *n);
        if (!n)
            return -1;
        m->ns = n;
        m->capacity = cap;
    }
    m->ticks[m->count] = ticks;
    m->ns[m->count] = ns;
    m->count++;
    return 0;
}

struct pair {
    uint64_t ticks, ns;
};

static int by_ticks(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

size_t asys_clock_map_build(struct asys_clock_map *m)
{
    if (!m->count)
        return 0;
    struct pair *pairs = malloc(m->count * sizeof *pairs);
    if (!pairs)
        return 0;
    for (size_t i = 0; i < m->count; i++)
        pairs[i] = (struct pair){m->ticks[i], m->ns[i]};
    qsort(pairs, m->count, sizeof *pairs, by_ticks);
    size_t kept = 0;
    for (size_t i = 0; i < m->count; i++) {
        if (kept && (pairs[i].ticks == pairs[kept - 1].ticks || pairs[i].ns <= pairs[kept - 1].ns))
            continue; /* duplicate, or time running backwards: a bad sample */
        pairs[kept++] = pairs[i];
    }
    for (size_t i = 0; i < kept; i++) {
        m->ticks[i] = pairs[i].ticks;
        m->ns[i] = pairs[i].ns;
    }
    free(pairs);
    m->count = kept;
    free(m->slope);
    m->slope = malloc((kept ? kept : 1) * sizeof *m->slope);
    if (!m->slope) {
        m->count = 0;
        return 0;
    }
    for (size_t i = 0; i + 1 < kept; i++)
        m->slope[i] = (double)(m->ns[i + 1] - m->ns[i]) / (double)(m->ticks[i + 1] - m->ticks[i]);
    if (kept)
        m->slope[kept - 1] = kept > 1 ? m->slope[kept - 2] : 1.0;
    m->hint = 0;
    return kept;
}

uint64_t asys_clock_map_ns(struct asys_clock_map *m, uint64_t ticks)
{
    if (!m->count)
        return ticks;
    size_t i = m->hint;
    if (ticks < m->ticks[i] || (i + 1 < m->count && ticks >= m->ticks[i + 1])) {
        /* binary search for the last pair at or before `ticks` */
        size_t lo = 0, hi = m->count;
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (m->ticks[mid] <= ticks)
                lo = mid;
            else
                hi = mid;
        }
        i = lo;
        m->hint = i;
    }
    double offset = ticks >= m->ticks[i] ? (double)(ticks - m->ticks[i]) * m->slope[i]
                                         : -(double)(m->ticks[i] - ticks) * m->slope[i];
    /* in doubles, clamped: a wild tick or slope never overflows */
    double ns = (double)m->ns[i] + offset + 0.5;
    if (!(ns > 0))
        return 0;
    return ns >= (double)ASYS_CLOCK_VALUE_MAX ? ASYS_CLOCK_VALUE_MAX : (uint64_t)ns;
}

long asys_clock_map_load(struct asys_clock_map *m, const cJSON *manifest)
{
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(manifest, "clock"), "pairs");
    const cJSON *pair;
    cJSON_ArrayForEach(pair, pairs)
    {
        uint64_t ticks, ns;
        if (asys_json_to_u64(cJSON_GetArrayItem(pair, 0), &ticks) == 0 &&
            asys_json_to_u64(cJSON_GetArrayItem(pair, 1), &ns) == 0 &&
            asys_clock_map_add(m, ticks, ns) != 0)
            return -1;
    }
    return (long)asys_clock_map_build(m);
}
