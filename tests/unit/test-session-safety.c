/* SPDX-License-Identifier: MIT */
/*
 * Sessions misused through the public API (issue 15): a resize whose
 * allocation fails, calls back into a running session from its callbacks,
 * ert_config_init(NULL).
 */
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "edgert.h"
#include "ert-graph.h"
#include "ert-test-model.h"
#include "ert-test.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifdef UNDER_ASAN
/* a failed allocation returns NULL, as it does without ASan, instead of aborting */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

/* x[batch, 4] -> MatMul(w[4, 4]) -> Relu -> y: the MatMul packs x as it runs. */
static struct ert_graph *matmul_graph(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t xd[2] = { -1, 4 }, wd[2] = { 4, 4 };
	float *w = malloc(16 * sizeof(float));
	int32_t x, wt, mm, y;

	g->opset = 17;
	for (int i = 0; i < 16; i++)
		w[i] = i % 5 == 0 ? 1.0f : 0.0f; /* the identity */
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, xd);
	g->tensors[x].dim_names[0] = ert_graph_strdup(g, "batch");
	wt = ert_graph_add_tensor(g, "w", ERT_DTYPE_FLOAT32, 2, wd);
	ert_graph_set_const(g, wt, w, 16 * sizeof(float), true);
	mm = ert_graph_add_tensor(g, "mm", ERT_DTYPE_FLOAT32, -1, NULL);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_MatMul, "matmul", 2, (int32_t[]){ x, wt }, 1, &mm);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &mm, 1, &y);
	ert_graph_add_output(g, y);
	return g;
}

static ert_model *matmul_model(void)
{
	return model_from_graph(matmul_graph());
}

static void fill(ert_session *s, int64_t batch)
{
	float *x = ert_tensor_data(ert_session_get_input(s, 0));

	for (int64_t i = 0; i < batch * 4; i++)
		x[i] = (float)(i % 7) - 3.0f;
}

/* y = relu(x) for the identity weights */
static int output_ok(ert_session *s, int64_t batch)
{
	const ert_tensor *y = ert_session_get_output(s, 0);
	const float *out = ert_tensor_data(y);

	if (!out || ert_tensor_dim(y, 0) != batch || ert_tensor_dim(y, 1) != 4)
		return 0;
	for (int64_t i = 0; i < batch * 4; i++) {
		float x = (float)(i % 7) - 3.0f;

		if (out[i] != (x > 0 ? x : 0))
			return 0;
	}
	return 1;
}

/*
 * The checks after a resize whose allocation failed: the input keeps its old
 * shape and buffer, set_input takes the old size only, and runs still work.
 */
static void check_failed_resize(ert_session *s, int64_t huge, int *ert_test_failed_)
{
	ert_tensor *in = ert_session_get_input(s, 0);
	int64_t dims[2] = { huge, 4 };
	float old[8] = { 0 };
	ert_status st;

	st = ert_session_resize_input(s, 0, 2, dims);
	CHECK(st != ERT_OK);
	CHECK(strstr(ert_session_error(s), "'x'") != NULL);
	CHECK_EQ_INT(ert_tensor_dim(in, 0), 2);
	CHECK_EQ_INT(ert_tensor_byte_size(in), sizeof(old));
	CHECK_EQ_INT(ert_tensor_element_count(in), 8);
	/* the new size is refused (it would overrun the old buffer), the old one is taken */
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, old, (size_t)huge * 16),
		     ERT_STATUS_SHAPE);
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, old, sizeof(old)), ERT_OK);
	fill(s, 2);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(output_ok(s, 2));
}

ERT_TEST(failed_resize_keeps_shape)
{
	ert_model *m = matmul_model();
	ert_session *s = NULL;
	ert_config cfg;

	REQUIRE(m);
	/* no memory budget: the allocation itself must fail (test-session-budget checks the budget) */
	ert_config_init(&cfg);
	cfg.max_memory = UINT64_MAX;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_OK);
	REQUIRE(s);
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 2, (int64_t[]){ 2, 4 }), ERT_OK);
	fill(s, 2);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(output_ok(s, 2));
