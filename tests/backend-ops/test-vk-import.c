/* SPDX-License-Identifier: MIT */
/*
 * The Vulkan backend's dma-buf import (vk-import.c, the backend op
 * buffer_import_fd): the decision from the device's extensions and
 * $ERT_VULKAN_DMABUF (a pure function, on fabricated extension lists), and
 * every way an import can fail on the device at hand, each a clean error
 * with nothing left behind (no file descriptor, no Vulkan object: the
 * validation layer, when on, reports none): no extension, fd -1, an fd that
 * is no dma-buf (a pipe), a buffer larger than the dma-buf,
 * vkGetMemoryFdPropertiesKHR failing (a stand-in entry point on a device
 * made to look as if it had the extension). Where the device has the
 * extension, a memfd is imported as a dma-buf (lavapipe maps the fd; a
 * GPU driver refuses what is not a dma-buf, which is checked to fail
 * cleanly), read and written through the backend's copies and compared
 * with the memfd's bytes.
 *
 * Then the session's side (session/copies.c, "Sharing arenas"): a stand-in
 * for the NPU (the CPU backend, registered as ERT_BACKEND_NPU, whose arenas
 * are memfds it exports; it runs only Sin) before Vulkan, on x -> Sin -> a
 * -> Relu -> y. Where the import works (a driver that takes a memfd as a
 * dma-buf: Mesa 25's lavapipe), a is read in place and only y is copied;
 * where it does not (no extension, or the stand-in exporting a pipe), a is
 * copied and counted, with the reason on stderr under ERT_DEBUG_SHARING=1.
 * Either way y is the CPU's answer, no fd is left open and the validation
 * layer (when on) reports nothing.
 *
 * Prints one line per check and ends with "N passed, N failed, N skipped".
 */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "edgert.h"
#include "ert-backend-impl.h"
#include "ert-graph.h"
#include "ert-test-model.h"
#include "ert-test-placement.h"
#include "session/session-impl.h"
#include "tap-check.h"
#include "vulkan/vk-impl.h"

static int skipped;

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* ---- the decision, on fabricated extension lists ---- */

static VkExtensionProperties ext(const char *name)
{
	VkExtensionProperties e = { .specVersion = 1 };

	snprintf(e.extensionName, sizeof(e.extensionName), "%s", name);
	return e;
}

static void check_decide(void)
{
	VkExtensionProperties both[4] = {
		ext("VK_KHR_16bit_storage"), ext(VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME),
		ext("VK_KHR_maintenance4"), ext(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME),
	};
	VkExtensionProperties fd_only[2] = {
		ext(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME), ext("VK_KHR_external_memory"),
	};
	VkExtensionProperties dma_only[1] = { ext(VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME) };
	/* a name that only begins like the extension's is not it */
	VkExtensionProperties prefix[2] = {
		ext(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME), ext("VK_EXT_external_memory_dma"),
	};
	const char *why = "";
	char msg[256];
	int r;

	r = ert_vk_dmabuf_decide(both, 4, NULL, &why);
	check(r == 1 && !why, "decide: both extensions, no variable: import", "not chosen");
	r = ert_vk_dmabuf_decide(both, 4, "auto", &why);
	check(r == 1, "decide: both extensions, ERT_VULKAN_DMABUF=auto: import", "not chosen");
	r = ert_vk_dmabuf_decide(both, 4, "", &why);
	check(r == 1, "decide: both extensions, ERT_VULKAN_DMABUF empty: import", "not chosen");
	r = ert_vk_dmabuf_decide(both, 4, "off", &why);
	snprintf(msg, sizeof(msg), "answered %d (%s)", r, why ? why : "");
	check(r == 0 && why && strstr(why, "ERT_VULKAN_DMABUF=off"),
	      "decide: ERT_VULKAN_DMABUF=off: no import, saying so", msg);
	r = ert_vk_dmabuf_decide(both, 4, "yes", &why);
	check(r == -1, "decide: ERT_VULKAN_DMABUF=yes is refused", "accepted");
	r = ert_vk_dmabuf_decide(fd_only, 2, NULL, &why);
	snprintf(msg, sizeof(msg), "answered %d (%s)", r, why ? why : "");
	check(r == 0 && why && strstr(why, "VK_EXT_external_memory_dma_buf"),
	      "decide: external_memory_fd alone (Mesa 22.3's lavapipe): no import, naming dma_buf",
	      msg);
	r = ert_vk_dmabuf_decide(dma_only, 1, NULL, &why);
	snprintf(msg, sizeof(msg), "answered %d (%s)", r, why ? why : "");
	check(r == 0 && why && strstr(why, "VK_KHR_external_memory_fd"),
	      "decide: dma_buf without external_memory_fd: no import, naming it", msg);
	r = ert_vk_dmabuf_decide(prefix, 2, NULL, &why);
	check(r == 0, "decide: a name that only begins like the extension's does not count",
	      "chosen");
	r = ert_vk_dmabuf_decide(NULL, 0, NULL, &why);
	check(r == 0 && why, "decide: no extensions at all: no import", "chosen");
}

