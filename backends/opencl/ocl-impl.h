/* SPDX-License-Identifier: MIT */
/*
 * ocl-impl.h — private to backends/opencl: the device, programs, launches and
 * the per-op table.
 *
 * The backend talks to the ICD loader (libOpenCL.so.1) with the OpenCL 1.2
 * API, which every OpenCL 1.2 and 3.0 driver has. Memory is one cl_mem per
 * arena (not host-visible: tensors cross to and from the CPU through the
 * session's copies at splits) plus one per uploaded constant. Kernels take
 * a buffer and an element offset into it for every tensor, so a tensor is
 * (arena, offset) as the memory plan placed it; no sub-buffers.
 *
 * Layout on the device is the host's (row-major, NCHW), so a copy at a split
 * is a plain transfer. Everything a step needs is made at plan time: its
 * kernels are created and every argument set in prepare(), so compute() only
 * enqueues. One in-order queue per backend (one backend per session).
 */
#ifndef ERT_OCL_IMPL_H
#define ERT_OCL_IMPL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <pthread.h>

#include "ert-backend-impl.h"
#include "gpu-common/gpu-ops.h"
#include "gpu-common/gpu-share.h"
#include "gpu-common/gpu-tune.h"

/* The backend's factories (session/backend.c's registry) and its device's name, for tools. */
ert_status ert_opencl_backend_create(const ert_config *cfg, struct ert_backend **out,
				     struct ert_err *err);
ert_status ert_opencl_backend_probe(const ert_config *cfg, struct ert_backend **out,
				    struct ert_err *err);
/* NULL for a backend of another type. */
const char *ert_opencl_backend_device(const struct ert_backend *be);

/* The .cl files of kernels/, embedded at build time (scripts/embed-cl.sh). */
struct ert_ocl_source {
	const char *name;       /* file name without .cl ("eltwise") */
	const char *text;
};
extern const struct ert_ocl_source ert_ocl_sources[];
extern const unsigned ert_ocl_n_sources;

#define ERT_OCL_MAX_PROGRAMS 32

/* A program binary of the cache file (ocl-cache.c). */
struct ert_ocl_cache_entry {
	char name[32];               /* the kernels/ file, without .cl */
	uint64_t hash;               /* of the sources and build options it was built from */
	unsigned char *bin;
	size_t size;
};

struct ert_ocl_cache {
	char *path;                  /* ert_config.cache_path, or NULL: no cache */
	struct ert_ocl_cache_entry entries[ERT_OCL_MAX_PROGRAMS];
	uint32_t n;
	bool dirty;                  /* entries changed since the file was read or written */
	bool rejected;               /* the file was there and was ignored */
	bool unwritable;             /* a write failed (and was reported): no more tries */
	/* this backend's programs: loaded from a cached binary, built from source */
	uint32_t loaded, built;
	/* tuned launches (ocl-tune.c): the file's, then this session's choices */
	struct ert_tune_table tuned;
	/*
	 * launches whose candidates were timed, launches that took a choice
	 * from the table, and entries of the table that were refused (not a
	 * candidate of their launch)
	 */
	uint32_t tune_timed, tune_reused, tune_refused;
	char note[384];              /* the last warning, also printed on stderr */
};

/*
 * A device open in the process (ocl-device.c): its context, what it reports
 * and the programs built for it, shared by the backends of every session
 * that chose it, so that a second session opens no context and builds or
 * loads no program the first one has. Sessions keep their own queues.
 * Counted: the last backend to let go releases the programs and the context.
 */
struct ert_ocl_dev {
	struct ert_ocl_dev *next;    /* the process's open devices (under ocl-device.c's devs_lock) */
	uint32_t refs;               /* backends holding it (under devs_lock) */
	cl_platform_id platform;
	cl_device_id device;
	cl_context ctx;
	char platform_name[128];
	char device_name[128];
	char driver_version[64];
	char platform_version[128];
	char device_version[128];
	cl_device_type device_type;
	size_t max_wg;
	cl_ulong max_alloc, local_mem;
	cl_uint compute_units;
	/*
	 * Programs built for it (gpu-common/gpu-share.h; objects cl_program,
	 * keyed by source, storage variant and the hash of what was compiled,
	 * ocl-program.c). The table's lock is held while a program is built or
	 * loaded, so that two sessions needing the same program build it once;
	 * builds of different programs for one device wait for each other too.
	 */
	struct ert_gpu_share progs;
	/* constants on the device, shared by sessions (ocl-backend.c; cl_mem objects) */
	struct ert_gpu_share consts;
};

