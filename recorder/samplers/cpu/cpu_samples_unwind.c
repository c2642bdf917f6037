/* Unwinding a CPU sample: its call chain from the kernel, or its stack
 * bytes stepped through with the binaries' CFI; asys's own frames left
 * out; each distinct chain once. */
#define _GNU_SOURCE
#include "cpu_samples.h"
#include "notes.h"

/* x86-64 DWARF register numbers of the perf_regs the sampler asks for, in
 * the order of their bits: AX BX CX DX SI DI BP SP IP R8..R15. */
static const int dwarf_of_perf_reg[17] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 8, 9, 10, 11, 12, 13, 14, 15};
#define PERF_REG_SP_INDEX 7
#define PERF_REG_IP_INDEX 8

/* ---- unwinding --------------------------------------------------------------------- */

/* The sample's parts past the fixed fields; -1 when it is malformed. */
struct sample_parts {
    const uint64_t *callchain;
    uint64_t callchain_nr;
    uint64_t regs_abi;
    const uint8_t *regs; /* 17 u64 */
    const uint8_t *stack;
    uint64_t stack_size; /* the valid bytes (dyn_size) */
};

static int split_sample(const struct asys_cpu_raw_run *run, const struct sample *s,
                        struct sample_parts *p)
{
    memset(p, 0, sizeof *p);
    const uint8_t *at = s->rec + 8 + 8 + 8 + 8 + 8 + 8; /* IP TID TIME CPU PERIOD */
    const uint8_t *end = s->rec + s->size;
    if (run->sample_type & PERF_SAMPLE_CALLCHAIN) {
        if (end - at < 8)
            return -1;
        p->callchain_nr = get_u64(at);
        at += 8;
        if (p->callchain_nr > (uint64_t)(end - at) / 8)
            return -1;
        p->callchain = (const uint64_t *)(const void *)at;
        at += 8 * p->callchain_nr;
    }
    if (run->sample_type & PERF_SAMPLE_REGS_USER) {
        if (end - at < 8)
            return -1;
        p->regs_abi = get_u64(at);
        at += 8;
        if (p->regs_abi) {
            if (end - at < 8 * 17)
                return -1;
            p->regs = at;
            at += 8 * 17;
        }
    }
    if (run->sample_type & PERF_SAMPLE_STACK_USER) {
        if (end - at < 8)
            return -1;
        uint64_t size = get_u64(at);
        at += 8;
        if (size) {
            if (size > (uint64_t)(end - at) || (uint64_t)(end - at) - size < 8)
                return -1;
            p->stack = at;
            uint64_t dyn = get_u64(at + size);
            p->stack_size = dyn < size ? dyn : size;
        }
    }
    return 0;
}

static struct asys_elf_file *file_at(void *arg, uint64_t address, uint64_t *bias)
{
    const struct unwind_view *v = arg;
    const struct image *img = v->img;
    for (size_t i = 0; i < img->module_count; i++) {
        const struct module *m = &img->modules[i];
        if (m->file && m->bias_known && address >= m->start && address < m->end) {
            *bias = m->bias;
            return m->file;
        }
    }
    return NULL;
}

/* Only the copied stack is readable: the CFI comes from the ELF files. */
static int stack_read(void *arg, uint64_t address, uint64_t *value)
{
    const struct unwind_view *v = arg;
    if (address < v->stack_base || address - v->stack_base > v->stack_size ||
        v->stack_size - (address - v->stack_base) < 8)
        return -1;
    memcpy(value, v->stack + (address - v->stack_base), 8);
    return 0;
}

/* The user frames of a sample with registers and stack (-b dwarf). */
static uint32_t dwarf_frames(const struct image *img, const struct sample_parts *p,
                             uint64_t *frames, uint32_t max_depth)
{
    struct unwind_view view = {img, p->stack, p->stack ? p->stack_size : 0,
                               get_u64(p->regs + 8 * PERF_REG_SP_INDEX)};
    struct asys_unwind_source src = {file_at, stack_read, &view};
    struct asys_unwind_regs regs = {.valid = (1u << ASYS_UNWIND_REGS) - 1};
    for (int i = 0; i < ASYS_UNWIND_REGS; i++)
        regs.value[dwarf_of_perf_reg[i]] = get_u64(p->regs + 8 * i);
    return asys_unwind(&src, &regs, frames, max_depth);
}

