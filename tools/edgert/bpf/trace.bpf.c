// SPDX-License-Identifier: GPL-2.0-only
/*
 * edgert trace: the BPF side. USDT programs on libedgert's probes of one
 * process, and tracepoint programs on the enpu driver's job events, the
 * dma_fence signal that follows a job's completion and drm_sched's run_job,
 * all writing struct ert_trace_event records to one ring buffer.
 *
 * CO-RE: built once against a vmlinux.h from any kernel's BTF; the dma_fence
 * record and the trace event header are relocated at load. The enpu records
 * have no BTF (an out-of-tree module), so their fields are read at the
 * offsets TRACE_EVENT gives them after the common header, whose size is
 * relocated (bpf_core_type_size). GPL: the helpers used need it.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "trace-event.h"

char LICENSE[] SEC("license") = "GPL";

/* set by the loader before load: the traced process */
const volatile __u32 target_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/* jobs the traced process submitted (the engine runs them in kernel threads) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u8);
} our_jobs SEC(".maps");

/* a job just completed in this thread: the fences it signals next are its */
struct pending_signal {
	__u64 job;
	__u32 left;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct pending_signal);
} pending SEC(".maps");

/* drm_run_job's time in this thread, for the enpu_job_start that follows it */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} sched_run SEC(".maps");

/* [0]: records lost because the ring buffer was full */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

static __always_inline struct ert_trace_event *ev_new(__u32 kind)
{
	struct ert_trace_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__u32 k = 0;
		__u64 *n = bpf_map_lookup_elem(&dropped, &k);

		if (n)
			__sync_fetch_and_add(n, 1);
		return NULL;
	}
	e->ts = bpf_ktime_get_ns();
	e->kind = kind;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->a = e->b = e->c = e->d = 0;
	e->s1[0] = e->s2[0] = e->s3[0] = 0;
	return e;
}

static __always_inline int usdt_num(__u32 kind, long a, long b, long c)
{
	struct ert_trace_event *e = ev_new(kind);

	if (!e)
		return 0;
	e->a = a;
	e->b = b;
	e->c = c;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

static __always_inline int usdt_str(__u32 kind, long a, long b, const char *s1,
				    const char *s2, const char *s3)
{
	struct ert_trace_event *e = ev_new(kind);

	if (!e)
		return 0;
	e->a = a;
	e->b = b;
	if (s1)
		bpf_probe_read_user_str(e->s1, sizeof(e->s1), s1);
	if (s2)
		bpf_probe_read_user_str(e->s2, sizeof(e->s2), s2);
	if (s3)
		bpf_probe_read_user_str(e->s3, sizeof(e->s3), s3);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* ---- USDT: libruntime/ert-probes.h ------------------------------------------ */

SEC("usdt")
int BPF_USDT(plan_start, void *session) { return usdt_num(TK_PLAN_START, (long)session, 0, 0); }
SEC("usdt")
int BPF_USDT(plan_end, void *session, int status)
{
	return usdt_num(TK_PLAN_END, (long)session, status, 0);
}
SEC("usdt")
int BPF_USDT(run_start, void *session) { return usdt_num(TK_RUN_START, (long)session, 0, 0); }
SEC("usdt")
int BPF_USDT(run_end, void *session, int status)
{
	return usdt_num(TK_RUN_END, (long)session, status, 0);
}
SEC("usdt")
int BPF_USDT(op_start, __u32 index, const char *type, const char *backend, const char *name)
{
	return usdt_str(TK_OP_START, index, 0, type, backend, name);
}
SEC("usdt")
int BPF_USDT(op_end, __u32 index, int status) { return usdt_num(TK_OP_END, index, status, 0); }
SEC("usdt")
int BPF_USDT(split, __u32 index, const char *from, const char *to)
{
	return usdt_str(TK_SPLIT, index, 0, from, to, NULL);
}
SEC("usdt")
int BPF_USDT(copy, __u32 step, __u64 bytes, const char *from, const char *to)
{
	return usdt_str(TK_COPY, step, bytes, from, to, NULL);
}
SEC("usdt")
int BPF_USDT(npu_submit, __u32 jobs, __u64 seqno, int status)
{
	return usdt_num(TK_NPU_SUBMIT, jobs, seqno, status);
}
SEC("usdt")
int BPF_USDT(npu_wait_start, __u64 seqno) { return usdt_num(TK_NPU_WAIT_START, seqno, 0, 0); }
SEC("usdt")
int BPF_USDT(npu_wait_end, __u64 seqno, int status)
{
	return usdt_num(TK_NPU_WAIT_END, seqno, status, 0);
}
SEC("usdt")
int BPF_USDT(gpu_submit, __u32 kernels, __u32 copies)
{
	return usdt_num(TK_GPU_SUBMIT, kernels, copies, 0);
}
SEC("usdt")
int BPF_USDT(gpu_wait_start) { return usdt_num(TK_GPU_WAIT_START, 0, 0, 0); }
SEC("usdt")
int BPF_USDT(gpu_wait_end, int status) { return usdt_num(TK_GPU_WAIT_END, status, 0, 0); }

/* ---- enpu tracepoints: kmod/enpu_trace.h ------------------------------------ */

/* offset of the first field of an event record: after the common header, 8-aligned for a u64 */
static __always_inline __u32 tp_base(void)
{
	__u32 hdr = bpf_core_type_size(struct trace_entry);

	return (hdr + 7) & ~7u;
}

static __always_inline __u64 tp_u64(void *ctx, __u32 off)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (char *)ctx + off);
	return v;
}

