#include "notes.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* One sink per process: notes come from deep inside the samplers, the
 * unwinder and finalize, which would otherwise each need a pointer threaded
 * through every call to reach the tool's main. */
#define NOTICES_REMEMBERED 64

static struct {
    const char *program;
    asys_note_sink sink;
    void *ctx;
    unsigned counts[ASYS_NOTE_LEVELS];
    /* notices said so far (by hash): each is said once per process, so that
     * what a sampler notices at every recording of a session is said once */
    pthread_mutex_t lock;
    uint64_t said[NOTICES_REMEMBERED];
    unsigned said_count;
} notes = {.program = "asys", .lock = PTHREAD_MUTEX_INITIALIZER};

/* FNV-1a: a notice's identity. */
static uint64_t text_hash(const char *text)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

/* Whether this notice was said before (it is remembered now if not). */
static int said_before(const char *text)
{
    uint64_t h = text_hash(text);
    int seen = 0;
    pthread_mutex_lock(&notes.lock);
    for (unsigned i = 0; i < notes.said_count && !seen; i++)
        seen = notes.said[i] == h;
    if (!seen && notes.said_count < NOTICES_REMEMBERED)
        notes.said[notes.said_count++] = h;
    pthread_mutex_unlock(&notes.lock);
    return seen;
}

static const char *const level_words[ASYS_NOTE_LEVELS] = {"debug", "notice", "warning"};

/* Read once: the unwinder asks for each module of each process it unwinds
 * (thousands a recording), and getenv walks the whole environment. */
int asys_note_debug_enabled(void)
{
    static int enabled = -1; /* atomic: -1 until read */
    int e = __atomic_load_n(&enabled, __ATOMIC_RELAXED);
    if (e < 0) {
        e = getenv("ASYS_DEBUG") != NULL;
        __atomic_store_n(&enabled, e, __ATOMIC_RELAXED);
    }
    return e;
}

static void to_stderr(void *ctx, enum asys_note_level level, const char *text)
{
    (void)ctx;
    fprintf(stderr, "%s: %s: %s\n", notes.program, level_words[level], text);
}

void asys_note(enum asys_note_level level, const char *fmt, ...)
{
    if ((unsigned)level >= ASYS_NOTE_LEVELS)
        level = ASYS_NOTE_WARNING;
    if (level == ASYS_NOTE_DEBUG && !asys_note_debug_enabled())
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    __atomic_add_fetch(&notes.counts[level], 1, __ATOMIC_RELAXED);
    if (level == ASYS_NOTE_NOTICE && said_before(text))
        return;
    (notes.sink ? notes.sink : to_stderr)(notes.ctx, level, text);
}

void asys_notes_set_program(const char *program)
{
    notes.program = program ? program : "asys";
}

void asys_notes_set_sink(asys_note_sink sink, void *ctx)
{
    notes.sink = sink;
    notes.ctx = ctx;
}

unsigned asys_notes_count(enum asys_note_level level)
{
    return (unsigned)level < ASYS_NOTE_LEVELS
               ? __atomic_load_n(&notes.counts[level], __ATOMIC_RELAXED)
               : 0;
}
