/* SPDX-License-Identifier: MIT */
/*
 * Weight storage codecs of the .ert format: fp16 and symmetric block-wise
 * int8/int4 (weight-only; decoded to float32 when first needed). Sizes are computed in
 * uint64 with overflow checks because the reader calls them on untrusted shapes.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "ert-op-impl.h"
#include "format/format-priv.h"

/* Rows are dims[0]; blocks never straddle rows so each output channel keeps its scales. */
static void rows_of(int32_t rank, const int64_t *dims, int64_t numel, uint64_t *rows,
		    uint64_t *row_len)
{
	if (rank >= 2 && dims[0] > 0) {
		*rows = (uint64_t)dims[0];
		*row_len = (uint64_t)numel / (uint64_t)dims[0];
	} else {
		*rows = 1;
		*row_len = (uint64_t)numel;
	}
}

uint64_t fmt_quant_blocks(int32_t rank, const int64_t *dims, int64_t numel, uint32_t block)
{
	uint64_t rows, row_len;

	if (numel < 0 || block == 0)
		return 0;
	rows_of(rank, dims, numel, &rows, &row_len);
	/* rows * per_row <= numel + rows, which fits: numel < 2^63 and rows <= numel */
	return rows * ((row_len + block - 1) / block);
}

uint64_t fmt_encoded_size(enum fmt_encoding enc, int32_t rank, const int64_t *dims,
			  int64_t numel, uint32_t block)
{
	uint64_t n = (uint64_t)numel, nb;

	if (numel < 0)
		return 0;
	switch (enc) {
	case FMT_ENC_FP16:
		return n > UINT64_MAX / 2 ? 0 : n * 2;
	case FMT_ENC_Q8:
	case FMT_ENC_Q4:
		if (block == 0)
			return 0;
		nb = fmt_quant_blocks(rank, dims, numel, block);
		if (nb > UINT64_MAX / 8)
			return 0;
		return nb * 4 + (enc == FMT_ENC_Q8 ? n : n / 2 + (n & 1));
	default:
		return 0;
	}
}

static void put_q4(uint8_t *dst, uint64_t i, int q)
{
	uint8_t nib = (uint8_t)(q & 0xf);

	if (i & 1)
		dst[i / 2] = (uint8_t)((dst[i / 2] & 0x0f) | (nib << 4));
	else
		dst[i / 2] = (uint8_t)((dst[i / 2] & 0xf0) | nib);
}

static int get_q4(const uint8_t *src, uint64_t i)
{
	int nib = (i & 1) ? src[i / 2] >> 4 : src[i / 2] & 0xf;

	return nib >= 8 ? nib - 16 : nib;
}

void fmt_encode(enum fmt_encoding enc, const float *src, int32_t rank, const int64_t *dims,
		int64_t numel, uint32_t block, uint8_t *dst)
{
	if (enc == FMT_ENC_FP16) {
		for (int64_t i = 0; i < numel; i++) {
			uint16_t h = ert_fp32_to_fp16(src[i]);

			dst[2 * i] = (uint8_t)h;
			dst[2 * i + 1] = (uint8_t)(h >> 8);
		}
		return;
	}

	uint64_t rows, row_len, nb = fmt_quant_blocks(rank, dims, numel, block);
	uint8_t *q = dst + nb * 4;
	int qmax = enc == FMT_ENC_Q8 ? 127 : 7;
	uint64_t b = 0;

	rows_of(rank, dims, numel, &rows, &row_len);
	if (enc == FMT_ENC_Q4)
		memset(q, 0, (uint64_t)numel / 2 + ((uint64_t)numel & 1));
	for (uint64_t r = 0; r < rows; r++) {
		for (uint64_t s = 0; s < row_len; s += block, b++) {
			uint64_t base = r * row_len + s, len = row_len - s < block ? row_len - s : block;
			float amax = 0.0f, scale, inv;
			uint32_t bits;

			for (uint64_t j = 0; j < len; j++)
				if (isfinite(src[base + j]) && fabsf(src[base + j]) > amax)
					amax = fabsf(src[base + j]);
			scale = amax / (float)qmax;
			inv = scale > 0.0f ? 1.0f / scale : 0.0f;
			memcpy(&bits, &scale, 4);
			fmt_put32(dst + b * 4, bits);
			for (uint64_t j = 0; j < len; j++) {
				float v = src[base + j] * inv;
				int qi;

				/* NaN and values beyond the block maximum saturate */
				if (!(v == v))
					qi = 0;
				else
					qi = (int)lrintf(fminf(fmaxf(v, (float)-qmax), (float)qmax));
				if (enc == FMT_ENC_Q8)
					q[base + j] = (uint8_t)(int8_t)qi;
				else
					put_q4(q, base + j, qi);
			}
		}
	}
}

void fmt_decode(enum fmt_encoding enc, const uint8_t *src, int32_t rank, const int64_t *dims,
		int64_t numel, uint32_t block, float *dst)
{
	if (enc == FMT_ENC_FP16) {
		for (int64_t i = 0; i < numel; i++)
			dst[i] = ert_fp16_to_fp32((uint16_t)(src[2 * i] | src[2 * i + 1] << 8));
		return;
	}

	uint64_t rows, row_len, nb = fmt_quant_blocks(rank, dims, numel, block);
	const uint8_t *q = src + nb * 4;
	uint64_t b = 0;

	rows_of(rank, dims, numel, &rows, &row_len);
	for (uint64_t r = 0; r < rows; r++) {
		for (uint64_t s = 0; s < row_len; s += block, b++) {
			uint64_t base = r * row_len + s, len = row_len - s < block ? row_len - s : block;
			uint32_t bits = fmt_get32(src + b * 4);
			float scale;

			memcpy(&scale, &bits, 4);
			for (uint64_t j = 0; j < len; j++) {
				int qi = enc == FMT_ENC_Q8 ? (int8_t)q[base + j] : get_q4(q, base + j);

				dst[base + j] = (float)qi * scale;
			}
		}
	}
}

/*
 * Lazy decode of a block-quantised constant: a model is shared by sessions
 * on any threads, so the first caller decodes under a lock and publishes the
 * buffer; later callers see it through the atomic pointer without locking.
 */
static pthread_mutex_t wq_lock = PTHREAD_MUTEX_INITIALIZER; /* serialises first decodes */

const float *ert_wq_decoded(struct ert_wq *wq)
{
	float *d = atomic_load_explicit(&wq->decoded, memory_order_acquire);
	int64_t dims[2] = { wq->rows, wq->row_len };
	int64_t numel = wq->rows * wq->row_len;

	if (d)
		return d;
	pthread_mutex_lock(&wq_lock);
	d = atomic_load_explicit(&wq->decoded, memory_order_relaxed);
	if (!d) {
		size_t n = ((size_t)numel * sizeof(float) + 63) & ~(size_t)63;

		d = aligned_alloc(64, n ? n : 64);
		if (d) {
			/* rows x row_len as a rank-2 shape cuts the same rows as the tensor's */
			fmt_decode(wq->bits == 8 ? FMT_ENC_Q8 : FMT_ENC_Q4,
				   (const uint8_t *)wq->scales, 2, dims, numel, wq->block, d);
			atomic_store_explicit(&wq->decoded, d, memory_order_release);
		}
	}
	pthread_mutex_unlock(&wq_lock);
	return d;
}
