/* From the raw perf rings to the report's segments (cpu_sampler.h).
 *
 * The raw files are read as untrusted input: every record's size is bounded
 * by what is left of its file and by the fields it must hold.  Records of
 * every CPU are merged in time order, so that a process's modules (MMAP2),
 * its exec (COMM) and fork (FORK) are known before its samples.  The stacks
 * are unwound here, at the end of the run, on the host where the binaries
 * are: the CFI of the ELF files (elf_cache.c: each binary opened once per
 * report, whatever number of processes mapped it) steps through the stack
 * bytes the kernel copied (cfi_unwind.c).  Each distinct call chain is
 * written once and finalize symbolizes each address once. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arena_read.h"
#include "cfi_unwind.h"
#include "cpu_sampler.h"
#include "read_file.h"
#include "elf_cache.h"
#include "grow.h"
#include "hashmap.h"
#include "install_paths.h"
#include "json_util.h"
#include "manifest.h"
#include "perf_map.h"
#include "segment_writer.h"
#include "session.h"

/* Where kernel frames go: one address in a module named [kernel]. */
#define KERNEL_MODULE_START 0xffff800000000000ull
#define KERNEL_FRAME_ADDRESS 0xffffffff80000000ull
#define KERNEL_MODULE_NAME "[kernel]"
/* -s system-wide where kallsyms gives addresses: the kernel's own frames,
 * named at finalize from kallsyms */
#define KERNEL_SYMBOLS_MODULE_NAME "[kernel.kallsyms]"
#define SEGMENT_CHUNK (1u << 20)
/* the high byte of the process uids of the sampler's segments: no injected
 * process uses it */
#define SAMPLER_UID_TAG 0xc5ull
#define SEGMENT_MAX (4ull << 30)
#define MAX_RAW_FILE (64ull << 30)
#define MAX_PATH_TEXT 4000
/* x86-64 DWARF register numbers of the perf_regs the sampler asks for, in
 * the order of their bits: AX BX CX DX SI DI BP SP IP R8..R15. */
static const int dwarf_of_perf_reg[17] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 8, 9, 10, 11, 12, 13, 14, 15};
#define PERF_REG_SP_INDEX 7
#define PERF_REG_IP_INDEX 8

struct raw_file {
    uint8_t *data;
    size_t size;
    int sched;
};

/* One perf record of a sampling ring, with the time it sorts by. */
struct event {
    uint64_t time;
    const uint8_t *rec;
    uint32_t size;
    uint32_t order; /* file position: ties keep the ring's order */
};

struct module {
    uint64_t start, end, pgoff, bias;
    char *path;
    struct asys_elf_file *file; /* the report's one copy of the file; NULL: none */
    uint8_t build_id[ASYS_BUILD_ID_MAX];
    uint32_t build_id_length;
    int bias_known;
};

struct thread_name {
    uint64_t time;
    uint32_t tid;
    char name[16];
};

struct sample {
    uint64_t time;
    uint32_t tid, cpu, flags;
    const uint8_t *rec; /* the perf record */
    uint32_t size;
    uint32_t callchain_id;
};

struct image {
    uint32_t pid, ppid;
    int forked; /* a fork child that has not exec'd */
    char *exe;
    struct module *modules;
    size_t module_count, module_cap;
    struct thread_name *names;
    size_t name_count, name_cap;
    struct sample *samples;
    size_t sample_count, sample_cap;
    uint64_t first_time;
};

/* The call chains of one image, each once. */
struct chain_table {
    uint64_t *frames;
    size_t frame_count, frame_cap;
    struct chain_slot {
        uint64_t hash;
        uint32_t offset, depth, id;
    } * slots;
    size_t slot_cap, count;
};

struct writer_state {
    const struct asys_cpu_raw_run *run;
    struct raw_file files[2 * ASYS_CPU_MAX_CPUS];
    int file_count;
    struct event *events;
    size_t event_count, event_cap;
    struct image **images;
    size_t image_count, image_cap;
    struct asys_u64map current; /* pid -> index + 1 of its current image */
    struct asys_u64map tid_pid; /* tid -> pid, for the threads of the tree */
    struct asys_u64map tree;    /* pids of the traced tree: the program and what it forked */
    uint64_t lost_samples, lost_switches, throttled, unwind_failed, samples, switches;
    uint64_t first_time;
    struct asys_elf_cache *elf; /* every binary of every process, opened once */
    int kernel_symbols;         /* kernel callchains kept, to be named from kallsyms */
    struct asys_arena arena;    /* the session's (control NULL: a file per segment) */
};

/* The unwinder's view of the sample being unwound: its process's modules
 * and the stack bytes the kernel copied. */
struct unwind_view {
    const struct image *img;
    const uint8_t *stack;
    uint64_t stack_size, stack_base;
};

/* ---- reading the raw files ----------------------------------------------------- */

static int load_files(struct writer_state *w, struct asys_err *err)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", w->run->session_dir, ASYS_CPU_RAW_DIR);
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* nothing was opened */
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL && w->file_count < 2 * ASYS_CPU_MAX_CPUS) {
        int sched = !strncmp(e->d_name, "sched-", 6);
        if (!sched && strncmp(e->d_name, "samples-", 8))
            continue;
        char path[4500];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        int fd = asys_open_regular(path, &st, err);
        if (fd < 0) {
            rc = asys_err_wrap(err, "cannot open '%s'", path);
            break;
        }
        if (st.st_size > 0 && (uint64_t)st.st_size < MAX_RAW_FILE) {
            void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (m != MAP_FAILED)
                w->files[w->file_count++] = (struct raw_file){m, (size_t)st.st_size, sched};
        }
        close(fd);
    }
    closedir(d);
    return rc;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The time of a side-band record: its sample_id trailer (TID, TIME, CPU). */
static int trailer_time(const uint8_t *rec, uint32_t size, uint32_t body, uint64_t *time)
{
    if (size < body + 24)
        return -1;
    *time = get_u64(rec + size - 16);
    return 0;
}

