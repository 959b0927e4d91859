/* SPDX-License-Identifier: MIT */
/* edgert zoo: build a standard architecture with seeded random weights. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "format/ert-format.h"
#include "opt/passes.h"
#include "zoo.h"

static const char usage[] =
	"USAGE: edgert zoo NAME -o OUT.ert [--seed N] [--no-optimize]\n"
	"       edgert zoo --list\n"
	"\n"
	"Build a standard architecture in C with seeded random weights (He-scaled,\n"
	"BatchNorm folded into Conv biases) and write it as an .ert model. Input\n"
	"\"input\" (1x3x224x224 float32), output \"logits\" (1x1000).\n"
	"\n"
	"OPTIONS:\n"
	"  -o, --output FILE   .ert file to write (required)\n"
	"  -s, --seed N        weight seed, 0..2^64-1 (default 0)\n"
	"      --no-optimize   write the graph as built (no activation fusion)\n"
	"  -l, --list          list the architectures\n"
	"  -h, --help          show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert zoo --list\n"
	"  edgert zoo mobilenet_v2 -o mnv2.ert\n"
	"  edgert zoo resnet50 -o r50.ert --seed 7\n";

static const struct zoo_arch *const archs[] = {
	&zoo_mobilenet_v2,
	&zoo_resnet18,
	&zoo_resnet50,
	&zoo_vit_s16,
};

#define N_ARCHS (sizeof(archs) / sizeof(archs[0]))

struct zoo_opts {
	const char *name;
	const char *output;
	uint64_t seed;
	bool optimize;
	bool list;
};

static int parse_args(int argc, char **argv, struct zoo_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "no-optimize", no_argument, NULL, 'O' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:s:lh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 's':
			if (!cli_parse_u64("zoo", "--seed", optarg, &o->seed))
				return 1;
			break;
		case 'O': o->optimize = false; break;
		case 'l': o->list = true; break;
		case 'h': fputs(usage, stdout); return -1;
		default: return cli_getopt_error("zoo", argv, c);
		}
	}
	if (o->list)
		return 0;
	if (optind >= argc)
		return cli_error("zoo", "missing architecture name (see 'edgert zoo --list')");
	if (optind + 1 < argc)
		return cli_error("zoo", "unexpected argument '%s'", argv[optind + 1]);
	o->name = argv[optind];
	if (!o->output)
		return cli_error("zoo", "missing -o OUT.ert");
	return 0;
}

int ert_cmd_zoo(int argc, char **argv)
{
	struct zoo_opts o = { .optimize = true };
	const struct zoo_arch *arch = NULL;
	struct ert_write_options wopt = { 0 };
	struct zoo_builder b;
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	ert_status st;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (o.list) {
		for (size_t i = 0; i < N_ARCHS; i++)
			printf("%-14s %s\n", archs[i]->name, archs[i]->description);
		return 0;
	}
	for (size_t i = 0; i < N_ARCHS; i++)
		if (strcmp(o.name, archs[i]->name) == 0)
			arch = archs[i];
	if (!arch)
		return cli_error("zoo", "unknown architecture '%s' (see 'edgert zoo --list')", o.name);

	ret = 1;
	cli_progress("zoo", "building graph", 0, 0);
	if (!zoo_begin(&b, arch->opset, o.seed) || !arch->build(&b)) {
		cli_progress_done();
		cli_error("zoo", "failed to build %s: out of memory", arch->name);
		goto cleanup;
	}
	g = b.g;
	b.g = NULL;
	st = ert_graph_validate(g, &err);
	if (st == ERT_OK && o.optimize) {
		cli_progress("zoo", "optimizing", 0, 0);
		st = ert_graph_optimize(g, &err);
	}
	if (st != ERT_OK) {
		cli_progress_done();
		cli_error("zoo", "failed to build %s: %s", arch->name, err.msg);
		goto cleanup;
	}
	cli_progress("zoo", "writing", 0, 0);
	st = ert_format_write_file(g, &wopt, o.output, &err);
	cli_progress_done();
	if (st != ERT_OK) {
		cli_error("zoo", "failed to write '%s': %s", o.output,
			  err.msg[0] ? err.msg : ert_status_string(st));
		goto cleanup;
	}
	printf("%s: %s, %u nodes, seed %llu\n", o.output, arch->name, g->n_nodes,
	       (unsigned long long)o.seed);
	ret = 0;
cleanup:
	ert_graph_destroy(g);
	zoo_abort(&b);
	return ret;
}
