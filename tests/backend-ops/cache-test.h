/* SPDX-License-Identifier: MIT */
/*
 * cache-test.h — what the GPU backends' cache-file tests share
 * (test-ocl-cache.c, test-vk-cache.c): the checks' tally (tap-check.h),
 * the model and its input, whole-file reads and writes, and the threads of
 * the tests of sessions sharing a device.
 */
#ifndef ERT_CACHE_TEST_H
#define ERT_CACHE_TEST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgert.h"
#include "ert-graph.h"
#include "ert-test-model.h"
#include "tap-check.h"

/* Elements of the model's input and output. */
#define CT_N_X 300


/*
 * y = Softmax(Relu(x) * x + x) on a 3 x 100 input: an elementwise kernel,
 * two binary ones and a row reduction.
 */
static ert_model *cache_test_model(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dims[2] = { 3, CT_N_X / 3 };
	int32_t x, a, b, c, y;

	if (!g)
		return NULL;
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, dims);
	a = ert_graph_add_tensor(g, "a", ERT_DTYPE_FLOAT32, -1, NULL);
	b = ert_graph_add_tensor(g, "b", ERT_DTYPE_FLOAT32, -1, NULL);
	c = ert_graph_add_tensor(g, "c", ERT_DTYPE_FLOAT32, -1, NULL);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &x, 1, &a);
	ert_graph_add_node(g, ERT_OP_Mul, "mul", 2, (int32_t[]){ a, x }, 1, &b);
	ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ b, x }, 1, &c);
	ert_graph_add_node(g, ERT_OP_Softmax, "softmax", 1, &c, 1, &y);
	ert_graph_add_output(g, y);
	return model_from_graph(g);
}

/* One run of @s on the test's input: its output in @y, or false. */
static bool cache_test_run(ert_session *s, float *y)
{
	float x[CT_N_X];

	for (int i = 0; i < CT_N_X; i++)
		x[i] = (float)((i * 37) % 23) * 0.25f - 2.5f;
	if (ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, x, sizeof(x)) != ERT_OK ||
	    ert_session_run(s) != ERT_OK)
		return false;
	memcpy(y, ert_tensor_data(ert_session_get_output(s, 0)), CT_N_X * sizeof(*y));
	return true;
}

/* The bytes of file @p (malloc'd, *@size of them), or NULL when it is missing or empty. */
static unsigned char *read_file(const char *p, size_t *size)
{
	FILE *f = fopen(p, "rb");
	unsigned char *buf = NULL;
	long n;

	*size = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) == (size_t)n)
		*size = (size_t)n;
	fclose(f);
	if (!*size) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool write_file(const char *p, const void *buf, size_t size)
{
	FILE *f = fopen(p, "wb");
	bool ok = f && fwrite(buf, 1, size, f) == size;

	return f && fclose(f) == 0 && ok;
}

/* ---- sessions of one process sharing a device ---- */

/* Runs @s @n times, each output compared with @ref; false at the first failure. */
static bool runs_match(ert_session *s, const float *ref, int n)
{
	float y[CT_N_X];

	for (int i = 0; i < n; i++)
		if (!cache_test_run(s, y) || memcmp(y, ref, sizeof(y)))
			return false;
	return true;
}

/*
 * Two sessions of one device: each run twice, then one destroyed (@a when
 * @first_goes, else @b), the other run twice more while @open() (the
 * backend's count of open devices) still says @open_both, then destroyed:
 * checked (every output @ref, nothing open at the end).
 */
static void destroy_in_turn(ert_session *a, ert_session *b, bool first_goes, const float *ref,
			    uint32_t (*open)(void), uint32_t open_both)
{
	bool ok = runs_match(a, ref, 2) && runs_match(b, ref, 2);
	char why[200];

	ert_session_destroy(first_goes ? a : b);
	ok = ok && runs_match(first_goes ? b : a, ref, 2) && open() == open_both;
	ert_session_destroy(first_goes ? b : a);
	snprintf(why, sizeof(why), "outputs %s, devices open at the end %u",
		 ok ? "the same" : "differ or a run failed", open());
	check(ok && open() == 0,
	      first_goes ? "the first destroyed first: the second runs on, the last closes the device" :
			   "the second destroyed first: the first runs on, the last closes the device",
	      why);
}

