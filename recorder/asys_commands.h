/* Subcommands of the asys program (asys_main.c dispatches). */
#ifndef ASYS_COMMANDS_H
#define ASYS_COMMANDS_H

int asys_cmd_profile(int argc, char **argv);
int asys_cmd_finalize(int argc, char **argv);
int asys_cmd_dump(int argc, char **argv);

#endif
