/* The scopes of a code address for its inline chain, with each compile
 * unit's top-level DIEs and their address ranges read once.
 *
 * dwarf_getscopes(cu, pc) walks the unit's top-level DIEs from the first
 * (each one skipped over, its ranges read) until the one holding pc, for
 * every address: libc's units and a few hundred sampled addresses made that
 * most of the symbolizer's time.  Here the unit's top-level DIEs are listed
 * once, the function holding pc is found in the list, and the walk down it
 * tells whether an inlined instance holds pc: only then dwarf_getscopes. */
#ifndef ASYS_CU_SCOPES_H
#define ASYS_CU_SCOPES_H

#include <elfutils/libdw.h>

struct asys_cu_scopes;

struct asys_cu_scopes *asys_cu_scopes_new(void);
void asys_cu_scopes_free(struct asys_cu_scopes *c);

/* dwarf_getscopes(cu, pc, scopes) where an inlined instance holds pc; 0
 * where none does (dwarf_getscopes: the function, its blocks holding pc and
 * the unit, no inlined instance: an inline chain without frames), found
 * from the list and a walk down the function alone.  Where the list or the
 * walk cannot tell (ranges that did not read, a top-level DIE other than a
 * function holding pc), dwarf_getscopes itself. */
int asys_cu_getscopes(struct asys_cu_scopes *c, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes);

#endif