/* The sample's fixed leading fields (IP, TID, TIME). */
static int sample_time(const uint8_t *rec, uint32_t size, uint64_t *time)
{
    if (size < 8 + 8 + 8 + 8)
        return -1;
    *time = get_u64(rec + 24);
    return 0;
}

static int add_event(struct writer_state *w, uint64_t time, const uint8_t *rec, uint32_t size)
{
    if (asys_grow(&w->events, &w->event_cap, w->event_count, sizeof *w->events, 4096))
        return -1;
    w->events[w->event_count] = (struct event){time, rec, size, (uint32_t)w->event_count};
    w->event_count++;
    return 0;
}

/* Collects a ring's records for one pass: the sampling rings' side-band and
 * samples (LOST and THROTTLE counted), or the context switches (the sched
 * rings' tracepoint samples, counted; the sampling rings' SWITCH records
 * when the tracepoint was not available). */
enum scan_pass { PASS_SAMPLES, PASS_SCHED };

static int scan_file(struct writer_state *w, const struct raw_file *f, enum scan_pass pass,
                     struct asys_err *err)
{
    int switches_only = pass == PASS_SCHED && !f->sched;
    int cpu_wide = w->run->result->sched_source == ASYS_SCHED_CPU_SWITCH;
    size_t at = 0;
    while (at + sizeof(struct perf_event_header) <= f->size) {
        struct perf_event_header h;
        memcpy(&h, f->data + at, sizeof h);
        if (h.size < sizeof h || h.size > f->size - at)
            break; /* a torn tail: the rest is not records */
        const uint8_t *rec = f->data + at;
        uint64_t time = 0;
        int keep = 0;
        if (switches_only) {
            if (cpu_wide) /* each switch once: where the CPU's task went out, and who came in */
                keep = h.type == PERF_RECORD_SWITCH_CPU_WIDE &&
                       (h.misc & PERF_RECORD_MISC_SWITCH_OUT) &&
                       trailer_time(rec, h.size, 8, &time) == 0;
            else if (h.type == PERF_RECORD_EXIT && h.size >= 32 + 24) {
                /* a dying thread's last switch is not reported: its EXIT ends its run */
                time = get_u64(rec + 24);
                keep = 1;
            } else
                keep = h.type == PERF_RECORD_SWITCH && trailer_time(rec, h.size, 0, &time) == 0;
            if (keep && add_event(w, time, rec, h.size) != 0)
                return asys_fail(err, "out of memory");
            at += h.size;
            continue;
        }
        switch (h.type) {
        case PERF_RECORD_LOST:
            if (h.size >= 24)
                *(f->sched ? &w->lost_switches : &w->lost_samples) += get_u64(rec + 16);
            break;
        case PERF_RECORD_THROTTLE:
            w->throttled++;
            break;
        case PERF_RECORD_SAMPLE:
            if (f->sched) { /* TIME first */
                keep = h.size >= 16;
                time = keep ? get_u64(rec + 8) : 0;
            } else {
                keep = sample_time(rec, h.size, &time) == 0;
            }
            break;
        case PERF_RECORD_MMAP2:
            keep = trailer_time(rec, h.size, 72, &time) == 0;
            break;
        case PERF_RECORD_COMM:
            keep = trailer_time(rec, h.size, 16, &time) == 0;
            break;
        case PERF_RECORD_SWITCH:
        case PERF_RECORD_SWITCH_CPU_WIDE:
            break; /* read in the scheduling pass */
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT:
            if (h.size >= 32) {
                time = get_u64(rec + 24);
                keep = 1;
            }
            break;
        default:
            break;
        }
        if (keep && !f->sched && add_event(w, time, rec, h.size) != 0)
            return asys_fail(err, "out of memory");
        if (keep && f->sched && h.type == PERF_RECORD_SAMPLE &&
            add_event(w, time, rec, h.size) != 0)
            return asys_fail(err, "out of memory");
        at += h.size;
    }
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const struct event *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* ---- process images ------------------------------------------------------------- */

static struct image *image_new(struct writer_state *w, uint32_t pid, const struct image *parent)
{
    if (asys_grow(&w->images, &w->image_cap, w->image_count, sizeof *w->images, 16))
        return NULL;
    struct image *img = calloc(1, sizeof *img);
    if (!img)
        return NULL;
    img->pid = pid;
    if (parent) {
        img->ppid = parent->pid;
        img->forked = 1;
        for (size_t i = 0; i < parent->module_count; i++) {
            if (asys_grow(&img->modules, &img->module_cap, img->module_count, sizeof *img->modules,
                          16))
                break;
            struct module m = parent->modules[i];
            m.path = strdup(m.path);
            if (!m.path)
                break;
            img->modules[img->module_count++] = m;
        }
        img->exe = parent->exe ? strdup(parent->exe) : NULL;
    }
    w->images[w->image_count++] = img;
    asys_u64map_put(&w->current, pid, w->image_count);
    return img;
}

static struct image *image_of(struct writer_state *w, uint32_t pid)
{
    uint64_t *v = asys_u64map_get(&w->current, pid);
    if (v && *v && *v <= w->image_count)
        return w->images[*v - 1];
    return image_new(w, pid, NULL);
}

static void image_free(struct image *img)
{
    for (size_t i = 0; i < img->module_count; i++)
        free(img->modules[i].path);
    free(img->modules);
    free(img->names);
    free(img->samples);
    free(img->exe);
    free(img);
}

static int on_mmap2(struct writer_state *w, const uint8_t *rec, uint32_t size)
{
    struct perf_event_header h;
    memcpy(&h, rec, sizeof h);
    uint32_t pid = get_u32(rec + 8), prot = get_u32(rec + 64);
    if (!(prot & PROT_EXEC))
        return 0;
    const char *name = (const char *)rec + 72;
    size_t room = size - 72 - 24; /* the name is NUL-padded, before the trailer */
    size_t len = strnlen(name, room);
    if (len == room || len > MAX_PATH_TEXT)
        return 0;
    asys_u64map_put(&w->tid_pid, get_u32(rec + 12), pid);
    struct image *img = image_of(w, pid);
    if (!img ||
        asys_grow(&img->modules, &img->module_cap, img->module_count, sizeof *img->modules, 16))
        return -1;
    struct module *m = &img->modules[img->module_count];
    memset(m, 0, sizeof *m);
    m->start = get_u64(rec + 16);
    m->end = m->start + get_u64(rec + 24);
    m->pgoff = get_u64(rec + 32);
    if (m->end < m->start)
        return 0;
    if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        uint8_t n = rec[40];
        m->build_id_length = n <= 20 ? n : 20;
        memcpy(m->build_id, rec + 44, m->build_id_length);
    }
    m->path = strndup(name, len);
    if (!m->path)
        return -1;
    if (!img->exe && name[0] == '/')
        img->exe = strdup(name); /* the first executable mapping after exec: the program */
    img->module_count++;
    return 0;
}

