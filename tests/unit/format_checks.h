/* Sink for the generated FORMAT.md checks: collects failures so the test
 * reports every mismatch at once. */
#ifndef ASYS_FORMAT_CHECKS_H
#define ASYS_FORMAT_CHECKS_H

struct format_check_sink {
    int checks;
    int failures;
    char first_failure[256];
};

#define FORMAT_CHECK(sink, cond, text) \
    do { \
        (sink)->checks++; \
        if (!(cond) && !(sink)->failures++) \
            snprintf((sink)->first_failure, sizeof(sink)->first_failure, "%s", text); \
    } while (0)

#include <stdio.h>

void asys_format_doc_checks(struct format_check_sink *sink);
extern const char *const asys_documented_constants[];
extern const unsigned long long asys_documented_values[];
extern const int asys_documented_struct_count;
extern const char *const asys_documented_osrt_functions[];

#endif
