/* Subcommands of the asys program (asys_main.c dispatches). */
#ifndef ASYS_COMMANDS_H
#define ASYS_COMMANDS_H

int asys_cmd_profile(int argc, char **argv);
int asys_cmd_finalize(int argc, char **argv);
int asys_cmd_dump(int argc, char **argv);
/* session_cmd.c: interactive sessions */
int asys_cmd_launch(int argc, char **argv);
int asys_cmd_start(int argc, char **argv);
int asys_cmd_stop(int argc, char **argv);
int asys_cmd_cancel(int argc, char **argv);
int asys_cmd_shutdown(int argc, char **argv);
int asys_cmd_sessions(int argc, char **argv);

#endif
