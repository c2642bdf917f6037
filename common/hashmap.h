/* Two small open-addressing hash maps used by the importer:
 *   asys_u64map: uint64 key -> uint64 value (linear probing, backward-shift delete)
 *   asys_strmap: byte string -> uint32 value (keys copied into an arena) */
#ifndef ASYS_HASHMAP_H
#define ASYS_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct asys_u64map {
    uint64_t *keys;
    uint64_t *values;
    uint8_t *used;
    size_t capacity; /* power of two */
    size_t count;
};

void asys_u64map_init(struct asys_u64map *m);
void asys_u64map_free(struct asys_u64map *m);
/* Returns a pointer to the value slot of `key`, or NULL when absent. */
uint64_t *asys_u64map_get(const struct asys_u64map *m, uint64_t key);
/* Inserts or replaces; returns -1 on allocation failure. */
int asys_u64map_put(struct asys_u64map *m, uint64_t key, uint64_t value);
/* Removes `key`; returns 1 when it was present. */
int asys_u64map_remove(struct asys_u64map *m, uint64_t key);
/* Iteration: for (size_t i = 0; i < m->capacity; i++) if (m->used[i]) ... */

struct asys_strmap_entry {
    uint64_t hash;
    uint64_t offset; /* into the arena */
    uint32_t length;
    uint32_t value;
};

struct asys_strmap {
    struct asys_strmap_entry *entries; /* hash 0 = empty */
    size_t capacity;
    size_t count;
    char *arena;
    size_t arena_used;
    size_t arena_size;
};

void asys_strmap_init(struct asys_strmap *m);
void asys_strmap_free(struct asys_strmap *m);
/* Returns the value of `key`, or 0 when absent (0 is never stored). */
uint32_t asys_strmap_get(const struct asys_strmap *m, const char *key, size_t length);
/* Stores key -> value (value != 0); returns -1 on allocation failure. */
int asys_strmap_put(struct asys_strmap *m, const char *key, size_t length, uint32_t value);

uint64_t asys_hash_bytes(const void *data, size_t length);

#endif
