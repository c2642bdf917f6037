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

/* ---- reading the raw files ----------------------------------------------------- */

int cpu_load_raw_files(struct writer_state *w, struct asys_err *err)
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

int cpu_events_by_time(const void *a, const void *b)
{
    const struct event *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

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
    /* a few kB per image: one write each rather than a slot mapped, faulted
     * in and unmapped (a third of a 500-process finalize); zeroed, as a
     * fresh slot reads */
    if (w->arena.control && !(w->slot_buffer = calloc(1, w->arena.slot_size))) {
        asys_fail(err, "out of memory");
        goto out;
    }
    if (cpu_load_raw_files(w, err) != 0 || cpu_build_images(w, err) != 0)
        goto out;
    for (size_t i = 0; i < w->image_count; i++)
        if (cpu_write_image(w, w->images[i], i, err) != 0)
            goto out;
    if (cpu_write_sched(w, err) != 0)
        goto out;
    asys_note(ASYS_NOTE_DEBUG, "cpu sampling: %zu images, %u files opened for the unwinder",
              w->image_count, asys_elf_cache_files(w->elf));
    rc = 0;
out:
    if (w) {
        asys_arena_detach(&w->arena);
        free(w->slot_buffer);
        asys_elf_cache_free(w->elf);
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
    if (!getenv("ASYS_KEEP_SESSION"))
        remove_raw(run);
    return rc;
}
