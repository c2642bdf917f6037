/* The event catalogue (see event_catalog.h). */
#include "event_catalog.h"

#include <linux/perf_event.h>
#include <string.h>

#define CACHE(cache, op, result) \
    ((uint64_t)(cache) | (uint64_t)(op) << 8 | (uint64_t)(result) << 16)
#define CORE(i, n, d, src, cfg) \
    { \
        (uint16_t)(i), (uint16_t)(i), ASYS_EVENT_CPU_CORE, n, d, src, cfg, NULL \
    }
#define OS(i, n, d, src, cfg) \
    { \
        (uint16_t)(100 + (i)), (uint16_t)(i), ASYS_EVENT_OS, n, d, src, cfg, NULL \
    }
#define TP(i, n, d, tp) \
    { \
        (uint16_t)(100 + (i)), (uint16_t)(i), ASYS_EVENT_OS, n, d, ASYS_EVENT_TRACEPOINT, 0, tp \
    }

// clang-format off
const struct asys_event_def asys_event_defs[] = {
    CORE(1, "cycles", "CPU cycles", ASYS_EVENT_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
    CORE(2, "instructions", "instructions retired", ASYS_EVENT_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
    CORE(3, "cache-references", "last-level cache accesses", ASYS_EVENT_HARDWARE,
         PERF_COUNT_HW_CACHE_REFERENCES),
    CORE(4, "cache-misses", "last-level cache misses", ASYS_EVENT_HARDWARE,
         PERF_COUNT_HW_CACHE_MISSES),
    CORE(5, "branch-instructions", "branch instructions retired", ASYS_EVENT_HARDWARE,
         PERF_COUNT_HW_BRANCH_INSTRUCTIONS),
    CORE(6, "branch-misses", "mispredicted branches", ASYS_EVENT_HARDWARE,
         PERF_COUNT_HW_BRANCH_MISSES),
    CORE(7, "bus-cycles", "bus cycles", ASYS_EVENT_HARDWARE, PERF_COUNT_HW_BUS_CYCLES),
    CORE(8, "stalled-cycles-frontend", "cycles the front end stalled", ASYS_EVENT_HARDWARE,
         PERF_COUNT_HW_STALLED_CYCLES_FRONTEND),
    CORE(9, "stalled-cycles-backend", "cycles the back end stalled", ASYS_EVENT_HARDWARE,
         PERF_COUNT_HW_STALLED_CYCLES_BACKEND),
    CORE(10, "ref-cycles", "reference cycles (not scaled by frequency)", ASYS_EVENT_HARDWARE,
         PERF_COUNT_HW_REF_CPU_CYCLES),
    CORE(11, "L1-dcache-loads", "L1 data cache loads", ASYS_EVENT_HW_CACHE,
         CACHE(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)),
    CORE(12, "L1-dcache-load-misses", "L1 data cache load misses", ASYS_EVENT_HW_CACHE,
         CACHE(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)),
    CORE(13, "LLC-loads", "last-level cache loads", ASYS_EVENT_HW_CACHE,
         CACHE(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)),
    CORE(14, "LLC-load-misses", "last-level cache load misses", ASYS_EVENT_HW_CACHE,
         CACHE(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)),
    CORE(15, "dTLB-loads", "data TLB loads", ASYS_EVENT_HW_CACHE,
         CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)),
    CORE(16, "dTLB-load-misses", "data TLB load misses", ASYS_EVENT_HW_CACHE,
         CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)),
    CORE(17, "iTLB-load-misses", "instruction TLB misses", ASYS_EVENT_HW_CACHE,
         CACHE(PERF_COUNT_HW_CACHE_ITLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)),
    CORE(18, "L1-icache-load-misses", "L1 instruction cache misses", ASYS_EVENT_HW_CACHE,
         CACHE(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)),
    CORE(19, "branch-loads", "branch predictor lookups", ASYS_EVENT_HW_CACHE,
         CACHE(PERF_COUNT_HW_CACHE_BPU, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)),
    OS(1, "cpu-clock", "CPU time (ns, per-CPU timer)", ASYS_EVENT_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK),
    OS(2, "task-clock", "CPU time of the tasks (ns)", ASYS_EVENT_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK),
    OS(3, "page-faults", "page faults", ASYS_EVENT_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS),
    OS(4, "minor-faults", "page faults served without I/O", ASYS_EVENT_SOFTWARE,
       PERF_COUNT_SW_PAGE_FAULTS_MIN),
    OS(5, "major-faults", "page faults that needed I/O", ASYS_EVENT_SOFTWARE,
       PERF_COUNT_SW_PAGE_FAULTS_MAJ),
    OS(6, "context-switches", "context switches", ASYS_EVENT_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES),
    OS(7, "cpu-migrations", "moves of a task to another CPU", ASYS_EVENT_SOFTWARE,
       PERF_COUNT_SW_CPU_MIGRATIONS),
    OS(8, "alignment-faults", "unaligned accesses fixed by the kernel", ASYS_EVENT_SOFTWARE,
       PERF_COUNT_SW_ALIGNMENT_FAULTS),
    OS(9, "emulation-faults", "instructions emulated by the kernel", ASYS_EVENT_SOFTWARE,
       PERF_COUNT_SW_EMULATION_FAULTS),
    TP(10, "syscalls", "system calls entered (raw_syscalls:sys_enter)", "raw_syscalls/sys_enter"),
    TP(11, "sched-wakeups", "tasks woken up (sched:sched_wakeup)", "sched/sched_wakeup"),
    TP(12, "block-requests", "block I/O requests issued (block:block_rq_issue)", "block/block_rq_issue"),
    TP(13, "irqs", "hardware interrupts handled (irq:irq_handler_entry)", "irq/irq_handler_entry"),
    TP(14, "softirqs", "software interrupts handled (irq:softirq_entry)", "irq/softirq_entry"),
    {0, 0, 0, NULL, NULL, 0, 0, NULL},
};

