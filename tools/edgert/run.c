/* SPDX-License-Identifier: MIT */
/* edgert run: run a model once on given or random inputs; write outputs as .npy. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "inputs.h"
#include "npy.h"
#include "placement.h"

static const char usage[] =
	"USAGE: edgert run MODEL [-i NAME=FILE ...] [-o DIR] [--threads N]\n"
	"                  [--backend LIST] [--seed N] [--explain] [--repeat N]\n"
	"                  [--max-memory BYTES] [--memory LEVEL] [--precision LEVEL]\n"
	"                  [--cache FILE] [--tune MODE] [--fp16-guard on|off]\n"
	"\n"
	"Run a model (.ert or .onnx) once. Inputs come from .npy files or ONNX\n"
	"TensorProto .pb files; inputs not given get seeded random values (floats in\n"
	"[0,1), integers in [0,10)). An input whose file has another shape is resized\n"
	"to it. Outputs are listed, written as DIR/<name>.npy with -o, and for a\n"
	"classifier (one float output of N >= 10 scores, like [N] or [1,N]) the\n"
	"top-5 is printed.\n"
	"\n"
	"OPTIONS:\n"
	"  -i, --input NAME=FILE   input NAME from FILE (.npy or .pb); NAME= may be\n"
	"                          left out for a one-input model or a named .pb\n"
	"  -o, --output-dir DIR    write every output as DIR/<name>.npy\n"
	"  -t, --threads N         worker threads, 1..32 (default: one per CPU)\n"
	"  -b, --backend LIST      backends in order, from cpu, opencl, vulkan, npu,\n"
	"                          auto (default cpu; CPU is always the fallback)\n"
	"  -s, --seed N            seed of the random inputs (default 0)\n"
	"  -e, --explain           print which backend runs each op and the splits\n"
	"                          (runs of ops on one backend) before running\n"
	"  -r, --repeat N          run N times in the same session, 1..100000\n"
	"                          (default 1); a failed run is reported and the\n"
	"                          next one still runs; exit 1 if any failed\n"
	"      --max-memory BYTES  memory budget of the session: input buffers and\n"
	"                          plans (K, M, G, T: powers of 1024; default half\n"
	"                          the physical memory)\n"
	"      --memory LEVEL      ert_config.memory: low, normal (default) or high;\n"
	"                          low keeps no packed weights and, for a model\n"
	"                          converted with --weight-bits, runs Conv/Gemm/\n"
	"                          MatMul on its quantised weights (int8 kernels)\n"
	"      --precision LEVEL   ert_config.precision: low, normal (default) or\n"
	"                          high; low lets the CPU run Conv, Gemm and MatMul\n"
	"                          in bf16 with fp32 sums where it has AVX512_BF16\n"
	"      --fp16-guard on|off ert_config.fp16_guard (default on): with\n"
	"                          --precision low on a GPU storing float16, ops\n"
	"                          whose values reach 2^14 in a CPU calibration run\n"
	"                          stay in float32 (--explain names them)\n"
	"      --cache FILE        ert_config.cache_path: where GPU backends keep\n"
	"                          prepared kernels between runs (OpenCL: program\n"
	"                          binaries and tuned launches, see docs/opencl.md)\n"
	"      --tune MODE         ert_config.tune: autotuning of GPU kernels while\n"
	"                          planning: none, fast (default), normal or wide\n"
	"  -h, --help              show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert run mnv2.ert                         # random input, prints top-5\n"
	"  edgert run mnv2.ert -i input=cat.npy -o out # out/logits.npy\n"
	"  edgert run model.onnx -i test_data_set_0/input_0.pb --threads 1\n"
	"  edgert run mnv2-int8.ert --backend npu --explain\n"
	"  edgert run r50-w8.ert --memory low          # int8 kernels, quantised weights\n";

struct run_input {
	const char *name; /* NULL: the only input, or the .pb's own name */
	const char *file;
};

struct run_opts {
	const char *model;
	struct run_input *inputs;
	uint32_t n_inputs;
	const char *outdir;
	uint64_t seed;
	uint32_t repeat;
	bool explain;
	ert_config cfg;
};

