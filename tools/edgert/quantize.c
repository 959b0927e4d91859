/* SPDX-License-Identifier: MIT */
/* edgert quantize: post-training int8 quantisation (calibrate, rewrite to QDQ, verify). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "format/ert-format.h"
#include "opt/passes.h"
#include "quantize.h"
#include "session/session-impl.h"

static const char usage[] =
	"USAGE: edgert quantize MODEL -o OUT.ert (--calib DIR | --calib-random N)\n"
	"                       [--method minmax|kl|ema] [--seed S] [--threads N]\n"
	"                       [--keep-float NAME[,NAME...]] [--keep-first] [--keep-last]\n"
	"                       [--verify N [--min-cosine C]]\n"
	"\n"
	"Post-training int8 quantisation of a float model (.ert, or .onnx converted\n"
	"on the fly). The float model runs on the calibration inputs to find the\n"
	"range of every activation; the output is an .ert model in QDQ form, fused\n"
	"into int8 ops by the optimiser, with the same float inputs and outputs:\n"
	"symmetric per-channel int8 weights, asymmetric per-tensor int8\n"
	"activations, int32 biases. Conv, Gemm, MatMul with a constant weight,\n"
	"Add, Mul, AveragePool, GlobalAveragePool and MaxPool are quantised (pools,\n"
	"Reshape and Flatten keep their input's scale); other ops stay float.\n"
	"Then the per-layer cosine similarity of float and int8 activations is\n"
	"printed, averaged over the calibration inputs (or the --verify inputs).\n"
	"\n"
	"OPTIONS:\n"
	"  -o, --output FILE       .ert file to write (required)\n"
	"      --calib DIR         calibration samples: one .npy file per sample for a\n"
	"                          one-input model, else DIR/<sample>/<input>.npy\n"
	"      --calib-random N    N seeded random samples, 1..100000 (as 'edgert run'\n"
	"                          makes them: floats in [0,1))\n"
	"  -m, --method M          activation ranges: minmax (default, global min/max),\n"
	"                          kl (entropy calibration, 2048-bin histogram of |x|),\n"
	"                          ema (moving average of each sample's min/max,\n"
	"                          newest sample weighted 0.1)\n"
	"  -s, --seed S            seed of the random samples (default 0); sample k\n"
	"                          uses seed S+k\n"
	"  -t, --threads N         worker threads, 1..32 (default: one per CPU)\n"
	"      --keep-float NAMES  leave these nodes (comma list, repeatable) in float\n"
	"      --keep-first        leave the first quantisable node in float\n"
	"      --keep-last         leave the last quantisable node in float\n"
	"      --verify N          compare float and int8 outputs on N random inputs,\n"
	"                          1..100000 (seeds S+2^32+k, none shared with\n"
	"                          calibration); prints min and mean output cosine\n"
	"      --min-cosine C      with --verify: exit 1 when any input's output\n"
	"                          cosine is below C (-1..1); default: report only\n"
	"  -h, --help              show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert quantize mnv2.ert -o mnv2-int8.ert --calib-random 16\n"
	"  edgert quantize model.onnx -o model-int8.ert --calib images/ --method kl\n"
	"  edgert quantize r50.ert -o r50-int8.ert --calib-random 8 --keep-first \\\n"
	"         --verify 100 --min-cosine 0.99\n";

/* Verification inputs use seeds no calibration sample can have. */
#define VERIFY_SEED_OFFSET (UINT64_C(1) << 32)

struct quantize_opts {
	const char *model;
	const char *output;
	const char *calib_dir;
	uint32_t calib_random;
	uint64_t seed;
	struct q_choice choice;
	char **keep;          /* --keep-float names (split copies) */
	uint32_t n_keep;
	uint32_t verify;
	double min_cosine;
	bool has_min_cosine;
	ert_config cfg;
};

enum {
	OPT_CALIB = 256,
	OPT_CALIB_RANDOM,
	OPT_KEEP_FLOAT,
	OPT_KEEP_FIRST,
	OPT_KEEP_LAST,
	OPT_VERIFY,
	OPT_MIN_COSINE,
};

