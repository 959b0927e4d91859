/* SPDX-License-Identifier: MIT */
/* edgert info: inputs, outputs, op histogram, parameters, MACs, format version. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "graph-stats.h"
#include "inputs.h"
#include "placement.h"

static const char usage[] =
	"USAGE: edgert info MODEL [--json]\n"
	"       edgert info MODEL --placement [--backend LIST]\n"
	"       edgert info --cpu\n"
	"\n"
	"Describe a model (.ert or .onnx): inputs and outputs with element type,\n"
	"shape (symbolic dimensions by name) and layout; op histogram; parameter\n"
	"count (elements of constant tensors); multiply-accumulates of Conv,\n"
	"ConvTranspose, Gemm, MatMul, Einsum and their int8 forms (QLinearConv,\n"
	"QGemm, QLinearMatMul, ConvInteger, MatMulInteger) with symbolic dimensions\n"
	"taken as 1; the .ert format version.\n"
	"\n"
	"With --placement, plan the model for its declared input shapes and print\n"
	"which backend runs each op, the splits (runs of ops on one backend) and\n"
	"the tensors that cross between backends.\n"
	"\n"
	"With --cpu, print the CPU: vendor and model, the instruction-set features\n"
	"the CPU kernels use, the best kernel level (scalar, avx2, avx512,\n"
	"avx512vnni, amx) and the level sessions run after ERT_CPU_ISA.\n"
	"\n"
	"OPTIONS:\n"
	"  -j, --json           one JSON object instead of text\n"
	"  -p, --placement      print op placement and splits (see above)\n"
	"  -c, --cpu            print the CPU and its kernel level (no MODEL)\n"
	"  -b, --backend LIST   with --placement: backends in order, from cpu,\n"
	"                       opencl, vulkan, npu, auto (default npu: the NPU, or\n"
	"                       its simulator when there is no device, then cpu)\n"
	"  -h, --help           show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert info mnv2.ert\n"
	"  edgert info model.onnx --json | jq .macs\n"
	"  edgert info mnv2-int8.ert --placement\n"
	"  ERT_CPU_ISA=avx2 edgert info --cpu\n";

struct info_opts {
	const char *model;
	bool json;
	bool placement;
	bool cpu;
	bool backend_given;
	ert_config cfg;
};

static int parse_args(int argc, char **argv, struct info_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "placement", no_argument, NULL, 'p' },
		{ "cpu", no_argument, NULL, 'c' },
		{ "backend", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jpcb:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->cpu = true; break;
		case 'j': o->json = true; break;
		case 'p': o->placement = true; break;
		case 'b':
			if (!cli_parse_backends("info", optarg, &o->cfg))
				return 1;
			o->backend_given = true;
			break;
		case 'h': fputs(usage, stdout); return -1;
		default: return cli_getopt_error("info", argv, c);
		}
	}
	if (o->backend_given && !o->placement)
		return cli_error("info", "--backend goes with --placement");
	if (o->json && o->placement)
		return cli_error("info", "--json and --placement do not go together");
	if (o->cpu) {
		if (o->json || o->placement)
			return cli_error("info", "--cpu goes alone");
		if (optind < argc)
			return cli_error("info", "--cpu takes no MODEL");
		return 0;
	}
	return cli_model_operand("info", argc, argv, &o->model);
}

static int info_placement(struct info_opts *o)
{
	ert_model *model = NULL;
	ert_session *sess = NULL;
	int ret = 1;

	if (!o->backend_given) {
		o->cfg.backends[0] = ERT_BACKEND_NPU;
		o->cfg.num_backends = 1;
	}
	if (cli_session_open("info", o->model, &o->cfg, &model, &sess) &&
	    cli_print_placement("info", model, sess, stdout))
		ret = 0;
	ert_session_destroy(sess);
	ert_model_unref(model);
	return ret;
}

/* Declared shape, or the walked one when the model declares none. */
static const struct ert_tensor *io_tensor(const struct ert_graph *g, int32_t idx,
					  const struct graph_stats *s, int32_t *rank,
					  const int64_t **dims)
{
	const struct ert_tensor *t = &g->tensors[idx];

	*rank = t->rank;
	*dims = t->dims;
	if (t->rank < 0 && s->vals[idx].rank >= 0) {
		*rank = s->vals[idx].rank;
		*dims = s->vals[idx].dims;
	}
	return t;
}

static const char *layout_of(int32_t rank)
{
	/* ONNX image tensors are NCHW; the runtime reports the same */
	return rank == 4 ? "NCHW" : "any";
}

static void print_io_text(const char *title, const struct ert_graph *g, const int32_t *list,
			  uint32_t n, const struct graph_stats *s)
{
	printf("%s:\n", title);
	for (uint32_t i = 0; i < n; i++) {
		int32_t rank;
		const int64_t *dims;
		const struct ert_tensor *t = io_tensor(g, list[i], s, &rank, &dims);
		char shape[256];

		cli_format_shape(shape, sizeof(shape), rank, dims, t->dim_names);
		printf("  %-20s %-8s %-20s %s\n", t->name, ert_dtype_name(t->dtype), shape,
		       layout_of(rank));
	}
}

