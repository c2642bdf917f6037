/* asys profile option parsing. */
#include <stdarg.h>

#include "profile_options.h"
#include "test_util.h"

static int parse(struct asys_profile_options *o, struct asys_err *err, int argc, ...)
{
    static char *argv[32];
    va_list ap;
    va_start(ap, argc);
    argv[0] = "profile";
    for (int i = 1; i <= argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    memset(err, 0, sizeof *err);
    return asys_profile_parse(argc + 1, argv, o, err);
}

START_TEST(defaults)
{
    struct asys_profile_options o;
    struct asys_err err;
    ck_assert_int_eq(parse(&o, &err, 2, "./app", "arg"), 0);
    /* python: --python-sampling is on by default, and so is -s process-tree
     * (the manual's defaults) */
    ck_assert_uint_eq(o.features, ASYS_FEATURE_HGGC | ASYS_FEATURE_HGTX | ASYS_FEATURE_ACDNN |
                                      ASYS_FEATURE_ACBLAS | ASYS_FEATURE_PYTHON |
                                      ASYS_FEATURE_CPU_SAMPLING);
    ck_assert_ptr_null(o.output);
    ck_assert_int_eq(o.force_overwrite, 0);
    ck_assert_int_eq(o.wait, ASYS_WAIT_ALL);
    ck_assert_int_eq(o.target_argc, 2);
    ck_assert_str_eq(o.target_argv[0], "./app");
    ck_assert_str_eq(o.target_argv[1], "arg");
}
END_TEST

START_TEST(trace_names_and_aliases)
{
    struct asys_profile_options o;
    struct asys_err err;
    /* the collectors on by their own options' defaults: -s and --python-sampling */
    const uint32_t by_default = ASYS_FEATURE_PYTHON | ASYS_FEATURE_CPU_SAMPLING;
    ck_assert_int_eq(parse(&o, &err, 3, "-t", "nvtx,cuda", "app"), 0);
    ck_assert_uint_eq(o.features, ASYS_FEATURE_HGTX | ASYS_FEATURE_HGGC | by_default);
    ck_assert_int_eq(parse(&o, &err, 2, "--trace=hgtx,acdnn,cublas,pccl,osrt", "app"), 0);
    ck_assert_uint_eq(o.features, ASYS_FEATURE_HGTX | ASYS_FEATURE_ACDNN | ASYS_FEATURE_ACBLAS |
                                      ASYS_FEATURE_PCCL | ASYS_FEATURE_OSRT | by_default);
    ck_assert_int_eq(parse(&o, &err, 2, "-tnone", "app"), 0);
    ck_assert_uint_eq(o.features, by_default);
    ck_assert_int_eq(parse(&o, &err, 3, "-t", "nvtx,bogus", "app"), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "unknown --trace value 'bogus'"));
    ck_assert_ptr_nonnull(strstr(err.text, "hgtx/nvtx")); /* lists the valid ones */
    ck_assert_int_eq(parse(&o, &err, 3, "-t", "none,hgtx", "app"), -1);
}
END_TEST

START_TEST(output_force_wait)
{
    struct asys_profile_options o;
    struct asys_err err;
    ck_assert_int_eq(parse(&o, &err, 6, "-o", "myrep", "-f", "--wait", "primary", "app"), 0);
    ck_assert_str_eq(o.output, "myrep");
    ck_assert_int_eq(o.force_overwrite, 1);
    ck_assert_int_eq(o.wait, ASYS_WAIT_PRIMARY);
    ck_assert_int_eq(parse(&o, &err, 3, "--force-overwrite", "false", "app"), 0);
    ck_assert_int_eq(o.force_overwrite, 0);
    ck_assert_int_eq(parse(&o, &err, 2, "--force-overwrite=true", "app"), 0);
    ck_assert_int_eq(o.force_overwrite, 1);
    ck_assert_int_eq(parse(&o, &err, 3, "--wait", "sometimes", "app"), -1);
    ck_assert_int_eq(parse(&o, &err, 3, "--max-segment-size", "64M", "app"), 0);
    ck_assert_uint_eq(o.max_segment_size, 64ull << 20);
    ck_assert_int_eq(parse(&o, &err, 3, "--max-segment-size", "12", "app"), -1);
}
END_TEST

