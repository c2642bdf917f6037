/* Symbol lookup in one loaded object, as the loader does it (its GNU hash
 * table), without dlsym: dlsym of a name nothing defines builds an error
 * message (malloc, dlerror's state), and dlsym with a handle searches the
 * object's dependencies too, which may reach the preloaded wrappers. */
#ifndef ASYS_ELF_SYMBOLS_H
#define ASYS_ELF_SYMBOLS_H

#include <link.h>
#include <stdint.h>

#include "inject.h"

/* The GNU hash of `name` (DT_GNU_HASH's function). */
ASYS_RUNTIME_API uint32_t asys_gnu_hash(const char *name);

/* The address of `name` where the object `info` defines it; 0 when it does
 * not.  *unknown is set when the object has no GNU hash table to look in. */
ASYS_RUNTIME_API uintptr_t asys_object_symbol(const struct dl_phdr_info *info, const char *name,
                                              uint32_t hash, int *unknown);

/* A function to find as dlsym(RTLD_NEXT, name), or dlvsym with `version`,
 * would find it for code of the caller's object. */
struct asys_symbol_request {
    void **slot; /* receives the address; one already set is left alone */
    const char *name;
    const char *version;
};

/* Fills the slots of `requests` with the definitions in the objects loaded
 * after the one holding `self`, in the loader's order, as RTLD_NEXT does,
 * but without the loader's lookup (77 dlsym calls were a fifth of the
 * instructions of a short process's start).  Slots left NULL are for dlsym:
 * names no object defines, and all those still open when an object without
 * a GNU hash table (which might define them) came next. */
ASYS_RUNTIME_API void asys_next_symbols(const void *self,
                                        const struct asys_symbol_request *requests, size_t count);

/* The loaded segment (PT_LOAD) of the object `info` that holds `address`;
 * NULL when none does. */
ASYS_RUNTIME_API const ElfW(Phdr) *asys_object_segment(const struct dl_phdr_info *info,
                                                       uintptr_t address);

/* Whether the object `info` holds `address` in one of its loaded segments. */
ASYS_RUNTIME_API int asys_object_contains(const struct dl_phdr_info *info, uintptr_t address,
                                          size_t size);

#endif
