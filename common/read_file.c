#include "read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int asys_open_regular(const char *path, struct stat *st, struct asys_err *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return asys_fail_errno(err, errno, "%s", "");
    if (fstat(fd, st) != 0) {
        asys_fail_errno(err, errno, "%s", "");
        close(fd);
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return asys_fail_kind(err, ASYS_ERR_INPUT, "not a regular file");
    }
    return fd;
}

int asys_read_regular_file(const char *path, size_t max, char **out, size_t *len,
                           struct asys_err *err)
{
    char *text = NULL;
    int rc = -1;
    struct stat st;
    *out = NULL;
    int fd = asys_open_regular(path, &st, err);
    if (fd < 0)
        goto out;
    /* sysfs and procfs files say 4096 or 0 whatever they hold: read to the end */
    size_t cap = (size_t)st.st_size < max ? (size_t)st.st_size + 1 : max + 1, used = 0;
    if (cap < 4097)
        cap = 4097 < max + 1 ? 4097 : max + 1;
    if (!(text = malloc(cap + 1))) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (;;) {
        if (used == cap) {
            if (cap > max) {
                asys_fail_kind(err, ASYS_ERR_LIMIT, "larger than %zu bytes", max);
                goto out;
            }
            size_t bigger_cap = cap * 2 < max + 1 ? cap * 2 : max + 1;
            char *bigger = realloc(text, bigger_cap + 1);
            if (!bigger) {
                asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
                goto out;
            }
            text = bigger;
            cap = bigger_cap;
        }
        ssize_t n = read(fd, text + used, cap - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            asys_fail_errno(err, errno, "%s", "");
            goto out;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    if (used > max) {
        asys_fail_kind(err, ASYS_ERR_LIMIT, "larger than %zu bytes", max);
        goto out;
    }
    text[used] = '\0';
    if (len)
        *len = used;
    *out = text;
    text = NULL;
    rc = 0;
out:
    free(text);
    if (fd >= 0)
        close(fd);
    return rc;
}

const char *asys_proc_stat(pid_t pid, char *text, size_t size, const char **comm, size_t *comm_len)
{
    char path[64];
    if (pid <= 0 || size < 2)
        return NULL;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, text, size - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    text[n] = '\0';
    char *open_paren = strchr(text, '('), *close_paren = strrchr(text, ')');
    if (!open_paren || !close_paren || close_paren < open_paren)
        return NULL;
    if (comm)
        *comm = open_paren + 1;
    if (comm_len)
        *comm_len = (size_t)(close_paren - open_paren - 1);
    return close_paren + 1;
}

void asys_read_first_line(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    if (!fgets(out, (int)size, f))
        out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    fclose(f);
}
