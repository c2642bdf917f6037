/* The CPU samples' images built, unwound and written while the program
 * runs (cpu_sampler.h).
 *
 * The drain thread copies the rings into the raw files as before (what a
 * killed launcher leaves for `asys finalize`).  After each drain it flushes
 * them and publishes a time before which every record is in the files: the
 * start of its previous drain (a record is in its ring microseconds after
 * its time).  This thread reads the files from where it stopped, takes their
 * records up to that time in time order (cpu_image_event, as the images are
 * built at the end), unwinds each sample at once with the modules its
 * process had mapped, and writes each process image whose threads have all
 * ended, or that exec replaced, one drain after its end.  What is left at the
 * program's end is read from the mapped files as before: the samples
 * not unwound yet and the images still running, on two threads where there
 * are enough (cpu_writer_finish). */
#define _GNU_SOURCE
#include "cleanup.h"
#include "cpu_samples.h"
#include "notes.h"
#include "symbolize.h"

#include <pthread.h>
#include <sched.h>

/* The bytes one pass reads at most, of all files (each its share, at least
 * FILE_PASS_MIN): a program that samples faster than this thread unwinds
 * leaves the rest to later passes, or to the end. */
#define PASS_MAX_BYTES (32u << 20)
#define FILE_PASS_MIN (256u << 10)

struct online_file {
    int fd;
    uint64_t offset; /* the records before it are taken */
    uint8_t *buf; /* buf + start: the bytes from offset on that a pass read and did not take */
    size_t start, len, cap;
};

struct asys_cpu_online {
    struct writer_state *w;
    struct image_output out; /* this thread's ELF cache, then the end's first thread's */
    struct online_file files[ASYS_CPU_MAX_CPUS];
    int file_count;
    size_t first_open; /* images before it are written or never sampled */
    size_t written; /* images written while the program ran */
    uint64_t written_before; /* the previous pass's time: images ended before it go */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    uint64_t published; /* under lock: records before it are in the files */
    int stop; /* under lock */
    int failed; /* out of memory in this thread: the end says so */
    size_t test_pass_max; /* ASYS_TEST_ONLINE_PASS_BYTES: a file's bytes a pass */
};

/* The whole records at the start of `data` whose time is before `until`
 * (records without a time go with them): their length; *last, the time of
 * the last of them that has one (0: none). */
static size_t records_before(const uint8_t *data, size_t size, uint64_t until, uint64_t *last)
{
    size_t at = 0;
    *last = 0;
    while (at + sizeof(struct perf_event_header) <= size) {
        struct perf_event_header h;
        memcpy(&h, data + at, sizeof h);
        if (h.size < sizeof h || h.size > size - at)
            break; /* the rest of it is not in the file yet */
        uint64_t t;
        int timed = cpu_record_time(data + at, h.size, &t) == 0;
        if (timed && t >= until)
            break;
        *last = timed ? t : *last;
        at += h.size;
    }
    return at;
}

static int open_files(struct asys_cpu_online *o, const char *session_dir)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", session_dir, ASYS_CPU_RAW_DIR);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && o->file_count < ASYS_CPU_MAX_CPUS) {
        if (strncmp(e->d_name, "samples-", 8))
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
            o->files[o->file_count++] = (struct online_file){.fd = fd};
    }
    closedir(d);
    return 0;
}

/* The bytes a pass read and did not take (none before the first read). */
static uint8_t *untaken(const struct online_file *f)
{
    return f->buf ? f->buf + f->start : NULL;
}

static size_t file_pass_max(const struct asys_cpu_online *o)
{
    if (o->test_pass_max)
        return o->test_pass_max;
    size_t share = PASS_MAX_BYTES / (size_t)(o->file_count ? o->file_count : 1);
    return share > FILE_PASS_MIN ? share : FILE_PASS_MIN;
}

/* Adds to each file's buffer what was written after it (up to its share of
 * a pass): the records a pass left, past its time, are not read again.
 * They move to the buffer's front only when its end is reached, and the
 * buffer keeps room past what a pass needs (up to 1 MiB), so that they are
 * not moved at every pass.  -1: out of memory. */