static void print_io_json(const char *key, const struct ert_graph *g, const int32_t *list,
			  uint32_t n, const struct graph_stats *s)
{
	printf("  \"%s\": [", key);
	for (uint32_t i = 0; i < n; i++) {
		int32_t rank;
		const int64_t *dims;
		const struct ert_tensor *t = io_tensor(g, list[i], s, &rank, &dims);

		printf("%s\n    {\"name\": ", i ? "," : "");
		cli_json_string(stdout, t->name);
		printf(", \"dtype\": \"%s\", \"shape\": ", ert_dtype_name(t->dtype));
		if (rank < 0) {
			printf("null");
		} else {
			printf("[");
			for (int32_t d = 0; d < rank; d++) {
				printf("%s", d ? ", " : "");
				if (dims[d] >= 0)
					printf("%lld", (long long)dims[d]);
				else
					cli_json_string(stdout, t->dim_names[d] ? t->dim_names[d] : "?");
			}
			printf("]");
		}
		printf(", \"layout\": \"%s\"}", layout_of(rank));
	}
	printf("\n  ],\n");
}

static void print_count(const char *label, uint64_t v, const char *unit)
{
	if (v >= 1000000000ull)
		printf("%-11s %llu (%.2f G%s)\n", label, (unsigned long long)v, (double)v / 1e9, unit);
	else if (v >= 1000000ull)
		printf("%-11s %llu (%.2f M%s)\n", label, (unsigned long long)v, (double)v / 1e6, unit);
	else
		printf("%-11s %llu\n", label, (unsigned long long)v);
}

static void print_text(const struct info_opts *o, const struct cli_graph *cg,
		       const struct graph_stats *s)
{
	const struct ert_graph *g = cg->graph;

	printf("model       %s\n", o->model);
	if (cg->is_ert)
		printf("format      .ert version %u\n", cg->format_version);
	else
		printf("format      ONNX (ir_version %lld), imported and optimised\n",
		       (long long)g->ir_version);
	printf("opset       %lld\n", (long long)g->opset);
	if (g->producer && *g->producer)
		printf("producer    %s\n", g->producer);
	print_io_text("inputs", g, g->inputs, g->n_inputs, s);
	print_io_text("outputs", g, g->outputs, g->n_outputs, s);
	printf("ops         %u nodes\n", g->n_nodes);
	for (int op = 0; op < ERT_OP_COUNT; op++)
		if (s->op_count[op])
			printf("  %-24s %u\n", ert_op_name((enum ert_op)op), s->op_count[op]);
	print_count("parameters", s->params, "");
	print_count("MACs", s->macs, "");
	if (s->unknown)
		printf("            (%u nodes with shapes unknown before run not counted)\n",
		       s->unknown);
}

static void print_json(const struct info_opts *o, const struct cli_graph *cg,
		       const struct graph_stats *s)
{
	const struct ert_graph *g = cg->graph;
	bool first = true;

	printf("{\n  \"model\": ");
	cli_json_string(stdout, o->model);
	printf(",\n  \"format\": \"%s\",\n", cg->is_ert ? "ert" : "onnx");
	if (cg->is_ert)
		printf("  \"format_version\": %u,\n", cg->format_version);
	printf("  \"opset\": %lld,\n", (long long)g->opset);
	print_io_json("inputs", g, g->inputs, g->n_inputs, s);
	print_io_json("outputs", g, g->outputs, g->n_outputs, s);
	printf("  \"nodes\": %u,\n  \"ops\": {", g->n_nodes);
	for (int op = 0; op < ERT_OP_COUNT; op++) {
		if (!s->op_count[op])
			continue;
		printf("%s\"%s\": %u", first ? "" : ", ", ert_op_name((enum ert_op)op),
		       s->op_count[op]);
		first = false;
	}
	printf("},\n  \"parameters\": %llu,\n  \"macs\": %llu,\n  \"macs_complete\": %s\n}\n",
	       (unsigned long long)s->params, (unsigned long long)s->macs,
	       s->unknown ? "false" : "true");
}

int ert_cmd_info(int argc, char **argv)
{
	struct info_opts o = { 0 };
	struct cli_graph cg;
	struct graph_stats s;
	int ret;

	ert_config_init(&o.cfg);
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (o.cpu)
		return cli_print_cpu("info", stdout) ? 0 : 1;
	if (o.placement)
		return info_placement(&o);
	if (!cli_graph_load("info", o.model, true, &cg))
		return 1;
	ret = 1;
	if (!graph_stats_compute(cg.graph, &s)) {
		cli_error("info", "out of memory");
		goto cleanup;
	}
	if (o.json)
		print_json(&o, &cg, &s);
	else
		print_text(&o, &cg, &s);
	graph_stats_free(&s);
	ret = 0;
cleanup:
	cli_graph_free(&cg);
	return ret;
}
