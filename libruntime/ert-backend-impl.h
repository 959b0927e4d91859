/* SPDX-License-Identifier: MIT */
/*
 * ert-backend-impl.h — the backend contract.
 *
 * A backend is a table of function pointers plus a private context. The planner
 * only ever asks supports_op() to place a node; everything else (buffers, prepare,
 * compute, synchronize) goes through the inline wrappers below, never through
 * be->ops->x directly. A new backend registers a factory in backend.c and needs
 * no change to the planner: the planner gives each buffer type (buffer_type()
 * name) its own arena, allocated with buffer_alloc() of a backend of that type.
 *
 * Memory a backend's buffer type names is host-visible (the CPU addresses it:
 * host memory, mappable GEM buffers) or not (device memory: buffer_host_visible()
 * says false). Steps read host-visible memory of another type in place. A tensor
 * that crosses between a buffer type that is not host-visible and any other is
 * copied at the split (session/copies.c): the planner gives it a second home in
 * the reader's arena, and the session fills it with buffer_write()/buffer_read()
 * of the device's backend right before its first reader there; the backend
 * counts those bytes in copied_bytes(). Graph outputs in device memory are read
 * back to host memory at the end of every run.
 */
#ifndef ERT_BACKEND_IMPL_H
#define ERT_BACKEND_IMPL_H

#include <time.h>

#include "ert-op-impl.h"

#define ERT_BACKEND_ABI_VERSION 2

struct ert_backend;
struct ert_buffer;

/*
 * A place in a backend's buffer: @offset bytes into @buf (a multiple of 64).
 * @storage is the dtype of the bytes there when it differs from the value's:
 * ERT_DTYPE_FLOAT16 for a float32 tensor stored as float16 (precision LOW on
 * a backend whose fp16_storage() says yes, docs/opencl.md); 0 otherwise.
 */
struct ert_tensor_loc {
	const struct ert_buffer *buf;
	size_t offset;
	ert_dtype storage;
};

/*
 * One scheduled node as a backend sees it. Shapes are those of the current
 * plan. At supports_op() time data pointers are NULL except for constants; at
 * prepare() time every data pointer is set but only constants hold their values;
 * at compute() time all inputs hold their values.
 *
 * Outputs and the workspace lie in the arena of the backend's buffer type; inputs
 * may lie in another host-visible arena, in the session's input buffers (host
 * memory) or, for constants, in the model. When the backend's memory is not
 * host-visible, every input but the constants lies in its arena (copied there
 * at the split when another backend wrote it), its tensors' data pointers are
 * NULL, and in_loc/out_loc/ws_loc locate them: the arena's buffer (its handle
 * is the backend's) and the byte offset in it. Those are set for every step,
 * from before prepare(), and stay valid as long as the plan.
 * For views and the unary elementwise ops plan.c runs in place, out[0] may share
 * storage with in[0] when both lie in the backend's arena: compute() must allow it.
 */
