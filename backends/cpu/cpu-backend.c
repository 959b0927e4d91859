/* SPDX-License-Identifier: MIT */
/* The CPU backend: the ops table the planner sees, over the per-op kernels. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "cpu/cpu-impl.h"
#include "cpu/gemm/sgemm.h"

static struct ert_cpu *cpu_of(struct ert_backend *be)
{
	return be->ctx;
}

/* The kernel entry of step @x: the int8 one for weights left block-quantised. */
static const struct ert_cpu_op *kernel_of(const struct ert_exec *x)
{
	const struct ert_cpu_op *dq = ert_cpu_dq_op(x);

	return dq ? dq : ert_cpu_op_find(x->node->op);
}

static bool cpu_supports_op(struct ert_backend *be, const struct ert_exec *x)
{
	const struct ert_cpu_op *k = kernel_of(x);

	return k && (!k->supports || k->supports(x));
}

static const char *cpu_buffer_type(struct ert_backend *be)
{
	return "host";
}

/*
 * Large buffers on huge pages: a 1x1 convolution reads its K rows a plane
 * apart and a GEMM streams panels of several MiB, one 4 KiB page (and TLB
 * entry) after another; in 2 MiB pages a whole activation tensor or weight
 * matrix needs a handful of TLB entries. Linux gives them only to 2 MiB
 * aligned ranges of a mapping marked MADV_HUGEPAGE when transparent huge
 * pages are in "madvise" mode (Debian's default; in "always" mode aligned
 * ranges get them anyway, in "never" mode madvise() changes nothing). The
 * memory a buffer touches stays what it touches: the alignment costs
 * address space, not pages, and a partly used last 2 MiB stays on small
 * pages.
 */
#define CPU_HUGE_PAGE ((size_t)2 << 20)

void *ert_cpu_alloc(size_t bytes)
{
	size_t rounded = bytes ? (bytes + 63) & ~(size_t)63 : 64;
	void *p = NULL;

	if (rounded < bytes)
		return NULL;
	if (rounded < CPU_HUGE_PAGE)
		return aligned_alloc(64, rounded);
	/* posix_memalign: aligned_alloc may insist on a size the alignment divides */
	if (posix_memalign(&p, CPU_HUGE_PAGE, rounded))
		return NULL;
	(void)madvise(p, rounded & ~(size_t)4095, MADV_HUGEPAGE);
	return p;
}

static ert_status cpu_buffer_alloc(struct ert_backend *be, size_t size, struct ert_buffer *out,
				   struct ert_err *err)
{
	void *p = ert_cpu_alloc(size);

	if (!p) {
		ert_err_set(err, "failed to allocate %zu bytes of host memory", size);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	out->host = p;
	out->size = size;
	out->handle = NULL;
	return ERT_OK;
}

static void cpu_buffer_free(struct ert_backend *be, struct ert_buffer *buf)
{
	free(buf->host);
	buf->host = NULL;
}

static size_t cpu_workspace_size(struct ert_backend *be, const struct ert_exec *x)
{
	const struct ert_cpu_op *k = kernel_of(x);

	return k && k->workspace ? k->workspace(cpu_of(be), x) : 0;
}

static ert_status cpu_prepare(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_cpu_op *k = kernel_of(x);
	ert_status st = k && k->prepare ? k->prepare(cpu_of(be), x, err) : ERT_OK;

	/* kernels with a variant per level name it; the rest are portable C */
	if (!x->kernel)
		x->kernel = "scalar";
	return st;
}

/*
 * With every output empty there is nothing to write. Kernels are not asked:
 * some walk the outer dims of an input whose numel is 0 because of a later
 * dim, which a hostile model turns into billions of empty iterations.
 */
static bool outputs_empty(const struct ert_exec *x)
{
	/* data-dependent outputs have no size until the kernel gives it */
	if (x->alloc_output)
		return false;
	for (uint32_t k = 0; k < x->n_out; k++)
		if (x->out[k] && x->out[k]->numel)
			return false;
	return x->n_out > 0;
}

static ert_status cpu_compute(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_cpu_op *k = kernel_of(x);

	if (!k) {
		ert_err_set(err, "cpu: no kernel for %s", ert_op_name(x->node->op));
		return ERT_STATUS_UNSUPPORTED;
	}
	return outputs_empty(x) ? ERT_OK : k->compute(cpu_of(be), x, err);
}

static void cpu_release(struct ert_backend *be, struct ert_exec *x)
{
	const struct ert_cpu_op *k = kernel_of(x);

	if (k && k->release && x->state)
		k->release(x);
	x->state = NULL;
}

static void cpu_destroy(struct ert_backend *be)
{
	struct ert_cpu *cpu = cpu_of(be);

	/* Sessions release their plans first, so this finds nothing unless a step leaked. */
	while (cpu->packed) {
		struct ert_cpu_packed *pk = cpu->packed;

		cpu->packed = pk->next;
		free(pk->data);
		free(pk);
	}
	ert_threadpool_destroy(cpu->pool);
	free(cpu);
	free(be);
}

static const struct ert_backend_ops cpu_ops = {
	.abi_version = ERT_BACKEND_ABI_VERSION,
	.name = "cpu",
	.supports_op = cpu_supports_op,
	.buffer_type = cpu_buffer_type,
	.buffer_alloc = cpu_buffer_alloc,
	.buffer_free = cpu_buffer_free,
	.workspace_size = cpu_workspace_size,
	.prepare = cpu_prepare,
	.compute = cpu_compute,
	.release = cpu_release,
	.destroy = cpu_destroy,
	.resident_bytes = ert_cpu_backend_resident_bytes,
};

ert_status ert_cpu_backend_create(const ert_config *cfg, struct ert_backend **out,
				  struct ert_err *err);

ert_status ert_cpu_backend_create(const ert_config *cfg, struct ert_backend **out,
				  struct ert_err *err)
{
	struct ert_backend *be;
	struct ert_cpu *cpu;
	uint32_t threads = cfg ? cfg->num_threads : 1;
	enum ert_cpu_isa isa;
	ert_status st = ert_cpu_isa_choose(cfg ? (int)cfg->cpu_level : 0, &isa, err);

