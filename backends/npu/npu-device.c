/* SPDX-License-Identifier: MIT */
/*
 * The NPU device layer (see npu-device.h): the enpu uAPI through libdrm, and
 * the simulator that runs the driver's command stream code in userspace.
 * The two sit behind one ops table; argument checks, error messages and the
 * per-job error queue that npu_wait() drains are shared.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/sync_file.h>
#include <xf86drm.h>

#include "npu/npu-device.h"
#include "kmod/enpu_cs.h"

/*
 * The driver's limits (kmod/enpu_drv.h), which the simulator reports and
 * enforces so that what it accepts a kernel device accepts too.
 */
#define NPU_SIM_MAX_JOBS_PER_SUBMIT	64
#define NPU_SIM_MAX_BOS_PER_JOB		64
#define NPU_SIM_MAX_CS_SIZE		(256u * 1024)
#define NPU_SIM_MAX_BO_SIZE		(1ull << 30)

#define NPU_ACCEL_DIR	"/dev/accel"

/*
 * One job whose error npu_wait() has not read yet. Kernel device: every job,
 * its fence held by @syncobj. Simulator: only the jobs that failed.
 */
struct npu_job_rec {
	uint64_t seqno;		/* its submission */
	uint32_t index, count;	/* job @index of the submission's @count */
	uint32_t syncobj;	/* binary syncobj holding the job's fence; 0: none */
	int error;		/* simulator: the job's -errno */
};

struct npu_sim_bo {
	uint32_t handle;
	void *map;
	uint64_t size;
	bool userptr, read_only;
};

/* What a job's region sees of a BO: the simulator's record, or the kernel's BO_INFO. */
struct npu_bo_view {
	void *map;
	uint64_t size;
	bool read_only;
};

struct npu_dev_ops {
	/* what a job's region sees of @bo; false: unknown (ENOENT) */
	bool (*lookup)(struct npu_dev *dev, const struct npu_bo *bo, struct npu_bo_view *view);
	ert_status (*bo_create)(struct npu_dev *dev, uint64_t size, struct npu_bo *bo,
				struct ert_err *err);
	ert_status (*bo_userptr)(struct npu_dev *dev, void *ptr, uint64_t size, bool read_only,
				 struct npu_bo *bo, struct ert_err *err);
	void (*bo_destroy)(struct npu_dev *dev, struct npu_bo *bo);
	ert_status (*bo_export)(struct npu_dev *dev, const struct npu_bo *bo, int *fd,
				struct ert_err *err);
	/*
	 * Queue the jobs as submission dev->seqno + 1, or return the -errno the
	 * device refuses them with (and the job, when known).
	 */
	int (*submit)(struct npu_dev *dev, const struct npu_job *jobs, uint32_t n,
		      uint32_t *failed_job);
	/* wait until submission @seqno is done (absolute CLOCK_MONOTONIC @deadline) */
	ert_status (*wait)(struct npu_dev *dev, uint64_t seqno, int64_t deadline,
			   struct ert_err *err);
	/* *job_error = 0 or the -errno a finished job failed with */
	ert_status (*job_error)(struct npu_dev *dev, const struct npu_job_rec *rec,
				int64_t deadline, int *job_error, struct ert_err *err);
	void (*close)(struct npu_dev *dev);
};

struct npu_dev {
	const struct npu_dev_ops *ops;
	struct npu_dev_info info;
	uint64_t seqno;			/* last submission */

	/* jobs whose errors are unread, oldest first: a ring */
	struct npu_job_rec *recs;
	uint32_t rec_head, rec_len, rec_cap;

	/* kernel device */
	int fd;
	uint32_t timeline;		/* point n: submission n is done */
	uint32_t *free_syncobjs;	/* binary syncobjs with no unread job */
	uint32_t n_free, cap_free, n_syncobjs;
	struct drm_enpu_job *kjobs;	/* SUBMIT arguments, kept to allocate once */
	struct drm_enpu_job_bo *kbos;
	uint32_t cap_kjobs, cap_kbos;

	/* simulator */
	struct npu_sim_bo *sim_bos;
	uint32_t n_sim_bos, cap_sim_bos, next_handle;
	uint8_t *sim_cs;		/* copies of a submission's streams */
	size_t cap_sim_cs;
	struct npu_sim_stats sim_stats;	/* what it has executed */
};

/* ---- errors -------------------------------------------------------------- */

static const struct {
	int e;
	const char *name, *meaning;
} npu_errnos[] = {
	{ EPERM, "EPERM", "operation not permitted" },
	{ ENOENT, "ENOENT", "no such file, buffer object or syncobj" },
	{ EINTR, "EINTR", "interrupted" },
	{ EIO, "EIO", "input/output error" },
	{ ENXIO, "ENXIO", "no such device or address" },
	{ E2BIG, "E2BIG", "above a device limit" },
	{ EBADF, "EBADF", "bad file descriptor" },
	{ EAGAIN, "EAGAIN", "try again" },
	{ ENOMEM, "ENOMEM", "out of memory" },
	{ EACCES, "EACCES", "permission denied" },
	{ EFAULT, "EFAULT", "bad address" },
	{ EBUSY, "EBUSY", "device or resource busy" },
	{ ENODEV, "ENODEV", "no such device" },
	{ EINVAL, "EINVAL", "invalid argument" },
	{ ENFILE, "ENFILE", "too many open files in the system" },
	{ EMFILE, "EMFILE", "too many open files" },
	{ ENOTTY, "ENOTTY", "inappropriate ioctl for the device" },
	{ ENOSPC, "ENOSPC", "no space left on device" },
	{ ERANGE, "ERANGE", "out of range" },
	{ ENOSYS, "ENOSYS", "function not implemented" },
	{ ETIME, "ETIME", "timer expired" },
	{ EOVERFLOW, "EOVERFLOW", "value too large" },
	{ EOPNOTSUPP, "EOPNOTSUPP", "operation not supported" },
	{ ETIMEDOUT, "ETIMEDOUT", "timed out" },
	{ ECANCELED, "ECANCELED", "cancelled" },
};

static const char *npu_errno_name(int e, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(npu_errnos) / sizeof(npu_errnos[0]); i++)
		if (npu_errnos[i].e == e)
			return npu_errnos[i].name;
	snprintf(buf, len, "errno %d", e);
	return buf;
}

static const char *npu_errno_meaning(int e)
{
	for (size_t i = 0; i < sizeof(npu_errnos) / sizeof(npu_errnos[0]); i++)
		if (npu_errnos[i].e == e)
			return npu_errnos[i].meaning;
	return "unknown error";
}