struct ert_exec {
	const struct ert_graph *graph;
	const struct ert_node *node;
	struct ert_value **in;     /* n_in entries, NULL for omitted optional inputs */
	struct ert_value **out;    /* n_out entries, NULL for omitted optional outputs */
	uint32_t n_in, n_out;
	bool *in_const;            /* n_in entries: input i is a model constant */
	void *workspace;           /* workspace_size() bytes, valid during compute() */
	size_t workspace_size;
	void *state;               /* backend private, set by prepare(), freed by release() */
	/*
	 * The kernel that runs the op ("f32-gemm-8x48-avx512", "scalar"), set by
	 * the backend's prepare() when it knows; shown by `edgert profile`.
	 */
	const char *kernel;
	/*
	 * Where each input and output lies when it is in an arena of this
	 * step's buffer type (buf NULL otherwise: constants, host memory
	 * another backend owns), and the workspace (buf NULL when none).
	 * NULL arrays outside a session (one-off evaluation on the CPU).
	 */
	const struct ert_tensor_loc *in_loc;   /* n_in entries */
	const struct ert_tensor_loc *out_loc;  /* n_out entries */
	struct ert_tensor_loc ws_loc;
	/*
	 * The step runs in float16 (precision LOW on a backend whose
	 * fp16_storage() says yes, and the fp16 overflow guard did not keep it
	 * in float32): every float32 tensor it reads or writes in its arena is
	 * stored as float16 (in_loc/out_loc storage), and float32 constants
	 * are the backend's to convert. False: float32 throughout.
	 */
	bool fp16;
	/*
	 * Set only for a step whose outputs' shapes depend on values known when
	 * it runs (shape inference gave a dimension of -1: NonZero, Unique, ...,
	 * see docs/dynamic-shapes.md). Its kernel gives each output its shape
	 * through ert_exec_output() before writing it; this allocates the
	 * output in host memory and sets out[k]'s shape and data. Only the CPU
	 * backend runs such ops.
	 */
	ert_status (*alloc_output)(struct ert_exec *x, uint32_t k, int32_t rank,
				   const int64_t *dims, struct ert_err *err);
	void *alloc_ctx;
	/*
	 * The session's configuration, for a step that runs subgraphs (If,
	 * Loop, Scan) to pass on its memory budget and per-op callbacks to its
	 * subgraphs' sessions (ert_subrun_set_callbacks()); NULL outside a
	 * session. Valid as long as the plan.
	 */
	const ert_config *session_cfg;
	/*
	 * Where ops that make strings put their bytes (ert-strings.h): the
	 * session's run heap. NULL outside a session (plan-time folding).
	 */
	struct ert_str_heap *strings;
	/*
	 * Where the sequence and optional objects a step makes count their
	 * bytes (ert-seq.h): the session's, against its memory budget. NULL
	 * outside a session.
	 */
	struct ert_seq_meter *seqs;
};

/*
 * For an alloc_output(): *@nv becomes output @k of @x (which must exist)
 * with the shape @rank/@dims, its size computed and checked; nothing is
 * allocated (nv->data is out[k]'s).
 */
static inline ert_status ert_exec_output_value(const struct ert_exec *x, uint32_t k,
					       int32_t rank, const int64_t *dims,
					       struct ert_value *nv, struct ert_err *err)
{
	*nv = *x->out[k];
	if (rank < 0 || rank > ERT_MAX_RANK)
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL, "output %u of rank %d", k,
				     (int)rank);
	ert_value_set_shape(nv, nv->dtype, rank, dims);
	if (!ert_value_finish(nv))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE,
				     "output %u would have a dimension outside [0, 2^48] or too many elements",
				     k);
	return ERT_OK;
}

/*
 * A kernel knows output @k's shape (rank, dims): when the step's outputs are
 * data-dependent, allocate it; otherwise it must be the planned shape.
 * An omitted output (out[k] NULL) is left alone.
 */
static inline ert_status ert_exec_output(struct ert_exec *x, uint32_t k, int32_t rank,
					 const int64_t *dims, struct ert_err *err)
{
	const struct ert_value *v = k < x->n_out ? x->out[k] : NULL;
	bool same;

	if (!v)
		return ERT_OK;
	if (x->alloc_output)
		return x->alloc_output(x, k, rank, dims, err);
	same = v->rank == rank;
	for (int32_t i = 0; same && i < rank; i++)
		same = v->dims[i] == dims[i];
	if (same)
		return ERT_OK;
	return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
			     "output %u's shape differs from the planned one", k);
}

/*
 * A contiguous allocation in a backend's memory. host is its CPU address when the
 * memory is host-visible (host memory, mappable GEM buffers), NULL when it is not
 * (device-only memory). Steps of different buffer types share tensors in place
 * only when both types are host-visible; otherwise the tensor is copied.
 */
struct ert_buffer {
	void *host;                /* CPU address of the first byte, or NULL */
	size_t size;
	void *handle;              /* backend private (GEM handle, cl_mem, ...) */
};

/*
 * A GPU backend's preparation, in nanoseconds of wall-clock time, by part
 * (every field 0 for what the backend does not do).
 */
struct ert_backend_times {
	uint64_t device_ns;     /* opening the device and its queue (OpenCL: platform, context) */
	uint64_t cache_ns;      /* reading and writing the cache file */
	uint64_t programs_ns;   /* programs: from the cache file's binaries or built from source */
	uint64_t kernels_ns;    /* kernel objects made for the steps' launches */
	uint64_t tune_ns;       /* timing the candidates of tunable launches */
	uint64_t upload_ns;     /* constants copied (converted where stored as float16) to the device */
	/* programs loaded from the cache file, built from source, taken from another session */
	uint32_t programs_loaded, programs_built, programs_shared;
	uint32_t launches_timed, launches_reused;  /* tuned now, taken from the cache file */
	uint64_t upload_bytes;  /* of those constants, on the device */
	uint64_t upload_shared_bytes;  /* constants another session had uploaded: not copied */
	bool device_shared;     /* the device was already open in another session of the process */
};

