/* SPDX-License-Identifier: MIT */
/*
 * session-impl.h — private to libruntime: models, plans, sessions.
 *
 * A plan is everything that depends on the input shapes (and on the values of
 * inputs that shape inference reads): per-tensor shapes, which nodes were
 * evaluated at plan time, placement, the memory plan and the prepared kernels.
 * Sessions keep a small cache of plans keyed by that signature.
 */
#ifndef ERT_SESSION_IMPL_H
#define ERT_SESSION_IMPL_H

#include <stdatomic.h>

#include "ert-backend-impl.h"
#include "ert-seq.h"

struct ert_model {
	atomic_int refs;
	struct ert_graph *graph;
	void *map;            /* mmap of an .ert file, or NULL */
	size_t map_size;
	void *copy;           /* malloc'd copy of an in-memory model, or NULL */
	bool graph_borrowed;  /* a subgraph's view (session/subgraph.c): not freed here */
	/* ert_model_unfused_irblock()'s model, made once and shared, or NULL */
	struct ert_model *_Atomic unfused;
};

/*
 * Where a tensor's bytes live in a plan. Only ERT_PT_ARENA tensors are in an
 * arena (that of the buffer type of the backend whose step writes them); the
 * others are in host memory: graph inputs stay in the session's input buffers,
 * which the application fills before (and independently of) any plan.
 */
enum ert_plan_kind {
	ERT_PT_UNUSED = 0,
	ERT_PT_CONST,      /* model constant: data in the model */
	ERT_PT_INPUT,      /* graph input: the session's input buffer (host) */
	ERT_PT_FOLDED,     /* computed while planning: plan-owned buffer (host) */
	ERT_PT_ARENA,      /* written by a step: offset in its backend's arena */
	/*
	 * Written by a step whose output shape is known only when it runs (a
	 * data-dependent op, session/dynamic.c): host memory the session
	 * allocates when the kernel gives the shape, kept for later runs.
	 */
	ERT_PT_DYNAMIC,
	/*
	 * A continuation plan's view of a tensor its parent chain computes at
	 * run time (an arena or dynamic tensor there): host memory, read in
	 * place; its address is refreshed from the parent before every run.
	 */
	ERT_PT_OUTER,
};

struct ert_plan_tensor {
	struct ert_value v;
	enum ert_plan_kind kind;
	int32_t root;        /* arena tensors sharing storage (views, in place): the owner */
	int32_t first, last; /* step indices of the first write and last read */
	uint32_t arena;      /* ERT_PT_ARENA: arena index (buffer type of the writer) */
	size_t offset;       /* in that arena (of the root) */
	int32_t host_mirror; /* graph output in device memory: its mirror in host memory, else -1 */
	bool fp16;           /* a float32 tensor stored as float16 in its arena (fp16-guard.c) */
	/*
	 * The value is the same for every run of this plan, and shape inference
	 * sees it: constants, values computed while planning, inputs read for
	 * their value and, in a continuation, dynamic outputs it is keyed by.
	 */
	bool fixed;
};

/*
 * A tensor's second home, in the arena of readers that cannot read it where
 * it lies (one side of the crossing is device memory, see session/copies.c):
 * filled from the tensor's home right before step @first, its first reader
 * there, and read by steps up to @last. first == n_steps: only the application
 * reads it (a graph output), after the last step. Readers' exec inputs point
 * at @v, which has the tensor's shape and data in this arena (NULL when that
 * memory is not host-visible).
 */
struct ert_plan_mirror {
	int32_t tensor;
	uint32_t arena;
	int32_t first, last;
	size_t offset;
	struct ert_value v;
	/*
	 * Stored as float16 (readers there are steps in float16). A mirror in
	 * the arena of the tensor's home is a conversion between float32 and
	 * float16 storage, done by the arena's backend (buffer_convert()).
	 */
	bool fp16;
	/*
	 * Not filled: its readers read the tensor's home in place, through
	 * the arena's import in their backend (p->shares[share], copies.c's
	 * "Sharing arenas"); -1: a copy. The mirror's block stays planned.
	 */
	int32_t share;
};