/* The errno of a failed libdrm call: some return -1, some -errno, some errno. */
static int npu_drm_errno(void)
{
	return errno ? errno : EIO;
}

/*
 * "NPU <call>: <ENAME>: <why>", @why defaulting to the errno's meaning.
 * ENOMEM is OUT_OF_MEMORY, everything else BACKEND.
 */
static ert_status npu_fail(struct ert_err *err, const char *call, int e, const char *why)
{
	char num[24];

	if (e == ENODEV)
		ert_err_set(err, "NPU device went away (ENODEV): was the enpu module unloaded? (%s)",
			    call);
	else
		ert_err_set(err, "NPU %s: %s: %s", call, npu_errno_name(e, num, sizeof(num)),
			    why ? why : npu_errno_meaning(e));
	return e == ENOMEM ? ERT_STATUS_OUT_OF_MEMORY : ERT_STATUS_BACKEND;
}

static ert_status npu_fail_bo(struct npu_dev *dev, struct ert_err *err, const char *call, int e)
{
	char why[160];

	switch (e) {
	case EINVAL:
		return npu_fail(err, call, e, strcmp(call, "BO_USERPTR") ?
				"the size must not be zero" :
				"the pointer and size must be page-aligned and the size non-zero");
	case E2BIG:
		snprintf(why, sizeof(why), "larger than the device's largest buffer object (%llu bytes)",
			 (unsigned long long)dev->info.max_bo_size);
		return npu_fail(err, call, e, why);
	case ENOMEM:
		return npu_fail(err, call, e, strcmp(call, "BO_USERPTR") ? "out of memory" :
				"out of memory, or pinning it would pass RLIMIT_MEMLOCK (ulimit -l)");
	case EFAULT:
		return npu_fail(err, call, e, "the memory is not mapped (or not writable)");
	case EBUSY:
		return npu_fail(err, call, e, "the memory cannot be pinned long-term");
	default:
		return npu_fail(err, call, e, NULL);
	}
}

static const char *npu_job_error_meaning(int e)
{
	switch (e) {
	case ETIMEDOUT:
		return "the job hung and the device was reset";
	case ECANCELED:
		return "the job was cancelled: a job it depended on failed, or its queue was torn down";
	default:
		return npu_errno_meaning(e);
	}
}

/* ---- job checks shared by the simulator and error messages -------------- */

/*
 * The checks SUBMIT makes of one job, in the driver's order
 * (enpu_job_create(), enpu_job_lookup_bos()): 0 or the -errno it gives,
 * with the reason in @why (NULL, 0: not wanted). @cs is the stream to
 * validate (the simulator's private copy); NULL stops before the BOs, as
 * the driver's copy would fail.
 */
static int npu_job_check(struct npu_dev *dev, const struct npu_job *job, const void *cs,
			 struct npu_bo_view *views, char *why, size_t len, uint64_t *work)
{
	u64 sizes[ENPU_CS_MAX_REGIONS];
	uint64_t writes = 0;
	struct enpu_cs_info info;
	int ret;

	if (job->flags & ~ENPU_JOB_FLAGS) {
		snprintf(why, len, "unknown job flags 0x%x", job->flags & ~ENPU_JOB_FLAGS);
		return -EINVAL;
	}
	if (job->cs_size < sizeof(struct enpu_cs_header)) {
		snprintf(why, len, "a command stream of %u bytes is shorter than its header",
			 job->cs_size);
		return -EINVAL;
	}
	if (job->cs_size > dev->info.max_cs_size) {
		snprintf(why, len, "a command stream of %u bytes, the device takes %u", job->cs_size,
			 dev->info.max_cs_size);
		return -E2BIG;
	}
	if (job->n_bos > dev->info.max_bos_per_job || job->n_bos > ENPU_CS_MAX_REGIONS) {
		snprintf(why, len, "%u buffer objects in a job, the device takes %u", job->n_bos,
			 dev->info.max_bos_per_job);
		return -E2BIG;
	}
	if (!cs) {
		snprintf(why, len, "the command stream could not be read");
		return -EFAULT;
	}
	for (uint32_t i = 0; i < job->n_bos; i++) {
		uint32_t flags = job->bo_flags ? job->bo_flags[i] :
			ENPU_JOB_BO_READ | ENPU_JOB_BO_WRITE;

		if (!flags || (flags & ~ENPU_JOB_BO_FLAGS)) {
			snprintf(why, len, "BO %u: flags 0x%x are not ENPU_JOB_BO_READ and/or ENPU_JOB_BO_WRITE",
				 i, flags);
			return -EINVAL;
		}
		if (!dev->ops->lookup(dev, job->bos[i], &views[i])) {
			snprintf(why, len, "BO %u (handle %u) is unknown: destroyed?", i,
				 job->bos[i]->handle);
			return -ENOENT;
		}
		for (uint32_t j = 0; j < i; j++) {
			if (job->bos[j]->handle == job->bos[i]->handle) {
				snprintf(why, len, "BOs %u and %u are the same buffer object", j, i);
				return -EINVAL;
			}
		}
		sizes[i] = views[i].size;
		if (flags & ENPU_JOB_BO_WRITE) {
			if (views[i].read_only) {
				snprintf(why, len, "BO %u is a read-only userptr but the job may write it",
					 i);
				return -EACCES;
			}
			writes |= 1ull << i;
		}
	}
	ret = enpu_cs_validate(cs, job->cs_size, sizes, job->n_bos, &info);
	if (ret == -EINVAL)
		snprintf(why, len, "malformed command stream (bad header or version, unknown opcode, or a command size or parameter out of range)");
	else if (ret == -ERANGE)
		snprintf(why, len, "a command stream region reaches past the end of its buffer object");
	else if (ret == -E2BIG)
		snprintf(why, len, "job exceeds the device's work limit (%llu units; split the work over several jobs)",
			 (unsigned long long)dev->info.max_job_work);
	if (ret)
		return ret;
	if (info.write_mask & ~writes) {
		snprintf(why, len, "a command writes a BO the job only reads (ENPU_JOB_BO_READ)");
		return -EACCES;
	}
	if (work)
		*work = info.work;
	return 0;
}

/*
 * "NPU SUBMIT: <ENAME>: <why> (job j)". The driver does not say which job
 * it refused, nor why: the same checks on the caller's jobs find the first
 * one that gives @e (@job when the simulator knows it already).
 */
