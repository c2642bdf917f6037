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
#include "cpu_samples.h"
#include "notes.h"

#include <pthread.h>

/* ---- reading the raw files ----------------------------------------------------- */

int cpu_add_raw_file(struct writer_state *w, const struct raw_file *f)
{
    if (w->file_count >= (int)(sizeof w->files / sizeof w->files[0]))
        return -1;
    w->files[w->file_count++] = *f;
    return 0;
}

int cpu_load_raw_files(struct writer_state *w, int samples, struct asys_err *err)
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
        if (!sched && (!samples || strncmp(e->d_name, "samples-", 8)))
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
                cpu_add_raw_file(w, &(struct raw_file){m, (size_t)st.st_size, sched});
        }
        close(fd);
    }
    closedir(d);
    return rc;
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

int cpu_record_time(const uint8_t *rec, uint32_t size, uint64_t *time)
{
    struct perf_event_header h;
    memcpy(&h, rec, sizeof h);
    switch (h.type) {
    case PERF_RECORD_SAMPLE:
        return sample_time(rec, size, time);
    case PERF_RECORD_MMAP2:
        return trailer_time(rec, size, 72, time);
    case PERF_RECORD_COMM:
        return trailer_time(rec, size, 16, time);
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
        if (size < 32)
            return -1;
        *time = get_u64(rec + 24);
        return 0;
    default:
        return -1;
    }
}

static int add_event(struct writer_state *w, uint64_t time, const uint8_t *rec, uint32_t size)
{
    if (asys_grow(&w->events, &w->event_cap, w->event_count, sizeof *w->events, 4096))
        return -1;
    w->events[w->event_count] = (struct event){time, rec, size, (uint32_t)w->event_count};
    w->event_count++;
    return 0;
}

int cpu_scan_raw_file(struct writer_state *w, const struct raw_file *f, enum scan_pass pass,
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
                break;
            }
            /* fall through */
        case PERF_RECORD_MMAP2:
        case PERF_RECORD_COMM:
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT:
            keep = cpu_record_time(rec, h.size, &time) == 0;
            break;
        default: /* SWITCH records are read in the scheduling pass */
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