static bool add_keep(struct quantize_opts *o, const char *list)
{
	const char *p = list;

	if (!*list)
		return cli_error("quantize", "--keep-float needs node names"), false;
	while (*p) {
		size_t len = strcspn(p, ",");
		char **n;

		if (len) {
			n = realloc(o->keep, (o->n_keep + 1) * sizeof(*n));
			if (!n)
				return cli_error("quantize", "out of memory"), false;
			o->keep = n;
			o->keep[o->n_keep] = strndup(p, len);
			if (!o->keep[o->n_keep])
				return cli_error("quantize", "out of memory"), false;
			o->n_keep++;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return true;
}

/* A decimal number in [-1, 1]: strtod alone takes hex, "inf", "nan" and spaces. */
static bool parse_cosine(const char *arg, double *out)
{
	char *end;
	double v;

	if (!*arg || strspn(arg, "+-0123456789.eE") != strlen(arg))
		goto bad;
	errno = 0;
	v = strtod(arg, &end);
	if (errno || *end || !(v >= -1.0 && v <= 1.0))
		goto bad;
	*out = v;
	return true;
bad:
	cli_error("quantize", "--min-cosine must be a number in -1..1, got '%s'", arg);
	return false;
}

static int parse_args(int argc, char **argv, struct quantize_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "calib", required_argument, NULL, OPT_CALIB },
		{ "calib-random", required_argument, NULL, OPT_CALIB_RANDOM },
		{ "method", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "keep-float", required_argument, NULL, OPT_KEEP_FLOAT },
		{ "keep-first", no_argument, NULL, OPT_KEEP_FIRST },
		{ "keep-last", no_argument, NULL, OPT_KEEP_LAST },
		{ "verify", required_argument, NULL, OPT_VERIFY },
		{ "min-cosine", required_argument, NULL, OPT_MIN_COSINE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:m:s:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case OPT_CALIB: o->calib_dir = optarg; break;
		case OPT_CALIB_RANDOM:
			if (!cli_parse_int("quantize", "--calib-random", optarg, 1, 100000, &v))
				return 1;
			o->calib_random = (uint32_t)v;
			break;
		case 'm':
			if (strcmp(optarg, "minmax") == 0)
				o->choice.method = Q_METHOD_MINMAX;
			else if (strcmp(optarg, "kl") == 0)
				o->choice.method = Q_METHOD_KL;
			else if (strcmp(optarg, "ema") == 0)
				o->choice.method = Q_METHOD_EMA;
			else
				return cli_error("quantize",
						 "--method must be minmax, kl or ema, got '%s'",
						 optarg);
			break;
		case 's':
			if (!cli_parse_u64("quantize", "--seed", optarg, &o->seed))
				return 1;
			break;
		case 't':
			if (!cli_parse_int("quantize", "--threads", optarg, 1, ERT_MAX_THREADS, &v))
				return 1;
			o->cfg.num_threads = (uint32_t)v;
			break;
		case OPT_KEEP_FLOAT:
			if (!add_keep(o, optarg))
				return 1;
			break;
		case OPT_KEEP_FIRST: o->choice.keep_first = true; break;
		case OPT_KEEP_LAST: o->choice.keep_last = true; break;
		case OPT_VERIFY:
			if (!cli_parse_int("quantize", "--verify", optarg, 1, 100000, &v))
				return 1;
			o->verify = (uint32_t)v;
			break;
		case OPT_MIN_COSINE:
			if (!parse_cosine(optarg, &o->min_cosine))
				return 1;
			o->has_min_cosine = true;
			break;
		case 'h': fputs(usage, stdout); return -1;
		default: return cli_getopt_error("quantize", argv, c);
		}
	}
	if (cli_model_operand("quantize", argc, argv, &o->model))
		return 1;
	if (!o->output)
		return cli_error("quantize", "missing -o OUT.ert");
	if (o->calib_dir && o->calib_random)
		return cli_error("quantize", "--calib and --calib-random exclude each other");
	if (!o->calib_dir && !o->calib_random)
		return cli_error("quantize",
				 "missing calibration data: give --calib DIR or --calib-random N");
	if (o->has_min_cosine && !o->verify)
		return cli_error("quantize", "--min-cosine needs --verify N");
	o->choice.keep_float = (const char *const *)o->keep;
	o->choice.n_keep_float = o->n_keep;
	return 0;
}