struct ert_ocl {
	struct ert_ocl_dev *dev;     /* shared; what follows up to queue is copied from it */
	cl_platform_id platform;
	cl_device_id device;
	cl_context ctx;
	cl_command_queue queue;
	char platform_name[128];
	char device_name[128];
	char driver_version[64];
	char platform_version[128];  /* CL_PLATFORM_VERSION */
	char device_version[128];    /* CL_DEVICE_VERSION */
	cl_device_type device_type;
	size_t max_wg;               /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
	cl_ulong max_alloc;          /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
	cl_ulong local_mem;          /* CL_DEVICE_LOCAL_MEM_SIZE */
	cl_uint compute_units;       /* CL_DEVICE_MAX_COMPUTE_UNITS */
	ert_level precision;
	ert_tune tune;               /* ert_config.tune */
	/*
	 * ert_config.device_times: the queue profiles (CL_QUEUE_PROFILING_ENABLE)
	 * and each step keeps the events of what it enqueued, for the
	 * backend's device_time op. Off: no event at all.
	 */
	bool device_times;
	/* a queue with profiling, made the first time a launch is tuned */
	cl_command_queue tune_queue;
	/*
	 * Precision LOW: float32 tensors stored as float16 (f16_storage) on a
	 * GPU or a device with cl_khr_fp16 (has_fp16: the elementwise ops then
	 * compute in half), or where $ERT_OPENCL_F16=storage asks for it
	 * (float arithmetic; a test hook for PoCL). $ERT_OPENCL_F16=off keeps
	 * LOW in float32.
	 */
	bool has_fp16;
	bool f16_storage;
	cl_kernel convert[2];        /* f32_to_f16, f16_to_f32 (convert.cl) */
	/*
	 * The device's programs this backend holds (progs), made or taken on
	 * first use, and each by source and storage (f32, f16) for kernels
	 */
	struct ert_gpu_holds progs;
	cl_program programs[2][ERT_OCL_MAX_PROGRAMS];
	/*
	 * Of what each was built from, float32 variants first, then float16
	 * (ert_ocl_launch.program indexes this: f16 x ERT_OCL_MAX_PROGRAMS + source)
	 */
	uint64_t program_hash[2 * ERT_OCL_MAX_PROGRAMS];
	struct ert_ocl_cache cache;
	/* the session's holds on the device's constants, shared by every plan's steps */
	struct ert_gpu_holds consts;
	size_t const_bytes;          /* of the steps' own tables (resident with consts.bytes) */
	uint64_t copied;             /* bytes through buffer_write/buffer_read */
	struct ert_backend_times times;  /* where preparing went (prep_times) */
};

/* ---- errors (ocl-error.c) ---- */

/* "CL_OUT_OF_RESOURCES" for -5; "CL_ERROR(-1234)" for codes it does not know. */
const char *ert_ocl_error_name(cl_int rc);
/*
 * Set @err to "opencl: <what> failed[ for <Op> '<node>'] (<CL name>)" and
 * return the status for @rc: OUT_OF_MEMORY for allocation failures,
 * BACKEND otherwise. @n may be NULL.
 */
ert_status ert_ocl_fail(struct ert_err *err, cl_int rc, const char *what,
			const struct ert_node *n);

/* ---- device (ocl-device.c) ---- */

/*
 * Choose a device: $ERT_OPENCL_DEVICE ("platform:device", indices as clinfo -l
 * lists them) or the first GPU of any platform, else the first device. With
 * @gpu_only, only a GPU will do (the AUTO backend list). UNSUPPORTED when
 * there is none; INVALID_ARGUMENT for a malformed or out-of-range variable.
 * The device's context is the one another session of the process has open
 * on it, else a new one (cl->dev, counted); the queue is the backend's own.
 */
