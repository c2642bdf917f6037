/* A module's symbols sorted by address (symbol_table.h).
 *
 * The choice among the symbols at an address is libdwfl's
 * (dwfl_module_addrinfo), so that names do not change with the lookup:
 * the global and weak symbols are searched first, the local ones only when
 * none of them has a size covering the address; within a search a symbol
 * replaces the one found so far when it is closer to the address or has a
 * stronger binding (global, weak, local), the first in table order winning
 * a tie; a symbol without a size is taken only when no sized one covers
 * the address and it lies past the end of every sized symbol below it. */
#include "symbol_table.h"

#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"
#include "key_sort.h"

/* How far back from the last symbol at or below an address a covering
 * symbol is looked for: functions do not nest, aliases share an address. */
#define MAX_LOOKBACK 64

struct symbol {
    uint64_t start, size;
    const char *name; /* libelf's string table: lives as long as the Dwfl */
    int index; /* in libdwfl's numbering: the order ties are broken in */
    int binding; /* global 3, weak 2, local 1 */
    Elf *elf; /* the file of the symbol's table (the main one or MiniDebugInfo) */
    GElf_Word shndx; /* its section there */
    GElf_Addr bias; /* address - bias: the symbol file's own address */
};

struct asys_symbol_table {
    struct symbol *symbols; /* by start */
    uint64_t *max_end; /* max_end[i]: the highest end of symbols[0..i] */
    size_t count, cap;
    int first_global; /* indices from here are searched first */
};

static int binding_value(const GElf_Sym *sym)
{
    switch (GELF_ST_BIND(sym->st_info)) {
    case STB_GLOBAL:
        return 3;
    case STB_WEAK:
        return 2;
    case STB_LOCAL:
        return 1;
    default:
        return 0;
    }
}

/* What libdwfl considers: a named, defined symbol that is not a section,
 * file or TLS one. */
static int is_eligible(const char *name, const GElf_Sym *sym, GElf_Word shndx)
{
    int type = GELF_ST_TYPE(sym->st_info);
    return name && name[0] && shndx != SHN_UNDEF && type != STT_SECTION && type != STT_FILE &&
           type != STT_TLS;
}

/* Puts symbol keys[i].index at i, cycle by cycle (a copy of the table would
 * fault in as many fresh pages again). */
static int permute(struct symbol *symbols, const struct asys_key_index *keys, size_t n)
{
    uint8_t *done = calloc(n, 1);
    if (!done)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        struct symbol first = symbols[i];
        for (size_t at = i;;) {
            size_t from = keys[at].index;
            done[at] = 1;
            if (from == i) {
                symbols[at] = first;
                break;
            }
            symbols[at] = symbols[from];
            at = from;
        }
    }
    free(done);
    return 0;
}

/* The symbols by start (a lookup breaks ties by index itself), radix-sorted
 * (key_sort.h).  qsort took 4.5 ms for the 48,000 symbols of a make -j2
 * recording's binaries (cc1's 29,000 among them). */
static int sort_by_start(struct asys_symbol_table *t)
{
    size_t n = t->count;
    struct asys_key_index *keys = n <= UINT32_MAX ? malloc(n * sizeof *keys) : NULL;
    int rc = -1;
    if (!keys)
        goto out;
    for (size_t i = 0; i < n; i++) /* an address's order as a signed key */
        keys[i] =
            (struct asys_key_index){(int64_t)(t->symbols[i].start ^ (1ull << 63)), (uint32_t)i};
    if (asys_key_index_sort(keys, n) == 0)
        rc = permute(t->symbols, keys, n);
out:
    free(keys);
    return rc;
}

static int read_symbols(struct asys_symbol_table *t, Dwfl_Module *module, int n)
{
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr address;
        GElf_Word shndx;
        Elf *elf = NULL;
        Dwarf_Addr bias = 0;
        const char *name = dwfl_module_getsym_info(module, i, &sym, &address, &shndx, &elf, &bias);
        if (!is_eligible(name, &sym, shndx))
            continue;
        if (asys_grow(&t->symbols, &t->cap, t->count, sizeof *t->symbols, 1024))
            return -1;
        t->symbols[t->count++] =
            (struct symbol){address, sym.st_size, name, i, binding_value(&sym), elf, shndx, bias};
    }
    return 0;
}