bool q_load_float(const char *cmd, const char *path, void **image, size_t *size,
		  ert_model **model_out)
{
	struct cli_graph cg;
	struct ert_err err = { "" };
	char msg[512] = "";
	ert_status st;

	if (!cli_graph_load(cmd, path, true, &cg))
		return false;
	st = ert_graph_optimize(cg.graph, &err);
	/* activations an int8 op cannot clamp to become table lookups of their own */
	if (st == ERT_OK)
		st = ert_opt_unfuse_activations(cg.graph, &err);
	if (st == ERT_OK)
		st = ert_format_write_memory(cg.graph, &(struct ert_write_options){ 0 }, image, size,
					     &err);
	cli_graph_free(&cg);
	if (st != ERT_OK)
		return cli_error(cmd, "failed to prepare '%s': %s", path,
				 err.msg[0] ? err.msg : ert_status_string(st)),
		       false;
	st = ert_model_load_memory(*image, *size, 0, model_out, msg, sizeof(msg));
	if (st != ERT_OK)
		return cli_error(cmd, "failed to load '%s': %s", path,
				 msg[0] ? msg : ert_status_string(st)),
		       false;
	return true;
}

static const char *method_name(enum q_method m)
{
	return m == Q_METHOD_KL ? "kl" : m == Q_METHOD_EMA ? "ema" : "minmax";
}

static int name_width(const char *const *names, uint32_t n, int min, int max)
{
	int w = min;

	for (uint32_t i = 0; i < n; i++) {
		int len = (int)strlen(names[i]);

		w = len > w ? len : w;
	}
	return w > max ? max : w;
}

static void print_table(const struct ert_graph *fg, const struct q_result *r,
			const struct q_layer_cos *lc, const char *over)
{
	const char **nodes = malloc((r->n_acts + 1) * sizeof(*nodes));
	const char **tensors = malloc((r->n_acts + 1) * sizeof(*tensors));
	int wn, wt;

	if (!nodes || !tensors) {
		free(nodes);
		free(tensors);
		return;
	}
	for (uint32_t k = 0; k < r->n_acts; k++) {
		nodes[k] = r->acts[k].node[0] ? r->acts[k].node : "-";
		tensors[k] = fg->tensors[r->acts[k].tensor].name;
	}
	wn = name_width(nodes, r->n_acts, 4, 32);
	wt = name_width(tensors, r->n_acts, 6, 32);
	printf("per-layer cosine, float vs int8, mean over %s:\n", over);
	printf("  %-*s %-18s %-*s %12s %5s %9s\n", wn, "node", "op", wt, "tensor", "scale", "zp",
	       "cosine");
	for (uint32_t k = 0; k < r->n_acts; k++) {
		printf("  %-*s %-18s %-*s %12.6g %5d ", wn, nodes[k], r->acts[k].op, wt, tensors[k],
		       (double)r->acts[k].p.scale, r->acts[k].p.zp);
		if (lc->act_n[k])
			printf("%9.6f\n", lc->act_sum[k] / lc->act_n[k]);
		else
			printf("%9s\n", "-");
	}
	printf("output cosine, over %s:\n", over);
	for (uint32_t i = 0; i < lc->n_outputs; i++)
		printf("  %-*s mean %.6f  min %.6f\n", wt, fg->tensors[fg->outputs[i]].name,
		       lc->inputs ? lc->out_sum[i] / lc->inputs : 1.0, lc->out_min[i]);
	free(nodes);
	free(tensors);
}

/* Mean over inputs of the output cosine (outputs averaged). */
static double mean_output(const struct q_layer_cos *lc)
{
	double s = 0.0;

	for (uint32_t i = 0; i < lc->n_outputs; i++)
		s += lc->out_sum[i];
	return lc->inputs && lc->n_outputs ? s / lc->inputs / lc->n_outputs : 1.0;
}

