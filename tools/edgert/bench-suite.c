/* SPDX-License-Identifier: MIT */
/* edgert bench --suite: the machine's ceilings and the zoo models against them, in one run. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-suite.h"
#include "cli.h"
#include "commands.h"
#include "format/ert-format.h"
#include "graph-stats.h"
#include "inputs.h"
#include "quantize.h"
#include "session/session-impl.h"
#include "zoo.h"

static const char usage[] =
	"USAGE: edgert bench --suite [--threads LIST] [--models LIST] [--loops N]\n"
	"                            [--warmup N] [--max-time S] [--calib N]\n"
	"                            [--clock wall|cpu] [--no-int8] [--json]\n"
	"\n"
	"Measure the machine and the runtime in one run, on the CPU backend at the\n"
	"kernel level sessions use (ERT_CPU_ISA lowers it):\n"
	"  1. the fp32 peak of one core and of all cores (one thread on each CPU this\n"
	"     process may run on): independent FMA chains\n"
	"     (AVX-512 zmm at avx512 and up, AVX2 ymm at avx2, SSE mul+add at scalar);\n"
	"  2. memory bandwidth: a read + write stream over buffers of 8x the L3;\n"
	"  3. the zoo models, built with seeded random weights into a temporary\n"
	"     directory that is removed afterwards, at each thread count: min and\n"
	"     median ms, effective GFLOP/s (2 x MACs / min time, MACs as 'edgert\n"
	"     info' counts them), that as % of the peak (1 thread: the 1-core peak;\n"
	"     N threads: the all-core peak x N / CPUs) and the speed-up over\n"
	"     1 thread;\n"
	"  4. resnet50 per conv layer class (first conv, 1x1, 3x3, depthwise, other\n"
	"     ops), each op timed through the session's op callbacks;\n"
	"  5. int8: resnet50 quantised as 'edgert quantize --method kl' does it,\n"
	"     against fp32 resnet50, both at 1 thread.\n"
	"Next to each figure issue 8 sets a target for: 'met', or by how much it is\n"
	"missed. Targets are goals, not checks: the exit status is 0 when every\n"
	"measurement ran, 1 on a bad option or a failure.\n"
	"\n"
	"OPTIONS:\n"
	"  -t, --threads LIST  thread counts, each 1..32, comma-separated, at most 8\n"
	"                      (default \"1,N\", N the CPUs this process may run on:\n"
	"                      the online ones, or fewer under taskset or a cpuset)\n"
	"  -m, --models LIST   zoo models, comma-separated (default\n"
	"                      mobilenet_v2,resnet18,resnet50,vit_s16); the per-class\n"
	"                      table and the int8 comparison need resnet50\n"
	"  -n, --loops N       timed runs per measurement, 1..100000 (default 10)\n"
	"  -w, --warmup N      untimed runs first, 0..10000 (default 2)\n"
	"      --max-time S    a measurement stops its timed runs after S seconds once\n"
	"                      3 have run, and its warm-up after S/4 seconds once one\n"
	"                      has run, 1..3600 (default 5)\n"
	"      --calib N       int8 calibration samples (seeded random), 1..1000\n"
	"                      (default 2)\n"
	"      --clock C       wall (default): every time is wall-clock time; cpu: the\n"
	"                      1-core peak and bandwidth in the thread's CPU time and\n"
	"                      every 1-thread run in the process's CPU time, so that\n"
	"                      time other work takes the CPU away does not count (for\n"
	"                      a shared machine; several threads stay wall-clock)\n"
	"      --no-int8       skip the int8 comparison\n"
	"  -j, --json          one JSON object instead of the tables\n"
	"  -h, --help          show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert bench --suite\n"
	"  make bench\n"
	"  edgert bench --suite --models mobilenet_v2 --loops 1 --no-int8\n"
	"  edgert bench --suite --threads 1,2,4 --json > bench.json\n";

static const char *const default_models[] = { "mobilenet_v2", "resnet18", "resnet50", "vit_s16" };

/* The model the per-class table and the int8 comparison use. */
#define CLASS_MODEL "resnet50"
/* A measurement's time limit never cuts it below this many timed runs. */
#define MIN_RUNS 3

const char *const suite_class_names[SC_COUNT] = {
	[SC_FIRST] = "first conv",  [SC_1X1] = "1x1",
	[SC_3X3] = "3x3",           [SC_DEPTHWISE] = "depthwise",
	[SC_OTHER_CONV] = "other conv", [SC_OTHER_OPS] = "other ops",
};