static ert_status npu_fail_submit(struct npu_dev *dev, struct ert_err *err,
				  const struct npu_job *jobs, uint32_t n, int e, uint32_t job)
{
	struct npu_bo_view views[ENPU_CS_MAX_REGIONS];
	char why[224], msg[256];

	why[0] = '\0';
	if (!n) {
		snprintf(why, sizeof(why), "no jobs");
		job = UINT32_MAX;
	} else if (n > dev->info.max_jobs_per_submit) {
		snprintf(why, sizeof(why), "%u jobs in one submission, the device takes %u", n,
			 dev->info.max_jobs_per_submit);
		job = UINT32_MAX;
	} else if (e == EPERM) {
		for (job = 0; job < n && !(jobs[job].flags & ENPU_JOB_TEST_HANG); job++)
			;
		snprintf(why, sizeof(why), "ENPU_JOB_TEST_HANG needs the enpu module parameter test_hooks=1");
	} else if (e == EFAULT) {
		/* never read a stream the driver could not read */
		for (job = 0; job < n && jobs[job].cs; job++)
			;
		snprintf(why, sizeof(why), "the command stream could not be read");
	} else if (e == EINVAL || e == E2BIG || e == ERANGE || e == EACCES || e == ENOENT) {
		uint32_t j = job < n ? job : 0, end = job < n ? job + 1 : n;

		for (job = UINT32_MAX; j < end && job == UINT32_MAX; j++)
			if (npu_job_check(dev, &jobs[j], jobs[j].cs, views, why, sizeof(why), NULL) ==
			    -e)
				job = j;
		if (job == UINT32_MAX)
			why[0] = '\0';
	}
	if (!why[0])
		snprintf(why, sizeof(why), "%s", npu_errno_meaning(e));
	if (job < n)
		snprintf(msg, sizeof(msg), "%s (job %u)", why, job);
	else
		snprintf(msg, sizeof(msg), "%s", why);
	return npu_fail(err, "SUBMIT", e, msg);
}

/* ---- the queue of jobs whose errors are unread --------------------------- */

static bool npu_recs_reserve(struct npu_dev *dev, uint32_t n)
{
	struct npu_job_rec *r;
	uint32_t cap;

	if (dev->rec_len + (uint64_t)n <= dev->rec_cap)
		return true;
	if (dev->rec_len + (uint64_t)n > UINT32_MAX / 2)
		return false;
	cap = dev->rec_cap ? dev->rec_cap : 16;
	while (cap < dev->rec_len + n)
		cap *= 2;
	r = malloc(sizeof(*r) * cap);
	if (!r)
		return false;
	for (uint32_t i = 0; i < dev->rec_len; i++)
		r[i] = dev->recs[(dev->rec_head + i) % dev->rec_cap];
	free(dev->recs);
	dev->recs = r;
	dev->rec_cap = cap;
	dev->rec_head = 0;
	return true;
}

/* Only after npu_recs_reserve(). */
static void npu_recs_push(struct npu_dev *dev, const struct npu_job_rec *rec)
{
	dev->recs[(dev->rec_head + dev->rec_len) % dev->rec_cap] = *rec;
	dev->rec_len++;
}

/* ---- simulator ----------------------------------------------------------- */

static struct npu_sim_bo *npu_sim_find(struct npu_dev *dev, uint32_t handle)
{
	for (uint32_t i = 0; i < dev->n_sim_bos; i++)
		if (dev->sim_bos[i].handle == handle)
			return &dev->sim_bos[i];
	return NULL;
}

static bool npu_sim_lookup(struct npu_dev *dev, const struct npu_bo *bo, struct npu_bo_view *view)
{
	const struct npu_sim_bo *s = bo->handle ? npu_sim_find(dev, bo->handle) : NULL;

	if (!s)
		return false;
	view->map = s->map;
	view->size = s->size;
	view->read_only = s->read_only;
	return true;
}

static int npu_sim_add(struct npu_dev *dev, void *map, uint64_t size, bool userptr,
		       bool read_only, struct npu_bo *bo)
{
	struct npu_sim_bo *s;

	if (dev->n_sim_bos == dev->cap_sim_bos) {
		uint32_t cap = dev->cap_sim_bos ? dev->cap_sim_bos * 2 : 16;

		s = realloc(dev->sim_bos, sizeof(*s) * cap);
		if (!s)
			return -ENOMEM;
		dev->sim_bos = s;
		dev->cap_sim_bos = cap;
	}
	/* handles are never reused, so a destroyed BO stays unknown (ENOENT) */
	if (dev->next_handle == UINT32_MAX)
		return -ENOSPC;
	s = &dev->sim_bos[dev->n_sim_bos++];
	*s = (struct npu_sim_bo){ .handle = dev->next_handle++, .map = map, .size = size,
				  .userptr = userptr, .read_only = read_only };
	*bo = (struct npu_bo){ .handle = s->handle, .size = size, .map = map,
			       .userptr = userptr, .read_only = read_only };
	return 0;
}

static uint64_t npu_page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (uint64_t)p : 4096;
}

static ert_status npu_sim_bo_create(struct npu_dev *dev, uint64_t size, struct npu_bo *bo,
				    struct ert_err *err)
{
	uint64_t page = npu_page_size();
	void *map;
	int ret;

	if (!size)
		return npu_fail_bo(dev, err, "BO_CREATE", EINVAL);
	if (size > dev->info.max_bo_size)
		return npu_fail_bo(dev, err, "BO_CREATE", E2BIG);
	size = (size + page - 1) & ~(page - 1);
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return npu_fail_bo(dev, err, "BO_CREATE", errno);
	ret = npu_sim_add(dev, map, size, false, false, bo);
	if (ret) {
		munmap(map, size);
		return npu_fail_bo(dev, err, "BO_CREATE", -ret);
	}
	return ERT_OK;
}

static ert_status npu_sim_bo_userptr(struct npu_dev *dev, void *ptr, uint64_t size,
				     bool read_only, struct npu_bo *bo, struct ert_err *err)
{
	uint64_t page = npu_page_size(), addr = (uintptr_t)ptr;
	int ret;

	if (!size || (addr & (page - 1)) || (size & (page - 1)) || addr + size < addr)
		return npu_fail_bo(dev, err, "BO_USERPTR", EINVAL);
	if (size > dev->info.max_bo_size)
		return npu_fail_bo(dev, err, "BO_USERPTR", E2BIG);
	ret = npu_sim_add(dev, ptr, size, true, read_only, bo);
	return ret ? npu_fail_bo(dev, err, "BO_USERPTR", -ret) : ERT_OK;
}

