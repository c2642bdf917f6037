/* The scopes of a code address, each unit's top-level DIEs listed once (cu_scopes.h). */
#include "cu_scopes.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"
#include "hashmap.h"

struct pc_range {
    Dwarf_Addr begin, end;
};

/* A top-level DIE and its ranges (ranges[first .. first + count)). */
struct top_die {
    Dwarf_Die die;
    size_t first, count;
    int error; /* dwarf_ranges failed after those: dwarf_haspc would fail past them */
};

struct cu_list {
    struct top_die *dies;
    size_t die_count, die_cap;
    struct pc_range *ranges;
    size_t range_count, range_cap;
    int broken; /* the unit's DIEs did not all read: dwarf_getscopes decides */
};

struct asys_cu_scopes {
    struct asys_u64map units; /* unit DIE offset -> struct cu_list * */
};

struct asys_cu_scopes *asys_cu_scopes_new(void)
{
    struct asys_cu_scopes *c = calloc(1, sizeof *c);
    if (c)
        asys_u64map_init(&c->units);
    return c;
}

static void list_free(struct cu_list *l)
{
    if (!l)
        return;
    free(l->dies);
    free(l->ranges);
    free(l);
}

void asys_cu_scopes_free(struct asys_cu_scopes *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->units.capacity; i++)
        if (c->units.used[i])
            list_free((struct cu_list *)(uintptr_t)c->units.values[i]);
    asys_u64map_free(&c->units);
    free(c);
}

/* Appends the DIE and its ranges as dwarf_haspc reads them. */
static int add_die(struct cu_list *l, Dwarf_Die *die)
{
    if (asys_grow(&l->dies, &l->die_cap, l->die_count, sizeof *l->dies, 64))
        return -1;
    struct top_die *t = &l->dies[l->die_count++];
    *t = (struct top_die){.die = *die, .first = l->range_count};
    Dwarf_Addr base, begin, end;
    ptrdiff_t offset = 0;
    while ((offset = dwarf_ranges(die, offset, &base, &begin, &end)) > 0) {
        if (asys_grow(&l->ranges, &l->range_cap, l->range_count, sizeof *l->ranges, 64))
            return -1;
        l->ranges[l->range_count++] = (struct pc_range){begin, end};
        t->count++;
    }
    t->error = offset < 0;
    return 0;
}

/* The unit's top-level DIEs in order, as dwarf_getscopes visits them. */
static struct cu_list *list_read(Dwarf_Die *cu)
{
    struct cu_list *l = calloc(1, sizeof *l);
    Dwarf_Die die;
    if (!l)
        return NULL;
    int rc = dwarf_child(cu, &die);
    while (rc == 0 && !l->broken) {
        l->broken = add_die(l, &die) != 0;
        rc = dwarf_siblingof(&die, &die);
    }
    l->broken |= rc < 0;
    return l;
}

static struct cu_list *list_of(struct asys_cu_scopes *c, Dwarf_Die *cu)
{
    uint64_t key = dwarf_dieoffset(cu);
    uint64_t *v = asys_u64map_get(&c->units, key);
    if (v)
        return (struct cu_list *)(uintptr_t)*v;
    struct cu_list *l = list_read(cu);
    if (l && asys_u64map_put(&c->units, key, (uint64_t)(uintptr_t)l) != 0) {
        list_free(l);
        return NULL;
    }
    return l;
}

/* 1: the DIE holds pc; 0: not; -1: dwarf_haspc would have failed. */
static int holds(const struct cu_list *l, const struct top_die *t, Dwarf_Addr pc)
{
    for (size_t i = t->first; i < t->first + t->count; i++)
        if (pc >= l->ranges[i].begin && pc < l->ranges[i].end)
            return 1;
    return t->error ? -1 : 0;
}

/* The tags a walk for pc goes down through, as dwarf_getscopes does; an
 * inlined instance, or a DIE of another tag holding pc, ends it. */
static int is_block(int tag)
{
    return tag == DW_TAG_lexical_block || tag == DW_TAG_try_block || tag == DW_TAG_catch_block ||
           tag == DW_TAG_with_stmt || tag == DW_TAG_entry_point || tag == DW_TAG_subprogram;
}

/* The first child of `die` holding pc into *child: 1; none: 0; -1 where
 * dwarf_getscopes would fail or treat an error as no. */
static int child_holding(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *child)
{
    int rc = dwarf_child(die, child);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    do {
        int in = dwarf_haspc(child, pc);
        if (in)
            return in;
    } while ((rc = dwarf_siblingof(child, child)) == 0);
    return rc < 0 ? -1 : 0;
}

/* 0 when only the function and blocks in it hold pc (no inlined instance);
 * 1 when dwarf_getscopes must decide (an inlined instance holds pc, or a
 * DIE of another tag, or something did not read). */
static int needs_getscopes(Dwarf_Die *function, Dwarf_Addr pc)
{
    Dwarf_Die die = *function, child;
    for (int depth = 0; depth < 256; depth++) {
        int children = dwarf_haschildren(&die);
        if (children <= 0)
            return children < 0;
        int found = child_holding(&die, pc, &child);
        if (found <= 0)
            return found < 0;
        if (!is_block(dwarf_tag(&child)))
            return 1;
        die = child;
    }
    return 1;
}

int asys_cu_getscopes(struct asys_cu_scopes *c, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
    struct cu_list *l = c ? list_of(c, cu) : NULL;
    if (!l || l->broken)
        return dwarf_getscopes(cu, pc, scopes);
    for (size_t i = 0; i < l->die_count; i++) {
        struct top_die *t = &l->dies[i];
        int in = holds(l, t, pc);
        if (in < 0 || (in && dwarf_tag(&t->die) != DW_TAG_subprogram))
            return dwarf_getscopes(cu, pc, scopes); /* what it makes of those: its own */
        if (!in)
            continue;
        Dwarf_Die function = t->die;
        return needs_getscopes(&function, pc) ? dwarf_getscopes(cu, pc, scopes) : 0;
    }
    return 0; /* no top-level DIE holds pc: dwarf_getscopes finds nothing either */
}
