/* SPDX-License-Identifier: MIT */
/* edgert bench --suite: the tables, the JSON and issue 8's targets. */
#include <stdio.h>
#include <string.h>

#include "bench-suite.h"
#include "cli.h"

/* Issue 8's targets: effective GFLOP/s as % of the 1-core peak, at 1 thread. */
static const struct {
	const char *model;
	double pct;
} pct_targets[] = {
	{ "resnet50", 100 }, { "resnet18", 120 }, { "mobilenet_v2", 65 }, { "vit_s16", 85 },
};

/* 2 threads against 1 on these models. */
static const char *const speedup_models[] = { "resnet50", "vit_s16" };
#define SPEEDUP_THREADS 2
#define SPEEDUP_GOAL 1.85

enum target_kind { TK_PCT, TK_SPEEDUP, TK_INT8 };

/* A 1-minute load average above this many per CPU before the run: a busy machine. */
#define BUSY_LOAD 0.5

/* A figure with a target next to it. */
struct verdict {
	bool has;        /* a target applies and the figure was measured */
	bool met;
	double value, goal;
};

static struct verdict make_verdict(double value, double goal)
{
	return (struct verdict){ .has = goal > 0 && value > 0, .met = value >= goal,
				 .value = value, .goal = goal };
}

static double gflops(uint64_t macs, double ms)
{
	return ms > 0 ? 2.0 * (double)macs / (ms * 1e-3) * 1e-9 : 0;
}

static double pct_goal(const char *model)
{
	for (size_t i = 0; i < sizeof(pct_targets) / sizeof(pct_targets[0]); i++)
		if (strcmp(pct_targets[i].model, model) == 0)
			return pct_targets[i].pct;
	return 0;
}

static bool speedup_model(const char *model)
{
	for (size_t i = 0; i < sizeof(speedup_models) / sizeof(speedup_models[0]); i++)
		if (strcmp(speedup_models[i], model) == 0)
			return true;
	return false;
}

/* The int8 target at kernel level @level: 4x with AMX, 2x with VNNI, none below. */
static double int8_goal(ert_cpu_level level)
{
	return level >= ERT_CPU_LEVEL_AMX ? 4.0 : level == ERT_CPU_LEVEL_AVX512VNNI ? 2.0 : 0;
}

static const struct suite_time *time_at(const struct suite_model *m, const struct suite_opts *o,
					uint32_t threads)
{
	for (uint32_t k = 0; k < o->n_threads; k++)
		if (o->threads[k] == threads && m->t[k].runs)
			return &m->t[k];
	return NULL;
}

static double pct_of_peak(const struct suite_result *r, uint64_t macs, const struct suite_time *t)
{
	double peak = suite_peak_for(r, t->threads);

	return peak > 0 ? 100.0 * gflops(macs, t->min_ms) / peak : 0;
}

/* Speed-up of @t over the same model at 1 thread; 0 when 1 thread was not measured. */
static double speedup(const struct suite_model *m, const struct suite_opts *o,
		      const struct suite_time *t)
{
	const struct suite_time *t1 = time_at(m, o, 1);

	return t1 && t->min_ms > 0 ? t1->min_ms / t->min_ms : 0;
}

static struct verdict model_verdict(const struct suite_result *r, const struct suite_opts *o,
				    const struct suite_model *m, const struct suite_time *t,
				    enum target_kind *kind)
{
	if (t->threads == 1) {
		*kind = TK_PCT;
		return make_verdict(pct_of_peak(r, m->macs, t), pct_goal(m->name));
	}
	*kind = TK_SPEEDUP;
	if (t->threads == SPEEDUP_THREADS && speedup_model(m->name))
		return make_verdict(speedup(m, o, t), SPEEDUP_GOAL);
	return (struct verdict){ 0 };
}

static double int8_ratio(const struct suite_int8 *q)
{
	return q->q8.min_ms > 0 ? q->fp32.min_ms / q->q8.min_ms : 0;
}

