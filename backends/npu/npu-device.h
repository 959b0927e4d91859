/* SPDX-License-Identifier: MIT */
/*
 * npu-device.h — the NPU backend's device layer: a thin wrapper over the enpu
 * uAPI (uapi/drm/enpu_accel.h) through libdrm, and a userspace simulator
 * behind the same functions.
 *
 * What. A device (struct npu_dev) is one open enpu node, /dev/accel/accelN,
 * or the simulator. It makes buffer objects (BOs: zeroed and mapped, or
 * wrapping the caller's page-aligned memory), queues jobs (a command stream,
 * uapi/drm/enpu_cmdstream.h, whose region i is the job's BO i) and waits for
 * them. The simulator validates every stream with enpu_cs_validate() against
 * its BOs' sizes as the driver does, then runs it with enpu_cs_execute()
 * (kmod/enpu_cs.c, the code the driver runs) in the calling thread, inside
 * npu_submit(); it has no dma-buf to export.
 *
 * Choosing the device (npu_dev_open()):
 *   NPU_DEV_SIM  always the simulator.
 *   NPU_DEV_HW   a kernel device or ERT_STATUS_UNSUPPORTED.
 *   NPU_DEV_ANY  a kernel device, else the simulator (an enpu device that
 *                fails QUERY or speaks another uAPI major is an error).
 * ERT_NPU_DEVICE=/dev/accel/accelN names the node (it must be driven by
 * enpu); ERT_NPU_DEVICE=sim forces the simulator (NPU_DEV_HW then fails).
 * Otherwise the first /dev/accel/accel* whose DRM driver is "enpu" is used.
 * The uAPI major version reported by QUERY must be the one this library was
 * built against (ENPU_UAPI_VERSION_MAJOR).
 *
 * Ordering. Each npu_submit() returns a sequence number; the jobs of one
 * device run one after another in submission order. On a kernel device the
 * last job of a submission signals that number as a point on the device's
 * timeline syncobj, and every job's fence is kept until npu_wait() has read
 * its error. npu_wait(s) waits for submission s and fails if a job of a
 * submission up to s failed (hung and reset, cancelled) that no earlier
 * npu_wait() reported: each job failure is reported once, by the first wait
 * that covers it, so a later submission that succeeds waits cleanly. The
 * CPU touches a BO's memory only while no unfinished job uses it (the
 * simulator finishes jobs inside npu_submit(), a kernel device does not).
 *
 * Threading: a device and its BOs are used by one thread at a time (callers
 * serialise); different devices are independent.
 *
 * Errors. Every function that can fail returns an ert_status and writes
 * @err (may be NULL) with a message naming the call and the errno's name
 * and meaning, e.g. "NPU SUBMIT: ERANGE: a command stream region reaches past
 * the end of its buffer object (job 1)". ENOMEM gives
 * ERT_STATUS_OUT_OF_MEMORY; a bad argument caught before the device is asked
 * gives ERT_STATUS_INVALID_ARGUMENT; no enpu device found, a node driven by
 * another driver, a uAPI major version mismatch, and export on the simulator
 * give ERT_STATUS_UNSUPPORTED; every other errno (a node that cannot be
 * opened, the device refused a job, a job failed, a wait timed out, the
 * module was unloaded: ENODEV) gives ERT_STATUS_BACKEND. The simulator
 * refuses what the driver refuses with the same errno and so the same
 * message. Output parameters are written only on success.
 */
#ifndef ERT_NPU_DEVICE_H
#define ERT_NPU_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "ert-op-impl.h"
#include "uapi/drm/enpu_accel.h"

struct npu_dev;

enum npu_dev_mode { NPU_DEV_ANY, NPU_DEV_HW, NPU_DEV_SIM };

/* What the device reports (QUERY); the simulator reports the driver's limits. */
struct npu_dev_info {
	bool simulated;          /* true: userspace simulator, no kernel device */
	char node[64];           /* "/dev/accel/accel0", or "simulator" */
	uint32_t uapi_major, uapi_minor;
	uint64_t max_job_work;   /* a job's command stream work limit (ENPU_CS_MAX_WORK) */
	uint32_t cs_version;     /* command stream version (ENPU_CS_VERSION) */
	uint32_t num_cores;
	uint32_t max_jobs_per_submit;
	uint32_t max_cs_size;    /* bytes of one job's command stream */
	uint32_t max_bos_per_job;
	uint32_t job_timeout_ms; /* a job without progress this long is reset; 0: never (simulator) */
	uint64_t max_bo_size;
	uint64_t opcode_mask;    /* bit n: opcode n (enum enpu_cs_opcode) is supported */
};

