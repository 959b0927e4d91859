/* SPDX-License-Identifier: MIT */
/*
 * Programs: each kernels/ file is one program, built for the session's device
 * the first time one of its kernels is asked for, with kernels/common.cl in
 * front of it (activations and helpers every program shares), in one or two
 * variants: float32 storage, and float16 storage for precision LOW
 * (-DERT_F16, with -DERT_F16_ARITH where the device has cl_khr_fp16).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl/ocl-impl.h"

/*
 * IEEE arithmetic (no -cl-fast-relaxed-math): every op is held to the CPU
 * reference, and no op here has been shown to stay within its tolerance
 * with relaxed math on every device.
 */
#define BUILD_OPTIONS "-cl-std=CL1.2"

/* The build options of a program's variant: float32 or float16 storage (common.cl). */
static const char *build_options(const struct ert_ocl *cl, bool f16)
{
	if (!f16)
		return BUILD_OPTIONS;
	return cl->has_fp16 ? BUILD_OPTIONS " -DERT_F16 -DERT_F16_ARITH" : BUILD_OPTIONS " -DERT_F16";
}

/* The cache file's name for a program's variant: "gemm", "gemm.f16". */
static void variant_name(char *buf, size_t size, int idx, bool f16)
{
	snprintf(buf, size, "%s%s", ert_ocl_sources[idx].name, f16 ? ".f16" : "");
}

int ert_ocl_program_index(const char *name)
{
	for (unsigned i = 0; i < ert_ocl_n_sources && i < ERT_OCL_MAX_PROGRAMS; i++)
		if (!strcmp(ert_ocl_sources[i].name, name))
			return (int)i;
	return -1;
}

/* The first lines of the build log, on one line, in @err after its message. */
static void append_log(struct ert_ocl *cl, cl_program prog, struct ert_err *err)
{
	size_t len = 0, used = strlen(err->msg);
	char *log;

	if (clGetProgramBuildInfo(prog, cl->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) !=
	    CL_SUCCESS || len < 2)
		return;
	log = malloc(len);
	if (!log)
		return;
	if (clGetProgramBuildInfo(prog, cl->device, CL_PROGRAM_BUILD_LOG, len, log, NULL) ==
	    CL_SUCCESS) {
		log[len - 1] = '\0';
		for (char *c = log; *c; c++)
			if (*c == '\n' || *c == '\t')
				*c = ' ';
		snprintf(err->msg + used, sizeof(err->msg) - used, "; build log: %s", log);
	}
	free(log);
}

/*
 * The program from the cache file's binary for these sources, if the driver
 * takes it; NULL otherwise (no entry, or a binary it refuses: then the
 * sources are built and the entry replaced).
 */
static cl_program from_cache(struct ert_ocl *cl, int idx, bool f16, uint64_t hash)
{
	char name[32];
	const struct ert_ocl_cache_entry *e;

	variant_name(name, sizeof(name), idx, f16);
	e = ert_ocl_cache_find(cl, name, hash);
	const unsigned char *bin;
	cl_int rc, status = CL_SUCCESS;
	cl_program prog;

	if (!e)
		return NULL;
	bin = e->bin;
	prog = clCreateProgramWithBinary(cl->ctx, 1, &cl->device, &e->size, &bin, &status, &rc);
	if (prog && rc == CL_SUCCESS && status == CL_SUCCESS)
		rc = clBuildProgram(prog, 1, &cl->device, build_options(cl, f16), NULL, NULL);
	if (prog && rc == CL_SUCCESS && status == CL_SUCCESS) {
		cl->cache.loaded++;
		return prog;
	}
	if (prog)
		clReleaseProgram(prog);
	snprintf(cl->cache.note, sizeof(cl->cache.note),
		 "the driver refused the cached binary of %s (%s): building it from source",
		 name, ert_ocl_error_name(rc != CL_SUCCESS ? rc : status));
	fprintf(stderr, "edgert: opencl: %s\n", cl->cache.note);
	return NULL;
}

/* A program from source: built for the device, or an error with the build log. */
static ert_status from_source(struct ert_ocl *cl, int idx, bool f16, const char **texts,
			      cl_uint count, const char *options, cl_program *out,
			      const struct ert_node *n, struct ert_err *err)
{
	char what[256];
	cl_program prog;
	cl_int rc;

	prog = clCreateProgramWithSource(cl->ctx, count, texts, NULL, &rc);
	if (!prog) {
		snprintf(what, sizeof(what), "clCreateProgramWithSource of %s.cl",
			 ert_ocl_sources[idx].name);
		return ert_ocl_fail(err, rc, what, n);
	}
	rc = clBuildProgram(prog, 1, &cl->device, options, NULL, NULL);
	if (rc != CL_SUCCESS) {
		ert_status st;

		snprintf(what, sizeof(what), "building %s.cl%s for %s", ert_ocl_sources[idx].name,
			 f16 ? " (float16 storage)" : "", cl->device_name);
		st = ert_ocl_fail(err, rc, what, n);
		append_log(cl, prog, err);
		clReleaseProgram(prog);
		return st;
	}
	*out = prog;
	return ERT_OK;
}

