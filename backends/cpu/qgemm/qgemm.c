/* SPDX-License-Identifier: MIT */
/*
 * The int8 GEMM's level table and its packing (portable C and SSE2, which
 * every x86-64 has): A blocks of signed bytes or int16 pairs, B panels of
 * unsigned byte quads, with the row and column sums the zero-point
 * corrections need.
 */
#include <emmintrin.h>
#include <string.h>

#include "cpu/qgemm/qgemm.h"

#define SHC_RS(rs, ls)                                                                       \
	{ (1LL << 30) + ((1LL << (rs)) >> 1) * (1LL << 31), (rs) ? 1LL << 31 : 0, 31 + (rs),  \
	  (ls), (rs), (int32_t)((1LL << (rs)) >> 1), 0 }
#define SHC(i) SHC_RS((i) < 31 ? 31 - (i) : 0, (i) > 31 ? (i) - 31 : 0)
#define SHC8(b) SHC(b), SHC(b + 1), SHC(b + 2), SHC(b + 3), SHC(b + 4), SHC(b + 5), SHC(b + 6), \
		SHC(b + 7)
const struct ert_qgemm_shiftc ert_qgemm_shift_table[64] = {
	SHC8(0), SHC8(8), SHC8(16), SHC8(24), SHC8(32), SHC8(40), SHC8(48), SHC8(56),
};

const struct ert_qgemm_kernel *const ert_qgemm_kernels[] = {
	&ert_qgemm_kernel_avx2,
	&ert_qgemm_kernel_avx512,
	&ert_qgemm_kernel_avx512vnni,
	&ert_qgemm_kernel_amx,
	NULL,
};

const struct ert_qgemm_kernel *ert_qgemm_kernel_for(enum ert_cpu_isa isa)
{
	if (isa >= ERT_ISA_AMX)
		return &ert_qgemm_kernel_amx;
	if (isa >= ERT_ISA_AVX512VNNI)
		return &ert_qgemm_kernel_avx512vnni;
	if (isa >= ERT_ISA_AVX512)
		return &ert_qgemm_kernel_avx512;
	if (isa >= ERT_ISA_AVX2)
		return &ert_qgemm_kernel_avx2;
	return NULL;
}

static size_t a_step_bytes(const struct ert_qgemm_kernel *k)
{
	return k->afmt == ERT_QGEMM_A_S16 ? 8 : 4;
}

/* K4 steps a packed A block holds: AMX blocks hold whole tiles of 16. */
static int64_t a_steps(const struct ert_qgemm_kernel *k, int64_t K)
{
	int64_t k4 = ert_qgemm_k4(K);

	return k->afmt == ERT_QGEMM_A_AMX ? (k4 + 15) / 16 * 16 : k4;
}

size_t ert_qgemm_a_block_bytes(const struct ert_qgemm_kernel *k, int64_t K)
{
	return (size_t)a_steps(k, K) * (size_t)k->mr * a_step_bytes(k);
}

/* One K4 step of one row: four signed bytes, stored in the kernel's A format. */
static inline void put_quad(const struct ert_qgemm_kernel *k, void *dst, int64_t q, int i,
			    const int8_t v[4])
{
	if (k->afmt == ERT_QGEMM_A_S16) {
		int16_t *d = (int16_t *)dst + (q * k->mr + i) * 4;

		d[0] = v[0];
		d[1] = v[2];
		d[2] = v[1];
		d[3] = v[3];
	} else if (k->afmt == ERT_QGEMM_A_AMX) {
		memcpy((int8_t *)dst + ((q / 16 * k->mr + i) * 16 + q % 16) * 4, v, 4);
	} else {
		memcpy((int8_t *)dst + (q * k->mr + i) * 4, v, 4);
	}
}

/*
 * The first @n4 whole quads of a contiguous row @row of A (row @i of the
 * block), xor-ed with @flip, in the kernel's A format: one format test per
 * row, not per quad (weights are packed this way at plan time, a matrix
 * product's A per tile). Returns @n4.
 */
