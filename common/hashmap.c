#include "hashmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

uint64_t asys_hash_bytes(const void *data, size_t length)
{
    const unsigned char *p = data;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ length;
    size_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        h = mix64(h ^ v);
    }
    if (i < length) {
        uint64_t v = 0;
        memcpy(&v, p + i, length - i);
        h = mix64(h ^ v ^ 0x5bd1e995ull);
    }
    return h ? h : 1;
}

/* ---- u64 map ------------------------------------------------------------ */

void asys_u64map_init(struct asys_u64map *m)
{
    memset(m, 0, sizeof *m);
}

void asys_u64map_free(struct asys_u64map *m)
{
    free(m->keys);
    free(m->values);
    free(m->used);
    memset(m, 0, sizeof *m);
}

static size_t u64_slot(const struct asys_u64map *m, uint64_t key)
{
    return (size_t)mix64(key) & (m->capacity - 1);
}

uint64_t *asys_u64map_get(const struct asys_u64map *m, uint64_t key)
{
    if (!m->count)
        return NULL;
    for (size_t i = u64_slot(m, key);; i = (i + 1) & (m->capacity - 1)) {
        if (!m->used[i])
            return NULL;
        if (m->keys[i] == key)
            return &m->values[i];
    }
}

static int u64_grow(struct asys_u64map *m)
{
    struct asys_u64map bigger;
    bigger.capacity = m->capacity ? m->capacity * 2 : 64;
    bigger.count = 0;
    bigger.keys = malloc(bigger.capacity * sizeof *bigger.keys);
    bigger.values = malloc(bigger.capacity * sizeof *bigger.values);
    bigger.used = calloc(bigger.capacity, 1);
    if (!bigger.keys || !bigger.values || !bigger.used) {
        asys_u64map_free(&bigger);
        return -1;
    }
    for (size_t i = 0; i < m->capacity; i++)
        if (m->used[i])
            asys_u64map_put(&bigger, m->keys[i], m->values[i]);
    asys_u64map_free(m);
    *m = bigger;
    return 0;
}

int asys_u64map_put(struct asys_u64map *m, uint64_t key, uint64_t value)
{
    if ((m->count + 1) * 4 > m->capacity * 3 && u64_grow(m) != 0)
        return -1;
    size_t i = u64_slot(m, key);
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & (m->capacity - 1);
    if (!m->used[i]) {
        m->used[i] = 1;
        m->keys[i] = key;
        m->count++;
    }
    m->values[i] = value;
    return 0;
}

int asys_u64map_remove(struct asys_u64map *m, uint64_t key)
{
    if (!m->count)
        return 0;
    size_t mask = m->capacity - 1;
    size_t i = u64_slot(m, key);
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    if (!m->used[i])
        return 0;
    /* Backward-shift deletion keeps probe chains intact without tombstones. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        size_t home = u64_slot(m, m->keys[j]);
        int movable = (hole <= j) ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            m->keys[hole] = m->keys[j];
            m->values[hole] = m->values[j];
            hole = j;
        }
    }
    m->used[hole] = 0;
    m->count--;
    return 1;
}

/* ---- string map ----------------------------------------------------------- */

void asys_strmap_init(struct asys_strmap *m)
{
    memset(m, 0, sizeof *m);
}

void asys_strmap_free(struct asys_strmap *m)
{
    free(m->entries);
    free(m->arena);
    memset(m, 0, sizeof *m);
}

static struct asys_strmap_entry *str_find(const struct asys_strmap *m, uint64_t hash,
                                          const char *key, size_t length)
{
    for (size_t i = (size_t)hash & (m->capacity - 1);; i = (i + 1) & (m->capacity - 1)) {
        struct asys_strmap_entry *e = &m->entries[i];
        if (!e->hash)
            return e;
        if (e->hash == hash && e->length == length &&
            (length == 0 || !memcmp(m->arena + e->offset, key, length)))
            return e;
    }
}

uint32_t asys_strmap_get(const struct asys_strmap *m, const char *key, size_t length)
{
    if (!m->count)
        return 0;
    const struct asys_strmap_entry *e = str_find(m, asys_hash_bytes(key, length), key, length);
    return e->hash ? e->value : 0;
}

static int str_grow(struct asys_strmap *m)
{
    size_t capacity = m->capacity ? m->capacity * 2 : 1024;
    struct asys_strmap_entry *entries = calloc(capacity, sizeof *entries);
    if (!entries)
        return -1;
    for (size_t i = 0; i < m->capacity; i++) {
        struct asys_strmap_entry *e = &m->entries[i];
        if (!e->hash)
            continue;
        size_t j = (size_t)e->hash & (capacity - 1);
        while (entries[j].hash)
            j = (j + 1) & (capacity - 1);
        entries[j] = *e;
    }
    free(m->entries);
    m->entries = entries;
    m->capacity = capacity;
    return 0;
}

int asys_strmap_put(struct asys_strmap *m, const char *key, size_t length, uint32_t value)
{
    if ((m->count + 1) * 4 > m->capacity * 3 && str_grow(m) != 0)
        return -1;
    uint64_t hash = asys_hash_bytes(key, length);
    struct asys_strmap_entry *e = str_find(m, hash, key, length);
    if (e->hash) {
        e->value = value;
        return 0;
    }
    if (m->arena_used + length > m->arena_size) {
        size_t size = m->arena_size ? m->arena_size : 65536;
        while (size < m->arena_used + length)
            size *= 2;
        char *arena = realloc(m->arena, size);
        if (!arena)
            return -1;
        m->arena = arena;
        m->arena_size = size;
    }
    if (length)
        memcpy(m->arena + m->arena_used, key, length);
    e->hash = hash;
    e->offset = m->arena_used;
    e->length = (uint32_t)length;
    e->value = value;
    m->arena_used += length;
    m->count++;
    return 0;
}