struct runner {
	ert_session *s;
	const float *ref;
	int runs;
	bool ok;
	pthread_barrier_t *ready;    /* passed once the first run is done (or NULL) */
};

static void *run_thread(void *arg)
{
	struct runner *r = arg;

	r->ok = runs_match(r->s, r->ref, 1);
	if (r->ready)
		pthread_barrier_wait(r->ready);
	r->ok = r->ok && runs_match(r->s, r->ref, r->runs);
	return NULL;
}

/*
 * @a destroyed while @b runs 1 + @runs times on another thread (from its
 * first run on); then @b destroyed. Whether every run of @b gave @ref; *@why
 * says what failed.
 */
static bool destroy_while_running(ert_session *a, ert_session *b, const float *ref, int runs,
				  const char **why)
{
	pthread_barrier_t ready;
	struct runner r = { .s = b, .ref = ref, .runs = runs, .ready = &ready };
	pthread_t t;

	*why = "runs failed or differed";
	if (pthread_barrier_init(&ready, NULL, 2) != 0) {
		*why = "pthread_barrier_init";
		ert_session_destroy(b);
		ert_session_destroy(a);
		return false;
	}
	if (pthread_create(&t, NULL, run_thread, &r) != 0) {
		*why = "pthread_create";
		ert_session_destroy(b);
		ert_session_destroy(a);
		pthread_barrier_destroy(&ready);
		return false;
	}
	pthread_barrier_wait(&ready);
	ert_session_destroy(a);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&ready);
	ert_session_destroy(b);
	return r.ok;
}

#define CT_THREADS 4

/* A session made on its own thread, at once with others (concurrent_sessions). */
struct maker {
	ert_model *m;
	const float *ref;
	pthread_barrier_t *start, *made;
	ert_status (*open)(ert_model *m, ert_session **out);
	void (*note)(struct maker *k);  /* what the backend did, while every session is open */
	ert_session *s;
	uint32_t made_here, shared;     /* what note() counted */
	bool ok;
};

static void *make_thread(void *arg)
{
	struct maker *k = arg;

	pthread_barrier_wait(k->start);
	k->ok = k->open(k->m, &k->s) == ERT_OK;
	/* every session made before any goes: they all overlap */
	pthread_barrier_wait(k->made);
	if (k->ok)
		k->note(k);
	k->ok = k->ok && runs_match(k->s, k->ref, 30);
	ert_session_destroy(k->s);
	return NULL;
}

/*
 * CT_THREADS sessions of @m made at once, one a thread, with @open; each
 * noted with @note once all are made, then run 30 times against @ref and
 * destroyed. Whether all were made and ran right; @k holds what each did.
 */
static bool concurrent_sessions(ert_model *m, const float *ref,
				ert_status (*open)(ert_model *m, ert_session **out),
				void (*note)(struct maker *k), struct maker k[CT_THREADS])
{
	pthread_barrier_t start, made;
	pthread_t t[CT_THREADS];
	bool ok = true;
	int n;

	memset(k, 0, CT_THREADS * sizeof(*k));
	if (pthread_barrier_init(&start, NULL, CT_THREADS) != 0 ||
	    pthread_barrier_init(&made, NULL, CT_THREADS) != 0)
		return false;
	for (n = 0; n < CT_THREADS; n++) {
		k[n] = (struct maker){ .m = m, .ref = ref, .start = &start, .made = &made,
				       .open = open, .note = note };
		if (pthread_create(&t[n], NULL, make_thread, &k[n]) != 0)
			break;
	}
	if (n < CT_THREADS) {
		/* the threads started wait at the barrier for ever: nothing to do but stop */
		printf("not ok - sessions created at once on several threads: pthread_create\n");
		exit(1);
	}
	for (int i = 0; i < CT_THREADS; i++) {
		pthread_join(t[i], NULL);
		ok = ok && k[i].ok;
	}
	pthread_barrier_destroy(&start);
	pthread_barrier_destroy(&made);
	return ok;
}

#endif