/* CLOCK_MONOTONIC in nanoseconds, for the timings above. */
static inline uint64_t ert_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct ert_backend_ops {
	uint32_t abi_version;      /* ERT_BACKEND_ABI_VERSION */
	const char *name;
	/* May this backend run @x (dtypes, shapes, attributes)? */
	bool (*supports_op)(struct ert_backend *be, const struct ert_exec *x);
	/* Name of the buffer type nodes on this backend read and write ("host"). */
	const char *(*buffer_type)(struct ert_backend *be);
	ert_status (*buffer_alloc)(struct ert_backend *be, size_t size, struct ert_buffer *out,
				   struct ert_err *err);
	void (*buffer_free)(struct ert_backend *be, struct ert_buffer *buf);
	/*
	 * Is memory of this buffer type host-visible (buffers have a host
	 * address)? Optional: NULL means yes. A backend that says no must
	 * provide buffer_write() and buffer_read().
	 */
	bool (*buffer_host_visible)(struct ert_backend *be);
	/*
	 * Copy @size bytes from host memory @src to @offset in @buf, queued
	 * after the work queued before it and before the work queued after it;
	 * @src may be reused on return.
	 */
	ert_status (*buffer_write)(struct ert_backend *be, const struct ert_buffer *buf,
				   size_t offset, const void *src, size_t size,
				   struct ert_err *err);
	/*
	 * Copy @size bytes at @offset in @buf to host memory @dst, once the work
	 * queued before it has finished; the bytes are in @dst on return.
	 */
	ert_status (*buffer_read)(struct ert_backend *be, const struct ert_buffer *buf,
				  size_t offset, void *dst, size_t size, struct ert_err *err);
	/* Scratch bytes compute() needs for @x (optional: NULL means none). */
	size_t (*workspace_size)(struct ert_backend *be, const struct ert_exec *x);
	/* Plan-time work for one node: pack weights, build pipelines (optional). */
	ert_status (*prepare)(struct ert_backend *be, struct ert_exec *x, struct ert_err *err);
	ert_status (*compute)(struct ert_backend *be, struct ert_exec *x, struct ert_err *err);
	/* Free what prepare() made (optional); must accept x->state == NULL. */
	void (*release)(struct ert_backend *be, struct ert_exec *x);
	/* Wait for queued work (optional for synchronous backends). */
	ert_status (*synchronize)(struct ert_backend *be, struct ert_err *err);
	void (*destroy)(struct ert_backend *be);
	/*
	 * Bytes the backend holds for the session outside the arenas: weights it
	 * repacked or uploaded in prepare(), shared by every cached plan
	 * (optional: NULL means none). Counted in ert_session_peak_bytes().
	 */
	size_t (*resident_bytes)(struct ert_backend *be);
	/*
	 * Bytes the backend has copied between host memory and its own since it
	 * was created (optional: NULL means it never copies). A run's
	 * copied_bytes is the growth of the sum over the session's backends.
	 */
	uint64_t (*copied_bytes)(struct ert_backend *be);
	/*
	 * Multiply-accumulates below which a run of consecutive steps on this
	 * backend (an island) is not worth its dispatch, a job submission and a
	 * wait on an NPU: the planner gives such an island back to the CPU when
	 * the CPU backend runs all of it. 0: no such rule.
	 */
	uint64_t min_island_macs;
	/*
	 * Called once every step of a new plan is prepared (optional): where a
	 * backend writes down what preparing learnt (a GPU backend's cache
	 * file of program binaries and tuned launches) once, not per step.
	 */
	void (*plan_prepared)(struct ert_backend *be);
	/*
	 * Precision LOW: may float32 tensors in this backend's (device) memory
	 * be stored as float16 (optional: NULL means no)? A backend that says
	 * yes runs steps with ert_exec.fp16 set and provides buffer_convert().
	 * The session decides which steps (session/fp16-guard.c) and converts
	 * at the copies between host and device memory (session/copies.c).
	 */
	bool (*fp16_storage)(struct ert_backend *be);
	/*
	 * Convert @count elements at @src_offset in @buf, stored as @from, to
	 * @to at @dst_offset in @buf (float32 <-> float16), queued like a step:
	 * where a step in float16 reads a tensor a step in float32 wrote in
	 * device memory, or the other way round.
	 */
	ert_status (*buffer_convert)(struct ert_backend *be, const struct ert_buffer *buf,
				     size_t src_offset, ert_dtype from, size_t dst_offset,
				     ert_dtype to, size_t count, struct ert_err *err);
	/*
	 * Where the backend's own preparation time went since it was created
	 * (optional: NULL means it does not tell): session creation's
	 * breakdown (ert_session_create_times) subtracts these parts from the
	 * phases they happen in.
	 */
	void (*prep_times)(struct ert_backend *be, struct ert_backend_times *out);
	/*
	 * How long step @x ran on the device the last time it ran, in
	 * nanoseconds as the device measured it (timestamp queries, profiling
	 * events), into *@ns_out; asked once synchronize() has returned after
	 * the step's compute(). False when it was not measured (optional: NULL
	 * means never). A backend measures only when the ert_config its factory
	 * got asked for it (device_times): recording the timestamps costs
	 * device time, and plain runs pay nothing. The session hands the time
	 * to after_op callbacks (ert_op_info.device_ns).
	 */
	bool (*device_time)(struct ert_backend *be, const struct ert_exec *x, uint64_t *ns_out);
	/*
	 * Zero copy at splits (session/copies.c, "Sharing arenas"): a dma-buf
	 * fd of the whole of @buf into *@fd_out, the caller's to close
	 * (optional: NULL means never). UNSUPPORTED, saying why, for a buffer
	 * that cannot be exported (the NPU simulator's, user memory).
	 */
	ert_status (*buffer_export_fd)(struct ert_backend *be, const struct ert_buffer *buf,
				       int *fd_out, struct ert_err *err);
	/*
	 * A buffer of this backend's type over the first @size bytes of the
	 * dma-buf @fd (another backend's buffer, exported): steps given places
	 * in it read and write the other backend's bytes in place. @fd stays
	 * the caller's (the backend dups what it keeps). Freed with
	 * buffer_free(), before the exporter frees its buffer. Optional: NULL
	 * means never; UNSUPPORTED (saying why) where the device cannot, any
	 * other failure for an fd it refused; nothing is left allocated.
	 */
	ert_status (*buffer_import_fd)(struct ert_backend *be, int fd, size_t size,
				       struct ert_buffer *out, struct ert_err *err);
};