static void npu_sim_bo_destroy(struct npu_dev *dev, struct npu_bo *bo)
{
	struct npu_sim_bo *s = npu_sim_find(dev, bo->handle);

	if (!s)
		return;
	if (!s->userptr)
		munmap(s->map, s->size);
	*s = dev->sim_bos[--dev->n_sim_bos];
}

static ert_status npu_sim_bo_export(struct npu_dev *dev, const struct npu_bo *bo, int *fd,
				    struct ert_err *err)
{
	ert_err_set(err, "NPU PRIME export: the simulator has no dma-buf to export (it needs an enpu kernel device)");
	return ERT_STATUS_UNSUPPORTED;
}

/*
 * Validate every job against private copies of their streams (a job may
 * write the memory a later job's stream lies in), then run them in order.
 * A job with ENPU_JOB_TEST_HANG runs, then fails as the driver's reset does.
 */
static int npu_sim_submit(struct npu_dev *dev, const struct npu_job *jobs, uint32_t n,
			  uint32_t *failed_job)
{
	struct npu_bo_view views[ENPU_CS_MAX_REGIONS];
	size_t off[NPU_SIM_MAX_JOBS_PER_SUBMIT], total = 0;
	uint64_t work[NPU_SIM_MAX_JOBS_PER_SUBMIT];
	uint32_t hangs = 0;
	int ret;

	for (uint32_t j = 0; j < n; j++) {
		const struct npu_job *job = &jobs[j];
		size_t need;

		off[j] = total;
		/* the checks before the stream is read, so a huge cs_size is E2BIG, not ENOMEM */
		ret = npu_job_check(dev, job, NULL, views, NULL, 0, NULL);
		if (ret != -EFAULT) {
			*failed_job = j;
			return ret;
		}
		if (!job->cs) {
			*failed_job = j;
			return -EFAULT;
		}
		need = total + ((job->cs_size + 7u) & ~7u);
		if (need > dev->cap_sim_cs) {
			uint8_t *p = realloc(dev->sim_cs, need);

			if (!p)
				return -ENOMEM;
			dev->sim_cs = p;
			dev->cap_sim_cs = need;
		}
		memcpy(dev->sim_cs + off[j], job->cs, job->cs_size);
		ret = npu_job_check(dev, job, dev->sim_cs + off[j], views, NULL, 0, &work[j]);
		if (ret) {
			*failed_job = j;
			return ret;
		}
		total = need;
		hangs += !!(job->flags & ENPU_JOB_TEST_HANG);
	}
	if (!npu_recs_reserve(dev, hangs))
		return -ENOMEM;

	dev->seqno++;
	for (uint32_t j = 0; j < n; j++) {
		const struct npu_job *job = &jobs[j];
		void *region[ENPU_CS_MAX_REGIONS];

		for (uint32_t i = 0; i < job->n_bos; i++) {
			npu_sim_lookup(dev, job->bos[i], &views[i]);
			region[i] = views[i].map;
		}
		/* no yield hook: it cannot be stopped, and its work is bounded by max_job_work */
		enpu_cs_execute(dev->sim_cs + off[j], region, job->n_bos, NULL, NULL);
		dev->sim_stats.jobs++;
		dev->sim_stats.work += work[j];
		if (job->flags & ENPU_JOB_TEST_HANG) {
			struct npu_job_rec rec = { .seqno = dev->seqno, .index = j, .count = n,
						   .error = -ETIMEDOUT };

			npu_recs_push(dev, &rec);
		}
	}
	return 0;
}

static ert_status npu_sim_wait(struct npu_dev *dev, uint64_t seqno, int64_t deadline,
			       struct ert_err *err)
{
	return ERT_OK;	/* jobs ran inside npu_submit() */
}

static ert_status npu_sim_job_error(struct npu_dev *dev, const struct npu_job_rec *rec,
				    int64_t deadline, int *job_error, struct ert_err *err)
{
	*job_error = rec->error;
	return ERT_OK;
}

static void npu_sim_close(struct npu_dev *dev)
{
	for (uint32_t i = 0; i < dev->n_sim_bos; i++)
		if (!dev->sim_bos[i].userptr)
			munmap(dev->sim_bos[i].map, dev->sim_bos[i].size);
	free(dev->sim_bos);
	free(dev->sim_cs);
}

static const struct npu_dev_ops npu_sim_ops = {
	.lookup = npu_sim_lookup,
	.bo_create = npu_sim_bo_create,
	.bo_userptr = npu_sim_bo_userptr,
	.bo_destroy = npu_sim_bo_destroy,
	.bo_export = npu_sim_bo_export,
	.submit = npu_sim_submit,
	.wait = npu_sim_wait,
	.job_error = npu_sim_job_error,
	.close = npu_sim_close,
};

static void npu_sim_init(struct npu_dev *dev)
{
	dev->ops = &npu_sim_ops;
	dev->next_handle = 1;
	dev->info = (struct npu_dev_info){
		.simulated = true,
		.node = "simulator",
		.uapi_major = ENPU_UAPI_VERSION_MAJOR,
		.uapi_minor = ENPU_UAPI_VERSION_MINOR,
		.max_job_work = ENPU_CS_MAX_WORK,
		.cs_version = ENPU_CS_VERSION,
		.num_cores = 1,
		.max_jobs_per_submit = NPU_SIM_MAX_JOBS_PER_SUBMIT,
		.max_cs_size = NPU_SIM_MAX_CS_SIZE,
		.max_bos_per_job = NPU_SIM_MAX_BOS_PER_JOB,
		.job_timeout_ms = 0,
		.max_bo_size = NPU_SIM_MAX_BO_SIZE,
		.opcode_mask = (1ull << ENPU_OP_COUNT) - 1,
	};
}

/* ---- kernel device ------------------------------------------------------- */

static int64_t npu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static ert_status npu_hw_bo_create(struct npu_dev *dev, uint64_t size, struct npu_bo *bo,
				   struct ert_err *err)
{
	struct drm_enpu_bo_create c = { .size = size };
	struct drm_enpu_bo_mmap_offset m = { 0 };
	ert_status st;
	void *map;