START_TEST(program_arguments_are_not_options)
{
    struct asys_profile_options o;
    struct asys_err err;
    ck_assert_int_eq(parse(&o, &err, 5, "-t", "nvtx", "app", "-t", "x"), 0);
    ck_assert_int_eq(o.target_argc, 3);
    ck_assert_str_eq(o.target_argv[1], "-t");
    ck_assert_int_eq(parse(&o, &err, 3, "--", "-weird-name", "--help"), 0);
    ck_assert_str_eq(o.target_argv[0], "-weird-name");
    ck_assert_int_eq(o.show_help, 0);
}
END_TEST

START_TEST(given_options_are_recorded)
{
    struct asys_profile_options o;
    struct asys_err err;
    ck_assert_int_eq(parse(&o, &err, 5, "--acompute-backtrace-threshold", "20", "--multi-node-mode",
                           "true", "app"),
                     0);
    ck_assert_int_eq(o.given_count, 2);
    ck_assert_str_eq(o.given[0].name, "acompute-backtrace-threshold");
    ck_assert_str_eq(o.given[0].value, "20");
    ck_assert_int_eq(o.given[0].supported, 1); /* built since issue 24 */
    ck_assert_str_eq(o.given[1].name, "multi-node-mode");
    ck_assert_int_eq(o.given[1].supported, 1); /* built since issue 27.1 */
    ck_assert_int_eq(asys_profile_value(&o, "multi-node-mode")->number, 1);
}
END_TEST

/* The CPU sampler is on unless -s none; its values are checked like any
 * option's. */
START_TEST(cpu_sampling_options)
{
    struct asys_profile_options o;
    struct asys_err err;
    ck_assert_int_eq(parse(&o, &err, 1, "app"), 0);
    ck_assert_uint_ne(o.features & ASYS_FEATURE_CPU_SAMPLING, 0);
    ck_assert_str_eq(asys_profile_value(&o, "sample")->canonical, "process-tree");
    ck_assert_int_eq(parse(&o, &err, 3, "-s", "none", "app"), 0);
    ck_assert_uint_eq(o.features & ASYS_FEATURE_CPU_SAMPLING, 0);
    ck_assert_int_eq(parse(&o, &err, 5, "-s", "process-tree", "-b", "fp", "app"), 0);
    ck_assert_uint_ne(o.features & ASYS_FEATURE_CPU_SAMPLING, 0);
    ck_assert_int_eq(o.given[0].supported, 1);
    ck_assert_str_eq(asys_profile_value(&o, "backtrace")->canonical, "fp");
    ck_assert_uint_eq(asys_profile_value(&o, "sample-period")->number, 2000000);
    ck_assert_int_eq(parse(&o, &err, 3, "-s", "everything", "app"), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "process-tree"));
    ck_assert_int_eq(parse(&o, &err, 5, "-s", "process-tree", "--sample-period", "0", "app"), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "--sample-period takes 1 to"));
    ck_assert_int_eq(parse(&o, &err, 3, "--sample-backtrace-depth", "129", "app"), -1);
}
END_TEST

START_TEST(errors)
{
    struct asys_profile_options o;
    struct asys_err err;
    ck_assert_int_eq(parse(&o, &err, 1, "-t"), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "needs a value"));
    ck_assert_int_eq(parse(&o, &err, 2, "--no-such-option", "app"), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "unknown option '--no-such-option'"));
    ck_assert_int_eq(parse(&o, &err, 2, "-t", "nvtx"), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "no program"));
    ck_assert_int_eq(parse(&o, &err, 2, "--help=x", "app"), -1);
    ck_assert_int_eq(parse(&o, &err, 1, "--help"), 0);
    ck_assert_int_eq(o.show_help, 1);
}
END_TEST

