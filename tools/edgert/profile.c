/* SPDX-License-Identifier: MIT */
/* edgert profile: per-op time table from the session's op callbacks. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "inputs.h"
#include "profile.h"

static const char usage[] =
	"USAGE: edgert profile MODEL [--threads N] [--loops N] [--top N] [--json]\n"
	"                      [--backend LIST] [--max-memory BYTES]\n"
	"                      [--memory LEVEL] [--precision LEVEL] [--tune MODE]\n"
	"                      [--trace FILE.json] [--svg FILE.svg]\n"
	"\n"
	"Time every op of a model through the before/after op callbacks, average\n"
	"over the runs (after one untimed warm-up run) and print a table sorted by\n"
	"time: op name, type, backend, kernel (on the CPU: the micro-kernel or the\n"
	"kernel level), milliseconds and share of the total. Ops on a GPU backend that\n"
	"times its work (vulkan, opencl) show the device's own time (timestamps; the\n"
	"clock column says device), the others the host's. --trace writes the timed\n"
	"runs as a Chrome trace (open it in ui.perfetto.dev or chrome://tracing),\n"
	"--svg a bar chart of the time by op type and backend; no privileges needed\n"
	"(edgert trace adds the kernel's side, see docs/tracing.md).\n"
	"\n"
	"OPTIONS:\n"
	"  -t, --threads N     worker threads, 1..32 (default: one per CPU)\n"
	"  -n, --loops N       timed runs, 1..10000 (default 10)\n"
	"  -T, --top N         print only the N slowest ops, 1..1000000 (default all)\n"
	"  -b, --backend LIST  backends in order (cpu, opencl, vulkan, npu, auto)\n"
	"  -j, --json          JSON: total_ms, run_ms (a run's wall time), device_ops and\n"
	"                      ops [{name, type, backend, kernel, ms, share, clock,\n"
	"                      host_ms}]\n"
	"      --trace FILE    write the timed runs as Chrome trace JSON: a span per run\n"
	"                      and per op on the session's thread\n"
	"      --svg FILE      write a bar chart (SVG) of the mean time by op type and\n"
	"                      backend, naming the slowest op\n"
	CLI_HELP_SESSION_LEVELS
	CLI_HELP_TUNE
	"  -h, --help          show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert profile mnv2.ert --top 10\n"
	"  edgert profile r50.ert --threads 1 --loops 5\n"
	"  edgert profile vit.ert --json > vit-ops.json\n"
	"  edgert profile mnv2.ert --loops 3 --trace mnv2.json --svg mnv2.svg\n";

struct profile_opts {
	const char *model;
	const char *trace, *svg;
	uint32_t loops, top;
	bool json;
	ert_config cfg;
};

enum { OPT_TRACE = CLI_OPT_LOCAL, OPT_SVG };

static int parse_args(int argc, char **argv, struct profile_opts *o)
{
	static const struct option longopts[] = {
		CLI_LONGOPT_THREADS,
		{ "loops", required_argument, NULL, 'n' },
		{ "top", required_argument, NULL, 'T' },
		CLI_LONGOPT_BACKEND,
		{ "json", no_argument, NULL, 'j' },
		CLI_LONGOPT_MAX_MEMORY,
		CLI_LONGOPT_MEMORY,
		CLI_LONGOPT_PRECISION,
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "svg", required_argument, NULL, OPT_SVG },
		CLI_LONGOPT_TUNE,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:n:T:b:jh", longopts, NULL)) != -1) {
		int r = cli_config_option("profile", c, optarg, &o->cfg);

		if (r < 0)
			return 1;
		if (r > 0)
			continue;
		switch (c) {
		case 'n':
			if (!cli_parse_int("profile", "--loops", optarg, 1, 10000, &v))
				return 1;
			o->loops = (uint32_t)v;
			break;
		case 'T':
			if (!cli_parse_int("profile", "--top", optarg, 1, 1000000, &v))
				return 1;
			o->top = (uint32_t)v;
			break;
		case 'j': o->json = true; break;
		case OPT_TRACE: o->trace = optarg; break;
		case OPT_SVG: o->svg = optarg; break;
		case 'h': fputs(usage, stdout); return -1;
		default: return cli_getopt_error("profile", argv, c);
		}
	}
	return cli_model_operand("profile", argc, argv, &o->model);
}

static int before_op(const ert_op_info *op, void *user)
{
	struct profiler *p = user;

	/* a subgraph's ops are timed within the row of their If/Loop/Scan */
	if (op->depth)
		return 0;
	if (p->record)
		p->op_t0 = profile_now_ns();
	p->t_start = cli_now_ms();
	return 0;
}