enum {
	OPT_SUITE = 256,
	OPT_MAX_TIME,
	OPT_CALIB,
	OPT_NO_INT8,
	OPT_CLOCK,
};

/* Split @list at commas into @out (at most @max items); empty items are an error. */
static bool split_list(const char *opt, const char *list, char *buf, size_t size,
		       const char **out, uint32_t max, uint32_t *n)
{
	char *p, *save = NULL;

	*n = 0;
	if (strlen(list) >= size)
		return cli_error("bench", "%s is too long", opt), false;
	strcpy(buf, list);
	if (!*buf || buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
		return cli_error("bench", "%s has an empty item in '%s'", opt, list), false;
	for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (*n == max)
			return cli_error("bench", "%s takes at most %u items, got '%s'", opt, max,
					 list),
			       false;
		out[(*n)++] = p;
	}
	return true;
}

static bool parse_threads(const char *list, struct suite_opts *o)
{
	static char buf[256];
	const char *items[SUITE_MAX_THREADS];
	long long v;
	uint32_t n;

	if (!split_list("--threads", list, buf, sizeof(buf), items, SUITE_MAX_THREADS, &n))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (!cli_parse_int("bench", "--threads", items[i], 1, ERT_MAX_THREADS, &v))
			return false;
		for (uint32_t k = 0; k < i; k++)
			if (o->threads[k] == (uint32_t)v)
				return cli_error("bench", "--threads lists %lld twice", v), false;
		o->threads[i] = (uint32_t)v;
	}
	o->n_threads = n;
	return true;
}

static bool parse_models(const char *list, struct suite_opts *o)
{
	static char buf[1024];
	uint32_t n;

	if (!split_list("--models", list, buf, sizeof(buf), o->models, SUITE_MAX_MODELS, &n))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (!zoo_find(o->models[i]))
			return cli_error("bench",
					 "--models: unknown model '%s' (see 'edgert zoo --list')",
					 o->models[i]),
			       false;
		for (uint32_t k = 0; k < i; k++)
			if (strcmp(o->models[k], o->models[i]) == 0)
				return cli_error("bench", "--models lists '%s' twice",
						 o->models[i]),
				       false;
	}
	o->n_models = n;
	return true;
}

static int parse_args(int argc, char **argv, struct suite_opts *o)
{
	static const struct option longopts[] = {
		{ "suite", no_argument, NULL, OPT_SUITE },
		{ "threads", required_argument, NULL, 't' },
		{ "models", required_argument, NULL, 'm' },
		{ "loops", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "max-time", required_argument, NULL, OPT_MAX_TIME },
		{ "calib", required_argument, NULL, OPT_CALIB },
		{ "no-int8", no_argument, NULL, OPT_NO_INT8 },
		{ "clock", required_argument, NULL, OPT_CLOCK },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":t:m:n:w:jh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SUITE: break;
		case 't':
			if (!parse_threads(optarg, o))
				return 1;
			break;
		case 'm':
			if (!parse_models(optarg, o))
				return 1;
			break;
		case 'n':
			if (!cli_parse_int("bench", "--loops", optarg, 1, 100000, &v))
				return 1;
			o->loops = (uint32_t)v;
			break;
		case 'w':
			if (!cli_parse_int("bench", "--warmup", optarg, 0, 10000, &v))
				return 1;
			o->warmup = (uint32_t)v;
			break;
		case OPT_MAX_TIME:
			if (!cli_parse_int("bench", "--max-time", optarg, 1, 3600, &v))
				return 1;
			o->max_time_s = (uint32_t)v;
			break;
		case OPT_CALIB:
			if (!cli_parse_int("bench", "--calib", optarg, 1, 1000, &v))
				return 1;
			o->calib = (uint32_t)v;
			break;
		case OPT_NO_INT8: o->int8 = false; break;
		case OPT_CLOCK:
			if (strcmp(optarg, "wall") == 0)
				o->cpu_clock = false;
			else if (strcmp(optarg, "cpu") == 0)
				o->cpu_clock = true;
			else
				return cli_error("bench", "--clock must be wall or cpu, got '%s'",
						 optarg);
			break;
		case 'j': o->json = true; break;
		case 'h': fputs(usage, stdout); return -1;
		default: return cli_getopt_error("bench", argv, c);
		}
	}
	if (optind < argc)
		return cli_error("bench", "unexpected argument '%s' (--suite builds its own models)",
				 argv[optind]);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Min and median of @n times (sorted in place). */
