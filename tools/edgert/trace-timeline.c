/* SPDX-License-Identifier: MIT */
/*
 * edgert trace: the records of a traced run turned into one Chrome trace
 * timeline and a summary (see trace.h; docs/tracing.md describes the tracks).
 *
 * Spans on a runtime thread come from start/end probe pairs of that thread;
 * an NPU job's life comes from the enpu tracepoints (submit in the ioctl of
 * the submitting thread, start and done on the engine) and the dma_fence
 * signals that follow its completion.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "chrome-trace.h"
#include "cli.h"
#include "profile.h"
#include "trace.h"

#define MAX_TRACKS 64
#define MAX_DEPTH 32
#define MAX_ARGS 7
/* synthetic track ids for the NPU cores, above any real thread id */
#define ENGINE_TID 0x40000000u

struct out_ev {
	char ph;            /* X, i, s, f, b, e */
	uint32_t tid;
	const char *cat;
	char name[80];
	uint64_t ts, dur, id;
	struct ct_arg args[MAX_ARGS];
	uint32_t n_args;
};

struct track {
	uint32_t tid;
	uint32_t stack[MAX_DEPTH]; /* open starts: indices into the log */
	uint32_t depth;
};

struct job {
	uint64_t id;
	uint32_t sub_tid, core, cmds, bos, signals;
	uint64_t t_submit, t_start, t_done, t_signal, t_sched;
	int64_t error;
	const char *driver;
	bool submitted, started, done;
};

struct busy {
	uint64_t t0, t1;
};

struct timeline {
	struct out_ev *out;
	uint32_t n_out, cap_out;
	struct track tracks[MAX_TRACKS];
	uint32_t n_tracks;
	struct job *jobs;
	uint32_t n_jobs, cap_jobs;
	uint32_t main_tid, runs, unmatched;
	bool oom;
};

static struct out_ev *out_new(struct timeline *tl, char ph, uint32_t tid, const char *cat,
			      uint64_t ts)
{
	struct out_ev *o;

	if (tl->n_out == tl->cap_out) {
		uint32_t cap = tl->cap_out ? tl->cap_out * 2 : 1024;
		struct out_ev *p = realloc(tl->out, (size_t)cap * sizeof(*p));

		if (!p) {
			tl->oom = true;
			return NULL;
		}
		tl->out = p;
		tl->cap_out = cap;
	}
	o = &tl->out[tl->n_out++];
	memset(o, 0, sizeof(*o));
	o->ph = ph;
	o->tid = tid;
	o->cat = cat;
	o->ts = ts;
	return o;
}

static void arg_num(struct out_ev *o, const char *key, double v)
{
	if (o && o->n_args < MAX_ARGS)
		o->args[o->n_args++] = (struct ct_arg){ .key = key, .num = v };
}

static void arg_str(struct out_ev *o, const char *key, const char *s)
{
	if (o && o->n_args < MAX_ARGS)
		o->args[o->n_args++] = (struct ct_arg){ .key = key, .s = s };
}

static struct track *track_of(struct timeline *tl, uint32_t tid)
{
	for (uint32_t i = 0; i < tl->n_tracks; i++)
		if (tl->tracks[i].tid == tid)
			return &tl->tracks[i];
	if (tl->n_tracks == MAX_TRACKS)
		return NULL;
	tl->tracks[tl->n_tracks] = (struct track){ .tid = tid };
	return &tl->tracks[tl->n_tracks++];
}

static struct job *job_of(struct timeline *tl, uint64_t id)
{
	for (uint32_t i = tl->n_jobs; i-- > 0;)
		if (tl->jobs[i].id == id)
			return &tl->jobs[i];
	if (tl->n_jobs == tl->cap_jobs) {
		uint32_t cap = tl->cap_jobs ? tl->cap_jobs * 2 : 256;
		struct job *p = realloc(tl->jobs, (size_t)cap * sizeof(*p));

		if (!p) {
			tl->oom = true;
			return NULL;
		}
		tl->jobs = p;
		tl->cap_jobs = cap;
	}
	tl->jobs[tl->n_jobs] = (struct job){ .id = id };
	return &tl->jobs[tl->n_jobs++];
}

