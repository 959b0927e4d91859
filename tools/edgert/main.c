/* SPDX-License-Identifier: MIT */
/* edgert: dispatch "edgert <command> [options]" to the subcommands. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "edgert.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "convert", ert_cmd_convert, "convert an ONNX model to .ert" },
	{ "info", ert_cmd_info, "show inputs, outputs, ops, parameters and MACs of a model" },
	{ "run", ert_cmd_run, "run a model on .npy/.pb or random inputs, write outputs" },
	{ "bench", ert_cmd_bench, "time a model: min, median, max and peak memory" },
	{ "profile", ert_cmd_profile, "per-op time table of a model" },
	{ "diff", ert_cmd_diff, "compare a backend with the CPU op by op" },
	{ "quantize", ert_cmd_quantize, "post-training int8 quantisation with calibration" },
	{ "conform", ert_cmd_conform, "run ONNX backend test cases with ONNX's tolerances" },
	{ "ops", ert_cmd_ops, "list the ONNX ops edgert reads: opset ranges, backends" },
	{ "trace", ert_cmd_trace, "timeline of a run across the runtime and the driver (BPF)" },
	{ "zoo", ert_cmd_zoo, "build a standard architecture with random weights" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "USAGE: edgert <command> [options]\n"
		   "       edgert <command> --help\n"
		   "       edgert --version\n\n"
		   "Inference runtime command line: convert, inspect, run, time and\n"
		   "profile models (.ert, or .onnx converted on the fly).\n\n"
		   "COMMANDS:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nEXAMPLES:\n"
		   "  edgert zoo mobilenet_v2 -o mnv2.ert   # build a model, no download\n"
		   "  edgert info mnv2.ert                  # what is in it\n"
		   "  edgert run mnv2.ert -o out/           # random input, top-5, out/logits.npy\n"
		   "  edgert bench mnv2.ert --threads 4     # timing\n"
		   "  edgert convert model.onnx -o model.ert\n");
}

/*
 * What a command printed must have reached standard output: a full disk, a
 * closed descriptor or a broken pipe is a failure, not exit 0 with the output
 * lost. @rc is the command's exit code.
 */
static int finish_stdout(const char *cmd, int rc)
{
	int err = 0;

	errno = 0;
	if (fflush(stdout) != 0)
		err = errno ? errno : EIO;
	else if (ferror(stdout))
		err = EIO; /* an earlier write failed; its errno is gone */
	if (err) {
		fprintf(stderr, "edgert%s%s: failed to write to standard output: %s\n",
			cmd ? " " : "", cmd ? cmd : "", strerror(err));
		return rc ? rc : 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "edgert: missing command (see 'edgert --help')\n");
		return 1;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return finish_stdout(NULL, 0);
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("edgert %d.%d.%d\n", ERT_VERSION_MAJOR, ERT_VERSION_MINOR,
		       ERT_VERSION_PATCH);
		return finish_stdout(NULL, cli_print_cpu("edgert", stdout) ? 0 : 1);
	}
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return finish_stdout(commands[i].name,
					     commands[i].fn(argc - 1, argv + 1));
	fprintf(stderr, "edgert: unknown command '%s' (see 'edgert --help')\n", argv[1]);
	return 1;
}