ert_status ert_ocl_device_open(struct ert_ocl *cl, bool gpu_only, struct ert_err *err);
/* Releases the queue and the backend's hold on the shared device. */
void ert_ocl_device_close(struct ert_ocl *cl);
/* For tests: how many devices the process has open (shared by sessions). */
uint32_t ert_ocl_devices_open(void);

/* ---- programs (ocl-program.c) ---- */

/*
 * A new kernel @kernel of program @program (a kernels/ file) in its float32
 * or (@f16) float16 storage variant. The program is the backend's once it
 * has it; else the shared device's (built by another session of the
 * process), else loaded from the cache file's binary, else built from
 * source, and then kept by the device too. A build failure is reported
 * with the start of the build log.
 */
ert_status ert_ocl_kernel_create(struct ert_ocl *cl, const char *program, bool f16,
				 const char *kernel, cl_kernel *out, const struct ert_node *n,
				 struct ert_err *err);
/* Let go of the backend's programs (the last session holding one releases it). */
void ert_ocl_programs_release(struct ert_ocl *cl);
/* Release a program (the device's table's free_obj). */
void ert_ocl_program_free(void *dev, void *obj);

/* ---- the cache file of program binaries (ocl-cache.c) ---- */

#define ERT_OCL_HASH_INIT 0xcbf29ce484222325ull
/* FNV-1a 64 of @size bytes, continuing from @h (ERT_OCL_HASH_INIT to start). */
uint64_t ert_ocl_hash(uint64_t h, const void *data, size_t size);
/*
 * Read the cache file at @path (NULL: no cache) once the device is open. A
 * file that cannot be used is ignored with a warning on stderr (kept in
 * cache.note) and rewritten when a program is built; a missing one is
 * created then.
 */
void ert_ocl_cache_open(struct ert_ocl *cl, const char *path);
/* The cached binary of program @name built from sources of @hash, or NULL. */
const struct ert_ocl_cache_entry *ert_ocl_cache_find(struct ert_ocl *cl, const char *name,
						     uint64_t hash);
/* Keep @prog's binary as program @name's (no-op without a cache); written by the next flush. */
void ert_ocl_cache_put(struct ert_ocl *cl, const char *name, uint64_t hash, cl_program prog);
/*
 * Rewrite the file when a program was built or a launch tuned since it was
 * read or written (after each plan is prepared, and when the backend goes).
 */
void ert_ocl_cache_flush(struct ert_ocl *cl);
void ert_ocl_cache_close(struct ert_ocl *cl);
/* For tests: the backend's cache counters and last warning (NULL for another backend). */
const struct ert_ocl_cache *ert_opencl_backend_cache(const struct ert_backend *be);

/* ---- constants (ocl-backend.c) ---- */

/*
 * A device copy of constant @data (@size bytes), uploaded on first request
 * and shared: every step of every plan that asks for the same bytes gets the
 * same buffer, and so does every session of the process on the same device
 * (two sessions of one model upload its weights once). With @f16, @data is
 * float32 and the device copy float16. Drop it with ert_ocl_const_put().
 */
ert_status ert_ocl_const_get(struct ert_ocl *cl, const void *data, size_t size, bool f16,
			     struct ert_gpu_hold **out, const struct ert_node *n,
			     struct ert_err *err);
void ert_ocl_const_put(struct ert_ocl *cl, struct ert_gpu_hold *c);
cl_mem ert_ocl_const_mem(const struct ert_gpu_hold *c);
/* Release a constant's buffer (the device's table's free_obj). */
void ert_ocl_const_free(void *dev, void *obj);

/* ---- steps and launches (ocl-launch.c) ---- */

#define ERT_OCL_MAX_LAUNCHES 32
#define ERT_OCL_MAX_CONSTS 32