/*
 * Arena @from (host-visible, its backend exports dma-bufs) imported by the
 * backend of device arena @to, as @buf of that backend's type; tried once
 * per plan, when the arenas are allocated.
 */
struct ert_plan_share {
	uint32_t from, to;
	bool ok;
	struct ert_buffer buf;
};

struct ert_step {
	uint32_t node;
	uint32_t backend;    /* index into the session's backends */
	uint32_t arena;      /* arena of its backend's buffer type: outputs, workspace */
	struct ert_exec x;
	size_t ws_offset;    /* workspace offset in that arena */
	bool prepared;
	/*
	 * Precision LOW on a backend that stores float16 (fp16-guard.c): the
	 * step could run in float16 (x.fp16 says whether it does), and when
	 * the overflow guard kept it in float32, the tensor that made it
	 * (kept_tensor, else -1) and that tensor's max |x| in the calibration run.
	 */
	bool low;
	int32_t kept_tensor;
	float kept_max;
};

/* One per buffer type that some step of the plan uses. */
struct ert_arena_buf {
	const char *type;    /* buffer_type() name */
	uint32_t backend;    /* first backend of that type: allocates and frees it */
	bool visible;        /* host-visible: its backend's buffer_host_visible() */
	size_t size;         /* bytes the memory plan needs */
	bool allocated;
	struct ert_buffer buf;
};

/* Host storage of a dynamic step's output, kept across runs (session/dynamic.c). */
struct ert_plan_dyn {
	int32_t tensor;
	void *data;
	size_t cap;          /* bytes allocated: grows, never shrinks */
	bool given;          /* the kernel gave the shape in this run */
	bool keyed;          /* shape inference reads its value: continuations are keyed by it */
};

/*
 * Data-dependent shapes (docs/dynamic-shapes.md). A plan ends with the first
 * step whose output shape depends on values known only at run time (its
 * "dynamic step"). When nodes follow it, they are planned at run time, once
 * that step has given its outputs' shapes, as a continuation: a plan of the
 * rest of the graph under this one, keyed by those shapes (and by the bytes
 * of such outputs that shape inference reads), cached like plans are.
 */
struct ert_plan {
	struct ert_plan *next;        /* session's cache list (or parent's), most recent first */
	struct ert_session *sess;
	struct ert_plan *parent;      /* NULL for a plan of the whole graph's start */
	struct ert_plan *root;        /* the first plan of this chain (itself for a root) */
	uint32_t first_node;          /* graph nodes from here on are this plan's */
	int32_t dyn_step;             /* the dynamic step (the last), or -1 */
	int32_t cut;                  /* node index of the dynamic step when nodes follow it, or -1 */
	struct ert_plan_dyn *dyn;     /* one per output of the dynamic step */
	uint32_t n_dyn;
	uint64_t dyn_bytes;           /* their caps added up */
	struct ert_plan *conts;       /* continuations, most recent first */
	/*
	 * signature: input shapes and the bytes of inputs read for their value
	 * (a continuation: its parent's dynamic outputs, the same way)
	 */
	int64_t *sig;
	size_t sig_len;
	uint8_t *sig_values;
	size_t sig_values_len;

	struct ert_plan_tensor *t;    /* one per graph tensor */
	struct ert_step *steps;
	uint32_t n_steps;
	struct ert_arena_buf *arenas;
	uint32_t n_arenas;            /* at most the session's n_backends */
	void **folded;                /* buffers of ERT_PT_FOLDED tensors */
	uint32_t n_folded;
	uint64_t folded_bytes;        /* their sizes added up */
	/* per-step arrays (pointers into these live in steps[i].x) */
	struct ert_value **io_ptrs;
	bool *in_const;
	struct ert_tensor_loc *io_locs;
	/* copies at splits, in the order of their first step */
	struct ert_plan_mirror *mirrors;
	uint32_t n_mirrors;
	/* arenas shared between two backends instead of copied (copies.c) */
	struct ert_plan_share *shares;
	uint32_t n_shares;
	/* host bytes where copies into float16 mirrors are converted first */
	void *staging;
	size_t staging_size;
	float fp16_bound;             /* the overflow guard's bound (0: guard off) */
	size_t peak_bytes;            /* the arenas' sizes added up */
};

