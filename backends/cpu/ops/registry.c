/* SPDX-License-Identifier: MIT */
/* Index the per-family CPU kernel tables by op. */
#include <pthread.h>

#include "cpu/cpu-impl.h"

extern const struct ert_cpu_op ert_cpu_ops_unary[];
extern const struct ert_cpu_op ert_cpu_ops_binary[];
extern const struct ert_cpu_op ert_cpu_ops_linalg[];
extern const struct ert_cpu_op ert_cpu_ops_attention[];
extern const struct ert_cpu_op ert_cpu_ops_irblock[];
extern const struct ert_cpu_op ert_cpu_ops_pool[];
extern const struct ert_cpu_op ert_cpu_ops_qlinalg[];
extern const struct ert_cpu_op ert_cpu_ops_qlinear_ew[];
extern const struct ert_cpu_op ert_cpu_ops_qlinear_pool[];
extern const struct ert_cpu_op ert_cpu_ops_norm[];
extern const struct ert_cpu_op ert_cpu_ops_reduce[];
extern const struct ert_cpu_op ert_cpu_ops_quant[];
extern const struct ert_cpu_op ert_cpu_ops_resize[];
extern const struct ert_cpu_op ert_cpu_ops_movement[];
extern const struct ert_cpu_op ert_cpu_ops_loss[];
extern const struct ert_cpu_op ert_cpu_ops_recurrent[];
extern const struct ert_cpu_op ert_cpu_ops_select[];
extern const struct ert_cpu_op ert_cpu_ops_signal[];
extern const struct ert_cpu_op ert_cpu_ops_spatial[];
extern const struct ert_cpu_op ert_cpu_ops_reverse_det[];
extern const struct ert_cpu_op ert_cpu_ops_random[];
extern const struct ert_cpu_op ert_cpu_ops_tfidf[];
extern const struct ert_cpu_op ert_cpu_ops_training[];
extern const struct ert_cpu_op ert_cpu_ops_ml[];
extern const struct ert_cpu_op ert_cpu_ops_strings[];
extern const struct ert_cpu_op ert_cpu_ops_image[];
extern const struct ert_cpu_op ert_cpu_ops_control[];
extern const struct ert_cpu_op ert_cpu_ops_sequence[];

static const struct ert_cpu_op *const families[] = {
	ert_cpu_ops_unary,
	ert_cpu_ops_binary,
	ert_cpu_ops_linalg,
	ert_cpu_ops_attention,
	ert_cpu_ops_irblock,
	ert_cpu_ops_pool,
	ert_cpu_ops_qlinalg,
	ert_cpu_ops_qlinear_ew,
	ert_cpu_ops_qlinear_pool,
	ert_cpu_ops_norm,
	ert_cpu_ops_reduce,
	ert_cpu_ops_quant,
	ert_cpu_ops_resize,
	ert_cpu_ops_movement,
	ert_cpu_ops_loss,
	ert_cpu_ops_recurrent,
	ert_cpu_ops_select,
	ert_cpu_ops_signal,
	ert_cpu_ops_spatial,
	ert_cpu_ops_reverse_det,
	ert_cpu_ops_random,
	ert_cpu_ops_tfidf,
	ert_cpu_ops_training,
	ert_cpu_ops_ml,
	ert_cpu_ops_strings,
	ert_cpu_ops_image,
	ert_cpu_ops_control,
	ert_cpu_ops_sequence,
};

static const struct ert_cpu_op *by_op[ERT_OP_COUNT];
static pthread_once_t by_op_once = PTHREAD_ONCE_INIT;

static void build_index(void)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct ert_cpu_op *k = families[f]; k->compute; k++)
			by_op[k->op] = k;
}

const struct ert_cpu_op *ert_cpu_op_find(enum ert_op op)
{
	if ((unsigned)op >= ERT_OP_COUNT)
		return NULL;
	pthread_once(&by_op_once, build_index);
	return by_op[op];
}
