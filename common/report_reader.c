#include "report_reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive.h"
#include "json_util.h"

#define MANIFEST_LIMIT (256u << 20)

struct asys_report_reader {
    struct asys_archive_reader *archive;
    cJSON *manifest;
    cJSON *symbols; /* symbols.json, when the report has one */
    struct asys_archive_member current; /* the member being read */
    int pending; /* `current` was read ahead, not handed out yet */
    struct asys_report_limits limits;
    uint8_t *stream_buffer; /* one for every segment stream handed out */
    int at_end;
    char member[sizeof(((struct asys_archive_member *)0)->name)];
    struct asys_err archive_failure; /* set when reading member data failed */
};

int asys_member_name_is_safe(const char *name)
{
    if (!name || !*name || name[0] == '/')
        return 0;
    const char *p = name;
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        p += n;
        if (*p == '/')
            p++;
    }
    return 1;
}

/* Reads the current member as a JSON object. */
static cJSON *read_json_member(struct asys_report_reader *r, const char *what, struct asys_err *err)
{
    uint64_t size = r->current.size;
    if (!r->current.regular || size == 0 || size > MANIFEST_LIMIT) {
        asys_fail(err, "not an asys report (bad %s size)", what);
        return NULL;
    }
    char *text = malloc((size_t)size + 1);
    if (!text) {
        asys_fail(err, "out of memory");
        return NULL;
    }
    uint64_t got = 0;
    while (got < size) {
        long n = asys_archive_read(r->archive, text + got, (size_t)(size - got));
        if (n <= 0) {
            free(text);
            asys_fail_kind(err, ASYS_ERR_INPUT, "truncated report (%s)",
                           asys_archive_error(r->archive) ? asys_archive_error(r->archive)
                                                          : "cut short");
            return NULL;
        }
        got += (uint64_t)n;
    }
    text[size] = '\0';
    cJSON *json = cJSON_Parse(text);
    free(text);
    if (!json || !cJSON_IsObject(json)) {
        cJSON_Delete(json);
        asys_fail(err, "not an asys report (%s is not valid JSON)", what);
        return NULL;
    }
    return json;
}

static int read_manifest(struct asys_report_reader *r, struct asys_err *err)
{
    r->manifest = read_json_member(r, "manifest.json", err);
    if (!r->manifest)
        return -1;
    uint64_t version;
    if (asys_json_get_u64(r->manifest, "format_version", &version) != 0)
        return asys_fail_kind(err, ASYS_ERR_INPUT,
                              "not an asys report (manifest has no format_version)");
    if (version == 0) /* versions start at 1: not one asys wrote */
        return asys_fail_kind(err, ASYS_ERR_INPUT,
                              "report format version 0 is unknown (versions start at 1)");
    if (version > ASYS_FORMAT_VERSION)
        return asys_fail_kind(err, ASYS_ERR_INPUT,
                              "report format version %llu is newer than this asys supports (%d)",
                              (unsigned long long)version, ASYS_FORMAT_VERSION);
    return 0;
}

void asys_report_limits_default(struct asys_report_limits *l)
{
    l->max_expansion = ASYS_DEFAULT_MAX_EXPANSION;
    l->max_bytes = ASYS_DEFAULT_MAX_REPORT_BYTES;
    l->max_segment_records = ASYS_DEFAULT_MAX_SEGMENT_RECORDS;
    l->max_bytes_why = NULL;
    l->progress = NULL;
    l->progress_ctx = NULL;
}

/* Says what is wrong with a report whose manifest could not be read: a
 * marked file or a tar stream is an asys report, damaged or cut short. */
static void first_member_failed(const struct asys_archive_reader *a, struct asys_err *err)
{
    int ours = asys_archive_is_marked(a) || asys_archive_is_tar(a);
    if (err->kind == ASYS_ERR_TRUNCATED && ours)
        asys_err_wrap(err, "truncated report (the file ends before its manifest)");
    else if (ours)
        asys_err_wrap(err, "damaged asys report (the compressed data that holds its manifest is "
                           "corrupt)");
    else if (err->kind == ASYS_ERR_TRUNCATED) /* zstd that decompressed, but no archive */
        asys_fail_kind(err, ASYS_ERR_INPUT,
                       "not an asys report (zstd-compressed, but not a tar archive)");
    else
        asys_err_wrap(err, "not an asys report, or a damaged one of an older asys");
}

