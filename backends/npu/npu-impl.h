/* SPDX-License-Identifier: MIT */
/*
 * npu-impl.h — private to backends/npu: the backend context, where tensors
 * live (BO + offset), and the lowering of int8 nodes to command streams.
 *
 * Lowering happens in prepare(): each node becomes a few enpu commands whose
 * tensors name node-local "refs" (a BO each). compute() appends the node's
 * commands to the job being built, turning refs into the job's regions;
 * synchronize() submits the jobs built so far (one SUBMIT) and waits. The
 * session synchronizes a backend whenever the next step runs elsewhere, so
 * a maximal run of NPU steps (an island) becomes one job, or several when
 * the device's limits (regions, commands, work) split it.
 */
#ifndef ERT_NPU_IMPL_H
#define ERT_NPU_IMPL_H

#include "ert-backend-impl.h"
#include "npu/npu-device.h"
#include "uapi/drm/enpu_cmdstream.h"

/* Most regions (BOs) one job may name: ENPU_CS_MAX_REGIONS of the driver. */
#define NPU_MAX_REGIONS 64
/*
 * Most BOs one lowered node refers to: each input of a Concat may be a graph
 * input, a userptr BO of its own. At most NPU_MAX_REGIONS, so that a job
 * always has room for one node.
 */
#define NPU_MAX_REFS 32

union npu_cmd {
	struct enpu_cs_cmd hdr;
	struct enpu_cs_conv2d conv;
	struct enpu_cs_matmul mm;
	struct enpu_cs_eltwise elt;
	struct enpu_cs_pool pool;
	struct enpu_cs_lut lut;
	struct enpu_cs_copy copy;
};

/* One command of a lowered node; its tensors' regions are node ref indices. */
struct npu_cmd_entry {
	union npu_cmd c;
	uint64_t work;
};

/*
 * Where a node's tensor lives. A graph input (input >= 0) is wrapped by a
 * userptr BO the node owns (@own), made again when the session's buffer for
 * it moves and destroyed with the node's lowering: a wrapper never outlives
 * the buffer it pins, and no stale one can match a new buffer at the same
 * address.
 */
struct npu_ref {
	const struct npu_bo *bo;
	int32_t input;       /* node input index of a graph input, or -1 */
	const void *base;    /* host address @own wraps (input refs) */
	uint32_t gen;        /* the input's ert_value.storage_gen when wrapped */
	uint64_t offset;     /* offset of the tensor in @bo */
	struct npu_bo own;   /* input refs: the wrapper */
};

struct npu_op {
	struct npu_cmd_entry *cmds;
	uint32_t n_cmds;
	struct npu_ref refs[NPU_MAX_REFS];
	uint32_t n_refs;
};

/* A BO the backend owns: an arena or a weight slab. */
struct npu_bo_entry {
	struct npu_bo bo;
	enum { NPU_BO_ARENA, NPU_BO_SLAB } kind;
	size_t used;         /* slabs: bytes handed out */
	struct npu_bo_entry *next;
};

/* A constant uploaded to a slab (keyed by its host address and size). */
struct npu_const {
	const void *src;
	size_t nbytes;
	const struct npu_bo *bo;
	uint64_t offset;
};

/* One job being built. */
struct npu_job_buf {
	uint8_t *cs;
	size_t len, cap;
	uint32_t n_cmds;
	uint64_t work;
	const struct npu_bo *regions[NPU_MAX_REGIONS];
	/* ENPU_JOB_BO_READ, plus _WRITE for regions a command writes (inputs are read-only userptrs) */
	uint32_t region_flags[NPU_MAX_REGIONS];
	uint32_t n_regions;
};

struct ert_npu {
	struct npu_dev *dev;
	const struct npu_dev_info *info;
	struct npu_bo_entry *bos;
	struct npu_const *consts;
	uint32_t n_consts, cap_consts;
	size_t resident;             /* bytes of slabs */

	struct npu_job_buf *jobs;    /* jobs built since the last synchronize */
	uint32_t n_jobs, cap_jobs;
	uint64_t last_seqno;
	bool in_flight;
	uint64_t submitted;          /* jobs submitted, for the hang test hook */
	uint64_t hang_job;           /* ERT_NPU_TEST_HANG: 1-based job to hang, 0 none */
};

/* ---- npu-backend.c: memory ---- */

/* Locate @nbytes at host address @p in a BO the backend knows; NULL if none. */
const struct npu_bo *ert_npu_find(struct ert_npu *npu, const void *p, size_t nbytes,
				  uint64_t *offset);
/* A BO copy of constant @src (uploaded once per session, shared by plans). */
ert_status ert_npu_upload(struct ert_npu *npu, const void *src, size_t nbytes,
			  const struct npu_bo **bo, uint64_t *offset, struct ert_err *err);
/* A BO copy of bytes made at prepare time (tables): not cached. */
ert_status ert_npu_upload_bytes(struct ert_npu *npu, const void *src, size_t nbytes,
				const struct npu_bo **bo, uint64_t *offset, struct ert_err *err);
/* A read-only userptr BO over page-aligned @p, owned by the caller. */
ert_status ert_npu_wrap(struct ert_npu *npu, void *p, size_t nbytes, struct npu_bo *bo,
			struct ert_err *err);

/* ---- npu-lower.c ---- */

/*
 * The op types the NPU has a lowering for, whatever the node (edgert ops):
 * ert_npu_supports() then decides per node (int8 only, its limits).
 */
bool ert_npu_claims_op(enum ert_op op);
/* May the NPU run @x? int8 ops with ert.requant = 1 and plain int8 movement. */
bool ert_npu_supports(struct ert_npu *npu, const struct ert_exec *x);
/* Lower @x into x->state (struct npu_op). */
ert_status ert_npu_lower(struct ert_npu *npu, struct ert_exec *x, struct ert_err *err);
void ert_npu_op_free(struct ert_npu *npu, struct npu_op *op);
/* Tensor fields of command @c (up to 5) into @t, the one it writes last; returns the count. */
uint32_t ert_npu_cmd_tensors(union npu_cmd *c, struct enpu_cs_tensor **t);

#endif /* ERT_NPU_IMPL_H */
