/* (key, index) pairs sorted by key, equal keys kept in their order: an LSD
 * radix sort, 8 bits a pass over the span of the keys (a few passes for ids,
 * times and addresses).  qsort's comparisons cost the timeline export a
 * tenth of its time, and finalize 4.5 ms for a make -j2 recording's symbol
 * tables. */
#ifndef ASYS_KEY_SORT_H
#define ASYS_KEY_SORT_H

#include <stddef.h>
#include <stdint.h>

struct asys_key_index {
    int64_t key;
    uint32_t index;
};

/* 0, or -1 when out of memory (the items unchanged). */
int asys_key_index_sort(struct asys_key_index *items, size_t count);

#endif