struct ert_backend {
	const struct ert_backend_ops *ops;
	ert_backend_type type;
	void *ctx;
};

/* Factory of one backend type. Fails with UNSUPPORTED when the backend is absent. */
typedef ert_status (*ert_backend_create_fn)(const ert_config *cfg, struct ert_backend **out,
					    struct ert_err *err);

/* Create a backend of @type (not AUTO) from the registry. */
ert_status ert_backend_create(ert_backend_type type, const ert_config *cfg,
			      struct ert_backend **out, struct ert_err *err);
/*
 * The same, for AUTO: only when the backend's hardware is present (the NPU
 * backend's simulator does not count). UNSUPPORTED otherwise.
 */
ert_status ert_backend_probe(ert_backend_type type, const ert_config *cfg,
			     struct ert_backend **out, struct ert_err *err);

/*
 * Make @create the factory of @type, in place of the built-in one (NULL restores
 * it). For tests that plug in a backend of their own; not thread-safe, and not
 * exported from libedgert.so (it is not ERT_API): only the static library has it.
 */
void ert_backend_register(ert_backend_type type, ert_backend_create_fn create);

static inline bool ert_backend_supports_op(struct ert_backend *be, const struct ert_exec *x)
{
	return be->ops->supports_op(be, x);
}

static inline const char *ert_backend_buffer_type(struct ert_backend *be)
{
	return be->ops->buffer_type(be);
}

static inline ert_status ert_backend_buffer_alloc(struct ert_backend *be, size_t size,
						  struct ert_buffer *out, struct ert_err *err)
{
	return be->ops->buffer_alloc(be, size, out, err);
}