struct ert_ocl_launch {
	cl_kernel kernel;
	cl_uint dims;
	size_t gws[3];
	size_t lws[3];
	bool has_lws;
	cl_uint next_arg;            /* index of the next argument to set */
	/*
	 * Until the step is tuned (ocl-tune.c): the kernels of its variants
	 * (var[0] == kernel), every argument set on each, the space the tuner
	 * chooses in (NULL: nothing to choose), the program, the name of the
	 * first variant, and a digest of the launch's sizes and scalar
	 * arguments (the shape of the tuning key).
	 */
	cl_kernel var[ERT_TUNE_MAX_VARIANTS];
	const char *var_label[ERT_TUNE_MAX_VARIANTS];
	uint32_t n_var;
	struct ert_tune_space *space;
	int program;
	const char *name;
	uint64_t shape;
};

/* What prepare() makes for a step (ert_exec.state); freed by release(). */
struct ert_ocl_step {
	struct ert_ocl_launch launch[ERT_OCL_MAX_LAUNCHES];
	uint32_t n_launch;
	struct ert_gpu_hold *consts[ERT_OCL_MAX_CONSTS];
	uint32_t n_consts;
	/*
	 * Copies within device memory (views that did not alias): enqueued
	 * with clEnqueueCopyBuffer before the launches.
	 */
	struct {
		cl_mem src, dst;
		size_t src_off, dst_off, size;
	} copy[ERT_OCL_MAX_LAUNCHES];
	uint32_t n_copy;
	/* small tables of the step's own (gemm batch offsets), read-only */
	cl_mem tables[2];
	size_t table_bytes[2];
	uint32_t n_tables;
	const struct ert_node *node; /* for messages */
	const char *kernel_name;     /* the chosen variant's label, when it has one */
	bool f16;                    /* float32 tensors stored as float16 (ert_exec.fp16) */
	cl_int arg_rc;               /* first failure setting an argument */
	cl_uint arg_index;
	/* with cl->device_times: the events of the last run's commands (released at the next) */
	cl_event events[2 * ERT_OCL_MAX_LAUNCHES];
	uint32_t n_events;
};

/* A tensor on the device: a buffer and an offset in elements of its storage (@es bytes). */
struct ert_ocl_ref {
	cl_mem mem;
	cl_int off;
	cl_int es;
};

/*
 * Input @k of @x: its place in the arena, or its constant's upload (kept by
 * @st). BACKEND when it is neither (the planner put it where the device
 * cannot read it).
 */
ert_status ert_ocl_in(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
		      uint32_t k, struct ert_ocl_ref *out, struct ert_err *err);
/* Output @k of @x in the arena. */
ert_status ert_ocl_out(const struct ert_exec *x, uint32_t k, struct ert_ocl_ref *out,
		       struct ert_err *err);
/* The step's workspace in the arena (bytes from ert_ocl_op.workspace). */
ert_status ert_ocl_ws(const struct ert_exec *x, struct ert_ocl_ref *out, struct ert_err *err);

/*
 * Add a launch of @kernel of @program over @dims global sizes @gws (local
 * sizes @lws, or NULL for the driver's choice; global sizes are rounded up
 * to a multiple of them). Arguments follow with the ert_ocl_arg_*() calls,
 * in order; the first failure among them is reported by ert_ocl_step_check().
 */
ert_status ert_ocl_launch_add(struct ert_ocl *cl, struct ert_ocl_step *st, const char *program,
			      const char *kernel, cl_uint dims, const size_t *gws,
			      const size_t *lws, struct ert_err *err);
/*
 * The same for a kernel without a required work-group size: @lws is the
 * built-in local size, and the tuner may choose another (ert_config.tune).
 */
ert_status ert_ocl_launch_tunable(struct ert_ocl *cl, struct ert_ocl_step *st,
				  const char *program, const char *kernel, cl_uint dims,
				  const size_t *gws, const size_t *lws, struct ert_err *err);
/*
 * A launch of one of @n kernels of @program that take the same arguments and
 * compute the same thing (tile variants), each with its own sizes; the tuner
 * chooses one, the first being the built-in choice. Arguments are set on
 * every variant.
 */
struct ert_ocl_variant {
	const char *kernel;
	cl_uint dims;
	size_t gws[3];
	size_t lws[3];
	bool free_lws;               /* no required work-group size: the tuner may change lws */
	const char *label;           /* optional: the kernel name `edgert profile` shows */
};
ert_status ert_ocl_launch_variants(struct ert_ocl *cl, struct ert_ocl_step *st,
				   const char *program, const struct ert_ocl_variant *v,
				   uint32_t n, struct ert_err *err);