static void min_median(double *t, uint32_t n, double *min, double *median)
{
	qsort(t, n, sizeof(*t), cmp_double);
	*min = t[0];
	*median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/*
 * The clock a measurement at @threads threads is timed on: with --clock cpu,
 * one thread's runs in the process's CPU time (a 1-thread session runs every
 * op on the calling thread and starts no workers).
 */
static clockid_t run_clock(const struct suite_opts *o, uint32_t threads)
{
	return o->cpu_clock && threads == 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
}

static double clock_ms(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/*
 * Per-op times by conv layer class, from the op callbacks. Ops are matched
 * to graph nodes by name once (the first run is a warm-up); steps the plan
 * adds that are not graph nodes count as other ops.
 */
struct class_timer {
	const struct ert_graph *g;
	const uint8_t *node_class;  /* per graph node */
	uint8_t *op_class;          /* per op index, 0xff: not seen yet */
	uint32_t cap;
	clockid_t clock;
	double t_start;
	double run_ms[SC_COUNT];    /* the current run */
	bool oom;
};

static int class_before_op(const ert_op_info *op, void *user)
{
	struct class_timer *ct = user;

	/* a subgraph's ops are timed within their If/Loop/Scan */
	if (op->depth)
		return 0;
	ct->t_start = clock_ms(ct->clock);
	return 0;
}

static int class_after_op(const ert_op_info *op, void *user)
{
	struct class_timer *ct = user;
	double dt = clock_ms(ct->clock) - ct->t_start;

	if (op->depth)
		return 0;
	if (op->index >= ct->cap) {
		uint32_t cap = ct->cap ? ct->cap : 64;
		uint8_t *p;

		while (cap <= op->index)
			cap *= 2;
		p = realloc(ct->op_class, cap);
		if (!p) {
			ct->oom = true;
			return 1;
		}
		memset(p + ct->cap, 0xff, cap - ct->cap);
		ct->op_class = p;
		ct->cap = cap;
	}
	if (ct->op_class[op->index] == 0xff) {
		ct->op_class[op->index] = SC_OTHER_OPS;
		for (uint32_t i = 0; i < ct->g->n_nodes; i++)
			if (ct->g->nodes[i].name && strcmp(ct->g->nodes[i].name, op->name) == 0) {
				ct->op_class[op->index] = ct->node_class[i];
				break;
			}
	}
	ct->run_ms[ct->op_class[op->index]] += dt;
	return 0;
}

static enum suite_class conv_class(const struct ert_graph *g, const struct ert_node *n,
				   bool first)
{
	const struct ert_tensor *w;
	int64_t group = ert_attr_int(n, "group", 1);
	bool ones = true;

	if (first)
		return SC_FIRST;
	if (n->n_inputs < 2 || n->inputs[1] < 0 || (uint32_t)n->inputs[1] >= g->n_tensors)
		return SC_OTHER_CONV;
	w = &g->tensors[n->inputs[1]];
	if (w->rank < 3)
		return SC_OTHER_CONV;
	if (group > 1)
		return w->dims[1] == 1 ? SC_DEPTHWISE : SC_OTHER_CONV;
	for (int32_t d = 2; d < w->rank; d++)
		ones = ones && w->dims[d] == 1;
	if (ones)
		return SC_1X1;
	if (w->rank == 4 && w->dims[2] == 3 && w->dims[3] == 3)
		return SC_3X3;
	return SC_OTHER_CONV;
}

/* Class of every node, and each class's layers and MACs into @rows. */
static void classify(const struct ert_graph *g, const struct graph_stats *gs, uint8_t *cls,
		     struct suite_class_row *rows)
{
	bool seen_conv = false;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];
		enum suite_class c = SC_OTHER_OPS;

		if (n->op == ERT_OP_Conv) {
			c = conv_class(g, n, !seen_conv);
			seen_conv = true;
		}
		cls[i] = (uint8_t)c;
		rows[c].layers++;
		rows[c].macs += gs->node_macs[i];
	}
}

static ert_session *open_session(ert_model *model, const char *name, uint32_t threads,
				 ert_before_op_fn before, ert_after_op_fn after, void *user)
{
	ert_session *sess = NULL;
	ert_config cfg;
	ert_status st;

	ert_config_init(&cfg);
	cfg.num_threads = threads;
	cfg.before_op = before;
	cfg.after_op = after;
	cfg.callback_user = user;
	st = ert_session_create(model, &cfg, &sess);
	if (st != ERT_OK) {
		cli_error("bench", "failed to create a session for %s: %s", name,
			  ert_last_error()[0] ? ert_last_error() : ert_status_string(st));
		return NULL;
	}
	if (!cli_inputs_random("bench", sess, 0)) {
		ert_session_destroy(sess);
		return NULL;
	}
	return sess;
}

