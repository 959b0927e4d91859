/* SPDX-License-Identifier: MIT */
/*
 * The OpenCL backend's cache file (ert_config.cache_path, ocl-cache.c): a
 * cold session builds its programs and writes the file; a warm one loads
 * every program from it and computes the same outputs; a damaged, truncated,
 * foreign (another device, with a valid checksum) or unrelated file is
 * ignored with a warning, the programs are built, and the file is rewritten
 * so that the next session is warm again; a path that cannot be written
 * leaves the session working. Tuned launches (ert_config.tune) are kept in
 * the same file: a cold session (tuning under NORMAL, the mode that times on
 * every device) times them and writes them, a warm one times nothing and
 * computes the same outputs, NONE times nothing and uses the built-in
 * sizes, a wider mode tunes again and its choices serve narrower ones,
 * FAST without a file times on a GPU and keeps the built-in choices on a
 * CPU device such as PoCL (gpu-tune.h, ert_tune_times), an entry that is not a candidate of its launch is refused
 * (that launch tuned again) and an entry out of any range makes the file
 * damaged.
 *
 * Sessions of one process share the device (ocl-device.c): a second session
 * opened while the first is open takes its context and programs (nothing
 * built or loaded) and computes the same outputs; either may be destroyed
 * first, also while the other runs on another thread; sessions created at
 * once on several threads build each program once between them; the last
 * session to go closes the device; a session with a cache file that takes
 * its programs from another session still writes them to its file.
 * With no OpenCL platform every check is reported skipped.
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
#include "cache-test.h"
#include "opencl/ocl-impl.h"
#include "session/session-impl.h"

#define N_X CT_N_X

static char dir[64], path[128];
static bool cpu_device;          /* the device is CL_DEVICE_TYPE_CPU (PoCL) */

struct outcome {
	uint32_t loaded, built;
	uint32_t timed, reused, refused;
	bool rejected;
	char note[384];
	float y[N_X];
	bool ran;
	char error[512];
};

/* A session on OpenCL with the cache file at @p (NULL: none), tuning with @mode. */
static ert_status open_session(ert_model *m, const char *p, ert_tune mode, ert_session **s)
{
	ert_config cfg;

	ert_config_init(&cfg);
	cfg.backends[0] = ERT_BACKEND_OPENCL;
	cfg.num_backends = 1;
	cfg.cache_path = p;
	cfg.tune = mode;
	return ert_session_create(m, &cfg, s);
}

/* One session on OpenCL with the cache file at @p, tuning with @mode: what its cache did, and its output. */
static struct outcome session_tuned(ert_model *m, const char *p, ert_tune mode)
{
	struct outcome o = { 0 };
	ert_session *s = NULL;

	if (open_session(m, p, mode, &s) != ERT_OK) {
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
	if (!cache_test_run(s, o.y))
		snprintf(o.error, sizeof(o.error), "run: %s", ert_session_error(s));
	else
		o.ran = true;
	ert_session_destroy(s);
	return o;
}

/* NORMAL: the mode that times its candidates on every device, PoCL included. */
static struct outcome session(ert_model *m, const char *p)
{
	return session_tuned(m, p, ERT_TUNE_NORMAL);
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

	/* a wider mode tunes again; its choices then serve NORMAL and FAST */
	n = session_tuned(m, path, ERT_TUNE_WIDE);
	o = session(m, path);
	f = session_tuned(m, path, ERT_TUNE_FAST);
	snprintf(why, sizeof(why),
		 "wide: timed %u, reused %u, %s; normal after it: timed %u, reused %u; fast after it: timed %u, reused %u",
		 n.timed, n.reused, n.error, o.timed, o.reused, f.timed, f.reused);
	check(n.ran && n.timed >= cold->timed && o.ran && !o.timed &&
	      o.reused == cold->timed + cold->reused && f.ran && !f.timed &&
	      f.reused == cold->timed + cold->reused && !memcmp(n.y, cold->y, sizeof(n.y)) &&
	      !memcmp(f.y, cold->y, sizeof(f.y)),
	      "tune wide: tunes NORMAL's launches again, NORMAL and FAST then take WIDE's choices",
	      why);

	/* FAST with nothing in a file: times on a GPU, the built-in choices on a CPU device */
	f = session_tuned(m, NULL, ERT_TUNE_FAST);
	snprintf(why, sizeof(why), "%s device: timed %u, reused %u, %s", cpu_device ? "CPU" : "GPU",
		 f.timed, f.reused, f.error);
	check(f.ran && (cpu_device ? !f.timed : f.timed > 0) && !f.reused &&
	      ert_tune_times(ERT_TUNE_FAST, cpu_device) == !cpu_device &&
	      !memcmp(f.y, cold->y, sizeof(f.y)),
	      cpu_device ? "tune fast on a CPU device: nothing timed, the built-in choices, the same output" :
			   "tune fast on a GPU: the launches timed, the same output",
	      why);