#ifdef UNDER_ASAN
	/*
	 * ASan reserves terabytes of shadow, so an address-space limit cannot be
	 * used: ask for more than a process can map (256 TiB of floats).
	 */
	check_failed_resize(s, (int64_t)1 << 44, ert_test_failed_);
#else
	/*
	 * An allocation that fails: in a child, cap the address space a little
	 * above what the process uses and ask for a 256 MiB input.
	 */
	fflush(NULL);
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 64u << 20, 64u << 20 };
		FILE *f = fopen("/proc/self/statm", "r");
		unsigned long pages = 0;
		int failed = 0;

		if (!f || fscanf(f, "%lu", &pages) != 1)
			_exit(2);
		fclose(f);
		rl.rlim_cur = rl.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (64u << 20);
		if (setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(2);
		check_failed_resize(s, (int64_t)1 << 24, &failed);
		_exit(failed);
	}
	int status = 0;

	CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ_INT(WEXITSTATUS(status), 0);
#endif
	/* and in this process the session is untouched and still resizes */
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 2, (int64_t[]){ 3, 4 }), ERT_OK);
	fill(s, 3);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(output_ok(s, 3));
	ert_session_destroy(s);
	ert_model_unref(m);
}

/* What a callback tries on the running session, and what it got back. */
struct reenter {
	ert_session *s;
	int calls;
	ert_status resize, run, set_input;
	int destroyed_busy;
	int accessors_ok;
};

static int reenter_cb(const ert_op_info *op, void *user)
{
	struct reenter *r = user;
	float buf[8] = { 0 };

	if (op->index != 0)
		return 0;
	r->calls++;
	/* a bigger input would free the buffer the MatMul is about to pack */
	r->resize = ert_session_resize_input(r->s, 0, 2, (int64_t[]){ 64, 4 });
	r->run = ert_session_run(r->s);
	r->set_input = ert_session_set_input(r->s, 0, ERT_DTYPE_FLOAT32, buf, sizeof(buf));
	ert_session_destroy(r->s);
	r->destroyed_busy = ert_session_input_count(r->s) == 1 &&
			    strstr(ert_last_error(), "running") != NULL;
	/* the accessors a callback may use */
	r->accessors_ok = ert_tensor_byte_size(ert_session_get_input(r->s, 0)) == sizeof(buf) &&
			  ert_tensor_data(ert_session_get_input(r->s, 0)) != NULL &&
			  ert_session_output_count(r->s) == 1 &&
			  strstr(ert_session_error(r->s), "running") != NULL;
	return 0;
}

static void check_reentry(bool before, int *ert_test_failed_)
{
	ert_model *m = matmul_model();
	struct reenter r = { 0 };
	ert_session *s = NULL;
	ert_config cfg;

	REQUIRE(m);
	ert_config_init(&cfg);
	if (before)
		cfg.before_op = reenter_cb;
	else
		cfg.after_op = reenter_cb;
	cfg.callback_user = &r;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_OK);
	REQUIRE(s);
	r.s = s;
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 2, (int64_t[]){ 2, 4 }), ERT_OK);
	fill(s, 2);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK_EQ_INT(r.calls, 1);
	CHECK_EQ_INT(r.resize, ERT_STATUS_BUSY);
	CHECK_EQ_INT(r.run, ERT_STATUS_BUSY);
	CHECK_EQ_INT(r.set_input, ERT_STATUS_BUSY);
	CHECK(r.destroyed_busy);
	CHECK(r.accessors_ok);
	/* nothing changed: the run used the old shape and gave the right answer */
	CHECK(output_ok(s, 2));
	CHECK_EQ_INT(ert_tensor_dim(ert_session_get_input(s, 0), 0), 2);
	CHECK(strcmp(ert_session_error(s), "") == 0);
	/* after the run, the same calls work */
	cfg.before_op = NULL;
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 2, (int64_t[]){ 5, 4 }), ERT_OK);
	r.calls = 0;
	fill(s, 5);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(output_ok(s, 5));
	CHECK_EQ_INT(r.calls, 1);
	CHECK(strcmp(ert_status_string(ERT_STATUS_BUSY), "session busy") == 0);
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST(callbacks_cannot_reenter_before_op)
{
	check_reentry(true, ert_test_failed_);
}