	if (st != ERT_OK)
		return st;
	be = calloc(1, sizeof(*be));
	cpu = calloc(1, sizeof(*cpu));
	if (!be || !cpu)
		goto oom;
	cpu->isa = isa;
	cpu->gemm = ert_sgemm_kernel_for(isa);
	if (threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		/* power LOW: leave half the cores idle */
		if (cfg && cfg->power == ERT_LEVEL_LOW)
			n /= 2;
		threads = n < 1 ? 1 : n > ERT_MAX_THREADS ? ERT_MAX_THREADS : (uint32_t)n;
	}
	cpu->num_threads = threads;
	cpu->precision = cfg ? cfg->precision : ERT_LEVEL_NORMAL;
	cpu->gemm_low = cpu->precision == ERT_LEVEL_LOW ? ert_sbgemm_kernel_for(isa) : NULL;
	cpu->memory = cfg ? cfg->memory : ERT_LEVEL_NORMAL;
	cpu->pool = ert_threadpool_create(threads);
	if (!cpu->pool)
		goto oom;
	be->ops = &cpu_ops;
	be->type = ERT_BACKEND_CPU;
	be->ctx = cpu;
	*out = be;
	return ERT_OK;
oom:
	free(cpu);
	free(be);
	ert_err_set(err, "failed to create cpu backend: out of memory");
	return ERT_STATUS_OUT_OF_MEMORY;
}

size_t ert_cpu_backend_resident_bytes(struct ert_backend *be)
{
	return be && be->ops == &cpu_ops ? cpu_of(be)->packed_bytes : 0;
}

ert_status ert_cpu_eval_node(const struct ert_graph *g, const struct ert_node *n,
			     const struct ert_value *const *in, uint32_t n_in,
			     struct ert_value *out, uint32_t n_out, struct ert_err *err)
{
	struct ert_cpu_eval_opts o = { .isa = ERT_ISA_SCALAR, .memory = ERT_LEVEL_NORMAL };

	/* the level sessions get by default (ERT_CPU_ISA applies); scalar if that fails */
	if (ert_cpu_isa_choose(0, &o.isa, err) != ERT_OK)
		o.isa = ERT_ISA_SCALAR;
	err->msg[0] = '\0';
	return ert_cpu_eval_node_with(&o, g, n, in, n_in, out, n_out, err);
}

/* Outputs of data-dependent shape, evaluated outside a session: malloc'd (out[k]'s data). */
static ert_status eval_alloc(struct ert_exec *x, uint32_t k, int32_t rank, const int64_t *dims,
			     struct ert_err *err)
{
	struct ert_value *v = x->out[k], nv;
	ert_status st = ert_exec_output_value(x, k, rank, dims, &nv, err);