static int read_new(struct asys_cpu_online *o)
{
    size_t most = file_pass_max(o);
    for (int i = 0; i < o->file_count; i++) {
        struct online_file *f = &o->files[i];
        struct stat st;
        if (fstat(f->fd, &st) != 0 || (uint64_t)st.st_size <= f->offset + f->len || f->len >= most)
            continue;
        uint64_t want = (uint64_t)st.st_size - f->offset;
        size_t n = want > most ? most : (size_t)want;
        if (f->start + n > f->cap && f->start) {
            memmove(f->buf, f->buf + f->start, f->len);
            f->start = 0;
        }
        size_t room = n + (n < (1u << 20) ? n : (1u << 20));
        while (f->cap < room) /* asys_grow doubles once a call */
            if (asys_grow(&f->buf, &f->cap, f->cap, 1, 64 << 10))
                return -1;
        uint8_t *end = f->buf + f->start + f->len;
        ssize_t r = pread(f->fd, end, n - f->len, (off_t)(f->offset + f->len));
        f->len += r > 0 ? (size_t)r : 0;
    }
    return 0;
}

/* The image's frames resolved now, for finalize: its modules and call
 * chains as its segment holds them. */
static void resolve_frames(struct asys_symbolizer *s, const struct image *img)
{
    if (!s)
        return;
    uint64_t uid = cpu_image_uid(img);
    for (size_t i = 0; i < img->module_count; i++) {
        const struct module *m = &img->modules[i];
        if (m->bias_known)
            asys_symbolizer_add_mapping(s, uid, m->path, m->build_id, m->build_id_length, m->start,
                                        m->end, m->bias);
    }
    const struct chain_table *t = &img->chains;
    for (size_t j = 0; j < t->slot_cap; j++)
        if (t->slots[j].hash)
            asys_symbolizer_add_frames(s, uid, t->frames + t->slots[j].offset, t->slots[j].depth);
    asys_symbolizer_prefetch(s, uid);
}

/* Writes the images that ended before the previous pass (one pass of slack:
 * a record of theirs may sit behind a later one in another file). */
static int write_ended(struct asys_cpu_online *o, struct asys_err *err)
{
    struct writer_state *w = o->w;
    for (size_t i = o->first_open; i < w->image_count; i++) {
        struct image *img = w->images[i];
        if (!img->written && img->ended && img->exit_time < o->written_before &&
            img->sample_count) {
            if (cpu_write_image(w, &o->out, img, err) != 0)
                return -1;
            o->written++;
            resolve_frames(w->run->config->symbolizer, img);
            cpu_image_drop_samples(img);
        }
        if (o->first_open == i && (img->written || (img->ended && !img->sample_count)))
            o->first_open = i + 1;
    }
    return 0;
}

/* One pass: the records before `until`, in time order. */
static int online_pass(struct asys_cpu_online *o, uint64_t until, struct asys_err *err)
{
    struct writer_state *w = o->w;
    if (read_new(o) != 0)
        return asys_fail(err, "out of memory");
    /* a file read in part: the others no further than its last record */
    uint64_t last;
    for (int i = 0; i < o->file_count; i++) {
        const struct online_file *f = &o->files[i];
        if (f->len == file_pass_max(o) &&
            records_before(untaken(f), f->len, UINT64_MAX, &last) &&
            last && last < until)
            until = last;
    }
    w->event_count = 0;
    size_t taken[ASYS_CPU_MAX_CPUS];
    for (int i = 0; i < o->file_count; i++) {
        struct online_file *f = &o->files[i];
        struct raw_file rf = {untaken(f), records_before(untaken(f), f->len, until, &last), 0};
        if (cpu_scan_raw_file(w, &rf, PASS_SAMPLES, err) != 0)
            return -1;
        taken[i] = rf.size;
    }
    if (cpu_take_events(w, &o->out, err) != 0 || write_ended(o, err) != 0)
        return -1;
    for (int i = 0; i < o->file_count; i++) { /* the events pointed into the buffers */
        struct online_file *f = &o->files[i];
        f->start = f->len == taken[i] ? 0 : f->start + taken[i];
        f->len -= taken[i];
        f->offset += taken[i];
    }
    o->written_before = until;
    return 0;
}

static void *online_thread(void *arg)
{
    struct asys_cpu_online *o = arg;
    uint64_t done = 0;
    struct asys_err err = {0};
    /* on a CPU the program leaves idle only: what is not done by the end is
     * done then, as without this thread */
    struct sched_param idle = {0};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
    for (;;) {
        pthread_mutex_lock(&o->lock);
        while (!o->stop && o->published <= done)
            pthread_cond_wait(&o->wake, &o->lock);
        uint64_t until = o->published;
        int stop = o->stop;
        pthread_mutex_unlock(&o->lock);
        if (stop)
            break;
        if (online_pass(o, until, &err) != 0) {
            o->failed = 1;
            asys_note(ASYS_NOTE_DEBUG, "cpu sampling: %s", err.text);
            break;
        }
        done = until;
    }
    return NULL;
}