struct ert_session_tensor {
	struct ert_session *sess;
	int32_t tensor;      /* graph tensor index */
	bool is_input;
	uint32_t index;      /* input/output position */
};

#define ERT_PLAN_CACHE_MAX 4

/*
 * What ert_session_create() spent its wall-clock time on (nanoseconds), for
 * `edgert bench`: the backends' creation, then the first plan's parts (0
 * when planning waits for input shapes). @be sums the backends' own parts
 * (ert_backend_prep_times), which happen inside @backends_ns and
 * @prepare_ns; what no part claims is planning on the CPU (shapes, constant
 * folding, placement, kernel arguments, the CPU backend's packing).
 */
struct ert_create_times {
	uint64_t total_ns;
	uint64_t backends_ns;   /* creating the backends: devices opened, cache files read */
	uint64_t plan_ns;       /* the first plan, all of it */
	uint64_t calib_ns;      /* the fp16 guard's calibration run on the CPU (precision LOW) */
	uint64_t memory_ns;     /* the memory plan and the arenas' allocation */
	uint64_t prepare_ns;    /* the backends' prepare() of every step */
	uint64_t prepared_ns;   /* their plan_prepared(): cache files written */
	struct ert_backend_times be;
};

struct ert_session {
	struct ert_model *model;
	ert_config cfg;
	char *cache_path;
	struct ert_backend *backends[ERT_MAX_BACKENDS + 1];
	uint32_t n_backends;
	uint32_t auto_mask;           /* bit b: backends[b] was chosen by ERT_BACKEND_AUTO */

	/* current input shapes and their buffers (the application writes here) */
	struct ert_value *in_vals;    /* one per graph input */
	void **in_bufs;
	size_t *in_caps;
	uint32_t *in_gens;            /* ert_value.storage_gen of each input buffer */
	bool *in_value_needed;        /* input is read for its value by shape inference */
	/* a sequence or optional input: its value (ert-seq.h), its buffer holds the handle */
	struct ert_seq **in_seqs;
	/* what the session's sequence and optional objects hold, against the budget (budget.c) */
	struct ert_seq_meter seqs;
	struct ert_session_tensor *in_handles, *out_handles;
	/* string inputs: the bytes set_input copied (ert_strings_pack()), one block each */
	ert_string **in_strs;
	/* strings ops make during a run, emptied when one starts (ert-strings.h) */
	struct ert_str_heap *strings;

	struct ert_plan *plan;        /* current plan (also head of the cache), or NULL */
	struct ert_plan *leaf;        /* the last plan of the chain the last run went through */
	bool dirty;                   /* inputs resized since plan was made */
	bool running;                 /* inside ert_session_run(): callbacks may not re-enter */
	const struct ert_step *cb_step; /* the step an after_op callback is called for, or NULL */
	uint64_t budget;              /* bytes inputs and plans may take (max_memory or default) */
	uint64_t copied_bytes;        /* bytes copied between backends by the last run */
	char error[512];
	uint32_t op_error;            /* where error's "Type 'name': ..." starts after a run failed in
				       * an op (past "failed to run "); 0: not such a failure */
	char failed_op[64];           /* op type of the node planning or the last run failed on */
	struct ert_create_times created;  /* ert_session_create()'s breakdown */
	struct ert_create_times planned;  /* the parts of the last plan made (plan.c) */
};