static int parse_args(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output-dir", required_argument, NULL, 'o' },
		CLI_LONGOPT_THREADS,
		CLI_LONGOPT_BACKEND,
		{ "seed", required_argument, NULL, 's' },
		{ "explain", no_argument, NULL, 'e' },
		{ "repeat", required_argument, NULL, 'r' },
		CLI_LONGOPT_MAX_MEMORY,
		CLI_LONGOPT_MEMORY,
		CLI_LONGOPT_PRECISION,
		CLI_LONGOPT_CACHE,
		CLI_LONGOPT_TUNE,
		CLI_LONGOPT_FP16_GUARD,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:o:t:b:s:er:h", longopts, NULL)) != -1) {
		int r = cli_config_option("run", c, optarg, &o->cfg);

		if (r < 0)
			return 1;
		if (r > 0)
			continue;
		switch (c) {
		case 'i': {
			struct run_input *in = &o->inputs[o->n_inputs++];
			char *eq = strchr(optarg, '=');

			in->file = optarg;
			if (eq) {
				*eq = '\0';
				in->name = optarg;
				in->file = eq + 1;
				if (!*in->name || !*in->file)
					return cli_error("run", "-i wants NAME=FILE, got '%s=%s'",
							 in->name, in->file);
			}
			break;
		}
		case 'o': o->outdir = optarg; break;
		case 's':
			if (!cli_parse_u64("run", "--seed", optarg, &o->seed))
				return 1;
			break;
		case 'e': o->explain = true; break;
		case 'r':
			if (!cli_parse_int("run", "--repeat", optarg, 1, 100000, &v))
				return 1;
			o->repeat = (uint32_t)v;
			break;
		case 'h': fputs(usage, stdout); return -1;
		default: return cli_getopt_error("run", argv, c);
		}
	}
	return cli_model_operand("run", argc, argv, &o->model);
}

/* Resolve which model input an -i names; -1 after printing an error. */
static int32_t input_index(ert_session *sess, const struct run_input *in,
			   const struct cli_tensor *t)
{
	const char *name = in->name ? in->name : t->name[0] ? t->name : NULL;
	uint32_t n = ert_session_input_count(sess);

	if (!name) {
		if (n == 1)
			return 0;
		cli_error("run", "-i %s: the model has %u inputs, say which with NAME=FILE", in->file,
			  n);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(ert_tensor_name(ert_session_get_input(sess, i)), name) == 0)
			return (int32_t)i;
	if (!in->name && n == 1)
		return 0; /* a .pb named differently still fits the only input */
	char names[256] = "";
	size_t len = 0;

	for (uint32_t i = 0; i < n && len < sizeof(names); i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s'%s'", i ? ", " : "",
					ert_tensor_name(ert_session_get_input(sess, i)));
	cli_error("run", "the model has no input '%s' (inputs: %s)", name, names);
	return -1;
}

static bool feed_inputs(const struct run_opts *o, ert_session *sess)
{
	uint32_t n = ert_session_input_count(sess);
	bool *given = calloc(n ? n : 1, sizeof(bool));
	struct cli_rng rng;
	bool ok = false;

	if (!given)
		return cli_error("run", "out of memory"), false;
	for (uint32_t k = 0; k < o->n_inputs; k++) {
		struct cli_tensor t;
		int32_t idx;
		bool set;

		if (!cli_tensor_read("run", o->inputs[k].file, &t))
			goto out;
		idx = input_index(sess, &o->inputs[k], &t);
		if (idx >= 0 && given[idx]) {
			cli_error("run", "input '%s' is given twice",
				  ert_tensor_name(ert_session_get_input(sess, (uint32_t)idx)));
			idx = -1;
		}
		set = idx >= 0 && cli_input_set("run", sess, (uint32_t)idx, &t, o->inputs[k].file);
		cli_tensor_free(&t);
		if (!set)
			goto out;
		given[idx] = true;
	}
	cli_rng_seed(&rng, o->seed);
	for (uint32_t i = 0; i < n; i++)
		if (!given[i] && !cli_input_random("run", sess, i, &rng))
			goto out;
	ok = true;
out:
	free(given);
	return ok;
}