/* Names are copied once: ert_op_info is only valid during the callback. */
static int after_op(const ert_op_info *op, void *user)
{
	struct profiler *p = user;
	double dt = cli_now_ms() - p->t_start;
	uint64_t t1 = p->record ? profile_now_ns() : 0;
	struct op_stat *s;

	if (op->depth)
		return 0;
	if (op->index >= p->cap) {
		uint32_t cap = p->cap ? p->cap : 64;
		struct op_stat *ops;

		while (cap <= op->index)
			cap *= 2;
		ops = realloc(p->ops, cap * sizeof(*ops));
		if (!ops) {
			p->oom = true;
			return 1;
		}
		memset(ops + p->cap, 0, (cap - p->cap) * sizeof(*ops));
		p->ops = ops;
		p->cap = cap;
	}
	if (op->index >= p->n)
		p->n = op->index + 1;
	s = &p->ops[op->index];
	if (!s->name) {
		s->name = strdup(op->name);
		s->type = strdup(op->type);
		s->backend = strdup(op->backend);
		s->kernel = strdup(op->kernel ? op->kernel : "-");
		if (!s->name || !s->type || !s->backend || !s->kernel) {
			p->oom = true;
			return 1;
		}
	}
	if (p->measuring) {
		s->host_ms += dt;
		s->calls++;
		if (op->device_timed) {
			s->device_ms += (double)op->device_ns / 1e6;
			s->device_calls++;
		}
		if (p->record) {
			/* reserved after the warm-up run; grows only if a run has more ops */
			if (p->n_ev == p->cap_ev) {
				uint32_t cap = p->cap_ev ? p->cap_ev * 2 : 256;
				struct prof_event *ev = realloc(p->ev, cap * sizeof(*ev));

				if (!ev) {
					p->oom = true;
					return 1;
				}
				p->ev = ev;
				p->cap_ev = cap;
			}
			p->ev[p->n_ev++] = (struct prof_event){ op->index, p->op_t0, t1,
							op->device_timed != 0, op->device_ns };
		}
	}
	return 0;
}

static int cmp_time_desc(const void *a, const void *b)
{
	const struct op_stat *x = a, *y = b;

	return (x->total_ms < y->total_ms) - (x->total_ms > y->total_ms);
}

static void print_table(const struct profile_opts *o, struct profiler *p, double total,
			double run_ms)
{
	uint32_t rows = o->top && o->top < p->n ? o->top : p->n;
	int wname = 4, wtype = 4, wkern = 6;
	bool clock = p->n_device > 0;

	for (uint32_t i = 0; i < rows; i++) {
		int ln = (int)strlen(p->ops[i].name), lt = (int)strlen(p->ops[i].type);
		int lk = (int)strlen(p->ops[i].kernel);

		wname = ln > wname ? (ln > 48 ? 48 : ln) : wname;
		wtype = lt > wtype ? lt : wtype;
		wkern = lk > wkern ? (lk > 32 ? 32 : lk) : wkern;
	}
	printf("%-*s  %-*s  %-8s  %-*s  %10s  %7s%s\n", wname, "name", wtype, "type", "backend",
	       wkern, "kernel", "time ms", "share", clock ? "  clock" : "");
	for (uint32_t i = 0; i < rows; i++) {
		const struct op_stat *s = &p->ops[i];

		printf("%-*.*s  %-*s  %-8s  %-*.*s  %10.4f  %6.2f%%%s\n", wname, wname, s->name, wtype,
		       s->type, s->backend, wkern, wkern, s->kernel, s->total_ms,
		       total > 0 ? 100.0 * s->total_ms / total : 0.0,
		       !clock ? "" : op_stat_device(s) ? "  device" : "  host");
	}
	if (rows < p->n)
		printf("... %u more ops\n", p->n - rows);
	printf("total %.3f ms in %u ops (mean of %u runs, %u threads; a run took %.3f ms)\n", total,
	       p->n, o->loops, cli_thread_count(&o->cfg), run_ms);
	if (clock)
		printf("clock: device = the op's time on its device (timestamps), %u ops; host = "
		       "between the op callbacks, %u ops\n", p->n_device, p->n - p->n_device);
}

