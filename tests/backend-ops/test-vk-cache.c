/* SPDX-License-Identifier: MIT */
/*
 * The Vulkan backend's cache file (ert_config.cache_path, vk-cache.c): the
 * pipeline cache's bytes and the table of tuned launches (vk-tune.c). A cold
 * session tuning under NORMAL (the mode that times on every device) times
 * its tunable launches and writes the file; a warm one takes every choice
 * from it (nothing timed) and computes the same outputs; NONE times nothing
 * and takes nothing; WIDE tunes again and FAST then takes its choices; FAST
 * without a file times on a GPU and keeps the built-in choices on a CPU
 * device (gpu-tune.h, ert_tune_times); a damaged (checksum), truncated, foreign
 * (another device id or pipelineCacheUUID, with a valid checksum), other
 * version or unrelated file is ignored with a warning and rewritten, so that
 * the next session is warm again; a tuning entry that is no candidate of its
 * launch is refused and that launch tuned again, one out of any range makes
 * the file damaged; a path that cannot be written gives a warning and the
 * session runs. Also the device timer (vk-timer.c) and a device without
 * timestamps (ERT_VULKAN_TEST_NO_TIMESTAMPS: nothing tuned, the session runs).
 *
 * Sessions of one process share the instance, device and queue
 * (vk-device.c): a second session open at once takes the first's (its
 * creation's figures are printed, not asserted) and computes the same
 * outputs, either may be destroyed first, also while the other runs on
 * another thread; two sessions run at once on two threads; sessions created
 * at once on several threads open one device between them; a session with
 * the other ERT_VULKAN_VALIDATION setting gets its own instance, one with
 * ERT_VULKAN_DEVICE the device of that index; the last session to go
 * destroys the device and the instance.
 *
 * Sessions of one model on one device also share its pipelines and uploaded
 * weights (gpu-common/gpu-share.h): on y = Relu(x * w + b), a second session
 * open at once builds no pipeline and uploads nothing, holding the first's
 * very objects, and computes the first's outputs; either may be destroyed
 * first, the other running on; one in precision LOW (float16 storage)
 * beside a NORMAL one uploads its own float16 weights and builds its own
 * .f16 pipelines; sessions created at once on several threads build each
 * pipeline and upload each weight once between them.
 * With no Vulkan device every check is reported skipped.
 *
 * Prints one line per check and ends with "N passed, N failed, N skipped".
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "edgert.h"
#include "ert-backend-impl.h"
#include "ert-graph.h"
#include "cache-test.h"
#include "session/session-impl.h"
#include "vulkan/vk-impl.h"

#define N_X CT_N_X
#define N_CHECKS 32
/* the file's header: magic, version, vendor, device, driver, UUID, size */
#define AT_VERSION 8
#define AT_DEVICE 16
#define AT_UUID 24
#define AT_SIZE 40
#define HEADER 48

static char dir[64], path[128];
static bool cpu_device;          /* the device is a CPU implementation (lavapipe) */

struct outcome {
	struct ert_backend_times be;  /* the session's created.be: prep_times */
	uint32_t refused;
	bool rejected;
	char note[384];
	float y[N_X];
	bool ran;
	char error[512];
};

/* One session on Vulkan with the cache file at @p (NULL: none), tuning with @mode, and one run. */
static struct outcome session_tuned(ert_model *m, const char *p, ert_tune mode)
{
	struct outcome o = { 0 };
	ert_session *s = NULL;
	ert_config cfg;

	ert_config_init(&cfg);
	cfg.backends[0] = ERT_BACKEND_VULKAN;
	cfg.num_backends = 1;
	cfg.cache_path = p;
	cfg.tune = mode;
	if (ert_session_create(m, &cfg, &s) != ERT_OK) {
		snprintf(o.error, sizeof(o.error), "session: %s", ert_last_error());
		return o;
	}
	const struct ert_vk *vk = s->backends[0]->ctx;

	o.be = s->created.be;
	o.refused = vk->tune_refused;
	o.rejected = vk->cache_rejected;
	snprintf(o.note, sizeof(o.note), "%s", vk->cache_note);
	if (!cache_test_run(s, o.y))
		snprintf(o.error, sizeof(o.error), "run: %s", ert_session_error(s));
	else
		o.ran = true;
	ert_session_destroy(s);
	return o;
}

/* NORMAL: the mode that times its candidates on every device, lavapipe included. */
static struct outcome session(ert_model *m, const char *p)
{
	return session_tuned(m, p, ERT_TUNE_NORMAL);
}

/* @size bytes of @good with the u32 at @at set to @v, and a checksum that fits. */
static unsigned char *patched(const unsigned char *good, size_t size, size_t at, uint32_t v)
{
	unsigned char *bad = malloc(size);
	uint64_t sum;

	if (!bad)
		return NULL;
	memcpy(bad, good, size);
	memcpy(bad + at, &v, 4);
	sum = ert_hash64(ERT_HASH64_INIT, bad, size - 8);
	memcpy(bad + size - 8, &sum, 8);
	return bad;
}

/*
 * A file the cache must refuse with a note containing @reason, the session
 * still running (tuning again) with the cold output; the next session must
 * find the rewritten file warm.
 */