static int64_t pack_row_quads(const struct ert_qgemm_kernel *k, const uint8_t *row, uint8_t flip,
			      int64_t n4, int i, void *dst)
{
	const uint32_t f4 = flip * 0x01010101u;
	uint8_t *d = dst;

	switch (k->afmt) {
	case ERT_QGEMM_A_S16:
		for (int64_t q = 0; q < n4; q++) {
			int16_t *o = (int16_t *)dst + (q * k->mr + i) * 4;
			const uint8_t *r = row + 4 * q;

			o[0] = (int8_t)(r[0] ^ flip);
			o[1] = (int8_t)(r[2] ^ flip);
			o[2] = (int8_t)(r[1] ^ flip);
			o[3] = (int8_t)(r[3] ^ flip);
		}
		break;
	case ERT_QGEMM_A_AMX:
		for (int64_t q = 0; q < n4; q++) {
			uint32_t v;

			memcpy(&v, row + 4 * q, 4);
			v ^= f4;
			memcpy(d + ((q / 16 * k->mr + i) * 16 + q % 16) * 4, &v, 4);
		}
		break;
	default:
		for (int64_t q = 0; q < n4; q++) {
			uint32_t v;

			memcpy(&v, row + 4 * q, 4);
			v ^= f4;
			memcpy(d + (q * k->mr + i) * 4, &v, 4);
		}
		break;
	}
	return n4;
}

/*
 * The sum of the signed bytes row[p] ^ flip, p < n: 16 at a time as
 * unsigned bytes (each + 128) through psadbw, less 128 n.
 */
static int32_t row_sum_s8(const uint8_t *row, uint8_t flip, int64_t n)
{
	const __m128i f = _mm_set1_epi8((char)(flip ^ 0x80)), zero = _mm_setzero_si128();
	__m128i acc = zero;
	int64_t p = 0;
	int32_t sum;

	for (; p + 16 <= n; p += 16)
		acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_xor_si128(
						  _mm_loadu_si128((const __m128i *)(row + p)), f), zero));
	acc = _mm_add_epi64(acc, _mm_unpackhi_epi64(acc, acc));
	sum = (int32_t)((uint32_t)_mm_cvtsi128_si32(acc) - 128u * (uint32_t)p);
	for (; p < n; p++)
		sum += (int8_t)(row[p] ^ flip);
	return sum;
}

void ert_qgemm_pack_a_block(const struct ert_qgemm_kernel *k, const void *a, bool a_u8,
			    int64_t rs, int64_t cs, int64_t mr, int64_t K, void *dst,
			    int32_t *rowsum)
{
	const int64_t K4 = ert_qgemm_k4(K), steps = a_steps(k, K);
	const uint8_t flip = a_u8 ? 0x80 : 0;
	const uint8_t *src = a;
	static const int8_t zero[4];

	for (int i = 0; i < k->mr; i++) {
		const uint8_t *row = src + i * rs;
		int64_t q = 0;
		int32_t sum = 0;

		/* quads past K4 (whole AMX tiles) are zeros */
		for (q = K4; q < steps; q++)
			put_quad(k, dst, q, i, zero);
		q = 0;
		if (i >= mr) {
			for (q = 0; q < K4; q++)
				put_quad(k, dst, q, i, zero);
			rowsum[i] = 0;
			continue;
		}
		if (cs == 1) {
			q = pack_row_quads(k, row, flip, K / 4, i, dst);
			sum = row_sum_s8(row, flip, K);
		} else {
			for (int64_t p = 0; p < K; p++)
				sum += (int8_t)(row[p * cs] ^ flip);
		}
		for (; q < K4; q++) {
			int8_t v[4];

			for (int t = 0; t < 4; t++)
				v[t] = 4 * q + t < K ? (int8_t)(row[(4 * q + t) * cs] ^ flip) : 0;
			put_quad(k, dst, q, i, v);
		}
		rowsum[i] = sum;
	}
}

/*
 * ert_qgemm_pack_a_block() for contiguous rows whose K = cin * kk columns
 * go in tap-major quads (ERT_QGEMM_KEY_TAP4): quad (c4, tap) holds
 * columns (4 c4 + t) * kk + tap, t < 4. Plan time only.
 */
