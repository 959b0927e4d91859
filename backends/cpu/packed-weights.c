/* SPDX-License-Identifier: MIT */
/*
 * The CPU backend's cache of packed constant weights: one copy per session and
 * (source, layout), however many cached plans prepare steps that use it.
 */
#include <stdlib.h>

#include "cpu/conv/winograd.h"
#include "cpu/gemm/sgemm.h"
#include "cpu/qgemm/qgemm.h"

static bool key_equal(const struct ert_cpu_pack_key *a, const struct ert_cpu_pack_key *b)
{
	return a->src == b->src && a->kind == b->kind && a->panel == b->panel && a->rows == b->rows &&
	       a->cols == b->cols && a->rs == b->rs && a->cs == b->cs && a->count == b->count &&
	       a->src_stride == b->src_stride && a->fmt == b->fmt;
}

static size_t packed_floats(const struct ert_cpu_pack_key *key)
{
	if (key->kind == ERT_CPU_PACK_Q8A || key->kind == ERT_CPU_PACK_Q8B)
		return ert_qgemm_entry_bytes(key) / sizeof(float);
	if (key->kind == ERT_CPU_PACK_A_BF16)
		return ert_sbgemm_packed_words(key->rows, key->cols, key->panel);
	if (key->kind == ERT_CPU_PACK_B_BF16)
		return ert_sbgemm_packed_words(key->cols, key->rows, key->panel);
	if (key->kind == ERT_CPU_PACK_WINO_B)
		return ert_sgemm_packed_b_floats(key->cols, key->rows, key->panel);
	return key->kind != ERT_CPU_PACK_B
		       ? ert_sgemm_packed_a_floats(key->rows, key->cols, key->panel)
		       : ert_sgemm_packed_b_floats(key->rows, key->cols, key->panel);
}

static struct ert_cpu_packed *pack_new(struct ert_cpu *cpu, const struct ert_cpu_pack_key *key)
{
	struct ert_cpu_packed *pk = calloc(1, sizeof(*pk));

	if (!pk)
		return NULL;
	pk->cpu = cpu;
	pk->key = *key;
	pk->stride = packed_floats(key);
	/* a multiple of 64 bytes, as the panels want, on huge pages when large */
	pk->bytes = ((pk->stride * (size_t)key->count * sizeof(float)) | 63) + 1;
	pk->data = ert_cpu_alloc(pk->bytes);
	if (!pk->data) {
		free(pk);
		return NULL;
	}
	if (key->kind == ERT_CPU_PACK_WINO || key->kind == ERT_CPU_PACK_WINO_B) {
		size_t per = (size_t)(key->rows * key->cols);
		float *u = malloc(per * ERT_WINO_POS * sizeof(float));

		if (!u) {
			free(pk->data);
			free(pk);
			return NULL;
		}
		ert_wino_filter_transform(key->src, key->rows, key->cols, (int)key->count, u);
		for (int64_t i = 0; i < key->count; i++) {
			float *dst = pk->data + (size_t)i * pk->stride;

			if (key->kind == ERT_CPU_PACK_WINO)
				ert_sgemm_pack_a(u + (size_t)i * per, key->cols, 1, key->rows,
						 key->cols, key->panel, dst);
			else
				ert_sgemm_pack_b(u + (size_t)i * per, 1, key->cols, key->cols,
						 key->rows, key->panel, dst);
		}
		free(u);
		return pk;
	}
	if (key->kind == ERT_CPU_PACK_Q8A || key->kind == ERT_CPU_PACK_Q8B) {
		for (int64_t i = 0; i < key->count; i++) {
			struct ert_cpu_pack_key one = *key;

			one.src = (const float *)(const void *)((const char *)key->src +
								i * key->src_stride);
			one.count = 1;
			ert_qgemm_entry_pack(&one, pk->data + (size_t)i * pk->stride);
		}
		return pk;
	}
	for (int64_t i = 0; i < key->count; i++) {
		const float *src = key->src + i * key->src_stride;
		float *dst = pk->data + (size_t)i * pk->stride;

		if (key->kind == ERT_CPU_PACK_A)
			ert_sgemm_pack_a(src, key->rs, key->cs, key->rows, key->cols, key->panel,
					 dst);
		else if (key->kind == ERT_CPU_PACK_A_BF16 && cpu->gemm_low->a_rows)
			ert_sbgemm_pack_a_rows(src, key->rs, key->cs, 0, key->rows, 0, key->cols,
					       key->panel, cpu->gemm_low->kc, (uint32_t *)(void *)dst);
		else if (key->kind == ERT_CPU_PACK_A_BF16)
			ert_sbgemm_pack_a_strided(src, key->rs, key->cs, 0, key->rows, 0, key->cols,
						  key->panel, (uint32_t *)(void *)dst);
		else if (key->kind == ERT_CPU_PACK_B_BF16)
			ert_sbgemm_pack_b_strided(src, key->rs, key->cs, 0, key->rows, 0, key->cols,
						  key->panel, (uint32_t *)(void *)dst);
		else
			ert_sgemm_pack_b(src, key->rs, key->cs, key->rows, key->cols, key->panel,
					 dst);
	}
	return pk;
}

ert_status ert_cpu_pack_get(struct ert_cpu *cpu, const struct ert_cpu_pack_key *key_in,
			    struct ert_cpu_packed **out)
{
	const struct ert_sgemm_kernel *kern = cpu->gemm ? cpu->gemm : ert_sgemm_kernel_for(ERT_ISA_SCALAR);
	struct ert_cpu_pack_key k = *key_in, *key = &k;
	struct ert_cpu_packed *pk;

	*out = NULL;
	if (cpu->memory == ERT_LEVEL_LOW)
		return ERT_OK;
	k.panel = k.kind == ERT_CPU_PACK_B || k.kind == ERT_CPU_PACK_WINO_B ? kern->nr : kern->mr;
	if (k.kind == ERT_CPU_PACK_Q8A || k.kind == ERT_CPU_PACK_Q8B)
		k.panel = key_in->panel;
	if (k.kind == ERT_CPU_PACK_A_BF16 || k.kind == ERT_CPU_PACK_B_BF16) {
		if (!cpu->gemm_low)
			return ERT_STATUS_INTERNAL;
		k.panel = k.kind == ERT_CPU_PACK_B_BF16 ? cpu->gemm_low->nr : cpu->gemm_low->mr;
	}
	for (pk = cpu->packed; pk; pk = pk->next)
		if (key_equal(&pk->key, key))
			break;
	if (!pk) {
		pk = pack_new(cpu, key);
		if (!pk)
			return ERT_STATUS_OUT_OF_MEMORY;
		pk->next = cpu->packed;
		cpu->packed = pk;
		cpu->packed_bytes += pk->bytes;
	}
	pk->refs++;
	*out = pk;
	return ERT_OK;
}

void ert_cpu_pack_put(struct ert_cpu_packed *pk)
{
	struct ert_cpu_packed **pp;
	struct ert_cpu *cpu;

	if (!pk || --pk->refs)
		return;
	cpu = pk->cpu;
	for (pp = &cpu->packed; *pp != pk; pp = &(*pp)->next)
		;
	*pp = pk->next;
	cpu->packed_bytes -= pk->bytes;
	free(pk->data);
	free(pk);
}

void ert_cpu_release_packed(struct ert_exec *x)
{
	ert_cpu_pack_put(x->state);
	x->state = NULL;
}
