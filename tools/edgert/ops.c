/* SPDX-License-Identifier: MIT */
/*
 * edgert ops: the ONNX ops edgert reads, with the opset range the importer
 * accepts for each (ert-ops-opset.def) and the backends that have a kernel
 * for it. Needs no model and no device: each backend's column is its static
 * claim (the CPU's kernel table, OpenCL's and Vulkan's op tables over
 * gpu-common's, the NPU's lowerings); whether a given node runs there is
 * decided when a model is planned (supports_op: dtypes, attributes, limits),
 * see docs/cli.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "cpu/cpu-impl.h"
#include "npu/npu-impl.h"
#include "opencl/ocl-impl.h"
#include "vulkan/vk-impl.h"

struct ops_opts {
	bool json;
	const char *backend; /* only ops this backend claims; NULL: all */
};

static const char usage[] =
	"USAGE: edgert ops [--json] [--backend NAME]\n"
	"\n"
	"List every ONNX op edgert reads: its domain, the opsets the importer\n"
	"accepts it in (from the op's introduction to the newest opset edgert\n"
	"knows, or to its deprecation), and the backends that have a kernel for\n"
	"it (cpu, opencl, vulkan, npu). A backend's claim is per op type: when a\n"
	"model is planned, each node still goes where its dtypes and attributes\n"
	"are supported (the NPU runs int8 only; OpenCL and Vulkan need a device\n"
	"at run time).\n"
	"\n"
	"OPTIONS:\n"
	"      --json            one JSON object: opset_max and an ops array\n"
	"  -b, --backend NAME    only the ops NAME (cpu, opencl, vulkan,\n"
	"                        npu) claims\n"
	"  -h, --help            show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert ops                      # the table\n"
	"  edgert ops --backend npu        # what the NPU can take\n"
	"  edgert ops --json | jq '.ops[] | select(.op == \"DFT\")'\n";

static const char *const backend_names[] = { "cpu", "opencl", "vulkan", "npu" };
#define N_BACKENDS (sizeof(backend_names) / sizeof(backend_names[0]))

static bool claims(size_t b, enum ert_op op)
{
	switch (b) {
	case 0: return ert_cpu_op_find(op) != NULL;
	case 1: return ert_ocl_claims_op(op);
	case 2: return ert_vk_claims_op(op);
	default: return ert_npu_claims_op(op);
	}
}

static int cmp_op(const void *a, const void *b)
{
	return strcmp(ert_op_name(*(const enum ert_op *)a), ert_op_name(*(const enum ert_op *)b));
}

static const char *domain_of(const struct ert_op_opset *r)
{
	return r->domain[0] ? r->domain : "ai.onnx";
}

static void print_row(const struct ops_opts *o, enum ert_op op, bool first)
{
	const struct ert_op_opset *r = ert_op_opset(op);
	char range[32], list[64] = "";
	size_t len = 0;

	snprintf(range, sizeof(range), "%lld-%lld", (long long)r->since, (long long)r->until);
	if (o->json) {
		printf("%s\n    {\"op\": ", first ? "" : ",");
		cli_json_string(stdout, ert_op_name(op));
		printf(", \"domain\": ");
		cli_json_string(stdout, domain_of(r));
		printf(", \"since\": %lld, \"until\": %lld, \"backends\": [", (long long)r->since,
		       (long long)r->until);
		for (size_t b = 0, n = 0; b < N_BACKENDS; b++)
			if (claims(b, op))
				printf("%s\"%s\"", n++ ? ", " : "", backend_names[b]);
		printf("]}");
		return;
	}
	for (size_t b = 0; b < N_BACKENDS; b++)
		if (claims(b, op))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", len ? " " : "",
						backend_names[b]);
	printf("%-26s %-24s %-8s %s\n", ert_op_name(op), domain_of(r), range, list);
}

int ert_cmd_ops(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "backend", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ops_opts o = { 0 };
	enum ert_op list[ERT_OP_COUNT];
	size_t n = 0, want = N_BACKENDS, counts[N_BACKENDS] = { 0 };
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = true;
			break;
		case 'b':
			o.backend = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_getopt_error("ops", argv, c);
		}
	}
	if (optind < argc)
		return cli_error("ops", "unexpected argument '%s' (see 'edgert ops --help')",
				 argv[optind]);
	if (o.backend) {
		for (want = 0; want < N_BACKENDS; want++)
			if (strcmp(o.backend, backend_names[want]) == 0)
				break;
		if (want == N_BACKENDS)
			return cli_error("ops",
					 "--backend must be cpu, opencl, vulkan or npu, got '%s'",
					 o.backend);
	}
	/* the ONNX ops: those with an opset range (edgert's own have none) */
	for (int op = 0; op < ERT_OP_COUNT; op++)
		if (ert_op_opset((enum ert_op)op) && ert_op_infer((enum ert_op)op) &&
		    (want == N_BACKENDS || claims(want, (enum ert_op)op)))
			list[n++] = (enum ert_op)op;
	qsort(list, n, sizeof(list[0]), cmp_op);
	for (size_t i = 0; i < n; i++)
		for (size_t b = 0; b < N_BACKENDS; b++)
			counts[b] += claims(b, list[i]);
	if (o.json) {
		printf("{\"opset_max\": %d, \"ops\": [", ERT_ONNX_OPSET_MAX);
	} else {
		printf("%-26s %-24s %-8s %s\n", "OP", "DOMAIN", "OPSETS", "BACKENDS");
	}
	for (size_t i = 0; i < n; i++)
		print_row(&o, list[i], i == 0);
	if (o.json) {
		printf("\n  ], \"count\": %zu, \"per_backend\": {", n);
		for (size_t b = 0; b < N_BACKENDS; b++)
			printf("%s\"%s\": %zu", b ? ", " : "", backend_names[b], counts[b]);
		printf("}}\n");
	} else {
		printf("%zu ops (cpu %zu, opencl %zu, vulkan %zu, npu %zu); "
		       "opsets of ai.onnx up to %d\n",
		       n, counts[0], counts[1], counts[2], counts[3], ERT_ONNX_OPSET_MAX);
	}
	return 0;
}