static void pack_a_block_tap4(const struct ert_qgemm_kernel *k, const uint8_t *src, bool a_u8,
			      int64_t rs, int64_t mr, int64_t K, int64_t kk, void *dst,
			      int32_t *rowsum)
{
	const int64_t K4 = ert_qgemm_k4(K), steps = a_steps(k, K);
	const uint8_t flip = a_u8 ? 0x80 : 0;
	static const int8_t zero[4];

	for (int i = 0; i < k->mr; i++) {
		const uint8_t *row = src + i * rs;

		for (int64_t q = i < mr ? K4 : 0; q < steps; q++)
			put_quad(k, dst, q, i, zero);
		rowsum[i] = i < mr ? row_sum_s8(row, flip, K) : 0;
		for (int64_t q = 0; i < mr && q < K4; q++) {
			int64_t c4 = q / kk, tap = q % kk;
			int8_t v[4];

			for (int t = 0; t < 4; t++)
				v[t] = (int8_t)(row[(4 * c4 + t) * kk + tap] ^ flip);
			put_quad(k, dst, q, i, v);
		}
	}
}

static int64_t round_up(int64_t v, int64_t to)
{
	return (v + to - 1) / to * to;
}

size_t ert_qgemm_b_bytes(const struct ert_qgemm_kernel *k, int64_t K, int64_t nc)
{
	return (size_t)(round_up(nc, k->vc) * ert_qgemm_k4(K) * 4);
}

/* Interleave 16 columns of four rows into 16 quads (64 bytes). */
static inline void quad16(uint8_t *dst, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
			  const uint8_t *r3, __m128i flip)
{
	__m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r0), flip);
	__m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r1), flip);
	__m128i c = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r2), flip);
	__m128i d = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r3), flip);
	__m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
	__m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);

	_mm_storeu_si128((__m128i *)dst, _mm_unpacklo_epi16(ab0, cd0));
	_mm_storeu_si128((__m128i *)(dst + 16), _mm_unpackhi_epi16(ab0, cd0));
	_mm_storeu_si128((__m128i *)(dst + 32), _mm_unpacklo_epi16(ab1, cd1));
	_mm_storeu_si128((__m128i *)(dst + 48), _mm_unpackhi_epi16(ab1, cd1));
}

void ert_qgemm_pack_b_quad(const struct ert_qgemm_kernel *k, const uint8_t *const rows[4],
			   uint8_t flip, int64_t nc, int64_t K4, int64_t k4, uint8_t *dst,
			   int32_t *colsum)
{
	const int64_t NR = ert_qgemm_nr(k);
	const __m128i vflip = _mm_set1_epi8((char)flip);
	const uint8_t *r[4];
	/* a missing row packs as zero: its raw bytes are the flip */
	uint8_t fill[16];

	memset(fill, flip, sizeof(fill));
	for (int64_t j0 = 0; j0 < nc; j0 += NR) {
		int64_t w = nc - j0 < NR ? round_up(nc - j0, k->vc) : NR, real = nc - j0;
		uint8_t *d = dst + (size_t)(j0 * K4 * 4) + (size_t)(k4 * w * 4);
		int64_t j = 0;

		if (real > w)
			real = w;
		for (int t = 0; t < 4; t++)
			r[t] = rows[t] ? rows[t] + j0 : NULL;
		for (; j + 16 <= real; j += 16)
			quad16(d + 4 * j, r[0] ? r[0] + j : fill, r[1] ? r[1] + j : fill,
			       r[2] ? r[2] + j : fill, r[3] ? r[3] + j : fill, vflip);
		for (; j < real; j++)
			for (int t = 0; t < 4; t++)
				d[4 * j + t] = r[t] ? (uint8_t)(r[t][j] ^ flip) : 0;
		if (j < w)
			memset(d + 4 * j, 0, (size_t)(4 * (w - j)));
	}
	if (!colsum)
		return;
	for (int t = 0; t < 4; t++) {
		if (!rows[t])
			continue;
		for (int64_t j = 0; j < nc; j++)
			colsum[j] += (uint8_t)(rows[t][j] ^ flip);
	}
}