/*
 * Warm-up and timed runs of @sess within the options' limits; @times holds
 * o->loops entries. With @ct, each timed run's per-class times go to
 * @class_ms[class * o->loops + run].
 */
static bool time_runs(const struct suite_opts *o, ert_session *sess, const char *what,
		      uint32_t threads, double *times, struct class_timer *ct, double *class_ms,
		      struct suite_time *out)
{
	double limit_ms = o->max_time_s * 1000.0, spent = 0;
	clockid_t clock = run_clock(o, threads);
	char label[96];
	uint32_t n;

	memset(out, 0, sizeof(*out));
	out->threads = threads;
	snprintf(label, sizeof(label), "%s, %u thread%s", what, threads, threads == 1 ? "" : "s");
	/* the first run plans the session and packs the weights */
	for (uint32_t i = 0; i < o->warmup && (i == 0 || spent < limit_ms / 4); i++) {
		double t0 = cli_now_ms();

		cli_progress("bench", label, 0, 0);
		if (ert_session_run(sess) != ERT_OK)
			goto failed;
		spent += cli_now_ms() - t0;
		out->warmup++;
	}
	spent = 0;
	for (n = 0; n < o->loops && (n < MIN_RUNS || spent < limit_ms); n++) {
		double t0, w0;

		cli_progress("bench", label, n + 1, o->loops);
		if (ct)
			memset(ct->run_ms, 0, sizeof(ct->run_ms));
		w0 = cli_now_ms();
		t0 = clock_ms(clock);
		if (ert_session_run(sess) != ERT_OK)
			goto failed;
		times[n] = clock_ms(clock) - t0;
		spent += cli_now_ms() - w0;
		for (int c = 0; ct && c < SC_COUNT; c++)
			class_ms[c * o->loops + n] = ct->run_ms[c];
	}
	cli_progress_done();
	out->runs = n;
	min_median(times, n, &out->min_ms, &out->median_ms);
	return true;
failed:
	cli_progress_done();
	cli_error("bench", "failed to run %s: %s", what,
		  ct && ct->oom ? "out of memory" : ert_session_error(sess));
	return false;
}

static bool time_model(const struct suite_opts *o, ert_model *model, const char *name,
		       uint32_t threads, double *times, struct suite_time *out)
{
	ert_session *sess = open_session(model, name, threads, NULL, NULL, NULL);
	bool ok;

	if (!sess)
		return false;
	ok = time_runs(o, sess, name, threads, times, NULL, NULL, out);
	ert_session_destroy(sess);
	return ok;
}

/* The per-class table: each thread count again, with the op callbacks. */
static bool time_classes(const struct suite_opts *o, ert_model *model, const char *name,
			 const struct graph_stats *gs, double *times, struct suite_result *r)
{
	const struct ert_graph *g = ert_model_graph(model);
	struct class_timer ct = { .g = g };
	double *class_ms = calloc((size_t)SC_COUNT * o->loops, sizeof(*class_ms));
	uint8_t *node_class = calloc(g->n_nodes ? g->n_nodes : 1, 1);
	char what[96];
	bool ok = false;

	if (!class_ms || !node_class) {
		cli_error("bench", "out of memory");
		goto out;
	}
	classify(g, gs, node_class, r->classes);
	ct.node_class = node_class;
	snprintf(what, sizeof(what), "%s per op", name);
	for (uint32_t k = 0; k < o->n_threads; k++) {
		ert_session *sess = open_session(model, name, o->threads[k], class_before_op,
						 class_after_op, &ct);
		struct suite_time t;

		ct.clock = run_clock(o, o->threads[k]);
		if (!sess)
			goto out;
		ok = time_runs(o, sess, what, o->threads[k], times, &ct, class_ms, &t);
		ert_session_destroy(sess);
		if (!ok)
			goto out;
		for (int c = 0; c < SC_COUNT; c++)
			min_median(class_ms + (size_t)c * o->loops, t.runs,
				   &r->classes[c].min_ms[k], &r->classes[c].median_ms[k]);
	}
	r->class_model = name;
	ok = true;
out:
	free(ct.op_class);
	free(class_ms);
	free(node_class);
	return ok;
}

