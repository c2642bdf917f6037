/* Where a report is written (asys profile -o, asys finalize -o), checked
 * before anything runs: a program that ran for an hour must not find at the
 * end that its report cannot be written. */
#ifndef ASYS_REPORT_PATH_H
#define ASYS_REPORT_PATH_H

#include <stddef.h>

#include "asys_error.h"

#define ASYS_REPORT_SUFFIX ".asys-rep"

/* The report path for `output` (NULL: the first free reportN.asys-rep in the
 * current directory; a directory, or a name ending in '/': the first free
 * reportN in it; else NAME + .asys-rep unless it ends so), checked: its
 * directory exists and is writable, the name fits (with finalize's
 * temporary name beside it), and what is there already is a regular file
 * that `force` allows to replace.  On -1, `out` holds the path for the
 * message. */
int asys_report_path_resolve(const char *output, int force, char *out, size_t size,
                             struct asys_err *err);

/* No pid for %p (asys finalize -o): %p is refused. */
#define ASYS_PATTERN_PID_UNKNOWN (-1)

/* -o's patterns, as nsys has them: %h the host name, %p `pid` (the launched
 * program's), %r the rank (asys_rank_detect; none: an error naming the
 * environments looked at), %q{ENV} an environment variable's value (unset: an error that
 * names it), %n the smallest number from 1 that makes NAME.asys-rep a file
 * that does not exist yet, %% a '%'.  Anything else after '%' is refused. */
int asys_output_pattern_expand(const char *pattern, long pid, char *out, size_t size,
                               struct asys_err *err);

/* The same, but a %r without a rank in asys's environment stays %r: with
 * --multi-node-mode true the program's processes name their reports
 * (asys_finalize). */
int asys_output_pattern_expand_keeping_rank(const char *pattern, long pid, char *out, size_t size,
                                            struct asys_err *err);

/* Whether `pattern` has %p (the name is known only once the program runs). */
int asys_output_pattern_has_pid(const char *pattern);

#endif
