/* Offline unwinding of a sampled user stack with DWARF call frame
 * information (x86-64).
 *
 * libdwfl's unwinder wants one Dwfl per process, with every module of the
 * process reported into it: each process would open and parse its binaries
 * again.  This stepper does what libdwfl's frame_unwind.c does (the CFA and
 * register rules of .eh_frame, else .debug_frame, else the frame-pointer
 * chain) over the call frame information of asys_elf_cache, which a report
 * reads once per binary. */
#ifndef ASYS_CFI_UNWIND_H
#define ASYS_CFI_UNWIND_H

#include <stdint.h>

#include "elf_cache.h"

/* DWARF register numbers of x86-64: 0-15 the general registers (6 rbp,
 * 7 rsp), 16 the return address column. */
#define ASYS_UNWIND_REGS 17
#define ASYS_UNWIND_FP 6
#define ASYS_UNWIND_SP 7
#define ASYS_UNWIND_RA 16

struct asys_unwind_regs {
    uint64_t value[ASYS_UNWIND_REGS];
    uint32_t valid; /* a bit per register */
};

/* What the stepper reads: the file mapped at a run-time address (with the
 * mapping's bias, run-time - ELF address), and the copied stack. */
struct asys_unwind_source {
    struct asys_elf_file *(*file_at)(void *arg, uint64_t address, uint64_t *bias);
    int (*read)(void *arg, uint64_t address, uint64_t *value); /* 0 or -1 */
    void *arg;
};

/* The sampled instruction, then the return address of each caller, at most
 * `max`; the number of frames. */
uint32_t asys_unwind(const struct asys_unwind_source *src, const struct asys_unwind_regs *regs,
                     uint64_t *frames, uint32_t max);

#endif