	if (st != ERT_OK)
		return st;
	nv.data = malloc(nv.nbytes ? nv.nbytes : 1);
	if (!nv.data) {
		ert_err_set(err, "out of memory evaluating '%s'", x->node->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	free(v->data);
	*v = nv;
	return ERT_OK;
}

static bool has_unknown_dim(const struct ert_value *v)
{
	for (int32_t i = 0; i < v->rank && i < ERT_MAX_RANK; i++)
		if (v->dims[i] == -1)
			return true;
	return false;
}

ert_status ert_cpu_eval_node_with(const struct ert_cpu_eval_opts *o, const struct ert_graph *g,
				  const struct ert_node *n, const struct ert_value *const *in,
				  uint32_t n_in, struct ert_value *out, uint32_t n_out,
				  struct ert_err *err)
{
	const struct ert_cpu_op *k = ert_cpu_op_find(n->op);
	ert_infer_fn infer = ert_op_infer(n->op);
	struct ert_value *outp[ERT_NODE_MAX_IO > 64 ? 64 : ERT_NODE_MAX_IO];
	struct ert_value *inp[64];
	bool in_const[64];
	struct ert_cpu cpu = {
		.pool = o->pool, .num_threads = o->pool ? ert_threadpool_size(o->pool) : 1,
		.isa = o->isa, .gemm = ert_sgemm_kernel_for(o->isa), .memory = o->memory,
		.precision = o->precision,
		.gemm_low = o->precision == ERT_LEVEL_LOW ? ert_sbgemm_kernel_for(o->isa) : NULL,
	};
	struct ert_exec x;
	bool dynamic = false;
	ert_status st;

	if (!k || !infer) {
		ert_err_set(err, "%s: not supported on the cpu backend", ert_op_name(n->op));
		return ERT_STATUS_UNSUPPORTED;
	}
	if (n_in > 64 || n_out > 64)
		return ert_node_fail(n, err, ERT_STATUS_UNSUPPORTED,
				     "too many inputs or outputs to evaluate");
	for (uint32_t i = 0; i < n_out; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		outp[i] = &out[i];
	}
	for (uint32_t i = 0; i < n_in; i++) {
		inp[i] = (struct ert_value *)in[i];
		in_const[i] = o->in_const ? o->in_const[i] : true;
	}
	struct ert_infer_ctx ic = {
		.graph = g, .node = n, .in = in, .out = outp,
		.n_in = n_in, .n_out = n_out, .err = err,
	};

	st = infer(&ic);
	if (st != ERT_OK)
		return st;
	for (uint32_t i = 0; i < n_out; i++)
		dynamic |= has_unknown_dim(&out[i]);
	for (uint32_t i = 0; i < n_out; i++) {
		if (dynamic) {
			/* the kernel sizes them (eval_alloc) */
			out[i].numel = 0;
			out[i].nbytes = 0;
			continue;
		}
		if (!ert_value_finish(&out[i])) {
			st = ert_node_fail(n, err, ERT_STATUS_SHAPE, "output %u is too large", i);
			goto fail;
		}
		out[i].data = malloc(out[i].nbytes ? out[i].nbytes : 1);
		if (!out[i].data) {
			ert_err_set(err, "out of memory evaluating '%s'", n->name);
			st = ERT_STATUS_OUT_OF_MEMORY;
			goto fail;
		}
	}
	memset(&x, 0, sizeof(x));
	x.graph = g;
	x.node = n;
	x.in = inp;
	x.out = outp;
	x.n_in = n_in;
	x.n_out = n_out;
	x.in_const = in_const;
	if (dynamic)
		x.alloc_output = eval_alloc;
	k = kernel_of(&x);
	if (k->supports && !k->supports(&x)) {
		st = ert_node_fail(n, err, ERT_STATUS_UNSUPPORTED,
				   "this case is not supported on the cpu backend");
		goto fail;
	}
	x.workspace_size = k->workspace ? k->workspace(&cpu, &x) : 0;
	if (x.workspace_size) {
		x.workspace = malloc(x.workspace_size);
		if (!x.workspace) {
			ert_err_set(err, "out of memory evaluating '%s'", n->name);
			st = ERT_STATUS_OUT_OF_MEMORY;
			goto fail;
		}
	}
	st = k->prepare ? k->prepare(&cpu, &x, err) : ERT_OK;
	if (st == ERT_OK && !outputs_empty(&x))
		st = k->compute(&cpu, &x, err);
	if (k->release && x.state)
		k->release(&x);
	free(x.workspace);
	for (uint32_t i = 0; st == ERT_OK && dynamic && i < n_out; i++) {
		if (!out[i].data) {
			st = ert_node_fail(n, err, ERT_STATUS_INTERNAL,
					   "the kernel gave output %u no shape", i);
		}
	}
	if (st == ERT_OK)
		return ERT_OK;
fail:
	for (uint32_t i = 0; i < n_out; i++) {
		free(out[i].data);
		out[i].data = NULL;
	}
	return st;
}
