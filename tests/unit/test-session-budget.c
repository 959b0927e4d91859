/* SPDX-License-Identifier: MIT */
/*
 * The memory budget (ert_config.max_memory; issue 15 item 5, issue 14 "work
 * budgets"): a tiny model that declares huge inputs, or whose shape inference
 * gives a huge tensor, is refused with a message before anything of that size
 * is allocated; plans up to the budget run; large input buffers are zeroed
 * lazily, so creating a session commits no memory for them.
 *
 * Without ASan, each hostile case runs in a child whose address space is
 * capped a little above what it uses, so that a regression fails the test
 * instead of making the machine swap or the OOM killer pick a victim.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
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
/*
 * ASan reserves terabytes of shadow, so no address-space cap: instead a
 * regression's big malloc returns NULL rather than taking gigabytes.
 */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=4096";
}
#endif

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

/*
 * Run @fn in a child whose address space may grow @headroom bytes beyond what
 * it has mapped (under ASan: in this process), and check that it passed.
 */
static void guarded(void (*fn)(int *ert_test_failed_), uint64_t headroom,
		    int *ert_test_failed_)
{
#ifdef UNDER_ASAN
	(void)headroom;
	fn(ert_test_failed_);
#else
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		FILE *f = fopen("/proc/self/statm", "r");
		unsigned long pages = 0;
		struct rlimit rl;
		int failed = 0;

		if (!f || fscanf(f, "%lu", &pages) != 1)
			_exit(2);
		fclose(f);
		rl.rlim_cur = rl.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + headroom;
		if (setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(2);
		fn(&failed);
		fflush(NULL);
		_exit(failed);
	}
	CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ_INT(WEXITSTATUS(status), 0);
#endif
}

/* x[dims] -> @op -> y; a negative dim is symbolic ("n"). */
static ert_model *unary_model(ert_dtype dt, int32_t rank, const int64_t *dims, enum ert_op op)
{
	struct ert_graph *g = ert_graph_create();
	int32_t x, y;

	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", dt, rank, dims);
	for (int32_t d = 0; d < rank; d++)
		if (dims[d] < 0)
			g->tensors[x].dim_names[d] = ert_graph_strdup(g, "n");
	y = ert_graph_add_tensor(g, "y", dt, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, op, op == ERT_OP_Relu ? "relu" : "identity", 1, &x, 1, &y);
	ert_graph_add_output(g, y);
	return model_from_graph(g);
}

static ert_status create(ert_model *m, uint64_t max_memory, ert_session **s)
{
	ert_config cfg;

	ert_config_init(&cfg);
	cfg.num_threads = 1;
	cfg.max_memory = max_memory;
	return ert_session_create(m, &cfg, s);
}

/* ert_last_error() holds every one of the NULL-terminated @parts. */
static int says(const char *msg, const char *const *parts)
{
	for (; *parts; parts++) {
		if (!strstr(msg, *parts)) {
			fprintf(stderr, "  message lacks \"%s\": %s\n", *parts, msg);
			return 0;
		}
	}
	return 1;
}

#define SAYS(msg, ...) says((msg), (const char *const[]){ __VA_ARGS__, NULL })

