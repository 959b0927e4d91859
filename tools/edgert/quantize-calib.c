/* SPDX-License-Identifier: MIT */
/* edgert quantize: calibration samples and the float runs that collect statistics. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inputs.h"
#include "npy.h"
#include "quantize.h"
#include "session/session-impl.h"

/* ---- progress -------------------------------------------------------- */

#define BAR_WIDTH 30

void q_progress(const char *what, uint32_t done, uint32_t total)
{
	char bar[BAR_WIDTH + 1];
	uint32_t fill;

	if (!cli_progress_enabled() || !total)
		return;
	fill = (uint32_t)((uint64_t)done * BAR_WIDTH / total);
	memset(bar, '#', fill);
	memset(bar + fill, '.', BAR_WIDTH - fill);
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr, "\r\033[Kedgert quantize: %s [%s] %u/%u", what, bar, done, total);
	fflush(stderr);
}

/* ---- samples ---------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Path of input @k's file in sample @e ("DIR/e" or "DIR/e/<input>.npy"). */
static void sample_path(const struct q_samples *s, uint32_t e, const char *input, char *buf,
			size_t size)
{
	char fname[256];

	if (!input) {
		snprintf(buf, size, "%s/%s", s->dir, s->entries[e]);
		return;
	}
	cli_file_name(input, "input", fname, sizeof(fname));
	snprintf(buf, size, "%s/%s/%s.npy", s->dir, s->entries[e], fname);
}

static bool list_dir(struct q_samples *s, bool dirs)
{
	DIR *d = opendir(s->dir);
	struct dirent *de;
	uint32_t cap = 0;

	if (!d)
		return cli_error(s->cmd, "cannot open calibration directory '%s': %s", s->dir,
				 strerror(errno)),
		       false;
	while ((de = readdir(d))) {
		char path[4096];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", s->dir, de->d_name);
		if (stat(path, &st) != 0)
			continue;
		if (dirs ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode) || !ends_with(de->d_name, ".npy"))
			continue;
		if (s->count == cap) {
			uint32_t ncap = cap ? 2 * cap : 16;
			char **n = realloc(s->entries, ncap * sizeof(*n));

			if (!n)
				goto oom;
			s->entries = n;
			cap = ncap;
		}
		s->entries[s->count] = strdup(de->d_name);
		if (!s->entries[s->count])
			goto oom;
		s->count++;
	}
	closedir(d);
	if (s->count)
		qsort(s->entries, s->count, sizeof(*s->entries), cmp_str);
	return true;
oom:
	closedir(d);
	return cli_error(s->cmd, "out of memory listing '%s'", s->dir), false;
}

bool q_samples_open(struct q_samples *s, const char *cmd, const char *dir, uint32_t count,
		    uint64_t seed, ert_model *model)
{
	uint32_t n_in = ert_model_input_count(model);

	memset(s, 0, sizeof(*s));
	s->cmd = cmd;
	s->model = model;
	s->seed = seed;
	if (!dir) {
		s->count = count;
		return true;
	}
	s->dir = dir;
	if (!list_dir(s, n_in > 1))
		return false;
	if (!s->count) {
		if (n_in > 1)
			cli_error(cmd, "no calibration samples in '%s': the model has %u inputs, so each sample is a directory holding <input>.npy files",
				  dir, n_in);
		else
			cli_error(cmd, "no calibration samples in '%s': expected one .npy file per sample",
				  dir);
		q_samples_close(s);
		return false;
	}
	/* several inputs: every sample must hold every input before any run starts */
	for (uint32_t e = 0; n_in > 1 && e < s->count; e++) {
		for (uint32_t k = 0; k < n_in; k++) {
			char path[4096];

			sample_path(s, e, ert_model_input_name(model, k), path, sizeof(path));
			if (access(path, R_OK) != 0) {
				cli_error(cmd, "calibration sample '%s/%s' has no file for input '%s': cannot open '%s': %s",
					  dir, s->entries[e], ert_model_input_name(model, k), path,
					  strerror(errno));
				q_samples_close(s);
				return false;
			}
		}
	}
	return true;
}

