/* The report archive, NAME.asys-rep: a POSIX tar stream compressed with
 * zstd (schema/FORMAT.md §1).  Both directions live here: the launcher
 * writes reports, the analysis tools and `asys dump` read them.
 *
 * The stream may be several zstd frames one after the other: frames
 * compressed while recording are copied in whole.
 *
 * The reader is strict, as a reader of hostile files should be: only the
 * tar forms a report can hold are understood (ustar, pax extended headers,
 * GNU long names); members that are not regular files are reported as such
 * for the caller to skip; every size is checked against the bytes the
 * stream really has. */
#ifndef ASYS_ARCHIVE_H
#define ASYS_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "asys_error.h"

/* ---- writing ---- */

struct asys_archive_writer;

/* Opens an archive on `fd` (not closed by the writer). */
int asys_archive_writer_open(struct asys_archive_writer **out, int fd, struct asys_err *err);
/* Before the first member: about `bytes` will come in all.  Below 16 MiB
 * zstd compresses on the caller's thread, without the workers whose start
 * and final wait cost a small archive more than they gain. */
void asys_archive_writer_expect(struct asys_archive_writer *w, uint64_t bytes);
int asys_archive_add_buffer(struct asys_archive_writer *w, const char *name, const void *data,
                            size_t size, struct asys_err *err);
/* Adds `size` bytes read through `read_fn` (a short source is padded with zeros). */
int asys_archive_add_stream(struct asys_archive_writer *w, const char *name, uint64_t size,
                            long (*read_fn)(void *ctx, void *buf, size_t size), void *ctx,
                            struct asys_err *err);
/* Adds the first `size` bytes of the file at `path`. */
int asys_archive_add_file(struct asys_archive_writer *w, const char *name, const char *path,
                          uint64_t size, struct asys_err *err);
/* A member written piece by piece: its header, then `size` bytes in all
 * through asys_archive_write and asys_archive_copy_frame. */
int asys_archive_begin_member(struct asys_archive_writer *w, const char *name, uint64_t size,
                              struct asys_err *err);
int asys_archive_write(struct asys_archive_writer *w, const void *data, size_t size,
                       struct asys_err *err);
/* Ends the frame being compressed and writes `frame`: a whole zstd frame,
 * already compressed, that decodes to the member's next `content_size`
 * bytes (the caller checked that it does). */
int asys_archive_write_frame(struct asys_archive_writer *w, const void *frame, size_t frame_size,
                             uint64_t content_size, struct asys_err *err);
/* Finishes the archive; frees the writer even on error. */
int asys_archive_writer_close(struct asys_archive_writer *w, struct asys_err *err);

/* ---- reading ---- */

struct asys_archive_reader;

struct asys_archive_member {
    char name[1024];
    uint64_t size;
    int regular; /* a regular file (else a link, device, directory...: skip it) */
};

/* Bounds on what a report may expand to (a zstd bomb is small and
 * enormous): decompressed bytes per compressed byte read so far (after the
 * first `expansion_slack` bytes), and in all.  0 disables one. */
struct asys_archive_limits {
    uint32_t max_expansion;
    uint64_t expansion_slack;
    uint64_t max_bytes;
    /* what max_bytes stands for, said when it is reached (NULL: the option) */
    const char *max_bytes_why;
    /* called as the file is read: compressed bytes read so far of its size */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
};

/* Opens `path`; kind INPUT when it is not a zstd stream.  `limits` may be NULL. */
int asys_archive_reader_open(struct asys_archive_reader **out, const char *path,
                             const struct asys_archive_limits *limits, struct asys_err *err);
/* The next member (the rest of the current one is skipped): 1, 0 at the
 * end of the archive, -1 when the archive is damaged or cut short. */
int asys_archive_next(struct asys_archive_reader *r, struct asys_archive_member *m,
                      struct asys_err *err);
/* Up to `size` bytes of the current member: bytes read, 0 at its end, -1
 * when the archive is damaged (asys_archive_error says why). */
long asys_archive_read(struct asys_archive_reader *r, void *buf, size_t size);
/* Why the last read failed, or NULL. */
const char *asys_archive_error(const struct asys_archive_reader *r);
/* -1 with that reason in err (kind LIMIT for a limit, else INPUT), 0 when none. */
int asys_archive_failure(const struct asys_archive_reader *r, struct asys_err *err);
/* Whether a tar header was read, or the file ended inside a zstd frame (a
 * report cut short before its first header is whole): an archive, damaged
 * or not, rather than other zstd-compressed data. */
int asys_archive_is_tar(const struct asys_archive_reader *r);
/* Whether the file begins with the report mark (an asys report, whole or
 * not), and how far into the file the reading got. */
int asys_archive_is_marked(const struct asys_archive_reader *r);
uint64_t asys_archive_compressed_position(const struct asys_archive_reader *r);
/* Decompressed bytes so far. */
uint64_t asys_archive_position(const struct asys_archive_reader *r);
void asys_archive_reader_close(struct asys_archive_reader *r);

#endif
