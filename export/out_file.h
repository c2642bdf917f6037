/* An export's output file: written under a temporary name beside the target
 * and renamed into place when complete, so a failed or interrupted export
 * leaves nothing half-written; optionally gzip-compressed on the way (zlib). */
#ifndef ASYS_OUT_FILE_H
#define ASYS_OUT_FILE_H

#include <stdio.h>

#include "asys_error.h"

struct asys_out_file;

/* Opens `path` for writing; an existing file is an error unless `force`.
 * *stream receives a FILE* to write to (buffered); with stream == NULL the
 * caller writes the file at asys_out_file_temp_path() itself. */
int asys_out_file_open(struct asys_out_file **out, const char *path, int force, int gzip,
                       FILE **stream, struct asys_err *err);

/* The temporary file the content goes to until it is committed. */
const char *asys_out_file_temp_path(const struct asys_out_file *f);

/* Completes the content (flush, close); on failure the temporary file is
 * removed.  Several files can be finished, then committed together. */
int asys_out_file_finish(struct asys_out_file *f, struct asys_err *err);

/* Renames a finished file into place; frees `f`.  Returns 0 or -1 with err. */
int asys_out_file_commit(struct asys_out_file *f, struct asys_err *err);

/* Removes the temporary file; frees `f` (NULL is fine). */
void asys_out_file_discard(struct asys_out_file *f);

/* finish + commit when ok, discard otherwise. */
int asys_out_file_close(struct asys_out_file *f, int ok, struct asys_err *err);

/* Writes a large block after what `stream` holds: straight to its file
 * descriptor once the stream is flushed (fwrite copies every byte into the
 * stream's buffer first: a gigabyte more for a JSON timeline), or through
 * the stream when it has none (gzip).  Returns 0, or -1 with errno set. */
int asys_out_write(FILE *stream, const void *data, size_t size);

#endif
