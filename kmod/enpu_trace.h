/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The edgert authors
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM enpu

#if !defined(_ENPU_TRACE_H_) || defined(TRACE_HEADER_MULTI_READ)
#define _ENPU_TRACE_H_

#include <linux/tracepoint.h>
#include "enpu_job.h"

#ifndef _ENPU_TRACE_OPS_
#define _ENPU_TRACE_OPS_
/*
 * Submit and done events carry each job's commands per opcode, as counted
 * by validation. The ENPU_OP_* values are uAPI; a new opcode gets a field.
 */
static_assert(ENPU_OP_COUNT == 7, "a new opcode needs its count in enpu_trace.h");
#endif /* _ENPU_TRACE_OPS_ */

TRACE_EVENT(enpu_job_submit,
	    TP_PROTO(const struct enpu_job *job),
	    TP_ARGS(job),
	    TP_STRUCT__entry(__field(u64, id)
			     __field(u32, num_cmds)
			     __field(u32, nop)
			     __field(u32, conv)
			     __field(u32, matmul)
			     __field(u32, eltwise)
			     __field(u32, pool)
			     __field(u32, lut)
			     __field(u32, copy)
			     __field(u32, bos)),
	    TP_fast_assign(__entry->id = job->id;
			   __entry->num_cmds = job->info.num_cmds;
			   __entry->nop = job->info.op_count[ENPU_OP_NOP];
			   __entry->conv = job->info.op_count[ENPU_OP_CONV2D];
			   __entry->matmul = job->info.op_count[ENPU_OP_MATMUL];
			   __entry->eltwise = job->info.op_count[ENPU_OP_ELTWISE];
			   __entry->pool = job->info.op_count[ENPU_OP_POOL];
			   __entry->lut = job->info.op_count[ENPU_OP_LUT];
			   __entry->copy = job->info.op_count[ENPU_OP_COPY];
			   __entry->bos = job->bo_count;),
	    TP_printk("job=%llu cmds=%u nop=%u conv=%u matmul=%u eltwise=%u pool=%u lut=%u copy=%u bos=%u",
		      __entry->id, __entry->num_cmds, __entry->nop, __entry->conv,
		      __entry->matmul, __entry->eltwise, __entry->pool, __entry->lut,
		      __entry->copy, __entry->bos)
);

TRACE_EVENT(enpu_job_start,
	    TP_PROTO(const struct enpu_job *job, u32 core),
	    TP_ARGS(job, core),
	    TP_STRUCT__entry(__field(u64, id)
			     __field(u32, core)),
	    TP_fast_assign(__entry->id = job->id;
			   __entry->core = core;),
	    TP_printk("job=%llu core=%u", __entry->id, __entry->core)
);

/* the job finished (error 0) or was abandoned; duration from its start */
TRACE_EVENT(enpu_job_done,
	    TP_PROTO(const struct enpu_job *job, u32 core, int error, u64 duration_ns),
	    TP_ARGS(job, core, error, duration_ns),
	    TP_STRUCT__entry(__field(u64, id)
			     __field(u32, core)
			     __field(int, error)
			     __field(u64, duration_ns)
			     __field(u32, num_cmds)
			     __field(u32, nop)
			     __field(u32, conv)
			     __field(u32, matmul)
			     __field(u32, eltwise)
			     __field(u32, pool)
			     __field(u32, lut)
			     __field(u32, copy)),
	    TP_fast_assign(__entry->id = job->id;
			   __entry->core = core;
			   __entry->error = error;
			   __entry->duration_ns = duration_ns;
			   __entry->num_cmds = job->info.num_cmds;
			   __entry->nop = job->info.op_count[ENPU_OP_NOP];
			   __entry->conv = job->info.op_count[ENPU_OP_CONV2D];
			   __entry->matmul = job->info.op_count[ENPU_OP_MATMUL];
			   __entry->eltwise = job->info.op_count[ENPU_OP_ELTWISE];
			   __entry->pool = job->info.op_count[ENPU_OP_POOL];
			   __entry->lut = job->info.op_count[ENPU_OP_LUT];
			   __entry->copy = job->info.op_count[ENPU_OP_COPY];),
	    TP_printk("job=%llu core=%u error=%d duration_ns=%llu cmds=%u nop=%u conv=%u matmul=%u eltwise=%u pool=%u lut=%u copy=%u",
		      __entry->id, __entry->core, __entry->error, __entry->duration_ns,
		      __entry->num_cmds, __entry->nop, __entry->conv,
		      __entry->matmul, __entry->eltwise, __entry->pool, __entry->lut,
		      __entry->copy)
);

#endif /* _ENPU_TRACE_H_ */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE enpu_trace
#include <trace/define_trace.h>