static int on_comm(struct writer_state *w, const uint8_t *rec, uint32_t size, uint64_t time)
{
    struct perf_event_header h;
    memcpy(&h, rec, sizeof h);
    uint32_t pid = get_u32(rec + 8), tid = get_u32(rec + 12);
    asys_u64map_put(&w->tid_pid, tid, pid);
    struct image *img = image_of(w, pid);
    if (img && (h.misc & PERF_RECORD_MISC_COMM_EXEC) && pid == tid &&
        (img->module_count || img->sample_count || img->forked))
        img = image_new(w, pid, NULL); /* exec: a new image, modules from scratch */
    else if (img && (h.misc & PERF_RECORD_MISC_COMM_EXEC))
        img->forked = 0;
    if (!img || asys_grow(&img->names, &img->name_cap, img->name_count, sizeof *img->names, 8))
        return -1;
    struct thread_name *n = &img->names[img->name_count++];
    n->time = time;
    n->tid = tid;
    size_t room = size - 16 - 24;
    size_t len = strnlen((const char *)rec + 16, room < 15 ? room : 15);
    memcpy(n->name, rec + 16, len);
    n->name[len] = '\0';
    return 0;
}

static int on_fork(struct writer_state *w, const uint8_t *rec)
{
    uint32_t pid = get_u32(rec + 8), ppid = get_u32(rec + 12), tid = get_u32(rec + 16);
    asys_u64map_put(&w->tid_pid, tid, pid);
    if (pid == ppid)
        return 0; /* a thread */
    if (asys_u64map_get(&w->tree, ppid) && asys_u64map_put(&w->tree, pid, 1) != 0)
        return -1;
    struct image *parent = image_of(w, ppid);
    return parent && image_new(w, pid, parent) ? 0 : -1;
}

static int on_sample(struct writer_state *w, const uint8_t *rec, uint32_t size, uint64_t time)
{
    struct perf_event_header h;
    memcpy(&h, rec, sizeof h);
    if (size < 48)
        return 0;
    uint32_t pid = get_u32(rec + 16), tid = get_u32(rec + 20);
    uint32_t cpu = get_u32(rec + 32);
    if (pid == 0 && tid == 0)
        return 0; /* the idle task (system-wide) */
    asys_u64map_put(&w->tid_pid, tid, pid);
    struct image *img = image_of(w, pid);
    if (!img ||
        asys_grow(&img->samples, &img->sample_cap, img->sample_count, sizeof *img->samples, 256))
        return -1;
    uint32_t mode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    struct sample *s = &img->samples[img->sample_count++];
    *s = (struct sample){time, tid, cpu, 0, rec, size, 0};
    if (mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL)
        s->flags |= ASYS_CPU_SAMPLE_IN_KERNEL;
    if (!img->first_time)
        img->first_time = time;
    return 0;
}

