/* The scopes of a code address for its inline chain, with each compile
 * unit's top-level DIEs and their address ranges read once.
 *
 * dwarf_getscopes(cu, pc) walks the unit's top-level DIEs from the first
 * (each one skipped over, its ranges read) until the one holding pc, for
 * every address: libc's units and a few hundred sampled addresses made that
 * most of the symbolizer's time.  Here the unit's top-level DIEs are listed
 * once, the function holding pc is found in the list, and a walk down it
 * finds the inlined instance holding pc; dwarf_getscopes' second walk of
 * the whole unit, for the instance's abstract origin, is a look in the
 * origin unit's list. */
#ifndef ASYS_CU_SCOPES_H
#define ASYS_CU_SCOPES_H

#include <elfutils/libdw.h>

struct asys_cu_scopes;

struct asys_cu_scopes *asys_cu_scopes_new(void);
void asys_cu_scopes_free(struct asys_cu_scopes *c);

/* The scopes of pc as the inline chain reads them from dwarf_getscopes(cu,
 * pc, scopes): where an inlined instance holds pc, the innermost one, then
 * the scopes of its abstract origin (for an origin at its unit's top level:
 * the unit); 0 where none does (dwarf_getscopes: the function, its blocks
 * and the unit, no inlined instance: no frames).  Found from the unit's
 * list and a walk down the function alone.  Where the list or the walk
 * cannot tell (ranges that did not read, a DIE of another tag holding pc,
 * an origin below the top level), dwarf_getscopes itself. */
int asys_cu_getscopes(struct asys_cu_scopes *c, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes);

#endif