/*
 * int8: @fpath quantised as `edgert quantize --method kl --calib-random N`
 * does it (the quantiser's own code), written to @qpath, loaded (the file is
 * unlinked at once: the mapping keeps it) and timed at 1 thread. @fp32_1 is
 * the fp32 model's 1-thread time when the thread list has 1.
 */
static bool time_int8(const struct suite_opts *o, ert_model *fmodel, const char *name,
		      const char *fpath, const char *qpath, const struct suite_time *fp32_1,
		      double *times, struct suite_int8 *out)
{
	struct q_choice choice = { .method = Q_METHOD_KL };
	struct q_samples samples = { 0 };
	struct q_result res = { 0 };
	struct q_stats *stats = NULL;
	struct ert_err err = { "" };
	ert_model *qfloat = NULL, *qmodel = NULL;
	const struct ert_graph *fg = NULL;
	void *image = NULL;
	size_t size = 0;
	double t0 = bench_now_s();
	char what[96];
	ert_config cfg;
	ert_status st;
	bool ok = false;

	ert_config_init(&cfg);
	cli_progress("bench", "int8: calibrating", 0, 0);
	if (!q_load_float("bench", fpath, &image, &size, &qfloat))
		goto out;
	fg = ert_model_graph(qfloat);
	stats = calloc(fg->n_tensors ? fg->n_tensors : 1, sizeof(*stats));
	if (!stats) {
		cli_error("bench", "out of memory");
		goto out;
	}
	if (!q_samples_open(&samples, "bench", NULL, o->calib, 0, qfloat) ||
	    !q_calibrate(qfloat, &cfg, &samples, choice.method, stats) ||
	    !q_quantize_graph(fg, stats, &choice, &res))
		goto out;
	st = ert_format_write_file(res.graph, &(struct ert_write_options){ 0 }, qpath, &err);
	if (st != ERT_OK) {
		cli_error("bench", "failed to write '%s': %s", qpath,
			  err.msg[0] ? err.msg : ert_status_string(st));
		goto out;
	}
	cli_progress_done();
	if (!cli_load_model("bench", qpath, &qmodel))
		goto out;
	unlink(qpath);
	out->model = name;
	out->method = "kl";
	out->calib = o->calib;
	out->quantized = res.n_quantized;
	out->nodes = fg->n_nodes;
	out->prepare_s = bench_now_s() - t0;
	if (fp32_1)
		out->fp32 = *fp32_1;
	else if (!time_model(o, fmodel, name, 1, times, &out->fp32))
		goto out;
	snprintf(what, sizeof(what), "%s int8", name);
	if (!time_model(o, qmodel, what, 1, times, &out->q8))
		goto out;
	out->done = true;
	ok = true;
out:
	cli_progress_done();
	q_result_free(&res);
	if (fg)
		q_stats_free(stats, fg->n_tensors);
	q_samples_close(&samples);
	ert_model_unref(qmodel);
	ert_model_unref(qfloat);
	free(image);
	return ok;
}

static bool bench_model(const struct suite_opts *o, const char *dir, const char *name,
			double *times, struct suite_result *r)
{
	const struct zoo_arch *arch = zoo_find(name);
	struct suite_model *m = &r->models[r->n_models];
	struct graph_stats gs = { 0 };
	char path[4096], qpath[4096];
	const struct suite_time *t1 = NULL;
	ert_model *model = NULL;
	bool ok = false, written = false;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s.ert", dir, name) >= sizeof(path) ||
	    (size_t)snprintf(qpath, sizeof(qpath), "%s/%s-int8.ert", dir, name) >= sizeof(qpath)) {
		cli_error("bench", "temporary directory name '%s' is too long", dir);
		return false;
	}
	if (!zoo_write_file("bench", arch, 0, true, path, NULL))
		goto out;
	written = true;
	if (!cli_load_model("bench", path, &model))
		goto out;
	if (!graph_stats_compute(ert_model_graph(model), &gs)) {
		cli_error("bench", "out of memory");
		goto out;
	}
	m->name = name;
	m->macs = gs.macs;
	for (uint32_t k = 0; k < o->n_threads; k++) {
		if (!time_model(o, model, name, o->threads[k], times, &m->t[k]))
			goto out;
		if (o->threads[k] == 1)
			t1 = &m->t[k];
	}
	r->n_models++;
	if (strcmp(name, CLASS_MODEL) == 0) {
		if (!time_classes(o, model, name, &gs, times, r))
			goto out;
		if (o->int8 && !time_int8(o, model, name, path, qpath, t1, times, &r->int8))
			goto out;
	}
	ok = true;
