/* schema/FORMAT.md and schema/asys_format.h must agree. */
#include <stdio.h>

#include "asys_format.h"
#include "format_checks.h"
#include "record_dump.h"
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

/* ... and the other way: every documented record type has a table entry
 * (asys dump and the importer know it). */
START_TEST(every_documented_type_has_an_entry)
{
    for (int i = 0; asys_documented_constants[i]; i++) {
        const char *name = asys_documented_constants[i];
        if (strncmp(name, "ASYS_REC_", 9) || !strcmp(name, "ASYS_REC_INVALID") ||
            !strcmp(name, "ASYS_REC_TYPE_COUNT") || !strcmp(name, "ASYS_REC_EXTENDED") ||
            !strcmp(name, "ASYS_REC_MAX_SIZE") || !strcmp(name, "ASYS_REC_MAX_DELTA"))
            continue;
        const struct asys_rec_info *info = asys_rec_info((unsigned)asys_documented_values[i]);
        ck_assert_msg(info != NULL, "%s has no record-type entry", name);
        ck_assert_str_eq(info->name, name + 9);
    }
}
END_TEST

/* The field table of each type covers its struct from the header word to its
 * end, in order, without gaps: a field added to a struct and not to the
 * table fails here, and asys dump shows every byte of every record. */
START_TEST(record_fields_cover_every_struct)
{
    int types = 0;
    for (unsigned type = 0; type < ASYS_REC_TYPE_COUNT; type++) {
        const struct asys_rec_info *info = asys_rec_info(type);
        if (!info)
            continue;
        types++;
        unsigned end = 8;
        for (unsigned i = 0; i < info->field_count; i++) {
            const struct asys_rec_field *f = &info->fields[i];
            ck_assert_msg(f->offset == end, "%s.%s at %u, previous field ends at %u", info->name,
                          f->name, f->offset, end);
            ck_assert_msg(f->size > 0 && (!f->elem_size || f->size % f->elem_size == 0),
                          "%s.%s size %u", info->name, f->name, f->size);
            end = f->offset + f->size;
        }
        ck_assert_msg(end == info->min_size, "%s: fields end at %u, the struct at %u", info->name,
                      end, info->min_size);
        if (info->tail != ASYS_TAIL_NONE)
            ck_assert(info->tail_offset >= 8 && info->tail_offset + 4u <= info->min_size);
    }
    ck_assert_int_ge(types, 38);
}
END_TEST

/* Every type dumps to one line naming it and each of its fields. */
START_TEST(every_record_type_dumps)
{
    for (unsigned type = 1; type < ASYS_REC_TYPE_COUNT; type++) {
        const struct asys_rec_info *info = asys_rec_info(type);
        if (!info)
            continue;
        uint8_t data[512] = {0};
        struct asys_record rec = {type, 7, 1234, data, info->min_size, 256};
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        struct asys_dump_strings strings;
        asys_dump_strings_init(&strings);
        asys_dump_record(f, &rec, &strings);
        asys_dump_strings_free(&strings);
        fclose(f);
        ck_assert_msg(strchr(text, '\n') == text + size - 1, "%s: not one line", info->name);
        ck_assert_msg(strstr(text, info->name), "%s: '%s'", info->name, text);
        for (unsigned i = 0; i < info->field_count; i++) {
            char want[80];
            snprintf(want, sizeof want, " %s=", info->fields[i].name);
            if (info->fields[i].kind != ASYS_FIELD_RESERVED)
                ck_assert_msg(strstr(text, want), "%s: no %s in '%s'", info->name, want, text);
        }
        free(text);
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

/* A traced process's uid is never taken for a CPU sampler's segment (one in
 * 256 was, and a session's report left that process out). */
START_TEST(image_uids_are_never_the_samplers)
{
    const uint64_t lows[] = {0, 1, UINT64_C(0x00a6fb137c144788), UINT64_C(0x00ffffffffffffff)};
    for (uint64_t high = 0; high < 256; high++) {
        for (size_t i = 0; i < sizeof lows / sizeof *lows; i++) {
            uint64_t random = high << 56 | lows[i];
            uint64_t uid = asys_image_uid(random);
            ck_assert_msg(!asys_is_sampler_uid(uid), "0x%016llx gave a sampler's uid",
                          (unsigned long long)random);
            ck_assert_uint_ne(uid, 0);
            if (high != ASYS_SAMPLER_UID_TAG && random)
                ck_assert_uint_eq(uid, random); /* otherwise as random as it came */
        }
    }
    ck_assert(asys_is_sampler_uid((uint64_t)ASYS_SAMPLER_UID_TAG << 56 | 42));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("format");
    /* Check's default is 4 s: an ASan build on a loaded CI machine ran over */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, doc_tables_match_header);
    tcase_add_test(tc, every_record_type_is_documented);
    tcase_add_test(tc, every_documented_type_has_an_entry);
    tcase_add_test(tc, record_fields_cover_every_struct);
    tcase_add_test(tc, every_record_type_dumps);
    tcase_add_test(tc, osrt_function_ids_match);
    tcase_add_test(tc, record_word_packing);
    tcase_add_test(tc, image_uids_are_never_the_samplers);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