static void online_free(struct asys_cpu_online *o)
{
    for (int i = 0; i < o->file_count; i++) {
        close(o->files[i].fd);
        free(o->files[i].buf);
    }
    cpu_writer_free(o->w); /* the files mapped at the end too */
    asys_elf_cache_free(o->out.elf);
    free(o->out.slot_buffer);
    pthread_mutex_destroy(&o->lock);
    pthread_cond_destroy(&o->wake);
    free(o);
}

struct asys_cpu_online *asys_cpu_online_start(const struct asys_cpu_raw_run *run)
{
    struct asys_err err = {0};
    struct asys_cpu_online *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->wake, NULL);
    const char *pass = getenv(ASYS_TEST_ONLINE_PASS_BYTES_ENV);
    o->test_pass_max = pass ? strtoull(pass, NULL, 10) : 0;
    o->w = cpu_writer_new(run, &err);
    o->out.elf = asys_elf_cache_new();
    if (!o->w || !o->out.elf ||
        (o->w->arena.control && !(o->out.slot_buffer = calloc(1, o->w->arena.slot_size))) ||
        open_files(o, run->session_dir) != 0 ||
        pthread_create(&o->thread, NULL, online_thread, o) != 0) {
        online_free(o); /* the samples are all unwound at the end */
        return NULL;
    }
    return o;
}

void asys_cpu_online_publish(struct asys_cpu_online *o, uint64_t before)
{
    pthread_mutex_lock(&o->lock);
    if (before > o->published) {
        o->published = before;
        pthread_cond_signal(&o->wake);
    }
    pthread_mutex_unlock(&o->lock);
}

/* The records this thread did not take, from the files mapped, into the
 * images; their samples stay for the end's unwinding.  The mappings go to
 * the writer's files, for the scheduling segment's context switches. */
static int take_the_rest(struct asys_cpu_online *o, struct asys_err *err)
{
    struct writer_state *w = o->w;
    w->event_count = 0;
    for (int i = 0; i < o->file_count; i++) {
        struct online_file *f = &o->files[i];
        struct stat st;
        if (fstat(f->fd, &st) != 0 || st.st_size <= 0)
            continue;
        struct raw_file whole = {mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, f->fd, 0),
                                 (size_t)st.st_size, 0};
        if (whole.data == MAP_FAILED)
            return asys_fail_errno(err, errno, "cannot map the CPU samples");
        if (cpu_add_raw_file(w, &whole) != 0) {
            munmap(whole.data, whole.size);
            return asys_fail(err, "too many CPU sample files");
        }
        struct raw_file rest = {whole.data + f->offset, whole.size - f->offset, 0};
        if (f->offset < whole.size && cpu_scan_raw_file(w, &rest, PASS_SAMPLES, err) != 0)
            return -1;
    }
    return cpu_take_events(w, NULL, err);
}

static void online_stop(struct asys_cpu_online *o)
{
    pthread_mutex_lock(&o->lock);
    o->stop = 1;
    pthread_cond_signal(&o->wake);
    pthread_mutex_unlock(&o->lock);
    pthread_join(o->thread, NULL);
}

void asys_cpu_online_cancel(struct asys_cpu_online *o)
{
    online_stop(o);
    online_free(o);
}

int asys_cpu_online_finish(struct asys_cpu_online *o, struct asys_err *err)
{
    online_stop(o);
    asys_note(ASYS_NOTE_DEBUG, "cpu sampling: %zu images written while the program ran",
              o->written);
    const struct asys_cpu_raw_run *run = o->w->run;
    int rc = -1;
    if (o->failed)
        asys_fail(err, "out of memory while unwinding the CPU samples");
    else if (take_the_rest(o, err) == 0 && cpu_load_raw_files(o->w, 0, err) == 0 &&
             cpu_writer_finish(o->w, &o->out, err) == 0)
        rc = 0;
    if (!run->config->exits_after || ASYS_FREE_BEFORE_EXIT)
        online_free(o);
    cpu_remove_raw(run);
    return rc;
}