	if (!bad || !at) {
		check(false, "a tuning entry in the file", "no entry for unary_f32 at the file's end");
		failed += 4;
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

/* ---- sessions sharing the device ---- */

/* The programs a session's backend got, by where from. */
static const struct ert_backend_times *got(const ert_session *s)
{
	return &s->created.be;
}

/* Two sessions open at once share the device; either may go first. */
static void share_two(ert_model *m, const struct outcome *cold)
{
	char why[600];

	for (int first_goes = 0; first_goes < 2; first_goes++) {
		ert_session *a = NULL, *b = NULL;
		bool ok = open_session(m, NULL, ERT_TUNE_FAST, &a) == ERT_OK &&
			  open_session(m, NULL, ERT_TUNE_FAST, &b) == ERT_OK;
		uint32_t open_both = ert_ocl_devices_open();

		if (!ok) {
			check(false, "two sessions open at once", ert_last_error());
			ert_session_destroy(b);
			ert_session_destroy(a);
			failed += first_goes ? 0 : 1;
			continue;
		}
		snprintf(why, sizeof(why),
			 "first: shared %d, built %u, loaded %u; second: shared %d, programs shared %u, built %u, loaded %u; devices open %u",
			 got(a)->device_shared, got(a)->programs_built, got(a)->programs_loaded,
			 got(b)->device_shared, got(b)->programs_shared, got(b)->programs_built,
			 got(b)->programs_loaded, open_both);
		if (!first_goes)
			check(!got(a)->device_shared && !got(a)->programs_shared &&
			      got(a)->programs_built + got(a)->programs_loaded == cold->built &&
			      got(b)->device_shared && got(b)->programs_shared == cold->built &&
			      !got(b)->programs_built && !got(b)->programs_loaded && open_both == 1,
			      "a second session open at once takes the first's context and programs",
			      why);
		destroy_in_turn(a, b, first_goes, cold->y, ert_ocl_devices_open, 1);
	}
}

/* The first session destroyed while the second runs on another thread. */
static void destroy_first_while_running(ert_model *m, const struct outcome *cold)
{
	ert_session *a = NULL, *b = NULL;
	const char *what;
	char why[300];
	bool ok;

	if (open_session(m, NULL, ERT_TUNE_FAST, &a) != ERT_OK ||
	    open_session(m, NULL, ERT_TUNE_FAST, &b) != ERT_OK) {
		check(false, "the first destroyed while the second runs", ert_last_error());
		ert_session_destroy(b);
		ert_session_destroy(a);
		return;
	}
	ok = destroy_while_running(a, b, cold->y, 100, &what);
	snprintf(why, sizeof(why), "the second's 101 runs: %s, devices open %u",
		 ok ? "all right" : what, ert_ocl_devices_open());
	check(ok && ert_ocl_devices_open() == 0,
	      "the first destroyed while the second runs on another thread: its runs unharmed", why);
}

static ert_status open_fast(ert_model *m, ert_session **out)
{
	return open_session(m, NULL, ERT_TUNE_FAST, out);
}

static void note_programs(struct maker *k)
{
	k->made_here = got(k->s)->programs_built + got(k->s)->programs_loaded;
	k->shared = got(k->s)->programs_shared;
}

/* Sessions created at once on several threads build each program once between them. */
static void concurrent(ert_model *m, const struct outcome *cold)
{
	struct maker k[CT_THREADS];
	uint32_t built = 0, shared = 0, devices;
	bool ok = concurrent_sessions(m, cold->y, open_fast, note_programs, k);
	char why[300];

	for (int i = 0; i < CT_THREADS; i++) {
		built += k[i].made_here;
		shared += k[i].shared;
	}
	devices = ert_ocl_devices_open();
	snprintf(why, sizeof(why),
		 "%d threads: runs %s; programs built or loaded %u, shared %u (expected %u and %u); devices open after %u",
		 CT_THREADS, ok ? "all right" : "failed or differed", built, shared, cold->built,
		 (CT_THREADS - 1) * cold->built, devices);
	check(ok && built == cold->built && shared == (CT_THREADS - 1) * cold->built && devices == 0,
	      "sessions created at once on 4 threads: each program built once between them, the same outputs, the device closed after",
	      why);
}

/* A session that takes its programs from another still writes them to its cache file. */
static void share_to_file(ert_model *m, const struct outcome *cold)
{
	char p2[160], why[600];
	ert_session *a = NULL, *b = NULL;
	struct outcome after;
	bool ok;

	snprintf(p2, sizeof(p2), "%s/shared.cache", dir);
	ok = open_session(m, NULL, ERT_TUNE_FAST, &a) == ERT_OK &&
	     open_session(m, p2, ERT_TUNE_FAST, &b) == ERT_OK;
	snprintf(why, sizeof(why), "%s; programs shared %u, built %u",
		 ok ? "opened" : ert_last_error(), b ? got(b)->programs_shared : 0,
		 b ? got(b)->programs_built : 0);
	ok = ok && got(b)->programs_shared == cold->built && !got(b)->programs_built;
	ert_session_destroy(b);
	ert_session_destroy(a);
	after = session(m, p2);
	snprintf(why + strlen(why), sizeof(why) - strlen(why),
		 "; the next session alone: loaded %u, built %u, %s", after.loaded, after.built,
		 after.error);
	check(ok && after.ran && after.loaded == cold->built && !after.built,
	      "programs taken from another session are written to the session's cache file", why);
	unlink(p2);
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
		printf("0 passed, 0 failed, 24 skipped\n");
		return 0;
	}
	snprintf(dev, sizeof(dev), "%s", ert_opencl_backend_device(be));
	cpu_device = ((struct ert_ocl *)be->ctx)->device_type & CL_DEVICE_TYPE_CPU;
	ert_backend_destroy(be);
	printf("# opencl: %s\n", dev);
	snprintf(dir, sizeof(dir), "/tmp/ert-ocl-cache.XXXXXX");
	m = cache_test_model();
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
		printf("%d passed, %d failed, 0 skipped\n", passed, failed + 15);
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

	share_two(m, &cold);
	destroy_first_while_running(m, &cold);
	concurrent(m, &cold);
	share_to_file(m, &cold);

	free(bad);
	free(good);
	ert_model_unref(m);
	unlink(path);
	rmdir(dir);
	printf("%d passed, %d failed, 0 skipped\n", passed, failed);
	return failed ? 1 : 0;
}
