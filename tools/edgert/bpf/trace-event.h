/* SPDX-License-Identifier: MIT */
/*
 * trace-event.h — the record that edgert trace's BPF program (trace.bpf.c)
 * puts in its ring buffer for every probe and tracepoint it sees, read by
 * tools/edgert/trace.c. Shared by the BPF side (vmlinux.h types) and
 * userspace (<linux/types.h>): fixed-size fields only.
 */
#ifndef ERT_TRACE_EVENT_H
#define ERT_TRACE_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum trace_kind {
	/* USDT probes of libedgert (libruntime/ert-probes.h): a..d = the probe's numbers */
	TK_PLAN_START = 1,  /* a = session */
	TK_PLAN_END,        /* a = session, b = status */
	TK_RUN_START,       /* a = session */
	TK_RUN_END,         /* a = session, b = status */
	TK_OP_START,        /* a = index; s1 = type, s2 = backend, s3 = node name */
	TK_OP_END,          /* a = index, b = status */
	TK_SPLIT,           /* a = index; s1 = from, s2 = to */
	TK_COPY,            /* a = step, b = bytes; s1 = from, s2 = to */
	TK_NPU_SUBMIT,      /* a = jobs, b = seqno, c = status */
	TK_NPU_WAIT_START,  /* a = seqno */
	TK_NPU_WAIT_END,    /* a = seqno, b = status */
	TK_GPU_SUBMIT,      /* a = kernels, b = copies */
	TK_GPU_WAIT_START,
	TK_GPU_WAIT_END,    /* a = status */
	/* enpu tracepoints (kmod/enpu_trace.h), for jobs this process submitted */
	TK_JOB_SUBMIT,      /* a = job id, b = commands, c = BOs; tid = submitting thread */
	TK_JOB_START,       /* a = job id, b = core, c = drm_run_job time (0: not traced) */
	TK_JOB_DONE,        /* a = job id, b = core, c = error (s32), d = duration ns */
	/* dma_fence_signaled right after enpu_job_done in the same thread */
	TK_JOB_SIGNAL,      /* a = job id, b = fence context, c = fence seqno; s1 = driver */
	TK_KIND_COUNT
};

#define TRACE_S1 32
#define TRACE_S2 16
#define TRACE_S3 64

struct ert_trace_event {
	__u64 ts;           /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 kind;         /* enum trace_kind */
	__u32 tid;          /* the thread the event fired in */
	__u64 a, b, c, d;
	char s1[TRACE_S1], s2[TRACE_S2], s3[TRACE_S3];
};

#endif /* ERT_TRACE_EVENT_H */
