#include "report_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COPY_BUFFER_SIZE (1u << 20)

struct asys_archive_writer {
    struct archive *archive;
    time_t now;
    char *buffer;
};

int asys_archive_writer_open(struct asys_archive_writer **out, int fd, struct asys_err *err)
{
    struct asys_archive_writer *w = calloc(1, sizeof *w);
    if (!w)
        return asys_fail(err, "out of memory");
    w->buffer = malloc(COPY_BUFFER_SIZE);
    w->archive = archive_write_new();
    w->now = time(NULL);
    if (!w->buffer || !w->archive) {
        asys_fail(err, "out of memory");
        goto fail;
    }
    /* pax: members over 8 GiB and long names; zstd level 3: fast, ~4x on segments */
    if (archive_write_set_format_pax_restricted(w->archive) != ARCHIVE_OK ||
        archive_write_add_filter_zstd(w->archive) != ARCHIVE_OK ||
        archive_write_set_filter_option(w->archive, "zstd", "compression-level", "3") !=
            ARCHIVE_OK ||
        archive_write_open_fd(w->archive, fd) != ARCHIVE_OK) {
        asys_fail(err, "%s", archive_error_string(w->archive));
        goto fail;
    }
    *out = w;
    return 0;
fail:
    if (w->archive)
        archive_write_free(w->archive);
    free(w->buffer);
    free(w);
    return -1;
}

static int write_header(struct asys_archive_writer *w, const char *name, uint64_t size,
                        struct asys_err *err)
{
    struct archive_entry *e = archive_entry_new();
    if (!e)
        return asys_fail(err, "out of memory");
    archive_entry_set_pathname(e, name);
    archive_entry_set_size(e, (la_int64_t)size);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_mtime(e, w->now, 0);
    int rc = archive_write_header(w->archive, e);
    archive_entry_free(e);
    if (rc != ARCHIVE_OK)
        return asys_fail(err, "%s", archive_error_string(w->archive));
    return 0;
}

static int write_data(struct asys_archive_writer *w, const void *data, size_t size,
                      struct asys_err *err)
{
    const char *p = data;
    while (size) {
        la_ssize_t n = archive_write_data(w->archive, p, size);
        if (n <= 0)
            return asys_fail(err, "%s", archive_error_string(w->archive));
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

int asys_archive_add_buffer(struct asys_archive_writer *w, const char *name, const void *data,
                            size_t size, struct asys_err *err)
{
    if (write_header(w, name, size, err) != 0)
        return -1;
    return write_data(w, data, size, err);
}

int asys_archive_add_file(struct asys_archive_writer *w, const char *name, const char *path,
                          uint64_t size, struct asys_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return asys_fail(err, "cannot open '%s': %s", path, strerror(errno));
    int rc = write_header(w, name, size, err);
    uint64_t left = size;
    while (rc == 0 && left) {
        size_t want = left < COPY_BUFFER_SIZE ? (size_t)left : COPY_BUFFER_SIZE;
        ssize_t n = read(fd, w->buffer, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) { /* the file shrank: keep the member size the header promised */
            memset(w->buffer, 0, want);
            n = (ssize_t)want;
        }
        rc = write_data(w, w->buffer, (size_t)n, err);
        left -= (uint64_t)n;
    }
    close(fd);
    return rc;
}

int asys_archive_writer_close(struct asys_archive_writer *w, struct asys_err *err)
{
    int rc = 0;
    if (archive_write_close(w->archive) != ARCHIVE_OK)
        rc = asys_fail(err, "%s", archive_error_string(w->archive));
    archive_write_free(w->archive);
    free(w->buffer);
    free(w);
    return rc;
}
