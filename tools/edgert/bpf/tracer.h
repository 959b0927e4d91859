/* SPDX-License-Identifier: MIT */
/*
 * tracer.h — edgert trace's collector: the BPF program of trace.bpf.c
 * loaded through its bpftool skeleton, attached to the USDT probes of one
 * process and to the kernel's enpu, dma_fence and drm_sched tracepoints,
 * handing every record to a callback. tracer.c is built where clang,
 * bpftool, libbpf-dev and a kernel BTF are present at build time (mk/bpf.mk);
 * elsewhere tracer-absent.c answers that the tracer is not in the build.
 */
#ifndef ERT_TRACER_H
#define ERT_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace-event.h"

struct tracer;

/* Called for each record, in ring buffer order (which is not quite time order). */
typedef int (*tracer_sink)(const struct ert_trace_event *e, void *user);

/* Whether this edgert was built with the BPF tracer. */
bool tracer_built(void);

/*
 * Load the program and attach it: the USDT probes of provider "edgert" in
 * @exe as mapped by process @pid, and the tracepoints the kernel has (enpu,
 * dma_fence, gpu_scheduler; a missing group is noted, not an error). On
 * @btf names a BTF file to relocate against instead of the running kernel's
 * (NULL: /sys/kernel/btf/vmlinux). On failure returns false with @why (one
 * line) filled.
 */
bool tracer_open(pid_t pid, const char *exe, const char *btf, tracer_sink sink, void *user,
		 struct tracer **out, char *why, size_t why_size);
/* What was attached, as a phrase ("14 USDT probes, enpu, dma_fence"). */
const char *tracer_sources(const struct tracer *t);
/* Whether the enpu tracepoints were attached. */
bool tracer_has_enpu(const struct tracer *t);
/* Hand every record now in the ring buffer to the sink; false on an error. */
bool tracer_poll(struct tracer *t);
/* Records the BPF side lost to a full ring buffer. */
uint64_t tracer_dropped(const struct tracer *t);
/* Detach and free; accepts NULL. */
void tracer_close(struct tracer *t);

#endif /* ERT_TRACER_H */
