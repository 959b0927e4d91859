/* SPDX-License-Identifier: MIT */
/*
 * The OpenCL backend's cache file (ert_config.cache_path, ocl-cache.c): a
 * cold session builds its programs and writes the file; a warm one loads
 * every program from it and computes the same outputs; a damaged, truncated,
 * foreign (another device, with a valid checksum) or unrelated file is
 * ignored with a warning, the programs are built, and the file is rewritten
 * so that the next session is warm again; a path that cannot be written
 * leaves the session working. Tuned launches (ert_config.tune) are kept in
 * the same file: a cold session times them and writes them, a warm one
 * times nothing and computes the same outputs, NONE times nothing and uses
 * the built-in sizes, a wider mode tunes again and its choices serve a
 * narrower one, an entry that is not a candidate of its launch is refused
 * (that launch tuned again) and an entry out of any range makes the file
 * damaged. With no OpenCL platform every check is reported skipped.
 *
 * Prints one line per check and ends with "N passed, N failed, N skipped".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "edgert.h"
#include "ert-backend-impl.h"
#include "ert-graph.h"
#include "ert-test-model.h"
#include "opencl/ocl-impl.h"
#include "session/session-impl.h"

#define N_X 300

static int passed, failed;
static char dir[64], path[128];

static void check(bool ok, const char *what, const char *why)
{
	if (ok) {
		passed++;
		printf("ok - %s\n", what);
	} else {
		failed++;
		printf("not ok - %s: %s\n", what, why);
	}
}

/* y = Relu(x) * x + x, in two programs (eltwise's unary and binary kernels) and a Softmax (norm). */
static ert_model *test_model(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dims[2] = { 3, N_X / 3 };
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

struct outcome {
	uint32_t loaded, built;
	uint32_t timed, reused, refused;
	bool rejected;
	char note[384];
	float y[N_X];
	bool ran;
	char error[512];
};

/* One session on OpenCL with the cache file at @p, tuning with @mode: what its cache did, and its output. */
static struct outcome session_tuned(ert_model *m, const char *p, ert_tune mode)
{
	struct outcome o = { 0 };
	ert_session *s = NULL;
	float x[N_X];
	ert_config cfg;

	ert_config_init(&cfg);
	cfg.backends[0] = ERT_BACKEND_OPENCL;
	cfg.num_backends = 1;
	cfg.cache_path = p;
	cfg.tune = mode;
	if (ert_session_create(m, &cfg, &s) != ERT_OK) {
		snprintf(o.error, sizeof(o.error), "session: %s", ert_last_error());
		return o;
	}
	const struct ert_ocl_cache *c = ert_opencl_backend_cache(s->backends[0]);

	if (c) {
		o.loaded = c->loaded;
		o.built = c->built;
		o.rejected = c->rejected;
		o.timed = c->tune_timed;
		o.reused = c->tune_reused;
		o.refused = c->tune_refused;
		snprintf(o.note, sizeof(o.note), "%s", c->note);
	}
	for (int i = 0; i < N_X; i++)
		x[i] = (float)((i * 37) % 23) * 0.25f - 2.5f;
	if (ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, x, sizeof(x)) != ERT_OK ||
	    ert_session_run(s) != ERT_OK) {
		snprintf(o.error, sizeof(o.error), "run: %s", ert_session_error(s));
	} else {
		memcpy(o.y, ert_tensor_data(ert_session_get_output(s, 0)), sizeof(o.y));
		o.ran = true;
	}
	ert_session_destroy(s);
	return o;
}

static struct outcome session(ert_model *m, const char *p)
{
	return session_tuned(m, p, ERT_TUNE_FAST);
}

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

/*
 * A file the cache must refuse with a note containing @reason, then rebuild
 * and rewrite; the next session must load every program again.
 */
static void refused(ert_model *m, const char *what, const void *bytes, size_t size,
		    const char *reason, const struct outcome *cold)
{
	char why[1200], name[160];
	struct outcome o, after;

	if (!write_file(path, bytes, size)) {
		check(false, what, "cannot write the test file");
		return;
	}
	o = session(m, path);
	snprintf(why, sizeof(why), "loaded %u, built %u, rejected %d, note '%s', %s", o.loaded,
		 o.built, o.rejected, o.note, o.error);
	snprintf(name, sizeof(name), "%s: ignored with a warning, programs built", what);
	check(o.ran && o.rejected && !o.loaded && o.built == cold->built &&
	      strstr(o.note, reason) && strstr(o.note, path) &&
	      !memcmp(o.y, cold->y, sizeof(o.y)), name, why);
	after = session(m, path);
	snprintf(why, sizeof(why), "loaded %u, built %u, note '%s', %s", after.loaded, after.built,
		 after.note, after.error);
	snprintf(name, sizeof(name), "%s: rewritten, the next session loads every program", what);
	check(after.ran && after.loaded == cold->built && !after.built && !after.rejected, name,
	      why);
}

