/* Errors carried up from library code to the tool, which prints them once as
 * `tool: cannot VERB 'file': reason`.  Library code never prints or exits.
 *
 * An error keeps its causes (babeltrace2's cause chains): the innermost
 * failure starts the chain (asys_fail*), and each level that adds context
 * appends a cause (asys_err_wrap), each with the module and line that added
 * it.  `text` is the chain in one line, outermost first ("segment 'x': record
 * 3 at offset 96: bad size"), rendered whole after every change, so a long
 * context never cuts the root cause off; with ASYS_DEBUG set the tools also
 * print each cause with where it was added.  The kind says what sort of
 * failure it was; tools turn it into an exit code. */
#ifndef ASYS_ERROR_H
#define ASYS_ERROR_H

#include <stddef.h>
#include <stdio.h>

enum asys_err_kind {
    ASYS_ERR_NONE = 0,
    ASYS_ERR_FAILED, /* anything without a more precise kind */
    ASYS_ERR_USAGE, /* a bad option, argument or value */
    ASYS_ERR_INPUT, /* a file that is not what it should be (damaged, foreign) */
    ASYS_ERR_TRUNCATED, /* a file that ends before its content does */
    ASYS_ERR_IO, /* reading or writing failed */
    ASYS_ERR_NO_SPACE, /* the disk or a quota is full */
    ASYS_ERR_NOMEM, /* out of memory */
    ASYS_ERR_NOT_FOUND, /* a program or file that does not exist */
    ASYS_ERR_PERMISSION, /* not allowed to read, write or run */
    ASYS_ERR_LIMIT, /* input past a limit no real input reaches (options raise it) */
    ASYS_ERR_NO_DATA, /* a report that needs data the recording does not have: SKIPPED */
};

/* Exit codes of every asys program. */
enum asys_exit {
    ASYS_EXIT_OK = 0,
    ASYS_EXIT_FAILURE = 1, /* the work could not be done */
    ASYS_EXIT_USAGE = 2, /* bad command line */
    ASYS_EXIT_CANNOT_RUN = 126, /* the program exists but cannot be run (as a shell says) */
    ASYS_EXIT_NOT_FOUND = 127, /* the program does not exist */
};

#define ASYS_ERR_CAUSES 8 /* kept: the innermost 7 and the outermost */
#define ASYS_ERR_CAUSE_MESSAGE 256 /* bytes of one cause's message, its NUL included */

struct asys_err_cause {
    const char *module; /* the source file that added it (__FILE__) */
    int line;
    char message[ASYS_ERR_CAUSE_MESSAGE];
};

struct asys_err {
    struct asys_err_cause causes[ASYS_ERR_CAUSES]; /* [0]: the root cause */
    unsigned cause_count;
    unsigned causes_elided; /* contexts added past ASYS_ERR_CAUSES, dropped from the middle */
    int kind; /* enum asys_err_kind; 0 until a failure is recorded */
    int sys_errno; /* the errno behind the failure, 0 if none */
    char text[ASYS_ERR_CAUSES * (ASYS_ERR_CAUSE_MESSAGE + 2) + 8]; /* the chain, outermost first */
};

/* Starts the chain with its root cause (printf-style), kind FAILED; returns
 * -1 so callers can `return asys_fail(...)`. */
#define asys_fail(err, ...) asys_fail_at((err), __FILE__, __LINE__, __VA_ARGS__)
/* The same with a kind. */
#define asys_fail_kind(err, kind, ...) \
    asys_fail_kind_at((err), (kind), __FILE__, __LINE__, __VA_ARGS__)
/* "TEXT: strerror(errnum)", the kind derived from errnum (ENOSPC -> NO_SPACE...). */
#define asys_fail_errno(err, errnum, ...) \
    asys_fail_errno_at((err), (errnum), __FILE__, __LINE__, __VA_ARGS__)
/* Adds context outside the causes already there: "CONTEXT: reason".  Keeps
 * kind and errno; returns -1. */
#define asys_err_wrap(err, ...) asys_err_wrap_at((err), __FILE__, __LINE__, __VA_ARGS__)

int asys_fail_at(struct asys_err *err, const char *module, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int asys_fail_kind_at(struct asys_err *err, enum asys_err_kind kind, const char *module, int line,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int asys_fail_errno_at(struct asys_err *err, int errnum, const char *module, int line,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int asys_err_wrap_at(struct asys_err *err, const char *module, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Forgets every cause: the error is NONE again. */
void asys_err_clear(struct asys_err *err);

/* The kind errno `errnum` stands for. */
enum asys_err_kind asys_err_kind_of_errno(int errnum);
/* The exit code for a failure of this kind: USAGE -> 2, any other -> 1. */
int asys_exit_code(const struct asys_err *err);
/* For a program that could not be started, as a shell answers: NOT_FOUND ->
 * 127, PERMISSION -> 126, else as asys_exit_code. */
int asys_exec_exit_code(const struct asys_err *err);

/* Prints `prog: cannot VERB 'what': reason` on stderr (and, with ASYS_DEBUG
 * set, each cause on a line of its own with the module and line that added it). */
void asys_err_print(const char *prog, const char *verb, const char *what,
                    const struct asys_err *err);

/* Prints each cause, outermost first, as "  MODULE:LINE: message". */
void asys_err_print_causes(FILE *out, const struct asys_err *err);

#endif