static uint32_t start_kind(uint32_t end_kind)
{
	switch (end_kind) {
	case TK_PLAN_END: return TK_PLAN_START;
	case TK_RUN_END: return TK_RUN_START;
	case TK_OP_END: return TK_OP_START;
	case TK_NPU_WAIT_END: return TK_NPU_WAIT_START;
	case TK_GPU_WAIT_END: return TK_GPU_WAIT_START;
	default: return 0;
	}
}

/* The span a start/end pair of probes makes on its thread's track. */
static void close_span(struct timeline *tl, const struct ert_trace_event *s,
		       const struct ert_trace_event *e)
{
	static const char *const cats[] = {
		[TK_PLAN_START] = "plan", [TK_RUN_START] = "run", [TK_OP_START] = "op",
		[TK_NPU_WAIT_START] = "npu_wait", [TK_GPU_WAIT_START] = "gpu_wait",
	};
	struct out_ev *o = out_new(tl, 'X', e->tid, cats[s->kind], s->ts);

	if (!o)
		return;
	o->dur = e->ts - s->ts;
	switch (s->kind) {
	case TK_PLAN_START:
		snprintf(o->name, sizeof(o->name), "plan");
		arg_num(o, "status", (double)(int64_t)e->b);
		break;
	case TK_RUN_START:
		snprintf(o->name, sizeof(o->name), "run");
		arg_num(o, "run", ++tl->runs);
		arg_num(o, "status", (double)(int64_t)e->b);
		break;
	case TK_OP_START:
		snprintf(o->name, sizeof(o->name), "%s", s->s1);
		arg_num(o, "index", (double)s->a);
		arg_str(o, "name", s->s3);
		arg_str(o, "backend", s->s2);
		arg_num(o, "status", (double)(int64_t)e->b);
		arg_num(o, "run", tl->runs + 1);
		break;
	case TK_NPU_WAIT_START:
		snprintf(o->name, sizeof(o->name), "NPU wait");
		arg_num(o, "seqno", (double)s->a);
		arg_num(o, "status", (double)(int64_t)e->b);
		break;
	default:
		snprintf(o->name, sizeof(o->name), "GPU wait");
		arg_num(o, "status", (double)(int64_t)e->a);
		break;
	}
}

static void probe_event(struct timeline *tl, const struct ert_trace_event *log, uint32_t i)
{
	const struct ert_trace_event *e = &log[i];
	struct track *t = track_of(tl, e->tid);
	struct out_ev *o;
	uint32_t want;

	if (!t)
		return;
	switch (e->kind) {
	case TK_PLAN_START: case TK_RUN_START: case TK_OP_START:
	case TK_NPU_WAIT_START: case TK_GPU_WAIT_START:
		if (e->kind == TK_RUN_START && !tl->main_tid)
			tl->main_tid = e->tid;
		if (t->depth < MAX_DEPTH)
			t->stack[t->depth++] = i;
		else
			tl->unmatched++;
		return;
	case TK_PLAN_END: case TK_RUN_END: case TK_OP_END:
	case TK_NPU_WAIT_END: case TK_GPU_WAIT_END:
		want = start_kind(e->kind);
		for (uint32_t d = t->depth; d-- > 0;) {
			const struct ert_trace_event *s = &log[t->stack[d]];

			if (s->kind != want || (want == TK_OP_START && s->a != e->a))
				continue;
			/* anything opened above the match never closed */
			tl->unmatched += t->depth - d - 1;
			t->depth = d;
			close_span(tl, s, e);
			return;
		}
		tl->unmatched++;
		return;
	case TK_SPLIT:
		o = out_new(tl, 'i', e->tid, "split", e->ts);
		if (!o)
			return;
		snprintf(o->name, sizeof(o->name), "split %s -> %s", e->s1, e->s2);
		arg_num(o, "index", (double)e->a);
		arg_str(o, "from", e->s1);
		arg_str(o, "to", e->s2);
		return;
	case TK_COPY:
		o = out_new(tl, 'i', e->tid, "copy", e->ts);
		if (!o)
			return;
		snprintf(o->name, sizeof(o->name), "copy %s -> %s", e->s1, e->s2);
		arg_num(o, "step", (double)e->a);
		arg_num(o, "bytes", (double)e->b);
		arg_str(o, "from", e->s1);
		arg_str(o, "to", e->s2);
		return;
	case TK_NPU_SUBMIT:
		o = out_new(tl, 'i', e->tid, "npu_ioctl", e->ts);
		if (!o)
			return;
		snprintf(o->name, sizeof(o->name), "SUBMIT ioctl");
		arg_num(o, "jobs", (double)e->a);
		arg_num(o, "seqno", (double)e->b);
		arg_num(o, "status", (double)(int64_t)e->c);
		return;
	case TK_GPU_SUBMIT:
		o = out_new(tl, 'i', e->tid, "gpu_submit", e->ts);
		if (!o)
			return;
		snprintf(o->name, sizeof(o->name), "GPU submit");
		arg_num(o, "kernels", (double)e->a);
		arg_num(o, "copies", (double)e->b);
		return;
	}
}

