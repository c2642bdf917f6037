/* (key, index) pairs sorted by key (key_sort.h). */
#include "key_sort.h"

#include <stdlib.h>
#include <string.h>

/* A key's bits in an order unsigned comparison keeps. */
static uint64_t key_bits(int64_t key)
{
    return (uint64_t)key ^ (1ull << 63);
}

int asys_key_index_sort(struct asys_key_index *items, size_t count)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    int sorted = 1;
    for (size_t i = 0; i < count; i++) {
        uint64_t k = key_bits(items[i].key);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
        if (i && items[i].key < items[i - 1].key)
            sorted = 0;
    }
    if (sorted)
        return 0;
    struct asys_key_index *tmp = malloc(count * sizeof *tmp), *src = items, *dst = tmp;
    if (!tmp)
        return -1;
    for (unsigned shift = 0; shift < 64 && ((hi - lo) >> shift) != 0; shift += 8) {
        size_t at[257] = {0};
        for (size_t i = 0; i < count; i++)
            at[((key_bits(src[i].key) - lo) >> shift & 0xff) + 1]++;
        for (size_t d = 0; d < 256; d++)
            at[d + 1] += at[d];
        for (size_t i = 0; i < count; i++)
            dst[at[(key_bits(src[i].key) - lo) >> shift & 0xff]++] = src[i];
        struct asys_key_index *t = src;
        src = dst;
        dst = t;
    }
    if (src != items)
        memcpy(items, src, count * sizeof *items);
    free(tmp);
    return 0;
}
