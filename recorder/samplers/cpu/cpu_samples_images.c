/* Process images of the CPU samples: each pid's modules (MMAP2), exec
 * (COMM) and fork (FORK) as the rings saw them, and its samples. */
#define _GNU_SOURCE
#include "cpu_samples.h"

/* ---- process images ------------------------------------------------------------- */

static struct image *image_new(struct writer_state *w, uint32_t pid, const struct image *parent)
{
    if (asys_grow(&w->images, &w->image_cap, w->image_count, sizeof *w->images, 16))
        return NULL;
    struct image *img = calloc(1, sizeof *img);
    if (!img)
        return NULL;
    img->pid = pid;
    img->index = w->image_count;
    img->live_threads = 1;
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
        img->asys_library = parent->asys_library; /* its modules, as copied */
    }
    w->images[w->image_count++] = img;
    asys_u64map_put(&w->current, pid, w->image_count);
    return img;
}

/* The pid's image now; NULL when none was seen. */
static struct image *current_image(struct writer_state *w, uint32_t pid)
{
    uint64_t *v = asys_u64map_get(&w->current, pid);
    return v && *v && *v <= w->image_count ? w->images[*v - 1] : NULL;
}

/* The pid's image, made when none was seen; one written while the program
 * ran but that goes on (a thread its counts missed) goes on in a new image
 * with its modules. */
static struct image *image_of(struct writer_state *w, uint32_t pid)
{
    struct image *img = current_image(w, pid);
    if (img && img->written) {
        struct image *next = image_new(w, pid, img);
        if (next) {
            next->ppid = img->ppid;
            next->forked = img->forked;
        }
        return next;
    }
    return img ? img : image_new(w, pid, NULL);
}

void cpu_image_drop_samples(struct image *img)
{
    free(img->samples);
    free(img->chains.frames);
    free(img->chains.slots);
    img->samples = NULL;
    img->sample_count = img->sample_cap = 0;
    memset(&img->chains, 0, sizeof img->chains);
}

void cpu_image_free(struct image *img)
{
    for (size_t i = 0; i < img->module_count; i++)
        free(img->modules[i].path);
    free(img->modules);
    free(img->names);
    cpu_image_drop_samples(img);
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
    cpu_note_asys_library(img, m);
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
        (img->module_count || img->sample_count || img->forked)) {
        img->ended = 1; /* exec: its last sample was before */
        img->exit_time = time;
        img = image_new(w, pid, NULL); /* a new image, modules from scratch */
    } else if (img && (h.misc & PERF_RECORD_MISC_COMM_EXEC))
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
    if (pid == ppid) { /* a thread */
        struct image *img = current_image(w, pid);
        if (img)
            img->live_threads++;
        return 0;
    }
    if (asys_u64map_get(&w->tree, ppid) && asys_u64map_put(&w->tree, pid, 1) != 0)
        return -1;
    struct image *reused = current_image(w, pid);
    if (reused && !reused->ended) { /* its pid is another process's now: it ended */
        reused->ended = 1;
        reused->exit_time = get_u64(rec + 24);
    }
    struct image *parent = image_of(w, ppid);
    return parent && image_new(w, pid, parent) ? 0 : -1;
}

/* A thread's end; the image's, when it was the last. */
static void on_exit_record(struct writer_state *w, const uint8_t *rec, uint64_t time)
{
    struct image *img = current_image(w, get_u32(rec + 8));
    if (img && img->live_threads && --img->live_threads == 0) {
        img->ended = 1;
        img->exit_time = time;
    }
}

static int on_sample(struct writer_state *w, const uint8_t *rec, uint32_t size, uint64_t time,
                     struct image **sampled)
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
    *sampled = img;
    return 0;
}

/* One record of the sampling rings, taken in time order (out of memory:
 * -1); *sampled: the image a sample was added to, else NULL. */
static int cpu_image_event(struct writer_state *w, const struct event *e, struct image **sampled)
{
    struct perf_event_header h;
    memcpy(&h, e->rec, sizeof h);
    int rc = 0;
    *sampled = NULL;
    if (h.type == PERF_RECORD_MMAP2)
        rc = on_mmap2(w, e->rec, e->size);
    else if (h.type == PERF_RECORD_COMM)
        rc = on_comm(w, e->rec, e->size, e->time);
    else if (h.type == PERF_RECORD_FORK)
        rc = on_fork(w, e->rec);
    else if (h.type == PERF_RECORD_EXIT)
        on_exit_record(w, e->rec, e->time);
    else if (h.type == PERF_RECORD_SAMPLE)
        rc = on_sample(w, e->rec, e->size, e->time, sampled);
    if (!w->first_time || e->time < w->first_time)
        w->first_time = e->time;
    return rc;
}

int cpu_take_events(struct writer_state *w, struct image_output *unwind_with, struct asys_err *err)
{
    if (w->event_count)
        qsort(w->events, w->event_count, sizeof *w->events, cpu_events_by_time);
    for (size_t i = 0; i < w->event_count; i++) {
        struct image *sampled;
        if (cpu_image_event(w, &w->events[i], &sampled) != 0)
            return asys_fail(err, "out of memory");
        if (sampled && unwind_with)
            cpu_unwind_sample(w, unwind_with, sampled,
                              &sampled->samples[sampled->sample_count - 1]);
    }
    w->event_count = 0;
    return 0;
}

int cpu_build_images(struct writer_state *w, struct asys_err *err)
{
    for (int i = 0; i < w->file_count; i++)
        if (!w->files[i].sched && cpu_scan_raw_file(w, &w->files[i], PASS_SAMPLES, err) != 0)
            return -1;
    return cpu_take_events(w, NULL, err);
}