	if (drmIoctl(dev->fd, DRM_IOCTL_ENPU_BO_CREATE, &c))
		return npu_fail_bo(dev, err, "BO_CREATE", npu_drm_errno());
	m.handle = c.handle;
	if (drmIoctl(dev->fd, DRM_IOCTL_ENPU_BO_MMAP_OFFSET, &m)) {
		st = npu_fail(err, "BO_MMAP_OFFSET", npu_drm_errno(), NULL);
		goto err_close;
	}
	map = mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd, m.offset);
	if (map == MAP_FAILED) {
		st = npu_fail(err, "BO mmap", errno, NULL);
		goto err_close;
	}
	*bo = (struct npu_bo){ .handle = c.handle, .size = c.size, .map = map };
	return ERT_OK;

err_close:
	drmCloseBufferHandle(dev->fd, c.handle);
	return st;
}

static ert_status npu_hw_bo_userptr(struct npu_dev *dev, void *ptr, uint64_t size,
				    bool read_only, struct npu_bo *bo, struct ert_err *err)
{
	struct drm_enpu_bo_userptr u = {
		.user_ptr = (uintptr_t)ptr,
		.size = size,
		.flags = read_only ? ENPU_USERPTR_READONLY : 0,
	};

	if (drmIoctl(dev->fd, DRM_IOCTL_ENPU_BO_USERPTR, &u))
		return npu_fail_bo(dev, err, "BO_USERPTR", npu_drm_errno());
	*bo = (struct npu_bo){ .handle = u.handle, .size = size, .map = ptr, .userptr = true,
			       .read_only = read_only };
	return ERT_OK;
}

/* What the kernel knows of @bo (BO_INFO), for error messages only. */
static bool npu_hw_lookup(struct npu_dev *dev, const struct npu_bo *bo, struct npu_bo_view *view)
{
	struct drm_enpu_bo_info i = { .handle = bo->handle };

	if (!bo->handle || drmIoctl(dev->fd, DRM_IOCTL_ENPU_BO_INFO, &i))
		return false;
	view->map = bo->map;
	view->size = i.size;
	view->read_only = i.bo_flags & ENPU_BO_READONLY;
	return true;
}

static void npu_hw_bo_destroy(struct npu_dev *dev, struct npu_bo *bo)
{
	if (bo->map && !bo->userptr)
		munmap(bo->map, bo->size);
	/* a job still using it holds its own reference */
	if (bo->handle)
		drmCloseBufferHandle(dev->fd, bo->handle);
}

static ert_status npu_hw_bo_export(struct npu_dev *dev, const struct npu_bo *bo, int *fd,
				   struct ert_err *err)
{
	int prime_fd = -1;

	if (drmPrimeHandleToFD(dev->fd, bo->handle, DRM_CLOEXEC | DRM_RDWR, &prime_fd))
		return npu_fail(err, "PRIME export", npu_drm_errno(), NULL);
	*fd = prime_fd;
	return ERT_OK;
}

/*
 * Binary syncobjs for @n more jobs' fences: created on demand, reused once
 * npu_wait() has read their job. The free list has room for every one.
 */
static int npu_hw_reserve_syncobjs(struct npu_dev *dev, uint32_t n)
{
	if (dev->n_free >= n)
		return 0;
	if (dev->n_syncobjs + (uint64_t)(n - dev->n_free) > dev->cap_free) {
		uint32_t cap = dev->n_syncobjs + (n - dev->n_free);
		uint32_t *p = realloc(dev->free_syncobjs, sizeof(*p) * cap);

		if (!p)
			return -ENOMEM;
		dev->free_syncobjs = p;
		dev->cap_free = cap;
	}
	while (dev->n_free < n) {
		uint32_t h;

		if (drmSyncobjCreate(dev->fd, 0, &h))
			return -npu_drm_errno();
		dev->free_syncobjs[dev->n_free++] = h;
		dev->n_syncobjs++;
	}
	return 0;
}

static int npu_hw_reserve_args(struct npu_dev *dev, uint32_t n, uint32_t n_bos)
{
	if (n > dev->cap_kjobs) {
		struct drm_enpu_job *p = realloc(dev->kjobs, sizeof(*p) * n);

		if (!p)
			return -ENOMEM;
		dev->kjobs = p;
		dev->cap_kjobs = n;
	}
	if (n_bos > dev->cap_kbos) {
		struct drm_enpu_job_bo *p = realloc(dev->kbos, sizeof(*p) * n_bos);

		if (!p)
			return -ENOMEM;
		dev->kbos = p;
		dev->cap_kbos = n_bos;
	}
	return 0;
}

/*
 * One SUBMIT. The last job signals point seqno + 1 of the timeline. Each
 * job's fence also goes to a binary syncobj of its own, read by npu_wait():
 * a timeline point's fence cannot be looked up once later points signalled
 * (the kernel drops signalled links of the chain), and only the last job
 * has a point. So the jobs before it get a binary out-syncobj, and the
 * last job's point is copied into one right after SUBMIT, while it is still
 * the newest.
 */
static int npu_hw_submit(struct npu_dev *dev, const struct npu_job *jobs, uint32_t n,
			 uint32_t *failed_job)
{
	uint64_t point = dev->seqno + 1;
	struct drm_enpu_submit s = { 0 };
	uint32_t n_bos = 0, k = 0, last;
	int ret;

	for (uint32_t j = 0; j < n; j++)
		n_bos += jobs[j].n_bos;
	ret = npu_hw_reserve_args(dev, n, n_bos);
	if (!ret)
		ret = npu_hw_reserve_syncobjs(dev, n);
	if (ret)
		return ret;
	if (!npu_recs_reserve(dev, n))
		return -ENOMEM;

	for (uint32_t j = 0; j < n; j++) {
		const struct npu_job *job = &jobs[j];
		struct drm_enpu_job *kj = &dev->kjobs[j];

		*kj = (struct drm_enpu_job){
			.cs_ptr = (uintptr_t)job->cs,
			.cs_size = job->cs_size,
			.flags = job->flags,
			.bos_ptr = job->n_bos ? (uintptr_t)&dev->kbos[k] : 0,
			.bo_count = job->n_bos,
			.bo_stride = sizeof(struct drm_enpu_job_bo),
		};
		if (j + 1 < n) {
			kj->out_syncobj = dev->free_syncobjs[dev->n_free - 1 - j];
		} else {
			kj->out_syncobj = dev->timeline;
			kj->out_syncobj_point = point;
		}
		for (uint32_t i = 0; i < job->n_bos; i++, k++) {
			dev->kbos[k].handle = job->bos[i]->handle;
			dev->kbos[k].flags = job->bo_flags ? job->bo_flags[i] :
				ENPU_JOB_BO_READ | ENPU_JOB_BO_WRITE;
		}
	}
	s.jobs_ptr = (uintptr_t)dev->kjobs;
	s.job_count = n;
	s.job_stride = sizeof(struct drm_enpu_job);
	if (drmIoctl(dev->fd, DRM_IOCTL_ENPU_SUBMIT, &s))
		return -npu_drm_errno();

	/* queued: from here on nothing may fail */
	dev->seqno = point;
	last = dev->free_syncobjs[dev->n_free - n];
	if (drmSyncobjTransfer(dev->fd, last, 0, dev->timeline, point, 0)) {
		/* cannot happen short of ENOMEM: the job runs, its error goes unread */
		last = 0;
	}
	for (uint32_t j = 0; j < n; j++) {
		struct npu_job_rec rec = {
			.seqno = point, .index = j, .count = n,
			.syncobj = j + 1 < n ? dev->free_syncobjs[dev->n_free - 1 - j] : last,
		};

		npu_recs_push(dev, &rec);
	}
	if (!last) {
		drmSyncobjDestroy(dev->fd, dev->free_syncobjs[dev->n_free - n]);
		dev->n_syncobjs--;
	}
	dev->n_free -= n;
	return 0;
}