static __always_inline __u32 tp_u32(void *ctx, __u32 off)
{
	__u32 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (char *)ctx + off);
	return v;
}

/* enpu_job_submit: u64 id; u32 num_cmds, nop, conv, matmul, eltwise, pool, lut, copy, bos */
SEC("tracepoint/enpu/enpu_job_submit")
int enpu_job_submit(void *ctx)
{
	__u32 base = tp_base();
	__u64 id, one = 1;
	struct ert_trace_event *e;

	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	id = tp_u64(ctx, base);
	bpf_map_update_elem(&our_jobs, &id, &one, BPF_ANY);
	e = ev_new(TK_JOB_SUBMIT);
	if (!e)
		return 0;
	e->a = id;
	e->b = tp_u32(ctx, base + 8);
	e->c = tp_u32(ctx, base + 8 + 8 * 4);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* enpu_job_start: u64 id; u32 core */
SEC("tracepoint/enpu/enpu_job_start")
int enpu_job_start(void *ctx)
{
	__u32 base = tp_base(), tid = (__u32)bpf_get_current_pid_tgid();
	__u64 id = tp_u64(ctx, base), *run;
	struct ert_trace_event *e;

	if (!bpf_map_lookup_elem(&our_jobs, &id))
		return 0;
	e = ev_new(TK_JOB_START);
	if (!e)
		return 0;
	e->a = id;
	e->b = tp_u32(ctx, base + 8);
	run = bpf_map_lookup_elem(&sched_run, &tid);
	if (run) {
		e->c = *run;
		bpf_map_delete_elem(&sched_run, &tid);
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* enpu_job_done: u64 id; u32 core; int error; u64 duration_ns; ... */
SEC("tracepoint/enpu/enpu_job_done")
int enpu_job_done(void *ctx)
{
	__u32 base = tp_base(), tid = (__u32)bpf_get_current_pid_tgid();
	__u64 id = tp_u64(ctx, base);
	struct pending_signal ps = { .job = id, .left = 2 };
	struct ert_trace_event *e;

	if (!bpf_map_lookup_elem(&our_jobs, &id))
		return 0;
	/* the job's hardware fence, then drm_sched's finished fence, signal next here */
	bpf_map_update_elem(&pending, &tid, &ps, BPF_ANY);
	e = ev_new(TK_JOB_DONE);
	if (!e)
		return 0;
	e->a = id;
	e->b = tp_u32(ctx, base + 8);
	e->c = (__u64)(__s64)(__s32)tp_u32(ctx, base + 12);
	e->d = tp_u64(ctx, base + 16);
	bpf_ringbuf_submit(e, 0);
	bpf_map_delete_elem(&our_jobs, &id);
	return 0;
}

/* ---- dma_fence and drm_sched (in vmlinux / gpu-sched where present) ------- */

SEC("tracepoint/dma_fence/dma_fence_signaled")
int dma_fence_signaled(struct trace_event_raw_dma_fence *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending_signal *ps = bpf_map_lookup_elem(&pending, &tid);
	struct ert_trace_event *e;
	__u32 loc;

	if (!ps)
		return 0;
	e = ev_new(TK_JOB_SIGNAL);
	if (e) {
		e->a = ps->job;
		e->b = BPF_CORE_READ(ctx, context);
		e->c = BPF_CORE_READ(ctx, seqno);
		loc = BPF_CORE_READ(ctx, __data_loc_driver);
		bpf_probe_read_kernel_str(e->s1, sizeof(e->s1), (char *)ctx + (loc & 0xffff));
		bpf_ringbuf_submit(e, 0);
	}
	if (ps->left <= 1)
		bpf_map_delete_elem(&pending, &tid);
	else
		ps->left--;
	return 0;
}

/* the scheduler hands a job to the driver: enpu_job_start follows in this thread */
SEC("tracepoint/gpu_scheduler/drm_run_job")
int drm_run_job(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();

	bpf_map_update_elem(&sched_run, &tid, &now, BPF_ANY);
	return 0;
}
