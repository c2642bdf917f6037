/* Temporary files that must not outlive their program: paths registered
 * here are removed when SIGINT, SIGTERM, SIGHUP or SIGQUIT stops it, or a
 * crash (SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL) ends it (the handler
 * unlinks them and re-raises the signal), and a later run removes the ones
 * of a program that died another way (their names carry its pid). */
#ifndef ASYS_CLEANUP_H
#define ASYS_CLEANUP_H

#include <stddef.h>

/* Registers `path` (copied; a directory: its files and itself); installs the
 * handlers on first use.  0, or -1 when every slot is taken (the file is
 * then only removed by a later run). */
int asys_cleanup_add(const char *path);
/* Forgets `path` (it was renamed into place or removed). */
void asys_cleanup_remove(const char *path);
/* The program the handler names when a signal stops it: it says
 * "PROGRAM: interrupted; nothing written" before the signal ends it. */
void asys_cleanup_set_program(const char *program);

/* A temporary name beside `target`: "DIR/.BASE.PID.XXXXXX" (hidden) or
 * "TARGET.tmp-PID-XXXXXX"; mkostemp's template. */
int asys_temp_template(const char *target, int hidden, char *out, size_t size);
/* Removes the temporaries asys_temp_template made for `target` whose
 * process is gone. */
void asys_remove_stale_temps(const char *target, int hidden);

struct asys_err;
enum asys_publish_mode {
    ASYS_PUBLISH_REPLACE, /* what is at the path is replaced */
    ASYS_PUBLISH_NO_REPLACE, /* an existing file is kept: "file exists (use --force-overwrite)" */
};
/* Moves the finished temporary `tmp` into place at `path`, with the mode the
 * umask allows (mkostemp made it 0600), so that a reader never sees half a
 * file.  The temporary is gone afterwards and no longer registered, also
 * when it could not be moved (-1, err set; the caller adds its context). */
int asys_publish_temp(const char *tmp, const char *path, enum asys_publish_mode mode,
                      struct asys_err *err);

/* Whether this build takes apart, before it exits, what only its memory and
 * descriptors hold: sanitizer builds do, so that their leak checks keep
 * their meaning; others may leave it to the exit (asys_finalize_aids). */
#if defined(__SANITIZE_ADDRESS__)
#define ASYS_FREE_BEFORE_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASYS_FREE_BEFORE_EXIT 1
#endif
#endif
#ifndef ASYS_FREE_BEFORE_EXIT
#define ASYS_FREE_BEFORE_EXIT 0
#endif

#endif