static void refused(ert_model *m, const char *what, const void *bytes, size_t size,
		    const char *reason, const struct outcome *cold)
{
	char why[2400], name[200];
	struct outcome o, after;

	if (!bytes || !write_file(path, bytes, size)) {
		check(false, what, "cannot write the test file");
		return;
	}
	o = session(m, path);
	after = session(m, path);
	snprintf(why, sizeof(why),
		 "rejected %d, timed %u, note '%s', %s; next: rejected %d, timed %u, reused %u, note '%s', %s",
		 o.rejected, o.be.launches_timed, o.note, o.error, after.rejected,
		 after.be.launches_timed, after.be.launches_reused, after.note, after.error);
	snprintf(name, sizeof(name),
		 "%s: ignored with a warning, launches tuned again, rewritten: the next session warm",
		 what);
	check(o.ran && o.rejected && strstr(o.note, reason) && strstr(o.note, path) &&
	      o.be.launches_timed == cold->be.launches_timed && !o.be.launches_reused &&
	      !memcmp(o.y, cold->y, sizeof(o.y)) && after.ran && !after.rejected &&
	      !after.be.launches_timed && after.be.launches_reused == cold->be.launches_timed,
	      name, why);
}

/* The offset of the first tuning entry's first local size, or 0. */
static size_t first_lws_at(const unsigned char *buf, size_t size)
{
	uint64_t pc;
	uint32_t n, len;
	size_t at;

	memcpy(&pc, buf + AT_SIZE, 8);
	at = HEADER + (size_t)pc;
	if (at + 8 > size)
		return 0;
	memcpy(&n, buf + at, 4);
	memcpy(&len, buf + at + 4, 4);
	/* count, name length, name, source, shape, mode, variant, then lws */
	at += 4 + 4 + len + 8 + 8 + 4 + 4;
	return n && at + 4 <= size - 8 ? at : 0;
}

/* The device timer: two stamps read back, an unwritten slot refused, the hook answered. */
static void timer(struct ert_backend *be)
{
	struct ert_vk *vk = be->ctx;
	struct ert_err err = { "" };
	struct ert_vk_timer t;
	VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = vk->cmd_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
	VkCommandBuffer cb = VK_NULL_HANDLE;
	uint64_t ns[2] = { 1, 0 }, all[3] = { 7, 7, 7 };
	ert_status s0, s1 = ERT_OK, s2 = ERT_OK;
	char why[600];

	s0 = ert_vk_timer_new(vk, 3, &t, &err);
	if (s0 == ERT_STATUS_UNSUPPORTED) {
		printf("# %s\n", err.msg);
		check(strstr(err.msg, "no timestamps") != NULL,
		      "timer: a device without timestamps answers UNSUPPORTED, saying so", err.msg);
		passed++;
		printf("ok - timer: (no timestamps to read)\n");
		return;
	}
	if (s0 == ERT_OK && vkAllocateCommandBuffers(vk->dev, &ai, &cb) == VK_SUCCESS &&
	    vkBeginCommandBuffer(cb, &bi) == VK_SUCCESS) {
		ert_vk_timer_reset(cb, &t, 0, 3);
		ert_vk_timer_stamp(cb, &t, 0);
		ert_vk_timer_stamp(cb, &t, 1);
		vkEndCommandBuffer(cb);
		s1 = ert_vk_queue_cmd(vk, cb, &err);
		if (s1 == ERT_OK)
			s1 = ert_vk_flush(vk, &err);
		if (s1 == ERT_OK)
			s1 = ert_vk_timer_read(vk, &t, 0, 2, ns, &err);
		s2 = ert_vk_timer_read(vk, &t, 0, 3, all, &err);
	}
	snprintf(why, sizeof(why), "new %d, read %d (%llu, %llu ns), unwritten slot %d: %s", s0, s1,
		 (unsigned long long)ns[0], (unsigned long long)ns[1], s2, err.msg);
	check(s0 == ERT_OK && s1 == ERT_OK && ns[0] == 0 && ns[1] < 1000000000ull &&
	      s2 == ERT_STATUS_BACKEND && strstr(err.msg, "timestamp 2 was not written") &&
	      all[0] == 7 && all[1] == 7,
	      "timer: two stamps read back in ns, an unwritten slot refused (no wait)", why);
	if (cb)
		vkFreeCommandBuffers(vk->dev, vk->cmd_pool, 1, &cb);
	ert_vk_timer_free(vk, &t);
	setenv("ERT_VULKAN_TEST_NO_TIMESTAMPS", "1", 1);
	s0 = ert_vk_timer_new(vk, 3, &t, &err);
	unsetenv("ERT_VULKAN_TEST_NO_TIMESTAMPS");
	check(s0 == ERT_STATUS_UNSUPPORTED && strstr(err.msg, "no timestamps"),
	      "timer: without timestamps (the test hook) UNSUPPORTED, saying so", err.msg);
}

/* ---- sessions sharing the device ---- */