/*
 * The tuning entry of kernel @name in the file's table (at its end, after
 * the binaries, which may hold the name too): the offset of its first local
 * size, or 0.
 */
static size_t tuned_lws_at(const unsigned char *buf, size_t size, const char *name)
{
	uint32_t len = (uint32_t)strlen(name);

	for (size_t at = size - 8 - len; at >= 4; at--) {
		uint32_t l;

		memcpy(&l, buf + at - 4, 4);
		/* name, source, shape, mode, variant, then lws */
		if (l == len && !memcmp(buf + at, name, len) && at + len + 28 + 12 <= size - 8)
			return at + len + 8 + 8 + 4 + 4;
	}
	return 0;
}

static void tuning(ert_model *m, const unsigned char *good, size_t size,
		   const struct outcome *cold)
{
	unsigned char *bad = malloc(size);
	char why[1200];
	struct outcome o, n, f;
	size_t at = tuned_lws_at(good, size, "unary_f32");
	uint32_t lws = 0;
	uint64_t sum;

	/* NONE: the built-in sizes, nothing timed or read, the same output */
	o = session_tuned(m, path, ERT_TUNE_NONE);
	snprintf(why, sizeof(why), "timed %u, reused %u, %s", o.timed, o.reused, o.error);
	check(o.ran && !o.timed && !o.reused && !memcmp(o.y, cold->y, sizeof(o.y)),
	      "tune none: nothing timed or taken from the file, the same output", why);

	/* a wider mode tunes again; its choices then serve FAST */
	n = session_tuned(m, path, ERT_TUNE_NORMAL);
	f = session(m, path);
	snprintf(why, sizeof(why), "normal: timed %u, reused %u, %s; fast after it: timed %u, reused %u",
		 n.timed, n.reused, n.error, f.timed, f.reused);
	check(n.ran && n.timed >= cold->timed && f.ran && !f.timed &&
	      f.reused == cold->timed + cold->reused && !memcmp(n.y, cold->y, sizeof(n.y)),
	      "tune normal: tunes FAST's launches again, FAST then takes NORMAL's choices", why);

	if (!bad || !at) {
		check(false, "a tuning entry in the file", "no entry for unary_f32 at the file's end");
		failed += 3;
		free(bad);
		return;
	}
	/* an entry that is no candidate of its launch (a local size of 96): refused, tuned again */
	memcpy(bad, good, size);
	lws = 96;
	memcpy(bad + at, &lws, 4);
	sum = ert_ocl_hash(ERT_OCL_HASH_INIT, bad, size - 8);
	memcpy(bad + size - 8, &sum, 8);
	if (!write_file(path, bad, size)) {
		check(false, "a refused tuning entry", "cannot write the test file");
	} else {
		o = session(m, path);
		n = session(m, path);
		snprintf(why, sizeof(why),
			 "loaded %u, rejected %d, timed %u, refused %u, %s; next: timed %u, refused %u",
			 o.loaded, o.rejected, o.timed, o.refused, o.error, n.timed, n.refused);
		check(o.ran && !o.rejected && o.loaded == cold->built && o.refused == 1 &&
		      o.timed == 1 && !memcmp(o.y, cold->y, sizeof(o.y)) && n.ran && !n.timed &&
		      !n.refused,
		      "a tuning entry that is no candidate: refused and tuned again, the rest used, "
		      "then rewritten",
		      why);
	}
	/* an entry out of any range (a local size of 7777): the file is damaged */
	memcpy(bad, good, size);
	lws = 7777;
	memcpy(bad + at, &lws, 4);
	sum = ert_ocl_hash(ERT_OCL_HASH_INIT, bad, size - 8);
	memcpy(bad + size - 8, &sum, 8);
	refused(m, "a tuning entry out of range", bad, size, "damaged (tuning entry)", cold);
	free(bad);
}

