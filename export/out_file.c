#define _GNU_SOURCE
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cleanup.h"
#include "write_all.h"

struct asys_out_file {
    char path[PATH_MAX];
    char tmp[PATH_MAX + 32];
    int fd;
    FILE *stream;
    gzFile gz; /* NULL: plain */
    int failed; /* a write failed (errno kept in error) */
    int error;
    int has_tmp; /* the temporary file exists */
};

/* fopencookie write: into the gzip writer. */
static ssize_t gz_write(void *cookie, const char *buf, size_t size)
{
    struct asys_out_file *f = cookie;
    int n = size ? gzwrite(f->gz, buf, (unsigned)(size > (1u << 30) ? 1u << 30 : size)) : 0;
    if (size && n <= 0) {
        f->failed = 1;
        f->error = errno ? errno : EIO;
        errno = f->error;
        return -1;
    }
    return (ssize_t)n;
}

static int open_gzip(struct asys_out_file *f, struct asys_err *err)
{
    f->gz = gzdopen(f->fd, "wb6");
    if (!f->gz)
        return asys_fail(err, "gzip: out of memory");
    f->fd = -1; /* gzclose closes it */
    cookie_io_functions_t io = {NULL, gz_write, NULL, NULL};
    f->stream = fopencookie(f, "w", io);
    if (!f->stream)
        return asys_fail_errno(err, errno, "%s", "");
    return 0;
}

int asys_out_file_open(struct asys_out_file **out, const char *path, int force, int gzip,
                       FILE **stream, struct asys_err *err)
{
    *out = NULL;
    struct asys_out_file *f = calloc(1, sizeof *f);
    if (!f)
        return asys_fail(err, "out of memory");
    f->fd = -1;
    if (snprintf(f->path, sizeof f->path, "%s", path) >= (int)sizeof f->path) {
        free(f);
        return asys_fail(err, "path too long");
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        free(f);
        return asys_fail(err, "it is a directory (give a file name)");
    }
    if (!force && stat(path, &st) == 0) {
        free(f);
        return asys_fail(err, "file exists (use --force-overwrite)");
    }
    asys_remove_stale_temps(path, 1);
    if (asys_temp_template(path, 1, f->tmp, sizeof f->tmp) != 0) {
        free(f);
        return asys_fail(err, "path too long");
    }
    f->fd = mkostemp(f->tmp, O_CLOEXEC);
    if (f->fd < 0) {
        int e = errno;
        free(f);
        return asys_fail_errno(err, e, "%s", "");
    }
    f->has_tmp = 1;
    asys_cleanup_add(f->tmp);
    int rc = 0;
    if (!stream) {
        close(f->fd); /* the caller writes the temporary file by name */
        f->fd = -1;
    } else if (gzip) {
        rc = open_gzip(f, err);
    } else if (!(f->stream = fdopen(f->fd, "w"))) {
        rc = asys_fail(err, "%s", strerror(errno));
    } else {
        f->fd = -1; /* the stream owns it */
    }
    if (rc != 0) {
        asys_out_file_discard(f);
        return -1;
    }
    if (stream) {
        setvbuf(f->stream, NULL, _IOFBF, 1 << 20);
        *stream = f->stream;
    }
    *out = f;
    return 0;
}

const char *asys_out_file_temp_path(const struct asys_out_file *f)
{
    return f->tmp;
}

int asys_out_write(FILE *stream, const void *data, size_t size)
{
    int fd = fileno(stream);
    if (fd < 0) /* a gzip cookie stream */
        return fwrite(data, 1, size, stream) == size ? 0 : -1;
    if (fflush(stream) != 0)
        return -1;
    return asys_write_all(fd, data, size);
}

/* Closes what is open; returns 0, or -1 with err (when `report`). */
static int close_parts(struct asys_out_file *f, int report, struct asys_err *err)
{
    int rc = 0;
    if (f->stream) {
        if (fclose(f->stream) != 0 && report)
            rc = asys_fail(err, "%s", strerror(f->failed ? f->error : errno));
        f->stream = NULL;
    }
    if (f->gz) {
        int e = gzclose(f->gz);
        if (e != Z_OK && report && rc == 0)
            rc = asys_fail(err, "%s", e == Z_ERRNO ? strerror(errno) : "gzip: write error");
        f->gz = NULL;
    }
    if (f->fd >= 0) {
        if (close(f->fd) != 0 && report && rc == 0)
            rc = asys_fail(err, "%s", strerror(errno));
        f->fd = -1;
    }
    return rc;
}

int asys_out_file_finish(struct asys_out_file *f, struct asys_err *err)
{
    if (close_parts(f, 1, err) != 0) {
        unlink(f->tmp);
        asys_cleanup_remove(f->tmp);
        f->has_tmp = 0;
        return -1;
    }
    return f->has_tmp ? 0 : asys_fail(err, "nothing written");
}

int asys_out_file_commit(struct asys_out_file *f, struct asys_err *err)
{
    int rc = asys_publish_temp(f->tmp, f->path, ASYS_PUBLISH_REPLACE, err);
    free(f);
    return rc;
}

void asys_out_file_discard(struct asys_out_file *f)
{
    if (!f)
        return;
    close_parts(f, 0, NULL);
    if (f->has_tmp) {
        unlink(f->tmp);
        asys_cleanup_remove(f->tmp);
    }
    free(f);
}

int asys_out_file_close(struct asys_out_file *f, int ok, struct asys_err *err)
{
    if (!f)
        return 0;
    if (!ok) {
        asys_out_file_discard(f);
        return 0;
    }
    if (asys_out_file_finish(f, err) != 0) {
        free(f);
        return -1;
    }
    return asys_out_file_commit(f, err);
}