void ert_qgemm_pack_b(const struct ert_qgemm_kernel *k, const void *b, bool b_s8, int64_t rs,
		      int64_t cs, int64_t K, int64_t nc, uint8_t *dst, int32_t *colsum)
{
	const int64_t NR = ert_qgemm_nr(k), K4 = ert_qgemm_k4(K);
	const uint8_t flip = b_s8 ? 0x80 : 0, *src = b;

	if (colsum)
		memset(colsum, 0, (size_t)nc * sizeof(*colsum));
	if (cs == 1) {
		/* rows of B are contiguous: interleave them four at a time */
		for (int64_t q = 0; q < K4; q++) {
			const uint8_t *rows[4];

			for (int t = 0; t < 4; t++)
				rows[t] = 4 * q + t < K ? src + (4 * q + t) * rs : NULL;
			ert_qgemm_pack_b_quad(k, rows, flip, nc, K4, q, dst, colsum);
		}
		return;
	}
	for (int64_t j0 = 0; j0 < nc; j0 += NR) {
		int64_t w = nc - j0 < NR ? round_up(nc - j0, k->vc) : NR;
		uint8_t *d = dst + (size_t)(j0 * K4 * 4);

		for (int64_t q = 0; q < K4; q++) {
			for (int64_t j = 0; j < w; j++) {
				uint8_t *o = d + (q * w + j) * 4;

				for (int t = 0; t < 4; t++) {
					int64_t p = 4 * q + t;

					o[t] = j0 + j < nc && p < K
						       ? (uint8_t)(src[p * rs + (j0 + j) * cs] ^ flip)
						       : 0;
					if (colsum && j0 + j < nc)
						colsum[j0 + j] += o[t];
				}
			}
		}
	}
}

/* ---- pack-cache entries ---- */

static const struct ert_qgemm_kernel *key_kernel(const struct ert_cpu_pack_key *key)
{
	int i = key->fmt & 0xff;

	for (int n = 0; ert_qgemm_kernels[n]; n++)
		if (n + 1 == i)
			return ert_qgemm_kernels[n];
	return NULL;
}

int ert_qgemm_key_fmt(const struct ert_qgemm_kernel *k, bool u8)
{
	int i = 0;

	while (ert_qgemm_kernels[i] && ert_qgemm_kernels[i] != k)
		i++;
	return (i + 1) | (u8 ? ERT_QGEMM_KEY_U8 : 0);
}

size_t ert_qgemm_entry_bytes(const struct ert_cpu_pack_key *key)
{
	const struct ert_qgemm_kernel *k = key_kernel(key);
	size_t bytes;

	if (!k)
		return 64;
	if (key->kind == ERT_CPU_PACK_Q8A)
		bytes = (size_t)((key->rows + k->mr - 1) / k->mr) * ert_qgemm_a_block_bytes(k, key->cols) +
			(size_t)round_up(key->rows, k->mr) * sizeof(int32_t);
	else
		bytes = ert_qgemm_b_bytes(k, key->rows, key->cols) +
			(size_t)round_up(key->cols, k->vc) * sizeof(int32_t);
	return (bytes | 63) + 1;
}

void ert_qgemm_entry_pack(const struct ert_cpu_pack_key *key, void *dst)
{
	const struct ert_qgemm_kernel *k = key_kernel(key);
	const bool u8 = key->fmt & ERT_QGEMM_KEY_U8;
	const uint8_t *src = (const uint8_t *)(const void *)key->src;
	uint8_t *d = dst;

	if (!k)
		return;
	if (key->kind == ERT_CPU_PACK_Q8A) {
		size_t blk = ert_qgemm_a_block_bytes(k, key->cols);
		int64_t nblk = (key->rows + k->mr - 1) / k->mr;
		int32_t *sums = (int32_t *)(d + (size_t)nblk * blk);

		for (int64_t b = 0; b < nblk; b++) {
			int64_t r0 = b * k->mr, mr = key->rows - r0;

			mr = mr < k->mr ? mr : k->mr;
			if (key->fmt & ERT_QGEMM_KEY_TAP4)
				pack_a_block_tap4(k, src + r0 * key->rs, u8, key->rs, mr, key->cols,
						  key->cs, d + (size_t)b * blk, sums + r0);
			else
				ert_qgemm_pack_a_block(k, src + r0 * key->rs, u8, key->rs, key->cs, mr,
						       key->cols, d + (size_t)b * blk, sums + r0);
		}
	} else {
		ert_qgemm_pack_b(k, src, !u8, key->rs, key->cs, key->rows, key->cols, d,
				 (int32_t *)(d + ert_qgemm_b_bytes(k, key->rows, key->cols)));
	}
}