/* A kernel sample's kernel frames: one [kernel] frame, or with kallsyms
 * the kernel's part of the callchain (after PERF_CONTEXT_KERNEL), the
 * sampled instruction first. */
static uint32_t kernel_frames(const struct writer_state *w, const struct sample_parts *p,
                              uint64_t ip, uint64_t *frames, uint32_t max_depth)
{
    uint32_t n = 0;
    if (!w->kernel_symbols || !p) {
        frames[n++] = KERNEL_FRAME_ADDRESS;
        return n;
    }
    int in_kernel = 0;
    for (uint64_t i = 0; i < p->callchain_nr && n < max_depth; i++) {
        uint64_t a = p->callchain[i];
        if (a >= (uint64_t)PERF_CONTEXT_MAX) { /* a context marker */
            if (n)
                break;
            in_kernel = a == (uint64_t)PERF_CONTEXT_KERNEL;
        } else if (in_kernel && a >= KERNEL_MODULE_START) {
            frames[n++] = a;
        }
    }
    if (!n)
        frames[n++] = ip;
    frames[0] += 1; /* the sampled instruction, stored as a user sample's is */
    return n;
}

/* The sample's frames: the kernel's when it was in the kernel, then the
 * user stack (the sampled instruction first). */
uint32_t cpu_sample_frames(const struct writer_state *w, const struct image *img, struct sample *s,
                           uint64_t *frames, uint32_t max_depth)
{
    const struct asys_cpu_raw_run *run = w->run;
    struct sample_parts p;
    int parsed = split_sample(run, s, &p) == 0;
    uint64_t ip = get_u64(s->rec + 8);
    uint32_t n = 0;
    if (s->flags & ASYS_CPU_SAMPLE_IN_KERNEL)
        n = kernel_frames(w, parsed ? &p : NULL, ip, frames, max_depth);
    if (!parsed)
        return n;
    if (run->config->backtrace == ASYS_BACKTRACE_NONE) {
        if (!(s->flags & ASYS_CPU_SAMPLE_IN_KERNEL) && n < max_depth)
            frames[n++] = ip;
        return n;
    }
    if (run->config->backtrace == ASYS_BACKTRACE_FP) {
        uint32_t kernel = n;
        for (uint64_t i = 0; i < p.callchain_nr && n < max_depth; i++) {
            uint64_t a = p.callchain[i];
            if (a >= (uint64_t)PERF_CONTEXT_MAX || a >= KERNEL_MODULE_START)
                continue; /* a context marker, or the kernel's part: taken above */
            frames[n++] = a;
        }
        if (n <= kernel + 1 && !(s->flags & ASYS_CPU_SAMPLE_IN_KERNEL))
            s->flags |= ASYS_CPU_SAMPLE_UNWIND_FAILED;
        return n;
    }
    /* dwarf */
    uint32_t user = p.regs && n < max_depth ? dwarf_frames(img, &p, frames + n, max_depth - n) : 0;
    if (!user && !(s->flags & ASYS_CPU_SAMPLE_IN_KERNEL) && n < max_depth)
        frames[n + user++] = ip; /* not even the first frame: keep the sampled IP */
    if (user < 2)
        s->flags |= ASYS_CPU_SAMPLE_UNWIND_FAILED;
    return n + user;
}

void cpu_resolve_modules(struct image_output *out, struct image *img)
{
    if (img->resolved_by != out) /* another thread's files (or a parent's): its own */
        for (size_t i = 0; i < img->module_count; i++)
            img->modules[i].resolved = 0;
    img->resolved_by = out;
    for (size_t i = 0; i < img->module_count; i++) {
        struct module *m = &img->modules[i];
        if (m->resolved)
            continue;
        m->resolved = 1;
        m->file = asys_elf_cache_get(out->elf, m->path, m->build_id, m->build_id_length);
        m->bias_known = m->file && asys_elf_file_bias(m->file, m->start, m->pgoff, &m->bias) == 0;
        asys_note(ASYS_NOTE_DEBUG, "cpu sampling: pid %u: %s at %" PRIx64 " pgoff %" PRIx64 ": %s",
                  img->pid, m->path, m->start, m->pgoff, m->bias_known ? "ok" : "no bias");
    }
}

