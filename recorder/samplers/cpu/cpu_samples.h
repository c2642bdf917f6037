/* The CPU sample writer's shared state (cpu_samples_*.c; cpu_sampler.h is
 * the interface): the raw perf rings of a run are read (cpu_samples_write.c),
 * sorted into process images (cpu_samples_images.c), unwound
 * (cpu_samples_unwind.c) and written as segments (cpu_samples_segments.c);
 * an interrupted session is finished by cpu_samples_recover.c. */
#ifndef ASYS_CPU_SAMPLES_H
#define ASYS_CPU_SAMPLES_H

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
#define SEGMENT_MAX (4ull << 30)
#define MAX_RAW_FILE (64ull << 30)
#define MAX_PATH_TEXT 4000

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
    int resolved; /* file and bias looked up (cpu_resolve_modules) */
};

struct thread_name {
    uint64_t time;
    uint32_t tid;
    char name[16];
};

struct sample {
    uint64_t time;
    uint32_t tid, cpu, flags;
    const uint8_t *rec; /* the perf record; NULL once unwound (callchain_id) */
    uint32_t size;
    uint32_t callchain_id; /* in the image's chains; 0: none */
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

struct image_output;

#define ASYS_LIBRARY_RANGES 32 /* every mapping of every injected library (5 each) */

struct library_ranges {
    uint64_t start[ASYS_LIBRARY_RANGES], end[ASYS_LIBRARY_RANGES];
    size_t count;
};

struct image {
    uint32_t pid, ppid;
    size_t index; /* in writer_state.images: its segment's name and uid */
    int forked; /* a fork child that has not exec'd */
    char *exe;
    struct module *modules;
    size_t module_count, module_cap;
    struct library_ranges asys_library; /* its modules of asys's injected libraries */
    struct thread_name *names;
    size_t name_count, name_cap;
    struct sample *samples;
    size_t sample_count, sample_cap;
    uint64_t first_time;
    struct chain_table chains; /* of the samples unwound */
    const struct image_output *resolved_by; /* whose ELF cache its modules' files are in */
    /* threads that run it: its first, and those it started (FORK), less
     * those that ended (EXIT); none left: ended at exit_time */
    uint32_t live_threads;
    int ended, written;
    uint64_t exit_time;
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
    struct asys_u64map tree; /* pids of the traced tree: the program and what it forked */
    uint64_t lost_samples, lost_switches, throttled, unwind_failed, samples, switches;
    uint64_t first_time;
    int kernel_symbols; /* kernel callchains kept, to be named from kallsyms */
    struct asys_arena arena; /* the session's (control NULL: a file per segment) */
};

/* What a thread writing images owns: libdw's objects are not shared between
 * threads, so each has the binaries open for itself. */
struct image_output {
    struct asys_elf_cache *elf; /* every binary its images map, opened once */
    uint8_t *slot_buffer; /* a slot's bytes: an image's segment is staged there */
    uint64_t samples, unwind_failed;
};

/* The unwinder's view of the sample being unwound: its process's modules
 * and the stack bytes the kernel copied. */
struct unwind_view {
    const struct image *img;
    const uint8_t *stack;
    uint64_t stack_size, stack_base;
};

static inline uint64_t get_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t get_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Collects a ring's records for one pass: the sampling rings' side-band and
 * samples (LOST and THROTTLE counted), or the context switches (the sched
 * rings' tracepoint samples, counted; the sampling rings' SWITCH records
 * when the tracepoint was not available). */
enum scan_pass { PASS_SAMPLES, PASS_SCHED };

/* cpu_samples_write.c: the raw files, merged in time order */
struct writer_state *cpu_writer_new(const struct asys_cpu_raw_run *run, struct asys_err *err);
/* The images not written yet (`out`: the first thread's output, NULL for a
 * new one) and the scheduling segment; the raw files loaded. */
int cpu_writer_finish(struct writer_state *w, struct image_output *out, struct asys_err *err);
void cpu_writer_free(struct writer_state *w);
/* Removes the raw files, unless the session is kept (ASYS_KEEP_SESSION). */
void cpu_remove_raw(const struct asys_cpu_raw_run *run);
/* Maps the raw files into w->files: the scheduling rings' and, with
 * `samples`, the sampling rings' too (the online thread maps those itself). */
int cpu_load_raw_files(struct writer_state *w, int samples, struct asys_err *err);
/* Adds a mapped raw file to w->files (unmapped by cpu_writer_free); -1 when
 * they are all taken. */
int cpu_add_raw_file(struct writer_state *w, const struct raw_file *f);
int cpu_scan_raw_file(struct writer_state *w, const struct raw_file *f, enum scan_pass pass,
                      struct asys_err *err);
/* The time a sampling ring's record sorts by: a SAMPLE's, FORK's or EXIT's
 * field, a side-band record's sample_id trailer; -1 when it has none (other
 * types) or is too short for it. */
int cpu_record_time(const uint8_t *rec, uint32_t size, uint64_t *time);
int cpu_events_by_time(const void *a, const void *b);

/* cpu_samples_images.c: each process image's modules, names and samples */
int cpu_build_images(struct writer_state *w, struct asys_err *err);
/* The events collected (w->events), sorted by time, into the images; each
 * sample unwound at once with `unwind_with`'s files where given, else left
 * for cpu_write_image.  The events are let go. */
int cpu_take_events(struct writer_state *w, struct image_output *unwind_with, struct asys_err *err);
void cpu_image_free(struct image *img);
/* Frees the image's samples and chains (its segment holds them). */
void cpu_image_drop_samples(struct image *img);

/* cpu_samples_unwind.c: a sample's frames, without asys's own, each chain once */
uint32_t cpu_sample_frames(const struct writer_state *w, const struct image *img, struct sample *s,
                           uint64_t *frames, uint32_t max_depth);
/* Notes `m` in img->asys_library when it is one of asys's injected
 * libraries (as each module is mapped, not at each sample). */
void cpu_note_asys_library(struct image *img, const struct module *m);
uint32_t cpu_without_asys_frames(const struct library_ranges *r, uint64_t *frames, uint32_t n);
uint32_t cpu_chain_id(struct chain_table *t, const uint64_t *f, uint32_t n, int *is_new);
/* The image's modules not yet looked up, in `out`'s ELF cache. */
void cpu_resolve_modules(struct image_output *out, struct image *img);
/* Unwinds the sample (its record must still be there) into the image's
 * chains: its callchain_id set, its record let go. */
void cpu_unwind_sample(const struct writer_state *w, struct image_output *out, struct image *img,
                       struct sample *s);

/* cpu_samples_segments.c: the images' segments and the scheduling segment */
int cpu_write_image(const struct writer_state *w, struct image_output *out, struct image *img,
                    struct asys_err *err);
/* The process uid of the image's segment. */
uint64_t cpu_image_uid(const struct image *img);
int cpu_write_sched(struct writer_state *w, struct asys_err *err);

#endif
