/* SPDX-License-Identifier: MIT */
/*
 * The NPU device layer on its simulator: buffer objects, userptr, real
 * CONV2D and MATMUL jobs checked against values computed here, the driver's
 * validation errors and their messages, all-or-nothing submission, the hang
 * hook, and device discovery (ERT_NPU_DEVICE, no device) without an enpu
 * device.
 *
 * ERT_NPU_TEST_HW=1 runs the same tests on the enpu kernel device instead
 * (the driver's test VM, a board; the hang test needs test_hooks=1): the
 * simulator claims the driver's errnos and messages, and this checks it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npu/npu-device.h"
#include "uapi/drm/enpu_cmdstream.h"
#include "ert-test.h"

#define SEC 1000000000ll

/* ---- a small command stream writer -------------------------------------- */

struct cs {
	uint8_t buf[4096];
	uint32_t len;
	uint16_t n;
};

static void cs_begin(struct cs *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->len = sizeof(struct enpu_cs_header);
}

static void *cs_add(struct cs *cs, uint16_t opcode, uint16_t size)
{
	struct enpu_cs_cmd *c = (void *)(cs->buf + cs->len);

	memset(c, 0, size);
	c->opcode = opcode;
	c->size = size;
	cs->len += size;
	cs->n++;
	return c;
}

static uint32_t cs_end(struct cs *cs)
{
	struct enpu_cs_header *h = (void *)cs->buf;

	h->magic = ENPU_CS_MAGIC;
	h->version = ENPU_CS_VERSION;
	h->num_cmds = cs->n;
	h->size = cs->len;
	return cs->len;
}

/* A dense tensor of @esize-byte elements, innermost dimension contiguous. */
static struct enpu_cs_tensor tensor(uint32_t region, uint64_t offset, uint32_t esize,
				    uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3)
{
	struct enpu_cs_tensor t = {
		.region = region, .offset = offset,
		.dim = { d0, d1, d2, d3 },
		.stride = { d1 * d2 * d3 * esize, d2 * d3 * esize, d3 * esize, esize },
	};

	return t;
}

static struct enpu_cs_tensor no_tensor(void)
{
	struct enpu_cs_tensor t = { .region = ENPU_CS_NO_REGION };

	return t;
}

/* a COPY of @n bytes from region 0 to region 1 */
static uint32_t cs_copy(struct cs *cs, uint32_t n, uint64_t src_off, uint64_t dst_off)
{
	struct enpu_cs_copy *c;

	cs_begin(cs);
	c = cs_add(cs, ENPU_OP_COPY, sizeof(*c));
	c->src = tensor(0, src_off, 1, 1, 1, 1, n);
	c->dst = tensor(1, dst_off, 1, 1, 1, 1, n);
	return cs_end(cs);
}

static bool on_hw(void)
{
	const char *e = getenv("ERT_NPU_TEST_HW");

	return e && !strcmp(e, "1");
}

static struct npu_dev *open_dev(void)
{
	struct npu_dev *dev = NULL;
	struct ert_err err = { "" };

	if (npu_dev_open(on_hw() ? NPU_DEV_HW : NPU_DEV_SIM, &dev, &err) != ERT_OK) {
		fprintf(stderr, "npu_dev_open: %s\n", err.msg);
		return NULL;
	}
	return dev;
}

