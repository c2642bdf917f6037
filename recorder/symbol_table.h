/* A module's function symbols sorted by address, read once per binary.
 *
 * libdwfl's dwfl_module_addrname scans the whole symbol table for every
 * address it is asked about: for a large binary (cc1: ~10^5 symbols) and
 * the thousands of distinct addresses CPU samples land on, that scan is
 * most of finalize.  The table reads every symbol once (the symbol table,
 * or the dynamic one, and the MiniDebugInfo one libdwfl adds) and answers
 * each address with a binary search, choosing as libdwfl does: the closest
 * symbol whose size covers the address, a global one before a weak or a
 * local one at the same address, else the closest symbol without a size. */
#ifndef ASYS_SYMBOL_TABLE_H
#define ASYS_SYMBOL_TABLE_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct asys_symbol_table;

/* The module's symbols; NULL when it has none (or out of memory). */
struct asys_symbol_table *asys_symbol_table_read(Dwfl_Module *module);
void asys_symbol_table_free(struct asys_symbol_table *t);

/* The name of the function at `address` (the module's addresses), NULL
 * when none covers it.  Valid while the module's Dwfl is. */
const char *asys_symbol_table_name(const struct asys_symbol_table *t, uint64_t address);

#endif