static ert_status open_vk(ert_model *m, ert_tune mode, ert_session **out)
{
	ert_config cfg;

	ert_config_init(&cfg);
	cfg.backends[0] = ERT_BACKEND_VULKAN;
	cfg.num_backends = 1;
	cfg.tune = mode;
	return ert_session_create(m, &cfg, out);
}

static ert_status open_none(ert_model *m, ert_session **out)
{
	return open_vk(m, ERT_TUNE_NONE, out);
}

static const struct ert_vk *vk_of(const ert_session *s)
{
	return s->backends[0]->ctx;
}

/* Two sessions open at once share the device; either may go first; the last closes it. */
static void share_two(ert_model *m, const struct outcome *cold)
{
	char why[600];

	for (int first_goes = 0; first_goes < 2; first_goes++) {
		ert_session *a = NULL, *b = NULL;
		bool ok = open_none(m, &a) == ERT_OK && open_none(m, &b) == ERT_OK;
		uint32_t open_both = ert_vk_devices_open();

		if (!ok) {
			check(false, "two sessions open at once", ert_last_error());
			ert_session_destroy(b);
			ert_session_destroy(a);
			failed += first_goes ? 0 : 1;
			continue;
		}
		if (!first_goes) {
			printf("# session creation (tune none): the first %.1f ms (device %.1f ms), the second %.1f ms (device %.2f ms, shared)\n",
			       (double)a->created.total_ns / 1e6, (double)a->created.be.device_ns / 1e6,
			       (double)b->created.total_ns / 1e6, (double)b->created.be.device_ns / 1e6);
			snprintf(why, sizeof(why),
				 "first: shared %d; second: shared %d, same device %d, same queue %d, own pool %d, own fence %d; instances + devices open %u",
				 a->created.be.device_shared, b->created.be.device_shared,
				 vk_of(a)->dev == vk_of(b)->dev, vk_of(a)->queue == vk_of(b)->queue,
				 vk_of(a)->cmd_pool != vk_of(b)->cmd_pool,
				 vk_of(a)->fence != vk_of(b)->fence, open_both);
			check(!a->created.be.device_shared && b->created.be.device_shared &&
			      vk_of(a)->dev == vk_of(b)->dev && vk_of(a)->queue == vk_of(b)->queue &&
			      vk_of(a)->instance == vk_of(b)->instance &&
			      vk_of(a)->cmd_pool != vk_of(b)->cmd_pool &&
			      vk_of(a)->fence != vk_of(b)->fence && open_both == 2,
			      "a second session open at once takes the first's instance, device and queue (its own pool and fence)",
			      why);
		}
		destroy_in_turn(a, b, first_goes, cold->y, ert_vk_devices_open, 2);
	}
}

/* Two sessions on one device run at once on two threads (submits to the one queue). */
static void run_together(ert_model *m, const struct outcome *cold)
{
	ert_session *a = NULL, *b = NULL;
	struct runner ra = { .ref = cold->y, .runs = 50 }, rb = { .ref = cold->y, .runs = 50 };
	pthread_t ta, tb;
	bool started = false;
	char why[300];

	if (open_none(m, &a) == ERT_OK && open_none(m, &b) == ERT_OK) {
		ra.s = a;
		rb.s = b;
		started = pthread_create(&ta, NULL, run_thread, &ra) == 0;
		if (started && pthread_create(&tb, NULL, run_thread, &rb) != 0) {
			pthread_join(ta, NULL);
			started = false;
		} else if (started) {
			pthread_join(ta, NULL);
			pthread_join(tb, NULL);
		}
	}
	snprintf(why, sizeof(why), "%s; runs: first %s, second %s",
		 started ? "started" : ert_last_error(), ra.ok ? "all right" : "failed or differed",
		 rb.ok ? "all right" : "failed or differed");
	ert_session_destroy(b);
	ert_session_destroy(a);
	check(started && ra.ok && rb.ok && ert_vk_devices_open() == 0,
	      "two sessions on the device run at once on two threads (51 runs each): the same outputs",
	      why);
}

static void destroy_first_while_running(ert_model *m, const struct outcome *cold)
{
	ert_session *a = NULL, *b = NULL;
	const char *what;
	char why[300];
	bool ok;

	if (open_none(m, &a) != ERT_OK || open_none(m, &b) != ERT_OK) {
		check(false, "the first destroyed while the second runs", ert_last_error());
		ert_session_destroy(b);
		ert_session_destroy(a);
		return;
	}
	ok = destroy_while_running(a, b, cold->y, 100, &what);
	snprintf(why, sizeof(why), "the second's 101 runs: %s, instances + devices open %u",
		 ok ? "all right" : what, ert_vk_devices_open());
	check(ok && ert_vk_devices_open() == 0,
	      "the first destroyed while the second runs on another thread: its runs unharmed", why);
}

static void note_shared(struct maker *k)
{
	k->shared = k->s->created.be.device_shared;
	k->made_here = ert_vk_devices_open();
}