void q_samples_close(struct q_samples *s)
{
	for (uint32_t i = 0; s->entries && i < s->count; i++)
		free(s->entries[i]);
	free(s->entries);
	memset(s, 0, sizeof(*s));
}

/* Read @path for input @k: element type and the model's fixed dimensions must match. */
static bool feed_file(const struct q_samples *s, ert_session *sess, uint32_t k, const char *path)
{
	const struct ert_graph *g = ert_model_graph(s->model);
	const struct ert_tensor *gt = &g->tensors[g->inputs[k]];
	struct cli_tensor t = { .name = "" };
	struct npy_array a;
	char err[512];
	bool same;

	if (!npy_read_file(path, &a, err, sizeof(err)))
		return cli_error(s->cmd, "calibration file: %s", err), false;
	same = gt->rank < 0 || gt->rank == a.rank;
	for (int32_t d = 0; same && gt->rank >= 0 && d < a.rank; d++)
		same = gt->dims[d] < 0 || gt->dims[d] == a.dims[d];
	if (a.dtype != gt->dtype) {
		cli_error(s->cmd, "calibration file '%s' holds %s, input '%s' is %s", path,
			  ert_dtype_name(a.dtype), gt->name, ert_dtype_name(gt->dtype));
		free(a.data);
		return false;
	}
	if (!same) {
		char want[128], have[128];

		cli_format_shape(want, sizeof(want), gt->rank, gt->dims, gt->dim_names);
		cli_format_shape(have, sizeof(have), a.rank, a.dims, NULL);
		cli_error(s->cmd, "calibration file '%s' has shape %s, input '%s' is %s", path, have,
			  gt->name, want);
		free(a.data);
		return false;
	}
	t.dtype = a.dtype;
	t.rank = a.rank;
	memcpy(t.dims, a.dims, sizeof(t.dims));
	t.data = a.data;
	t.nbytes = a.nbytes;
	same = cli_input_set(s->cmd, sess, k, &t, path);
	cli_tensor_free(&t);
	return same;
}

bool q_samples_feed(const struct q_samples *s, uint32_t k, ert_session *sess)
{
	uint32_t n_in = ert_session_input_count(sess);
	char path[4096];

	if (!s->dir)
		return cli_inputs_random(s->cmd, sess, s->seed + k);
	for (uint32_t i = 0; i < n_in; i++) {
		sample_path(s, k, n_in > 1 ? ert_tensor_name(ert_session_get_input(sess, i)) : NULL,
			    path, sizeof(path));
		if (!feed_file(s, sess, i, path))
			return false;
	}
	return true;
}

/* ---- per-step outputs --------------------------------------------------- */

static bool grow(void **p, size_t n, size_t size)
{
	void *q = realloc(*p, n * size);

	if (q)
		*p = q;
	return q != NULL;
}

static void visit_step(const struct ert_node *node, const struct ert_value *const *in,
		       uint32_t n_in, const struct ert_value *const *out, uint32_t n_out,
		       const char *backend, void *user)
{
	struct q_step_map *m = user;

	if (m->failed)
		return;
	if (m->n_steps == m->cap) {
		uint32_t cap = m->cap ? 2 * m->cap : 64;

		if (!grow((void **)&m->node, cap, sizeof(*m->node)) ||
		    !grow((void **)&m->out, cap, sizeof(*m->out)) ||
		    !grow((void **)&m->n_out, cap, sizeof(*m->n_out))) {
			m->failed = true;
			return;
		}
		m->cap = cap;
	}
	m->node[m->n_steps] = node;
	m->out[m->n_steps] = out;
	m->n_out[m->n_steps] = n_out;
	m->n_steps++;
}

bool q_step_map_update(struct q_step_map *m, ert_session *sess, const char *cmd)
{
	ert_status st;

	m->n_steps = 0;
	m->failed = false;
	st = ert_session_visit_steps(sess, visit_step, m);
	if (st != ERT_OK)
		return cli_error(cmd, "failed to plan the model: %s", ert_session_error(sess)),
		       false;
	if (m->failed)
		return cli_error(cmd, "out of memory"), false;
	return true;
}

