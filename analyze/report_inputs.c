#define _GNU_SOURCE
#include "report_inputs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && !strcmp(s + n - m, suffix);
}

static int add_path(struct asys_report_inputs *in, const char *dir, const char *name)
{
    char **bigger = realloc(in->paths, (size_t)(in->count + 1) * sizeof *bigger);
    if (!bigger)
        return -1;
    in->paths = bigger;
    if (dir) {
        int slash = dir[strlen(dir) - 1] == '/';
        if (asprintf(&in->paths[in->count], "%s%s%s", dir, slash ? "" : "/", name) < 0)
            return -1;
    } else if (!(in->paths[in->count] = strdup(name))) {
        return -1;
    }
    in->count++;
    return 0;
}

/* Whether `name` in `dir` is what a report directory may hold beside its
 * reports without being an input: hidden files, an import's temporary
 * database, a journal, the analysis database of a report that is there. */
static int passed_over(const char *dir, const char *name)
{
    if (name[0] == '.' || strstr(name, ".sqlite.tmp-") || ends_with(name, "-journal"))
        return 1;
    if (!ends_with(name, ".sqlite"))
        return 0;
    char report[PATH_MAX];
    struct stat st;
    snprintf(report, sizeof report, "%s/%.*s.asys-rep", dir, (int)(strlen(name) - 7), name);
    return stat(report, &st) == 0;
}

/* One directory's reports, in name order; a foreign entry is refused. */
static int expand_dir(const char *dir, struct asys_report_inputs *out, struct asys_err *err)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort), rc = 0, found = 0;
    if (n < 0) {
        return asys_fail_errno(err, errno, "cannot read '%s'", dir);
    }
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char path[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (rc == 0 && !passed_over(dir, name)) {
            int report = (ends_with(name, ".asys-rep") || ends_with(name, ".sqlite")) &&
                         stat(path, &st) == 0 && S_ISREG(st.st_mode);
            if (!report)
                rc = asys_fail(err,
                               "cannot read '%s': not an asys report (a report directory holds "
                               "only NAME.asys-rep and NAME.sqlite files)",
                               path);
            else if (add_path(out, dir, name) != 0)
                rc = asys_fail(err, "out of memory");
            found++;
        }
        free(names[i]);
    }
    free(names);
    if (rc == 0 && !found)
        rc = asys_fail(err, "cannot read '%s': the directory holds no report", dir);
    return rc;
}

int asys_report_inputs_expand(const char *const *given, int count, struct asys_report_inputs *out,
                              struct asys_err *err)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < count; i++) {
        struct stat st;
        int dir = stat(given[i], &st) == 0 && S_ISDIR(st.st_mode);
        if (dir ? expand_dir(given[i], out, err) != 0
                : (add_path(out, NULL, given[i]) != 0 && asys_fail(err, "out of memory"))) {
            asys_report_inputs_free(out);
            return -1;
        }
    }
    return 0;
}

void asys_report_inputs_free(struct asys_report_inputs *in)
{
    for (int i = 0; i < in->count; i++)
        free(in->paths[i]);
    free(in->paths);
    memset(in, 0, sizeof *in);
}
