/* Writes NAME.asys-rep: a tar archive compressed with zstd (libarchive). */
#ifndef ASYS_REPORT_ARCHIVE_H
#define ASYS_REPORT_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "asys_error.h"

struct asys_archive_writer;

/* Opens an archive on `fd` (not closed by the writer). */
int asys_archive_writer_open(struct asys_archive_writer **out, int fd, struct asys_err *err);
int asys_archive_add_buffer(struct asys_archive_writer *w, const char *name, const void *data,
                            size_t size, struct asys_err *err);
/* Adds the first `size` bytes of the file at `path`. */
int asys_archive_add_file(struct asys_archive_writer *w, const char *name, const char *path,
                          uint64_t size, struct asys_err *err);
/* Finishes the archive; frees the writer even on error. */
int asys_archive_writer_close(struct asys_archive_writer *w, struct asys_err *err);

#endif