static ert_status npu_hw_wait(struct npu_dev *dev, uint64_t seqno, int64_t deadline,
			      struct ert_err *err)
{
	char why[128];
	int ret;

	ret = drmSyncobjTimelineWait(dev->fd, &dev->timeline, &seqno, 1, deadline,
				     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL);
	if (!ret)
		return ERT_OK;
	ret = npu_drm_errno();
	if (ret == ETIME || ret == ETIMEDOUT) {
		snprintf(why, sizeof(why), "submission %llu did not complete in time",
			 (unsigned long long)seqno);
		return npu_fail(err, "wait", ret, why);
	}
	return npu_fail(err, "SYNCOBJ_TIMELINE_WAIT", ret, NULL);
}

/*
 * A fence's status through a sync_file, as the selftests read it: with the
 * fence list asked for, so that a timeline point (a chain link) reports the
 * job fence it wraps rather than its own, error-free status.
 */
static int npu_hw_sync_file_status(int sync_fd, int *status)
{
	struct sync_fence_info small[4], *fi = small;
	struct sync_file_info info;
	int ret = 0;

	for (int tries = 0; tries < 4; tries++) {
		memset(&info, 0, sizeof(info));
		if (ioctl(sync_fd, SYNC_IOC_FILE_INFO, &info))
			return -errno;
		if (!info.num_fences) {
			*status = info.status;
			return 0;
		}
		if (info.num_fences > sizeof(small) / sizeof(small[0])) {
			fi = calloc(info.num_fences, sizeof(*fi));
			if (!fi)
				return -ENOMEM;
		}
		info.sync_fence_info = (uintptr_t)fi;
		ret = ioctl(sync_fd, SYNC_IOC_FILE_INFO, &info) ? -errno : 0;
		if (fi != small)
			free(fi);
		fi = small;
		if (!ret) {
			*status = info.status;
			return 0;
		}
		if (ret != -EINVAL)	/* EINVAL: more fences appeared; ask again */
			return ret;
	}
	return ret;
}

static ert_status npu_hw_job_error(struct npu_dev *dev, const struct npu_job_rec *rec,
				   int64_t deadline, int *job_error, struct ert_err *err)
{
	uint32_t handle = rec->syncobj;
	int status = 1, sync_fd, ret;

	if (!handle) {
		*job_error = 0;
		return ERT_OK;
	}
	for (;;) {
		if (drmSyncobjExportSyncFile(dev->fd, handle, &sync_fd))
			return npu_fail(err, "SYNCOBJ_HANDLE_TO_FD", npu_drm_errno(), NULL);
		ret = npu_hw_sync_file_status(sync_fd, &status);
		close(sync_fd);
		if (ret)
			return npu_fail(err, "sync_file info", -ret, NULL);
		if (status)
			break;
		/* jobs of one file finish in order, so this is only a safety net */
		if (drmSyncobjWait(dev->fd, &handle, 1, deadline, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
				   NULL))
			return npu_fail(err, "SYNCOBJ_WAIT", npu_drm_errno(), NULL);
	}
	*job_error = status < 0 ? status : 0;
	return ERT_OK;
}

static void npu_hw_close(struct npu_dev *dev)
{
	for (uint32_t i = 0; i < dev->rec_len; i++) {
		uint32_t h = dev->recs[(dev->rec_head + i) % dev->rec_cap].syncobj;

		if (h)
			drmSyncobjDestroy(dev->fd, h);
	}
	for (uint32_t i = 0; i < dev->n_free; i++)
		drmSyncobjDestroy(dev->fd, dev->free_syncobjs[i]);
	if (dev->timeline)
		drmSyncobjDestroy(dev->fd, dev->timeline);
	free(dev->free_syncobjs);
	free(dev->kjobs);
	free(dev->kbos);
	/* closing the file waits for its queued jobs */
	close(dev->fd);
}

static const struct npu_dev_ops npu_hw_ops = {
	.lookup = npu_hw_lookup,
	.bo_create = npu_hw_bo_create,
	.bo_userptr = npu_hw_bo_userptr,
	.bo_destroy = npu_hw_bo_destroy,
	.bo_export = npu_hw_bo_export,
	.submit = npu_hw_submit,
	.wait = npu_hw_wait,
	.job_error = npu_hw_job_error,
	.close = npu_hw_close,
};

/* ---- opening ------------------------------------------------------------- */

/*
 * Is @fd an enpu node? 1 yes, 0 no (@why says what it is), -errno when the
 * version could not be read for another reason than not being DRM.
 */
static int npu_is_enpu(int fd, char *why, size_t len)
{
	drmVersionPtr v;
	int ret;

	errno = 0;
	v = drmGetVersion(fd);
	if (!v) {
		int e = npu_drm_errno();

		if (e != ENOTTY && e != EINVAL)
			return -e;
		snprintf(why, len, "not a DRM device (DRM_IOCTL_VERSION: %s)",
			 e == ENOTTY ? "ENOTTY" : "EINVAL");
		return 0;
	}
	ret = v->name && !strcmp(v->name, "enpu");
	if (!ret)
		snprintf(why, len, "its DRM driver is \"%s\"", v->name ? v->name : "");
	drmFreeVersion(v);
	return ret;
}

