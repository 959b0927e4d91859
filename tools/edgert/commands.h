/* SPDX-License-Identifier: MIT */
/*
 * commands.h — the edgert subcommands. Each takes the arguments after
 * "edgert" (argv[0] is the command name) and returns the process exit code:
 * 0 on success, 1 on a user error (after one line on stderr).
 */
#ifndef ERT_COMMANDS_H
#define ERT_COMMANDS_H

int ert_cmd_convert(int argc, char **argv);
int ert_cmd_info(int argc, char **argv);
int ert_cmd_run(int argc, char **argv);
int ert_cmd_bench(int argc, char **argv);
int ert_cmd_bench_suite(int argc, char **argv); /* bench-suite.c: edgert bench --suite */
int ert_cmd_profile(int argc, char **argv);
int ert_cmd_zoo(int argc, char **argv);
int ert_cmd_conform(int argc, char **argv); /* conform.c */
int ert_cmd_quantize(int argc, char **argv); /* quantize*.c */
int ert_cmd_diff(int argc, char **argv);     /* diff.c */
int ert_cmd_trace(int argc, char **argv);    /* trace.c */
int ert_cmd_ops(int argc, char **argv);      /* ops.c */

#endif /* ERT_COMMANDS_H */