static bool write_outputs(const char *dir, ert_session *sess)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return cli_error("run", "cannot create directory '%s': %s", dir, strerror(errno)),
		       false;
	for (uint32_t i = 0; i < ert_session_output_count(sess); i++) {
		const ert_tensor *t = ert_session_get_output(sess, i);
		int64_t dims[ERT_MAX_RANK];
		uint32_t rank = ert_tensor_rank(t);
		char fname[256], path[4096], err[512];

		if (ert_tensor_kind(t) != ERT_VALUE_TENSOR) {
			cli_warn("run", "output '%s' is a sequence or optional of %lld tensors, "
				 "which one .npy cannot hold; not written", ert_tensor_name(t),
				 (long long)ert_tensor_item_count(t));
			continue;
		}
		if (!npy_descr(ert_tensor_dtype(t))) {
			cli_warn("run", "output '%s' is %s, which .npy cannot hold; not written",
				 ert_tensor_name(t), ert_dtype_name(ert_tensor_dtype(t)));
			continue;
		}
		for (uint32_t d = 0; d < rank && d < ERT_MAX_RANK; d++)
			dims[d] = ert_tensor_dim(t, d);
		cli_file_name(ert_tensor_name(t), "output", fname, sizeof(fname));
		snprintf(path, sizeof(path), "%s/%s.npy", dir, fname);
		if (!npy_write_file(path, ert_tensor_dtype(t), (int32_t)rank, dims, ert_tensor_data(t),
				    ert_tensor_byte_size(t), err, sizeof(err)))
			return cli_error("run", "%s", err), false;
		printf("wrote %s\n", path);
	}
	return true;
}

/* Top-5 of a classifier: one float32 output of N >= 10 scores, other dims 1. */
static void print_top5(ert_session *sess)
{
	const ert_tensor *t;
	const float *x;
	size_t n;
	size_t top[5];
	size_t k = 0;

	if (ert_session_output_count(sess) != 1)
		return;
	t = ert_session_get_output(sess, 0);
	n = ert_tensor_element_count(t);
	if (ert_tensor_dtype(t) != ERT_DTYPE_FLOAT32 || n < 10 || ert_tensor_rank(t) < 1)
		return;
	/* [N] or [1,N]; also [1,N,1,1] as Caffe-era exports shape their scores */
	for (uint32_t d = 0; d < ert_tensor_rank(t); d++)
		if (ert_tensor_dim(t, d) != 1 && (size_t)ert_tensor_dim(t, d) != n)
			return;
	x = ert_tensor_data(t);
	/* insertion into a sorted list of 5: N is small and this keeps ties stable */
	for (size_t i = 0; i < n; i++) {
		size_t j;

		if (k == 5 && !(x[i] > x[top[4]]))
			continue;
		j = k < 5 ? k++ : 4;
		while (j > 0 && x[i] > x[top[j - 1]]) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = i;
	}
	printf("top-5 of '%s':\n", ert_tensor_name(t));
	for (size_t i = 0; i < k; i++)
		printf("  %2zu. class %-6zu %.6g\n", i + 1, top[i], (double)x[top[i]]);
}

int ert_cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	ert_model *model = NULL;
	ert_session *sess = NULL;
	double t0;
	int ret;

	ert_config_init(&o.cfg);
	o.inputs = calloc((size_t)argc, sizeof(*o.inputs));
	if (!o.inputs)
		return cli_error("run", "out of memory");
	ret = parse_args(argc, argv, &o);
	if (ret) {
		ret = ret < 0 ? 0 : ret;
		goto cleanup;
	}
	ret = 1;
	if (!cli_session_open("run", o.model, &o.cfg, &model, &sess))
		goto cleanup;
	if (!feed_inputs(&o, sess))
		goto cleanup;
	if (o.explain && !cli_print_placement("run", model, sess, stdout))
		goto cleanup;
	uint32_t failed = 0, runs = o.repeat ? o.repeat : 1;

	for (uint32_t r = 0; r < runs; r++) {
		t0 = cli_now_ms();
		if (ert_session_run(sess) != ERT_OK) {
			cli_error("run", "failed to run '%s'%s: %s", o.model,
				  runs > 1 ? " (this run)" : "", ert_session_error(sess));
			failed++;
			continue;
		}
		printf("ran %s in %.2f ms (%llu bytes copied between backends)\n", o.model,
		       cli_now_ms() - t0, (unsigned long long)ert_session_copied_bytes(sess));
	}
	if (failed == runs)
		goto cleanup;
	for (uint32_t i = 0; i < ert_session_output_count(sess); i++) {
		const ert_tensor *t = ert_session_get_output(sess, i);
		char shape[128];

		cli_tensor_shape(t, shape, sizeof(shape));
		printf("output '%s': %s %s\n", ert_tensor_name(t), ert_dtype_name(ert_tensor_dtype(t)),
		       shape);
	}
	if (o.outdir && !write_outputs(o.outdir, sess))
		goto cleanup;
	print_top5(sess);
	if (failed)
		cli_error("run", "%u of %u runs failed", failed, runs);
	ret = failed ? 1 : 0;
cleanup:
	ert_session_destroy(sess);
	ert_model_unref(model);
	free(o.inputs);
	return ret;
}
