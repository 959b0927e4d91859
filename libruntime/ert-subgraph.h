/* SPDX-License-Identifier: MIT */
/*
 * ert-subgraph.h — running a subgraph (an If branch, a Loop or Scan body)
 * from the kernel of its node (docs/control-flow.md). Private to libedgert.
 *
 * A subgraph runs as a session of its own on the CPU backend: its inputs
 * are its formal inputs followed by its captures (the outer values it reads),
 * except captures bound to constants, which it reads in place as constants
 * of its own (so planning folds and packs them once). That session plans
 * the body once per input-shape signature and caches the plan like any
 * session (up to ERT_PLAN_CACHE_MAX), follows the memory-planning rules and
 * re-plans data-dependent shapes through its own continuations; a run for
 * shapes it already planned allocates nothing.
 *
 * Not thread-safe: one subrun belongs to one step of one plan (or to one
 * evaluation), used by the thread that runs it.
 */
#ifndef ERT_SUBGRAPH_H
#define ERT_SUBGRAPH_H

#include "ert-op-impl.h"

struct ert_seq_meter;

struct ert_subrun;

/*
 * A subrun of @sub (which must outlive it). @caps: one per capture, the
 * value it is bound to, or NULL; @caps_const[c]: that value is the same for
 * every run of the subrun (a constant, or computed while planning), so the
 * subgraph may use its data in place (the data must outlive the subrun).
 * @cfg: the session settings (backends are set to the CPU alone). @meter:
 * where the copies of sequence and optional inputs count (the owning step's
 * session, ert_exec.seqs; it must outlive the subrun), or NULL.
 */
ert_status ert_subrun_create(const struct ert_graph *sub, const ert_config *cfg,
			     const struct ert_value *const *caps, const bool *caps_const,
			     struct ert_seq_meter *meter, struct ert_subrun **out,
			     struct ert_err *err);
/*
 * The ops of the subgraph (and of the subgraphs it holds) call @app's
 * before_op/after_op (none when @app is NULL or has neither), named
 * "@owner/<op>" one level deeper (ert_op_info.depth); @owner and @app must
 * outlive the subrun. An after_op that stops the subgraph's run makes
 * ert_subrun_run() return ERT_STATUS_STOPPED. Without this call a
 * subgraph's ops call no callback.
 */
void ert_subrun_set_callbacks(struct ert_subrun *r, const char *owner, const ert_config *app);
/* Accepts NULL. */
void ert_subrun_destroy(struct ert_subrun *r);
/*
 * Input @k of the subrun (the subgraph's formal inputs, then its captures)
 * takes @v's type, shape and bytes, copied now. A capture read as a constant
 * ignores it.
 */
ert_status ert_subrun_set(struct ert_subrun *r, uint32_t k, const struct ert_value *v,
			  struct ert_err *err);
/*
 * Run the subgraph on the inputs set last (planning first for new shapes).
 * A failure reads "@what op Type 'name': why" when an op of the subgraph
 * failed (the op named once, its own failure nested the same way), else
 * "@what: why" ("body: run stopped after Neg 'neg'").
 */
ert_status ert_subrun_run(struct ert_subrun *r, const char *what, struct ert_err *err);
/* Output @k after a run: shape, type and data, valid until the next set or run. */
void ert_subrun_output(struct ert_subrun *r, uint32_t k, struct ert_value *out);

#endif