int cpu_events_by_time(const void *a, const void *b)
{
    const struct event *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

void cpu_remove_raw(const struct asys_cpu_raw_run *run)
{
    if (getenv("ASYS_KEEP_SESSION"))
        return;
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

/* ---- the images, on two threads ------------------------------------------------- */

/* Fewer samples to unwind than this: one thread (a second opens the
 * binaries again). */
#define SAMPLES_FOR_A_HELPER 256

struct image_writer {
    const struct writer_state *w;
    struct image_output own, *out; /* out: `own`, or the caller's */
    size_t *next; /* the next image to write, shared by the threads */
    int rc;
    struct asys_err err;
};

static int image_writer_init(struct image_writer *iw, const struct writer_state *w, size_t *next,
                             struct image_output *given)
{
    iw->w = w;
    iw->next = next;
    iw->out = given ? given : &iw->own;
    if (given)
        return 0;
    iw->own.elf = asys_elf_cache_new();
    /* a few kB per image: one write each rather than a slot mapped, faulted
     * in and unmapped (a third of a 500-process finalize); zeroed, as a
     * fresh slot reads */
    if (!iw->own.elf ||
        (w->arena.control && !(iw->own.slot_buffer = calloc(1, w->arena.slot_size))))
        return asys_fail(&iw->err, "out of memory");
    return 0;
}

static void image_writer_free(struct image_writer *iw)
{
    asys_elf_cache_free(iw->own.elf);
    free(iw->own.slot_buffer);
}

/* Writes images, each taken from the shared counter, until none is left or
 * one fails (then the others stop at their next). */
static void *write_images(void *arg)
{
    struct image_writer *iw = arg;
    const struct writer_state *w = iw->w;
    for (;;) {
        size_t i = __atomic_fetch_add(iw->next, 1, __ATOMIC_RELAXED);
        if (i >= w->image_count)
            break;
        if (w->images[i]->written)
            continue; /* while the program ran */
        if (cpu_write_image(w, iw->out, w->images[i], &iw->err) != 0) {
            iw->rc = -1;
            __atomic_store_n(iw->next, w->image_count, __ATOMIC_RELAXED);
            break;
        }
    }
    return NULL;
}

/* Every image's segment not written yet: unwinding is most of a
 * recording's finalize, on a second CPU as well where there is one and
 * enough samples to unwind. */
static int write_all_images(struct writer_state *w, struct image_output *given,
                            struct asys_err *err)
{
    size_t next = 0, samples = 0;
    for (size_t i = 0; i < w->image_count; i++)
        for (size_t k = 0; !w->images[i]->written && k < w->images[i]->sample_count; k++)
            samples += w->images[i]->samples[k].rec != NULL;
    struct image_writer parts[2];
    memset(parts, 0, sizeof parts);
    int threads = 1, rc = -1;
    pthread_t helper;
    if (image_writer_init(&parts[0], w, &next, given) != 0) {
        *err = parts[0].err;
        goto out;
    }
    const char *one = getenv(ASYS_TEST_ONE_IMAGE_THREAD_ENV);
    if (!(one && *one) && samples >= SAMPLES_FOR_A_HELPER && sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
        image_writer_init(&parts[1], w, &next, NULL) == 0 &&
        pthread_create(&helper, NULL, write_images, &parts[1]) == 0)
        threads = 2;
    write_images(&parts[0]);
    if (threads == 2)
        pthread_join(helper, NULL);
    rc = 0;
    unsigned files = 0;
    for (int t = 0; t < threads; t++) {
        w->samples += parts[t].out->samples;
        w->unwind_failed += parts[t].out->unwind_failed;
        files += asys_elf_cache_files(parts[t].out->elf);
        if (parts[t].rc && !rc) {
            rc = -1;
            *err = parts[t].err;
        }
    }
    asys_note(ASYS_NOTE_DEBUG,
              "cpu sampling: %zu images on %d thread%s, %u files opened for the unwinder (%zu "
              "samples unwound at the end)",
              w->image_count, threads, threads > 1 ? "s" : "", files, samples);
out:
    image_writer_free(&parts[0]);
    image_writer_free(&parts[1]);
    return rc;
}

struct writer_state *cpu_writer_new(const struct asys_cpu_raw_run *run, struct asys_err *err)
{
    struct writer_state *w = calloc(1, sizeof *w);
    if (!w) {
        asys_fail(err, "out of memory");
        return NULL;
    }
    w->run = run;
    asys_u64map_init(&w->current);
    asys_u64map_init(&w->tid_pid);
    asys_u64map_init(&w->tree);
    if (asys_u64map_put(&w->tree, (uint64_t)run->target, 1) != 0) {
        asys_fail(err, "out of memory");
        cpu_writer_free(w);
        return NULL;
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
    return w;
}

int cpu_writer_finish(struct writer_state *w, struct image_output *out, struct asys_err *err)
{
    return write_all_images(w, out, err) != 0 || cpu_write_sched(w, err) != 0 ? -1 : 0;
}

void cpu_writer_free(struct writer_state *w)
{
    if (!w)
        return;
    asys_arena_detach(&w->arena);
    for (int i = 0; i < w->file_count; i++)
        munmap(w->files[i].data, w->files[i].size);
    for (size_t i = 0; i < w->image_count; i++)
        cpu_image_free(w->images[i]);
    free(w->images);
    free(w->events);
    asys_u64map_free(&w->current);
    asys_u64map_free(&w->tid_pid);
    asys_u64map_free(&w->tree);
    free(w);
}

int asys_cpu_samples_write(const struct asys_cpu_raw_run *run, struct asys_err *err)
{
    struct writer_state *w = cpu_writer_new(run, err);
    int rc = !w || cpu_load_raw_files(w, 1, err) != 0 || cpu_build_images(w, err) != 0 ||
                     cpu_writer_finish(w, NULL, err) != 0
                 ? -1
                 : 0;
    cpu_writer_free(w);
    cpu_remove_raw(run);
    return rc;
}