static int build_images(struct writer_state *w, struct asys_err *err)
{
    for (int i = 0; i < w->file_count; i++)
        if (!w->files[i].sched && scan_file(w, &w->files[i], PASS_SAMPLES, err) != 0)
            return -1;
    if (w->event_count)
        qsort(w->events, w->event_count, sizeof *w->events, by_time);
    for (size_t i = 0; i < w->event_count; i++) {
        const struct event *e = &w->events[i];
        struct perf_event_header h;
        memcpy(&h, e->rec, sizeof h);
        int rc = 0;
        if (h.type == PERF_RECORD_MMAP2)
            rc = on_mmap2(w, e->rec, e->size);
        else if (h.type == PERF_RECORD_COMM)
            rc = on_comm(w, e->rec, e->size, e->time);
        else if (h.type == PERF_RECORD_FORK)
            rc = on_fork(w, e->rec);
        else if (h.type == PERF_RECORD_SAMPLE)
            rc = on_sample(w, e->rec, e->size, e->time);
        if (rc != 0)
            return asys_fail(err, "out of memory");
        if (!w->first_time || e->time < w->first_time)
            w->first_time = e->time;
    }
    return 0;
}

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
static uint32_t sample_frames(struct writer_state *w, const struct image *img, struct sample *s,
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

/* ---- asys's own frames ----------------------------------------------------------------
 * The injected library's frames between the program's (its OSRT wrappers,
 * asys_main under main) are left out, so stacks read as without asys; a
 * sample taken in the library's own code keeps that leaf. */

#define ASYS_LIBRARY_RANGES 8

struct library_ranges {
    uint64_t start[ASYS_LIBRARY_RANGES], end[ASYS_LIBRARY_RANGES];
    size_t count;
};

static void find_asys_library(const struct image *img, struct library_ranges *r)
{
    r->count = 0;
    for (size_t i = 0; i < img->module_count && r->count < ASYS_LIBRARY_RANGES; i++) {
        const char *path = img->modules[i].path;
        const char *base = path ? strrchr(path, '/') : NULL;
        if (base && asys_is_injected_library(base + 1)) {
            r->start[r->count] = img->modules[i].start;
            r->end[r->count++] = img->modules[i].end;
        }
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
static uint32_t without_asys_frames(const struct library_ranges *r, uint64_t *frames, uint32_t n)
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
static uint32_t chain_id(struct chain_table *t, const uint64_t *f, uint32_t n, int *is_new)
{
    *is_new = 0;
    if (t->count * 2 >= t->slot_cap) {
        size_t cap = t->slot_cap ? t->slot_cap * 2 : 1024;
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
    if (asys_grow(&t->frames, &t->frame_cap, t->frame_count + n, sizeof *t->frames, 4096))
        return 0;
    memcpy(t->frames + t->frame_count, f, n * sizeof *f);
    t->slots[j] = (struct chain_slot){h, (uint32_t)t->frame_count, n, (uint32_t)t->count + 1};
    t->frame_count += n;
    t->count++;
    *is_new = 1;
    return (uint32_t)t->count;
}

/* ---- writing segments --------------------------------------------------------------- */

struct out_segment {
    struct asys_segment_writer w;
    uint32_t next_string;
    int open;
};

/* A process image's segment goes into the session's arena, beside the
 * traced threads' segments: a file per sampled process cost its creation, a
 * truncate and an unlink at the end, each waiting for ext4's discard (0.25 s
 * of the launcher's 0.59 s for 500 processes).  The scheduling segment,
 * written last, stays a file: it says the rings were unwound (recovery).
 * Files where there is no arena (sessions of older launchers). */
static int segment_open(struct out_segment *o, const struct writer_state *w, const char *name,
                        uint32_t pid, uint32_t ppid, uint64_t uid, int in_arena, uint64_t base,
                        struct asys_err *err)
{
    const struct asys_cpu_raw_run *run = w->run;
    char path[4300];
    snprintf(path, sizeof path, "%s/segments/%s%s", run->session_dir, name, ASYS_SEGMENT_SUFFIX);
    struct asys_segment_header h;
    memset(&h, 0, sizeof h);
    h.collector = ASYS_SEGMENT_THREAD;
    h.feature_mask = ASYS_FEATURE_CORE | ASYS_FEATURE_STACKS | ASYS_FEATURE_CPU_SAMPLING;
    h.pid = pid;
    h.tid = pid;
    h.ppid = ppid;
    h.thread_index = 1;
    h.process_uid = uid;
    h.clock_kind = ASYS_CLOCK_MONOTONIC;
    h.base_ticks = base;
    in_arena = in_arena && w->arena.control;
    int rc = in_arena ? asys_segment_open_arena(&o->w, &w->arena, &h, SEGMENT_MAX)
                      : asys_segment_open(&o->w, path, &h, SEGMENT_CHUNK, SEGMENT_MAX);
    if (rc != 0)
        return asys_fail_errno(err, -rc, "cannot create '%s'", in_arena ? w->arena.path : path);
    o->open = 1;
    o->next_string = 1;
    return 0;
}

static void *reserve(struct out_segment *o, uint32_t size, uint64_t time, uint32_t *delta)
{
    return asys_segment_reserve(&o->w, size, time, delta);
}

/* A STRING_DEF; its id, or 0 when it could not be written. */
static uint32_t put_string(struct out_segment *o, const char *text, uint64_t time)
{
    size_t len = strnlen(text, MAX_PATH_TEXT);
    uint32_t size = (uint32_t)((sizeof(struct asys_rec_string_def) + len + 7) & ~7ull);
    uint32_t delta;
    struct asys_rec_string_def *d = reserve(o, size, time, &delta);
    if (!d)
        return 0;
    memset(d + 1, 0, size - sizeof *d);
    d->string_id = o->next_string++;
    d->length = (uint32_t)len;
    d->flags = 0;
    memcpy(d + 1, text, len);
    unsigned words = size / 8;
    d->size_bytes = words > 254 ? size : 0;
    asys_segment_commit(
        &d->header,
        ASYS_REC_WORD(ASYS_REC_STRING_DEF, words > 254 ? ASYS_REC_EXTENDED : words, 0, delta));
    return d->string_id;
}

static void put_module(struct out_segment *o, const struct module *m, uint32_t path_id,
                       uint64_t time)
{
    uint32_t delta;
    struct asys_rec_module *r = reserve(o, sizeof *r, time, &delta);
    if (!r)
        return;
    r->load_bias = m->bias;
    r->start = m->start;
    r->end = m->end;
    r->path_string_id = path_id;
    r->build_id_length = m->build_id_length;
    memset(r->build_id, 0, sizeof r->build_id);
    memcpy(r->build_id, m->build_id, m->build_id_length);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_MODULE, sizeof *r / 8, 0, delta));
}

static void put_chain(struct out_segment *o, uint32_t id, const uint64_t *f, uint32_t n,
                      uint64_t time)
{
    uint32_t delta, size = (uint32_t)(sizeof(struct asys_rec_callchain) + 8 * n);
    struct asys_rec_callchain *c = reserve(o, size, time, &delta);
    if (!c)
        return;
    c->callchain_id = id;
    c->depth = n;
    memcpy(c + 1, f, 8 * n);
    asys_segment_commit(&c->header, ASYS_REC_WORD(ASYS_REC_CALLCHAIN, size / 8, 0, delta));
}

/* The process's JIT map, when it wrote one, as a module over the code it
 * names: finalize's symbolizer reads the names of the sampled addresses
 * into the report (file-backed modules come first and win an overlap). */
static void put_jit_module(struct out_segment *o, const struct image *img, uint64_t time)
{
    char path[64];
    asys_perf_map_path(path, sizeof path, img->pid);
    if (access(path, F_OK) != 0)
        return;
    struct asys_err err = {0};
    struct asys_perf_map *map = asys_perf_map_read(path, &err);
    struct module jit = {.start = 0};
    if (map)
        asys_perf_map_span(map, &jit.start, &jit.end);
    else if (getenv("ASYS_DEBUG"))
        fprintf(stderr, "asys: cpu sampling: %s\n", err.text);
    if (jit.end > jit.start)
        put_module(o, &jit, put_string(o, path, time), time);
    asys_perf_map_free(map);
}

static int write_image(struct writer_state *w, struct image *img, size_t index,
                       struct asys_err *err)
{
    struct out_segment o = {0};
    struct chain_table chains = {0};
    int rc = -1;
    uint64_t frames[ASYS_CALLCHAIN_MAX_DEPTH + 1];
    uint32_t max_depth = w->run->config->depth;
    if (max_depth < 1 || max_depth > ASYS_CALLCHAIN_MAX_DEPTH)
        max_depth = ASYS_CALLCHAIN_MAX_DEPTH;
    if (!img->sample_count) {
        rc = 0;
        goto out;
    }
    char name[64];
    snprintf(name, sizeof name, "cpu-p%u-%zu", img->pid, index);
    /* a uid no injected process uses: the high byte tags the sampler's images */
    uint64_t uid = SAMPLER_UID_TAG << 56 | (uint64_t)index << 32 | img->pid;
    uint64_t t0 = img->first_time;
    if (segment_open(&o, w, name, img->pid, img->ppid, uid, 1, t0, err) != 0)
        goto out;
    uint32_t exe = put_string(&o, img->exe ? img->exe : "", t0);
    uint32_t comm = 0;
    for (size_t i = 0; i < img->name_count; i++)
        if (img->names[i].tid == img->pid)
            comm = put_string(&o, img->names[i].name, t0);
    uint32_t delta;
    struct asys_rec_process_info *pi = reserve(&o, sizeof *pi, t0, &delta);
    if (pi) {
        *pi = (struct asys_rec_process_info){0, img->pid, img->ppid, exe, comm, ASYS_PROCESS_FORKED,
                                             0};
        asys_segment_commit(&pi->header,
                            ASYS_REC_WORD(ASYS_REC_PROCESS_INFO, sizeof *pi / 8, 0, delta));
    }
    for (size_t i = 0; i < img->name_count; i++) {
        uint32_t id = put_string(&o, img->names[i].name, t0);
        struct asys_rec_thread *t = reserve(&o, sizeof *t, t0, &delta);
        if (t) {
            t->tid = img->names[i].tid;
            t->name_string_id = id;
            asys_segment_commit(&t->header,
                                ASYS_REC_WORD(ASYS_REC_THREAD_START, sizeof *t / 8, 0, delta));
        }
    }
    for (size_t i = 0; i < img->module_count; i++) {
        struct module *m = &img->modules[i];
        m->file = asys_elf_cache_get(w->elf, m->path, m->build_id, m->build_id_length);
        m->bias_known = m->file && asys_elf_file_bias(m->file, m->start, m->pgoff, &m->bias) == 0;
        if (getenv("ASYS_DEBUG"))
            fprintf(stderr, "asys: cpu sampling: pid %u: %s at %" PRIx64 " pgoff %" PRIx64 ": %s\n",
                    img->pid, m->path, m->start, m->pgoff, m->bias_known ? "ok" : "no bias");
        if (m->bias_known)
            put_module(&o, m, put_string(&o, m->path, t0), t0);
    }
    struct module kernel = {.start = KERNEL_MODULE_START, .end = UINT64_MAX, .bias = 0};
    put_module(
        &o, &kernel,
        put_string(&o, w->kernel_symbols ? KERNEL_SYMBOLS_MODULE_NAME : KERNEL_MODULE_NAME, t0),
        t0);
    put_jit_module(&o, img, t0);
    struct library_ranges asys_library;
    find_asys_library(img, &asys_library);
    for (size_t i = 0; i < img->sample_count; i++) {
        struct sample *s = &img->samples[i];
        uint32_t n =
            without_asys_frames(&asys_library, frames, sample_frames(w, img, s, frames, max_depth));
        /* every frame is symbolized at address - 1 (a return address's call):
         * the sampled instruction itself is stored one past its first byte so
         * that a sample on a function's first instruction stays in it (in the
         * kernel, the user frame is already where the thread resumes) */
        if (n && !(s->flags & ASYS_CPU_SAMPLE_IN_KERNEL))
            frames[0] += 1;
        int is_new = 0;
        uint32_t id = n ? chain_id(&chains, frames, n, &is_new) : 0;
        if (is_new)
            put_chain(&o, id, frames, n, s->time);
        w->unwind_failed += (s->flags & ASYS_CPU_SAMPLE_UNWIND_FAILED) != 0;
        struct asys_rec_cpu_sample *r = reserve(&o, sizeof *r, s->time, &delta);
        if (!r)
            continue;
        r->tid = s->tid;
        r->cpu = s->cpu;
        r->callchain_id = id;
        r->flags = s->flags;
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_CPU_SAMPLE, sizeof *r / 8, 0, delta));
        w->samples++;
    }
    rc = 0;
out:
    if (o.open)
        asys_segment_close(&o.w);
    free(chains.frames);
    free(chains.slots);
    return rc;
}

