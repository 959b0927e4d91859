/* SPDX-License-Identifier: MIT */
/*
 * edgert diff: a backend against the CPU reference, op by op (MNN's
 * backendTest). The reference session runs first and keeps a copy of every
 * tensor an op writes; the backend's session then reads each op's outputs
 * as soon as the op returns (from device memory where they lie there, see
 * ert_session_op_output) and compares them with that copy. Both sessions
 * get the same inputs; every op of the backend's run is compared, including
 * those it left to the CPU (their inputs may already differ).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "inputs.h"
#include "session/session-impl.h"

static const char usage[] =
	"USAGE: edgert diff MODEL --backend LIST [-i NAME=FILE ...] [--seed N]\n"
	"                   [--rtol R] [--atol A] [--min-cosine C] [--quiet] [--json]\n"
	"                   [--tune MODE]\n"
	"\n"
	"Run a model on the CPU backend (the reference) and on the backends of\n"
	"LIST with the same inputs, and compare every tensor an op writes, op by\n"
	"op in the order the backend runs them: max abs error, relative error\n"
	"(max abs / max |ref|), cosine similarity and NaN count. An output differs\n"
	"when its NaNs are not where the reference has them, when\n"
	"max abs > ATOL + RTOL x max |ref|, or when its cosine is below C while\n"
	"max abs > ATOL. The first op whose output differs is named; exit 1 when\n"
	"one does.\n"
	"\n"
	"OPTIONS:\n"
	"  -b, --backend LIST      backends to test, in order, from cpu, opencl,\n"
	"                          vulkan, npu, auto (required; the CPU runs what\n"
	"                          they do not take)\n"
	"  -i, --input NAME=FILE   input NAME from FILE (.npy or .pb); NAME= may be\n"
	"                          left out for a one-input model or a named .pb\n"
	"  -s, --seed N            seed of the random inputs not given (default 0)\n"
	"  -t, --threads N         CPU threads of both sessions, 1..32 (default: all)\n"
	"      --rtol R            relative tolerance, to max |ref| (default 1e-3)\n"
	"      --atol A            absolute tolerance (default 1e-6)\n"
	"      --min-cosine C      lowest cosine similarity, -1..1 (default 0.999)\n"
	"  -q, --quiet             print only the outputs that differ and the summary\n"
	"      --json              print the comparison as JSON instead\n"
	"      --tune MODE         ert_config.tune of the backend's session: none,\n"
	"                          fast (default), normal or wide\n"
	"  -h, --help              show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert diff resnet50.ert --backend opencl\n"
	"  edgert diff mnv2-int8.ert --backend npu --rtol 0 --atol 0\n"
	"  edgert diff model.onnx --backend opencl -i x=input.npy --json\n";

#define DIFF_MAX_INPUTS 64

struct diff_input {
	const char *name; /* NULL: the only input, or the .pb's own name */
	const char *file;
};

struct diff_opts {
	const char *model;
	struct diff_input inputs[DIFF_MAX_INPUTS];
	uint32_t n_inputs;
	uint64_t seed;
	double rtol, atol, min_cos;
	bool quiet, json, have_backend;
	ert_config cfg;
};

/* A tensor the reference wrote. */
struct ref_tensor {
	struct ert_value v; /* shape and dtype; data: a malloc'd copy */
	bool have;
};

/* One output of one op of the backend's run, compared. */
struct diff_row {
	uint32_t step;
	const struct ert_node *node;
	int32_t tensor;
	const char *backend;
	int64_t numel;
	double max_abs, max_ref, rel, cosine;
	int64_t nan, ref_nan;
	const char *problem; /* NULL, or why the output could not be compared */
	bool differs;
};

struct diff_run {
	const struct diff_opts *o;
	const struct ert_graph *g;
	ert_session *sess;
	struct ref_tensor *ref;  /* one per graph tensor */
	struct diff_row *rows;
	uint32_t n_rows, cap_rows;
	void *scratch;
	size_t scratch_cap;
	bool failed;             /* out of memory or a read failed: stop the run */
	char error[512];
};

static int fail_run(struct diff_run *d, const char *what)
{
	snprintf(d->error, sizeof(d->error), "%s", what);
	d->failed = true;
	return 1;
}