/* The model: [batch, 2^32] float, 16 GiB at batch 1. */
static void huge_float_input(int *ert_test_failed_)
{
	ert_model *m = unary_model(ERT_DTYPE_FLOAT32, 2, (int64_t[]){ -1, (int64_t)1 << 32 },
				   ERT_OP_Relu);
	ert_session *s = NULL;

	REQUIRE(m);
	CHECK_EQ_INT(create(m, GiB, &s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(s == NULL);
	CHECK(SAYS(ert_last_error(), "failed to create session: input 'x' [1,4294967296] float32",
		   "takes 17179869184 bytes (16.0 GiB)",
		   "more than the memory budget of 1073741824 bytes (1.0 GiB) (ert_config.max_memory)"));
	ert_model_unref(m);
}

ERT_TEST(huge_float_input_refused)
{
	guarded(huge_float_input, 256 * MiB, ert_test_failed_);
}

/* int64 and bool inputs of 2^31 + 1 elements: at creation, and by a resize. */
static void huge_int_inputs(int *ert_test_failed_)
{
	const int64_t big = ((int64_t)1 << 31) + 1;
	ert_model *m = unary_model(ERT_DTYPE_INT64, 1, &big, ERT_OP_Identity);
	ert_session *s = NULL;

	REQUIRE(m);
	CHECK_EQ_INT(create(m, GiB, &s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(s == NULL);
	CHECK(SAYS(ert_last_error(), "input 'x' [2147483649] int64 takes 17179873280 bytes (16.0 GiB)",
		   "memory budget of 1073741824 bytes"));
	ert_model_unref(m);

	m = unary_model(ERT_DTYPE_BOOL, 1, (int64_t[]){ -1 }, ERT_OP_Identity);
	REQUIRE(m);
	CHECK_EQ_INT(create(m, GiB, &s), ERT_OK);
	REQUIRE(s);
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 1, &big), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(SAYS(ert_session_error(s), "resize: input 'x' [2147483649] bool takes 2147487744 bytes",
		   "memory budget of 1073741824 bytes", "the input keeps its shape"));
	CHECK_EQ_INT(ert_tensor_dim(ert_session_get_input(s, 0), 0), 1);
	CHECK_EQ_INT(ert_tensor_byte_size(ert_session_get_input(s, 0)), 1);
	/* and a size within the budget still works */
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 1, (int64_t[]){ 5 }), ERT_OK);
	memcpy(ert_tensor_data(ert_session_get_input(s, 0)), (uint8_t[]){ 1, 0, 1, 1, 0 }, 5);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(memcmp(ert_tensor_data(ert_session_get_output(s, 0)), (uint8_t[]){ 1, 0, 1, 1, 0 },
		     5) == 0);
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST(huge_int_inputs_refused)
{
	guarded(huge_int_inputs, 256 * MiB, ert_test_failed_);
}

/* x[1] int64 -> OneHot(depth = @depth, values = {0, 1}) -> y */
static ert_model *one_hot_model(int64_t depth)
{
	struct ert_graph *g = ert_graph_create();
	int64_t *dv = malloc(sizeof(*dv));
	float *vv = malloc(2 * sizeof(*vv));
	int32_t x, d, v, y;

	g->opset = 11;
	*dv = depth;
	vv[0] = 0.0f;
	vv[1] = 1.0f;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_INT64, 1, (int64_t[]){ 1 });
	d = ert_graph_add_tensor(g, "depth", ERT_DTYPE_INT64, 0, NULL);
	ert_graph_set_const(g, d, dv, sizeof(*dv), true);
	v = ert_graph_add_tensor(g, "values", ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 2 });
	ert_graph_set_const(g, v, vv, 2 * sizeof(*vv), true);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_OneHot, "onehot", 3, (int32_t[]){ x, d, v }, 1, &y);
	ert_graph_add_output(g, y);
	return model_from_graph(g);
}