/* "met", or by how much the target is missed and the factor still needed. */
static void verdict_text(const struct verdict *v, enum target_kind kind, char *buf, size_t size)
{
	if (!v->has) {
		snprintf(buf, size, "-");
	} else if (kind == TK_PCT) {
		if (v->met)
			snprintf(buf, size, ">= %.0f%%: met", v->goal);
		else
			snprintf(buf, size, ">= %.0f%%: MISSED by %.1f pts (needs %.2fx faster)",
				 v->goal, v->goal - v->value, v->goal / v->value);
	} else if (kind == TK_SPEEDUP) {
		if (v->met)
			snprintf(buf, size, ">= %.2fx: met", v->goal);
		else
			snprintf(buf, size, ">= %.2fx: MISSED by %.2fx", v->goal,
				 v->goal - v->value);
	} else {
		if (v->met)
			snprintf(buf, size, ">= %.0fx faster: met", v->goal);
		else
			snprintf(buf, size, ">= %.0fx faster: MISSED (int8 needs %.1fx faster)",
				 v->goal, v->goal / v->value);
	}
}

static void print_machine(const struct suite_opts *o, const struct suite_result *r)
{
	printf("edgert bench --suite: kernel level %s, ", ert_cpu_level_name(r->level));
	if (r->cpus < r->online)
		printf("%u of %u online CPUs (affinity), threads", r->cpus, r->online);
	else
		printf("%u online CPU%s, threads", r->online, r->online == 1 ? "" : "s");
	for (uint32_t k = 0; k < o->n_threads; k++)
		printf("%s%u", k ? "," : " ", o->threads[k]);
	printf("\ncpu         %s\n", r->cpu);
	if (o->cpu_clock)
		printf("clock       cpu: the 1-thread peak and bandwidth in the thread's CPU time, "
		       "1-thread runs in the process's; more threads in wall-clock time\n");
	else
		printf("clock       wall: every time is wall-clock time\n");
	if (r->load_start >= 0)
		printf("load        %.2f at start, %.2f at end (1-minute load average on %u CPU%s, "
		       "this run's own work included at the end)\n",
		       r->load_start, r->load_end, r->online, r->online == 1 ? "" : "s");
	if (r->load_start > BUSY_LOAD * r->online)
		printf("note        the machine was busy before this run started: %s\n",
		       o->cpu_clock ? "1-thread figures leave out the time other work took the "
				      "CPU, but not its effect on caches and clocks; figures of "
				      "several threads are low"
				    : "wall-clock figures include the time other work took the CPU "
				      "(--clock cpu leaves it out of 1-thread figures)");
	printf("runs        up to %u after %u warm-up per measurement, cut after %u s once %u "
	       "have run; min and median of them\n",
	       o->loops, o->warmup, o->max_time_s, o->loops < 3 ? o->loops : 3);
	printf("\n%-12s %8s %11s %9s %11s   %s\n", "", "threads", "", "threads", "",
	       "measured with");
	printf("%-12s %8u %7.1f GFLOP/s %5u %7.1f GFLOP/s   %s\n", "fp32 peak", 1,
	       r->peak.single_gflops, r->peak.all_threads, r->peak.all_gflops, r->peak.kernel);
	printf("%-12s %8u %7.1f GB/s    %5u %7.1f GB/s      b[i] = s * a[i] over 2 x %zu MiB "
	       "(bytes read + written)\n",
	       "memory", 1, r->mem.single_gbs, r->mem.all_threads, r->mem.all_gbs,
	       r->mem.buffer_bytes >> 20);
}

static void print_models(const struct suite_opts *o, const struct suite_result *r)
{
	printf("\n%-13s %6s %3s %5s %10s %10s %8s %7s %8s  %s\n", "model", "GMACs", "thr",
	       "runs", "min ms", "median ms", "GFLOP/s", "% peak", "speed-up", "target");
	for (uint32_t i = 0; i < r->n_models; i++) {
		const struct suite_model *m = &r->models[i];

		for (uint32_t k = 0; k < o->n_threads; k++) {
			const struct suite_time *t = &m->t[k];
			enum target_kind kind;
			struct verdict v = model_verdict(r, o, m, t, &kind);
			double s = speedup(m, o, t);
			char sp[16], tv[96];

			if (t->threads == 1 || s <= 0)
				snprintf(sp, sizeof(sp), "-");
			else
				snprintf(sp, sizeof(sp), "%.2fx", s);
			verdict_text(&v, kind, tv, sizeof(tv));
			printf("%-13s %6.3f %3u %5u %10.3f %10.3f %8.1f %6.1f%% %8s  %s\n", m->name,
			       (double)m->macs * 1e-9, t->threads, t->runs, t->min_ms, t->median_ms,
			       gflops(m->macs, t->min_ms), pct_of_peak(r, m->macs, t), sp, tv);
		}
	}
}