/*
 * A buffer object. The caller owns the struct; npu_bo_create() and
 * npu_bo_userptr() fill it, npu_bo_destroy() releases and zeroes it.
 */
struct npu_bo {
	uint32_t handle;         /* GEM handle (simulator: its own id); 0: none */
	uint64_t size;           /* bytes, a multiple of the page size */
	void *map;               /* CPU address of byte 0 (mmap, or the user's pages) */
	bool userptr;            /* wraps the caller's memory */
	bool read_only;          /* userptr the device may only read */
};

/* One job: a command stream and the BOs its regions name. Read during npu_submit() only. */
struct npu_job {
	const void *cs;          /* command stream bytes (copied by the device) */
	uint32_t cs_size;
	const struct npu_bo *const *bos;  /* region i = bos[i] */
	uint32_t n_bos;
	const uint32_t *bo_flags;         /* ENPU_JOB_BO_READ/WRITE per BO; NULL: read+write */
	uint32_t flags;                   /* ENPU_JOB_* (e.g. ENPU_JOB_TEST_HANG) */
};

/*
 * Open a device (see the top of this file). *out is the caller's until
 * npu_dev_close(), which accepts NULL. Every BO must be destroyed before its
 * device is closed.
 */
ert_status npu_dev_open(enum npu_dev_mode mode, struct npu_dev **out, struct ert_err *err);
void npu_dev_close(struct npu_dev *dev);
/* Valid as long as @dev. */
const struct npu_dev_info *npu_dev_info(const struct npu_dev *dev);

/*
 * What the simulator has executed since @dev was opened: jobs, and the work
 * its validator counted for them (enpu_cs_validate(), ENPU_CS_MAX_WORK
 * units). The executor's loops are bounded by the same shapes, never by the
 * bytes in the buffers, so a model's work per run does not depend on its
 * weights. Zeros for a kernel device.
 */
struct npu_sim_stats {
	uint64_t jobs;
	uint64_t work;
};
void npu_dev_sim_stats(const struct npu_dev *dev, struct npu_sim_stats *out);

/* A BO of at least @size bytes (rounded up to pages), zeroed and mapped read-write. */
ert_status npu_bo_create(struct npu_dev *dev, uint64_t size, struct npu_bo *bo,
			 struct ert_err *err);
/*
 * Wrap @size bytes at @ptr (both page-aligned) as a BO: jobs read and write
 * the caller's memory in place (only read it when @read_only). The memory
 * must outlive the BO.
 */
ert_status npu_bo_userptr(struct npu_dev *dev, void *ptr, uint64_t size, bool read_only,
			  struct npu_bo *bo, struct ert_err *err);
/* Unmap and release @bo, then zero it; a zeroed @bo is a no-op. Jobs still using it keep it alive. */
void npu_bo_destroy(struct npu_dev *dev, struct npu_bo *bo);
/* A PRIME dma-buf fd of @bo (the caller closes it); ERT_STATUS_UNSUPPORTED on the simulator. */
ert_status npu_bo_export(struct npu_dev *dev, const struct npu_bo *bo, int *fd,
			 struct ert_err *err);

/*
 * Queue @n jobs in order, all or nothing (one SUBMIT: on failure nothing
 * runs). *seqno is the submission's number, complete when its last job is.
 */
ert_status npu_submit(struct npu_dev *dev, const struct npu_job *jobs, uint32_t n,
		      uint64_t *seqno, struct ert_err *err);
/*
 * Wait up to @timeout_ns (relative; negative: forever) for submission
 * @seqno; fails if a job of a submission up to it failed (reported once, see
 * the top of this file). @seqno 0 returns at once.
 */
ert_status npu_wait(struct npu_dev *dev, uint64_t seqno, int64_t timeout_ns,
		    struct ert_err *err);

#endif
