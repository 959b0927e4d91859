/* SPDX-License-Identifier: MIT */
/* edgert zoo: build a standard architecture with seeded random weights. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "commands.h"
#include "format/ert-format.h"
#include "onnx/onnx-export.h"
#include "opt/passes.h"
#include "zoo.h"

static const char usage[] =
	"USAGE: edgert zoo NAME -o OUT.ert|OUT.onnx [--seed N] [--batch N] [--no-optimize]\n"
	"       edgert zoo --list\n"
	"\n"
	"Build a standard architecture in C with seeded random weights (He-scaled,\n"
	"BatchNorm folded into Conv biases) and write it as an .ert model, or with\n"
	"an OUT ending in .onnx as an ONNX model (the graph as built, for another\n"
	"runtime to run the same model next to edgert). Input \"input\"\n"
	"(1x3x224x224 float32), output \"logits\" (1x1000).\n"
	"\n"
	"OPTIONS:\n"
	"  -o, --output FILE   .ert (or .onnx) file to write (required)\n"
	"  -s, --seed N        weight seed, 0..2^64-1 (default 0)\n"
	"  -n, --batch N       images per run, 1..1024 (default 1): input Nx3x224x224,\n"
	"                      logits Nx1000\n"
	"      --no-optimize   write the graph as built (no activation fusion)\n"
	"  -l, --list          list the architectures\n"
	"  -h, --help          show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert zoo --list\n"
	"  edgert zoo mobilenet_v2 -o mnv2.ert\n"
	"  edgert zoo resnet50 -o r50.ert --seed 7\n"
	"  edgert zoo resnet50 -o r50.onnx --seed 7   # the same weights, as ONNX\n";

const struct zoo_arch *const zoo_archs[] = {
	&zoo_mobilenet_v2,
	&zoo_resnet18,
	&zoo_resnet50,
	&zoo_vit_s16,
};

const size_t zoo_n_archs = sizeof(zoo_archs) / sizeof(zoo_archs[0]);

const struct zoo_arch *zoo_find(const char *name)
{
	for (size_t i = 0; i < zoo_n_archs; i++)
		if (strcmp(name, zoo_archs[i]->name) == 0)
			return zoo_archs[i];
	return NULL;
}

/* OUT ends in ".onnx" (any case): an ONNX model rather than .ert. */
static bool zoo_path_is_onnx(const char *path)
{
	size_t n = strlen(path);

	return n >= 5 && !strcasecmp(path + n - 5, ".onnx");
}

bool zoo_write_file(const char *cmd, const struct zoo_arch *arch, uint64_t seed, bool optimize,
		    const char *path, uint32_t *n_nodes_out)
{
	return zoo_write_file_batch(cmd, arch, seed, 1, optimize, path, n_nodes_out);
}

bool zoo_write_file_batch(const char *cmd, const struct zoo_arch *arch, uint64_t seed,
			  int64_t batch, bool optimize, const char *path, uint32_t *n_nodes_out)
{
	struct ert_write_options wopt = { 0 };
	struct zoo_builder b;
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	ert_status st;
	bool ok = false;

	cli_progress(cmd, "building graph", 0, 0);
	bool begun = zoo_begin(&b, arch->opset, seed);

	b.batch = batch;
	if (!begun || !arch->build(&b)) {
		cli_progress_done();
		cli_error(cmd, "failed to build %s: out of memory", arch->name);
		goto cleanup;
	}
	g = b.g;
	b.g = NULL;
	st = ert_graph_validate(g, &err);
	/* ONNX holds the graph as built: the optimiser's fused forms are edgert's own */
	bool onnx = zoo_path_is_onnx(path);

	if (st == ERT_OK && optimize && !onnx) {
		cli_progress(cmd, "optimizing", 0, 0);
		st = ert_graph_optimize(g, &err);
	}
	if (st != ERT_OK) {
		cli_progress_done();
		cli_error(cmd, "failed to build %s: %s", arch->name, err.msg);
		goto cleanup;
	}
	cli_progress(cmd, "writing", 0, 0);
	st = onnx ? ert_onnx_export_file(g, path, &err) : ert_format_write_file(g, &wopt, path, &err);
	cli_progress_done();
	if (st != ERT_OK) {
		cli_error(cmd, "failed to write '%s': %s", path,
			  err.msg[0] ? err.msg : ert_status_string(st));
		goto cleanup;
	}
	if (n_nodes_out)
		*n_nodes_out = g->n_nodes;
	ok = true;
cleanup:
	ert_graph_destroy(g);
	zoo_abort(&b);
	return ok;
}

struct zoo_opts {
	const char *name;
	const char *output;
	uint64_t seed;
	int64_t batch;
	bool optimize;
	bool list;
};

static int parse_args(int argc, char **argv, struct zoo_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "batch", required_argument, NULL, 'n' },
		{ "no-optimize", no_argument, NULL, 'O' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:s:n:lh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 's':
			if (!cli_parse_u64("zoo", "--seed", optarg, &o->seed))
				return 1;
			break;
		case 'n':
			if (!cli_parse_int("zoo", "--batch", optarg, 1, 1024, &v))
				return 1;
			o->batch = v;
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
	struct zoo_opts o = { .optimize = true, .batch = 1 };
	const struct zoo_arch *arch;
	uint32_t n_nodes = 0;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (o.list) {
		for (size_t i = 0; i < zoo_n_archs; i++)
			printf("%-14s %s\n", zoo_archs[i]->name, zoo_archs[i]->description);
		return 0;
	}
	arch = zoo_find(o.name);
	if (!arch)
		return cli_error("zoo", "unknown architecture '%s' (see 'edgert zoo --list')", o.name);
	if (!zoo_write_file_batch("zoo", arch, o.seed, o.batch, o.optimize, o.output, &n_nodes))
		return 1;
	printf("%s: %s, %u nodes, seed %llu", o.output, arch->name, n_nodes,
	       (unsigned long long)o.seed);
	if (o.batch > 1)
		printf(", batch %lld", (long long)o.batch);
	printf("\n");
	return 0;
}