static void print_classes(const struct suite_opts *o, const struct suite_result *r)
{
	printf("\n%s by conv layer class (each op timed through the op callbacks; share of the "
	       "summed medians)\n",
	       r->class_model);
	printf("%-11s %6s %6s %3s %10s %10s %8s %7s %6s\n", "class", "layers", "GMACs", "thr",
	       "min ms", "median ms", "GFLOP/s", "% peak", "share");
	for (uint32_t k = 0; k < o->n_threads; k++) {
		double total = 0;
		uint32_t thr = o->threads[k];

		for (int c = 0; c < SC_COUNT; c++)
			total += r->classes[c].median_ms[k];
		for (int c = 0; c < SC_COUNT; c++) {
			const struct suite_class_row *row = &r->classes[c];
			double g = gflops(row->macs, row->min_ms[k]), peak = suite_peak_for(r, thr);

			if (!row->layers) {
				printf("%-11s %6u %6s %3u %10s %10s %8s %7s %6s\n",
				       suite_class_names[c], 0, "-", thr, "-", "-", "-", "-", "-");
				continue;
			}
			printf("%-11s %6u %6.3f %3u %10.3f %10.3f %8.1f %6.1f%% %5.1f%%\n",
			       suite_class_names[c], row->layers, (double)row->macs * 1e-9, thr,
			       row->min_ms[k], row->median_ms[k], g,
			       peak > 0 ? 100.0 * g / peak : 0,
			       total > 0 ? 100.0 * row->median_ms[k] / total : 0);
		}
	}
}

static void print_int8(const struct suite_result *r, uint64_t macs)
{
	const struct suite_int8 *q = &r->int8;
	struct verdict v = make_verdict(int8_ratio(q), int8_goal(r->level));
	char tv[96];

	printf("\nint8 %s: quantised with %s ranges from %u random calibration sample%s, %u of "
	       "%u nodes int8 (%.1f s); 1 thread\n",
	       q->model, q->method, q->calib, q->calib == 1 ? "" : "s", q->quantized, q->nodes,
	       q->prepare_s);
	printf("%-9s %5s %10s %10s %8s %9s  %s\n", "", "runs", "min ms", "median ms", "GOP/s",
	       "vs fp32", "target");
	printf("%-9s %5u %10.3f %10.3f %8.1f %8.2fx  %s\n", "fp32", q->fp32.runs, q->fp32.min_ms,
	       q->fp32.median_ms, gflops(macs, q->fp32.min_ms), 1.0, "");
	if (v.has)
		verdict_text(&v, TK_INT8, tv, sizeof(tv));
	else
		snprintf(tv, sizeof(tv), "none at level %s (2x with VNNI, 4x with AMX)",
			 ert_cpu_level_name(r->level));
	printf("%-9s %5u %10.3f %10.3f %8.1f %8.3fx  %s\n", "int8", q->q8.runs, q->q8.min_ms,
	       q->q8.median_ms, gflops(macs, q->q8.min_ms), int8_ratio(q), tv);
}

static const struct suite_model *find_model(const struct suite_result *r, const char *name)
{
	for (uint32_t i = 0; i < r->n_models; i++)
		if (strcmp(r->models[i].name, name) == 0)
			return &r->models[i];
	return NULL;
}

