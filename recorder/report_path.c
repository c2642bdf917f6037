#include "report_path.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* finalize writes .NAME.PID.XXXXXX beside the report and renames it (a
 * PID has at most 7 digits) */
#define TEMPORARY_EXTRA 16

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static int is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The first reportN.asys-rep that does not exist in `dir` ("" for here). */
static int first_free(const char *dir, char *out, size_t size, struct asys_err *err)
{
    for (int i = 1; i < 1000000; i++) {
        int n = snprintf(out, size, "%s%sreport%d%s", dir, *dir && !ends_with(dir, "/") ? "/" : "",
                         i, ASYS_REPORT_SUFFIX);
        if (n < 0 || (size_t)n >= size)
            return asys_fail(err, "report name is too long");
        struct stat st;
        if (lstat(out, &st) != 0)
            return 0;
    }
    return asys_fail(err, "no free reportN name in '%s'", *dir ? dir : ".");
}

static int check_directory(const char *path, struct asys_err *err)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    const char *dir = dirname(copy);
    struct stat st;
    if (stat(dir, &st) != 0)
        return asys_fail(err, "directory '%s' %s", dir,
                         errno == ENOENT ? "does not exist" : strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return asys_fail(err, "'%s' is not a directory", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return asys_fail(err, "directory '%s' is not writable: %s", dir, strerror(errno));
    return 0;
}

/* What is at `path` already: nothing, or a regular file `force` may replace. */
static int check_existing(const char *path, int force, struct asys_err *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
        return asys_fail(err, "it is a symbolic link to nothing (%s)", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return asys_fail(err, "it is a directory");
    if (!S_ISREG(st.st_mode))
        return asys_fail(err, "it is not a regular file");
    if (!force)
        return asys_fail(err, "file exists (use --force-overwrite)");
    return 0;
}

int asys_report_path_resolve(const char *output, int force, char *out, size_t size,
                             struct asys_err *err)
{
    out[0] = '\0';
    if (!output || !*output) {
        if (first_free("", out, size, err) != 0)
            return -1;
    } else if (ends_with(output, "/") || is_directory(output)) {
        if (!is_directory(output)) {
            snprintf(out, size, "%s", output);
            return asys_fail(err, "directory '%s' does not exist", output);
        }
        if (first_free(output, out, size, err) != 0)
            return -1;
    } else {
        int n = snprintf(out, size, "%s%s", output,
                         ends_with(output, ASYS_REPORT_SUFFIX) ? "" : ASYS_REPORT_SUFFIX);
        if (n < 0 || (size_t)n >= size)
            return asys_fail(err, "report name is too long");
    }
    const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
    if (strlen(base) + TEMPORARY_EXTRA > NAME_MAX)
        return asys_fail(err, "report name is too long (%d bytes at most)",
                         NAME_MAX - TEMPORARY_EXTRA);
    if (check_directory(out, err) != 0 || check_existing(out, force, err) != 0)
        return -1;
    return 0;
}
