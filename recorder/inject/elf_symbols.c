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

const ElfW(Phdr) *asys_object_segment(const struct dl_phdr_info *info, uintptr_t address)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && address >= start && address - start < ph->p_memsz)
            return ph;
    }
    return NULL;
}

/* The end of the loaded segment holding `address`; 0 when none does. */
static uintptr_t segment_end(const struct dl_phdr_info *info, uintptr_t address)
{
    const ElfW(Phdr) *ph = asys_object_segment(info, address);
    return ph ? info->dlpi_addr + ph->p_vaddr + ph->p_memsz : 0;
}

int asys_object_contains(const struct dl_phdr_info *info, uintptr_t address, size_t size)
{
    uintptr_t end = segment_end(info, address);
    return end && size <= end - address;
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
    uintptr_t gnu_hash, symtab, strtab, versym, verdef;
    size_t strsz, verdefnum;
    /* where the loaded segments holding the hash table and the symbol
     * table end: the bounds of the chain and symbol walks */
    uintptr_t hash_end, symtab_end;
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
        switch (dyn->d_tag) {
        case DT_GNU_HASH:
            t->gnu_hash = dyn->d_un.d_ptr;
            break;
        case DT_SYMTAB:
            t->symtab = dyn->d_un.d_ptr;
            break;
        case DT_STRTAB:
            t->strtab = dyn->d_un.d_ptr;
            break;
        case DT_STRSZ:
            t->strsz = dyn->d_un.d_val;
            break;
        case DT_VERSYM:
            t->versym = dyn->d_un.d_ptr;
            break;
        case DT_VERDEF:
            t->verdef = dyn->d_un.d_ptr;
            break;
        case DT_VERDEFNUM:
            t->verdefnum = dyn->d_un.d_val;
            break;
        default:
            break;
        }
    }
    t->gnu_hash = t->gnu_hash ? dyn_address(info, t->gnu_hash, 16) : 0;
    t->symtab = t->symtab ? dyn_address(info, t->symtab, sizeof(ElfW(Sym))) : 0;
    t->strtab = t->strtab && t->strsz ? dyn_address(info, t->strtab, t->strsz) : 0;
    t->versym = t->versym ? dyn_address(info, t->versym, sizeof(ElfW(Half))) : 0;
    t->verdef = t->verdef && t->verdefnum ? dyn_address(info, t->verdef, sizeof(ElfW(Verdef))) : 0;
    return t->gnu_hash && t->symtab && t->strtab ? 0 : 1;
}

/* The name of version index `index` in the object's version definitions;
 * NULL when it has none of that index (or they cannot be read). */
static const char *version_name(const struct dl_phdr_info *info, const struct dynamic_tables *t,
                                unsigned index)
{
    uintptr_t at = t->verdef;
    for (size_t n = 0; at && n < t->verdefnum; n++) {
        const ElfW(Verdef) *d = (const ElfW(Verdef) *)at;
        if (!asys_object_contains(info, at, sizeof *d))
            return NULL;
        if (d->vd_ndx == index && d->vd_cnt > 0) {
            const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)(at + d->vd_aux);
            if (!asys_object_contains(info, (uintptr_t)a, sizeof *a) || a->vda_name >= t->strsz)
                return NULL;
            return (const char *)t->strtab + a->vda_name;
        }
        if (!d->vd_next)
            return NULL;
        at += d->vd_next;
    }
    return NULL;
}

/* Whether the loader would take symbol `sym` for the version asked: with
 * none (dlsym), an unversioned symbol or the default version (a hidden, older
 * one never); with one (dlvsym), that version by name, hidden or not. */
static int version_accepted(const struct dl_phdr_info *info, const struct dynamic_tables *t,
                            uint32_t sym, const char *version)
{
    ElfW(Half) entry = 0;
    if (t->versym) {
        const ElfW(Half) *v = (const ElfW(Half) *)t->versym + sym;
        if (!asys_object_contains(info, (uintptr_t)v, sizeof *v))
            return 0;
        entry = *v;
    }
    unsigned index = entry & 0x7fff;
    if (!version)
        return index < 2 || !(entry & 0x8000);
    if (!t->versym)
        return 1; /* an object without versions: the loader accepts its symbol */
    const char *name = version_name(info, t, index);
    return name && !strcmp(name, version);
}

/* A symbol's address; for an indirect function (STT_GNU_IFUNC, as glibc's
 * memcpy), what its resolver selects, as the loader and dlsym return it. */
static uintptr_t definition(const struct dl_phdr_info *info, const ElfW(Sym) *e, int *unknown)
{
    uintptr_t address = info->dlpi_addr + e->st_value;
    if (ELF64_ST_TYPE(e->st_info) != STT_GNU_IFUNC)
        return address;
#if defined(__x86_64__)
    (void)unknown;
    return ((uintptr_t(*)(void))address)(); /* x86-64's resolvers take no argument */
#else
    *unknown = 1; /* the resolver's arguments differ by architecture: dlsym's call */
    return 0;
#endif
}