START_TEST(help_lists_the_manual_options)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    asys_profile_print_help(f);
    fclose(f);
    const char *expected[] = {"--trace",
                              "--output",
                              "--force-overwrite",
                              "--hggc-trace-set",
                              "--hggcbacktrace",
                              "--osrt-threshold",
                              "--sample-period",
                              "--ppu-metrics-device",
                              "--heap-memory-usage",
                              "--python-functions-trace",
                              "--nic-metrics-frequency",
                              "--acompute-backtrace-threshold",
                              "--multi-node-mode"};
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++)
        ck_assert_msg(strstr(text, expected[i]), "--help does not mention %s", expected[i]);
    /* every option of the manual is built since issue 27.1: none is marked planned */
    ck_assert_ptr_null(strstr(text, "[planned]"));
    ck_assert_ptr_null(strstr(text, "Options marked 'planned'"));
    free(text);
}
END_TEST

/* A collector option's value as the injected library receives it. */
static const char *env_value(const struct asys_profile_options *o, const char *name)
{
    return asys_profile_value(o, name)->canonical;
}

START_TEST(hggc_options)
{
    struct asys_profile_options o;
    struct asys_err err;
    ck_assert_int_eq(parse(&o, &err, 1, "app"), 0);
    ck_assert_str_eq(env_value(&o, "hggc-trace-set"), "all");
    ck_assert_str_eq(env_value(&o, "hggcbacktrace"), "0");
    ck_assert_str_eq(env_value(&o, "hggc-backtrace-depth"), "24");
    ck_assert_str_eq(env_value(&o, "hggc-graph-trace"), "node");
    ck_assert_int_eq(parse(&o, &err, 9, "--hggc-trace-set=kernel-activity,kernel-api",
                           "--hggcbacktrace", "all:1000", "--hggc-backtrace-depth", "50",
                           "--hggc-graph-trace", "graph", "app"),
                     0);
    ck_assert_str_eq(env_value(&o, "hggc-trace-set"), "kernel-activity,kernel-api");
    ck_assert_str_eq(env_value(&o, "hggcbacktrace"), "1000");
    ck_assert_str_eq(env_value(&o, "hggc-backtrace-depth"), "50");
    ck_assert_str_eq(env_value(&o, "hggc-graph-trace"), "graph");
    ck_assert_int_eq(parse(&o, &err, 3, "--hggc-trace-set", "kernels", "app"), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "unknown --hggc-trace-set subset 'kernels'"));
    ck_assert_int_eq(parse(&o, &err, 3, "--hggc-trace-set", "sync,", "app"), 0);
    ck_assert_int_eq(parse(&o, &err, 3, "--hggcbacktrace", "1000", "app"), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "all:NS"));
    ck_assert_int_eq(parse(&o, &err, 3, "--hggcbacktrace", "all:0", "app"), -1);
    ck_assert_int_eq(parse(&o, &err, 3, "--hggcbacktrace", "none", "app"), 0);
    ck_assert_int_eq(parse(&o, &err, 3, "--hggc-backtrace-depth", "129", "app"), -1);
    ck_assert_int_eq(parse(&o, &err, 3, "--hggc-graph-trace", "kernel", "app"), -1);
}
END_TEST

START_TEST(trace_list_string)
{
    char out[128];
    asys_trace_list_string(ASYS_FEATURE_HGTX | ASYS_FEATURE_OSRT, out, sizeof out);
    ck_assert_str_eq(out, "hgtx,osrt");
    asys_trace_list_string(0, out, sizeof out);
    ck_assert_str_eq(out, "none");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("options");
    /* Check's default is 4 s: an ASan build on a loaded CI machine ran over */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, trace_names_and_aliases);
    tcase_add_test(tc, output_force_wait);
    tcase_add_test(tc, program_arguments_are_not_options);
    tcase_add_test(tc, given_options_are_recorded);
    tcase_add_test(tc, cpu_sampling_options);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, help_lists_the_manual_options);
    tcase_add_test(tc, hggc_options);
    tcase_add_test(tc, trace_list_string);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
