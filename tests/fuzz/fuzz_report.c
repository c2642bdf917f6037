/* libFuzzer target: one input is one report file.  It goes through what
 * every analysis tool does with a report: the archive reader, the importer
 * into an in-memory database, and the record dump of every segment.  Any
 * crash, sanitizer report, leak or hang is a finding; a refusal is not.
 *
 * Built with -DASYS_BUILD_FUZZ=ON under clang (tests/fuzz/run_fuzz.sh). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "importer.h"
#include "record_dump.h"
#include "report_reader.h"
#include "sql_functions.h"

/* Small enough that an input cannot make one run slow. */
static const struct asys_report_limits limits = {
    .max_expansion = 1000, .max_bytes = 16u << 20, .max_segment_records = 50000};

static void dump_all(const char *path, FILE *sink)
{
    struct asys_report_reader *r = NULL;
    struct asys_err err = {0};
    if (asys_report_reader_open(&r, path, &limits, &err) != 0)
        return;
    for (;;) {
        struct asys_segment_stream s;
        const char *member;
        int bad;
        if (asys_report_next_segment(r, &s, &member, &bad, &err) <= 0)
            break;
        if (bad)
            continue;
        struct asys_dump_strings strings;
        asys_dump_strings_init(&strings);
        asys_dump_segment_header(sink, member, &s.header);
        struct asys_record rec;
        while (asys_segment_stream_next(&s, &rec, &err) > 0)
            asys_dump_record(sink, &rec, &strings);
        asys_dump_strings_free(&strings);
        asys_segment_stream_close(&s);
    }
    asys_report_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("report", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    for (size_t done = 0; done < size;) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return 0;
        }
        done += (size_t)n;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    sqlite3 *db = NULL;
    if (sqlite3_open(":memory:", &db) == SQLITE_OK && asys_sql_register_functions(db) == 0) {
        struct asys_import_stats stats;
        struct asys_err err = {0};
        asys_import_report(path, db, &limits, NULL, NULL, NULL, NULL, &stats, &err);
    }
    sqlite3_close(db);
    FILE *sink = fopen("/dev/null", "w");
    if (sink) {
        dump_all(path, sink);
        fclose(sink);
    }
    close(fd);
    return 0;
}