/* Sessions created at once on several threads open one instance and one device between them. */
static void concurrent(ert_model *m, const struct outcome *cold)
{
	struct maker k[CT_THREADS];
	bool ok = concurrent_sessions(m, cold->y, open_none, note_shared, k);
	uint32_t shared = 0, open_max = 0;
	char why[300];

	for (int i = 0; i < CT_THREADS; i++) {
		shared += k[i].shared;
		open_max = k[i].made_here > open_max ? k[i].made_here : open_max;
	}
	snprintf(why, sizeof(why),
		 "%d threads: runs %s; sessions that found the device open %u (expected %d); instances + devices open at most %u, after %u",
		 CT_THREADS, ok ? "all right" : "failed or differed", shared, CT_THREADS - 1,
		 open_max, ert_vk_devices_open());
	check(ok && shared == CT_THREADS - 1 && open_max == 2 && ert_vk_devices_open() == 0,
	      "sessions created at once on 4 threads: one device opened between them, the same outputs, closed after",
	      why);
}

/* A session with the other validation setting gets its own instance, never a shared one. */
static void validation_key(ert_model *m, const struct outcome *cold)
{
	const char *was = getenv("ERT_VULKAN_VALIDATION");
	char saved[16];
	ert_session *a = NULL, *b = NULL;
	ert_status sb = ERT_STATUS_INTERNAL;
	bool on = was && *was && strcmp(was, "0"), ok;
	char why[700];

	snprintf(saved, sizeof(saved), "%s", was ? was : "");
	if (open_none(m, &a) != ERT_OK) {
		check(false, "the other validation setting: its own instance", ert_last_error());
		return;
	}
	setenv("ERT_VULKAN_VALIDATION", on ? "0" : "1", 1);
	sb = open_none(m, &b);
	if (was)
		setenv("ERT_VULKAN_VALIDATION", saved, 1);
	else
		unsetenv("ERT_VULKAN_VALIDATION");
	if (sb == ERT_STATUS_UNSUPPORTED && !on && strstr(ert_last_error(), "not installed")) {
		/* no layer on this machine: a session asking for it is refused, not given the other */
		ert_session_destroy(a);
		snprintf(why, sizeof(why), "%s", ert_last_error());
		check(ert_vk_devices_open() == 0,
		      "the other validation setting: refused without the layer (not given an unvalidated device)",
		      why);
		return;
	}
	snprintf(why, sizeof(why),
		 "validation %d and %d: %s; shared %d, same instance %d, same device %d, instances + devices open %u",
		 on, !on, sb == ERT_OK ? "opened" : ert_last_error(),
		 b ? b->created.be.device_shared : -1, b && vk_of(a)->instance == vk_of(b)->instance,
		 b && vk_of(a)->dev == vk_of(b)->dev, ert_vk_devices_open());
	ok = sb == ERT_OK && !b->created.be.device_shared && vk_of(b)->validation == !on &&
	     vk_of(a)->validation == on && vk_of(a)->instance != vk_of(b)->instance &&
	     vk_of(a)->dev != vk_of(b)->dev && ert_vk_devices_open() == 4 &&
	     runs_match(a, cold->y, 1) && runs_match(b, cold->y, 1);
	ert_session_destroy(b);
	ert_session_destroy(a);
	check(ok && ert_vk_devices_open() == 0,
	      "the other ERT_VULKAN_VALIDATION setting: its own instance and device, the same outputs",
	      why);
}

/* ERT_VULKAN_DEVICE=i shares the open device when device i is it, and only then. */
static void device_key(ert_model *m, const struct outcome *cold)
{
	VkPhysicalDevice devs[16];
	uint32_t n = 16;
	ert_session *a = NULL;
	bool ok = true;
	char why[600] = "";

	if (open_none(m, &a) != ERT_OK ||
	    vkEnumeratePhysicalDevices(vk_of(a)->instance, &n, devs) < 0) {
		check(false, "ERT_VULKAN_DEVICE: shared only by the same device", ert_last_error());
		ert_session_destroy(a);
		return;
	}
	for (uint32_t i = 0; i < n && i < 16; i++) {
		ert_session *b = NULL;
		char idx[16];
		bool same = devs[i] == vk_of(a)->phys;
		ert_status sb;

		snprintf(idx, sizeof(idx), "%u", i);
		setenv("ERT_VULKAN_DEVICE", idx, 1);
		sb = open_none(m, &b);
		unsetenv("ERT_VULKAN_DEVICE");
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 "device %u: %s, same device %d, shared %d; ", i,
			 sb == ERT_OK ? "opened" : ert_last_error(), same,
			 b ? b->created.be.device_shared : -1);
		ok = ok && sb == ERT_OK && b->created.be.device_shared == same &&
		     (vk_of(a)->dev == vk_of(b)->dev) == same && vk_of(b)->phys == devs[i] &&
		     runs_match(b, cold->y, 1);
		ert_session_destroy(b);
	}
	ert_session_destroy(a);
	check(ok && ert_vk_devices_open() == 0,
	      "ERT_VULKAN_DEVICE=i: the open device shared when it is device i, another opened otherwise",
	      why);
}


/* ---- pipelines and weights shared between sessions of one model ---- */

static float w_data[N_X], b_data[N_X];

