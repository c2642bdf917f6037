/* Errors carried up from library code to the tool, which prints them once as
 * `tool: cannot VERB 'file': reason`.  Library code never prints or exits.
 *
 * The reason is a cause chain in one line: the innermost failure first sets
 * the text (asys_fail*), and each level that adds context prefixes it
 * (asys_err_wrap), so the user reads "segment 'x': record 3 at offset 96: bad
 * size" from the outside in (babeltrace2's cause chains, flattened).  The
 * kind says what sort of failure it was; tools turn it into an exit code. */
#ifndef ASYS_ERROR_H
#define ASYS_ERROR_H

#include <stddef.h>

enum asys_err_kind {
    ASYS_ERR_NONE = 0,
    ASYS_ERR_FAILED,     /* anything without a more precise kind */
    ASYS_ERR_USAGE,      /* a bad option, argument or value */
    ASYS_ERR_INPUT,      /* a file that is not what it should be (damaged, foreign) */
    ASYS_ERR_TRUNCATED,  /* a file that ends before its content does */
    ASYS_ERR_IO,         /* reading or writing failed */
    ASYS_ERR_NO_SPACE,   /* the disk or a quota is full */
    ASYS_ERR_NOMEM,      /* out of memory */
    ASYS_ERR_NOT_FOUND,  /* a program or file that does not exist */
    ASYS_ERR_PERMISSION, /* not allowed to read, write or run */
    ASYS_ERR_LIMIT,      /* input past a limit no real input reaches (options raise it) */
    ASYS_ERR_NO_DATA,    /* a report that needs data the recording does not have: SKIPPED */
};

/* Exit codes of every asys program. */
enum asys_exit {
    ASYS_EXIT_OK = 0,
    ASYS_EXIT_FAILURE = 1,      /* the work could not be done */
    ASYS_EXIT_USAGE = 2,        /* bad command line */
    ASYS_EXIT_CANNOT_RUN = 126, /* the program exists but cannot be run (as a shell says) */
    ASYS_EXIT_NOT_FOUND = 127,  /* the program does not exist */
};

struct asys_err {
    char text[512];
    int kind;      /* enum asys_err_kind; 0 until a failure is recorded */
    int sys_errno; /* the errno behind the failure, 0 if none */
};

/* Sets the reason (printf-style), kind FAILED; returns -1 so callers can
 * `return asys_fail(...)`. */
int asys_fail(struct asys_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with a kind. */
int asys_fail_kind(struct asys_err *err, enum asys_err_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "TEXT: strerror(errnum)", the kind derived from errnum (ENOSPC -> NO_SPACE...). */
int asys_fail_errno(struct asys_err *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds context in front of the reason already set: "CONTEXT: reason".  Keeps
 * kind and errno; returns -1. */
int asys_err_wrap(struct asys_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The kind errno `errnum` stands for. */
enum asys_err_kind asys_err_kind_of_errno(int errnum);
/* The exit code for a failure of this kind: USAGE -> 2, any other -> 1. */
int asys_exit_code(const struct asys_err *err);
/* For a program that could not be started, as a shell answers: NOT_FOUND ->
 * 127, PERMISSION -> 126, else as asys_exit_code. */
int asys_exec_exit_code(const struct asys_err *err);

/* Prints `prog: cannot VERB 'what': reason` on stderr. */
void asys_err_print(const char *prog, const char *verb, const char *what,
                    const struct asys_err *err);

#endif