/* ---- the scheduling segment -------------------------------------------------------- */

static int scan_sched(struct writer_state *w, struct asys_err *err)
{
    w->event_count = 0;
    int context_switches = w->run->result->sched_source == ASYS_SCHED_CONTEXT_SWITCH ||
                           w->run->result->sched_source == ASYS_SCHED_CPU_SWITCH;
    for (int i = 0; i < w->file_count; i++)
        if ((w->files[i].sched || context_switches) &&
            scan_file(w, &w->files[i], PASS_SCHED, err) != 0)
            return -1;
    if (w->event_count)
        qsort(w->events, w->event_count, sizeof *w->events, by_time);
    return 0;
}

/* The process of a thread of the traced tree; 0 for any other (system-wide
 * sampling sees every process, whose threads are not the tree's). */
static uint32_t pid_of(struct writer_state *w, uint32_t tid)
{
    uint64_t *v = tid ? asys_u64map_get(&w->tid_pid, tid) : NULL;
    if (!v)
        return 0;
    uint32_t pid = (uint32_t)*v;
    if (w->run->config->scope == ASYS_SAMPLE_SYSTEM_WIDE && !asys_u64map_get(&w->tree, pid))
        return 0;
    return pid;
}

/* A sampled thread's own switch (context_switch records): in, or out with
 * whether it was still runnable (the state of a thread that blocked, S or
 * D, is not told: Waiting). */