/* y = Relu(x * w + b), w and b constants of x's shape: two uploads, elementwise pipelines. */
static ert_model *weights_model(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dims[2] = { 3, N_X / 3 };
	int32_t x, w, b, p, q, y;

	if (!g)
		return NULL;
	for (int i = 0; i < N_X; i++) {
		w_data[i] = 0.5f + (float)(i % 7) * 0.125f;
		b_data[i] = (float)(i % 5) * 0.25f - 0.5f;
	}
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, dims);
	w = ert_graph_add_tensor(g, "w", ERT_DTYPE_FLOAT32, 2, dims);
	b = ert_graph_add_tensor(g, "b", ERT_DTYPE_FLOAT32, 2, dims);
	p = ert_graph_add_tensor(g, "p", ERT_DTYPE_FLOAT32, -1, NULL);
	q = ert_graph_add_tensor(g, "q", ERT_DTYPE_FLOAT32, -1, NULL);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_set_const(g, w, w_data, sizeof(w_data), false);
	ert_graph_set_const(g, b, b_data, sizeof(b_data), false);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_Mul, "mul", 2, (int32_t[]){ x, w }, 1, &p);
	ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ p, b }, 1, &q);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &q, 1, &y);
	ert_graph_add_output(g, y);
	return model_from_graph(g);
}

/* Does every hold of @in have its entry among @of's (the same device objects)? */
static bool holds_within(const struct ert_gpu_holds *in, const struct ert_gpu_holds *of)
{
	for (const struct ert_gpu_hold *k = in->head; k; k = k->next) {
		const struct ert_gpu_hold *o = of->head;

		while (o && o->e != k->e)
			o = o->next;
		if (!o)
			return false;
	}
	return true;
}

static uint32_t holds_count(const struct ert_gpu_holds *h)
{
	uint32_t n = 0;

	for (const struct ert_gpu_hold *k = h->head; k; k = k->next)
		n++;
	return n;
}

/* The device memory the session's Vulkan backend holds (constants and tables). */
static size_t resident(ert_session *s)
{
	return ert_backend_resident_bytes(s->backends[0]);
}

/* What a session of the weights model made alone: the reference of the sharing checks. */
struct alone {
	float y[N_X];
	uint32_t built;
	uint64_t uploaded;
};

/* A second session open at once takes the first's pipelines and weights; either may go first. */
static void share_weights(ert_model *m, const struct alone *ref)
{
	char why[900];

	for (int first_goes = 0; first_goes < 2; first_goes++) {
		ert_session *a = NULL, *b = NULL;
		bool ok = open_none(m, &a) == ERT_OK && open_none(m, &b) == ERT_OK;

		if (!ok) {
			check(false, "two sessions of a model with weights open at once", ert_last_error());
			ert_session_destroy(b);
			ert_session_destroy(a);
			failed += first_goes ? 0 : 1;
			continue;
		}
		if (!first_goes) {
			const struct ert_backend_times *ta = &a->created.be, *tb = &b->created.be;

			printf("# a model with weights (tune none): the first session %.2f ms (pipelines %.2f ms, uploads %.2f ms), the second %.2f ms (pipelines %.2f ms, uploads %.2f ms)\n",
			       (double)a->created.total_ns / 1e6, (double)ta->programs_ns / 1e6,
			       (double)ta->upload_ns / 1e6, (double)b->created.total_ns / 1e6,
			       (double)tb->programs_ns / 1e6, (double)tb->upload_ns / 1e6);
			snprintf(why, sizeof(why),
				 "alone: built %u, uploaded %llu; first: built %u, shared %u, uploaded %llu, shared %llu; second: built %u, shared %u, uploaded %llu, shared %llu; the second's pipelines (%u) and weights (%u) the first's: %d, %d; resident %zu and %zu",
				 ref->built, (unsigned long long)ref->uploaded, ta->programs_built,
				 ta->programs_shared, (unsigned long long)ta->upload_bytes,
				 (unsigned long long)ta->upload_shared_bytes, tb->programs_built,
				 tb->programs_shared, (unsigned long long)tb->upload_bytes,
				 (unsigned long long)tb->upload_shared_bytes,
				 holds_count(&vk_of(b)->pipes), holds_count(&vk_of(b)->consts),
				 holds_within(&vk_of(b)->pipes, &vk_of(a)->pipes),
				 holds_within(&vk_of(b)->consts, &vk_of(a)->consts),
				 resident(a), resident(b));
			check(ref->built > 0 && ref->uploaded == sizeof(w_data) + sizeof(b_data) &&
			      ta->programs_built == ref->built && !ta->programs_shared &&
			      ta->upload_bytes == ref->uploaded && !ta->upload_shared_bytes &&
			      !tb->programs_built && tb->programs_shared == ref->built &&
			      !tb->upload_bytes && tb->upload_shared_bytes == ref->uploaded &&
			      holds_count(&vk_of(b)->pipes) == ref->built &&
			      holds_count(&vk_of(b)->consts) == 2 &&
			      holds_within(&vk_of(b)->pipes, &vk_of(a)->pipes) &&
			      holds_within(&vk_of(b)->consts, &vk_of(a)->consts) &&
			      resident(a) == resident(b),
			      "a second session of the model builds no pipeline and uploads no weight: it holds the first's",
			      why);
		}
		destroy_in_turn(a, b, first_goes, ref->y, ert_vk_devices_open, 2);
	}
}

