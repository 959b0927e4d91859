/* SPDX-License-Identifier: MIT */
/* Dynamic quantisation, AVX2: vpmaddubsw + vpmaddwd (dq-tmpl.h). */
#include <immintrin.h>

#include "cpu/dq/dq.h"

static inline __m256i dq_dot32_avx2(__m256i u, __m256i s)
{
	return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

#define DQ_FN ert_dq_dot__avx2
#define dq_dot32 dq_dot32_avx2
#include "cpu/dq/dq-tmpl.h"