/* ---- imports on the device ---- */

static VKAPI_ATTR VkResult VKAPI_CALL props_fail(VkDevice dev,
						 VkExternalMemoryHandleTypeFlagBits type, int fd,
						 VkMemoryFdPropertiesKHR *out)
{
	return VK_ERROR_INVALID_EXTERNAL_HANDLE;
}

/* An import that must fail: a status other than OK, a message, and nothing held. */
static void expect_refused(struct ert_backend *be, int fd, size_t size, ert_status want,
			   const char *in_msg, const char *what)
{
	struct ert_vk *vk = be->ctx;
	struct ert_buffer buf = { 0 };
	struct ert_err err = { "" };
	char msg[sizeof(err.msg) + 64];
	int before = open_fds();
	ert_status st = be->ops->buffer_import_fd(be, fd, size, &buf, &err);
	struct ert_err verr = { "" };

	snprintf(msg, sizeof(msg), "status %d, '%s'", (int)st, err.msg);
	if (st == ERT_OK)
		be->ops->buffer_free(be, &buf);
	check(st == want && !buf.handle && strstr(err.msg, in_msg) && open_fds() == before &&
	      ert_vk_validation_check(vk, &verr) == ERT_OK, what, verr.msg[0] ? verr.msg : msg);
}

/*
 * What an import with the extension refuses: fd -1, a pipe, a buffer past
 * the dma-buf's end (all before any Vulkan call), and the fd's properties
 * failing (vkGetMemoryFdPropertiesKHR replaced by props_fail, left so).
 */
static void expect_bad_fds(struct ert_backend *be, int memfd, int pipe_rd, size_t size)
{
	struct ert_vk *vk = be->ctx;

	expect_refused(be, -1, size, ERT_STATUS_INVALID_ARGUMENT, "fd -1",
		       "fd -1: INVALID_ARGUMENT before any Vulkan call");
	expect_refused(be, pipe_rd, size, ERT_STATUS_INVALID_ARGUMENT, "dma-buf fd",
		       "a pipe (no size): INVALID_ARGUMENT before any Vulkan call");
	expect_refused(be, memfd, size + 4096, ERT_STATUS_INVALID_ARGUMENT, "over a dma-buf",
		       "a buffer larger than the dma-buf: INVALID_ARGUMENT");
	vk->get_fd_props = props_fail;
	expect_refused(be, memfd, size, ERT_STATUS_BACKEND, "vkGetMemoryFdPropertiesKHR",
		       "vkGetMemoryFdPropertiesKHR failing: BACKEND, naming it, nothing made");
}

/* With the extension: a memfd as a dma-buf, read and written through the import. */
static void check_memfd(struct ert_backend *be, int memfd, uint8_t *map, size_t size)
{
	struct ert_vk *vk = be->ctx;
	struct ert_buffer buf = { 0 };
	struct ert_err err = { "" };
	uint8_t back[256];
	int before = open_fds();
	ert_status st = be->ops->buffer_import_fd(be, memfd, size, &buf, &err);
	bool same;

	if (st != ERT_OK) {
		/* a GPU driver wants a real dma-buf: refusing a memfd cleanly is right */
		check(open_fds() == before && ert_vk_validation_check(vk, &err) == ERT_OK,
		      "a memfd refused as a dma-buf, cleanly", err.msg);
		printf("# %s refused the memfd: %s\n", vk->props.deviceName, err.msg);
		return;
	}
	for (size_t i = 0; i < size; i++)
		map[i] = (uint8_t)(i * 7 + 3);
	st = be->ops->buffer_read(be, &buf, 4096, back, sizeof(back), &err);
	same = st == ERT_OK && !memcmp(back, map + 4096, sizeof(back));
	check(same, "a memfd imported as a dma-buf: the device reads the memfd's bytes",
	      st == ERT_OK ? "bytes differ" : err.msg);
	memset(back, 0xa5, sizeof(back));
	st = be->ops->buffer_write(be, &buf, 8192, back, sizeof(back), &err);
	if (st == ERT_OK)
		st = be->ops->synchronize(be, &err);
	check(st == ERT_OK && map[8192] == 0xa5 && map[8192 + 255] == 0xa5 && map[8191] != 0xa5,
	      "a memfd imported as a dma-buf: the device's writes land in the memfd",
	      st == ERT_OK ? "bytes differ" : err.msg);
	be->ops->buffer_free(be, &buf);
	check(open_fds() == before && ert_vk_validation_check(vk, &err) == ERT_OK,
	      "the import freed: its fd closed, no validation error", err.msg);
}

