/* SPDX-License-Identifier: MIT */
/*
 * ert-probes.h — the USDT (user statically-defined tracing) probes of
 * libedgert, provider "edgert". Each probe is a nop instruction plus an ELF
 * note (.note.stapsdt) naming it and where its arguments live; a tracer
 * (edgert trace's BPF program, bpftrace, perf, SystemTap) patches the nop to
 * a breakpoint while it is attached. Untraced, a probe costs the nop and
 * having its arguments in registers: the call sites pass values already at
 * hand, never anything computed for the probe.
 *
 * docs/tracing.md lists every probe with its arguments; tests/suites/
 * 16-probes.sh reads the ELF notes of the built library and checks that each
 * probe listed there exists with that many arguments. A new probe goes into
 * that table too. Arguments that are strings are pointers to NUL-terminated
 * names valid during the probe (read them with bpf_probe_read_user_str).
 *
 * Without <sys/sdt.h> (Debian: systemtap-sdt-dev), or with -DERT_NO_PROBES
 * (scripts/bench-probes.sh measures a build with against one without), the
 * probes compile to nothing and the probe suite says so.
 */
#ifndef ERT_PROBES_H
#define ERT_PROBES_H

#if defined(__has_include) && !defined(ERT_NO_PROBES)
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define ERT_HAVE_PROBES 1
#endif
#endif

#ifdef ERT_HAVE_PROBES
#define ERT_PROBE0(name) DTRACE_PROBE(edgert, name)
#define ERT_PROBE1(name, a) DTRACE_PROBE1(edgert, name, a)
#define ERT_PROBE2(name, a, b) DTRACE_PROBE2(edgert, name, a, b)
#define ERT_PROBE3(name, a, b, c) DTRACE_PROBE3(edgert, name, a, b, c)
#define ERT_PROBE4(name, a, b, c, d) DTRACE_PROBE4(edgert, name, a, b, c, d)
#else
#define ERT_PROBE0(name) ((void)0)
#define ERT_PROBE1(name, a) ((void)(a))
#define ERT_PROBE2(name, a, b) ((void)(a), (void)(b))
#define ERT_PROBE3(name, a, b, c) ((void)(a), (void)(b), (void)(c))
#define ERT_PROBE4(name, a, b, c, d) ((void)(a), (void)(b), (void)(c), (void)(d))
#endif

/*
 * The probes, by where they fire. "session" is the ert_session pointer (an
 * id that tells sessions apart), "index" the step index the op callbacks see
 * (ert_op_info.index), "status" an ert_status (0 = OK).
 */

/* libruntime/session/session.c: a plan made for new input shapes */
#define ert_probe_plan_start(session) ERT_PROBE1(plan_start, session)
#define ert_probe_plan_end(session, status) ERT_PROBE2(plan_end, session, status)
/* libruntime/session/session.c: ert_session_run() */
#define ert_probe_run_start(session) ERT_PROBE1(run_start, session)
#define ert_probe_run_end(session, status) ERT_PROBE2(run_end, session, status)
/*
 * One op: start before the backend's compute, end after it returns (and
 * after its backend finished it, when op callbacks made the run wait per
 * op; otherwise a GPU or NPU op only queued its work by then).
 */
#define ert_probe_op_start(index, type, backend, name) \
	ERT_PROBE4(op_start, index, type, backend, name)
#define ert_probe_op_end(index, status) ERT_PROBE2(op_end, index, status)
/* A split boundary: the op at @index runs on @to after ops on @from, which is now waited for. */
#define ert_probe_split(index, from, to) ERT_PROBE3(split, index, from, to)
/* libruntime/session/copies.c: a tensor copied between memories at a split */
#define ert_probe_copy(index, bytes, from, to) ERT_PROBE4(copy, index, bytes, from, to)
/*
 * backends/npu: @jobs command streams submitted in one SUBMIT ioctl, which
 * gave them sequence number @seqno (0 when it failed with @status)
 */
#define ert_probe_npu_submit(jobs, seqno, status) ERT_PROBE3(npu_submit, jobs, seqno, status)
#define ert_probe_npu_wait_start(seqno) ERT_PROBE1(npu_wait_start, seqno)
#define ert_probe_npu_wait_end(seqno, status) ERT_PROBE2(npu_wait_end, seqno, status)
/*
 * GPU queues. backends/opencl: one op's work enqueued (@kernels launches,
 * @copies buffer copies), and the wait for the queue to drain (clFinish).
 * backends/vulkan: one vkQueueSubmit of the recorded command buffers
 * (@kernels of steps, @copies of copies), and its fence wait.
 */
#define ert_probe_gpu_submit(kernels, copies) ERT_PROBE2(gpu_submit, kernels, copies)
#define ert_probe_gpu_wait_start() ERT_PROBE0(gpu_wait_start)
#define ert_probe_gpu_wait_end(status) ERT_PROBE1(gpu_wait_end, status)

#endif /* ERT_PROBES_H */
