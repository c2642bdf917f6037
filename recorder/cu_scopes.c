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

/* The walk down the function for pc, as dwarf_getscopes' first pass goes:
 * 0 with *inlined set to the innermost inlined instance holding pc, or
 * cleared when none does; -1 when dwarf_getscopes must decide (a DIE of
 * another tag holds pc, or something did not read). */
static int walk_down(Dwarf_Die *function, Dwarf_Addr pc, Dwarf_Die *inlined, int *have)
{
    Dwarf_Die die = *function, child;
    *have = 0;
    for (int depth = 0; depth < 256; depth++) {
        int children = dwarf_haschildren(&die);
        if (children <= 0)
            return children < 0 ? -1 : 0;
        int found = child_holding(&die, pc, &child);
        if (found <= 0)
            return found < 0 ? -1 : 0;
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_inlined_subroutine) {
            *inlined = child;
            *have = 1;
        } else if (!is_block(tag)) {
            return -1;
        }
        die = child;
    }
    return -1;
}

/* Whether the DIE is one of its unit's top-level DIEs (its unit in *unit). */
static int top_level(struct asys_cu_scopes *c, Dwarf_Die *die, Dwarf_Die *unit)
{
    if (!dwarf_diecu(die, unit, NULL, NULL))
        return 0;
    struct cu_list *l = list_of(c, unit);
    if (!l || l->broken)
        return 0;
    Dwarf_Off offset = dwarf_dieoffset(die);
    for (size_t i = 0; i < l->die_count; i++)
        if (dwarf_dieoffset(&l->dies[i].die) == offset)
            return 1;
    return 0;
}

/* The scopes dwarf_getscopes gives for an inlined instance, as the inline
 * chain reads them: the instance (the blocks inside it hold no frame), then
 * its abstract origin's scopes, which for a top-level origin is its unit
 * alone.  0 when the origin is elsewhere: dwarf_getscopes decides. */
static int inlined_scopes(struct asys_cu_scopes *c, Dwarf_Die *inlined, Dwarf_Die **scopes)
{
    Dwarf_Attribute attr;
    Dwarf_Die origin, unit;
    if (!dwarf_formref_die(dwarf_attr(inlined, DW_AT_abstract_origin, &attr), &origin) ||
        !top_level(c, &origin, &unit))
        return 0;
    Dwarf_Die *list = malloc(2 * sizeof *list);
    if (!list)
        return 0;
    list[0] = *inlined;
    list[1] = unit;
    *scopes = list;
    return 2;
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
        Dwarf_Die function = t->die, inlined;
        int have = 0, n = walk_down(&function, pc, &inlined, &have);
        if (n == 0 && have)
            n = inlined_scopes(c, &inlined, scopes);
        else if (n == 0)
            return 0;
        return n > 0 ? n : dwarf_getscopes(cu, pc, scopes);
    }
    return 0; /* no top-level DIE holds pc: dwarf_getscopes finds nothing either */
}