static void job_event(struct timeline *tl, const struct ert_trace_event *e)
{
	struct job *j = job_of(tl, e->a);

	if (!j)
		return;
	switch (e->kind) {
	case TK_JOB_SUBMIT:
		j->submitted = true;
		j->t_submit = e->ts;
		j->sub_tid = e->tid;
		j->cmds = (uint32_t)e->b;
		j->bos = (uint32_t)e->c;
		break;
	case TK_JOB_START:
		j->started = true;
		j->t_start = e->ts;
		j->core = (uint32_t)e->b;
		j->t_sched = e->c;
		break;
	case TK_JOB_DONE:
		j->done = true;
		j->t_done = e->ts;
		j->error = (int64_t)e->c;
		break;
	case TK_JOB_SIGNAL:
		/* the last fence signalled (drm_sched's finished fence) is what waiters see */
		j->t_signal = e->ts;
		j->driver = e->s1;
		j->signals++;
		break;
	}
}

static void emit_job(struct timeline *tl, const struct job *j)
{
	uint32_t engine = ENGINE_TID + j->core;
	struct out_ev *o;

	if (j->submitted) {
		o = out_new(tl, 'i', j->sub_tid, "npu_submit", j->t_submit);
		if (o) {
			snprintf(o->name, sizeof(o->name), "submit job %" PRIu64, j->id);
			arg_num(o, "job", (double)j->id);
			arg_num(o, "cmds", j->cmds);
			arg_num(o, "bos", j->bos);
		}
	}
	if (!j->started)
		return;
	if (j->submitted) {
		o = out_new(tl, 's', j->sub_tid, "npu_flow", j->t_submit);
		if (o) {
			snprintf(o->name, sizeof(o->name), "job %" PRIu64, j->id);
			o->id = j->id;
		}
		o = out_new(tl, 'f', engine, "npu_flow", j->t_start);
		if (o) {
			snprintf(o->name, sizeof(o->name), "job %" PRIu64, j->id);
			o->id = j->id;
		}
		o = out_new(tl, 'b', 0, "npu_queue", j->t_submit);
		if (o) {
			snprintf(o->name, sizeof(o->name), "NPU job queue");
			o->id = j->id;
			arg_num(o, "job", (double)j->id);
		}
		o = out_new(tl, 'e', 0, "npu_queue", j->t_start);
		if (o) {
			snprintf(o->name, sizeof(o->name), "NPU job queue");
			o->id = j->id;
		}
	}
	if (j->t_sched) {
		o = out_new(tl, 'i', engine, "drm_sched", j->t_sched);
		if (o) {
			snprintf(o->name, sizeof(o->name), "drm_run_job");
			arg_num(o, "job", (double)j->id);
		}
	}
	if (!j->done)
		return;
	o = out_new(tl, 'X', engine, "npu_job", j->t_start);
	if (o) {
		snprintf(o->name, sizeof(o->name), "job %" PRIu64, j->id);
		o->dur = j->t_done - j->t_start;
		arg_num(o, "job", (double)j->id);
		arg_num(o, "core", j->core);
		arg_num(o, "error", (double)j->error);
		arg_num(o, "cmds", j->cmds);
		if (j->submitted)
			arg_num(o, "queued_us", (double)(j->t_start - j->t_submit) / 1000.0);
	}
	if (j->signals) {
		o = out_new(tl, 'i', engine, "npu_signal", j->t_signal);
		if (o) {
			snprintf(o->name, sizeof(o->name), "signal job %" PRIu64, j->id);
			arg_num(o, "job", (double)j->id);
			arg_str(o, "driver", j->driver);
			arg_num(o, "fences", j->signals);
		}
	}
}