/* Every target of issue 8, measured or not: @fn gets each in turn. */
static void for_each_target(const struct suite_opts *o, const struct suite_result *r,
			    void (*fn)(const char *model, const char *figure, enum target_kind,
				       const struct verdict *, bool measured, void *),
			    void *user)
{
	for (size_t i = 0; i < sizeof(pct_targets) / sizeof(pct_targets[0]); i++) {
		const struct suite_model *m = find_model(r, pct_targets[i].model);
		const struct suite_time *t = m ? time_at(m, o, 1) : NULL;
		struct verdict v = t ? make_verdict(pct_of_peak(r, m->macs, t), pct_targets[i].pct)
				     : (struct verdict){ .goal = pct_targets[i].pct };

		fn(pct_targets[i].model, "% of 1-core peak, 1 thread", TK_PCT, &v, t != NULL, user);
	}
	for (size_t i = 0; i < sizeof(speedup_models) / sizeof(speedup_models[0]); i++) {
		const struct suite_model *m = find_model(r, speedup_models[i]);
		const struct suite_time *t = m ? time_at(m, o, SPEEDUP_THREADS) : NULL;
		double s = t ? speedup(m, o, t) : 0;
		struct verdict v = s > 0 ? make_verdict(s, SPEEDUP_GOAL)
					 : (struct verdict){ .goal = SPEEDUP_GOAL };

		fn(speedup_models[i], "2 threads over 1", TK_SPEEDUP, &v, s > 0, user);
	}
	if (int8_goal(r->level) > 0) {
		struct verdict v = r->int8.done ? make_verdict(int8_ratio(&r->int8),
							       int8_goal(r->level))
						: (struct verdict){ .goal = int8_goal(r->level) };

		fn("resnet50", "int8 over fp32, 1 thread", TK_INT8, &v, r->int8.done, user);
	}
}

struct target_count {
	uint32_t met, missed, unmeasured;
};

static void print_target(const char *model, const char *figure, enum target_kind kind,
			 const struct verdict *v, bool measured, void *user)
{
	struct target_count *c = user;
	char value[32], tv[128];

	if (!measured) {
		c->unmeasured++;
		printf("  %-13s %-28s %9s  not measured in this run\n", model, figure, "-");
		return;
	}
	c->met += v->met;
	c->missed += !v->met;
	if (kind == TK_PCT)
		snprintf(value, sizeof(value), "%.1f%%", v->value);
	else
		snprintf(value, sizeof(value), "%.3fx", v->value);
	verdict_text(v, kind, tv, sizeof(tv));
	printf("  %-13s %-28s %9s  %s\n", model, figure, value, tv);
}

