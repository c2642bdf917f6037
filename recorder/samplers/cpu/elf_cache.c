/* The ELF files of a report's sampled processes, each opened once (elf_cache.h). */
#define _GNU_SOURCE
#include "elf_cache.h"
#include "hex.h"

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debug_cache.h"
#include "grow.h"
#include "hashmap.h"
#include "notes.h"

#define MAX_LOADS 16
#define MAX_KEY 4200

/* An executable PT_LOAD: where its bytes are in the file and in memory. */
struct elf_load {
    uint64_t offset, filesz, vaddr;
};

struct asys_elf_file {
    Dwfl *dwfl; /* the file alone, at its own addresses */
    Dwfl_Module *module;
    struct elf_load loads[MAX_LOADS];
    uint32_t load_count;
    int debug_cfi_tried;
    Dwarf_CFI *debug_cfi; /* .debug_frame, NULL until needed or when absent */
    Dwarf_Addr debug_bias;
    /* address -> its struct asys_cfi_rule *, or NO_CFI: bounded by the
     * distinct return addresses of the samples, which the images hold too */
    struct asys_u64map rules;
    uint64_t rules_read; /* from libdw's frames: each address once */
};

/* A rules value: no CFI covers the address. */
#define NO_CFI 1

struct asys_elf_cache {
    struct asys_strmap index; /* key -> index + 1 in files */
    struct asys_elf_file **files; /* NULL: a file that could not be read */
    size_t count, cap;
    uint32_t opened;
};

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = asys_find_debuginfo, /* no libdebuginfod without a server */
    .section_address = dwfl_offline_section_address,
};

struct asys_elf_cache *asys_elf_cache_new(void)
{
    struct asys_elf_cache *c = calloc(1, sizeof *c);
    if (c)
        asys_strmap_init(&c->index);
    return c;
}

static void file_free(struct asys_elf_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->rules.capacity; i++)
        if (f->rules.used[i] && f->rules.values[i] != NO_CFI)
            free((void *)(uintptr_t)f->rules.values[i]);
    asys_u64map_free(&f->rules);
    if (f->dwfl)
        dwfl_end(f->dwfl); /* frees the module's CFI too */
    free(f);
}

void asys_elf_cache_free(struct asys_elf_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->count; i++)
        file_free(c->files[i]);
    free(c->files);
    asys_strmap_free(&c->index);
    free(c);
}

uint64_t asys_elf_cache_rules(const struct asys_elf_cache *c)
{
    uint64_t n = 0;
    for (size_t i = 0; i < c->count; i++)
        n += c->files[i] ? c->files[i]->rules_read : 0;
    return n;
}

uint32_t asys_elf_cache_files(const struct asys_elf_cache *c)
{
    return c->opened;
}

/* "b:BUILD-ID", or "p:PATH:SIZE:MTIME" for a file without one (a binary
 * rebuilt during the run is another file); 0 when the file is gone. */