static void one_hot_depth(int *ert_test_failed_)
{
	ert_model *m = one_hot_model((int64_t)1 << 31);
	ert_session *s = NULL;

	REQUIRE(m);
	CHECK_EQ_INT(create(m, GiB, &s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(s == NULL);
	CHECK(SAYS(ert_last_error(), "failed to plan: OneHot 'onehot': output 'y' [1,2147483648] float32",
		   "takes 8589934592 bytes (8.0 GiB)", "memory budget of 1073741824 bytes"));
	ert_model_unref(m);

	/* a depth that fits runs */
	m = one_hot_model(6);
	REQUIRE(m);
	CHECK_EQ_INT(create(m, GiB, &s), ERT_OK);
	REQUIRE(s);
	*(int64_t *)ert_tensor_data(ert_session_get_input(s, 0)) = 4;
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	const float *y = ert_tensor_data(ert_session_get_output(s, 0));

	for (int i = 0; i < 6; i++)
		CHECK(y[i] == (i == 4 ? 1.0f : 0.0f));
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST(one_hot_depth_2_31_refused)
{
	guarded(one_hot_depth, 256 * MiB, ert_test_failed_);
}

/* Sizes that do not fit 64 bits, with the default budget and with none. */
static void size_overflow(int *ert_test_failed_)
{
	const int64_t dims[2] = { (int64_t)1 << 32, (int64_t)1 << 32 };
	ert_model *m = unary_model(ERT_DTYPE_FLOAT32, 2, dims, ERT_OP_Relu);
	ert_session *s = NULL;

	REQUIRE(m);
	CHECK_EQ_INT(create(m, 0, &s), ERT_STATUS_SHAPE);
	CHECK(SAYS(ert_last_error(), "input 'x' [4294967296,4294967296] float32: its size overflows"));
	CHECK_EQ_INT(create(m, UINT64_MAX, &s), ERT_STATUS_SHAPE);
	CHECK(SAYS(ert_last_error(), "its size overflows"));
	CHECK(s == NULL);
	ert_model_unref(m);
	/* 2^62 elements of 4 bytes: the bytes overflow, not the count */
	m = unary_model(ERT_DTYPE_FLOAT32, 1, (int64_t[]){ (int64_t)1 << 62 }, ERT_OP_Relu);
	REQUIRE(m);
	CHECK_EQ_INT(create(m, UINT64_MAX, &s), ERT_STATUS_SHAPE);
	CHECK(SAYS(ert_last_error(), "input 'x' [4611686018427387904] float32: its size overflows"));
	ert_model_unref(m);
}

ERT_TEST(size_overflow_refused)
{
	guarded(size_overflow, 256 * MiB, ert_test_failed_);
}

/* With max_memory 0 the budget is half the physical memory. */
static void default_budget(int *ert_test_failed_)
{
	uint64_t half = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 2;
	int64_t over = (int64_t)half + 1;
	ert_model *m = unary_model(ERT_DTYPE_UINT8, 1, &over, ERT_OP_Identity);
	ert_session *s = NULL;
	char want[96];

	REQUIRE(m);
	snprintf(want, sizeof(want), "the memory budget of %llu bytes", (unsigned long long)half);
	CHECK_EQ_INT(create(m, 0, &s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(SAYS(ert_last_error(), "input 'x'", want,
		   "half the physical memory, the default of ert_config.max_memory"));
	/* a NULL config gets the same */
	CHECK_EQ_INT(ert_session_create(m, NULL, &s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(SAYS(ert_last_error(), want));
	CHECK(s == NULL);
	ert_model_unref(m);
}

ERT_TEST(default_budget_is_half_the_memory)
{
	guarded(default_budget, 256 * MiB, ert_test_failed_);
}

/*
 * A program built against an older header passes a shorter config: what lies
 * past its struct_size is not read, and the budget is the default.
 */
static void older_configs(int *ert_test_failed_)
{
	uint64_t half = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 2;
	int64_t over = (int64_t)half + 1;
	ert_model *m = unary_model(ERT_DTYPE_UINT8, 1, &over, ERT_OP_Identity);
	const uint32_t sizes[] = { offsetof(ert_config, cpu_level), /* 0.1 */
				   offsetof(ert_config, max_memory) };
	ert_session *s = NULL;
	char want[96];

	REQUIRE(m);
	snprintf(want, sizeof(want), "the memory budget of %llu bytes", (unsigned long long)half);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		ert_config cfg;

		ert_config_init(&cfg);
		cfg.num_threads = 1;
		/* garbage past the prefix: as max_memory it would mean no budget */
		memset((char *)&cfg + sizes[i], 0xff, sizeof(cfg) - sizes[i]);
		cfg.struct_size = sizes[i];
		CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_STATUS_OUT_OF_MEMORY);
		CHECK(SAYS(ert_last_error(), "input 'x'", want));
	}
	CHECK(s == NULL);
	ert_model_unref(m);
}

ERT_TEST(older_configs_get_the_default_budget)
{
	guarded(older_configs, 256 * MiB, ert_test_failed_);
}

static void fill_ramp(ert_session *s, int64_t n)
{
	float *x = ert_tensor_data(ert_session_get_input(s, 0));

	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(i % 11) - 5.0f;
}

static int relu_ok(ert_session *s, int64_t n)
{
	const ert_tensor *t = ert_session_get_output(s, 0);
	const float *y = ert_tensor_data(t);

	if (!y || ert_tensor_dim(t, 0) != n)
		return 0;
	for (int64_t i = 0; i < n; i++) {
		float x = (float)(i % 11) - 5.0f;

		if (y[i] != (x > 0 ? x : 0))
			return 0;
	}
	return 1;
}

/*
 * x[2^18] float -> Relu -> y needs 2 MiB: the 1 MiB input buffer and a 1 MiB
 * arena for y. A budget of exactly that runs; a byte less is refused.
 */
ERT_TEST(plan_at_the_budget_runs)
{
	const int64_t n = (int64_t)1 << 18;
	ert_model *m = unary_model(ERT_DTYPE_FLOAT32, 1, &n, ERT_OP_Relu);
	ert_session *s = NULL;

	REQUIRE(m);
	CHECK_EQ_INT(create(m, 2 * MiB, &s), ERT_OK);
	REQUIRE(s);
	CHECK_EQ_INT(ert_session_peak_bytes(s), 2 * MiB);
	fill_ramp(s, n);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(relu_ok(s, n));
	ert_session_destroy(s);
	s = NULL;

	CHECK_EQ_INT(create(m, 2 * MiB - 1, &s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(SAYS(ert_last_error(), "failed to plan: the plan needs 2097152 bytes (2.0 MiB)",
		   "input buffers 1048576 bytes", "the steps' tensors and workspaces 1048576 bytes",
		   "more than the memory budget of 2097151 bytes",
		   "the largest tensor: 'y' [262144] float32, 1048576 bytes (1.0 MiB), written by Relu 'relu'"));
	CHECK_EQ_INT(create(m, MiB - 1, &s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(SAYS(ert_last_error(), "input 'x' [262144] float32 takes 1048576 bytes (1.0 MiB)",
		   "more than the memory budget of 1048575 bytes"));
	CHECK(s == NULL);
	ert_model_unref(m);
}

/* The same with a symbolic size: the plan is checked when a run makes it. */
ERT_TEST(plan_over_the_budget_after_resize)
{
	const int64_t n = (int64_t)1 << 18;
	ert_model *m = unary_model(ERT_DTYPE_FLOAT32, 1, (int64_t[]){ -1 }, ERT_OP_Relu);
	ert_session *s = NULL;

	REQUIRE(m);
	CHECK_EQ_INT(create(m, 2 * MiB, &s), ERT_OK);
	REQUIRE(s);
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 1, &n), ERT_OK);
	fill_ramp(s, n);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(relu_ok(s, n));
	/* the input fits, the plan does not */
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 1, (int64_t[]){ n + 1024 }), ERT_OK);
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(SAYS(ert_session_error(s), "failed to plan: the plan needs",
		   "more than the memory budget of 2097152 bytes", "written by Relu 'relu'"));
	/*
	 * Back to the first size: its input buffer is the smaller one again (the
	 * bigger buffer is kept, its pages past the shape given back), and its
	 * plan, dropped to make room for the bigger input, is made again.
	 */
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 1, &n), ERT_OK);
	fill_ramp(s, n);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(relu_ok(s, n));
	/* two smaller shapes: both plans stay cached within the budget */
	for (int i = 0; i < 3; i++) {
		int64_t k = i % 2 ? n / 4 : n / 2;

		CHECK_EQ_INT(ert_session_resize_input(s, 0, 1, &k), ERT_OK);
		fill_ramp(s, k);
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		CHECK(relu_ok(s, k));
	}
	ert_session_destroy(s);
	ert_model_unref(m);
}

/*
 * c = ConstantOfShape([2^18]) is computed while planning (1 MiB) and counts:
 * x[2^18] + c -> y needs 3 MiB.
 */
static ert_model *folded_model(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t *shape = malloc(sizeof(*shape));
	int32_t x, sh, c, y;

	g->opset = 17;
	*shape = (int64_t)1 << 18;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 1, shape);
	sh = ert_graph_add_tensor(g, "shape", ERT_DTYPE_INT64, 1, (int64_t[]){ 1 });
	ert_graph_set_const(g, sh, shape, sizeof(*shape), true);
	c = ert_graph_add_tensor(g, "c", ERT_DTYPE_FLOAT32, -1, NULL);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_ConstantOfShape, "fill", 1, &sh, 1, &c);
	ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ x, c }, 1, &y);
	ert_graph_add_output(g, y);
	return model_from_graph(g);
}