static int report(const struct quantize_opts *o, ert_model *fmodel, const struct q_result *r,
		  const struct q_samples *calib)
{
	const struct ert_graph *fg = ert_model_graph(fmodel);
	struct q_layer_cos lc = { 0 };
	ert_model *qmodel = NULL;
	uint64_t vseed = o->seed + VERIFY_SEED_OFFSET;
	char over[128];
	int ret = 1;

	if (!cli_load_model("quantize", o->output, &qmodel))
		return 1;
	if (o->verify) {
		snprintf(over, sizeof(over), "%u verification input%s", o->verify,
			 o->verify == 1 ? "" : "s");
		if (!q_compare(fmodel, qmodel, &o->cfg, r, NULL, o->verify, vseed, "verifying", &lc))
			goto out;
	} else {
		snprintf(over, sizeof(over), "%u calibration input%s", calib->count,
			 calib->count == 1 ? "" : "s");
		if (!q_compare(fmodel, qmodel, &o->cfg, r, calib, calib->count, 0, "comparing",
			       &lc))
			goto out;
	}
	print_table(fg, r, &lc, over);
	ret = 0;
	if (o->verify) {
		printf("verify: %u input%s (seeds %llu+k), output cosine min %.6f mean %.6f\n",
		       lc.inputs, lc.inputs == 1 ? "" : "s", (unsigned long long)vseed, lc.worst,
		       mean_output(&lc));
		if (o->has_min_cosine && !(lc.worst >= o->min_cosine)) {
			fflush(stdout);
			ret = cli_error("quantize",
					"output cosine %.6f on verification input %u (seed %llu) is below --min-cosine %g",
					lc.worst, lc.worst_input,
					(unsigned long long)(vseed + lc.worst_input), o->min_cosine);
		}
	}
out:
	q_layer_cos_free(&lc);
	ert_model_unref(qmodel);
	return ret;
}

int ert_cmd_quantize(int argc, char **argv)
{
	struct quantize_opts o = { 0 };
	struct q_samples samples = { 0 };
	struct q_result res = { 0 };
	struct q_stats *stats = NULL;
	struct ert_err err = { "" };
	struct stat st_in, st_out;
	ert_model *fmodel = NULL;
	void *fimage = NULL;
	size_t fsize = 0;
	double t0 = cli_now_ms();
	const struct ert_graph *fg;
	ert_status st;
	int ret;

	ert_config_init(&o.cfg);
	ret = parse_args(argc, argv, &o);
	if (ret) {
		ret = ret < 0 ? 0 : ret;
		goto cleanup;
	}
	ret = 1;
	if (stat(o.model, &st_in) == 0 && stat(o.output, &st_out) == 0 &&
	    st_in.st_dev == st_out.st_dev && st_in.st_ino == st_out.st_ino) {
		cli_error("quantize", "output '%s' is the input file", o.output);
		goto cleanup;
	}
	if (!q_load_float("quantize", o.model, &fimage, &fsize, &fmodel))
		goto cleanup;
	fg = ert_model_graph(fmodel);
	if (!q_check_keep_float(fg, &o.choice) ||
	    !q_samples_open(&samples, "quantize", o.calib_dir, o.calib_random, o.seed, fmodel))
		goto cleanup;
	stats = calloc(fg->n_tensors ? fg->n_tensors : 1, sizeof(*stats));
	if (!stats) {
		cli_error("quantize", "out of memory");
		goto cleanup;
	}
	if (!q_calibrate(fmodel, &o.cfg, &samples, o.choice.method, stats))
		goto cleanup;
	if (!q_quantize_graph(fg, stats, &o.choice, &res))
		goto cleanup;
	st = ert_format_write_file(res.graph, &(struct ert_write_options){ 0 }, o.output, &err);
	if (st != ERT_OK) {
		cli_error("quantize", "failed to write '%s': %s", o.output,
			  err.msg[0] ? err.msg : ert_status_string(st));
		goto cleanup;
	}
	printf("%s -> %s: %u of %u nodes quantised", o.model, o.output, res.n_quantized,
	       fg->n_nodes);
	if (res.n_float)
		printf(", %u kept in float", res.n_float);
	printf(" (%s, %u %s sample%s), %.0f ms\n", method_name(o.choice.method), samples.count,
	       samples.dir ? "calibration" : "random", samples.count == 1 ? "" : "s",
	       cli_now_ms() - t0);
	if (!res.n_quantized)
		cli_warn("quantize", "no node could be quantised; the model stays float");
	fflush(stdout);
	ret = report(&o, fmodel, &res, &samples);
cleanup:
	q_result_free(&res);
	if (fmodel)
		q_stats_free(stats, ert_model_graph(fmodel)->n_tensors);
	else
		free(stats);
	q_samples_close(&samples);
	ert_model_unref(fmodel);
	free(fimage);
	for (uint32_t k = 0; k < o.n_keep; k++)
		free(o.keep[k]);
	free(o.keep);
	return ret;
}