/* A program's key in the device's table (compared byte for byte: no padding). */
struct prog_key {
	int32_t idx;                 /* among ert_ocl_sources */
	uint32_t f16;
	uint64_t hash;               /* of its sources and build options (ert_ocl.program_hash) */
};

/* What a program's build needs (make_program's argument). */
struct prog_make {
	struct ert_ocl *cl;
	int idx;
	bool f16;
	uint64_t hash;
	const char **texts;
	cl_uint count;
	const char *options;
	const char *name;            /* in the cache file */
	const struct ert_node *n;
};

/* The program from the cache file's binary, else built from source (under the table's lock). */
static ert_status make_program(void *arg, void *obj, size_t *bytes, struct ert_err *err)
{
	const struct prog_make *a = arg;
	cl_program *prog = obj;
	ert_status st = ERT_OK;

	*prog = from_cache(a->cl, a->idx, a->f16, a->hash);
	if (!*prog) {
		st = from_source(a->cl, a->idx, a->f16, a->texts, a->count, a->options, prog, a->n,
				 err);
		if (st == ERT_OK) {
			a->cl->cache.built++;
			ert_ocl_cache_put(a->cl, a->name, a->hash, *prog);
		}
	}
	*bytes = 0;
	return st;
}

void ert_ocl_program_free(void *dev, void *obj)
{
	(void)dev;
	clReleaseProgram(*(cl_program *)obj);
}

static ert_status build(struct ert_ocl *cl, int idx, bool f16, const struct ert_node *n,
			struct ert_err *err)
{
	int common = ert_ocl_program_index("common");
	/* test hook: a program that fails to build, to check what the user is told */
	const char *broken = getenv("ERT_OPENCL_TEST_BREAK");
	const char *options = build_options(cl, f16);
	uint64_t hash = ert_ocl_hash(ERT_OCL_HASH_INIT, options, strlen(options) + 1);
	uint64_t t0 = ert_clock_ns();
	struct prog_key key = { idx, f16, 0 };
	char name[32];
	const char *texts[3];
	cl_uint count = 0;
	struct prog_make arg = { cl, idx, f16, 0, texts, 0, options, name, n };
	enum ert_gpu_found found;
	struct ert_gpu_hold *h;
	cl_program prog = NULL;
	ert_status st;

	if (common >= 0 && common != idx)
		texts[count++] = ert_ocl_sources[common].text;
	texts[count++] = ert_ocl_sources[idx].text;
	if (broken && !strcmp(broken, ert_ocl_sources[idx].name))
		texts[count++] = "#error planted by ERT_OPENCL_TEST_BREAK\n";
	/* the cache key: every text the compiler sees, with its length */
	for (cl_uint i = 0; i < count; i++) {
		size_t len = strlen(texts[i]);

		hash = ert_ocl_hash(hash, &len, sizeof(len));
		hash = ert_ocl_hash(hash, texts[i], len);
	}
	cl->program_hash[(f16 ? ERT_OCL_MAX_PROGRAMS : 0) + idx] = hash;
	variant_name(name, sizeof(name), idx, f16);
	key.hash = arg.hash = hash;
	arg.count = count;
	/* one build per device and program in the process: another session waits for it */
	st = ert_gpu_hold_get(&cl->progs, &cl->dev->progs, &key, sizeof(key), make_program, &arg,
			      &h, &found, err);
	if (st == ERT_OK)
		prog = *(cl_program *)ert_gpu_hold_obj(h);
	if (st == ERT_OK && found == ERT_GPU_SHARED) {
		cl->times.programs_shared++;
		/* this session's cache file gets the binary too, when it lacks it */
		if (!ert_ocl_cache_find(cl, name, hash))
			ert_ocl_cache_put(cl, name, hash, prog);
	}
	if (st == ERT_OK)
		cl->programs[f16][idx] = prog;
	cl->times.programs_ns += ert_clock_ns() - t0;
	return st;
}

ert_status ert_ocl_kernel_create(struct ert_ocl *cl, const char *program, bool f16,
				 const char *kernel, cl_kernel *out, const struct ert_node *n,
				 struct ert_err *err)
{
	int idx = ert_ocl_program_index(program);
	uint64_t t0;
	cl_kernel k;
	cl_int rc;

	if (idx < 0) {
		ert_err_set(err, "opencl: no program '%s' in this build", program);
		return ERT_STATUS_BACKEND;
	}
	if (!cl->programs[f16][idx]) {
		ert_status st = build(cl, idx, f16, n, err);

		if (st != ERT_OK)
			return st;
	}
	t0 = ert_clock_ns();
	k = clCreateKernel(cl->programs[f16][idx], kernel, &rc);
	cl->times.kernels_ns += ert_clock_ns() - t0;
	if (!k) {
		char what[160];

		snprintf(what, sizeof(what), "clCreateKernel %s.cl:%s", program, kernel);
		return ert_ocl_fail(err, rc, what, n);
	}
	*out = k;
	return ERT_OK;
}

void ert_ocl_programs_release(struct ert_ocl *cl)
{
	if (cl->dev)
		ert_gpu_holds_drop(&cl->progs, &cl->dev->progs);
	memset(cl->programs, 0, sizeof(cl->programs));
}
