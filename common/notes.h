/* What library code has to tell the user besides an error: a notice (what
 * it did instead of what was asked), a warning (data that was not recorded)
 * or, with ASYS_DEBUG set, a debug line.  Library code never prints: it adds
 * a note, and the process's sink says where notes go.  The default sink
 * writes "PROG: warning: TEXT" on stderr as the note comes (PROG as the tool
 * set it, "asys" until then); a tool or a test may install another sink (to
 * keep the notes, count them or show them later). */
#ifndef ASYS_NOTES_H
#define ASYS_NOTES_H

enum asys_note_level {
    ASYS_NOTE_DEBUG = 0, /* shown only with ASYS_DEBUG set */
    ASYS_NOTE_NOTICE, /* what asys did instead; nothing was lost */
    ASYS_NOTE_WARNING, /* data was not recorded, or a result may mislead */
    ASYS_NOTE_LEVELS
};

typedef void (*asys_note_sink)(void *ctx, enum asys_note_level level, const char *text);

/* Adds a note (printf-style, one line without the newline). */
void asys_note(enum asys_note_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Whether debug notes are shown (ASYS_DEBUG set): callers skip costly ones. */
int asys_note_debug_enabled(void);

/* The name the default sink puts first ("asys profile", "asys-stats"). */
void asys_notes_set_program(const char *program);
/* Installs `sink` (NULL: the default one). */
void asys_notes_set_sink(asys_note_sink sink, void *ctx);
/* How many notes of `level` were added since the process started. */
unsigned asys_notes_count(enum asys_note_level level);

#endif
