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

#endif
