/* Growing arrays: room for one more item, doubling the capacity. */
#ifndef ASYS_GROW_H
#define ASYS_GROW_H

#include <stdlib.h>
#include <string.h>

/* When count == *cap, reallocates *items_ptr (a pointer to the array
 * pointer) to twice *cap items (`initial` the first time).  Returns 0, or -1
 * when memory runs out (the array is left as it was). */
static inline int asys_grow(void *items_ptr, size_t *cap, size_t count, size_t item_size,
                            size_t initial)
{
    if (count < *cap)
        return 0;
    size_t more = *cap ? *cap * 2 : initial;
    void *items;
    memcpy(&items, items_ptr, sizeof items);
    void *bigger = realloc(items, more * item_size);
    if (!bigger)
        return -1;
    memcpy(items_ptr, &bigger, sizeof bigger);
    *cap = more;
    return 0;
}

#endif