static int ph_rank(char ph)
{
	switch (ph) {
	case 'b': return 0;
	case 'X': return 1;
	case 's': return 2;
	case 'f': return 3;
	case 'i': return 4;
	default: return 5;
	}
}

static int cmp_out(const void *a, const void *b)
{
	const struct out_ev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (ph_rank(x->ph) != ph_rank(y->ph))
		return ph_rank(x->ph) - ph_rank(y->ph);
	return (x->dur < y->dur) - (x->dur > y->dur);
}

static const struct ert_trace_event *sort_base;

static int cmp_idx(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint64_t ti = sort_base[i].ts, tj = sort_base[j].ts;

	if (ti != tj)
		return ti < tj ? -1 : 1;
	return (i > j) - (i < j);
}

/* Sort by time, keeping the ring buffer's order among equal times. */
static bool sort_log(struct trace_log *log)
{
	uint32_t *idx = malloc((size_t)(log->n ? log->n : 1) * sizeof(*idx));
	struct ert_trace_event *ev = malloc((size_t)(log->n ? log->n : 1) * sizeof(*ev));

	if (!idx || !ev) {
		free(idx);
		free(ev);
		return false;
	}
	for (uint32_t i = 0; i < log->n; i++)
		idx[i] = i;
	sort_base = log->ev;
	qsort(idx, log->n, sizeof(*idx), cmp_idx);
	for (uint32_t i = 0; i < log->n; i++)
		ev[i] = log->ev[idx[i]];
	free(idx);
	free(log->ev);
	log->ev = ev;
	log->cap = log->n;
	return true;
}