void q_step_map_free(struct q_step_map *m)
{
	free(m->node);
	free(m->out);
	free(m->n_out);
	memset(m, 0, sizeof(*m));
}

/* ---- calibration ------------------------------------------------------- */

struct calib_run {
	struct q_step_map map;
	struct q_stats *stats;
	bool hist;   /* second pass: histograms */
};

static void observe(struct calib_run *c, int32_t t, const float *x, size_t n)
{
	if (c->hist)
		q_stats_hist_update(&c->stats[t], x, n);
	else
		q_stats_update(&c->stats[t], x, n);
}

static int calib_after_op(const ert_op_info *op, void *user)
{
	struct calib_run *c = user;
	const struct ert_node *node;

	/* steps of the session's graph only (a subgraph's ops repeat their indices) */
	if (op->depth || op->index >= c->map.n_steps)
		return 0;
	node = c->map.node[op->index];
	for (uint32_t k = 0; k < c->map.n_out[op->index] && k < node->n_outputs; k++) {
		const struct ert_value *v = c->map.out[op->index][k];

		if (v && node->outputs[k] >= 0 && v->dtype == ERT_DTYPE_FLOAT32 && v->data)
			observe(c, node->outputs[k], v->data, (size_t)v->numel);
	}
	return 0;
}

/* Histograms span the range the first pass found. */
static bool alloc_hists(struct q_stats *stats, uint32_t n)
{
	for (uint32_t t = 0; t < n; t++) {
		float a = fabsf(stats[t].min), b = fabsf(stats[t].max);

		if (!stats[t].samples)
			continue;
		stats[t].hist_max = a > b ? a : b;
		stats[t].hist = calloc(Q_HIST_BINS, sizeof(uint32_t));
		if (!stats[t].hist)
			return false;
	}
	return true;
}

static bool calib_pass(struct calib_run *c, ert_session *sess, const struct q_samples *s,
		       const char *what)
{
	const struct ert_graph *g = ert_model_graph(sess->model);

	for (uint32_t k = 0; k < s->count; k++) {
		q_progress(what, k, s->count);
		if (!q_samples_feed(s, k, sess) || !q_step_map_update(&c->map, sess, s->cmd))
			return false;
		for (uint32_t i = 0; i < g->n_inputs; i++) {
			const ert_tensor *in = ert_session_get_input(sess, i);

			if (ert_tensor_dtype(in) == ERT_DTYPE_FLOAT32)
				observe(c, g->inputs[i], ert_tensor_data(in),
					ert_tensor_element_count(in));
		}
		if (ert_session_run(sess) != ERT_OK) {
			cli_progress_done();
			return cli_error(s->cmd, "failed to run the float model on calibration sample %u: %s",
					 k, ert_session_error(sess)),
			       false;
		}
	}
	q_progress(what, s->count, s->count);
	cli_progress_done();
	return true;
}

bool q_calibrate(ert_model *model, const ert_config *cfg, const struct q_samples *s,
		 enum q_method method, struct q_stats *stats)
{
	const struct ert_graph *g = ert_model_graph(model);
	struct calib_run c = { .stats = stats };
	ert_session *sess = NULL;
	ert_config sc = *cfg;
	bool ok = false;

	sc.after_op = calib_after_op;
	sc.callback_user = &c;
	if (ert_session_create(model, &sc, &sess) != ERT_OK)
		return cli_error(s->cmd, "failed to create a session for the float model: %s",
				 ert_last_error()),
		       false;
	if (!calib_pass(&c, sess, s, "calibrating"))
		goto out;
	if (method == Q_METHOD_KL) {
		if (!alloc_hists(stats, g->n_tensors)) {
			cli_error(s->cmd, "out of memory for the KL histograms");
			goto out;
		}
		c.hist = true;
		if (!calib_pass(&c, sess, s, "histograms"))
			goto out;
	}
	ok = true;
out:
	q_step_map_free(&c.map);
	ert_session_destroy(sess);
	return ok;
}

void q_stats_free(struct q_stats *stats, uint32_t n)
{
	for (uint32_t t = 0; stats && t < n; t++)
		free(stats[t].hist);
	free(stats);
}