void cpu_unwind_sample(const struct writer_state *w, struct image_output *out, struct image *img,
                       struct sample *s)
{
    uint64_t frames[ASYS_CALLCHAIN_MAX_DEPTH + 1];
    uint32_t max_depth = w->run->config->depth;
    if (max_depth < 1 || max_depth > ASYS_CALLCHAIN_MAX_DEPTH)
        max_depth = ASYS_CALLCHAIN_MAX_DEPTH;
    cpu_resolve_modules(out, img); /* those mapped since its last sample too */
    uint32_t n = cpu_without_asys_frames(&img->asys_library, frames,
                                         cpu_sample_frames(w, img, s, frames, max_depth));
    /* every frame is symbolized at address - 1 (a return address's call):
     * the sampled instruction itself is stored one past its first byte so
     * that a sample on a function's first instruction stays in it (in the
     * kernel, the user frame is already where the thread resumes) */
    if (n && !(s->flags & ASYS_CPU_SAMPLE_IN_KERNEL))
        frames[0] += 1;
    int is_new = 0;
    s->callchain_id = n ? cpu_chain_id(&img->chains, frames, n, &is_new) : 0;
    s->rec = NULL; /* its bytes may go */
}

/* ---- asys's own frames ----------------------------------------------------------------
 * The injected library's frames between the program's (its OSRT wrappers,
 * asys_main under main) are left out, so stacks read as without asys; a
 * sample taken in the library's own code keeps that leaf. */

void cpu_note_asys_library(struct image *img, const struct module *m)
{
    struct library_ranges *r = &img->asys_library;
    const char *base = m->path ? strrchr(m->path, '/') : NULL;
    if (base && asys_is_injected_library(base + 1) && r->count < ASYS_LIBRARY_RANGES) {
        r->start[r->count] = m->start;
        r->end[r->count++] = m->end;
    }
}

static int in_ranges(const struct library_ranges *r, uint64_t a)
{
    for (size_t i = 0; i < r->count; i++)
        if (a >= r->start[i] && a < r->end[i])
            return 1;
    return 0;
}

/* Drops frames 1.. that lie in the library; the new depth. */
uint32_t cpu_without_asys_frames(const struct library_ranges *r, uint64_t *frames, uint32_t n)
{
    if (!r->count || n < 2)
        return n;
    uint32_t kept = 1;
    for (uint32_t i = 1; i < n; i++)
        if (!in_ranges(r, frames[i]))
            frames[kept++] = frames[i];
    return kept;
}

/* ---- call chains, each once ------------------------------------------------------- */

static uint64_t chain_hash(const uint64_t *f, uint32_t n)
{
    uint64_t h = 1469598103934665603ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= f[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

/* The chain's id (>= 1) and whether it is new; 0 when out of memory. */
uint32_t cpu_chain_id(struct chain_table *t, const uint64_t *f, uint32_t n, int *is_new)
{
    *is_new = 0;
    if (t->count * 2 >= t->slot_cap) {
        /* small at first: most of a many-process run's images hold a sample
         * or two, and a larger table cost each its allocation's faults */
        size_t cap = t->slot_cap ? t->slot_cap * 2 : 16;
        struct chain_slot *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return 0;
        for (size_t i = 0; i < t->slot_cap; i++) {
            if (!t->slots[i].hash)
                continue;
            size_t j = t->slots[i].hash & (cap - 1);
            while (slots[j].hash)
                j = (j + 1) & (cap - 1);
            slots[j] = t->slots[i];
        }
        free(t->slots);
        t->slots = slots;
        t->slot_cap = cap;
    }
    uint64_t h = chain_hash(f, n);
    size_t j = h & (t->slot_cap - 1);
    for (; t->slots[j].hash; j = (j + 1) & (t->slot_cap - 1)) {
        const struct chain_slot *s = &t->slots[j];
        if (s->hash == h && s->depth == n && !memcmp(t->frames + s->offset, f, n * sizeof *f))
            return s->id;
    }
    /* the first capacity holds the deepest chain, so one doubling suffices */
    if (asys_grow(&t->frames, &t->frame_cap, t->frame_count + n, sizeof *t->frames,
                  ASYS_CALLCHAIN_MAX_DEPTH * 2))
        return 0;
    memcpy(t->frames + t->frame_count, f, n * sizeof *f);
    t->slots[j] = (struct chain_slot){h, (uint32_t)t->frame_count, n, (uint32_t)t->count + 1};
    t->frame_count += n;
    t->count++;
    *is_new = 1;
    return (uint32_t)t->count;
}
