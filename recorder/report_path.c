#include "report_path.h"
#include "rank_env.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Appends `text` at out[*at]; -1 when it does not fit. */
static int append(char *out, size_t size, size_t *at, const char *text, size_t len)
{
    if (*at + len >= size)
        return -1;
    memcpy(out + *at, text, len);
    *at += len;
    out[*at] = '\0';
    return 0;
}

/* One expansion with %n = `seq`; *has_seq says whether %n was there;
 * `keep_rank`: a %r without a rank in the environment stays %r. */
static int expand_once(const char *pattern, long pid, int keep_rank, unsigned seq, int *has_seq,
                       char *out, size_t size, struct asys_err *err)
{
    size_t at = 0;
    out[0] = '\0';
    *has_seq = 0;
    for (const char *p = pattern; *p; p++) {
        char piece[HOST_NAME_MAX + 32];
        const char *text = piece;
        size_t len;
        if (*p != '%') {
            text = p;
            len = 1;
        } else if (p[1] == '%') {
            text = "%";
            len = 1;
            p++;
        } else if (p[1] == 'h') {
            if (gethostname(piece, sizeof piece - 1) != 0)
                return asys_fail(err, "cannot expand %%h: %s", strerror(errno));
            piece[sizeof piece - 1] = '\0';
            len = strlen(piece);
            p++;
        } else if (p[1] == 'p') {
            if (pid == ASYS_PATTERN_PID_UNKNOWN)
                return asys_fail(err, "%%p (the profiled program's pid) is not known here");
            len = (size_t)snprintf(piece, sizeof piece, "%ld", pid);
            p++;
        } else if (p[1] == 'r') {
            struct asys_rank rank;
            int found = asys_rank_detect(&rank, err);
            if (found < 0)
                return asys_err_wrap(err, "cannot expand %%r");
            if (!found && !keep_rank)
                return asys_fail(err, "%%r: no rank in the environment (looked at %s)",
                                 ASYS_RANK_ENVIRONMENTS);
            len = found ? (size_t)snprintf(piece, sizeof piece, "%ld", rank.rank)
                        : (size_t)snprintf(piece, sizeof piece, "%%r");
            p++;
        } else if (p[1] == 'n') {
            len = (size_t)snprintf(piece, sizeof piece, "%u", seq);
            *has_seq = 1;
            p++;
        } else if (p[1] == 'q' && p[2] == '{' && strchr(p + 3, '}')) {
            const char *end = strchr(p + 3, '}');
            char name[256];
            if ((size_t)(end - (p + 3)) >= sizeof name || end == p + 3)
                return asys_fail(err, "%%q{...} needs the name of an environment variable");
            memcpy(name, p + 3, (size_t)(end - (p + 3)));
            name[end - (p + 3)] = '\0';
            text = getenv(name);
            if (!text)
                return asys_fail(err, "environment variable '%s' of %%q{%s} is not set", name,
                                 name);
            len = strlen(text);
            p = end;
        } else {
            return asys_fail(err, "unknown pattern '%%%.1s' (valid: %%h %%p %%r %%n %%q{ENV} %%%%)",
                             p[1] ? p + 1 : "");
        }
        if (append(out, size, &at, text, len) != 0)
            return asys_fail(err, "report name is too long");
    }
    return 0;
}

static int expand(const char *pattern, long pid, int keep_rank, char *out, size_t size,
                  struct asys_err *err)
{
    int has_seq = 0;
    for (unsigned seq = 1; seq < 1000000; seq++) {
        if (expand_once(pattern, pid, keep_rank, seq, &has_seq, out, size, err) != 0)
            return -1;
        if (!has_seq)
            return 0;
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%s%s", out,
                         ends_with(out, ASYS_REPORT_SUFFIX) ? "" : ASYS_REPORT_SUFFIX);
        struct stat st;
        if (n < 0 || (size_t)n >= sizeof path || lstat(path, &st) != 0)
            return 0;
    }
    return asys_fail(err, "no free %%n for '%s'", pattern);
}

int asys_output_pattern_has_pid(const char *pattern)
{
    for (const char *p = pattern; *p; p++)
        if (*p == '%' && p[1]) {
            if (p[1] == 'p')
                return 1;
            p++;
        }
    return 0;
}

int asys_output_pattern_expand(const char *pattern, long pid, char *out, size_t size,
                               struct asys_err *err)
{
    return expand(pattern, pid, 0, out, size, err);
}

int asys_output_pattern_expand_keeping_rank(const char *pattern, long pid, char *out, size_t size,
                                            struct asys_err *err)
{
    return expand(pattern, pid, 1, out, size, err);
}