int main(void)
{
	struct ert_err err = { "" };
	struct ert_backend *be = NULL;
	char why[1200], dev[128];
	unsigned char *good;
	size_t size;
	ert_model *m;

	if (ert_backend_create(ERT_BACKEND_OPENCL, NULL, &be, &err) != ERT_OK) {
		printf("# opencl: skipped (%s)\n", err.msg);
		printf("0 passed, 0 failed, 17 skipped\n");
		return 0;
	}
	snprintf(dev, sizeof(dev), "%s", ert_opencl_backend_device(be));
	ert_backend_destroy(be);
	printf("# opencl: %s\n", dev);
	snprintf(dir, sizeof(dir), "/tmp/ert-ocl-cache.XXXXXX");
	m = test_model();
	if (!m || !mkdtemp(dir)) {
		printf("not ok - setup\n0 passed, 1 failed\n");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/kernels.cache", dir);

	/* cold: no file yet */
	struct outcome cold = session(m, path);

	good = read_file(path, &size);
	snprintf(why, sizeof(why), "loaded %u, built %u, note '%s', %s, file %zu bytes",
		 cold.loaded, cold.built, cold.note, cold.error, size);
	check(cold.ran && cold.built >= 2 && !cold.loaded && !cold.rejected && !cold.note[0] &&
	      good && size > 64, "cold: programs built, the file written", why);

	/* warm: every program from the file, same output */
	struct outcome warm = session(m, path);

	snprintf(why, sizeof(why), "loaded %u, built %u, note '%s', %s", warm.loaded, warm.built,
		 warm.note, warm.error);
	check(warm.ran && warm.loaded == cold.built && !warm.built && !warm.rejected &&
	      !memcmp(warm.y, cold.y, sizeof(warm.y)),
	      "warm: every program loaded from the file, the same output", why);
	snprintf(why, sizeof(why), "cold: timed %u, reused %u; warm: timed %u, reused %u, refused %u",
		 cold.timed, cold.reused, warm.timed, warm.reused, warm.refused);
	check(cold.timed >= 2 && warm.ran && !warm.timed && !warm.refused &&
	      warm.reused == cold.timed + cold.reused,
	      "tuning: the cold session times its launches, the warm one takes them all from the file",
	      why);
	if (!good) {
		printf("%d passed, %d failed, 0 skipped\n", passed, failed + 14);
		return 1;
	}
	tuning(m, good, size, &cold);
	unsigned char *bad = malloc(size);

	if (!bad)
		return 1;
	/* damaged: one byte in the middle of a binary */
	memcpy(bad, good, size);
	bad[size / 2] ^= 0x5a;
	refused(m, "damaged", bad, size, "damaged or truncated", &cold);
	/* truncated: the first half */
	refused(m, "truncated", good, size / 2, "damaged or truncated", &cold);
	/* foreign: another device's name, with a checksum that fits */
	memcpy(bad, good, size);
	unsigned char *at = memmem(bad, size, dev, strlen(dev));
	uint64_t sum;

	if (at && strlen(dev)) {
		at[0] ^= 0x20;
		sum = ert_ocl_hash(ERT_OCL_HASH_INIT, bad, size - 8);
		memcpy(bad + size - 8, &sum, 8);
		refused(m, "another device's file", bad, size, "another device or driver", &cold);
	} else {
		check(false, "another device's file", "the device name is not in the file");
		failed++;
	}
	/* unrelated: not a cache file at all */
	refused(m, "a text file", "hello, world\n", 13, "not an edgert OpenCL cache file", &cold);

	/* a path that cannot be written: a warning, the session still works */
	char nowhere[200];

	snprintf(nowhere, sizeof(nowhere), "%s/missing-dir/kernels.cache", dir);
	struct outcome lost = session(m, nowhere);

	snprintf(why, sizeof(why), "built %u, note '%s', %s", lost.built, lost.note, lost.error);
	check(lost.ran && lost.built == cold.built && strstr(lost.note, "cannot write") &&
	      !memcmp(lost.y, cold.y, sizeof(lost.y)),
	      "unwritable path: a warning, the session runs", why);

	free(bad);
	free(good);
	ert_model_unref(m);
	unlink(path);
	rmdir(dir);
	printf("%d passed, %d failed, 0 skipped\n", passed, failed);
	return failed ? 1 : 0;
}