static void check_device(void)
{
	struct ert_backend *be = NULL;
	struct ert_err err = { "" };
	struct ert_vk *vk;
	size_t size = 64 * 1024;
	int memfd, pipefd[2];
	uint8_t *map;

	if (ert_backend_create(ERT_BACKEND_VULKAN, NULL, &be, &err) != ERT_OK) {
		printf("# vulkan: skipped (%s)\n", err.msg);
		skipped += 8;
		return;
	}
	vk = be->ctx;
	printf("# vulkan: %s, dma-buf import %s%s\n", vk->props.deviceName,
	       vk->dmabuf ? "available" : "not available: ", vk->dmabuf ? "" : vk->dmabuf_why);
	memfd = memfd_create("ert-dmabuf-test", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, (off_t)size) || pipe(pipefd)) {
		check(false, "a memfd and a pipe to import", "cannot make them");
		ert_backend_destroy(be);
		return;
	}
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (!vk->dmabuf) {
		expect_refused(be, memfd, size, ERT_STATUS_UNSUPPORTED, vk->dmabuf_why,
			       "no extension: UNSUPPORTED, saying which, nothing touched");
		expect_refused(be, -1, size, ERT_STATUS_UNSUPPORTED, "cannot import",
			       "no extension, fd -1: UNSUPPORTED");
		/* from here on, as if the device had it, with entry points that fail */
		vk->dmabuf = true;
		expect_bad_fds(be, memfd, pipefd[0], size);
		vk->dmabuf = false;
		vk->get_fd_props = NULL;
		skipped += 3;
		printf("# the memfd import itself: skipped (the device has no VK_EXT_external_memory_dma_buf)\n");
	} else {
		PFN_vkGetMemoryFdPropertiesKHR real = vk->get_fd_props;

		expect_bad_fds(be, memfd, pipefd[0], size);
		vk->get_fd_props = real;
		skipped += 2;
		if (map != MAP_FAILED)
			check_memfd(be, memfd, map, size);
	}
	if (map != MAP_FAILED)
		munmap(map, size);
	close(memfd);
	close(pipefd[0]);
	close(pipefd[1]);
	ert_backend_destroy(be);

	/* the variable: off (no import, saying so) and a malformed value (no backend) */
	setenv("ERT_VULKAN_DMABUF", "off", 1);
	be = NULL;
	if (ert_backend_create(ERT_BACKEND_VULKAN, NULL, &be, &err) == ERT_OK) {
		vk = be->ctx;
		check(!vk->dmabuf && vk->dmabuf_why && strstr(vk->dmabuf_why, "=off"),
		      "ERT_VULKAN_DMABUF=off: no import, saying so", "imports");
		ert_backend_destroy(be);
	} else {
		check(false, "ERT_VULKAN_DMABUF=off: no import, saying so", err.msg);
	}
	setenv("ERT_VULKAN_DMABUF", "on", 1);
	be = NULL;
	err.msg[0] = 0;
	check(ert_backend_create(ERT_BACKEND_VULKAN, NULL, &be, &err) == ERT_STATUS_INVALID_ARGUMENT &&
	      strstr(err.msg, "ERT_VULKAN_DMABUF='on'"),
	      "ERT_VULKAN_DMABUF=on: the backend is refused, naming the variable", err.msg);
	ert_backend_destroy(be);
	unsetenv("ERT_VULKAN_DMABUF");
}

/* ---- the session: a stand-in NPU whose arenas are memfds ---- */

static struct ert_backend_ops memfd_ops;
static bool export_pipe;         /* the stand-in exports a pipe instead of its memfd */

struct memfd_buf {
	int fd;
	size_t size;
};

