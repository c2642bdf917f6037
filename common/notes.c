#include "notes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* One sink per process: notes come from deep inside the samplers, the
 * unwinder and finalize, which would otherwise each need a pointer threaded
 * through every call to reach the tool's main. */
static struct {
    const char *program;
    asys_note_sink sink;
    void *ctx;
    unsigned counts[ASYS_NOTE_LEVELS];
} notes = {.program = "asys"};

static const char *const level_words[ASYS_NOTE_LEVELS] = {"debug", "notice", "warning"};

int asys_note_debug_enabled(void)
{
    return getenv("ASYS_DEBUG") != NULL;
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