static void put_task_switch(struct writer_state *w, struct out_segment *o, const struct event *e)
{
    struct perf_event_header h;
    memcpy(&h, e->rec, sizeof h);
    int exit = h.type == PERF_RECORD_EXIT;
    uint32_t pid = get_u32(e->rec + (exit ? 8 : e->size - 24));
    uint32_t tid = get_u32(e->rec + (exit ? 16 : e->size - 20));
    uint32_t cpu = get_u32(e->rec + e->size - 8);
    int out = exit || (h.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
    uint32_t delta;
    struct asys_rec_sched_switch *r = reserve(o, sizeof *r, e->time, &delta);
    if (!r)
        return;
    r->cpu = cpu;
    r->prev_tid = out ? tid : 0;
    r->next_tid = out ? 0 : tid;
    r->prev_pid = out ? pid : 0;
    r->next_pid = out ? 0 : pid;
    r->prev_state = exit ? ASYS_TASK_DEAD_MASK
                    : !out || (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
                        ? 0
                        : ASYS_TASK_INTERRUPTIBLE;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_SCHED_SWITCH, sizeof *r / 8, 0, delta));
    w->switches++;
}

/* A CPU's switch seen by its system-wide event (SWITCH_CPU_WIDE, out): the
 * task in the sample id went out, next_prev came in; as the tracepoint's,
 * but a thread that blocked is Waiting whether S or D. */
static void put_cpu_switch(struct writer_state *w, struct out_segment *o, const struct event *e)
{
    struct perf_event_header h;
    memcpy(&h, e->rec, sizeof h);
    uint32_t delta;
    struct asys_rec_sched_switch *r = reserve(o, sizeof *r, e->time, &delta);
    if (!r)
        return;
    r->cpu = get_u32(e->rec + e->size - 8);
    r->prev_tid = get_u32(e->rec + e->size - 20);
    r->next_tid = get_u32(e->rec + 12);
    r->prev_pid = pid_of(w, r->prev_tid);
    r->next_pid = pid_of(w, r->next_tid);
    r->prev_state = (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? 0 : ASYS_TASK_INTERRUPTIBLE;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_SCHED_SWITCH, sizeof *r / 8, 0, delta));
    w->switches++;
}

static void put_switch(struct writer_state *w, struct out_segment *o, const struct event *e)
{
    const struct asys_cpu_raw_run *run = w->run;
    struct perf_event_header h;
    memcpy(&h, e->rec, sizeof h);
    if (h.type == PERF_RECORD_SWITCH_CPU_WIDE) {
        put_cpu_switch(w, o, e);
        return;
    }
    if (h.type == PERF_RECORD_SWITCH || h.type == PERF_RECORD_EXIT) {
        put_task_switch(w, o, e);
        return;
    }
    /* TIME, CPU (+res), RAW size, raw data */
    if (e->size < 8 + 8 + 8 + 4)
        return;
    uint32_t cpu = get_u32(e->rec + 16);
    uint32_t raw_size = get_u32(e->rec + 24);
    const uint8_t *raw = e->rec + 28;
    if (raw_size > e->size - 28)
        return;
    uint32_t need = run->next_pid_offset + 4;
    if (run->prev_state_offset + run->prev_state_size > need)
        need = run->prev_state_offset + run->prev_state_size;
    if (run->prev_pid_offset + 4 > need)
        need = run->prev_pid_offset + 4;
    if (raw_size < need)
        return;
    uint32_t delta;
    struct asys_rec_sched_switch *r = reserve(o, sizeof *r, e->time, &delta);
    if (!r)
        return;
    r->cpu = cpu;
    r->prev_tid = get_u32(raw + run->prev_pid_offset);
    r->next_tid = get_u32(raw + run->next_pid_offset);
    r->prev_pid = pid_of(w, r->prev_tid);
    r->next_pid = pid_of(w, r->next_tid);
    r->prev_state = get_u32(raw + run->prev_state_offset); /* the low half of a long */
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_SCHED_SWITCH, sizeof *r / 8, 0, delta));
    w->switches++;
}

