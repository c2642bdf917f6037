#define _GNU_SOURCE
#include "elf_symbols.h"

#include <elf.h>
#include <string.h>

uint32_t asys_gnu_hash(const char *name)
{
    uint32_t hash = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        hash = hash * 33 + *c;
    return hash;
}

int asys_object_contains(const struct dl_phdr_info *info, uintptr_t address, size_t size)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && address >= start && address - start <= ph->p_memsz &&
            size <= ph->p_memsz - (address - start))
            return 1;
    }
    return 0;
}

/* A dynamic entry's address: relocated by the loader in place, or not (a
 * read-only dynamic section, as the vDSO's); 0 when neither lies in the object. */
static uintptr_t dyn_address(const struct dl_phdr_info *info, uintptr_t p, size_t size)
{
    return asys_object_contains(info, p, size)                     ? p
           : asys_object_contains(info, p + info->dlpi_addr, size) ? p + info->dlpi_addr
                                                                   : 0;
}

struct dynamic_tables {
    uintptr_t gnu_hash, symtab, strtab;
    size_t strsz;
};

static int dynamic_tables(const struct dl_phdr_info *info, struct dynamic_tables *t)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return -1;
    memset(t, 0, sizeof *t);
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_GNU_HASH)
            t->gnu_hash = dyn->d_un.d_ptr;
        else if (dyn->d_tag == DT_SYMTAB)
            t->symtab = dyn->d_un.d_ptr;
        else if (dyn->d_tag == DT_STRTAB)
            t->strtab = dyn->d_un.d_ptr;
        else if (dyn->d_tag == DT_STRSZ)
            t->strsz = dyn->d_un.d_val;
    }
    t->gnu_hash = t->gnu_hash ? dyn_address(info, t->gnu_hash, 16) : 0;
    t->symtab = t->symtab ? dyn_address(info, t->symtab, sizeof(ElfW(Sym))) : 0;
    t->strtab = t->strtab && t->strsz ? dyn_address(info, t->strtab, t->strsz) : 0;
    return t->gnu_hash && t->symtab && t->strtab ? 0 : 1;
}

uintptr_t asys_object_symbol(const struct dl_phdr_info *info, const char *name, uint32_t hash,
                             int *unknown)
{
    struct dynamic_tables t;
    int rc = dynamic_tables(info, &t);
    if (rc != 0) {
        *unknown |= rc > 0; /* no dynamic section at all: nothing to find */
        return 0;
    }
    const uint32_t *h = (const uint32_t *)t.gnu_hash;
    uint32_t buckets = h[0], first = h[1], bloom_words = h[2], shift = h[3];
    if (!buckets || !bloom_words ||
        !asys_object_contains(info, t.gnu_hash,
                              16 + (size_t)bloom_words * sizeof(ElfW(Addr)) + 4u * buckets)) {
        *unknown = 1;
        return 0;
    }
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(h + 4);
    const unsigned bits = 8 * sizeof(ElfW(Addr));
    ElfW(Addr) word = bloom[(hash / bits) % bloom_words];
    ElfW(Addr) mask = (ElfW(Addr))1 << (hash % bits) | (ElfW(Addr))1 << ((hash >> shift) % bits);
    if ((word & mask) != mask)
        return 0;
    const uint32_t *bucket = (const uint32_t *)(bloom + bloom_words);
    const uint32_t *chain = bucket + buckets;
    uint32_t sym = bucket[hash % buckets];
    if (sym < first)
        return 0;
    size_t name_len = strlen(name);
    for (;; sym++) {
        const uint32_t *c = &chain[sym - first];
        if (!asys_object_contains(info, (uintptr_t)c, 4))
            return 0;
        const ElfW(Sym) *e = (const ElfW(Sym) *)t.symtab + sym;
        if ((*c | 1) == (hash | 1) && asys_object_contains(info, (uintptr_t)e, sizeof *e) &&
            e->st_name < t.strsz && t.strsz - e->st_name > name_len &&
            !memcmp((const char *)t.strtab + e->st_name, name, name_len + 1) &&
            e->st_shndx != SHN_UNDEF)
            return info->dlpi_addr + e->st_value;
        if (*c & 1)
            return 0;
    }
}
