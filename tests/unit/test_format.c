/* schema/FORMAT.md and schema/asys_format.h must agree. */
#include <stdio.h>

#include "asys_format.h"
#include "format_checks.h"
#include "segment_stream.h"
#include "test_util.h"

START_TEST(doc_tables_match_header)
{
    struct format_check_sink sink = {0, 0, ""};
    asys_format_doc_checks(&sink);
    ck_assert_msg(sink.failures == 0, "%d of %d checks failed; first: %s", sink.failures,
                  sink.checks, sink.first_failure);
    ck_assert_int_gt(sink.checks, 100);
    ck_assert_int_ge(asys_documented_struct_count, 12);
}
END_TEST

static int documented(const char *name, unsigned long long value)
{
    for (int i = 0; asys_documented_constants[i]; i++)
        if (!strcmp(asys_documented_constants[i], name))
            return asys_documented_values[i] == value;
    return 0;
}

START_TEST(every_record_type_is_documented)
{
    for (unsigned type = 0; type < ASYS_REC_TYPE_COUNT; type++) {
        const struct asys_rec_info *info = asys_rec_info(type);
        if (!info)
            continue;
        char name[64];
        snprintf(name, sizeof name, "ASYS_REC_%s", info->name);
        ck_assert_msg(documented(name, type), "%s (%u) is not in FORMAT.md", name, type);
        ck_assert_uint_eq(info->min_size % 8, 0);
    }
}
END_TEST

START_TEST(osrt_function_ids_match)
{
    static const char *const names[] = {
#define NAME(id, name) [id] = #name,
        ASYS_OSRT_FUNCTIONS(NAME)
#undef NAME
    };
    int documented_count = 0;
    for (int i = 0; asys_documented_osrt_functions[i]; i++) {
        documented_count++;
        ck_assert_msg(i + 1 < (int)(sizeof names / sizeof *names) && names[i + 1],
                      "osrt function %d is documented but not in the header", i + 1);
        ck_assert_str_eq(names[i + 1], asys_documented_osrt_functions[i]);
    }
    ck_assert_int_eq(documented_count, ASYS_OSRT_FUNCTION_COUNT);
    ck_assert_int_eq((int)(sizeof names / sizeof *names) - 1, ASYS_OSRT_FUNCTION_COUNT);
}
END_TEST

START_TEST(record_word_packing)
{
    asys_rec_word w = ASYS_REC_WORD(ASYS_REC_HGTX_PUSH, 1, 0xbeef, 0xfffffffeu);
    ck_assert_uint_eq(ASYS_REC_TYPE(w), ASYS_REC_HGTX_PUSH);
    ck_assert_uint_eq(ASYS_REC_SIZE_WORDS(w), 1);
    ck_assert_uint_eq(ASYS_REC_ARG(w), 0xbeef);
    ck_assert_uint_eq(ASYS_REC_DELTA(w), 0xfffffffeu);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("format");
    tcase_add_test(tc, doc_tables_match_header);
    tcase_add_test(tc, every_record_type_is_documented);
    tcase_add_test(tc, osrt_function_ids_match);
    tcase_add_test(tc, record_word_packing);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
