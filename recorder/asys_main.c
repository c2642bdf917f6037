/* asys: the command table.  `stats`, `export` and `deps` run the separate
 * tools installed next to asys. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "allocator_tuning.h"
#include "asys_commands.h"
#include "install_paths.h"
#include "notes.h"

#ifndef ASYS_VERSION
#define ASYS_VERSION "0.0.0"
#endif

static int run_sibling(const char *tool, int argc, char **argv)
{
    char path[PATH_MAX];
    if (asys_sibling_path(tool, path, sizeof path) != 0 || access(path, X_OK) != 0) {
        fprintf(stderr, "asys: cannot run '%s': not installed next to asys\n", tool);
        return 1;
    }
    (void)argc;
    argv[0] = (char *)tool;
    execv(path, argv);
    fprintf(stderr, "asys: cannot run '%s': %s\n", path, strerror(errno));
    return 1;
}

static int cmd_stats(int argc, char **argv)
{
    return run_sibling("asys-stats", argc, argv);
}

static int cmd_export(int argc, char **argv)
{
    return run_sibling("asys-export", argc, argv);
}

static int cmd_deps(int argc, char **argv)
{
    return run_sibling("asys-deps", argc, argv);
}

static int cmd_help(int argc, char **argv);

static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"profile", asys_cmd_profile, "record a program into NAME.asys-rep"},
    {"stats", cmd_stats, "summary reports of a report (same as asys-stats)"},
    {"export", cmd_export,
     "a report as Perfetto, Chrome JSON, CSV or SQLite (same as asys-export)"},
    {"deps", cmd_deps, "dependencies between PPU activities (same as asys-deps)"},
    {"launch", asys_cmd_launch, "run a program with the recorder injected, recording nothing yet"},
    {"start", asys_cmd_start, "begin a recording of a launched session (a new report)"},
    {"stop", asys_cmd_stop, "end the recording and write its report; the program goes on"},
    {"cancel", asys_cmd_cancel, "end the recording and discard it"},
    {"shutdown", asys_cmd_shutdown, "end a session; its program gets --kill's signal"},
    {"sessions", asys_cmd_sessions, "sessions list: this user's sessions and their states"},
    {"finalize", asys_cmd_finalize, "pack an interrupted session directory into a report"},
    {"dump", asys_cmd_dump, "every record of a report or segment file, decoded, one per line"},
    {"help", cmd_help, "show this help"},
    {NULL, NULL, NULL},
};

static int cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("usage: asys <command> [options]\n\ncommands:\n");
    for (const struct command *c = commands; c->name; c++)
        printf("  %-10s %s\n", c->name, c->summary);
    printf("\n'asys <command> --help' describes a command.\n");
    return 0;
}

int main(int argc, char **argv)
{
    asys_tune_allocator(argv);
    if (argc < 2) {
        cmd_help(argc, argv);
        return 2;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-v")) {
        printf("asys %s\n", ASYS_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return cmd_help(argc, argv);
    for (const struct command *c = commands; c->name; c++) {
        if (strcmp(argv[1], c->name))
            continue;
        /* every command answers --version as its first argument (before a
         * profiled program's own arguments, which are not ours) */
        if (argc > 2 && !strcmp(argv[2], "--version")) {
            printf("asys %s\n", ASYS_VERSION);
            return 0;
        }
        char program[32]; /* notes say which command: "asys profile: warning: ..." */
        snprintf(program, sizeof program, "asys %s", c->name);
        asys_notes_set_program(program);
        return c->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "asys: unknown command '%s' (see asys help)\n", argv[1]);
    return 2;
}