/* LOW stores float32 weights as float16: its own uploads (another key), its .f16 pipelines. */
static void share_low(ert_model *m, const struct alone *ref)
{
	ert_session *a = NULL, *c = NULL;
	ert_config cfg;
	float y[N_X];
	double worst = 0;
	bool ok, f16 = false;
	char why[600];

	ert_config_init(&cfg);
	cfg.backends[0] = ERT_BACKEND_VULKAN;
	cfg.num_backends = 1;
	cfg.tune = ERT_TUNE_NONE;
	cfg.precision = ERT_LEVEL_LOW;
	ok = open_none(m, &a) == ERT_OK && ert_session_create(m, &cfg, &c) == ERT_OK;
	if (ok) {
		const struct ert_backend_times *tc = &c->created.be;

		f16 = vk_of(c)->f16_storage;
		ok = cache_test_run(c, y) && runs_match(a, ref->y, 1);
		for (int i = 0; ok && i < N_X; i++) {
			double d = fabs((double)y[i] - (double)ref->y[i]);

			worst = d > worst ? d : worst;
		}
		snprintf(why, sizeof(why),
			 "float16 storage %d: built %u, shared %u, uploaded %llu, shared %llu; its weights the first's: %d; worst difference %.3g",
			 f16, tc->programs_built, tc->programs_shared,
			 (unsigned long long)tc->upload_bytes,
			 (unsigned long long)tc->upload_shared_bytes,
			 vk_of(c)->consts.head && holds_within(&vk_of(c)->consts, &vk_of(a)->consts),
			 worst);
		printf("# precision LOW beside NORMAL: %s\n", why);
		/* with float16 storage: .f16 shaders (and convert) built, weights uploaded at half size */
		ok = ok && worst <= 1e-2 &&
		     (f16 ? tc->programs_built > 0 && tc->upload_bytes == ref->uploaded / 2 &&
			    !tc->upload_shared_bytes &&
			    !holds_within(&vk_of(c)->consts, &vk_of(a)->consts) :
			    !tc->programs_built && tc->upload_shared_bytes == ref->uploaded);
	} else {
		snprintf(why, sizeof(why), "%s", ert_last_error());
	}
	ert_session_destroy(a);
	ert_session_destroy(c);
	check(ok && ert_vk_devices_open() == 0,
	      "a session in precision LOW beside a NORMAL one: float16 weights of its own, the right outputs",
	      why);
}

static atomic_uint made_pipes, shared_pipes;
static atomic_ullong made_bytes, shared_bytes;

static void note_made(struct maker *k)
{
	const struct ert_backend_times *t = &k->s->created.be;

	atomic_fetch_add(&made_pipes, t->programs_built);
	atomic_fetch_add(&shared_pipes, t->programs_shared);
	atomic_fetch_add(&made_bytes, t->upload_bytes);
	atomic_fetch_add(&shared_bytes, t->upload_shared_bytes);
}

/* Sessions of the model created at once on several threads: each pipeline and weight made once. */
static void concurrent_weights(ert_model *m, const struct alone *ref)
{
	struct maker k[CT_THREADS];
	bool ok = concurrent_sessions(m, ref->y, open_none, note_made, k);
	char why[400];

	snprintf(why, sizeof(why),
		 "%d threads: runs %s; pipelines built %u, shared %u (expected %u and %u); bytes uploaded %llu, shared %llu (expected %llu and %llu); open after %u",
		 CT_THREADS, ok ? "all right" : "failed or differed", made_pipes, shared_pipes,
		 ref->built, (CT_THREADS - 1) * ref->built, (unsigned long long)made_bytes,
		 (unsigned long long)shared_bytes, (unsigned long long)ref->uploaded,
		 (unsigned long long)((CT_THREADS - 1) * ref->uploaded), ert_vk_devices_open());
	check(ok && made_pipes == ref->built && shared_pipes == (CT_THREADS - 1) * ref->built &&
	      made_bytes == ref->uploaded && shared_bytes == (CT_THREADS - 1) * ref->uploaded &&
	      ert_vk_devices_open() == 0,
	      "sessions of the model created at once on 4 threads: each pipeline built and each weight uploaded once between them",
	      why);
}

/* The weights model alone (the reference), then the sharing checks. */
static void sharing(void)
{
	ert_model *m = weights_model();
	ert_session *s = NULL;
	struct alone ref = { { 0 }, 0, 0 };
	double worst = 0;
	bool ok = m && open_none(m, &s) == ERT_OK && cache_test_run(s, ref.y);
	char why[300];

	if (ok) {
		ref.built = s->created.be.programs_built;
		ref.uploaded = s->created.be.upload_bytes;
	}
	ert_session_destroy(s);
	for (int i = 0; ok && i < N_X; i++) {
		float x = (float)((i * 37) % 23) * 0.25f - 2.5f, want = x * w_data[i] + b_data[i];
		double d = fabs((double)ref.y[i] - (want > 0 ? want : 0));

		worst = d > worst ? d : worst;
	}
	snprintf(why, sizeof(why), "%s, worst difference from the host's %.3g",
		 ok ? "ran" : ert_last_error(), worst);
	check(ok && worst <= 1e-6, "a model with weights alone: Relu(x * w + b) computed", why);
	if (ok) {
		share_weights(m, &ref);
		share_low(m, &ref);
		concurrent_weights(m, &ref);
	} else {
		failed += 5;
	}
	ert_model_unref(m);
}