static const char *memfd_type(struct ert_backend *be)
{
	return "memfd";
}

static bool memfd_supports(struct ert_backend *be, const struct ert_exec *x)
{
	return x->node->op == ERT_OP_Sin;
}

static ert_status memfd_alloc(struct ert_backend *be, size_t size, struct ert_buffer *out,
			      struct ert_err *err)
{
	struct memfd_buf *m = calloc(1, sizeof(*m));
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), bytes = size ? (size + pg - 1) / pg * pg : pg;

	if (!m) {
		ert_err_set(err, "memfd: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	m->fd = memfd_create("ert-arena", MFD_CLOEXEC);
	m->size = bytes;
	out->host = m->fd < 0 || ftruncate(m->fd, (off_t)bytes) ? MAP_FAILED :
		mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (out->host == MAP_FAILED) {
		if (m->fd >= 0)
			close(m->fd);
		free(m);
		out->host = NULL;
		ert_err_set(err, "memfd: cannot make an arena of %zu bytes", size);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	out->size = size;
	out->handle = m;
	return ERT_OK;
}

static void memfd_free(struct ert_backend *be, struct ert_buffer *buf)
{
	struct memfd_buf *m = buf->handle;

	if (!m)
		return;
	munmap(buf->host, m->size);
	close(m->fd);
	free(m);
	buf->handle = NULL;
	buf->host = NULL;
}

static ert_status memfd_export(struct ert_backend *be, const struct ert_buffer *buf, int *fd_out,
			       struct ert_err *err)
{
	const struct memfd_buf *m = buf->handle;
	int p[2];

	if (export_pipe) {
		if (pipe(p)) {
			ert_err_set(err, "memfd: no pipe");
			return ERT_STATUS_BACKEND;
		}
		close(p[1]);
		*fd_out = p[0];
		return ERT_OK;
	}
	*fd_out = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
	return *fd_out < 0 ? ERT_STATUS_BACKEND : ERT_OK;
}

/* The CPU backend, as ERT_BACKEND_NPU, with memfd arenas it exports, running only Sin. */
static ert_status memfd_create_backend(const ert_config *cfg, struct ert_backend **out,
				       struct ert_err *err)
{
	ert_status st = ert_backend_create(ERT_BACKEND_CPU, cfg, out, err);

	if (st != ERT_OK)
		return st;
	memfd_ops = *(*out)->ops;
	memfd_ops.name = "memfd-cpu";
	memfd_ops.supports_op = memfd_supports;
	memfd_ops.buffer_type = memfd_type;
	memfd_ops.buffer_alloc = memfd_alloc;
	memfd_ops.buffer_free = memfd_free;
	memfd_ops.buffer_export_fd = memfd_export;
	(*out)->ops = &memfd_ops;
	(*out)->type = ERT_BACKEND_NPU;
	return ERT_OK;
}

/* Run @fn with stderr in @log (truncated to @len). */
static ert_status with_stderr(char *log, size_t len, ert_status (*fn)(void *), void *arg)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	ert_status st;
	size_t n = 0;

	fflush(stderr);
	if (tmp)
		dup2(fileno(tmp), 2);
	st = fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (tmp) {
		rewind(tmp);
		n = fread(log, 1, len - 1, tmp);
		fclose(tmp);
	}
	log[n] = 0;
	return st;
}

struct create_args {
	ert_model *m;
	ert_config *cfg;
	ert_session **s;
};

static ert_status create_session(void *arg)
{
	struct create_args *a = arg;

	return ert_session_create(a->m, a->cfg, a->s);
}

/* One session of x -> Sin (memfd-cpu) -> a -> Relu (vulkan) -> y; @shared: is a read in place? */
static void check_session(ert_model *m, bool shared, const char *what)
{
	float xs[4 * 1000], ys[4 * 1000];
	size_t bytes = sizeof(xs);
	ert_session *s = NULL;
	ert_config cfg;
	struct create_args ca = { m, &cfg, &s };
	char log[2048], why[512] = "", placed[128] = "";
	int before = open_fds();
	uint64_t want = shared ? bytes : 2 * bytes;
	uint32_t n_shared = 0;
	bool ok = true;

	ert_config_init(&cfg);
	cfg.num_threads = 1;
	cfg.backends[0] = ERT_BACKEND_NPU;
	cfg.backends[1] = ERT_BACKEND_VULKAN;
	cfg.backends[2] = ERT_BACKEND_CPU;
	cfg.num_backends = 3;
	setenv("ERT_DEBUG_SHARING", "1", 1);
	if (with_stderr(log, sizeof(log), create_session, &ca) != ERT_OK) {
		snprintf(why, sizeof(why), "session: %s", ert_last_error());
		check(false, what, why);
		unsetenv("ERT_DEBUG_SHARING");
		return;
	}
	unsetenv("ERT_DEBUG_SHARING");
	n_shared = session_shared_mirrors(s);
	session_placement(s, placed, sizeof(placed));
	for (int run = 0; run < 2 && ok; run++) {
		for (size_t i = 0; i < 4 * 1000; i++)
			xs[i] = (float)((i * (run ? 13 : 37)) % 101) * 0.05f - 2.5f;
		if (ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, xs, bytes) != ERT_OK ||
		    ert_session_run(s) != ERT_OK) {
			snprintf(why, sizeof(why), "run: %s", ert_last_error());
			ok = false;
			break;
		}
		memcpy(ys, ert_tensor_data(ert_session_get_output(s, 0)), bytes);
		for (size_t i = 0; i < 4 * 1000 && ok; i++) {
			float r = sinf(xs[i]) > 0 ? sinf(xs[i]) : 0;

			if (fabsf(ys[i] - r) > 1e-5f) {
				snprintf(why, sizeof(why), "run %d: y[%zu] = %g, expected %g", run, i,
					 ys[i], r);
				ok = false;
			}
		}
		if (ok && ert_session_copied_bytes(s) != want) {
			snprintf(why, sizeof(why), "run %d copied %llu bytes, expected %llu", run,
				 (unsigned long long)ert_session_copied_bytes(s),
				 (unsigned long long)want);
			ok = false;
		}
	}
	if (ok && strcmp(placed, "sin=memfd-cpu relu=vulkan")) {
		snprintf(why, sizeof(why), "placed %s", placed);
		ok = false;
	}
	if (ok && n_shared != (shared ? 1u : 0u)) {
		snprintf(why, sizeof(why), "%u mirror(s) shared", n_shared);
		ok = false;
	}
	if (ok && !strstr(log, shared ? "sharing arena 'memfd' (memfd-cpu) with vulkan: imported" :
			  "sharing arena 'memfd' (memfd-cpu) with vulkan: import failed")) {
		snprintf(why, sizeof(why), "stderr says '%.300s'", log);
		ok = false;
	}
	ert_session_destroy(s);
	if (ok && open_fds() != before) {
		snprintf(why, sizeof(why), "%d fd(s) left open", open_fds() - before);
		ok = false;
	}
	check(ok, what, why);
	/* the debug lines, as comments */
	for (char *l = strtok(log, "\n"); l; l = strtok(NULL, "\n"))
		printf("# %s\n", l);
}