struct asys_symbol_table *asys_symbol_table_read(Dwfl_Module *module)
{
    int n = dwfl_module_getsymtab(module);
    struct asys_symbol_table *t = n > 1 ? calloc(1, sizeof *t) : NULL;
    if (!t)
        return NULL;
    t->first_global = dwfl_module_getsymtab_first_global(module);
    if (t->first_global < 0 || read_symbols(t, module, n) != 0 || !t->count ||
        sort_by_start(t) != 0 || !(t->max_end = malloc(t->count * sizeof *t->max_end))) {
        asys_symbol_table_free(t);
        return NULL;
    }
    uint64_t end = 0;
    for (size_t i = 0; i < t->count; i++) {
        uint64_t e = t->symbols[i].start + t->symbols[i].size;
        end = e > end ? e : end;
        t->max_end[i] = end;
    }
    return t;
}

void asys_symbol_table_free(struct asys_symbol_table *t)
{
    if (!t)
        return;
    free(t->symbols);
    free(t->max_end);
    free(t);
}

/* The number of symbols that start at or below `address`. */
static size_t starting_at_or_below(const struct asys_symbol_table *t, uint64_t address)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->symbols[mid].start <= address)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* libdwfl's rule: closer, or a stronger binding; the first wins a tie. */
static int is_better(const struct symbol *found, const struct symbol *s)
{
    if (!found)
        return 1;
    if (found->start != s->start)
        return found->start < s->start;
    if (found->binding != s->binding)
        return found->binding < s->binding;
    return s->index < found->index;
}

/* Whether the address is in the section of a symbol without a size: a
 * label names nothing past its own section. */
static int in_section_of(const struct symbol *s, uint64_t address)
{
    if (s->shndx >= SHN_LORESERVE)
        return s->start == address; /* an absolute one names its own address only */
    GElf_Shdr shdr;
    Elf_Scn *scn = s->elf ? elf_getscn(s->elf, s->shndx) : NULL;
    uint64_t at = address - s->bias;
    return scn && gelf_getshdr(scn, &shdr) && at >= shdr.sh_addr &&
           at - shdr.sh_addr < shdr.sh_size;
}

static int in_global_pass(const struct asys_symbol_table *t, const struct symbol *s)
{
    return t->first_global == 0 || s->index >= t->first_global;
}

/* The best symbol of one pass (global or local) among those just below the
 * address: sized ones covering it, or else ones without a size. */
static const struct symbol *best_of_pass(const struct asys_symbol_table *t, size_t below,
                                         uint64_t address, int global, int sized)
{
    const struct symbol *best = NULL;
    for (size_t k = 0; k < below && k < MAX_LOOKBACK; k++) {
        const struct symbol *s = &t->symbols[below - 1 - k];
        if (in_global_pass(t, s) != global || (s->size != 0) != sized)
            continue;
        if (sized ? address - s->start >= s->size : !in_section_of(s, address))
            continue;
        if (is_better(best, s))
            best = s;
    }
    return best;
}

const char *asys_symbol_table_name(const struct asys_symbol_table *t, uint64_t address)
{
    size_t below = starting_at_or_below(t, address);
    if (!below)
        return NULL;
    const struct symbol *s = best_of_pass(t, below, address, 1, 1);
    if (!s)
        s = best_of_pass(t, below, address, 0, 1);
    if (s)
        return s->name;
    /* a label without a size, past every sized symbol below the address */
    const struct symbol *global = best_of_pass(t, below, address, 1, 0);
    const struct symbol *local = best_of_pass(t, below, address, 0, 0);
    s = global && (!local || global->start >= local->start) ? global : local;
    return s && s->start >= t->max_end[below - 1] ? s->name : NULL;
}
