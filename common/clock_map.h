/* Converts a segment's ticks to CLOCK_MONOTONIC ns: piecewise-linear between
 * calibration pairs (ticks, ns), extrapolated with the nearest slope. */
#ifndef ASYS_CLOCK_MAP_H
#define ASYS_CLOCK_MAP_H

#include <stddef.h>
#include <stdint.h>

struct asys_clock_map {
    size_t count;
    size_t capacity;
    uint64_t *ticks;
    uint64_t *ns;
    double *slope; /* ns per tick from pair i to i+1 */
    size_t hint; /* last interval used: conversions come mostly in order */
};

void asys_clock_map_init(struct asys_clock_map *m);
void asys_clock_map_free(struct asys_clock_map *m);
/* Clock values past this are not times (2^62 ns is 146 years): a pair
 * that holds one is left out, and a conversion never goes beyond it. */
#define ASYS_CLOCK_VALUE_MAX (UINT64_C(1) << 62)

/* Adds a pair (one with a value past ASYS_CLOCK_VALUE_MAX is ignored); call
 * asys_clock_map_build() after the last one. */
int asys_clock_map_add(struct asys_clock_map *m, uint64_t ticks, uint64_t ns);
/* Sorts the pairs and drops ones that would make time run backwards;
 * returns the number of usable pairs. */
size_t asys_clock_map_build(struct asys_clock_map *m);
uint64_t asys_clock_map_ns(struct asys_clock_map *m, uint64_t ticks);

struct cJSON;
/* Adds a manifest's clock.pairs ([ticks, ns] each; malformed ones are left
 * out) and builds the map: the number of usable pairs, or -1 when memory
 * ran out. */
long asys_clock_map_load(struct asys_clock_map *m, const struct cJSON *manifest);

#endif