int asys_report_reader_open(struct asys_report_reader **out, const char *path,
                            const struct asys_report_limits *limits, struct asys_err *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return asys_fail_errno(err, errno, "%s", "");
    if (!S_ISREG(st.st_mode))
        return asys_fail_kind(err, ASYS_ERR_INPUT, "not a regular file");
    if (st.st_size == 0)
        return asys_fail_kind(err, ASYS_ERR_INPUT, "not an asys report (empty file)");
    struct asys_report_reader *r = calloc(1, sizeof *r);
    if (!r)
        return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    if (limits)
        r->limits = *limits;
    else
        asys_report_limits_default(&r->limits);
    /* the first 16 MiB (manifest.json, small reports) whatever their ratio: a bomb
     * shows past that, before the importer has stored much of it */
    struct asys_archive_limits al = {r->limits.max_expansion, 16u << 20,
                                     r->limits.max_bytes,     r->limits.max_bytes_why,
                                     r->limits.progress,      r->limits.progress_ctx};
    if (asys_archive_reader_open(&r->archive, path, &al, err) != 0)
        goto fail;
    int rc = asys_archive_next(r->archive, &r->current, err);
    if (rc < 0) {
        if (err->kind == ASYS_ERR_LIMIT)
            goto fail;
        first_member_failed(r->archive, err);
        goto fail;
    }
    if (rc == 0) {
        asys_fail_kind(err, ASYS_ERR_INPUT, "not an asys report (empty archive)");
        goto fail;
    }
    if (strcmp(r->current.name, ASYS_MANIFEST_NAME) != 0) {
        asys_fail_kind(err, ASYS_ERR_INPUT,
                       "not an asys report (first member is '%s', not manifest.json)",
                       r->current.name);
        goto fail;
    }
    if (read_manifest(r, err) != 0)
        goto fail;
    /* symbols.json, when present, comes next; anything else is kept for later */
    rc = asys_archive_next(r->archive, &r->current, err);
    if (rc == 0) {
        r->at_end = 1;
    } else if (rc < 0) {
        if (err->kind != ASYS_ERR_LIMIT)
            asys_err_wrap(err, "truncated or damaged report");
        goto fail;
    } else if (!strcmp(r->current.name, ASYS_SYMBOLS_NAME)) {
        r->symbols = read_json_member(r, ASYS_SYMBOLS_NAME, err);
        if (!r->symbols)
            goto fail;
    } else {
        r->pending = 1;
    }
    *out = r;
    return 0;
fail:
    asys_report_reader_close(r);
    return -1;
}

const cJSON *asys_report_manifest(const struct asys_report_reader *r)
{
    return r->manifest;
}

const cJSON *asys_report_symbols(const struct asys_report_reader *r)
{
    return r->symbols;
}

static long read_archive(void *ctx, void *buf, size_t size)
{
    struct asys_report_reader *r = ctx;
    long n = asys_archive_read(r->archive, buf, size);
    if (n < 0 && !r->archive_failure.kind) {
        if (asys_archive_failure(r->archive, &r->archive_failure) == 0)
            asys_fail_kind(&r->archive_failure, ASYS_ERR_INPUT, "damaged archive");
        if (r->archive_failure.kind != ASYS_ERR_LIMIT)
            asys_err_wrap(&r->archive_failure, "truncated or damaged report");
    }
    return n;
}

int asys_report_archive_failure(const struct asys_report_reader *r, struct asys_err *err)
{
    if (!r->archive_failure.kind)
        return 0;
    if (err)
        *err = r->archive_failure;
    return -1;
}

int asys_report_next_segment(struct asys_report_reader *r, struct asys_segment_stream *s,
                             const char **member, int *bad, struct asys_err *err)
{
    *bad = 0;
    for (;;) {
        if (r->at_end)
            return 0;
        if (!r->pending) {
            int rc = asys_archive_next(r->archive, &r->current, err);
            if (rc == 0)
                return 0;
            if (rc < 0)
                return err->kind == ASYS_ERR_LIMIT
                           ? -1
                           : asys_err_wrap(err, "truncated or damaged report");
        }
        r->pending = 0;
        const char *name = r->current.name;
        if (!asys_member_name_is_safe(name))
            return asys_fail_kind(err, ASYS_ERR_INPUT, "unsafe member name '%s' in the report",
                                  name);
        size_t dir_len = strlen(ASYS_SEGMENT_DIR);
        if (strncmp(name, ASYS_SEGMENT_DIR, dir_len) != 0 || !r->current.regular)
            continue; /* members of later format additions are not segments */
        snprintf(r->member, sizeof r->member, "%s", name);
        *member = r->member;
        if (!r->stream_buffer && !(r->stream_buffer = malloc(ASYS_STREAM_BUFFER_SIZE)))
            return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        if (asys_segment_stream_open_in(s, read_archive, r, r->current.size, r->stream_buffer,
                                        err) == 0) {
            s->max_records = r->limits.max_segment_records;
        } else {
            if (asys_report_archive_failure(r, err) != 0)
                return -1;
            *bad = 1;
        }
        return 1;
    }
}

void asys_report_reader_close(struct asys_report_reader *r)
{
    if (!r)
        return;
    asys_archive_reader_close(r->archive);
    free(r->stream_buffer);
    cJSON_Delete(r->manifest);
    cJSON_Delete(r->symbols);
    free(r);
}