/* The reference's after_op: keep a copy of every output. */
static int ref_after_op(const ert_op_info *op, void *user)
{
	struct diff_run *d = user;
	const struct ert_node *n = ert_session_op_node(d->sess);

	for (uint32_t k = 0; n && k < n->n_outputs; k++) {
		int32_t t = n->outputs[k];
		const struct ert_value *v;
		struct ref_tensor *r;

		if (t < 0 || ert_session_op_output(d->sess, k, &v, NULL, 0) != ERT_OK || !v)
			continue;
		r = &d->ref[t];
		free(r->v.data);
		r->v = *v;
		r->v.data = malloc(v->nbytes ? v->nbytes : 1);
		r->have = r->v.data != NULL;
		if (!r->have)
			return fail_run(d, "out of memory keeping the reference's tensors");
		if (ert_session_op_output(d->sess, k, &v, r->v.data, v->nbytes) != ERT_OK)
			return fail_run(d, ert_session_error(d->sess));
	}
	return 0;
}

static bool same_shape(const struct ert_value *a, const struct ert_value *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (int32_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

static void compare(const struct diff_opts *o, const struct ert_value *ref,
		    const struct ert_value *got, struct diff_row *row)
{
	double dot = 0, ng = 0, nr = 0;
	int64_t nan_misplaced = 0;

	for (int64_t i = 0; i < ref->numel; i++) {
		double r = ert_value_get_float(ref, i), g = ert_value_get_float(got, i);
		double e;

		row->ref_nan += isnan(r);
		row->nan += isnan(g);
		if (isnan(r) || isnan(g)) {
			nan_misplaced += isnan(r) != isnan(g);
			continue;
		}
		if (isinf(r) || isinf(g)) {
			if (r != g)
				row->max_abs = INFINITY;
			continue;
		}
		e = fabs(g - r);
		if (e > row->max_abs)
			row->max_abs = e;
		if (fabs(r) > row->max_ref)
			row->max_ref = fabs(r);
		dot += g * r;
		ng += g * g;
		nr += r * r;
	}
	row->rel = row->max_ref > 0 ? row->max_abs / row->max_ref : row->max_abs > 0 ? INFINITY : 0;
	row->cosine = ng == 0 && nr == 0 ? 1 : ng == 0 || nr == 0 ? 0 : dot / sqrt(ng * nr);
	row->differs = nan_misplaced > 0 || !(row->max_abs <= o->atol + o->rtol * row->max_ref) ||
		       (row->cosine < o->min_cos && row->max_abs > o->atol);
}

static struct diff_row *add_row(struct diff_run *d)
{
	if (d->n_rows == d->cap_rows) {
		uint32_t cap = d->cap_rows ? d->cap_rows * 2 : 256;
		struct diff_row *grown = realloc(d->rows, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		d->rows = grown;
		d->cap_rows = cap;
	}
	memset(&d->rows[d->n_rows], 0, sizeof(d->rows[0]));
	return &d->rows[d->n_rows++];
}

/* The backend's after_op: read every output and compare it. */
static int dev_after_op(const ert_op_info *op, void *user)
{
	struct diff_run *d = user;
	const struct ert_node *n = ert_session_op_node(d->sess);

	for (uint32_t k = 0; n && k < n->n_outputs; k++) {
		int32_t t = n->outputs[k];
		const struct ert_value *v;
		struct ert_value got;
		struct diff_row *row;

		if (t < 0 || ert_session_op_output(d->sess, k, &v, NULL, 0) != ERT_OK || !v)
			continue;
		row = add_row(d);
		if (!row)
			return fail_run(d, "out of memory");
		row->step = op->index;
		row->node = n;
		row->tensor = t;
		row->backend = op->backend;
		row->numel = v->numel;
		if (!d->ref[t].have) {
			row->problem = "not written by a step of the reference";
			continue;
		}
		if (!same_shape(v, &d->ref[t].v)) {
			row->problem = "shape or dtype differs from the reference";
			row->differs = true;
			continue;
		}
		if (d->scratch_cap < v->nbytes) {
			void *p = realloc(d->scratch, v->nbytes);

			if (!p)
				return fail_run(d, "out of memory");
			d->scratch = p;
			d->scratch_cap = v->nbytes;
		}
		if (ert_session_op_output(d->sess, k, &v, d->scratch, v->nbytes) != ERT_OK)
			return fail_run(d, ert_session_error(d->sess));
		got = *v;
		got.data = d->scratch;
		compare(d->o, &d->ref[t].v, &got, row);
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct diff_opts *o)
{
	enum { OPT_RTOL = CLI_OPT_LOCAL, OPT_ATOL, OPT_MIN_COS, OPT_JSON };
	static const struct option longopts[] = {
		CLI_LONGOPT_BACKEND,
		{ "input", required_argument, NULL, 'i' },
		{ "seed", required_argument, NULL, 's' },
		CLI_LONGOPT_THREADS,
		{ "rtol", required_argument, NULL, OPT_RTOL },
		{ "atol", required_argument, NULL, OPT_ATOL },
		{ "min-cosine", required_argument, NULL, OPT_MIN_COS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, OPT_JSON },
		CLI_LONGOPT_TUNE,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:i:s:t:qh", longopts, NULL)) != -1) {
		int r = cli_config_option("diff", c, optarg, &o->cfg);

		if (r < 0)
			return 1;
		if (r > 0) {
			o->have_backend |= c == 'b';
			continue;
		}
		switch (c) {
		case 'i': {
			struct diff_input *in;
			char *eq = strchr(optarg, '=');

			if (o->n_inputs == DIFF_MAX_INPUTS)
				return cli_error("diff", "more than %d -i options", DIFF_MAX_INPUTS);
			in = &o->inputs[o->n_inputs++];
			in->file = optarg;
			if (eq) {
				*eq = '\0';
				in->name = optarg;
				in->file = eq + 1;
				if (!*in->name || !*in->file)
					return cli_error("diff", "-i wants NAME=FILE, got '%s=%s'",
							 in->name, in->file);
			}
			break;
		}
		case 's':
			if (!cli_parse_u64("diff", "--seed", optarg, &o->seed))
				return 1;
			break;
		case OPT_RTOL:
		case OPT_ATOL:
		case OPT_MIN_COS: {
			double x = strtod(optarg, &end);
			double lo = c == OPT_MIN_COS ? -1 : 0, hi = c == OPT_MIN_COS ? 1 : 1e30;

			if (end == optarg || *end || !(x >= lo && x <= hi))
				return cli_error("diff", "--%s must be a number in %g..%g, got '%s'",
						 c == OPT_RTOL ? "rtol" : c == OPT_ATOL ? "atol" : "min-cosine",
						 lo, hi, optarg);
			*(c == OPT_RTOL ? &o->rtol : c == OPT_ATOL ? &o->atol : &o->min_cos) = x;
			break;
		}
		case 'q': o->quiet = true; break;
		case OPT_JSON: o->json = true; break;
		case 'h': fputs(usage, stdout); return -1;
		default: return cli_getopt_error("diff", argv, c);
		}
	}
	if (cli_model_operand("diff", argc, argv, &o->model) != 0)
		return 1;
	if (!o->have_backend)
		return cli_error("diff", "--backend is required (the backends to compare with the CPU)");
	return 0;
}

/* Random inputs from the seed, then the files of -i, on the reference session. */
static bool feed_inputs(const struct diff_opts *o, ert_session *ref)
{
	if (!cli_inputs_random("diff", ref, o->seed))
		return false;
	for (uint32_t i = 0; i < o->n_inputs; i++) {
		const struct diff_input *in = &o->inputs[i];
		struct cli_tensor t;
		const char *name;
		uint32_t n = ert_session_input_count(ref), k = 0;
		bool ok;

		if (!cli_tensor_read("diff", in->file, &t))
			return false;
		name = in->name ? in->name : t.name[0] ? t.name : NULL;
		if (name) {
			for (k = 0; k < n && strcmp(ert_tensor_name(ert_session_get_input(ref, k)), name); k++)
				;
		} else if (n != 1) {
			cli_tensor_free(&t);
			return cli_error("diff", "-i %s: the model has %u inputs, say which (NAME=FILE)",
					 in->file, n), false;
		}
		if (k == n) {
			cli_error("diff", "-i %s: the model has no input '%s'", in->file, name);
			cli_tensor_free(&t);
			return false;
		}
		ok = cli_input_set("diff", ref, k, &t, in->file);
		cli_tensor_free(&t);
		if (!ok)
			return false;
	}
	return true;
}

/* The reference's inputs, shapes and bytes, into the backend's session. */
static bool copy_inputs(ert_session *from, ert_session *to)
{
	for (uint32_t k = 0; k < ert_session_input_count(from); k++) {
		const ert_tensor *a = ert_session_get_input(from, k);
		int64_t dims[ERT_MAX_RANK];
		uint32_t rank = ert_tensor_rank(a);

		for (uint32_t i = 0; i < rank && i < ERT_MAX_RANK; i++)
			dims[i] = ert_tensor_dim(a, i);
		if (ert_session_resize_input(to, k, rank, dims) != ERT_OK ||
		    ert_session_set_input(to, k, ert_tensor_dtype(a), ert_tensor_data(a),
					  ert_tensor_byte_size(a)) != ERT_OK)
			return cli_error("diff", "failed to set input '%s': %s", ert_tensor_name(a),
					 ert_session_error(to)), false;
	}
	return true;
}

static void json_number(FILE *f, double x)
{
	if (isfinite(x))
		fprintf(f, "%.9g", x);
	else
		fputs("null", f);
}

static void print_json(const struct diff_run *d, const char *backends, int32_t first,
		       uint32_t n_diff)
{
	const struct diff_opts *o = d->o;

	printf("{\"model\": ");
	cli_json_string(stdout, o->model);
	printf(", \"backend\": ");
	cli_json_string(stdout, backends);
	printf(", \"reference\": \"cpu\", \"rtol\": ");
	json_number(stdout, o->rtol);
	printf(", \"atol\": ");
	json_number(stdout, o->atol);
	printf(", \"min_cosine\": ");
	json_number(stdout, o->min_cos);
	printf(",\n \"outputs\": [");
	for (uint32_t i = 0; i < d->n_rows; i++) {
		const struct diff_row *r = &d->rows[i];

		printf("%s\n  {\"step\": %u, \"op\": \"%s\", \"node\": ", i ? "," : "", r->step,
		       ert_op_name(r->node->op));
		cli_json_string(stdout, r->node->name);
		printf(", \"output\": ");
		cli_json_string(stdout, d->g->tensors[r->tensor].name);
		printf(", \"backend\": ");
		cli_json_string(stdout, r->backend);
		printf(", \"elements\": %lld", (long long)r->numel);
		if (r->problem) {
			printf(", \"problem\": ");
			cli_json_string(stdout, r->problem);
		} else {
			printf(", \"max_abs\": ");
			json_number(stdout, r->max_abs);
			printf(", \"max_ref\": ");
			json_number(stdout, r->max_ref);
			printf(", \"relative\": ");
			json_number(stdout, r->rel);
			printf(", \"cosine\": ");
			json_number(stdout, r->cosine);
			printf(", \"nan\": %lld, \"ref_nan\": %lld", (long long)r->nan,
			       (long long)r->ref_nan);
		}
		printf(", \"differs\": %s}", r->differs ? "true" : "false");
	}
	printf("\n ],\n \"compared\": %u, \"differing\": %u, \"first_difference\": ", d->n_rows,
	       n_diff);
	if (first < 0) {
		printf("null}\n");
		return;
	}
	printf("{\"step\": %u, \"op\": \"%s\", \"node\": ", d->rows[first].step,
	       ert_op_name(d->rows[first].node->op));
	cli_json_string(stdout, d->rows[first].node->name);
	printf(", \"output\": ");
	cli_json_string(stdout, d->g->tensors[d->rows[first].tensor].name);
	printf("}}\n");
}

static void print_row(const struct diff_run *d, const struct diff_row *r)
{
	printf("%5u  %-20.20s %-24.24s %-22.22s %-7.7s ", r->step, ert_op_name(r->node->op),
	       r->node->name, d->g->tensors[r->tensor].name, r->backend);
	if (r->problem)
		printf("%s%s\n", r->problem, r->differs ? "  DIFF" : "");
	else
		printf("%9.3g %9.3g %11.8f %5lld%s\n", r->max_abs, r->rel, r->cosine,
		       (long long)r->nan, r->differs ? "  DIFF" : "");
}

static void print_text(const struct diff_run *d, const char *backends, int32_t first,
		       uint32_t n_diff)
{
	const struct diff_opts *o = d->o;
	int32_t worst = -1;

	printf("diff: %s on %s against the CPU (rtol %g, atol %g, min cosine %g)\n", o->model,
	       backends, o->rtol, o->atol, o->min_cos);
	printf("%5s  %-20s %-24s %-22s %-7s %9s %9s %11s %5s\n", "step", "op", "node", "output",
	       "backend", "max abs", "relative", "cosine", "NaN");
	for (uint32_t i = 0; i < d->n_rows; i++) {
		const struct diff_row *r = &d->rows[i];

		if (!r->problem && (worst < 0 || r->rel > d->rows[worst].rel))
			worst = (int32_t)i;
		if (!o->quiet || r->differs)
			print_row(d, r);
	}
	if (first < 0) {
		printf("no op differs: %u outputs compared", d->n_rows);
		if (worst >= 0)
			printf("; largest relative error %.3g (%s '%s')", d->rows[worst].rel,
			       ert_op_name(d->rows[worst].node->op), d->rows[worst].node->name);
		printf("\n");
		return;
	}
	const struct diff_row *r = &d->rows[first];

	printf("first difference: step %u, %s '%s' on %s, output '%s': ", r->step,
	       ert_op_name(r->node->op), r->node->name, r->backend, d->g->tensors[r->tensor].name);
	if (r->problem)
		printf("%s\n", r->problem);
	else
		printf("max abs %.3g, relative %.3g, cosine %.8f, NaN %lld (reference %lld)\n",
		       r->max_abs, r->rel, r->cosine, (long long)r->nan, (long long)r->ref_nan);
	printf("%u of %u outputs differ\n", n_diff, d->n_rows);
}

static void backend_names(const ert_config *cfg, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (uint32_t b = 0; b < cfg->num_backends && len + 1 < size; b++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", b ? "," : "",
					ert_backend_type_name(cfg->backends[b]));
}

/* Did an op run on a backend of the list other than the CPU (or is the CPU listed)? */
static bool device_ran(const struct diff_run *d, const ert_config *cfg)
{
	for (uint32_t b = 0; b < cfg->num_backends; b++)
		if (cfg->backends[b] == ERT_BACKEND_CPU)
			return true;
	for (uint32_t i = 0; i < d->n_rows; i++)
		if (strcmp(d->rows[i].backend, "cpu") != 0)
			return true;
	return false;
}

int ert_cmd_diff(int argc, char **argv)
{
	struct diff_opts o = { .rtol = 1e-3, .atol = 1e-6, .min_cos = 0.999 };
	struct diff_run d = { .o = &o };
	ert_session *ref = NULL, *dev = NULL;
	ert_model *model = NULL;
	ert_config rc, dc;
	char backends[64];
	int32_t first = -1;
	uint32_t n_diff = 0;
	int ret = 1, r;

	ert_config_init(&o.cfg);
	r = parse_args(argc, argv, &o);
	if (r)
		return r < 0 ? 0 : r;
	backend_names(&o.cfg, backends, sizeof(backends));
	if (!cli_load_model("diff", o.model, &model))
		return 1;
	ert_config_init(&rc);
	rc.num_threads = o.cfg.num_threads;
	rc.after_op = ref_after_op;
	rc.callback_user = &d;
	dc = o.cfg;
	dc.after_op = dev_after_op;
	dc.callback_user = &d;
	if (ert_session_create(model, &dc, &dev) != ERT_OK) {
		cli_error("diff", "failed to create a session on %s: %s", backends, ert_last_error());
		goto out;
	}
	/*
	 * The reference runs the device session's graph (a fused model's
	 * inverted-residual blocks are their Convs there: ert_model_unfused_irblock()),
	 * so that every tensor the device writes has its reference; the model
	 * keeps that graph's model while it lives.
	 */
	d.g = ert_model_graph(dev->model);
	d.ref = calloc(d.g->n_tensors ? d.g->n_tensors : 1, sizeof(*d.ref));
	if (!d.ref) {
		cli_error("diff", "out of memory");
		goto out;
	}
	if (ert_session_create(dev->model, &rc, &ref) != ERT_OK) {
		cli_error("diff", "failed to create the reference session: %s", ert_last_error());
		goto out;
	}
	if (!feed_inputs(&o, ref) || !copy_inputs(ref, dev))
		goto out;
	d.sess = ref;
	if (ert_session_run(ref) != ERT_OK || d.failed) {
		cli_error("diff", "the reference run failed: %s",
			  d.failed ? d.error : ert_session_error(ref));
		goto out;
	}
	d.sess = dev;
	if (ert_session_run(dev) != ERT_OK || d.failed) {
		cli_error("diff", "the run on %s failed: %s", backends,
			  d.failed ? d.error : ert_session_error(dev));
		goto out;
	}
	if (!device_ran(&d, &o.cfg)) {
		cli_error("diff", "no op ran on %s (is the device present, and does it take any op of the model?)",
			  backends);
		goto out;
	}
	for (uint32_t i = 0; i < d.n_rows; i++) {
		if (!d.rows[i].differs)
			continue;
		if (first < 0)
			first = (int32_t)i;
		n_diff++;
	}
	if (o.json)
		print_json(&d, backends, first, n_diff);
	else
		print_text(&d, backends, first, n_diff);
	ret = first >= 0 ? 1 : 0;
out:
	ert_session_destroy(dev);
	ert_session_destroy(ref);
	if (d.ref)
		for (uint32_t t = 0; t < d.g->n_tensors; t++)
			free(d.ref[t].v.data);
	free(d.ref);
	free(d.rows);
	free(d.scratch);
	ert_model_unref(model);
	return ret;
}