/* The object's dynamic tables with its GNU hash table's parts checked: 0;
 * -1 when it has no dynamic section (nothing to find), 1 when its tables
 * cannot be searched. */
static int hash_tables(const struct dl_phdr_info *info, struct dynamic_tables *t)
{
    int rc = dynamic_tables(info, t);
    if (rc != 0)
        return rc > 0 ? 1 : -1;
    const uint32_t *h = (const uint32_t *)t->gnu_hash;
    uint32_t buckets = h[0], bloom_words = h[2];
    t->hash_end = segment_end(info, t->gnu_hash);
    t->symtab_end = segment_end(info, t->symtab);
    return buckets && bloom_words &&
                   asys_object_contains(info, t->gnu_hash,
                                        16 + (size_t)bloom_words * sizeof(ElfW(Addr)) +
                                            4u * buckets)
               ? 0
               : 1;
}

/* `name`'s definition in the object, its version chosen as the loader
 * chooses: with `version` NULL as dlsym does, else as dlvsym does
 * (version_accepted); ASYS_ANY_VERSION takes the first definition in the
 * hash chain. */
#define ASYS_ANY_VERSION ((const char *)1)
static uintptr_t find_symbol(const struct dl_phdr_info *info, const struct dynamic_tables *t,
                             const char *name, uint32_t hash, const char *version, int *unknown)
{
    const uint32_t *h = (const uint32_t *)t->gnu_hash;
    uint32_t buckets = h[0], first = h[1], bloom_words = h[2], shift = h[3];
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
        if ((uintptr_t)(c + 1) > t->hash_end)
            return 0;
        const ElfW(Sym) *e = (const ElfW(Sym) *)t->symtab + sym;
        if ((*c | 1) == (hash | 1) && (uintptr_t)(e + 1) <= t->symtab_end &&
            e->st_name < t->strsz && t->strsz - e->st_name > name_len &&
            !memcmp((const char *)t->strtab + e->st_name, name, name_len + 1) &&
            e->st_shndx != SHN_UNDEF &&
            (version == ASYS_ANY_VERSION || version_accepted(info, t, sym, version)))
            return definition(info, e, unknown);
        if (*c & 1)
            return 0;
    }
}

uintptr_t asys_object_symbol(const struct dl_phdr_info *info, const char *name, uint32_t hash,
                             int *unknown)
{
    struct dynamic_tables t;
    int rc = hash_tables(info, &t);
    if (rc != 0) {
        *unknown |= rc > 0;
        return 0;
    }
    return find_symbol(info, &t, name, hash, ASYS_ANY_VERSION, unknown);
}

/* Names are hashed once for all objects, so many at a time. */
#define NEXT_PASS_NAMES 128

struct next_pass {
    const void *self;
    const struct asys_symbol_request *requests;
    size_t count;
    uint32_t hashes[NEXT_PASS_NAMES];
    int past_self;
};

/* One object of the loader's list: those after the caller's are searched in
 * turn, the first definition wins; an object that cannot be searched ends
 * the pass (it might define what is left: dlsym decides those). */
static int resolve_in_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct next_pass *p = arg;
    if (!p->past_self) {
        p->past_self = asys_object_contains(info, (uintptr_t)p->self, 1);
        return 0;
    }
    /* the vDSO is in the list but not in the scope that dlsym searches */
    if (info->dlpi_name && !strncmp(info->dlpi_name, "linux-vdso", 10))
        return 0;
    struct dynamic_tables t;
    int unknown = hash_tables(info, &t);
    if (unknown < 0)
        return 0;
    for (size_t i = 0; i < p->count && !unknown; i++) {
        const struct asys_symbol_request *r = &p->requests[i];
        if (*r->slot)
            continue;
        uintptr_t fn = find_symbol(info, &t, r->name, p->hashes[i], r->version, &unknown);
        if (fn)
            *r->slot = (void *)fn;
    }
    return unknown;
}

void asys_next_symbols(const void *self, const struct asys_symbol_request *requests, size_t count)
{
    struct next_pass p;
    for (size_t done = 0; done < count; done += p.count) {
        p.self = self;
        p.requests = requests + done;
        p.count = count - done < NEXT_PASS_NAMES ? count - done : NEXT_PASS_NAMES;
        for (size_t i = 0; i < p.count; i++)
            p.hashes[i] = asys_gnu_hash(p.requests[i].name);
        p.past_self = 0;
        dl_iterate_phdr(resolve_in_object, &p);
    }
}
