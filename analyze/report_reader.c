#include "report_reader.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json_util.h"

#define MANIFEST_LIMIT (256u << 20)

struct asys_report_reader {
    struct archive *archive;
    cJSON *manifest;
    cJSON *symbols;                /* symbols.json, when the report has one */
    struct archive_entry *pending; /* a header read ahead, not yet handed out */
    int at_end;
    char member[512];
    char archive_error[256]; /* set when reading member data failed */
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

static const char *archive_reason(struct archive *a)
{
    const char *s = archive_error_string(a);
    return s ? s : "damaged archive";
}

/* Reads the current member as a JSON object. */
static cJSON *read_json_member(struct asys_report_reader *r, struct archive_entry *e,
                               const char *what, struct asys_err *err)
{
    la_int64_t size = archive_entry_size(e);
    if (size <= 0 || size > MANIFEST_LIMIT) {
        asys_fail(err, "not an asys report (bad %s size)", what);
        return NULL;
    }
    char *text = malloc((size_t)size + 1);
    if (!text) {
        asys_fail(err, "out of memory");
        return NULL;
    }
    la_ssize_t got = 0;
    while (got < size) {
        la_ssize_t n = archive_read_data(r->archive, text + got, (size_t)(size - got));
        if (n <= 0) {
            free(text);
            asys_fail(err, "truncated report (%s)",
                      n < 0 ? archive_reason(r->archive) : "cut short");
            return NULL;
        }
        got += n;
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

static int read_manifest(struct asys_report_reader *r, struct archive_entry *e,
                         struct asys_err *err)
{
    r->manifest = read_json_member(r, e, "manifest.json", err);
    if (!r->manifest)
        return -1;
    uint64_t version;
    if (asys_json_get_u64(r->manifest, "format_version", &version) != 0)
        return asys_fail(err, "not an asys report (manifest has no format_version)");
    if (version == 0 || version > ASYS_FORMAT_VERSION)
        return asys_fail(err, "report format version %llu is newer than this asys supports (%d)",
                         (unsigned long long)version, ASYS_FORMAT_VERSION);
    return 0;
}

int asys_report_reader_open(struct asys_report_reader **out, const char *path, struct asys_err *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return asys_fail(err, "%s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return asys_fail(err, "not a regular file");
    if (st.st_size == 0)
        return asys_fail(err, "not an asys report (empty file)");
    struct asys_report_reader *r = calloc(1, sizeof *r);
    if (!r)
        return asys_fail(err, "out of memory");
    r->archive = archive_read_new();
    if (!r->archive) {
        free(r);
        return asys_fail(err, "out of memory");
    }
    archive_read_support_filter_zstd(r->archive);
    archive_read_support_format_tar(r->archive);
    struct archive_entry *e;
    if (archive_read_open_filename(r->archive, path, 1 << 20) != ARCHIVE_OK) {
        asys_fail(err, "not an asys report (%s)", archive_reason(r->archive));
        goto fail;
    }
    int rc = archive_read_next_header(r->archive, &e);
    if (rc == ARCHIVE_EOF) {
        asys_fail(err, "not an asys report (empty archive)");
        goto fail;
    }
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
        asys_fail(err, "not an asys report (%s)", archive_reason(r->archive));
        goto fail;
    }
    if (strcmp(archive_entry_pathname(e), "manifest.json") != 0) {
        asys_fail(err, "not an asys report (first member is '%s', not manifest.json)",
                  archive_entry_pathname(e));
        goto fail;
    }
    if (read_manifest(r, e, err) != 0)
        goto fail;
    /* symbols.json, when present, comes next; anything else is kept for later */
    rc = archive_read_next_header(r->archive, &e);
    if (rc == ARCHIVE_EOF) {
        r->at_end = 1;
    } else if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
        asys_fail(err, "truncated or damaged report (%s)", archive_reason(r->archive));
        goto fail;
    } else if (!strcmp(archive_entry_pathname(e), ASYS_SYMBOLS_NAME)) {
        r->symbols = read_json_member(r, e, ASYS_SYMBOLS_NAME, err);
        if (!r->symbols)
            goto fail;
    } else {
        r->pending = e;
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
    la_ssize_t n = archive_read_data(r->archive, buf, size);
    if (n < 0)
        snprintf(r->archive_error, sizeof r->archive_error, "%s", archive_reason(r->archive));
    return n < 0 ? -1 : (long)n;
}

const char *asys_report_archive_error(const struct asys_report_reader *r)
{
    return r->archive_error[0] ? r->archive_error : NULL;
}

int asys_report_next_segment(struct asys_report_reader *r, struct asys_segment_stream *s,
                             const char **member, int *bad, struct asys_err *err)
{
    *bad = 0;
    for (;;) {
        struct archive_entry *e = r->pending;
        r->pending = NULL;
        if (r->at_end)
            return 0;
        int rc = e ? ARCHIVE_OK : archive_read_next_header(r->archive, &e);
        if (rc == ARCHIVE_EOF)
            return 0;
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
            return asys_fail(err, "truncated or damaged report (%s)", archive_reason(r->archive));
        const char *name = archive_entry_pathname(e);
        if (!asys_member_name_is_safe(name))
            return asys_fail(err, "unsafe member name '%s' in the report", name ? name : "");
        size_t dir_len = strlen(ASYS_SEGMENT_DIR);
        if (strncmp(name, ASYS_SEGMENT_DIR, dir_len) != 0 || archive_entry_filetype(e) != AE_IFREG)
            continue; /* members of later format additions are not segments */
        snprintf(r->member, sizeof r->member, "%s", name);
        *member = r->member;
        la_int64_t size = archive_entry_size(e);
        if (asys_segment_stream_open(s, read_archive, r, size < 0 ? 0 : (uint64_t)size, err) != 0) {
            if (r->archive_error[0])
                return asys_fail(err, "truncated or damaged report (%s)", r->archive_error);
            *bad = 1;
        }
        return 1;
    }
}

void asys_report_reader_close(struct asys_report_reader *r)
{
    if (!r)
        return;
    if (r->archive)
        archive_read_free(r->archive);
    cJSON_Delete(r->manifest);
    cJSON_Delete(r->symbols);
    free(r);
}