static inline void ert_backend_buffer_free(struct ert_backend *be, struct ert_buffer *buf)
{
	be->ops->buffer_free(be, buf);
}

static inline bool ert_backend_buffer_host_visible(struct ert_backend *be)
{
	return !be->ops->buffer_host_visible || be->ops->buffer_host_visible(be);
}

static inline ert_status ert_backend_buffer_write(struct ert_backend *be,
						  const struct ert_buffer *buf, size_t offset,
						  const void *src, size_t size, struct ert_err *err)
{
	return be->ops->buffer_write(be, buf, offset, src, size, err);
}

static inline ert_status ert_backend_buffer_read(struct ert_backend *be,
						 const struct ert_buffer *buf, size_t offset,
						 void *dst, size_t size, struct ert_err *err)
{
	return be->ops->buffer_read(be, buf, offset, dst, size, err);
}

static inline bool ert_backend_fp16_storage(struct ert_backend *be)
{
	return be->ops->fp16_storage && be->ops->buffer_convert && be->ops->fp16_storage(be);
}

static inline ert_status ert_backend_buffer_convert(struct ert_backend *be,
						    const struct ert_buffer *buf,
						    size_t src_offset, ert_dtype from,
						    size_t dst_offset, ert_dtype to, size_t count,
						    struct ert_err *err)
{
	return be->ops->buffer_convert(be, buf, src_offset, from, dst_offset, to, count, err);
}

static inline size_t ert_backend_workspace_size(struct ert_backend *be, const struct ert_exec *x)
{
	return be->ops->workspace_size ? be->ops->workspace_size(be, x) : 0;
}

static inline ert_status ert_backend_prepare(struct ert_backend *be, struct ert_exec *x,
					     struct ert_err *err)
{
	return be->ops->prepare ? be->ops->prepare(be, x, err) : ERT_OK;
}

static inline ert_status ert_backend_compute(struct ert_backend *be, struct ert_exec *x,
					     struct ert_err *err)
{
	return be->ops->compute(be, x, err);
}

static inline void ert_backend_release(struct ert_backend *be, struct ert_exec *x)
{
	if (be->ops->release)
		be->ops->release(be, x);
}

static inline void ert_backend_plan_prepared(struct ert_backend *be)
{
	if (be->ops->plan_prepared)
		be->ops->plan_prepared(be);
}

static inline void ert_backend_prep_times(struct ert_backend *be, struct ert_backend_times *out)
{
	*out = (struct ert_backend_times){ 0 };
	if (be->ops->prep_times)
		be->ops->prep_times(be, out);
}

static inline ert_status ert_backend_synchronize(struct ert_backend *be, struct ert_err *err)
{
	return be->ops->synchronize ? be->ops->synchronize(be, err) : ERT_OK;
}

static inline bool ert_backend_device_time(struct ert_backend *be, const struct ert_exec *x,
					   uint64_t *ns_out)
{
	return be->ops->device_time && be->ops->device_time(be, x, ns_out);
}

/* May @from's buffers be shared with @to through a dma-buf (both have the ops)? */
static inline bool ert_backend_can_share(const struct ert_backend *from,
					 const struct ert_backend *to)
{
	return from->ops->buffer_export_fd && to->ops->buffer_import_fd;
}

static inline ert_status ert_backend_buffer_export_fd(struct ert_backend *be,
						      const struct ert_buffer *buf, int *fd_out,
						      struct ert_err *err)
{
	return be->ops->buffer_export_fd(be, buf, fd_out, err);
}

static inline ert_status ert_backend_buffer_import_fd(struct ert_backend *be, int fd,
						      size_t size, struct ert_buffer *out,
						      struct ert_err *err)
{
	return be->ops->buffer_import_fd(be, fd, size, out, err);
}

static inline size_t ert_backend_resident_bytes(struct ert_backend *be)
{
	return be->ops->resident_bytes ? be->ops->resident_bytes(be) : 0;
}

static inline uint64_t ert_backend_copied_bytes(struct ert_backend *be)
{
	return be->ops->copied_bytes ? be->ops->copied_bytes(be) : 0;
}

static inline void ert_backend_destroy(struct ert_backend *be)
{
	if (be)
		be->ops->destroy(be);
}

#endif /* ERT_BACKEND_IMPL_H */