static bool write_file(struct timeline *tl, const char *path, const char *model, uint32_t pid)
{
	struct ct_writer w;
	char *buf = NULL, name[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool cores[64] = { false };

	if (!f)
		return cli_error("trace", "failed to write '%s': out of memory", path), false;
	ct_begin(&w, f, tl->n_out ? tl->out[0].ts : 0);
	ct_process_name(&w, pid, model);
	for (uint32_t i = 0; i < tl->n_tracks; i++) {
		uint32_t tid = tl->tracks[i].tid;

		snprintf(name, sizeof(name), tid == tl->main_tid ? "edgert main thread %u" :
			 "edgert thread %u", tid);
		ct_thread_name(&w, pid, tid, name, tid == tl->main_tid ? 0 : 1 + (int)i);
	}
	for (uint32_t i = 0; i < tl->n_jobs; i++)
		if (tl->jobs[i].started && tl->jobs[i].core < 64 && !cores[tl->jobs[i].core]) {
			cores[tl->jobs[i].core] = true;
			snprintf(name, sizeof(name), "NPU engine core %u", tl->jobs[i].core);
			ct_thread_name(&w, pid, ENGINE_TID + tl->jobs[i].core, name,
				       100 + (int)tl->jobs[i].core);
		}
	for (uint32_t i = 0; i < tl->n_out; i++) {
		const struct out_ev *o = &tl->out[i];

		switch (o->ph) {
		case 'X':
			ct_span(&w, pid, o->tid, o->cat, o->name, o->ts, o->dur, o->args, o->n_args);
			break;
		case 'i':
			ct_instant(&w, pid, o->tid, o->cat, o->name, o->ts, o->args, o->n_args);
			break;
		case 's': case 'f':
			ct_flow(&w, pid, o->tid, o->ph == 's', o->cat, o->name, o->id, o->ts);
			break;
		default:
			ct_async(&w, pid, o->ph == 'b', o->cat, o->name, o->id, o->ts, o->args,
				 o->n_args);
			break;
		}
	}
	ct_end(&w);
	return profile_write_stream("trace", path, f, &buf, &len);
}

/* ---- summary ------------------------------------------------------------------ */

struct type_time {
	const char *type, *backend;
	uint64_t ns;
	uint32_t ops;
};

static int cmp_type_time(const void *a, const void *b)
{
	const struct type_time *x = a, *y = b;

	return (x->ns < y->ns) - (x->ns > y->ns);
}

static int cmp_busy(const void *a, const void *b)
{
	const struct busy *x = a, *y = b;

	return (x->t0 > y->t0) - (x->t0 < y->t0);
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void print_op_types(FILE *f, const struct timeline *tl)
{
	struct type_time *tt = calloc(tl->n_out ? tl->n_out : 1, sizeof(*tt));
	uint32_t n = 0;
	uint64_t total = 0;

	if (!tt)
		return;
	for (uint32_t i = 0; i < tl->n_out; i++) {
		const struct out_ev *o = &tl->out[i];
		const char *be;
		uint32_t k = 0;

		if (o->ph != 'X' || strcmp(o->cat, "op"))
			continue;
		be = o->args[2].s;
		while (k < n && (strcmp(tt[k].type, o->name) || strcmp(tt[k].backend, be)))
			k++;
		if (k == n)
			tt[n++] = (struct type_time){ .type = o->name, .backend = be };
		tt[k].ns += o->dur;
		tt[k].ops++;
		total += o->dur;
	}
	qsort(tt, n, sizeof(*tt), cmp_type_time);
	fprintf(f, "%-22s %-8s %6s %12s %7s\n", "op type", "backend", "ops", "total ms", "share");
	for (uint32_t k = 0; k < n; k++)
		fprintf(f, "%-22s %-8s %6u %12.4f %6.2f%%\n", tt[k].type, tt[k].backend, tt[k].ops,
			ms(tt[k].ns), total ? 100.0 * (double)tt[k].ns / (double)total : 0.0);
	free(tt);
}

static void print_npu(FILE *f, const struct timeline *tl)
{
	uint64_t queue = 0, engine = 0, signal = 0, wait = 0;
	uint32_t n = 0, ns = 0, failed = 0, waits = 0;

	for (uint32_t i = 0; i < tl->n_jobs; i++) {
		const struct job *j = &tl->jobs[i];

		if (!j->submitted || !j->started || !j->done)
			continue;
		n++;
		queue += j->t_start - j->t_submit;
		engine += j->t_done - j->t_start;
		failed += j->error != 0;
		if (j->signals) {
			ns++;
			signal += j->t_signal - j->t_done;
		}
	}
	for (uint32_t i = 0; i < tl->n_out; i++)
		if (tl->out[i].ph == 'X' && !strcmp(tl->out[i].cat, "npu_wait")) {
			wait += tl->out[i].dur;
			waits++;
		}
	if (!n) {
		fprintf(f, "NPU: no jobs traced\n");
		return;
	}
	fprintf(f, "NPU: %u jobs%s; queue wait %.4f ms (mean %.4f), engine %.4f ms (mean %.4f)",
		n, failed ? " (some failed)" : "", ms(queue), ms(queue) / n, ms(engine),
		ms(engine) / n);
	if (ns)
		fprintf(f, ", done to fence signal %.4f ms", ms(signal));
	if (waits)
		fprintf(f, "; the runtime waited %.4f ms in %u waits", ms(wait), waits);
	fputc('\n', f);
}

static void print_copies(FILE *f, const struct trace_log *log)
{
	uint64_t bytes = 0;
	uint32_t n = 0;

	for (uint32_t i = 0; i < log->n; i++)
		if (log->ev[i].kind == TK_COPY) {
			n++;
			bytes += log->ev[i].b;
		}
	fprintf(f, "copies between backends: %u (%" PRIu64 " bytes)\n", n, bytes);
}

/*
 * Time inside the runs where no backend was busy: not in an op on the CPU or
 * a GPU (an NPU op's span is mostly waiting) and not in an NPU job.
 */
static void print_idle(FILE *f, const struct timeline *tl)
{
	struct busy *b = calloc(tl->n_out ? tl->n_out : 1, sizeof(*b));
	uint64_t run_ns = 0, idle = 0, gap = 0, gap_end = 0;
	uint32_t n = 0;

	if (!b)
		return;
	for (uint32_t i = 0; i < tl->n_out; i++) {
		const struct out_ev *o = &tl->out[i];

		if (o->ph == 'X' && (!strcmp(o->cat, "npu_job") ||
				     (!strcmp(o->cat, "op") && strcmp(o->args[2].s, "npu"))))
			b[n++] = (struct busy){ o->ts, o->ts + o->dur };
	}
	qsort(b, n, sizeof(*b), cmp_busy);
	for (uint32_t i = 0; i < tl->n_out; i++) {
		const struct out_ev *r = &tl->out[i];
		uint64_t t = r->ts, end = r->ts + r->dur;

		if (r->ph != 'X' || strcmp(r->cat, "run"))
			continue;
		run_ns += r->dur;
		for (uint32_t k = 0; k < n && t < end; k++) {
			if (b[k].t1 <= t || b[k].t0 >= end)
				continue;
			if (b[k].t0 > t) {
				idle += b[k].t0 - t;
				if (b[k].t0 - t > gap) {
					gap = b[k].t0 - t;
					gap_end = b[k].t0;
				}
			}
			if (b[k].t1 > t)
				t = b[k].t1;
		}
		if (t < end) {
			idle += end - t;
			if (end - t > gap) {
				gap = end - t;
				gap_end = end;
			}
		}
	}
	free(b);
	fprintf(f, "idle: %.4f ms of %.4f ms in runs (%.1f%%) with no backend busy", ms(idle),
		ms(run_ns), run_ns ? 100.0 * (double)idle / (double)run_ns : 0.0);
	if (gap) {
		const struct out_ev *next = NULL;

		for (uint32_t i = 0; i < tl->n_out && !next; i++)
			if (tl->out[i].ph == 'X' && !strcmp(tl->out[i].cat, "op") &&
			    tl->out[i].ts >= gap_end)
				next = &tl->out[i];
		fprintf(f, "; longest gap %.4f ms", ms(gap));
		if (next)
			fprintf(f, ", before %s '%s'", next->name, next->args[1].s);
		else
			fprintf(f, ", at the end of a run");
	}
	fputc('\n', f);
}

bool trace_report(const char *path, const char *model, uint32_t pid, struct trace_log *log,
		  FILE *summary, const char *headline)
{
	struct timeline tl = { 0 };
	bool ok = false;

	if (!sort_log(log)) {
		cli_error("trace", "out of memory");
		return false;
	}
	for (uint32_t i = 0; i < log->n; i++) {
		if (log->ev[i].kind >= TK_JOB_SUBMIT)
			job_event(&tl, &log->ev[i]);
		else
			probe_event(&tl, log->ev, i);
	}
	for (uint32_t i = 0; i < tl.n_jobs; i++)
		emit_job(&tl, &tl.jobs[i]);
	if (tl.oom) {
		cli_error("trace", "out of memory");
		goto out;
	}
	qsort(tl.out, tl.n_out, sizeof(*tl.out), cmp_out);
	if (!write_file(&tl, path, model, pid))
		goto out;
	fprintf(summary, "%s\n", headline);
	print_op_types(summary, &tl);
	print_npu(summary, &tl);
	print_copies(summary, log);
	print_idle(summary, &tl);
	if (log->dropped)
		fprintf(summary, "warning: %" PRIu64 " records lost (the BPF ring buffer was full)\n",
			log->dropped);
	if (tl.unmatched)
		fprintf(summary, "warning: %u probe starts or ends without their pair\n",
			tl.unmatched);
	ok = true;
out:
	free(tl.out);
	free(tl.jobs);
	return ok;
}
