/* SPDX-License-Identifier: MIT */
/* edgert convert: ONNX → .ert (import, optimise, serialise); .ert → .ert (re-encode). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "format/ert-format.h"
#include "onnx/onnx-import.h"

static const char usage[] =
	"USAGE: edgert convert IN.onnx -o OUT.ert [--fp16]\n"
	"                      [--weight-bits 8|4 [--weight-block N]] [--no-optimize]\n"
	"\n"
	"Import an ONNX model, optimise the graph (constant folding, Conv+BatchNorm\n"
	"folding, activation fusion, Identity and inference-Dropout removal, dead-node\n"
	"removal) and write it as an .ert model that the runtime maps in place.\n"
	"An .ert input is written again as it is, with the weight options given\n"
	"(its quantised weights, if any, are decoded first).\n"
	"\n"
	"OPTIONS:\n"
	"  -o, --output FILE       .ert file to write (required)\n"
	"      --fp16              store float32 weights as float16\n"
	"      --weight-bits B     block-wise weight-only quantisation, B = 8 or 4\n"
	"      --weight-block N    elements per quantisation block, 16..4096\n"
	"                          (default: the format's; needs --weight-bits)\n"
	"      --no-optimize       keep the graph as imported\n"
	"  -h, --help              show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert convert resnet50.onnx -o resnet50.ert\n"
	"  edgert convert vit.onnx -o vit-fp16.ert --fp16\n"
	"  edgert convert llm.onnx -o llm-q4.ert --weight-bits 4 --weight-block 32\n"
	"  edgert convert r50.ert -o r50-w8.ert --weight-bits 8\n";

struct convert_opts {
	const char *input;
	const char *output;
	struct ert_write_options write;
	bool optimize;
};

enum { OPT_FP16 = 256, OPT_BITS, OPT_BLOCK, OPT_NO_OPT };

static int parse_args(int argc, char **argv, struct convert_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "fp16", no_argument, NULL, OPT_FP16 },
		{ "weight-bits", required_argument, NULL, OPT_BITS },
		{ "weight-block", required_argument, NULL, OPT_BLOCK },
		{ "no-optimize", no_argument, NULL, OPT_NO_OPT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case OPT_FP16: o->write.fp16 = true; break;
		case OPT_BITS:
			if (strcmp(optarg, "8") != 0 && strcmp(optarg, "4") != 0)
				return cli_error("convert", "--weight-bits must be 8 or 4, got '%s'",
						 optarg);
			o->write.weight_bits = optarg[0] - '0';
			break;
		case OPT_BLOCK:
			if (!cli_parse_int("convert", "--weight-block", optarg, 16, 4096, &v))
				return 1;
			o->write.weight_block = (uint32_t)v;
			break;
		case OPT_NO_OPT: o->optimize = false; break;
		case 'h': fputs(usage, stdout); return -1;
		default: return cli_getopt_error("convert", argv, c);
		}
	}
	if (optind >= argc)
		return cli_error("convert", "missing input model (see 'edgert convert --help')");
	if (optind + 1 < argc)
		return cli_error("convert", "unexpected argument '%s'", argv[optind + 1]);
	o->input = argv[optind];
	if (!o->output)
		return cli_error("convert", "missing -o OUT.ert");
	if (o->write.weight_block && !o->write.weight_bits)
		return cli_error("convert", "--weight-block needs --weight-bits");
	if (o->write.fp16 && o->write.weight_bits)
		return cli_error("convert", "--fp16 and --weight-bits exclude each other");
	return 0;
}

int ert_cmd_convert(int argc, char **argv)
{
	struct convert_opts o = { .optimize = true };
	struct ert_onnx_options iopt;
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	struct stat st_in, st_out;
	double t0 = cli_now_ms();
	void *map = NULL;
	size_t map_size = 0;
	ert_status st;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (stat(o.input, &st_in) == 0 && stat(o.output, &st_out) == 0 &&
	    st_in.st_dev == st_out.st_dev && st_in.st_ino == st_out.st_ino)
		return cli_error("convert", "output '%s' is the input file", o.output);

	ret = 1;
	iopt.optimize = o.optimize;
	cli_progress("convert", "importing", 0, 0);
	int probe = ert_file_open_regular(o.input, NULL, &err);

	if (probe < 0) {
		cli_progress_done();
		cli_error("convert", "%s", err.msg);
		goto cleanup;
	}
	/* an .ert file: its graph as the loader gives it (constants point into the mapping) */
	if (fstat(probe, &st_in) == 0 && st_in.st_size > 0) {
		map = mmap(NULL, (size_t)st_in.st_size, PROT_READ, MAP_PRIVATE, probe, 0);
		if (map != MAP_FAILED && ert_format_probe(map, (size_t)st_in.st_size)) {
			map_size = (size_t)st_in.st_size;
		} else {
			if (map != MAP_FAILED)
				munmap(map, (size_t)st_in.st_size);
			map = NULL;
		}
	}
	close(probe);
	if (map)
		st = ert_format_load(map, map_size, &g, &err);
	else
		st = ert_onnx_import_file(o.input, &iopt, &g, &err);
	if (st != ERT_OK) {
		cli_progress_done();
		cli_error("convert", "failed to import '%s': %s", o.input,
			  err.msg[0] ? err.msg : ert_status_string(st));
		goto cleanup;
	}
	cli_progress("convert", "writing", 0, 0);
	st = ert_format_write_file(g, &o.write, o.output, &err);
	cli_progress_done();
	if (st != ERT_OK) {
		cli_error("convert", "failed to write '%s': %s", o.output,
			  err.msg[0] ? err.msg : ert_status_string(st));
		goto cleanup;
	}
	printf("%s -> %s: %u nodes, %u tensors, %.0f ms\n", o.input, o.output, g->n_nodes,
	       g->n_tensors, cli_now_ms() - t0);
	ret = 0;
cleanup:
	ert_graph_destroy(g);
	if (map)
		munmap(map, map_size);
	return ret;
}