/*
 * Choose each launch's variant and local size (ert_config.tune): from the
 * table of tuned launches, else by timing the candidates on a profiling
 * queue with the step's real arguments (its outputs are written with
 * whatever its inputs hold: nothing reads them before a run writes them
 * again). Releases the kernels not chosen. Called once the step's arguments
 * are all set.
 */
ert_status ert_ocl_step_tune(struct ert_ocl *cl, struct ert_ocl_step *st, struct ert_err *err);
void ert_ocl_arg_ref(struct ert_ocl_step *st, const struct ert_ocl_ref *r);
void ert_ocl_arg_mem(struct ert_ocl_step *st, cl_mem m);
void ert_ocl_arg_int(struct ert_ocl_step *st, cl_int v);
void ert_ocl_arg_float(struct ert_ocl_step *st, cl_float v);
void ert_ocl_arg_int8(struct ert_ocl_step *st, const cl_int *v8);
void ert_ocl_arg_local(struct ert_ocl_step *st, size_t bytes);
ert_status ert_ocl_step_check(struct ert_ocl_step *st, struct ert_err *err);
/* A device-to-device copy enqueued before the launches (views). */
ert_status ert_ocl_copy_add(struct ert_ocl_step *st, const struct ert_ocl_ref *src,
			    const struct ert_ocl_ref *dst, size_t elsize, size_t bytes,
			    struct ert_err *err);
/* A read-only device copy of @count ints, owned by @st (counted as resident). */
ert_status ert_ocl_table(struct ert_ocl *cl, struct ert_ocl_step *st, const cl_int *data,
			 size_t count, cl_mem *out, struct ert_err *err);
/* The index of program @name among ert_ocl_sources, or -1. */
int ert_ocl_program_index(const char *name);
/* Enqueue the step's copies and launches (keeping their events with device_times). */
ert_status ert_ocl_step_run(struct ert_ocl *cl, struct ert_ocl_step *st, struct ert_err *err);
/*
 * The step's time on the device the last time it ran: the sum of its
 * commands' profiled times (CL_PROFILING_COMMAND_START to _END), once the
 * queue was waited on. False when not timed (no device_times, no command)
 * or a time cannot be read.
 */
bool ert_ocl_step_device_ns(const struct ert_ocl_step *st, uint64_t *ns_out);
void ert_ocl_step_free(struct ert_ocl *cl, struct ert_ocl_step *st);

/*
 * ---- ops (ops/ *.c): one table per family, ended by an entry with .prepare
 * NULL, an entry per kind of op of gpu-common/gpu-ops.h (which plans them) ----
 */

struct ert_ocl_op {
	enum ert_gpu_kind kind;
	/* optional: limits of the device beyond gpu-common's (ert_gpu_supports) */
	bool (*supports)(const struct ert_ocl *cl, const struct ert_exec *x);
	/* optional: workspace bytes in the arena */
	size_t (*workspace)(const struct ert_exec *x);
	/* creates the step's launches with every argument set */
	ert_status (*prepare)(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			      struct ert_err *err);
	/* the kernel name `edgert profile` shows */
	const char *kernel_name;
};

extern const struct ert_ocl_op ert_ocl_ops_eltwise[];
extern const struct ert_ocl_op ert_ocl_ops_linalg[];
extern const struct ert_ocl_op ert_ocl_ops_pool[];
extern const struct ert_ocl_op ert_ocl_ops_norm[];
extern const struct ert_ocl_op ert_ocl_ops_movement[];

/* The table entry for @op's kind, or NULL (ops/registry.c). */
const struct ert_ocl_op *ert_ocl_op_find(enum ert_op op);
/* Has this build an OpenCL kernel for @op (false in a build without OpenCL)? */
bool ert_ocl_claims_op(enum ert_op op);

/* ---- helpers shared by the ops ---- */

/* Global size @n rounded up to a multiple of @l. */
static inline size_t ert_ocl_round_up(size_t n, size_t l)
{
	return (n + l - 1) / l * l;
}

#endif /* ERT_OCL_IMPL_H */