static const uint16_t set_cache[] = {3, 4, 11, 12, 13, 14, 0};
static const uint16_t set_branch[] = {5, 6, 19, 0};
static const uint16_t set_ipc[] = {1, 2, 0};
static const uint16_t set_tlb[] = {15, 16, 17, 0};
static const uint16_t set_fault[] = {3, 4, 5, 0};
static const uint16_t set_sched[] = {6, 7, 11, 0};
static const uint16_t set_syscall[] = {10, 0};
static const uint16_t set_io[] = {12, 3, 0};
static const uint16_t set_irq[] = {13, 14, 0};

const struct asys_event_set asys_event_sets[] = {
    {ASYS_EVENT_CPU_CORE, "cache", "cache accesses and misses", set_cache},
    {ASYS_EVENT_CPU_CORE, "branch", "branches and mispredictions", set_branch},
    {ASYS_EVENT_CPU_CORE, "ipc", "cycles and instructions", set_ipc},
    {ASYS_EVENT_CPU_CORE, "tlb", "TLB loads and misses", set_tlb},
    {ASYS_EVENT_OS, "fault", "page faults, minor and major", set_fault},
    {ASYS_EVENT_OS, "sched", "context switches, migrations, wakeups", set_sched},
    {ASYS_EVENT_OS, "syscall", "system calls", set_syscall},
    {ASYS_EVENT_OS, "io", "block I/O requests and page faults", set_io},
    {ASYS_EVENT_OS, "irq", "interrupts", set_irq},
    {0, NULL, NULL, NULL},
};
// clang-format on

const struct asys_event_def *asys_event_by_index(enum asys_event_group group, unsigned index)
{
    for (const struct asys_event_def *e = asys_event_defs; e->name; e++)
        if (e->group == group && e->index == index)
            return e;
    return NULL;
}

const struct asys_event_def *asys_event_by_id(unsigned id)
{
    for (const struct asys_event_def *e = asys_event_defs; e->name; e++)
        if (e->id == id)
            return e;
    return NULL;
}

const struct asys_event_set *asys_event_set_find(enum asys_event_group group, const char *name)
{
    for (const struct asys_event_set *s = asys_event_sets; s->name; s++)
        if (s->group == group && !strcmp(s->name, name))
            return s;
    return NULL;
}

void asys_event_print_list(FILE *out, enum asys_event_group group)
{
    fprintf(out, "%s events (the index is what --%s takes):\n\n  %5s  %-24s  %s\n",
            group == ASYS_EVENT_CPU_CORE ? "CPU core" : "OS",
            group == ASYS_EVENT_CPU_CORE ? "cpu-core-events" : "os-events", "Index", "Name",
            "Description");
    for (const struct asys_event_def *e = asys_event_defs; e->name; e++)
        if (e->group == group)
            fprintf(out, "  %5u  %-24s  %s\n", e->index, e->name, e->description);
}

void asys_event_print_sets(FILE *out, enum asys_event_group group)
{
    fprintf(out, "%s event sets:\n\n  %-10s  %-40s  %s\n",
            group == ASYS_EVENT_CPU_CORE ? "CPU core" : "OS", "Identifier", "Description",
            "Events");
    for (const struct asys_event_set *s = asys_event_sets; s->name; s++) {
        if (s->group != group)
            continue;
        fprintf(out, "  %-10s  %-40s  ", s->name, s->description);
        for (const uint16_t *i = s->indexes; *i; i++) {
            const struct asys_event_def *e = asys_event_by_index(group, *i);
            fprintf(out, "%s%u %s", i == s->indexes ? "" : ", ", *i, e ? e->name : "?");
        }
        fputc('\n', out);
    }
}