/* QUERY the device, check the versions, make the timeline. */
static ert_status npu_hw_init(struct npu_dev *dev, int fd, const char *node, struct ert_err *err)
{
	struct drm_enpu_query_device q = { 0 };
	struct drm_enpu_query a = {
		.type = DRM_ENPU_QUERY_DEVICE,
		.size = sizeof(q),
		.ptr = (uintptr_t)&q,
	};
	uint64_t cap = 0;

	dev->ops = &npu_hw_ops;
	dev->fd = fd;
	snprintf(dev->info.node, sizeof(dev->info.node), "%s", node);
	if (drmIoctl(fd, DRM_IOCTL_ENPU_QUERY, &a))
		return npu_fail(err, "QUERY", npu_drm_errno(), NULL);
	dev->info.uapi_major = q.uapi_version >> 16;
	dev->info.uapi_minor = q.uapi_version & 0xffff;
	if (a.size < sizeof(q.uapi_version) || dev->info.uapi_major != ENPU_UAPI_VERSION_MAJOR) {
		ert_err_set(err, "NPU device %s speaks enpu uAPI %u.%u, this library %u.%u: the major versions must match (update the enpu module or libedgert)",
			    node, dev->info.uapi_major, dev->info.uapi_minor,
			    ENPU_UAPI_VERSION_MAJOR, ENPU_UAPI_VERSION_MINOR);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (q.cs_version != ENPU_CS_VERSION) {
		ert_err_set(err, "NPU device %s runs command stream version %u, this library writes %u",
			    node, q.cs_version, ENPU_CS_VERSION);
		return ERT_STATUS_UNSUPPORTED;
	}
	dev->info.cs_version = q.cs_version;
	dev->info.num_cores = q.num_cores;
	dev->info.max_jobs_per_submit = q.max_jobs_per_submit;
	dev->info.max_cs_size = q.max_cs_size;
	dev->info.max_bos_per_job = q.max_bos_per_job;
	dev->info.job_timeout_ms = q.job_timeout_ms;
	dev->info.max_bo_size = q.max_bo_size;
	dev->info.opcode_mask = q.opcode_mask;
	dev->info.max_job_work = q.max_job_work;
	if (drmGetCap(fd, DRM_CAP_SYNCOBJ_TIMELINE, &cap) || !cap) {
		ert_err_set(err, "NPU device %s has no timeline syncobjs (DRM_CAP_SYNCOBJ_TIMELINE)",
			    node);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (drmSyncobjCreate(fd, 0, &dev->timeline)) {
		int e = npu_drm_errno();

		dev->timeline = 0;
		return npu_fail(err, "SYNCOBJ_CREATE", e, NULL);
	}
	return ERT_OK;
}

/* Open @node, named by ERT_NPU_DEVICE: it must be an enpu device. */
static ert_status npu_open_named(const char *node, int *fd_out, struct ert_err *err)
{
	char why[128], num[24];
	int fd, ret;

	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		ert_err_set(err, "NPU device ERT_NPU_DEVICE=%s: cannot open: %s (%s)", node,
			    npu_errno_name(e, num, sizeof(num)), strerror(e));
		return e == ENOMEM ? ERT_STATUS_OUT_OF_MEMORY : ERT_STATUS_BACKEND;
	}
	ret = npu_is_enpu(fd, why, sizeof(why));
	if (ret <= 0) {
		close(fd);
		if (ret < 0) {
			ert_err_set(err, "NPU device ERT_NPU_DEVICE=%s: DRM_IOCTL_VERSION: %s (%s)",
				    node, npu_errno_name(-ret, num, sizeof(num)), strerror(-ret));
			return ret == -ENOMEM ? ERT_STATUS_OUT_OF_MEMORY : ERT_STATUS_BACKEND;
		}
		ert_err_set(err, "NPU device ERT_NPU_DEVICE=%s is not an enpu device: %s", node, why);
		return ERT_STATUS_UNSUPPORTED;
	}
	*fd_out = fd;
	return ERT_OK;
}

static int npu_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The first /dev/accel/accelN (by N) driven by enpu: its fd and path, or -1
 * with @skipped naming the first node that could not be opened, if any.
 */
static int npu_find_enpu(char *node, size_t len, char *skipped, size_t skipped_len)
{
	uint32_t minors[256], n = 0;
	struct dirent *de;
	char why[128];
	DIR *d;
	int fd = -1;

	skipped[0] = '\0';
	d = opendir(NPU_ACCEL_DIR);
	if (!d)
		return -1;
	while ((de = readdir(d)) && n < sizeof(minors) / sizeof(minors[0])) {
		char *end;
		unsigned long m;

		if (strncmp(de->d_name, "accel", 5) || !de->d_name[5])
			continue;
		m = strtoul(de->d_name + 5, &end, 10);
		if (!*end && m <= UINT32_MAX)
			minors[n++] = (uint32_t)m;
	}
	closedir(d);
	qsort(minors, n, sizeof(minors[0]), npu_cmp_u32);
	for (uint32_t i = 0; i < n && fd < 0; i++) {
		snprintf(node, len, NPU_ACCEL_DIR "/accel%u", minors[i]);
		fd = open(node, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			if (!skipped[0])
				snprintf(skipped, skipped_len, " (%s: %s)", node, strerror(errno));
			continue;
		}
		if (npu_is_enpu(fd, why, sizeof(why)) != 1) {
			close(fd);
			fd = -1;
		}
	}
	return fd;
}

ert_status npu_dev_open(enum npu_dev_mode mode, struct npu_dev **out, struct ert_err *err)
{
	const char *env = getenv("ERT_NPU_DEVICE");
	char node[64], skipped[96];
	struct npu_dev *dev;
	ert_status st;
	int fd = -1;

	if (!out || (mode != NPU_DEV_ANY && mode != NPU_DEV_HW && mode != NPU_DEV_SIM)) {
		ert_err_set(err, "NPU open: invalid arguments");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (env && !*env)
		env = NULL;
	if (mode != NPU_DEV_SIM && env && !strcmp(env, "sim")) {
		if (mode == NPU_DEV_HW) {
			ert_err_set(err, "no enpu device: ERT_NPU_DEVICE=sim asks for the simulator, but an enpu kernel device is needed here");
			return ERT_STATUS_UNSUPPORTED;
		}
		mode = NPU_DEV_SIM;
	}
	if (mode != NPU_DEV_SIM) {
		if (env) {
			if (strlen(env) >= sizeof(node)) {
				ert_err_set(err, "NPU device ERT_NPU_DEVICE=%.64s...: path too long", env);
				return ERT_STATUS_INVALID_ARGUMENT;
			}
			st = npu_open_named(env, &fd, err);
			if (st)
				return st;
			snprintf(node, sizeof(node), "%s", env);
		} else {
			fd = npu_find_enpu(node, sizeof(node), skipped, sizeof(skipped));
			if (fd < 0 && mode == NPU_DEV_HW) {
				ert_err_set(err, "no enpu device: no /dev/accel/accel* node is driven by enpu%s",
					    skipped);
				return ERT_STATUS_UNSUPPORTED;
			}
		}
	}

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		if (fd >= 0)
			close(fd);
		ert_err_set(err, "NPU open: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	if (fd < 0) {
		npu_sim_init(dev);
	} else {
		st = npu_hw_init(dev, fd, node, err);
		if (st) {
			npu_dev_close(dev);
			return st;
		}
	}
	*out = dev;
	return ERT_OK;
}

void npu_dev_close(struct npu_dev *dev)
{
	if (!dev)
		return;
	dev->ops->close(dev);
	free(dev->recs);
	free(dev);
}

const struct npu_dev_info *npu_dev_info(const struct npu_dev *dev)
{
	return &dev->info;
}

void npu_dev_sim_stats(const struct npu_dev *dev, struct npu_sim_stats *out)
{
	*out = dev->sim_stats;
}

/* ---- buffer objects ------------------------------------------------------ */

ert_status npu_bo_create(struct npu_dev *dev, uint64_t size, struct npu_bo *bo,
			 struct ert_err *err)
{
	if (!dev || !bo) {
		ert_err_set(err, "NPU BO_CREATE: invalid arguments");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	return dev->ops->bo_create(dev, size, bo, err);
}

ert_status npu_bo_userptr(struct npu_dev *dev, void *ptr, uint64_t size, bool read_only,
			  struct npu_bo *bo, struct ert_err *err)
{
	if (!dev || !bo || !ptr) {
		ert_err_set(err, "NPU BO_USERPTR: invalid arguments");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	return dev->ops->bo_userptr(dev, ptr, size, read_only, bo, err);
}

void npu_bo_destroy(struct npu_dev *dev, struct npu_bo *bo)
{
	if (!dev || !bo || !bo->handle)
		return;
	dev->ops->bo_destroy(dev, bo);
	memset(bo, 0, sizeof(*bo));
}

ert_status npu_bo_export(struct npu_dev *dev, const struct npu_bo *bo, int *fd,
			 struct ert_err *err)
{
	if (!dev || !bo || !fd || !bo->handle) {
		ert_err_set(err, "NPU PRIME export: invalid arguments");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	return dev->ops->bo_export(dev, bo, fd, err);
}

/* ---- jobs ---------------------------------------------------------------- */

ert_status npu_submit(struct npu_dev *dev, const struct npu_job *jobs, uint32_t n,
		      uint64_t *seqno, struct ert_err *err)
{
	uint32_t failed = UINT32_MAX;
	int ret;

	if (!dev || !seqno || (n && !jobs)) {
		ert_err_set(err, "NPU SUBMIT: invalid arguments");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	/* the device's own refusals, checked here to bound what is allocated */
	if (!n)
		return npu_fail_submit(dev, err, jobs, n, EINVAL, UINT32_MAX);
	if (n > dev->info.max_jobs_per_submit)
		return npu_fail_submit(dev, err, jobs, n, E2BIG, UINT32_MAX);
	for (uint32_t j = 0; j < n; j++) {
		if (jobs[j].n_bos > dev->info.max_bos_per_job)
			return npu_fail_submit(dev, err, jobs, n, E2BIG, j);
		for (uint32_t i = 0; i < jobs[j].n_bos; i++) {
			if (!jobs[j].bos || !jobs[j].bos[i]) {
				ert_err_set(err, "NPU SUBMIT: job %u: BO %u is NULL", j, i);
				return ERT_STATUS_INVALID_ARGUMENT;
			}
		}
	}
	ret = dev->ops->submit(dev, jobs, n, &failed);
	if (ret)
		return npu_fail_submit(dev, err, jobs, n, -ret, failed);
	*seqno = dev->seqno;
	return ERT_OK;
}

ert_status npu_wait(struct npu_dev *dev, uint64_t seqno, int64_t timeout_ns,
		    struct ert_err *err)
{
	int64_t now, deadline = INT64_MAX;
	uint32_t failed = 0;
	ert_status st;
	char num[24];
	int first = 0;
	struct npu_job_rec first_rec = { 0 };

	if (!dev) {
		ert_err_set(err, "NPU wait: invalid arguments");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (seqno > dev->seqno) {
		ert_err_set(err, "NPU wait: submission %llu was never made (the last is %llu)",
			    (unsigned long long)seqno, (unsigned long long)dev->seqno);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (!seqno)
		return ERT_OK;
	if (timeout_ns >= 0) {
		now = npu_now_ns();
		deadline = timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
	}
	st = dev->ops->wait(dev, seqno, deadline, err);
	if (st)
		return st;

	/* every job up to @seqno is done: read their errors, oldest first */
	while (dev->rec_len) {
		struct npu_job_rec *rec = &dev->recs[dev->rec_head];
		int job_error;

		if (rec->seqno > seqno)
			break;
		st = dev->ops->job_error(dev, rec, deadline, &job_error, err);
		if (st)
			return st;	/* the record stays: a later wait reads it again */
		if (job_error && !failed++) {
			first = -job_error;
			first_rec = *rec;
		}
		if (rec->syncobj)	/* kernel device: the syncobj is free again */
			dev->free_syncobjs[dev->n_free++] = rec->syncobj;
		dev->rec_head = (dev->rec_head + 1) % dev->rec_cap;
		dev->rec_len--;
	}
	if (!failed)
		return ERT_OK;
	if (failed > 1)
		ert_err_set(err, "NPU job failed: %s (%s): job %u of %u in submission %llu, and %u more jobs failed",
			    npu_errno_name(first, num, sizeof(num)), npu_job_error_meaning(first),
			    first_rec.index, first_rec.count,
			    (unsigned long long)first_rec.seqno, failed - 1);
	else
		ert_err_set(err, "NPU job failed: %s (%s): job %u of %u in submission %llu",
			    npu_errno_name(first, num, sizeof(num)), npu_job_error_meaning(first),
			    first_rec.index, first_rec.count, (unsigned long long)first_rec.seqno);
	return first == ENOMEM ? ERT_STATUS_OUT_OF_MEMORY : ERT_STATUS_BACKEND;
}
