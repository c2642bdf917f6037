#define _GNU_SOURCE
#include "finalize_ranks.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "report_path.h"

#define RANK_FILE_MAX 1024 /* the library writes at most 12 short lines */
#define RANK_FILE_VARIABLES 16

/* One process's NAME=VALUE lines (cut into strings in place). */
struct rank_file {
    char text[RANK_FILE_MAX + 1];
    const char *names[RANK_FILE_VARIABLES];
    const char *values[RANK_FILE_VARIABLES];
    int count;
};

static const char *rank_file_lookup(void *ctx, const char *name)
{
    const struct rank_file *f = ctx;
    for (int i = 0; i < f->count; i++)
        if (!strcmp(f->names[i], name))
            return f->values[i];
    return NULL;
}

/* 0 when read (a file is as untrusted as any: bounded, lines without '='
 * skipped), -1 when it cannot be. */
static int rank_file_read(int dir_fd, const char *name, struct rank_file *f)
{
    int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, f->text, RANK_FILE_MAX);
    close(fd);
    if (n <= 0)
        return -1;
    f->text[n] = '\0';
    f->count = 0;
    for (char *line = f->text; line && *line && f->count < RANK_FILE_VARIABLES;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *eq = strchr(line, '=');
        if (eq) {
            *eq = '\0';
            f->names[f->count] = line;
            f->values[f->count++] = eq + 1;
        }
        line = next;
    }
    return 0;
}

/* A file name that is a pid: digits only, 1..2^31. */
static int pid_of(const char *name, uint32_t *pid)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(name, &end, 10);
    if (errno || end == name || *end || name[0] == '0' || v > 0x7fffffffUL)
        return -1;
    *pid = (uint32_t)v;
    return 0;
}

int asys_rank_map_read(const char *session_dir, struct asys_rank_map *map)
{
    memset(map, 0, sizeof *map);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", session_dir, ASYS_RANK_DIR);
    DIR *dir = opendir(path);
    if (!dir)
        return 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        uint32_t pid;
        struct rank_file f;
        if (pid_of(e->d_name, &pid) != 0 || rank_file_read(dirfd(dir), e->d_name, &f) != 0)
            continue;
        struct asys_rank rank;
        struct asys_err ignored = {0};
        if (asys_rank_detect_with(rank_file_lookup, &f, &rank, &ignored) != 1) {
            map->refused++;
            continue;
        }
        if (asys_grow(&map->items, &map->cap, map->count, sizeof *map->items, 16)) {
            rc = -1;
            break;
        }
        map->items[map->count++] = (struct asys_process_rank){pid, rank};
    }
    closedir(dir);
    return rc;
}

void asys_rank_map_free(struct asys_rank_map *map)
{
    free(map->items);
    memset(map, 0, sizeof *map);
}

const struct asys_rank *asys_rank_map_find(const struct asys_rank_map *map, uint32_t pid)
{
    for (size_t i = 0; i < map->count; i++)
        if (map->items[i].pid == pid)
            return &map->items[i].rank;
    return NULL;
}

int asys_report_path_has_rank(const char *path)
{
    return strstr(path, "%r") != NULL;
}

int asys_rank_report_path(const char *path, long rank, int insert, char *out, size_t size)
{
    char number[32];
    if (rank < 0)
        snprintf(number, sizeof number, "all");
    else
        snprintf(number, sizeof number, "%ld", rank);
    size_t at = 0, len = strlen(path);
    const char *mark = strstr(path, "%r");
    if (!mark && insert) { /* NAME.asys-rep -> NAME_rankN.asys-rep */
        size_t suffix = strlen(ASYS_REPORT_SUFFIX);
        size_t stem =
            len >= suffix && !strcmp(path + len - suffix, ASYS_REPORT_SUFFIX) ? len - suffix : len;
        int n = snprintf(out, size, "%.*s_rank%s%s", (int)stem, path, number, path + stem);
        return n >= 0 && (size_t)n < size ? 0 : -1;
    }
    for (const char *p = path; *p;) {
        const char *piece = p;
        size_t n = 1;
        if (p[0] == '%' && p[1] == 'r') {
            piece = number;
            n = strlen(number);
        }
        if (at + n >= size)
            return -1;
        memcpy(out + at, piece, n);
        at += n;
        p += piece == number ? 2 : 1;
    }
    out[at] = '\0';
    return 0;
}