ERT_TEST(values_computed_while_planning_count)
{
	ert_model *m = folded_model();
	ert_session *s = NULL;

	REQUIRE(m);
	CHECK_EQ_INT(create(m, 3 * MiB, &s), ERT_OK);
	REQUIRE(s);
	fill_ramp(s, (int64_t)1 << 18);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	ert_session_destroy(s);
	s = NULL;
	CHECK_EQ_INT(create(m, 3 * MiB - 1, &s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(SAYS(ert_last_error(), "the plan needs 3145728 bytes",
		   "values computed while planning 1048576 bytes"));
	CHECK_EQ_INT(create(m, 2 * MiB - 1, &s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(SAYS(ert_last_error(), "ConstantOfShape 'fill': computing it while planning takes 1048576 bytes",
		   "more than the memory budget of 2097151 bytes"));
	CHECK(s == NULL);
	ert_model_unref(m);
}

static unsigned long resident_pages(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, resident = 0;

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident;
}

/*
 * A 512 MiB input (and the 512 MiB arena of Relu's output) within a 1 GiB
 * budget: creating the session commits neither, the input reads as zeros.
 */
static void lazy_inputs(int *ert_test_failed_)
{
	const int64_t n = (int64_t)1 << 27;
	ert_model *m = unary_model(ERT_DTYPE_FLOAT32, 1, &n, ERT_OP_Relu);
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	ert_session *s = NULL;
	unsigned long before;
	const float *x;

	REQUIRE(m);
	before = resident_pages();
	CHECK_EQ_INT(create(m, GiB, &s), ERT_OK);
	REQUIRE(s);
	CHECK_EQ_INT(ert_session_peak_bytes(s), GiB);
	/* far below the 512 MiB a memset would have touched */
	CHECK((resident_pages() - before) * page < 64 * MiB);
	x = ert_tensor_data(ert_session_get_input(s, 0));
	CHECK(x[0] == 0.0f && x[n / 2] == 0.0f && x[n - 1] == 0.0f);
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST(large_inputs_zeroed_lazily)
{
	guarded(lazy_inputs, 1536 * MiB, ert_test_failed_);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(huge_float_input_refused), ERT_TEST_ENTRY(huge_int_inputs_refused),
	      ERT_TEST_ENTRY(one_hot_depth_2_31_refused), ERT_TEST_ENTRY(size_overflow_refused),
	      ERT_TEST_ENTRY(default_budget_is_half_the_memory),
	      ERT_TEST_ENTRY(older_configs_get_the_default_budget),
	      ERT_TEST_ENTRY(plan_at_the_budget_runs),
	      ERT_TEST_ENTRY(plan_over_the_budget_after_resize),
	      ERT_TEST_ENTRY(values_computed_while_planning_count),
	      ERT_TEST_ENTRY(large_inputs_zeroed_lazily))
