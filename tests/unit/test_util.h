/* Helpers shared by the unit tests. */
#ifndef ASYS_TEST_UTIL_H
#define ASYS_TEST_UTIL_H

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile_options.h"

/* A fresh directory under $TMPDIR; removed by test_rmdir(). */
static inline void test_mkdtemp(char *out, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out, size, "%s/asys-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(out));
}

static inline void test_rmdir(const char *dir)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The environment `asys profile -t COLLECTORS` gives a program (every
 * option at its default), set in this process; 0 or -1. */
static inline int test_collector_environment(const char *collectors)
{
    char *argv[] = {"profile", "-t", (char *)collectors, "program", NULL};
    static struct asys_profile_options o;
    static struct asys_env env;
    struct asys_err err = {0};
    /* the collectors are linked into the test program: what the launcher
     * would preload is found (the libraries are built) but not preloaded */
    struct asys_collector_setup setup = {&o, ASYS_TEST_INJECT_LIBRARY, "", 0, 0, 0, NULL, 0};
    env.count = 0;
    env.used = 0;
    if (asys_profile_parse(4, argv, &o, &err) != 0 ||
        asys_profile_environment(&o, &setup, &env, &err) != 0) {
        fprintf(stderr, "test environment: %s\n", err.text);
        return -1;
    }
    for (int i = 0; i < env.count; i++)
        if (strcmp(env.vars[i].name, "CUDA_INJECTION64_PATH") &&
            strcmp(env.vars[i].name, "LD_PRELOAD"))
            setenv(env.vars[i].name, env.vars[i].value, 1);
    return 0;
}

/* The injected library reads its session from the environment when it
 * starts: outside a session, this makes one (a directory with segments/),
 * re-runs the test program inside it and returns the exit status to end
 * with; inside one, returns -1. */
static inline int test_run_in_session(char **argv, const char *collectors)
{
    if (getenv("ASYS_SESSION_DIR"))
        return -1;
    char dir[PATH_MAX], segments[PATH_MAX + 16];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/asys-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    snprintf(segments, sizeof segments, "%s/segments", dir);
    mkdir(segments, 0700);
    setenv("ASYS_SESSION_DIR", dir, 1);
    if (test_collector_environment(collectors) != 0)
        return 1;
    setenv("ASYS_CLOCK", "monotonic", 1);
    pid_t pid = fork();
    if (pid == 0) {
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    char cleanup[PATH_MAX + 16];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
    if (system(cleanup) != 0)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* Runs every suite given; returns the process exit status. */
static inline int test_run(Suite **suites, int count)
{
    SRunner *sr = srunner_create(suites[0]);
    for (int i = 1; i < count; i++)
        srunner_add_suite(sr, suites[i]);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