int main(void)
{
	struct ert_err err = { "" };
	struct ert_backend *be = NULL;
	char why[1400];
	unsigned char *good, *bad;
	size_t size, at;
	ert_model *m;

	if (ert_backend_create(ERT_BACKEND_VULKAN, NULL, &be, &err) != ERT_OK) {
		printf("# vulkan: skipped (%s)\n", err.msg);
		printf("0 passed, 0 failed, %d skipped\n", N_CHECKS);
		return 0;
	}
	printf("# vulkan: %s\n", ert_vulkan_backend_device(be));
	cpu_device = ((struct ert_vk *)be->ctx)->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
	timer(be);
	ert_backend_destroy(be);
	snprintf(dir, sizeof(dir), "/tmp/ert-vk-cache.XXXXXX");
	m = cache_test_model();
	if (!m || !mkdtemp(dir)) {
		printf("not ok - setup\n%d passed, %d failed, 0 skipped\n", passed, failed + 1);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/vulkan.cache", dir);

	/* cold: no file yet */
	struct outcome cold = session(m, path);

	good = read_file(path, &size);
	snprintf(why, sizeof(why),
		 "timed %u, reused %u, pipelines %u, device %.1f ms, note '%s', %s, file %zu bytes",
		 cold.be.launches_timed, cold.be.launches_reused, cold.be.programs_built,
		 (double)cold.be.device_ns / 1e6, cold.note, cold.error, size);
	check(cold.ran && cold.be.launches_timed == 3 && !cold.be.launches_reused &&
	      !cold.rejected && !cold.note[0] && cold.be.programs_built >= 3 &&
	      cold.be.device_ns > 0 && good && size > HEADER + 8,
	      "cold: the three tunable launches timed, the file written, prep_times told", why);

	/* warm: every choice from the file, the same output */
	struct outcome warm = session(m, path);

	snprintf(why, sizeof(why), "timed %u, reused %u, refused %u, note '%s', %s",
		 warm.be.launches_timed, warm.be.launches_reused, warm.refused, warm.note,
		 warm.error);
	check(warm.ran && !warm.be.launches_timed && warm.be.launches_reused == 3 && !warm.refused &&
	      !warm.rejected && !memcmp(warm.y, cold.y, sizeof(warm.y)),
	      "warm: every launch's choice taken from the file (none timed), the same output", why);

	/* NONE: the built-in sizes, nothing timed or taken, the same output */
	struct outcome none = session_tuned(m, path, ERT_TUNE_NONE);

	snprintf(why, sizeof(why), "timed %u, reused %u, %s", none.be.launches_timed,
		 none.be.launches_reused, none.error);
	check(none.ran && !none.be.launches_timed && !none.be.launches_reused &&
	      !memcmp(none.y, cold.y, sizeof(none.y)),
	      "tune none: nothing timed or taken from the file, the same output", why);

	/* a wider mode tunes again, and its choices then serve NORMAL and FAST */
	struct outcome wide = session_tuned(m, path, ERT_TUNE_WIDE);
	struct outcome normal = session(m, path);
	struct outcome fast = session_tuned(m, path, ERT_TUNE_FAST);

	snprintf(why, sizeof(why),
		 "wide: timed %u, reused %u, %s; normal after: timed %u, reused %u; fast after: timed %u, reused %u",
		 wide.be.launches_timed, wide.be.launches_reused, wide.error,
		 normal.be.launches_timed, normal.be.launches_reused, fast.be.launches_timed,
		 fast.be.launches_reused);
	check(wide.ran && wide.be.launches_timed == 3 && normal.ran &&
	      !normal.be.launches_timed && normal.be.launches_reused == 3 && fast.ran &&
	      !fast.be.launches_timed && fast.be.launches_reused == 3 &&
	      !memcmp(wide.y, cold.y, sizeof(wide.y)) && !memcmp(fast.y, cold.y, sizeof(fast.y)),
	      "tune wide: the launches tuned again, NORMAL and FAST then take WIDE's choices", why);

	/* FAST with nothing in a file: times on a GPU, the built-in choices on a CPU device */
	struct outcome fresh = session_tuned(m, NULL, ERT_TUNE_FAST);
	bool times = ert_tune_times(ERT_TUNE_FAST, cpu_device);

	snprintf(why, sizeof(why), "%s device: timed %u, reused %u, %s", cpu_device ? "CPU" : "GPU",
		 fresh.be.launches_timed, fresh.be.launches_reused, fresh.error);
	check(fresh.ran && fresh.be.launches_timed == (times ? 3u : 0u) &&
	      !fresh.be.launches_reused && !memcmp(fresh.y, cold.y, sizeof(fresh.y)) &&
	      times == !cpu_device,
	      cpu_device ? "tune fast on a CPU device: nothing timed, the built-in choices, the same output" :
			   "tune fast on a GPU: the launches timed, the same output",
	      why);

	if (!good) {
		printf("%d passed, %d failed, 0 skipped\n", passed, failed + N_CHECKS - passed - failed);
		return 1;
	}
	/* a tuning entry that is no candidate (a local size of 96): refused, that launch tuned again */
	free(good);
	good = read_file(path, &size);
	at = good ? first_lws_at(good, size) : 0;
	bad = at ? patched(good, size, at, 96) : NULL;
	if (!bad || !write_file(path, bad, size)) {
		check(false, "a tuning entry that is no candidate", "no entry found in the file");
	} else {
		struct outcome o = session(m, path), n = session(m, path);

		snprintf(why, sizeof(why),
			 "rejected %d, timed %u, reused %u, refused %u, %s; next: timed %u, refused %u",
			 o.rejected, o.be.launches_timed, o.be.launches_reused, o.refused, o.error,
			 n.be.launches_timed, n.refused);
		check(o.ran && !o.rejected && o.refused == 1 && o.be.launches_timed == 1 &&
		      o.be.launches_reused == 2 && !memcmp(o.y, cold.y, sizeof(o.y)) && n.ran &&
		      !n.be.launches_timed && !n.refused,
		      "a tuning entry that is no candidate: refused and tuned again, the rest used, then rewritten",
		      why);
	}
	free(bad);
	free(good);
	good = read_file(path, &size);
	if (!good) {
		printf("%d passed, %d failed, 0 skipped\n", passed, failed + N_CHECKS - passed - failed);
		return 1;
	}
	/* an entry out of any range (a local size of 7777): the file is damaged */
	at = first_lws_at(good, size);
	bad = at ? patched(good, size, at, 7777) : NULL;
	refused(m, "a tuning entry out of range", bad, size, "damaged (tuning entry)", &cold);
	free(bad);
	/* damaged: one byte in the middle */
	bad = malloc(size);
	if (bad) {
		memcpy(bad, good, size);
		bad[size / 2] ^= 0x5a;
	}
	refused(m, "damaged", bad, size, "damaged (checksum)", &cold);
	free(bad);
	/* truncated: the first half, and a file shorter than the header */
	refused(m, "truncated", good, size / 2, "damaged (checksum)", &cold);
	refused(m, "truncated within the header", good, HEADER / 2, "too short", &cold);
	/* foreign: another device id, another pipelineCacheUUID (valid checksums) */
	bad = patched(good, size, AT_DEVICE, 0x5a5a5a5a);
	refused(m, "another device's file", bad, size, "made for another device or driver", &cold);
	free(bad);
	bad = patched(good, size, AT_UUID, 0x5a5a5a5a);
	refused(m, "another pipelineCacheUUID", bad, size, "made for another device or driver",
		&cold);
	free(bad);
	/* another format version (the first, which had no tuning table) */
	bad = patched(good, size, AT_VERSION, 1);
	refused(m, "another format version", bad, size, "of another format version", &cold);
	free(bad);
	/* unrelated: not a cache file at all */
	{
		char text[200];

		memset(text, 'x', sizeof(text));
		memcpy(text, "# a text file\n", 14);
		refused(m, "an unrelated file", text, sizeof(text), "not a Vulkan cache file", &cold);
	}

	/* a path that cannot be written: one warning, the session still works */
	char nowhere[200];

	snprintf(nowhere, sizeof(nowhere), "%s/missing-dir/vulkan.cache", dir);
	struct outcome lost = session(m, nowhere);

	snprintf(why, sizeof(why), "timed %u, note '%s', %s", lost.be.launches_timed, lost.note,
		 lost.error);
	check(lost.ran && lost.be.launches_timed == 3 && strstr(lost.note, "cannot write") &&
	      !memcmp(lost.y, cold.y, sizeof(lost.y)),
	      "unwritable path: a warning, the session runs", why);

	/* a device without timestamps: nothing tuned, the built-in sizes, the same output */
	setenv("ERT_VULKAN_TEST_NO_TIMESTAMPS", "1", 1);
	struct outcome untimed = session(m, NULL);

	unsetenv("ERT_VULKAN_TEST_NO_TIMESTAMPS");
	snprintf(why, sizeof(why), "timed %u, reused %u, %s", untimed.be.launches_timed,
		 untimed.be.launches_reused, untimed.error);
	check(untimed.ran && !untimed.be.launches_timed && !untimed.be.launches_reused &&
	      !memcmp(untimed.y, cold.y, sizeof(untimed.y)),
	      "no timestamps: nothing tuned, the session runs with the same output", why);

	share_two(m, &cold);
	run_together(m, &cold);
	destroy_first_while_running(m, &cold);
	concurrent(m, &cold);
	validation_key(m, &cold);
	device_key(m, &cold);
	sharing();

	free(good);
	ert_model_unref(m);
	unlink(path);
	rmdir(dir);
	printf("%d passed, %d failed, 0 skipped\n", passed, failed);
	return failed ? 1 : 0;
}