static void print_json(const struct profile_opts *o, struct profiler *p, double total,
		       double run_ms)
{
	uint32_t rows = o->top && o->top < p->n ? o->top : p->n;

	printf("{\"model\": ");
	cli_json_string(stdout, o->model);
	printf(", \"loops\": %u, \"threads\": %u, \"total_ms\": %.4f, \"run_ms\": %.4f, "
	       "\"device_ops\": %u, \"ops\": [", o->loops, cli_thread_count(&o->cfg), total, run_ms,
	       p->n_device);
	for (uint32_t i = 0; i < rows; i++) {
		const struct op_stat *s = &p->ops[i];

		printf("%s\n  {\"name\": ", i ? "," : "");
		cli_json_string(stdout, s->name);
		printf(", \"type\": ");
		cli_json_string(stdout, s->type);
		printf(", \"backend\": ");
		cli_json_string(stdout, s->backend);
		printf(", \"kernel\": ");
		cli_json_string(stdout, s->kernel);
		printf(", \"ms\": %.4f, \"share\": %.4f, \"clock\": \"%s\", \"host_ms\": %.4f}",
		       s->total_ms, total > 0 ? s->total_ms / total : 0.0,
		       op_stat_device(s) ? "device" : "host", s->host_ms);
	}
	printf("\n]}\n");
}

int ert_cmd_profile(int argc, char **argv)
{
	struct profile_opts o = { .loops = 10 };
	struct profiler p = { 0 };
	ert_model *model = NULL;
	ert_session *sess = NULL;
	double total = 0, run_ms = 0, t_run;
	ert_status st;
	int ret;

	ert_config_init(&o.cfg);
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = 1;
	o.cfg.before_op = before_op;
	o.cfg.after_op = after_op;
	o.cfg.callback_user = &p;
	/* GPU backends time each op on the device (costs them a little: only here) */
	o.cfg.device_times = 1;
	if ((o.trace && !profile_check_output("profile", o.trace)) ||
	    (o.svg && !profile_check_output("profile", o.svg)))
		goto cleanup;
	if (!cli_session_open("profile", o.model, &o.cfg, &model, &sess) ||
	    !cli_inputs_random("profile", sess, 0))
		goto cleanup;
	if (o.trace) {
		p.run_t0 = calloc(o.loops, sizeof(*p.run_t0));
		p.run_t1 = calloc(o.loops, sizeof(*p.run_t1));
		if (!p.run_t0 || !p.run_t1) {
			cli_error("profile", "out of memory");
			goto cleanup;
		}
		p.tid = (uint32_t)syscall(SYS_gettid);
	}
	for (uint32_t i = 0; i <= o.loops; i++) {
		p.measuring = i > 0;
		if (i == 1 && o.trace) {
			/* the warm-up run counted the ops: room for every timed run's */
			uint64_t want = (uint64_t)p.n * o.loops;

			p.ev = want && want < UINT32_MAX ? malloc(want * sizeof(*p.ev)) : NULL;
			p.cap_ev = p.ev ? (uint32_t)want : 0;
			p.record = true;
		}
		t_run = cli_now_ms();
		if (i && o.trace)
			p.run_t0[i - 1] = profile_now_ns();
		st = ert_session_run(sess);
		if (i && o.trace)
			p.run_t1[i - 1] = profile_now_ns();
		if (i)
			run_ms += cli_now_ms() - t_run;
		if (st != ERT_OK) {
			cli_progress_done();
			cli_error("profile", "failed to run '%s': %s", o.model,
				  p.oom ? "out of memory" : ert_session_error(sess));
			goto cleanup;
		}
		cli_progress("profile", "run", i + 1, o.loops + 1);
	}
	cli_progress_done();
	for (uint32_t i = 0; i < p.n; i++) {
		struct op_stat *s = &p.ops[i];

		if (!s->name) {
			s->name = strdup("?"), s->type = strdup("?"), s->backend = strdup("?");
			s->kernel = strdup("?");
			if (!s->name || !s->type || !s->backend || !s->kernel) {
				cli_error("profile", "out of memory");
				goto cleanup;
			}
		}
		s->host_ms /= o.loops;
		s->device_ms /= o.loops;
		s->total_ms = op_stat_device(s) ? s->device_ms : s->host_ms;
		p.n_device += op_stat_device(s);
		total += s->total_ms;
	}
	/* the files first: when one cannot be written, nothing is printed */
	if (o.trace && !profile_write_trace(o.trace, o.model, &p, o.loops))
		goto cleanup;
	if (o.svg && !profile_write_svg(o.svg, o.model, &p, total, o.loops))
		goto cleanup;
	qsort(p.ops, p.n, sizeof(*p.ops), cmp_time_desc);
	run_ms /= o.loops;
	if (o.json)
		print_json(&o, &p, total, run_ms);
	else
		print_table(&o, &p, total, run_ms);
	ret = 0;
cleanup:
	for (uint32_t i = 0; i < p.n; i++) {
		free(p.ops[i].name);
		free(p.ops[i].type);
		free(p.ops[i].backend);
		free(p.ops[i].kernel);
	}
	free(p.ops);
	free(p.ev);
	free(p.run_t0);
	free(p.run_t1);
	ert_session_destroy(sess);
	ert_model_unref(model);
	return ret;
}
