/* asys dump REPORT|SEGMENT...: every record, decoded, one per line with its
 * offset (uftrace's dump, perf's -D).  A damaged segment is dumped up to the
 * damage; the reason goes to stderr and the exit status is 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "asys_commands.h"
#include "asys_error.h"
#include "arena_frames.h"
#include "arena_read.h"
#include "record_dump.h"
#include "report_reader.h"
#include "segment_stream.h"

#define PROG "asys dump"

/* The records of an open stream; 0, or -1 with err at the first damage. */
static int dump_stream(struct asys_segment_stream *s, const char *name, struct asys_err *err)
{
    struct asys_dump_strings strings;
    asys_dump_strings_init(&strings);
    asys_dump_segment_header(stdout, name, &s->header);
    struct asys_record rec;
    int rc;
    while ((rc = asys_segment_stream_next(s, &rec, err)) > 0)
        asys_dump_record(stdout, &rec, &strings);
    printf("# end of %s: %llu records\n", name, (unsigned long long)s->records);
    asys_dump_strings_free(&strings);
    return rc < 0 ? asys_err_wrap(err, "segment '%s'", name) : 0;
}

static int dump_segment_file(const char *path, struct asys_err *err)
{
    int rc = -1;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        asys_fail_errno(err, errno, "%s", "");
        goto out;
    }
    struct asys_segment_stream s;
    if (asys_segment_stream_open(&s, asys_read_fd, &fd, (uint64_t)st.st_size, err) != 0)
        goto out;
    rc = dump_stream(&s, path, err);
    asys_segment_stream_close(&s);
out:
    if (fd >= 0)
        close(fd);
    return rc;
}

static int dump_report(const char *path, struct asys_err *err)
{
    struct asys_report_reader *r = NULL;
    int rc = -1;
    if (asys_report_reader_open(&r, path, NULL, err) != 0)
        goto out;
    const cJSON *manifest = asys_report_manifest(r);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(manifest, "report_id");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(manifest, "format_version");
    printf("# report %s: report_id %s, format %d%s\n", path,
           cJSON_IsString(id) ? id->valuestring : "?",
           cJSON_IsNumber(version) ? version->valueint : 0,
           asys_report_symbols(r) ? ", with symbols.json" : "");
    int failed = 0;
    for (;;) {
        struct asys_segment_stream s;
        const char *member = NULL;
        int bad = 0;
        struct asys_err seg_err = {0};
        int more = asys_report_next_segment(r, &s, &member, &bad, &seg_err);
        if (more < 0) {
            *err = seg_err;
            goto out;
        }
        if (more == 0)
            break;
        if (bad) {
            fprintf(stderr, "%s: '%s': segment '%s': %s\n", PROG, path, member, seg_err.text);
            failed = 1;
            continue;
        }
        int damaged = dump_stream(&s, member, &seg_err) != 0;
        asys_segment_stream_close(&s);
        if (asys_report_archive_failure(r, err) != 0) /* the archive: nothing follows */
            goto out;
        if (damaged) {
            fprintf(stderr, "%s: '%s': %s\n", PROG, path, seg_err.text);
            failed = 1;
        }
    }
    rc = failed ? 1 : 0;
out:
    asys_report_reader_close(r);
    return rc;
}

/* The session directory of arena `path` (SESSION/segments/arena), where
 * the frames of its released slots are. */
static void arena_session_dir(const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s", path);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(out, '/');
        if (!slash) {
            snprintf(out, size, "%s", up ? "." : "..");
            return;
        }
        *slash = '\0';
    }
    if (!out[0])
        snprintf(out, size, "/");
}

/* A session's arena: every segment in it, as finalize would cut them. */
static int dump_arena(const char *path, struct asys_err *err)
{
    struct asys_arena_index index;
    struct asys_arena_frames frames;
    char session_dir[PATH_MAX];
    if (asys_arena_index_read(path, &index, err) != 0)
        return -1;
    int rc = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        rc = asys_fail_errno(err, errno, "%s", "");
    asys_arena_frames_init(&frames, &index, fd);
    arena_session_dir(path, session_dir, sizeof session_dir);
    if (rc == 0)
        rc = asys_arena_frames_open(&frames, session_dir, err);
    for (size_t i = 0; rc == 0 && i < index.count; i++) {
        const struct asys_arena_segment *seg = &index.segments[i];
        struct asys_arena_cursor cursor = {fd, &index, seg, 0, NULL, NULL};
        asys_arena_frames_attach(&frames, &cursor);
        char name[128];
        snprintf(name, sizeof name, "%s: pid %u tid %u, %zu slots", path, seg->key.pid,
                 seg->key.tid, seg->count);
        struct asys_segment_stream s;
        if (asys_segment_stream_open(&s, asys_arena_cursor_read, &cursor,
                                     asys_arena_segment_size(&index, seg), err) != 0) {
            rc = -1;
            break;
        }
        rc = dump_stream(&s, name, err);
        asys_segment_stream_close(&s);
    }
    asys_arena_frames_close(&frames);
    if (fd >= 0)
        close(fd);
    asys_arena_index_free(&index);
    return rc;
}

enum input_kind { INPUT_REPORT, INPUT_SEGMENT, INPUT_ARENA };

/* A segment file starts with the segment magic, an arena with its own;
 * anything else is read as a report. */
static enum input_kind input_kind(const char *path)
{
    char magic[ASYS_SEGMENT_MAGIC_LEN] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return INPUT_REPORT;
    ssize_t n = read(fd, magic, sizeof magic);
    close(fd);
    if (n != (ssize_t)sizeof magic)
        return INPUT_REPORT;
    return !memcmp(magic, ASYS_SEGMENT_MAGIC, sizeof magic) ? INPUT_SEGMENT
           : !memcmp(magic, ASYS_ARENA_MAGIC, sizeof magic) ? INPUT_ARENA
                                                            : INPUT_REPORT;
}

int asys_cmd_dump(int argc, char **argv)
{
    const char *usage = "usage: asys dump REPORT.asys-rep|SEGMENT.seg|ARENA...";
    int status = ASYS_EXIT_OK, paths = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("%s\nPrints every record of a report, of a segment file or of a session's\n"
                   "arena (segments/arena), decoded, one per line: @OFFSET TYPE t=TICKS\n"
                   "field=value...  String ids show their text when the segment defined\n"
                   "it before.\n",
                   usage);
            return ASYS_EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "%s: unknown option '%s' (%s)\n", PROG, argv[i], usage);
            return ASYS_EXIT_USAGE;
        }
    }
    for (int i = 1; i < argc; i++) {
        struct asys_err err = {0};
        paths++;
        enum input_kind kind = input_kind(argv[i]);
        int rc = kind == INPUT_SEGMENT ? dump_segment_file(argv[i], &err)
                 : kind == INPUT_ARENA ? dump_arena(argv[i], &err)
                                       : dump_report(argv[i], &err);
        if (rc < 0)
            asys_err_print(PROG, "read", argv[i], &err);
        if (rc != 0)
            status = ASYS_EXIT_FAILURE;
    }
    if (!paths) {
        fprintf(stderr, "%s: %s\n", PROG, usage);
        return ASYS_EXIT_USAGE;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "%s: cannot write to standard output: %s\n", PROG, strerror(errno));
        status = ASYS_EXIT_FAILURE;
    }
    return status;
}