out:
	graph_stats_free(&gs);
	ert_model_unref(model);
	if (written)
		unlink(path);
	unlink(qpath);
	return ok;
}

static double load_average(void)
{
	double l[1];

	return getloadavg(l, 1) == 1 ? l[0] : -1;
}

double suite_peak_for(const struct suite_result *r, uint32_t threads)
{
	if (threads <= 1)
		return r->peak.single_gflops;
	if (threads >= r->peak.all_threads)
		return r->peak.all_gflops;
	return r->peak.all_gflops * threads / r->peak.all_threads;
}


/*
 * The CPUs this process may run on: its affinity mask's (taskset, cgroup
 * cpusets), at most @online; @online where the mask cannot be read. The
 * all-core peak and bandwidth run one thread on each, and the default
 * thread counts end there: counting every online CPU under `taskset -c 2,3`
 * on a 16-CPU machine ran 16 peak threads on 2 CPUs and put each 2-thread
 * model at 2/16 of that.
 */
static uint32_t usable_cpus(long online)
{
	cpu_set_t set;
	uint32_t n = online < 1 ? 1 : (uint32_t)online;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0 &&
	    (uint32_t)CPU_COUNT(&set) < n)
		n = (uint32_t)CPU_COUNT(&set);
	return n;
}
int ert_cmd_bench_suite(int argc, char **argv)
{
	struct suite_opts o = { .warmup = 2, .loops = 10, .max_time_s = 5, .calib = 2,
				.int8 = true };
	struct suite_result *r = NULL;
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	double *times = NULL, t0 = bench_now_s();
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t cpus = usable_cpus(online);
	bool have_dir = false;
	ert_status st;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (!o.n_threads) {
		uint32_t n = cpus > ERT_MAX_THREADS ? ERT_MAX_THREADS : cpus;

		o.threads[o.n_threads++] = 1;
		if (n > 1)
			o.threads[o.n_threads++] = n;
	}
	if (!o.n_models)
		for (size_t i = 0; i < sizeof(default_models) / sizeof(default_models[0]); i++)
			o.models[o.n_models++] = default_models[i];
	ret = 1;
	r = calloc(1, sizeof(*r));
	times = calloc(o.loops, sizeof(*times));
	if (!r || !times) {
		cli_error("bench", "out of memory");
		goto cleanup;
	}
	st = ert_cpu_level_resolve(ERT_CPU_LEVEL_AUTO, &r->level);
	if (st != ERT_OK) {
		cli_error("bench", "%s", ert_last_error()[0] ? ert_last_error() : ert_status_string(st));
		goto cleanup;
	}
	ert_cpu_describe(r->cpu, sizeof(r->cpu));
	r->online = online < 1 ? 1 : (uint32_t)online;
	r->cpus = cpus;
	r->load_start = load_average();
	cli_progress("bench", "fp32 peak", 0, 0);
	if (!bench_peak_measure("bench", r->level, r->cpus, o.cpu_clock, &r->peak))
		goto cleanup;
	cli_progress("bench", "memory bandwidth", 0, 0);
	if (!bench_mem_measure("bench", r->cpus, o.cpu_clock, &r->mem))
		goto cleanup;
	cli_progress_done();
	if ((size_t)snprintf(dir, sizeof(dir), "%s/edgert-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
	    sizeof(dir)) {
		cli_error("bench", "TMPDIR '%s' is too long", tmp);
		goto cleanup;
	}
	if (!mkdtemp(dir)) {
		cli_error("bench", "cannot create a temporary directory in '%s': %s",
			  tmp && *tmp ? tmp : "/tmp", strerror(errno));
		goto cleanup;
	}
	have_dir = true;
	for (uint32_t i = 0; i < o.n_models; i++)
		if (!bench_model(&o, dir, o.models[i], times, r))
			goto cleanup;
	r->load_end = load_average();
	r->elapsed_s = bench_now_s() - t0;
	if (o.json)
		suite_print_json(&o, r);
	else
		suite_print_text(&o, r);
	ret = 0;
cleanup:
	cli_progress_done();
	if (have_dir && rmdir(dir) != 0)
		cli_warn("bench", "cannot remove '%s': %s", dir, strerror(errno));
	free(times);
	free(r);
	return ret;
}