/* Record an error on the session; returns @st. */
ert_status ert_session_fail(struct ert_session *s, ert_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Set the thread-local last error; returns @st. */
ert_status ert_set_last_error(ert_status st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * @msg past a leading "<backend>: " or "<backend> " (any case: the NPU's
 * device layer writes "NPU job failed: ..."), for a sentence that names the
 * backend itself ("... on vulkan: why"); @msg when it has no such prefix.
 */
const char *ert_msg_past_backend(const char *msg, const char *backend);
/*
 * The error of node @n failing to prepare or compute on backend @be, from the
 * backend's message @msg (may be err->msg itself), into @err: "Type 'name':
 * why" on the CPU, "Type 'name': <backend>: why" on any other backend, the
 * op and the backend named once whatever the backend wrote: its "Type
 * 'name': " (ert_node_fail()) and backend prefixes, in either order, are
 * dropped from @msg first. An empty @msg gives @st's status string.
 */
void ert_op_error_set(struct ert_err *err, const struct ert_node *n,
		      const struct ert_backend *be, ert_status st, const char *msg);

/* Build a plan for the session's current input shapes and values. */
ert_status ert_plan_create(struct ert_session *s, struct ert_plan **out, struct ert_err *err);
/*
 * Build the continuation of @parent (whose dynamic step has just run and
 * given its outputs' shapes): the nodes after its cut.
 */
ert_status ert_plan_create_cont(struct ert_session *s, struct ert_plan *parent,
				struct ert_plan **out, struct ert_err *err);
/* Frees @p with its continuations; accepts NULL. */
void ert_plan_destroy(struct ert_session *s, struct ert_plan *p);
/* Does @p match the session's current inputs? */
bool ert_plan_matches(const struct ert_session *s, const struct ert_plan *p);
/*
 * Assign offsets for the plan's arena tensors and workspaces, each arena on its
 * own (p->t[].arena, p->steps[].arena); sets p->arenas[].size.
 */
ert_status ert_memplan_run(struct ert_session *s, struct ert_plan *p, struct ert_err *err);

/*
 * Copies at splits (copies.c). ert_copies_plan(), once arenas are assigned:
 * a mirror for every tensor a step reads across a crossing that involves
 * memory the host cannot see, and one in host memory for every graph output
 * in such memory; the readers' exec inputs are pointed at the mirrors.
 * UNSUPPORTED, naming the tensor, where both sides are device memory.
 * ert_copies_run(): fill the mirrors whose first step is @step (n_steps: the
 * graph outputs after the run), starting at index *@cursor, which it advances.
 */
ert_status ert_copies_plan(struct ert_session *s, struct ert_plan *p, struct ert_err *err);
ert_status ert_copies_run(struct ert_session *s, struct ert_plan *p, uint32_t step,
			  uint32_t *cursor, struct ert_err *err);
/*
 * The mirror of tensor @t in @arena stored as float16 or not (@fp16), or -1
 * when readers there read it in place.
 */
int32_t ert_copies_find(const struct ert_plan *p, int32_t t, uint32_t arena, bool fp16);
/*
 * Sharing arenas instead of copying (copies.c), once the arenas are
 * allocated: for each pair of a host-visible arena whose backend exports
 * dma-bufs and a device arena whose backend imports them, with a mirror
 * between them, export and import once; where that works, the mirrors of
 * that pair are not filled (mirror.share). Where it fails, the copies stay
 * (the reason on stderr with ERT_DEBUG_SHARING=1); never an error.
 * ert_copies_unshare() frees the imports, before the arenas are freed.
 */
void ert_copies_share(struct ert_session *s, struct ert_plan *p);
void ert_copies_unshare(struct ert_session *s, struct ert_plan *p);
/*
 * Where a step in arena @arena reads tensor @t through its mirror @m when
 * that mirror is shared: the import and the home's offset. False otherwise.
 */
bool ert_copies_shared_loc(const struct ert_plan *p, int32_t m, struct ert_tensor_loc *loc);
/* Does step @i read tensor @t as float16 (a float32 tensor, the step in float16)? */
static inline bool ert_step_reads_fp16(const struct ert_plan *p, uint32_t i, int32_t t)
{
	return p->steps[i].x.fp16 && p->t[t].v.dtype == ERT_DTYPE_FLOAT32;
}

/* Bytes of @v stored as float16 (@fp16) or as its dtype. */
static inline size_t ert_plan_stored_bytes(const struct ert_value *v, bool fp16)
{
	return fp16 ? (size_t)v->numel * 2 : v->nbytes;
}

/*
 * Precision LOW on backends that store float16 (fp16-guard.c), once arenas
 * are assigned: which steps run in float16 (ert_exec.fp16) and which tensors
 * are stored so. With the overflow guard on (ert_config.fp16_guard), a
 * calibration run of the whole graph on the CPU backend records every
 * tensor's max |x|, and a step whose float inputs or outputs reach the
 * bound (ert_config.fp16_bound, 2^14 by default), or are inf/NaN, stays in
 * float32 (ert_step.kept_tensor/kept_max say why).
 */
ert_status ert_fp16_plan(struct ert_session *s, struct ert_plan *p, struct ert_err *err);

/*
 * Data-dependent shapes (dynamic.c). ert_dyn_alloc() is the dynamic step's
 * ert_exec.alloc_output: it sizes the output's host buffer (growing it under
 * the budget) and gives the output its shape and data. ert_dyn_next(): once
 * @p's dynamic step ran, the continuation for the shapes it gave, from
 * @p->conts or planned now, with its view of the parent chain's tensors up
 * to date; STOPPED when the step did not give its outputs (skipped).
 */
ert_status ert_dyn_alloc(struct ert_exec *x, uint32_t k, int32_t rank, const int64_t *dims,
			 struct ert_err *err);
ert_status ert_dyn_next(struct ert_session *s, struct ert_plan *p, struct ert_plan **out,
			struct ert_err *err);

/*
 * The memory budget (budget.c). What a session holds: its input buffers (the
 * whole pages of their current shapes), and the arenas and the values
 * computed while planning of each plan it keeps. Checks run before the memory
 * they count is allocated, and fail with ERT_STATUS_OUT_OF_MEMORY over the
 * budget, or ERT_STATUS_SHAPE when a size overflows, with a message naming
 * the input or node and the sizes.
 */
/* ert_config.max_memory 0: half the physical memory. */
uint64_t ert_budget_default(void);
/* Bytes of a tensor, overflow-checked; false when they or the element count overflow. */
bool ert_budget_bytes(ert_dtype dtype, int32_t rank, const int64_t *dims, uint64_t *bytes);
/* Input @k at shape @v (dtype, rank, dims), the other inputs taking @others bytes. */
ert_status ert_budget_check_input(const struct ert_session *s, uint32_t k,
				  const struct ert_value *v, uint64_t others, struct ert_err *err);
/* Bytes the input buffers take at their current shapes, but for input @except (-1: none). */
uint64_t ert_budget_inputs(const struct ert_session *s, int64_t except);
/*
 * Bytes plan @p holds: its arenas, the values computed while planning, its
 * dynamic outputs' buffers, and the same of its continuations.
 */
uint64_t ert_budget_plan_bytes(const struct ert_plan *p);
/*
 * Everything the session holds grows by @more bytes for @what (a
 * continuation being planned, a dynamic output growing) while @p's chain
 * runs: cached plans off that chain are dropped until it fits, else
 * OUT_OF_MEMORY naming @n and the sizes.
 */
ert_status ert_budget_check_run(struct ert_session *s, const struct ert_plan *p,
				const struct ert_node *n, const char *what, uint64_t more,
				struct ert_err *err);
/*
 * Drop cached plans, least recently used first (the current one last), until
 * they fit beside @need bytes.
 */
void ert_budget_evict(struct ert_session *s, uint64_t need);
/*
 * The meter of the session's sequence and optional objects (ert_session.seqs):
 * what they hold counts with the inputs and plans against the budget.
 */
void ert_budget_seqs_init(struct ert_session *s);
/* Output tensor @t of node @n, shape inferred as @v (numel/nbytes not yet set). */
ert_status ert_budget_check_tensor(const struct ert_session *s, const struct ert_node *n,
				   int32_t t, const struct ert_value *v, struct ert_err *err);
/* Computing @n while planning adds @bytes to p->folded_bytes. */
ert_status ert_budget_check_fold(const struct ert_session *s, const struct ert_plan *p,
				 const struct ert_node *n, uint64_t bytes, struct ert_err *err);
/*
 * The memory plan of @p (not yet in the cache) is made and its arenas are not
 * allocated yet: the inputs and @p must fit, and cached plans are dropped
 * until they fit beside them.
 */
ert_status ert_budget_check_plan(struct ert_session *s, const struct ert_plan *p,
				 struct ert_err *err);

/*
 * Input buffers: @need bytes as whole pages (0 when that overflows); zeroed,
 * page-aligned; those of 1 MiB and more are anonymous mappings whose pages
 * the kernel zero-fills when first touched. A buffer kept for a smaller
 * shape gives back its pages past @need (ert_input_shrink, true when it
 * did: whoever pinned those pages holds stale ones, so the session bumps
 * the input's storage_gen). Free with the size it was allocated with.
 */
size_t ert_input_alloc_size(size_t need);
void *ert_input_alloc(size_t size);
bool ert_input_shrink(void *p, size_t size, size_t need);
void ert_input_free(void *p, size_t size);

/*
 * Sequence and optional inputs (seq-io.c): at session creation, an object
 * per such input, its handle written into the input's buffer (none for an
 * optional, an empty sequence); freed with the session.
 */
ert_status ert_session_seq_inputs_init(struct ert_session *s);
void ert_session_seq_inputs_free(struct ert_session *s);
/*
 * After a failed run: the handles of sequence and optional outputs become
 * NULL (the steps that write them may not have run, and their arena bytes
 * may hold another tensor's), so the item functions see no value.
 */
void ert_session_seq_outputs_clear(struct ert_session *s);
/* The value behind an input/output handle (its plan's), or NULL before a plan. */
const struct ert_value *ert_session_handle_value(const ert_tensor *t);
/* Output @k's value after a run (subgraph runs read them), or NULL. */
const struct ert_value *ert_session_output_value(ert_session *s, uint32_t k);

/*
 * For a session with a GPU backend: @m itself (a reference)
 * where its graph has no InvertedResidual node; else a model of the same
 * graph with those blocks as their Convs again (ert_opt_unfuse_irblock()),
 * made on the first call and kept with @m for the sessions after. NULL, with
 * @err set, on failure.
 */
ert_model *ert_model_unfused_irblock(ert_model *m, struct ert_err *err);

/* Internal accessors for tools (edgert info/conform): not part of the ABI. */
const struct ert_graph *ert_model_graph(const ert_model *model);
/* Op type of the node the last failed plan or run stopped at ("" if none). */
const char *ert_session_failed_op(const ert_session *sess);
/*
 * When the last error is an op's failing in a run, that part of it, naming the
 * op once ("Add 'x': why"); else NULL. Subgraph runs nest it in their owner's.
 */
const char *ert_session_op_error(const ert_session *sess);
/* Call @fn for each step of the current plan (planning first if needed). */
typedef void (*ert_step_visit_fn)(const struct ert_node *node, const struct ert_value *const *in,
				  uint32_t n_in, const struct ert_value *const *out,
				  uint32_t n_out, const char *backend, void *user);
ert_status ert_session_visit_steps(ert_session *sess, ert_step_visit_fn fn, void *user);
/*
 * From an after_op callback only (edgert diff): the node of the op the
 * callback is called for (NULL elsewhere), and its output @k: *@v_out its
 * value (shape, dtype; NULL when the output is absent) and, with @dst, its
 * @size bytes (its nbytes) copied there, read back through the backend where
 * it lies in device memory (counted in that backend's copied bytes).
 */
const struct ert_node *ert_session_op_node(const ert_session *sess);
/*
 * For edgert run --explain: how the current plan runs @node under precision
 * LOW. False when the node is not a step of it or its backend stores no
 * float16 (then float32). Otherwise *@fp16_out says whether it runs in
 * float16 and, when the guard kept it in float32, *@tensor_out names the
 * tensor (else NULL), *@max_out its max |x| and *@bound_out the bound.
 */
bool ert_session_fp16_note(ert_session *sess, const struct ert_node *node, bool *fp16_out,
			   const char **tensor_out, float *max_out, float *bound_out);
ert_status ert_session_op_output(ert_session *sess, uint32_t k, const struct ert_value **v_out,
				 void *dst, size_t size);

#endif
