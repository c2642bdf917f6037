/* JIT symbol maps, /tmp/perf-PID.map (perf_map.h).
 *
 * The file is written by the program: untrusted.  Its size, the number of
 * entries and each name's length are bounded, and a line that is not
 * `HEX HEX NAME` is skipped. */
#define _GNU_SOURCE
#include "perf_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"

#define MAX_MAP_BYTES (256u << 20)
#define MAX_ENTRIES (4u << 20)
#define MAX_NAME 1024
#define MAX_LOOKBACK 64

struct entry {
    uint64_t start, size;
    uint32_t name; /* offset in names */
    uint32_t order; /* line number: a later line wins an overlap */
};

struct asys_perf_map {
    struct entry *entries; /* by start */
    size_t count, cap;
    char *names;
    size_t names_used, names_cap;
};

void asys_perf_map_path(char *out, size_t size, uint32_t pid)
{
    snprintf(out, size, "/tmp/perf-%u.map", pid);
}

int asys_is_perf_map_path(const char *path)
{
    static const char prefix[] = "/tmp/perf-";
    if (strncmp(path, prefix, sizeof prefix - 1) != 0)
        return 0;
    size_t digits = strspn(path + sizeof prefix - 1, "0123456789");
    return digits && !strcmp(path + sizeof prefix - 1 + digits, ".map");
}

void asys_perf_map_free(struct asys_perf_map *m)
{
    if (!m)
        return;
    free(m->entries);
    free(m->names);
    free(m);
}

static int parse_hex(const char *s, char **end, uint64_t *v)
{
    if (!strncmp(s, "0x", 2))
        s += 2;
    errno = 0;
    *v = strtoull(s, end, 16);
    return *end == s || errno || (**end != ' ' && **end != '\t') ? -1 : 0;
}

static int add_entry(struct asys_perf_map *m, uint64_t start, uint64_t size, const char *at,
                     size_t len, uint32_t order)
{
    if (!len || !size || start > UINT64_MAX - size || m->count >= MAX_ENTRIES)
        return 0;
    if (len > MAX_NAME)
        len = MAX_NAME;
    if (asys_grow(&m->names, &m->names_cap, m->names_used + len + 1, 1, 4096) ||
        asys_grow(&m->entries, &m->cap, m->count, sizeof *m->entries, 256))
        return -1;
    memcpy(m->names + m->names_used, at, len);
    m->names[m->names_used + len] = '\0';
    m->entries[m->count++] = (struct entry){start, size, (uint32_t)m->names_used, order};
    m->names_used += len + 1;
    return 0;
}

/* One `START SIZE NAME` line; 0 when it is not one (skipped), -1 out of memory. */
static int add_map_line(struct asys_perf_map *m, char *line, uint32_t order)
{
    char *at;
    uint64_t start, size;
    if (parse_hex(line, &at, &start) != 0 || parse_hex(at + strspn(at, " \t"), &at, &size) != 0)
        return 0;
    at += strspn(at, " \t");
    return add_entry(m, start, size, at, strcspn(at, "\r\n"), order);
}

/* One kallsyms `ADDR TYPE NAME [MODULE]` line of a text symbol, its size
 * left to the next symbol's start; 0 when it is none (skipped). */
static int add_kallsyms_line(struct asys_perf_map *m, char *line, uint32_t order)
{
    char *at;
    uint64_t start;
    if (parse_hex(line, &at, &start) != 0 || !start)
        return 0;
    at += strspn(at, " \t");
    if (!strchr("tTwW", at[0]) || !at[0] || (at[1] != ' ' && at[1] != '\t'))
        return 0;
    at += 1 + strspn(at + 1, " \t");
    return add_entry(m, start, 1, at, strcspn(at, " \t\r\n"), order);
}

static int by_start(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Opens a map as perf does: a regular file (not a FIFO that would hold
 * finalize up, not a link planted in /tmp) owned by root or by this user,
 * of a bounded size. */
static FILE *open_map_file(const char *path, struct asys_err *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        asys_fail_errno(err, errno, "cannot open '%s'", path);
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_uid && st.st_uid != geteuid()) ||
        (uint64_t)st.st_size > MAX_MAP_BYTES) {
        asys_fail(err, "'%s': not a regular file of this user or root, or larger than %u MiB", path,
                  MAX_MAP_BYTES >> 20);
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        asys_fail_errno(err, errno, "cannot read '%s'", path);
        close(fd);
    }
    return f;
}

static struct asys_perf_map *read_lines(const char *path,
                                        int (*add)(struct asys_perf_map *, char *, uint32_t),
                                        struct asys_err *err)
{
    struct asys_perf_map *m = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    FILE *f = open_map_file(path, err);
    if (!f)
        goto out;
    if (!(m = calloc(1, sizeof *m))) {
        asys_fail(err, "out of memory");
        goto out;
    }
    uint32_t order = 0;
    while (getline(&line, &line_cap, f) > 0) {
        if (add(m, line, order++) != 0) {
            asys_fail(err, "out of memory");
            asys_perf_map_free(m);
            m = NULL;
            goto out;
        }
    }
    if (m->count)
        qsort(m->entries, m->count, sizeof *m->entries, by_start);
out:
    free(line);
    if (f)
        fclose(f);
    return m;
}

struct asys_perf_map *asys_perf_map_read(const char *path, struct asys_err *err)
{
    return read_lines(path, add_map_line, err);
}

struct asys_perf_map *asys_kallsyms_read(const char *path, struct asys_err *err)
{
    struct asys_perf_map *m = read_lines(path, add_kallsyms_line, err);
    for (size_t i = 0; m && i + 1 < m->count; i++) /* sorted: up to the next symbol */
        if (m->entries[i + 1].start > m->entries[i].start)
            m->entries[i].size = m->entries[i + 1].start - m->entries[i].start;
    return m;
}

int asys_kallsyms_readable(const char *path)
{
    char line[256];
    FILE *f = fopen(path, "re");
    int readable = 0;
    for (int i = 0; f && i < 64 && !readable && fgets(line, sizeof line, f); i++)
        readable = strtoull(line, NULL, 16) != 0;
    if (f)
        fclose(f);
    return readable;
}

const char *asys_perf_map_name(const struct asys_perf_map *m, uint64_t address)
{
    size_t lo = 0, hi = m->count;
    while (lo < hi) { /* the number of entries starting at or below the address */
        size_t mid = lo + (hi - lo) / 2;
        if (m->entries[mid].start <= address)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct entry *best = NULL;
    for (size_t k = 0; k < lo && k < MAX_LOOKBACK; k++) {
        const struct entry *e = &m->entries[lo - 1 - k];
        if (address - e->start < e->size && (!best || e->order > best->order))
            best = e;
    }
    return best ? m->names + best->name : NULL;
}

void asys_perf_map_span(const struct asys_perf_map *m, uint64_t *start, uint64_t *end)
{
    *start = *end = 0;
    for (size_t i = 0; i < m->count; i++) {
        uint64_t e = m->entries[i].start + m->entries[i].size;
        if (!i || m->entries[i].start < *start)
            *start = m->entries[i].start;
        if (e > *end)
            *end = e;
    }
}