ERT_TEST(callbacks_cannot_reenter_after_op)
{
	check_reentry(false, ert_test_failed_);
}

ERT_TEST(load_refuses_fifo)
{
	char dir[] = "/tmp/ert-fifo-XXXXXX", path[64], msg[256] = "";
	ert_model *m = NULL;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/model.ert", dir);
	REQUIRE(mkfifo(path, 0600) == 0);
	alarm(30); /* a blocking open would hang: fail the test instead */
	CHECK_EQ_INT(ert_model_load_file(path, &m, msg, sizeof(msg)), ERT_STATUS_INVALID_ARGUMENT);
	alarm(0);
	CHECK(m == NULL);
	CHECK(strstr(msg, "it is a FIFO, not a regular file") != NULL);
	CHECK(strstr(msg, path) != NULL);
	unlink(path);
	/* a directory is refused the same way */
	CHECK_EQ_INT(ert_model_load_file(dir, &m, msg, sizeof(msg)), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(msg, "it is a directory") != NULL);
	rmdir(dir);
}

/* Overwrite @path in place, as cp does: same inode, truncated, then new bytes. */
static int overwrite_in_place(const char *path)
{
	FILE *f = fopen(path, "r+b");
	long size;
	int ok;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) <= 0)
		return 0;
	ok = ftruncate(fileno(f), 0) == 0 && fseek(f, 0, SEEK_SET) == 0;
	for (long i = 0; ok && i < size / 2; i++)
		ok = fputc(0xa5, f) != EOF;
	return fclose(f) == 0 && ok;
}

ERT_TEST(load_copy_survives_overwrite)
{
	char dir[] = "/tmp/ert-copy-XXXXXX", path[64], msg[256] = "";
	struct ert_graph *g = matmul_graph();
	struct ert_err err = { "" };
	ert_model *m = NULL;
	ert_session *s = NULL;

	REQUIRE(g && mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/model.ert", dir);
	CHECK_EQ_INT(ert_graph_toposort(g, &err), ERT_OK);
	CHECK_EQ_INT(ert_format_write_file(g, NULL, path, &err), ERT_OK);
	ert_graph_destroy(g);
	CHECK_EQ_INT(ert_model_load_file_flags(path, 0x80, &m, msg, sizeof(msg)),
		     ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(msg, "unknown flags 0x80") != NULL);
	CHECK_EQ_INT(ert_model_load_file_flags(path, ERT_MODEL_LOAD_COPY, &m, msg, sizeof(msg)),
		     ERT_OK);
	REQUIRE(m);
	/* the file is truncated and rewritten with half its size of garbage */
	CHECK(overwrite_in_place(path));
	CHECK_EQ_INT(ert_session_create(m, NULL, &s), ERT_OK);
	REQUIRE(s);
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 2, (int64_t[]){ 3, 4 }), ERT_OK);
	fill(s, 3);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(output_ok(s, 3));
	ert_session_destroy(s);
	ert_model_unref(m);
	unlink(path);
	rmdir(dir);
}

ERT_TEST(config_init_null)
{
	ert_config cfg;

	ert_config_init(NULL); /* documented as a no-op */
	ert_config_init(&cfg);
	CHECK_EQ_INT(cfg.struct_size, sizeof(cfg));
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(failed_resize_keeps_shape),
	      ERT_TEST_ENTRY(callbacks_cannot_reenter_before_op),
	      ERT_TEST_ENTRY(callbacks_cannot_reenter_after_op), ERT_TEST_ENTRY(load_refuses_fifo),
	      ERT_TEST_ENTRY(load_copy_survives_overwrite),
	      ERT_TEST_ENTRY(config_init_null))