static int write_sched(struct writer_state *w, struct asys_err *err)
{
    struct out_segment o = {0};
    const struct asys_cpu_raw_run *run = w->run;
    int rc = -1;
    if (scan_sched(w, err) != 0)
        goto out;
    uint64_t t0 = w->event_count ? w->events[0].time : w->first_time;
    if (!t0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    if (segment_open(&o, w, "cpu-sched", (uint32_t)run->target, 0,
                     SAMPLER_UID_TAG << 56 | 0xffffffull << 32 | (uint32_t)run->target, 0, t0,
                     err) != 0)
        goto out;
    uint64_t t_last = t0;
    for (size_t i = 0; i < w->event_count; i++) {
        put_switch(w, &o, &w->events[i]);
        t_last = w->events[i].time;
    }
    uint32_t delta;
    size_t reason = strnlen(run->result->reason, sizeof run->result->reason);
    uint32_t size = (uint32_t)((sizeof(struct asys_rec_cpu_sampling_info) + reason + 7) & ~7ull);
    struct asys_rec_cpu_sampling_info *info = reserve(&o, size, t_last, &delta);
    if (info) {
        memset((uint8_t *)info + 8, 0, size - 8);
        memcpy(info + 1, run->result->reason, reason);
        info->status = run->result->status;
        info->event = run->result->event;
        info->period = run->result->period;
        info->requested_cycles = run->config->period_cycles;
        info->samples = w->samples;
        info->lost_samples = w->lost_samples;
        info->throttled = w->throttled;
        info->unwind_failed = w->unwind_failed;
        info->sched_switches = w->switches;
        info->backtrace = run->config->backtrace;
        info->scope = run->config->scope;
        info->sched_source = run->result->sched_source;
        info->reason_length = (uint32_t)reason;
        info->stack_bytes =
            run->config->backtrace == ASYS_BACKTRACE_DWARF ? run->config->stack_bytes : 0;
        info->nominal_mhz = run->result->nominal_mhz;
        info->backtrace_depth = run->config->depth;
        info->lost_switches = w->lost_switches;
        asys_segment_commit(&info->header,
                            ASYS_REC_WORD(ASYS_REC_CPU_SAMPLING_INFO, size / 8, 0, delta));
    }
    rc = 0;
out:
    if (o.open)
        asys_segment_close(&o.w);
    return rc;
}

/* Removes the raw files: they are never part of the report. */
static void remove_raw(const struct asys_cpu_raw_run *run)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", run->session_dir, ASYS_CPU_RAW_DIR);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
    rmdir(dir);
}

/* Whether the session was recorded since this boot: kallsyms' addresses
 * move at each boot, so a session finalized after a reboot keeps its kernel
 * frames as one [kernel] frame. */
static int recorded_this_boot(const char *session_dir)
{
    char path[4300], now[64] = "";
    snprintf(path, sizeof path, "%s/%s", session_dir, ASYS_SESSION_FILE);
    struct asys_err ignored = {0};
    cJSON *session = asys_json_load(path, &ignored);
    cJSON *clock = session ? cJSON_GetObjectItemCaseSensitive(session, "clock") : NULL;
    asys_read_first_line(ASYS_BOOT_ID_FILE, now, sizeof now);
    int same = now[0] && !strcmp(asys_json_get_str(clock, "boot_id", ""), now);
    cJSON_Delete(session);
    return same;
}

int asys_cpu_samples_write(const struct asys_cpu_raw_run *run, struct asys_err *err)
{
    struct writer_state *w = calloc(1, sizeof *w);
    int rc = -1;
    if (!w) {
        asys_fail(err, "out of memory");
        goto out;
    }
    w->run = run;
    asys_u64map_init(&w->current);
    asys_u64map_init(&w->tid_pid);
    asys_u64map_init(&w->tree);
    w->elf = asys_elf_cache_new();
    if (!w->elf || asys_u64map_put(&w->tree, (uint64_t)run->target, 1) != 0) {
        asys_fail(err, "out of memory");
        goto out;
    }
    /* the sampler asked for the kernel's callchains (system-wide, kallsyms readable) */
    w->kernel_symbols = run->config->scope == ASYS_SAMPLE_SYSTEM_WIDE &&
                        (run->sample_type & PERF_SAMPLE_CALLCHAIN) &&
                        asys_kallsyms_readable(ASYS_KALLSYMS) &&
                        recorded_this_boot(run->session_dir);
    char arena[4300];
    if (asys_arena_path(run->session_dir, arena, sizeof arena) != 0 ||
        asys_arena_attach(&w->arena, arena) != 0)
        memset(&w->arena, 0, sizeof w->arena);
    if (load_files(w, err) != 0 || build_images(w, err) != 0)
        goto out;
    for (size_t i = 0; i < w->image_count; i++)
        if (write_image(w, w->images[i], i, err) != 0)
            goto out;
    if (write_sched(w, err) != 0)
        goto out;
    if (getenv("ASYS_DEBUG"))
        fprintf(stderr, "asys: cpu sampling: %zu images, %u files opened for the unwinder\n",
                w->image_count, asys_elf_cache_files(w->elf));
    rc = 0;
out:
    if (w) {
        asys_arena_detach(&w->arena);
        asys_elf_cache_free(w->elf);
        for (int i = 0; i < w->file_count; i++)
            munmap(w->files[i].data, w->files[i].size);
        for (size_t i = 0; i < w->image_count; i++)
            image_free(w->images[i]);
        free(w->images);
        free(w->events);
        asys_u64map_free(&w->current);
        asys_u64map_free(&w->tid_pid);
        asys_u64map_free(&w->tree);
        free(w);
    }
    if (!getenv("ASYS_KEEP_SESSION"))
        remove_raw(run);
    return rc;
}

/* ---- an interrupted session ------------------------------------------------------- */

struct run_field {
    const char *key;
    size_t offset, size; /* in struct run_image */
    uint64_t max;        /* what a value read back may be */
};

/* Everything of a run that is not a pointer, as one struct. */
struct run_image {
    uint64_t scope, backtrace, period_cycles, depth, stack_bytes;
    uint64_t status, event, period, nominal_mhz, sched_source;
    uint64_t sample_type, regs_mask, cpus, target;
    uint64_t prev_pid_offset, prev_state_offset, prev_state_size, next_pid_offset;
};

#define RUN_FIELD(name, limit)                                                                     \
    {                                                                                              \
#name, offsetof(struct run_image, name), 8, limit                                          \
    }