void suite_print_text(const struct suite_opts *o, const struct suite_result *r)
{
	struct target_count c = { 0 };
	const struct suite_model *cm = r->class_model ? find_model(r, r->class_model) : NULL;

	print_machine(o, r);
	print_models(o, r);
	if (r->class_model)
		print_classes(o, r);
	if (r->int8.done && cm)
		print_int8(r, cm->macs);
	printf("\ntargets (issue 8)\n");
	for_each_target(o, r, print_target, &c);
	printf("targets: %u met, %u missed, %u not measured; %.1f s in all\n", c.met, c.missed,
	       c.unmeasured, r->elapsed_s);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_time(const struct suite_time *t)
{
	printf("\"threads\": %u, \"warmup\": %u, \"runs\": %u, \"min_ms\": %.4f, "
	       "\"median_ms\": %.4f",
	       t->threads, t->warmup, t->runs, t->min_ms, t->median_ms);
}

struct json_targets {
	bool first;
};

static void json_target(const char *model, const char *figure, enum target_kind kind,
			const struct verdict *v, bool measured, void *user)
{
	struct json_targets *j = user;
	static const char *const kinds[] = { "pct_of_peak_1t", "speedup_2t", "int8_speedup_1t" };

	printf("%s\n    {\"model\": \"%s\", \"figure\": \"%s\", \"description\": ",
	       j->first ? "" : ",", model, kinds[kind]);
	cli_json_string(stdout, figure);
	printf(", \"goal\": %.4g, \"measured\": %s", v->goal, measured ? "true" : "false");
	if (measured)
		printf(", \"value\": %.4f, \"met\": %s, \"factor_needed\": %.4f", v->value,
		       v->met ? "true" : "false", v->met ? 1.0 : v->goal / v->value);
	printf("}");
	j->first = false;
}

void suite_print_json(const struct suite_opts *o, const struct suite_result *r)
{
	const struct suite_model *cm = r->class_model ? find_model(r, r->class_model) : NULL;
	struct json_targets jt = { .first = true };

	printf("{\n  \"cpu\": ");
	cli_json_string(stdout, r->cpu);
	printf(",\n  \"level\": \"%s\", \"online_cpus\": %u, \"cpus\": %u, \"threads\": [",
	       ert_cpu_level_name(r->level), r->online, r->cpus);
	for (uint32_t k = 0; k < o->n_threads; k++)
		printf("%s%u", k ? ", " : "", o->threads[k]);
	printf("],\n  \"loops\": %u, \"warmup\": %u, \"max_time_s\": %u, \"clock\": \"%s\",\n",
	       o->loops, o->warmup, o->max_time_s, o->cpu_clock ? "cpu" : "wall");
	printf("  \"load_start\": %.2f, \"load_end\": %.2f, \"elapsed_s\": %.2f,\n",
	       r->load_start, r->load_end, r->elapsed_s);
	printf("  \"peak\": {\"kernel\": ");
	cli_json_string(stdout, r->peak.kernel);
	printf(", \"gflops_1\": %.3f, \"gflops_all\": %.3f, \"all_threads\": %u},\n",
	       r->peak.single_gflops, r->peak.all_gflops, r->peak.all_threads);
	printf("  \"memory\": {\"buffer_bytes\": %zu, \"gbs_1\": %.3f, \"gbs_all\": %.3f, "
	       "\"all_threads\": %u},\n",
	       r->mem.buffer_bytes, r->mem.single_gbs, r->mem.all_gbs, r->mem.all_threads);
	printf("  \"models\": [");
	for (uint32_t i = 0; i < r->n_models; i++) {
		const struct suite_model *m = &r->models[i];

		printf("%s\n    {\"name\": \"%s\", \"macs\": %llu, \"runs\": [", i ? "," : "",
		       m->name, (unsigned long long)m->macs);
		for (uint32_t k = 0; k < o->n_threads; k++) {
			const struct suite_time *t = &m->t[k];
			double s = speedup(m, o, t);

			printf("%s\n      {", k ? "," : "");
			json_time(t);
			printf(", \"gflops\": %.3f, \"pct_of_peak\": %.3f, \"peak_gflops\": %.3f, "
			       "\"speedup\": ",
			       gflops(m->macs, t->min_ms), pct_of_peak(r, m->macs, t),
			       suite_peak_for(r, t->threads));
			if (s > 0)
				printf("%.4f}", s);
			else
				printf("null}");
		}
		printf("]}");
	}
	printf("\n  ],\n  \"conv_classes\": ");
	if (r->class_model) {
		printf("{\"model\": \"%s\", \"classes\": [", r->class_model);
		for (int c = 0; c < SC_COUNT; c++) {
			const struct suite_class_row *row = &r->classes[c];

			printf("%s\n    {\"class\": \"%s\", \"layers\": %u, \"macs\": %llu, \"runs\": [",
			       c ? "," : "", suite_class_names[c], row->layers,
			       (unsigned long long)row->macs);
			for (uint32_t k = 0; row->layers && k < o->n_threads; k++) {
				double g = gflops(row->macs, row->min_ms[k]);
				double peak = suite_peak_for(r, o->threads[k]);

				printf("%s{\"threads\": %u, \"min_ms\": %.4f, \"median_ms\": %.4f, "
				       "\"gflops\": %.3f, \"pct_of_peak\": %.3f}",
				       k ? ", " : "", o->threads[k], row->min_ms[k],
				       row->median_ms[k], g, peak > 0 ? 100.0 * g / peak : 0);
			}
			printf("]}");
		}
		printf("\n  ]}");
	} else {
		printf("null");
	}
	printf(",\n  \"int8\": ");
	if (r->int8.done && cm) {
		const struct suite_int8 *q = &r->int8;

		printf("{\"model\": \"%s\", \"method\": \"%s\", \"calib\": %u, \"quantized_nodes\": "
		       "%u, \"nodes\": %u, \"prepare_s\": %.2f,\n    \"fp32\": {",
		       q->model, q->method, q->calib, q->quantized, q->nodes, q->prepare_s);
		json_time(&q->fp32);
		printf("}, \"int8\": {");
		json_time(&q->q8);
		printf("}, \"speedup\": %.4f}", int8_ratio(q));
	} else {
		printf("null");
	}
	printf(",\n  \"targets\": [");
	for_each_target(o, r, json_target, &jt);
	printf("\n  ]\n}\n");
}
