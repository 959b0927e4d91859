/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: elementwise binary, ternary (Where) and variadic ops.
 * This file checks dtypes and dispatches to binary-arith.c and binary-logic.c.
 */
#include "cpu/ops/elementwise.h"

static bool arith_supports(const struct ert_exec *x)
{
	ert_dtype dt = x->out[0]->dtype;

	for (uint32_t i = 0; i < x->n_in; i++)
		if (!x->in[i] || !ert_ew_class_ok(x->in[i]->dtype, ERT_EW_NUM))
			return false;
	return ert_ew_class_ok(dt, ERT_EW_NUM);
}

static ert_status arith_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_value b;

	if (x->n_in != 2)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL,
				     "%u inputs, expected 2", x->n_in);
	ert_ew_legacy_operand(x->node, x->in[0], x->in[1], &b);
	return ert_binary_arith_run(cpu, x->node, x->node->op, x->in[0], &b, x->out[0], err);
}

static ert_status variadic_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	if (x->n_in < 1)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL, "no inputs");
	return ert_variadic_run(cpu, x->node, (const struct ert_value *const *)x->in, x->n_in,
				x->out[0], err);
}

static bool logic_supports(const struct ert_exec *x)
{
	return x->n_in == 2 && x->in[0] && x->in[1] && x->in[0]->dtype == x->in[1]->dtype &&
	       ert_binary_logic_supported(x->node, x->in[0]->dtype);
}

static ert_status logic_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_value b;

	if (x->n_in != 2)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL,
				     "%u inputs, expected 2", x->n_in);
	ert_ew_legacy_operand(x->node, x->in[0], x->in[1], &b);
	return ert_binary_logic_run(cpu, x->node, x->in[0], &b, x->out[0], err);
}

static bool where_supports(const struct ert_exec *x)
{
	size_t es = ert_dtype_size(x->out[0]->dtype);

	return x->n_in == 3 && (es == 1 || es == 2 || es == 4 || es == 8);
}

static ert_status where_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	if (x->n_in != 3)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL,
				     "%u inputs, expected 3", x->n_in);
	return ert_where_run(cpu, x->in[0], x->in[1], x->in[2], x->out[0], err);
}

/* Names the vector kernel the op will run, for edgert profile. */
static ert_status arith_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	x->kernel = ert_binary_arith_kernel(cpu, x->node, x->out[0]->dtype);
	return ERT_OK;
}

#define ARITH(o)                                                                         \
	{ .op = ERT_OP_##o, .supports = arith_supports, .prepare = arith_prepare,        \
	  .compute = arith_compute }
#define VARIADIC(o)                                                                      \
	{ .op = ERT_OP_##o, .supports = arith_supports, .prepare = arith_prepare,        \
	  .compute = variadic_compute }
#define LOGIC(o) { .op = ERT_OP_##o, .supports = logic_supports, .compute = logic_compute }

const struct ert_cpu_op ert_cpu_ops_binary[] = {
	ARITH(Add), ARITH(Sub), ARITH(Mul), ARITH(Div), ARITH(Pow), ARITH(Mod), ARITH(PRelu),
	LOGIC(Equal), LOGIC(Less), LOGIC(Greater), LOGIC(LessOrEqual), LOGIC(GreaterOrEqual),
	LOGIC(And), LOGIC(Or), LOGIC(Xor), LOGIC(BitShift), LOGIC(BitwiseAnd), LOGIC(BitwiseOr),
	LOGIC(BitwiseXor),
	{ .op = ERT_OP_Where, .supports = where_supports, .compute = where_compute },
	VARIADIC(Min), VARIADIC(Max), VARIADIC(Sum), VARIADIC(Mean),
	{ .compute = NULL },
};
