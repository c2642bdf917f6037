/* Reading a whole file given by a user or found on the system, bounded: a
 * FIFO, a device (/dev/zero) or a file that grows without end is refused in
 * one line instead of blocking or filling memory. */
#ifndef ASYS_READ_FILE_H
#define ASYS_READ_FILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "asys_error.h"

/* The contents of the regular file `path`, NUL-terminated (malloc'd), at
 * most `max` bytes; *len the bytes read (may be NULL).  Opened without
 * blocking, so a FIFO never waits for a writer.  -1 with err: kind
 * NOT_FOUND/PERMISSION/IO for the system's errors, INPUT for "not a regular
 * file", LIMIT for "larger than N bytes". */
int asys_read_regular_file(const char *path, size_t max, char **out, size_t *len,
                           struct asys_err *err);

/* Opens `path` for reading if it is a regular file, without blocking (a
 * FIFO gets no wait for a writer): the descriptor, its stat in *st; -1 with
 * err ("not a regular file", or the system's reason). */
int asys_open_regular(const char *path, struct stat *st, struct asys_err *err);

/* The first line of a small file (/proc, /sys) into out[size], without its
 * newline; out is left as it was when the file cannot be opened, "" when it
 * is empty. */
void asys_read_first_line(const char *path, char *out, size_t size);

/* /proc/PID/stat read into text[size]: the fields after COMM (" STATE PPID
 * ..."; COMM may hold spaces and parentheses, so it ends at the last ')'),
 * and where COMM lies (comm, comm_len) when those are not NULL.  NULL when the
 * process is gone or the line is not what the kernel writes. */
const char *asys_proc_stat(pid_t pid, char *text, size_t size, const char **comm, size_t *comm_len);
#endif