static size_t file_key(char *key, size_t size, const char *path, const uint8_t *build_id,
                       uint32_t build_id_length)
{
    if (build_id_length) { /* per module of every image: no snprintf per byte */
        size_t bytes = build_id_length < (size - 3) / 2 ? build_id_length : (size - 3) / 2;
        key[0] = 'b';
        key[1] = ':';
        asys_hex_encode(build_id, bytes, key + 2);
        return 2 + 2 * bytes;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    int n = snprintf(key, size, "p:%s:%lld:%lld.%09ld", path, (long long)st.st_size,
                     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

static int same_build_id(Elf *elf, const uint8_t *build_id, uint32_t length)
{
    const void *id = NULL;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
    return n == (ssize_t)length && !memcmp(id, build_id, length);
}

static void read_loads(struct asys_elf_file *f, Elf *elf)
{
    size_t phnum = 0;
    if (elf_getphdrnum(elf, &phnum) != 0)
        return;
    for (size_t i = 0; i < phnum && i < 4096 && f->load_count < MAX_LOADS; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
            f->loads[f->load_count++] = (struct elf_load){ph.p_offset, ph.p_filesz, ph.p_vaddr};
    }
}

/* Reports the file alone at its own addresses (base 0 + p_vaddr). */
static struct asys_elf_file *file_open(const char *path, const uint8_t *build_id,
                                       uint32_t build_id_length)
{
    struct asys_elf_file *f = calloc(1, sizeof *f);
    if (!f || !(f->dwfl = dwfl_begin(&offline_callbacks)))
        goto fail;
    dwfl_report_begin(f->dwfl);
    const char *name = strrchr(path, '/') + 1;
    f->module = dwfl_report_elf(f->dwfl, name, path, -1, 0, true);
    dwfl_report_end(f->dwfl, NULL, NULL);
    Dwarf_Addr bias = 0;
    Elf *elf = f->module ? dwfl_module_getelf(f->module, &bias) : NULL;
    if (!elf || bias != 0 || (build_id_length && !same_build_id(elf, build_id, build_id_length)))
        goto fail;
    read_loads(f, elf);
    if (!f->load_count)
        goto fail;
    return f;
fail:
    file_free(f);
    return NULL;
}

struct asys_elf_file *asys_elf_cache_get(struct asys_elf_cache *c, const char *path,
                                         const uint8_t *build_id, uint32_t build_id_length)
{
    char key[MAX_KEY];
    if (path[0] != '/')
        return NULL; /* [vdso], anonymous memory: no file */
    size_t key_length = file_key(key, sizeof key, path, build_id, build_id_length);
    if (!key_length)
        return NULL;
    uint32_t at = asys_strmap_get(&c->index, key, key_length);
    if (at)
        return c->files[at - 1];
    if (asys_grow(&c->files, &c->cap, c->count, sizeof *c->files, 32))
        return NULL;
    struct asys_elf_file *f = file_open(path, build_id, build_id_length);
    if (asys_strmap_put(&c->index, key, key_length, (uint32_t)c->count + 1) != 0) {
        file_free(f);
        return NULL;
    }
    c->files[c->count++] = f; /* a file that failed stays NULL: it is not tried again */
    c->opened += f != NULL;
    asys_note(ASYS_NOTE_DEBUG, "cpu sampling: %s: %s", path, f ? "opened" : "unreadable");
    return f;
}

int asys_elf_file_bias(const struct asys_elf_file *f, uint64_t start, uint64_t pgoff,
                       uint64_t *bias)
{
    for (uint32_t i = 0; i < f->load_count; i++) {
        const struct elf_load *l = &f->loads[i];
        uint64_t page_offset = l->offset & ~0xfffull;
        if (pgoff < page_offset || pgoff >= l->offset + l->filesz)
            continue;
        *bias = start - pgoff - l->vaddr + l->offset;
        return 0;
    }
    return -1;
}

static int frame_from(Dwarf_CFI *cfi, Dwarf_Addr cfi_bias, uint64_t address, Dwarf_Frame **frame)
{
    *frame = NULL;
    return cfi && dwarf_cfi_addrframe(cfi, address - cfi_bias, frame) == 0 ? 0 : -1;
}

/* Whether the ELF file has a .debug_frame section (or the old .zdebug_frame). */
static int has_debug_frame(Elf *elf)
{
    size_t names;
    if (!elf || elf_getshdrstrndx(elf, &names) != 0)
        return 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        const char *name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, names, shdr.sh_name) : NULL;
        if (name && (!strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame")))
            return 1;
    }
    return 0;
}

/* Whether the separate debug file libdwfl would find for the module (the
 * same callback, the same arguments) has a .debug_frame: its section
 * headers only, without the DWARF that libdwfl decompresses on opening. */
static int debug_file_has_debug_frame(Dwfl_Module *module, Elf *main_elf)
{
    void **userdata = NULL;
    Dwarf_Addr low = 0;
    const char *main_file = NULL;
    const char *name =
        dwfl_module_info(module, &userdata, &low, NULL, NULL, NULL, &main_file, NULL);
    GElf_Word crc = 0;
    const char *link = dwelf_elf_gnu_debuglink(main_elf, &crc);
    char *debug_name = NULL;
    int fd = asys_find_debuginfo(module, userdata, name, low, main_file ? main_file : "", link, crc,
                                 &debug_name);
    free(debug_name);
    if (fd < 0)
        return 0;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int has = has_debug_frame(elf);
    elf_end(elf);
    close(fd);
    return has;
}

/* .debug_frame of the module, when the file or its debug file has one.
 * libdwfl's dwfl_module_dwarf_cfi opens the module's DWARF for it, which
 * decompresses every debug section of the debug file (libc6-dbg's libc and
 * ld.so: 5-45 ms each), and those hold none: looked for first. */
static Dwarf_CFI *debug_cfi_of(Dwfl_Module *module, Dwarf_Addr *bias)
{
    Dwarf_Addr main_bias = 0;
    Elf *main_elf = dwfl_module_getelf(module, &main_bias);
    if (!main_elf)
        return NULL;
    if (!has_debug_frame(main_elf) && !debug_file_has_debug_frame(module, main_elf))
        return NULL;
    return dwfl_module_dwarf_cfi(module, bias);
}

int asys_elf_file_frame(struct asys_elf_file *f, uint64_t address, Dwarf_Frame **frame)
{
    Dwarf_Addr bias = 0;
    Dwarf_CFI *eh = dwfl_module_eh_cfi(f->module, &bias);
    if (frame_from(eh, bias, address, frame) == 0)
        return 0;
    if (!f->debug_cfi_tried) { /* finds and opens the debug file: once */
        f->debug_cfi_tried = 1;
        f->debug_cfi = debug_cfi_of(f->module, &f->debug_bias);
    }
    return frame_from(f->debug_cfi, f->debug_bias, address, frame);
}

/* Appends `n` operations to the rule; 0, or -1 past ASYS_CFI_RULE_OPS. */
static int add_ops(Dwarf_Op *ops, unsigned *count, const Dwarf_Op *from, size_t n)
{
    if (n > ASYS_CFI_RULE_OPS - *count)
        return -1;
    if (n) /* "same value": no operations, and no pointer to them */
        memcpy(ops + *count, from, n * sizeof *from);
    *count += (unsigned)n;
    return 0;
}

/* The frame's rules into a rule of their own (malloc'd), or NULL. */
static struct asys_cfi_rule *rule_of(Dwarf_Frame *frame)
{
    Dwarf_Op ops[ASYS_CFI_RULE_OPS];
    unsigned count = 0;
    struct asys_cfi_rule head = {0};
    Dwarf_Addr start, end;
    bool signal = false;
    head.ra = dwarf_frame_info(frame, &start, &end, &signal);
    head.signal = signal;
    Dwarf_Op *cfa;
    size_t cfa_count;
    if (dwarf_frame_cfa(frame, &cfa, &cfa_count) == 0 && add_ops(ops, &count, cfa, cfa_count) != 0)
        return NULL;
    head.cfa_count = (uint8_t)count;
    for (int regno = 0; regno < ASYS_CFI_REGS; regno++) {
        Dwarf_Op mem[3], *reg_ops;
        size_t n;
        if (dwarf_frame_register(frame, regno, mem, &reg_ops, &n) != 0)
            continue; /* ASYS_CFI_NO_RULE */
        head.reg_rule[regno] = n == 0 && reg_ops == mem ? ASYS_CFI_UNDEFINED
                               : n == 0                 ? ASYS_CFI_SAME
                                                        : ASYS_CFI_EXPRESSION;
        head.reg_first[regno] = (uint8_t)count;
        if (add_ops(ops, &count, reg_ops, n) != 0)
            return NULL;
        head.reg_count[regno] = (uint8_t)n;
    }
    struct asys_cfi_rule *r = malloc(sizeof *r + count * sizeof *ops);
    if (r) {
        *r = head;
        memcpy(r->ops, ops, count * sizeof *ops);
    }
    return r;
}

int asys_elf_file_rule(struct asys_elf_file *f, uint64_t address, const struct asys_cfi_rule **rule)
{
    uint64_t *known = asys_u64map_get(&f->rules, address);
    if (known && *known == NO_CFI)
        return -1;
    if (known) {
        *rule = (const struct asys_cfi_rule *)(uintptr_t)*known;
        return 0;
    }
    Dwarf_Frame *frame = NULL;
    if (asys_elf_file_frame(f, address, &frame) != 0) {
        asys_u64map_put(&f->rules, address, NO_CFI); /* not kept: looked for again */
        return -1;
    }
    struct asys_cfi_rule *r = rule_of(frame);
    free(frame);
    f->rules_read++;
    if (!r || asys_u64map_put(&f->rules, address, (uint64_t)(uintptr_t)r) != 0) {
        free(r);
        return -2;
    }
    *rule = r;
    return 0;
}
