/* The ELF files of a report's sampled processes, each opened once.
 *
 * A program that starts many processes maps the same few binaries (the
 * shell, libc, the loader) into every one of them; what the unwinder needs
 * from a binary (its executable PT_LOADs, its call frame information) is
 * the same for all of them.  The cache keys a file by its build id, or by
 * path + size + mtime where it has none, opens it on first sight and keeps
 * it for the rest of the report: a binary's .eh_frame is parsed once, and
 * its separate debug file (.debug_frame, read only when .eh_frame has no
 * entry for an address) is found and decompressed once, whatever number of
 * processes loaded it. */
#ifndef ASYS_ELF_CACHE_H
#define ASYS_ELF_CACHE_H

#include <elfutils/libdw.h>
#include <stdint.h>

struct asys_elf_cache;
struct asys_elf_file;

struct asys_elf_cache *asys_elf_cache_new(void);
void asys_elf_cache_free(struct asys_elf_cache *c);

/* The file at `path` (absolute) with the build id the kernel reported
 * (length 0: none), opened on first sight; NULL when it cannot be read or
 * is no longer the file that was mapped (another build id). */
struct asys_elf_file *asys_elf_cache_get(struct asys_elf_cache *c, const char *path,
                                         const uint8_t *build_id, uint32_t build_id_length);

/* bias = run-time address - ELF address of a mapping of the file at
 * `start` from file offset `pgoff`; -1 when no executable PT_LOAD holds it. */
int asys_elf_file_bias(const struct asys_elf_file *f, uint64_t start, uint64_t pgoff,
                       uint64_t *bias);

/* The call frame information for an ELF address: the frame state of the
 * instruction at `address` from .eh_frame, else from .debug_frame (the
 * separate debug file, loaded on first need).  Returns 0 and a frame the
 * caller frees, or -1.  Addresses here, DW_OP_addr operands included, are
 * the ELF file's own. */
int asys_elf_file_frame(struct asys_elf_file *f, uint64_t address, Dwarf_Frame **frame);

/* The CFA and register rules of one instruction, as libdw gives them
 * (dwarf_frame_info, dwarf_frame_cfa, dwarf_frame_register), copied out of
 * its frame: a file keeps them, as the sampled return addresses come back
 * again and again (a make -j2 recording: 52,600 unwinding steps, at most
 * 13,500 addresses). */
#define ASYS_CFI_REGS 17 /* x86-64 DWARF registers 0-16 (cfi_unwind.h) */
#define ASYS_CFI_RULE_OPS 255 /* the operations a rule holds at most */
enum asys_cfi_reg_rule {
    ASYS_CFI_NO_RULE, /* dwarf_frame_register failed: the caller's register is unknown */
    ASYS_CFI_UNDEFINED, /* of the return address column: the stack ends here */
    ASYS_CFI_SAME, /* the caller's value is this frame's */
    ASYS_CFI_EXPRESSION, /* ops[reg_first .. reg_first + reg_count) */
};
struct asys_cfi_rule {
    int ra; /* the return address column, or -1 */
    uint8_t signal; /* a signal frame: its pc was interrupted, not a call */
    uint8_t cfa_count; /* the CFA is ops[0 .. cfa_count); 0: none could be had */
    uint8_t reg_rule[ASYS_CFI_REGS]; /* enum asys_cfi_reg_rule */
    uint8_t reg_first[ASYS_CFI_REGS], reg_count[ASYS_CFI_REGS];
    Dwarf_Op ops[];
};

/* The rule for an ELF address (asys_elf_file_frame's), kept by the file
 * until the cache is freed: 0 and *rule; -1 where no CFI covers the
 * address; -2 when it cannot be kept (no memory, or more than
 * ASYS_CFI_RULE_OPS operations). */
int asys_elf_file_rule(struct asys_elf_file *f, uint64_t address,
                       const struct asys_cfi_rule **rule);

/* How many rules the cache's files read from libdw's frames: each address
 * once, later steps there use the rule kept (a test counts them). */
uint64_t asys_elf_cache_rules(const struct asys_elf_cache *c);

/* How many distinct files were opened (a test and ASYS_DEBUG count them). */
uint32_t asys_elf_cache_files(const struct asys_elf_cache *c);

#endif