static const struct run_field fields[] = {
    RUN_FIELD(scope, ASYS_SAMPLE_SYSTEM_WIDE),
    RUN_FIELD(backtrace, ASYS_BACKTRACE_DWARF),
    RUN_FIELD(period_cycles, 1ull << 40),
    RUN_FIELD(depth, ASYS_CALLCHAIN_MAX_DEPTH),
    RUN_FIELD(stack_bytes, 65528),
    RUN_FIELD(status, ASYS_CPU_SAMPLING_UNAVAILABLE),
    RUN_FIELD(event, ASYS_CPU_EVENT_CPU_CLOCK),
    RUN_FIELD(period, 1ull << 50),
    RUN_FIELD(nominal_mhz, 100000),
    RUN_FIELD(sched_source, ASYS_SCHED_CPU_SWITCH),
    RUN_FIELD(sample_type, UINT64_MAX),
    RUN_FIELD(regs_mask, UINT64_MAX),
    RUN_FIELD(cpus, ASYS_CPU_MAX_CPUS),
    RUN_FIELD(target, UINT32_MAX),
    RUN_FIELD(prev_pid_offset, 4096),
    RUN_FIELD(prev_state_offset, 4096),
    RUN_FIELD(prev_state_size, 8),
    RUN_FIELD(next_pid_offset, 4096),
};

static const struct run_field *run_fields(size_t *count)
{
    *count = sizeof fields / sizeof fields[0];
    return fields;
}

int asys_cpu_run_save(const struct asys_cpu_raw_run *run, struct asys_err *err)
{
    const struct asys_cpu_sampler_config *c = run->config;
    const struct asys_cpu_sampler_result *r = run->result;
    struct run_image img = {c->scope,
                            c->backtrace,
                            c->period_cycles,
                            c->depth,
                            c->stack_bytes,
                            r->status,
                            r->event,
                            r->period,
                            r->nominal_mhz,
                            r->sched_source,
                            run->sample_type,
                            run->regs_mask,
                            (uint64_t)run->cpus,
                            (uint64_t)run->target,
                            run->prev_pid_offset,
                            run->prev_state_offset,
                            run->prev_state_size,
                            run->next_pid_offset};
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return asys_fail(err, "out of memory");
    size_t n;
    const struct run_field *f = run_fields(&n);
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, (const uint8_t *)&img + f[i].offset, 8);
        asys_json_add_u64(root, f[i].key, v);
    }
    cJSON_AddStringToObject(root, "reason", r->reason);
    char path[4300];
    snprintf(path, sizeof path, "%s/%s/%s", run->session_dir, ASYS_CPU_RAW_DIR, ASYS_CPU_RUN_FILE);
    int rc = asys_json_save(path, root, err);
    cJSON_Delete(root);
    return rc;
}

/* The image segments an interrupted write left in the arena lose their slot
 * magic: the ones written again are then the only ones finalize finds. */
static void forget_arena_images(const char *session_dir)
{
    char path[4300];
    struct asys_arena_index index;
    memset(&index, 0, sizeof index);
    struct asys_err err = {0};
    if (asys_arena_path(session_dir, path, sizeof path) != 0 ||
        asys_arena_index_read(path, &index, &err) != 0)
        return;
    int fd = index.count ? open(path, O_WRONLY | O_CLOEXEC) : -1;
    static const char no_magic[sizeof((struct asys_slot_header *)0)->magic];
    for (size_t i = 0; fd >= 0 && i < index.count; i++) {
        const struct asys_arena_segment *seg = &index.segments[i];
        if (seg->key.process_uid >> 56 != SAMPLER_UID_TAG)
            continue;
        for (size_t k = 0; k < seg->count; k++)
            if (pwrite(fd, no_magic, sizeof no_magic, (off_t)seg->slots[k]) != sizeof no_magic)
                break;
    }
    if (fd >= 0)
        close(fd);
    asys_arena_index_free(&index);
}

int asys_cpu_samples_recover(const char *session_dir, struct asys_err *err)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s/%s", session_dir, ASYS_CPU_RAW_DIR, ASYS_CPU_RUN_FILE);
    char written[4300];
    snprintf(written, sizeof written, "%s/segments/cpu-sched%s", session_dir, ASYS_SEGMENT_SUFFIX);
    if (access(path, F_OK) != 0 || access(written, F_OK) == 0)
        return 0; /* no sampling, or its segments are written already */
    struct asys_err load_err = {0};
    cJSON *root = asys_json_load(path, &load_err);
    int rc = -1;
    struct run_image img;
    memset(&img, 0, sizeof img);
    if (!root) {
        asys_fail(err, "cannot read '%s': %s", path, load_err.text);
        goto out;
    }
    size_t n;
    const struct run_field *f = run_fields(&n);
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        if (asys_json_get_u64(root, f[i].key, &v) != 0 || v > f[i].max) {
            asys_fail(err, "cannot read '%s': '%s' missing or out of range", path, f[i].key);
            goto out;
        }
        memcpy((uint8_t *)&img + f[i].offset, &v, 8);
    }
    struct asys_cpu_sampler_config config = {
        .scope = (enum asys_cpu_sampling_scope)img.scope,
        .backtrace = (enum asys_cpu_backtrace)img.backtrace,
        .period_cycles = img.period_cycles,
        .depth = (uint32_t)img.depth,
        .stack_bytes = (uint32_t)img.stack_bytes,
        .session_dir = session_dir,
    };
    struct asys_cpu_sampler_result result = {.status = (enum asys_cpu_sampling_status)img.status,
                                             .event = (enum asys_cpu_sampling_event)img.event,
                                             .period = img.period,
                                             .nominal_mhz = (uint32_t)img.nominal_mhz,
                                             .sched_source =
                                                 (enum asys_sched_source)img.sched_source};
    snprintf(result.reason, sizeof result.reason, "%s", asys_json_get_str(root, "reason", ""));
    struct asys_cpu_raw_run run = {session_dir,
                                   &config,
                                   &result,
                                   img.sample_type,
                                   img.regs_mask,
                                   (int)img.cpus,
                                   (pid_t)img.target,
                                   (uint32_t)img.prev_pid_offset,
                                   (uint32_t)img.prev_state_offset,
                                   (uint32_t)img.prev_state_size,
                                   (uint32_t)img.next_pid_offset};
    forget_arena_images(session_dir);
    rc = asys_cpu_samples_write(&run, err);
out:
    cJSON_Delete(root);
    return rc;
}