static void check_sessions(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dims[2] = { 4, 1000 };
	struct ert_backend *be = NULL;
	struct ert_err err = { "" };
	bool dmabuf;
	int32_t x, a, y;
	ert_model *m;

	if (ert_backend_create(ERT_BACKEND_VULKAN, NULL, &be, &err) != ERT_OK) {
		printf("# sessions: skipped (%s)\n", err.msg);
		skipped += 2;
		ert_graph_destroy(g);
		return;
	}
	dmabuf = ((struct ert_vk *)be->ctx)->dmabuf;
	ert_backend_destroy(be);
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, dims);
	a = ert_graph_add_tensor(g, "a", ERT_DTYPE_FLOAT32, -1, NULL);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_Sin, "sin", 1, &x, 1, &a);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &a, 1, &y);
	ert_graph_add_output(g, y);
	m = model_from_graph(g);
	if (!m) {
		check(false, "the session's model", ert_last_error());
		return;
	}
	ert_backend_register(ERT_BACKEND_NPU, memfd_create_backend);
	export_pipe = false;
	check_session(m, dmabuf, dmabuf ?
		      "a memfd arena shared with Vulkan: a read in place, y copied, the right answer" :
		      "no dma-buf import: a copied and counted, the reason on stderr, the right answer");
	export_pipe = true;
	check_session(m, false,
		      "an exported fd that is no dma-buf (a pipe): a copied and counted, the reason on stderr, the right answer");
	ert_backend_register(ERT_BACKEND_NPU, NULL);
	ert_model_unref(m);
}

int main(void)
{
	check_decide();
	check_device();
	check_sessions();
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