/* npu_wait() expected to succeed: say why it did not */
static bool wait_ok(struct npu_dev *dev, uint64_t seq)
{
	struct ert_err err = { "" };

	if (npu_wait(dev, seq, 10 * SEC, &err) == ERT_OK)
		return true;
	fprintf(stderr, "npu_wait(%llu): %s\n", (unsigned long long)seq, err.msg);
	return false;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* ---- the fixed-point arithmetic of uapi/drm/enpu_cmdstream.h ------------- */

static int32_t ref_srdhm(int32_t a, int32_t b)
{
	int64_t ab = (int64_t)a * b;

	if (a == INT32_MIN && b == INT32_MIN)
		return INT32_MAX;
	return (int32_t)((ab + (ab >= 0 ? (1ll << 30) : 1 - (1ll << 30))) / (1ll << 31));
}

static int32_t ref_rdivpot(int32_t x, int e)
{
	int64_t mask = (1ll << e) - 1, rem = x & mask, thr = (mask >> 1) + (x < 0);

	return (int32_t)((x >> e) + (rem > thr));
}

static int32_t ref_requant(int32_t x, int32_t m, int32_t s)
{
	if (s > 0)
		x = (int32_t)((uint32_t)x << s);
	return ref_rdivpot(ref_srdhm(x, m), s > 0 ? 0 : -s);
}

static int8_t ref_out(int32_t v, int32_t zp, int32_t lo, int32_t hi)
{
	v += zp;
	return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* ---- tests --------------------------------------------------------------- */

ERT_TEST(sim_info)
{
	struct npu_dev *dev = open_dev();
	const struct npu_dev_info *info;

	REQUIRE(dev);
	info = npu_dev_info(dev);
	CHECK(info->simulated == !on_hw());
	CHECK(on_hw() ? !strncmp(info->node, "/dev/accel/accel", 16) :
			!strcmp(info->node, "simulator"));
	CHECK_EQ_INT(info->uapi_major, ENPU_UAPI_VERSION_MAJOR);
	CHECK_EQ_INT(info->max_job_work, ENPU_CS_MAX_WORK);
	CHECK_EQ_INT(info->cs_version, ENPU_CS_VERSION);
	CHECK(info->max_jobs_per_submit >= 1 && info->max_bos_per_job >= 3);
	CHECK_EQ_INT(info->opcode_mask, (1u << ENPU_OP_COUNT) - 1);
	npu_dev_close(dev);
	npu_dev_close(NULL);
}

ERT_TEST(bo_create_is_zeroed_and_mapped)
{
	struct npu_dev *dev = open_dev();
	struct npu_bo a = { 0 }, b = { 0 }, zero = { 0 };
	struct ert_err err = { "" };
	long page = sysconf(_SC_PAGESIZE);

	REQUIRE(dev);
	REQUIRE(npu_bo_create(dev, 100, &a, &err) == ERT_OK);
	CHECK(a.handle != 0 && a.map != NULL && !a.userptr);
	CHECK_EQ_INT(a.size, page);			/* rounded up to pages */
	CHECK_EQ_INT((uintptr_t)a.map % (uintptr_t)page, 0);
	CHECK(all_zero(a.map, a.size));
	memset(a.map, 0x5a, a.size);			/* writable everywhere */
	REQUIRE(npu_bo_create(dev, 3 * page + 1, &b, &err) == ERT_OK);
	CHECK_EQ_INT(b.size, 4 * page);
	CHECK(b.handle != a.handle);
	CHECK(all_zero(b.map, b.size));
	npu_bo_destroy(dev, &a);
	CHECK(a.handle == 0 && a.map == NULL);		/* zeroed */
	npu_bo_destroy(dev, &a);			/* a zeroed BO: no-op */
	npu_bo_destroy(dev, &zero);
	npu_bo_destroy(dev, &b);
	npu_dev_close(dev);
}

ERT_TEST(bo_errors)
{
	struct npu_dev *dev = open_dev();
	struct npu_bo bo = { 0 };
	struct ert_err err = { "" };
	int fd = -1;
	void *mem;

	REQUIRE(dev);
	CHECK_EQ_INT(npu_bo_create(dev, 0, &bo, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU BO_CREATE: EINVAL"));
	CHECK_EQ_INT(npu_bo_create(dev, npu_dev_info(dev)->max_bo_size + 1, &bo, &err),
		     ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU BO_CREATE: E2BIG: larger than the device's largest buffer object"));
	CHECK(bo.handle == 0);				/* untouched on failure */

	mem = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(mem != MAP_FAILED);
	CHECK_EQ_INT(npu_bo_userptr(dev, (char *)mem + 8, 4096, false, &bo, &err),
		     ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU BO_USERPTR: EINVAL: the pointer and size must be page-aligned"));
	CHECK_EQ_INT(npu_bo_userptr(dev, mem, 100, false, &bo, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "EINVAL"));

	/* the simulator has nothing to export */
	REQUIRE(npu_bo_create(dev, 64, &bo, &err) == ERT_OK);
	if (on_hw()) {
		CHECK_EQ_INT(npu_bo_export(dev, &bo, &fd, &err), ERT_OK);
		CHECK(fd >= 0);
		close(fd);
	} else {
		CHECK_EQ_INT(npu_bo_export(dev, &bo, &fd, &err), ERT_STATUS_UNSUPPORTED);
		CHECK(strstr(err.msg, "NPU PRIME export") && strstr(err.msg, "simulator"));
		CHECK_EQ_INT(fd, -1);
	}
	npu_bo_destroy(dev, &bo);
	munmap(mem, 2 * 4096);
	npu_dev_close(dev);
}

/*
 * A 3x3 CONV2D, pad 1, over a 1x4x4x2 input with 3 output channels, bias,
 * zero points and identity requantisation: every output is the clamped
 * integer sum computed here.
 */
ERT_TEST(conv2d_job)
{
	enum { H = 4, W = 4, IC = 2, OC = 3, K = 3 };
	const int32_t in_zp = 1, w_zp = -1, out_zp = -3, lo = -60, hi = 70;
	struct npu_dev *dev = open_dev();
	struct npu_bo in = { 0 }, wt = { 0 }, out = { 0 };
	const struct npu_bo *bos[3] = { &in, &wt, &out };
	const uint32_t flags[3] = { ENPU_JOB_BO_READ, ENPU_JOB_BO_READ, ENPU_JOB_BO_WRITE };
	struct ert_err err = { "" };
	struct enpu_cs_conv2d *c;
	struct cs cs;
	int8_t *x, *w, *y;
	int32_t *bias;
	uint64_t seq = 0;
	int bad = 0;

	REQUIRE(dev);
	REQUIRE(npu_bo_create(dev, H * W * IC, &in, &err) == ERT_OK);
	REQUIRE(npu_bo_create(dev, 4096, &wt, &err) == ERT_OK);
	REQUIRE(npu_bo_create(dev, H * W * OC, &out, &err) == ERT_OK);
	x = in.map;
	w = wt.map;
	bias = (int32_t *)((uint8_t *)wt.map + 1024);
	y = out.map;
	for (int i = 0; i < H * W * IC; i++)
		x[i] = (int8_t)((i * 7) % 11 - 5);
	for (int i = 0; i < OC * K * K * IC; i++)
		w[i] = (int8_t)((i * 5) % 9 - 4);
	for (int o = 0; o < OC; o++)
		bias[o] = 10 * o - 7;

	cs_begin(&cs);
	c = cs_add(&cs, ENPU_OP_CONV2D, sizeof(*c));
	c->in = tensor(0, 0, 1, 1, H, W, IC);
	c->weights = tensor(1, 0, 1, OC, K, K, IC);
	c->bias = tensor(1, 1024, 4, OC, 1, 1, 1);
	c->requant = no_tensor();
	c->out = tensor(2, 0, 1, 1, H, W, OC);
	c->quant = (struct enpu_cs_quant){ .in_zp = in_zp, .in2_zp = w_zp, .out_zp = out_zp,
					   .act_min = lo, .act_max = hi,
					   .out_mult = 1 << 30, .out_shift = 1 };
	c->stride_h = c->stride_w = c->dil_h = c->dil_w = 1;
	c->pad_top = c->pad_left = c->pad_bottom = c->pad_right = 1;
	c->groups = 1;
	struct npu_job job = { .cs = cs.buf, .cs_size = cs_end(&cs), .bos = bos, .n_bos = 3,
			       .bo_flags = flags };

	REQUIRE(npu_submit(dev, &job, 1, &seq, &err) == ERT_OK);
	CHECK_EQ_INT(seq, 1);
	CHECK(wait_ok(dev, seq));
	for (int oy = 0; oy < H; oy++) {
		for (int ox = 0; ox < W; ox++) {
			for (int o = 0; o < OC; o++) {
				int32_t acc = bias[o];

				for (int ky = 0; ky < K; ky++)
					for (int kx = 0; kx < K; kx++)
						for (int i = 0; i < IC; i++) {
							int iy = oy - 1 + ky, ix = ox - 1 + kx;

							if (iy < 0 || iy >= H || ix < 0 || ix >= W)
								continue;
							acc += (x[(iy * W + ix) * IC + i] - in_zp) *
							       (w[((o * K + ky) * K + kx) * IC + i] - w_zp);
						}
				acc += out_zp;
				acc = acc < lo ? lo : acc > hi ? hi : acc;
				bad += y[(oy * W + ox) * OC + o] != acc;
			}
		}
	}
	CHECK_EQ_INT(bad, 0);
	/* the clamp was exercised on both sides, so the check above means something */
	int lows = 0, highs = 0;

	for (int i = 0; i < H * W * OC; i++) {
		lows += y[i] == lo;
		highs += y[i] == hi;
	}
	CHECK(lows > 0 && highs > 0 && lows + highs < H * W * OC);

	npu_bo_destroy(dev, &in);
	npu_bo_destroy(dev, &wt);
	npu_bo_destroy(dev, &out);
	npu_dev_close(dev);
}

/*
 * A MATMUL whose output region is a userptr BO over the test's own pages:
 * the job writes the caller's memory. Per-column requantisation with real
 * multipliers, checked against the fixed-point rule computed here.
 */
ERT_TEST(matmul_into_userptr)
{
	enum { M = 3, N = 4, K = 5 };
	const int32_t a_zp = 3, w_zp = -2, out_zp = 5, lo = -100, hi = 120;
	const int32_t mult[N] = { 1518500250, 1073741824, 1932735283, 858993459 };
	const int32_t shift[N] = { -3, -1, -6, 0 };
	struct npu_dev *dev = open_dev();
	struct npu_bo src = { 0 }, dst = { 0 };
	const struct npu_bo *bos[2] = { &src, &dst };
	struct ert_err err = { "" };
	struct enpu_cs_matmul *mm;
	int8_t *a, *w, *user;
	int32_t *bias, *rq;
	uint64_t seq = 0;
	struct cs cs;
	int bad = 0;

	REQUIRE(dev);
	user = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(user != MAP_FAILED);
	memset(user, 0x7f, 4096);
	REQUIRE(npu_bo_create(dev, 4096, &src, &err) == ERT_OK);
	REQUIRE(npu_bo_userptr(dev, user, 4096, false, &dst, &err) == ERT_OK);
	CHECK(dst.userptr && dst.map == user && dst.size == 4096 && !dst.read_only);
	a = src.map;
	w = a + 256;
	bias = (int32_t *)((uint8_t *)src.map + 512);
	rq = (int32_t *)((uint8_t *)src.map + 768);
	for (int i = 0; i < M * K; i++)
		a[i] = (int8_t)(i * 37 % 255 - 127);
	for (int i = 0; i < N * K; i++)
		w[i] = (int8_t)(i * 53 % 251 - 125);
	for (int n = 0; n < N; n++) {
		bias[n] = 1000 * n - 1500;
		rq[2 * n] = mult[n];
		rq[2 * n + 1] = shift[n];
	}

	cs_begin(&cs);
	mm = cs_add(&cs, ENPU_OP_MATMUL, sizeof(*mm));
	mm->a = tensor(0, 0, 1, 1, M, K, 1);
	mm->w = tensor(0, 256, 1, 1, N, K, 1);
	mm->bias = tensor(0, 512, 4, N, 1, 1, 1);
	mm->requant = tensor(0, 768, 8, N, 1, 1, 1);
	mm->out = tensor(1, 64, 1, 1, M, N, 1);
	mm->quant = (struct enpu_cs_quant){ .in_zp = a_zp, .in2_zp = w_zp, .out_zp = out_zp,
					    .act_min = lo, .act_max = hi };
	struct npu_job job = { .cs = cs.buf, .cs_size = cs_end(&cs), .bos = bos, .n_bos = 2 };

	REQUIRE(npu_submit(dev, &job, 1, &seq, &err) == ERT_OK);
	CHECK(wait_ok(dev, seq));
	for (int m = 0; m < M; m++) {
		for (int n = 0; n < N; n++) {
			int32_t acc = bias[n];

			for (int k = 0; k < K; k++)
				acc += (a[m * K + k] - a_zp) * (w[n * K + k] - w_zp);
			bad += user[64 + m * N + n] !=
			       ref_out(ref_requant(acc, mult[n], shift[n]), out_zp, lo, hi);
		}
	}
	CHECK_EQ_INT(bad, 0);
	/* the job wrote exactly its output bytes of the caller's memory */
	CHECK(user[63] == 0x7f && user[64 + M * N] == 0x7f);
	CHECK(!all_zero(user + 64, M * N));

	npu_bo_destroy(dev, &dst);
	CHECK(user[0] == 0x7f);			/* the caller's memory stays */
	npu_bo_destroy(dev, &src);
	munmap(user, 4096);
	npu_dev_close(dev);
}

/* The driver's refusals, each with its errno's message; nothing runs. */
ERT_TEST(validation_errors)
{
	struct npu_dev *dev = open_dev();
	struct npu_bo src = { 0 }, dst = { 0 }, ro = { 0 }, gone = { 0 };
	const struct npu_bo *bos[2] = { &src, &dst };
	struct ert_err err = { "" };
	struct npu_job job;
	uint64_t seq = 0;
	struct cs cs;
	void *mem;

	REQUIRE(dev);
	REQUIRE(npu_bo_create(dev, 4096, &src, &err) == ERT_OK);
	REQUIRE(npu_bo_create(dev, 4096, &dst, &err) == ERT_OK);
	memset(src.map, 9, 4096);

	/* a bad magic */
	job = (struct npu_job){ .cs = cs.buf, .cs_size = cs_copy(&cs, 64, 0, 0), .bos = bos,
				.n_bos = 2 };
	((struct enpu_cs_header *)cs.buf)->magic ^= 1;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: EINVAL: malformed command stream"));
	CHECK(strstr(err.msg, "(job 0)"));
	/* a stream shorter than its header */
	job.cs_size = 8;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: EINVAL: a command stream of 8 bytes is shorter than its header"));

	/* a region past the end of its BO */
	job.cs_size = cs_copy(&cs, 64, 0, 4096 - 63);
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: ERANGE: a command stream region reaches past the end of its buffer object"));

	/*
	 * More work than the device allows: a MATMUL of 1024x1024x64 over
	 * broadcast tensors (every stride 0) in the last byte of src.
	 */
	cs_begin(&cs);
	struct enpu_cs_matmul *mm = cs_add(&cs, ENPU_OP_MATMUL, sizeof(*mm));

	mm->a = (struct enpu_cs_tensor){ .dim = { 1, 1024, 64, 1 } };
	mm->w = (struct enpu_cs_tensor){ .dim = { 1, 1024, 64, 1 } };
	mm->out = (struct enpu_cs_tensor){ .offset = 4095, .dim = { 1, 1024, 1024, 1 } };
	mm->bias = no_tensor();
	mm->requant = no_tensor();
	mm->quant = (struct enpu_cs_quant){ .act_min = -128, .act_max = 127,
					    .out_mult = 1 << 30, .out_shift = 1 };
	job.cs_size = cs_end(&cs);
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: E2BIG: job exceeds the device's work limit"));
	/* the same shape at 1024x256x64 is within it */
	mm->out.dim[2] = mm->w.dim[1] = 256;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_OK);
	CHECK_EQ_INT(seq, 1);

	/* a stream larger than the device takes */
	uint8_t *big = calloc(1, npu_dev_info(dev)->max_cs_size + 8);

	REQUIRE(big);
	memcpy(big, cs.buf, job.cs_size);
	job.cs = big;
	job.cs_size = npu_dev_info(dev)->max_cs_size + 8;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: E2BIG: a command stream of"));
	free(big);
	job.cs = cs.buf;

	/* writing a BO the job only reads */
	job.cs_size = cs_copy(&cs, 64, 0, 0);
	const uint32_t read_only[2] = { ENPU_JOB_BO_READ, ENPU_JOB_BO_READ };

	job.bo_flags = read_only;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: EACCES: a command writes a BO the job only reads"));
	job.bo_flags = NULL;

	/* writing a read-only userptr BO */
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(mem != MAP_FAILED);
	REQUIRE(npu_bo_userptr(dev, mem, 4096, true, &ro, &err) == ERT_OK);
	CHECK(ro.read_only);
	bos[1] = &ro;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: EACCES: BO 1 is a read-only userptr"));

	/* the same BO twice */
	bos[1] = &src;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: EINVAL: BOs 0 and 1 are the same buffer object"));

	/* a destroyed BO */
	REQUIRE(npu_bo_create(dev, 4096, &gone, &err) == ERT_OK);
	struct npu_bo stale = gone;

	npu_bo_destroy(dev, &gone);
	bos[1] = &stale;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: ENOENT: BO 1"));
	CHECK(strstr(err.msg, "is unknown"));
	bos[1] = &dst;

	/* bad BO and job flags, no jobs, too many jobs */
	const uint32_t none[2] = { ENPU_JOB_BO_READ, 0 };

	job.bo_flags = none;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: EINVAL: BO 1: flags 0x0"));
	job.bo_flags = NULL;
	job.flags = 0x1;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: EINVAL: unknown job flags 0x1"));
	job.flags = 0;
	CHECK_EQ_INT(npu_submit(dev, &job, 0, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: EINVAL: no jobs"));
	struct npu_job many[65];

	REQUIRE(npu_dev_info(dev)->max_jobs_per_submit < 65);
	for (int i = 0; i < 65; i++)
		many[i] = job;
	CHECK_EQ_INT(npu_submit(dev, many, npu_dev_info(dev)->max_jobs_per_submit + 1, &seq, &err),
		     ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU SUBMIT: E2BIG"));

	/* nothing above ran: dst is untouched and the sequence did not move */
	CHECK(all_zero(dst.map, dst.size));
	CHECK_EQ_INT(seq, 1);
	CHECK(npu_submit(dev, &job, 1, &seq, &err) == ERT_OK);
	CHECK_EQ_INT(seq, 2);
	CHECK(wait_ok(dev, seq));
	CHECK(((uint8_t *)dst.map)[0] == 9 && ((uint8_t *)dst.map)[63] == 9 &&
	      ((uint8_t *)dst.map)[64] == 0);

	/* a NULL BO pointer is the caller's bug */
	bos[1] = NULL;
	CHECK_EQ_INT(npu_submit(dev, &job, 1, &seq, &err), ERT_STATUS_INVALID_ARGUMENT);
	bos[1] = &dst;

	npu_bo_destroy(dev, &ro);
	munmap(mem, 4096);
	npu_bo_destroy(dev, &src);
	npu_bo_destroy(dev, &dst);
	npu_dev_close(dev);
}

/*
 * One submission is all or nothing: a valid job followed by a bad one runs
 * neither. Jobs of one submission run in order, so a later job sees what an
 * earlier one wrote.
 */
ERT_TEST(submit_all_or_nothing_and_in_order)
{
	struct npu_dev *dev = open_dev();
	struct npu_bo a = { 0 }, b = { 0 };
	const struct npu_bo *ab[2] = { &a, &b }, *ba[2] = { &b, &a };
	struct ert_err err = { "" };
	struct npu_job jobs[2];
	struct cs c1, c2;
	uint64_t seq = 0;

	REQUIRE(dev);
	REQUIRE(npu_bo_create(dev, 4096, &a, &err) == ERT_OK);
	REQUIRE(npu_bo_create(dev, 4096, &b, &err) == ERT_OK);
	memset(a.map, 3, 4096);
	jobs[0] = (struct npu_job){ .cs = c1.buf, .cs_size = cs_copy(&c1, 128, 0, 0), .bos = ab,
				    .n_bos = 2 };
	/* job 1 copies b back into a at 1024, reaching past the end of a: ERANGE */
	jobs[1] = (struct npu_job){ .cs = c2.buf, .cs_size = cs_copy(&c2, 128, 0, 4000),
				    .bos = ba, .n_bos = 2 };
	CHECK_EQ_INT(npu_submit(dev, jobs, 2, &seq, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "ERANGE") && strstr(err.msg, "(job 1)"));
	CHECK(all_zero(b.map, b.size));

	jobs[1].cs_size = cs_copy(&c2, 128, 0, 1024);
	REQUIRE(npu_submit(dev, jobs, 2, &seq, &err) == ERT_OK);
	CHECK_EQ_INT(seq, 1);
	CHECK(wait_ok(dev, seq));
	CHECK(((uint8_t *)a.map)[1024] == 3 && ((uint8_t *)a.map)[1151] == 3);
	CHECK(((uint8_t *)b.map)[0] == 3 && ((uint8_t *)b.map)[128] == 0);

	/* a seqno never handed out; 0 is nothing to wait for */
	CHECK_EQ_INT(npu_wait(dev, 2, 0, &err), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(err.msg, "never made"));
	CHECK(npu_wait(dev, 0, 0, &err) == ERT_OK);

	npu_bo_destroy(dev, &a);
	npu_bo_destroy(dev, &b);
	npu_dev_close(dev);
}

/*
 * ENPU_JOB_TEST_HANG: the job runs, then fails as the driver reports a hung
 * job that was reset; the failure is reported once, and later jobs work.
 */
ERT_TEST(hang_hook)
{
	struct npu_dev *dev = open_dev();
	struct npu_bo a = { 0 }, b = { 0 };
	const struct npu_bo *bos[2] = { &a, &b };
	struct ert_err err = { "" };
	struct npu_job jobs[2];
	uint64_t s1 = 0, s2 = 0, s3 = 0;
	struct cs cs;

	REQUIRE(dev);
	REQUIRE(npu_bo_create(dev, 4096, &a, &err) == ERT_OK);
	REQUIRE(npu_bo_create(dev, 4096, &b, &err) == ERT_OK);
	memset(a.map, 1, 4096);
	jobs[0] = (struct npu_job){ .cs = cs.buf, .cs_size = cs_copy(&cs, 16, 0, 0), .bos = bos,
				    .n_bos = 2, .flags = ENPU_JOB_TEST_HANG };
	jobs[1] = jobs[0];
	jobs[1].flags = 0;

	REQUIRE(npu_submit(dev, &jobs[0], 1, &s1, &err) == ERT_OK);
	if (on_hw()) {
		/* the driver resets the job only after its timeout: a poll times out */
		CHECK_EQ_INT(npu_wait(dev, s1, 0, &err), ERT_STATUS_BACKEND);
		CHECK(strstr(err.msg, "NPU wait: ETIME: submission 1 did not complete in time"));
	}
	CHECK_EQ_INT(npu_wait(dev, s1, 10 * SEC, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "NPU job failed: ETIMEDOUT (the job hung and the device was reset)"));
	CHECK(strstr(err.msg, "job 0 of 1 in submission 1"));

	/* the next job succeeds */
	REQUIRE(npu_submit(dev, &jobs[1], 1, &s2, &err) == ERT_OK);
	CHECK_EQ_INT(s2, 2);
	CHECK(wait_ok(dev, s2));
	CHECK(((uint8_t *)b.map)[15] == 1);

	/* a hang inside a submission of two, waited for through a later one */
	REQUIRE(npu_submit(dev, jobs, 2, &s2, &err) == ERT_OK);
	REQUIRE(npu_submit(dev, &jobs[1], 1, &s3, &err) == ERT_OK);
	CHECK_EQ_INT(npu_wait(dev, s3, 10 * SEC, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "ETIMEDOUT") && strstr(err.msg, "job 0 of 2 in submission 3"));
	CHECK(wait_ok(dev, s3));	/* reported once */

	/*
	 * A hung last job of a submission, waited for only through the next
	 * one: on a kernel device its fence was kept when it was the newest
	 * timeline point, as later points drop it from the timeline.
	 */
	REQUIRE(npu_submit(dev, &jobs[0], 1, &s1, &err) == ERT_OK);
	REQUIRE(npu_submit(dev, &jobs[1], 1, &s2, &err) == ERT_OK);
	CHECK_EQ_INT(s1, 5);
	CHECK_EQ_INT(npu_wait(dev, s2, 10 * SEC, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "ETIMEDOUT") && strstr(err.msg, "job 0 of 1 in submission 5"));
	CHECK(wait_ok(dev, s2));

	npu_bo_destroy(dev, &a);
	npu_bo_destroy(dev, &b);
	npu_dev_close(dev);
}

/*
 * Discovery without an enpu device. Where a machine has one, NPU_DEV_HW
 * must then give a real device instead of the message.
 */
ERT_TEST(open_hw_without_device)
{
	struct npu_dev *dev = NULL;
	struct ert_err err = { "" };
	ert_status st;

	unsetenv("ERT_NPU_DEVICE");
	st = npu_dev_open(NPU_DEV_HW, &dev, &err);
	if (st == ERT_OK) {
		CHECK(!npu_dev_info(dev)->simulated);
		CHECK(!strncmp(npu_dev_info(dev)->node, "/dev/accel/accel", 16));
		npu_dev_close(dev);
		return;
	}
	CHECK_EQ_INT(st, ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(err.msg, "no enpu device: no /dev/accel/accel* node is driven by enpu"));
	CHECK(dev == NULL);

	/* ANY falls back to the simulator */
	REQUIRE(npu_dev_open(NPU_DEV_ANY, &dev, &err) == ERT_OK);
	CHECK(npu_dev_info(dev)->simulated);
	npu_dev_close(dev);
}

ERT_TEST(open_named_device)
{
	struct npu_dev *dev = NULL;
	struct ert_err err = { "" };

	/* a node that does not exist */
	setenv("ERT_NPU_DEVICE", "/dev/accel/accel250", 1);
	CHECK_EQ_INT(npu_dev_open(NPU_DEV_ANY, &dev, &err), ERT_STATUS_BACKEND);
	CHECK(strstr(err.msg, "ERT_NPU_DEVICE=/dev/accel/accel250: cannot open: ENOENT"));
	CHECK_EQ_INT(npu_dev_open(NPU_DEV_HW, &dev, &err), ERT_STATUS_BACKEND);
	CHECK(dev == NULL);

	/* a node that is no DRM device: drmGetVersion() fails */
	setenv("ERT_NPU_DEVICE", "/dev/null", 1);
	CHECK_EQ_INT(npu_dev_open(NPU_DEV_ANY, &dev, &err), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(err.msg, "ERT_NPU_DEVICE=/dev/null is not an enpu device: not a DRM device"));
	CHECK(dev == NULL);

	/* sim forces the simulator, which NPU_DEV_HW refuses */
	setenv("ERT_NPU_DEVICE", "sim", 1);
	REQUIRE(npu_dev_open(NPU_DEV_ANY, &dev, &err) == ERT_OK);
	CHECK(npu_dev_info(dev)->simulated);
	npu_dev_close(dev);
	dev = NULL;
	CHECK_EQ_INT(npu_dev_open(NPU_DEV_HW, &dev, &err), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(err.msg, "ERT_NPU_DEVICE=sim"));

	/* NPU_DEV_SIM ignores the variable */
	setenv("ERT_NPU_DEVICE", "/dev/null", 1);
	REQUIRE(npu_dev_open(NPU_DEV_SIM, &dev, &err) == ERT_OK);
	CHECK(npu_dev_info(dev)->simulated);
	npu_dev_close(dev);
	unsetenv("ERT_NPU_DEVICE");
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(sim_info), ERT_TEST_ENTRY(bo_create_is_zeroed_and_mapped),
	      ERT_TEST_ENTRY(bo_errors), ERT_TEST_ENTRY(conv2d_job),
	      ERT_TEST_ENTRY(matmul_into_userptr), ERT_TEST_ENTRY(validation_errors),
	      ERT_TEST_ENTRY(submit_all_or_nothing_and_in_order), ERT_TEST_ENTRY(hang_hook),
	      ERT_TEST_ENTRY(open_hw_without_device), ERT_TEST_ENTRY(open_named_device))
