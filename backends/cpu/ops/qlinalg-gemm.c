/* SPDX-License-Identifier: MIT */
/*
 * The integer convolutions and matrix products at the SIMD levels, on the
 * packed int8 GEMM (cpu/qgemm/qgemm.h). Convolution is a GEMM per image and
 * group: the weights (M x K, K = cin/group x window) are its A, packed once
 * at plan time; the output pixels are its columns, their B panels packed per
 * tile of pixels from the image (the input planes themselves for 1x1
 * stride-1 layers, else the tile's im2col, the zero point as padding).
 * Matrix products use A as A and B (the weights,
 * packed at plan time when constant) as B. Each lane takes a tile of columns
 * and a chunk of rows, packs what it needs into its slot of the workspace
 * and finishes every output of the tile: corrections, requantisation and
 * store in the level's epilogue. The accumulators equal the reference's
 * bit for bit, and so do the outputs.
 */
#include <emmintrin.h>
#include <string.h>

#include "cpu/ops/qlinalg.h"
#include "cpu/qgemm/qgemm.h"

/* Bytes of packed B a lane aims for: its panels stay in L2 across the rows. */
#define B_BUDGET (192 * 1024)
/* Rows whose int32 sums a lane holds at once (per B panel), and bytes of A it packs. */
#define C_ROWS 256
#define A_BUDGET (128 * 1024)
/* Bytes of im2col rows a lane fills at a time, packed into B while in L1. */
#define IM_BUDGET (16 * 1024)
#define TILE_LD ERT_QGEMM_NR_MAX
/* K4 steps ahead whose input rows a 1x1 convolution's B packing prefetches. */
#define PF_QUADS 2

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t rup(int64_t v, int64_t to)
{
	return (v + to - 1) / to * to;
}

static size_t rup64(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

/* Columns per lane tile: about B_BUDGET of packed B, whole panels, at most 8. */
static int64_t tile_cols(const struct ert_qgemm_kernel *k, int64_t K, int64_t n)
{
	int64_t nr = ert_qgemm_nr(k), nc = B_BUDGET / (ert_qgemm_k4(K) * 4) / nr * nr;

	nc = nc < nr ? nr : nc > 8 * nr ? 8 * nr : nc;
	return min64(nc, rup(n > 0 ? n : 1, k->vc));
}

/* Rows of A a lane packs at a time when A is not prepacked: A_BUDGET, whole blocks. */
static int64_t a_rows(const struct ert_qgemm_kernel *k, int64_t K, int64_t m)
{
	int64_t r = (int64_t)(A_BUDGET / (ert_qgemm_a_step_bytes(k) * (size_t)ert_qgemm_k4(K))) * k->mr;

	r = r < k->mr ? k->mr : r > C_ROWS ? C_ROWS : r;
	return min64(r, rup(m, k->mr));
}

/*
 * Input channels whose im2col rows (kk x nc bytes each) a lane fills at a
 * time: about IM_BUDGET, a multiple of 4 (so that a chunk's rows are whole
 * K4 steps) unless it is all of them.
 */
static int64_t im2col_chans(int64_t kk, int64_t cin_g, int64_t nc)
{
	int64_t ch = IM_BUDGET / (kk * (nc > 0 ? nc : 1)) / 4 * 4;

	ch = ch < 4 ? 4 : ch;
	return ch < cin_g ? ch : cin_g;
}

/*
 * A lane's slot: packed B of the tile, its column sums, a per-column term,
 * packed A rows and their sums, the int32 sums of C_ROWS rows of a panel,
 * and a chunk of the tile's im2col rows (im2col_chans() x kk rows of nc
 * bytes) unless B comes from the planes (@kk 0).
 */
struct lane_layout {
	size_t b, cs, t, a, rs, c, rows, total;
};

static size_t tap4_bytes(const struct iconv_job *j, int64_t nc);

static void lane_layout(const struct ert_qgemm_kernel *k, int64_t K, int64_t nc, int64_t m,
			int64_t kk, const struct iconv_job *j, struct lane_layout *l)
{
	size_t im;

	int64_t ar = a_rows(k, K, m);
	size_t off = 0;

	l->b = off;
	off += rup64(ert_qgemm_b_bytes(k, K, nc));
	l->cs = off;
	off += rup64((size_t)nc * sizeof(int32_t));
	l->t = off;
	off += rup64((size_t)nc * sizeof(int32_t));
	l->a = off;
	off += rup64((size_t)(ar / k->mr) * ert_qgemm_a_block_bytes(k, K));
	l->rs = off;
	off += rup64((size_t)ar * sizeof(int32_t));
	l->c = off;
	off += rup64((size_t)min64(C_ROWS, rup(m, k->mr)) * TILE_LD * sizeof(int32_t));
	l->rows = off;
	im = kk ? rup64((size_t)(im2col_chans(kk, K / kk, nc) * kk * nc)) : 0;
	/* or the tile's input rows, channels interleaved by four (pack_tap4()) */
	if (kk && j && tap4_bytes(j, nc) > im)
		im = tap4_bytes(j, nc);
	off += im;
	l->total = off;
}

/* The largest slot any level's kernel needs for M x K times K x n. */
static size_t max_slot(int64_t m, int64_t K, int64_t n, int64_t kk, const struct iconv_job *j)
{
	size_t most = 0;

	for (int i = 0; ert_qgemm_kernels[i]; i++) {
		struct lane_layout l;

		lane_layout(ert_qgemm_kernels[i], K, tile_cols(ert_qgemm_kernels[i], K, n), m, kk, j,
			    &l);
		most = l.total > most ? l.total : most;
	}
	return most;
}

/* A tile's product: @rows rows of packed A (blocks a_blk bytes apart) times its packed B. */
struct tile {
	const struct ert_qgemm_kernel *k;
	int64_t K4, nc;
	const uint8_t *a, *b;
	size_t a_blk;
	int32_t *c;
};

/*
 * Rows [i0, i0 + rows) of the tile's rows (at most MR) are done for columns
 * [j0, j0 + w): their raw sums, TILE_LD apart.
 */
typedef void (*tile_finish_fn)(void *ctx, int64_t i0, int64_t rows, const int32_t *raw,
			       int64_t j0, int64_t w);

/*
 * Panel by panel of B, K in blocks of the kernel's kc4 steps so that the
 * panel's block stays in L1 while every row block of A passes it. In K's
 * last block each row block is finished right after its micro-kernel call,
 * while its raw sums are in L1 (one epilogue call per micro-tile; the sums
 * of all the rows of a panel, up to C_ROWS x NR int32, need not fit).
 */
static void run_tile(const struct tile *t, int64_t rows, tile_finish_fn finish, void *ctx)
{
	const struct ert_qgemm_kernel *k = t->k;
	const int64_t NR = ert_qgemm_nr(k), K4 = t->K4;
	const size_t step = ert_qgemm_a_step_bytes(k);

	for (int64_t j0 = 0; j0 < t->nc; j0 += NR) {
		int64_t w = min64(NR, t->nc - j0), bw = t->nc - j0 < NR ? rup(t->nc - j0, k->vc) : NR;
		ert_qgemm_ukernel_fn fn = k->ukernel[(w + k->vc - 1) / k->vc - 1];
		const uint8_t *bp = t->b + j0 * K4 * 4;

		for (int64_t k0 = 0; k0 < K4; k0 += k->kc4) {
			int64_t kc = min64(k->kc4, K4 - k0);
			bool last = k0 + kc >= K4;

			for (int64_t i0 = 0; i0 < rows; i0 += k->mr) {
				int32_t *c = t->c + i0 * TILE_LD;

				/*
				 * the next row block's first K steps of A: the
				 * kernels fetch A ahead within a call (AMX), and
				 * the first steps of each call would wait a miss
				 */
				if (i0 + k->mr < rows) {
					const char *na = (const char *)t->a +
							 (size_t)(i0 / k->mr + 1) * t->a_blk +
							 (size_t)k0 * step;
					const int64_t nb = min64(kc, 32) * (int64_t)step;

					for (int64_t o = 0; o < nb; o += 64)
						_mm_prefetch(na + o, _MM_HINT_T0);
				}
				fn(kc, t->a + (size_t)(i0 / k->mr) * t->a_blk + (size_t)k0 * step,
				   bp + k0 * bw * 4, bw, c, TILE_LD, k0 > 0);
				if (last)
					finish(ctx, i0, min64(k->mr, rows - i0), c, j0, w);
			}
		}
	}
}

/* Rows per chunk: all of them, unless too few tiles would leave threads idle. */
static int64_t row_chunk(const struct ert_cpu *cpu, const struct ert_qgemm_kernel *k,
			 int64_t items, int64_t rows)
{
	int64_t want = 4 * (int64_t)(cpu->num_threads > 0 ? cpu->num_threads : 1), chunks;

	if (cpu->num_threads <= 1 || items >= want)
		return rup(rows, k->mr);
	chunks = (want + items - 1) / items;
	/* not below 4 blocks of rows: every chunk packs the tile's B again */
	if (chunks > rows / (4 * k->mr))
		chunks = rows / (4 * k->mr);
	if (chunks < 1)
		chunks = 1;
	return rup((rows + chunks - 1) / chunks, k->mr);
}

/* The output stage of every row, from the op's ert_qout and channel table. */
static void epi_base(struct ert_qgemm_epi *e, bool qlinear, bool quantised,
		     const struct ert_qout *qo)
{
	memset(e, 0, sizeof(*e));
	e->mode = !qlinear ? ERT_QGEMM_OUT_I32 : !quantised ? ERT_QGEMM_OUT_F32
			   : qo->fixed		? ERT_QGEMM_OUT_FIXED
						: ERT_QGEMM_OUT_FLOAT;
	if (qlinear && quantised) {
		e->zp = qo->zp;
		e->lo = qo->lo;
		e->hi = qo->hi;
	}
}

/* The clamps ert_requant_fixed() applies to its multiplier and shift. */
static int32_t clamp_mult(int32_t m)
{
	return m < 0 ? 0 : m;
}

static int32_t clamp_shift(int32_t s)
{
	return s > 30 ? 30 : s < -31 ? -31 : s;
}

/* ---- convolution ---- */

struct qconv {
	const struct iconv_job *j;
	const struct ert_qgemm_kernel *k;
	const uint8_t *w_packed;  /* prepacked A per group, w_per bytes apart; or NULL */
	size_t w_per;
	struct lane_layout lay;
	struct ert_qgemm_epi base;
	int64_t K, K4, nc, ntiles, mchunk, nchunks;
	int64_t arows;            /* rows of A packed at a time when not prepacked */
	int64_t im_ch;            /* input channels per im2col chunk (all when direct) */
	int64_t osz;              /* output element bytes */
	bool w_u8, need_cs, direct;
	bool res_epi;             /* the fused residual in the epilogue (fixed rule) */
	bool tap4;                /* B in tap-major quads (pack_tap4()) */
	uint8_t xflip, xpad;      /* x's flip to unsigned; its zero point's byte (padding) */
	int32_t bz;               /* x's zero point in packed units */
	const int32_t *cadd, *naz, *mult, *shift; /* conv_tables() */
	const double *f;
};

/*
 * Per output channel, in front of the lanes: bias + K az' bz' (the row's
 * constant but for -bz' rowsum), -az', the fixed rule's multiplier and
 * shift as ert_requant_fixed() clamps them, and the float rule's factor.
 */
static size_t conv_table_i32(int64_t m)
{
	return rup64((size_t)(m > 0 ? m : 1) * sizeof(int32_t));
}

static size_t conv_tables(int64_t m)
{
	return 4 * conv_table_i32(m) + rup64((size_t)(m > 0 ? m : 1) * sizeof(double));
}

/* Dense and grouped convolutions; depthwise ones (under 4 rows a group): qlinalg-dw.c. */
static bool conv_usable(const struct iconv_job *j)
{
	return j->m_g >= 4 && j->cin_g * j->kk > 0 && j->out_sp > 0;
}

static bool conv_direct(const struct ert_conv_geom *g)
{
	for (int d = 0; d < 3; d++)
		if (g->k[d] != 1 || g->stride[d] != 1 || g->pad_b[d] != 0 || g->in[d] != g->out[d])
			return false;
	return true;
}

/*
 * Tap-major quads (pack_tap4()): a 2D convolution through im2col whose
 * group has a multiple of 4 input channels. K4 step (ci / 4) * kk + tap
 * then holds channels ci .. ci + 3 of one tap, four bytes of one input
 * pixel once the input rows are interleaved by four channels. The weights
 * follow (ERT_QGEMM_KEY_TAP4; for 1x1 the orders are the same).
 */
static bool conv_tap4(const struct iconv_job *j)
{
	const struct ert_conv_geom *g = &j->g;

	return j->cin_g % 4 == 0 && g->k[0] == 1 && g->in[0] == 1 && g->out[0] == 1 &&
	       !conv_direct(g);
}

/* Output rows a tile of @nc pixels touches, and the input rows they read. */
static int64_t tap4_out_rows(const struct ert_conv_geom *g, int64_t nc)
{
	return min64(g->out[1], (nc + g->out[2] - 1) / g->out[2] + 1);
}

static int64_t tap4_in_rows(const struct ert_conv_geom *g, int64_t nc)
{
	return min64(g->in[1], (tap4_out_rows(g, nc) - 1) * g->stride[1] +
				       (g->k[1] - 1) * g->dil[1] + 1);
}

/* A lane's bytes of interleaved input rows for a tile of @nc pixels; 0 when not tap-major. */
static size_t tap4_bytes(const struct iconv_job *j, int64_t nc)
{
	if (!conv_tap4(j))
		return 0;
	/* and 64 bytes past the end, which the stride-2 copies may load */
	return rup64((size_t)(j->cin_g * tap4_in_rows(&j->g, nc) * j->g.in[2]) + 64);
}

size_t ert_qconv_gemm_workspace(const struct iconv_job *j, uint32_t lanes)
{
	if (!conv_usable(j))
		return 0;
	return conv_tables(j->m) +
	       max_slot(j->m_g, j->cin_g * j->kk, j->out_sp, conv_direct(&j->g) ? 0 : j->kk, j) *
		       (lanes < 1 ? 1 : lanes);
}

ert_status ert_qconv_gemm_prepare(struct ert_cpu *cpu, struct ert_exec *x,
				  const struct iconv_job *j, struct ert_err *err)
{
	const struct ert_qgemm_kernel *k = ert_qgemm_kernel_for(cpu->isa);
	uint32_t wi = j->qlinear ? 3 : 1;
	struct ert_cpu_packed *pk;
	ert_status st;

	if (!k || !conv_usable(j))
		return ERT_OK;
	x->kernel = k->name;
	if (!x->in_const || !x->in_const[wi])
		return ERT_OK;

	struct ert_cpu_pack_key key = {
		.src = (const float *)j->w->data, .kind = ERT_CPU_PACK_Q8A, .panel = k->mr,
		.rows = j->m_g, .cols = j->cin_g * j->kk, .rs = j->cin_g * j->kk, .cs = 1,
		.count = j->group, .src_stride = j->m_g * j->cin_g * j->kk,
		.fmt = ert_qgemm_key_fmt(k, j->w->dtype == ERT_DTYPE_UINT8),
	};

	if (conv_tap4(j) && j->kk > 1) {
		key.cs = j->kk;
		key.fmt |= ERT_QGEMM_KEY_TAP4;
	}
	st = ert_cpu_pack_get(cpu, &key, &pk);
	if (st != ERT_OK)
		ert_node_fail(x->node, err, st, "out of memory packing weights");
	x->state = pk;
	return st;
}

/*
 * @n bytes of @v: padding runs are mostly a byte or two, or a whole run
 * (an output row whose tap falls in the top or bottom padding: 7 to 112
 * bytes), not worth a call. Overlapping stores and no byte loop, which the
 * compiler turns into a call to memset (1.3 million a resnet50 run).
 */
static inline void fill(uint8_t *dst, uint8_t v, int64_t n)
{
	const __m128i b = _mm_set1_epi8((char)v);

	if (n >= 16) {
		int64_t c = 0;

		for (; c + 16 <= n; c += 16)
			_mm_storeu_si128((__m128i *)(dst + c), b);
		if (c < n)
			_mm_storeu_si128((__m128i *)(dst + n - 16), b);
	} else if (n >= 8) {
		_mm_storel_epi64((__m128i *)dst, b);
		_mm_storel_epi64((__m128i *)(dst + n - 8), b);
	} else if (n >= 4) {
		uint32_t w = v * 0x01010101u;

		memcpy(dst, &w, 4);
		memcpy(dst + n - 4, &w, 4);
	} else if (n > 0) {
		dst[0] = v;
		dst[n / 2] = v;
		dst[n - 1] = v;
	}
}

/*
 * @n bytes from @src: the runs of an output row (7 to 112 bytes in the CNNs)
 * by 16-byte moves, the last one overlapping the one before; shorter runs
 * by two overlapping 8- or 4-byte moves. No byte outside either run is read
 * or written, and no call per run.
 */
static inline void copy_run(uint8_t *restrict dst, const uint8_t *restrict src, int64_t n)
{
	if (n >= 16) {
		int64_t c = 0;

		/*
		 * c opaque to the compiler each step: else it turns the loop
		 * into a call to memcpy (800 thousand a resnet50 run)
		 */
		for (; c + 16 <= n; c += 16) {
			__asm__("" : "+r"(c));
			_mm_storeu_si128((__m128i *)(dst + c),
					 _mm_loadu_si128((const __m128i *)(src + c)));
		}
		if (c < n)
			_mm_storeu_si128((__m128i *)(dst + n - 16),
					 _mm_loadu_si128((const __m128i *)(src + n - 16)));
	} else if (n >= 8) {
		uint64_t a, b;

		memcpy(&a, src, 8);
		memcpy(&b, src + n - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;

		memcpy(&a, src, 4);
		memcpy(&b, src + n - 4, 4);
		memcpy(dst, &a, 4);
		memcpy(dst + n - 4, &b, 4);
	} else if (n > 0) {
		/* 1 to 3 bytes; no loop (it would be a call to memcpy too) */
		dst[0] = src[0];
		dst[n / 2] = src[n / 2];
		dst[n - 1] = src[n - 1];
	}
}

/* @n bytes src[0], src[sw], ...: a copy, the even bytes (SSE2), or one at a time. */
static void copy_strided(uint8_t *restrict dst, const uint8_t *restrict src, int64_t n,
			 int64_t sw)
{
	int64_t c = 0;

	if (sw == 1) {
		copy_run(dst, src, n);
		return;
	}
	if (sw == 2) {
		const __m128i even = _mm_set1_epi16(0x00ff);

		/* reads up to src[2c + 31], short of the last element's src[2n - 2] */
		for (; c + 17 <= n; c += 16) {
			__m128i lo = _mm_and_si128(_mm_loadu_si128((const __m128i *)(src + 2 * c)), even);
			__m128i hi = _mm_and_si128(_mm_loadu_si128((const __m128i *)(src + 2 * c + 16)),
						   even);

			_mm_storeu_si128((__m128i *)(dst + c), _mm_packus_epi16(lo, hi));
		}
		/*
		 * The last 16 (overlapping the ones before): 32 bytes that end at the
		 * last element src[2n - 2], so the wanted ones are the odd bytes.
		 */
		if (c < n && n >= 17) {
			const uint8_t *s = src + 2 * (n - 16) - 1;
			__m128i lo = _mm_srli_epi16(_mm_loadu_si128((const __m128i *)s), 8);
			__m128i hi = _mm_srli_epi16(_mm_loadu_si128((const __m128i *)(s + 16)), 8);

			_mm_storeu_si128((__m128i *)(dst + n - 16), _mm_packus_epi16(lo, hi));
			c = n;
		} else if (n >= 5) {
			/*
			 * Runs of 5 to 16 (the 14- and 7-pixel rows of the late
			 * stages): the first elements from the even bytes of a load
			 * at src, the last from the odd bytes of one ending at the
			 * last element src[2n - 2]; both inside the run's 2n - 1 bytes.
			 */
			if (n >= 9) {
				__m128i lo = _mm_and_si128(_mm_loadu_si128((const __m128i *)src), even);
				__m128i hi = _mm_srli_epi16(
					_mm_loadu_si128((const __m128i *)(src + 2 * n - 17)), 8);
				__m128i v = _mm_packus_epi16(lo, hi);

				_mm_storel_epi64((__m128i *)dst, v);
				_mm_storel_epi64((__m128i *)(dst + n - 8), _mm_unpackhi_epi64(v, v));
			} else {
				__m128i lo = _mm_and_si128(_mm_loadl_epi64((const __m128i *)src), even);
				__m128i hi = _mm_srli_epi16(
					_mm_loadl_epi64((const __m128i *)(src + 2 * n - 9)), 8);
				__m128i v = _mm_packus_epi16(lo, hi);
				uint32_t a = (uint32_t)_mm_cvtsi128_si32(v);
				uint32_t b = (uint32_t)_mm_cvtsi128_si32(_mm_unpackhi_epi64(v, v));

				memcpy(dst, &a, 4);
				memcpy(dst + n - 4, &b, 4);
			}
			c = n;
		}
	}
	for (; c < n; c++)
		dst[c] = src[c * sw];
}

/*
 * The im2col rows of the group's channels [ci0, ci1) for a tile: row
 * (ci - ci0) * kk + tap (nc bytes) holds the byte that tap (kd, kh, kw) of
 * channel ci reads for each output pixel p0 .. p0 + nc - 1, @pad where it
 * falls in the padding. Pixels go by runs along one output row, each
 * decomposed once for every tap and channel.
 */
static void im2col_tile(uint8_t *dst, const uint8_t *xg, const struct iconv_job *j, int64_t p0,
			int64_t nc, uint8_t pad, int64_t ci0, int64_t ci1)
{
	const struct ert_conv_geom *g = &j->g;
	const int64_t OH = g->out[1], OW = g->out[2], IH = g->in[1], IW = g->in[2];
	const int64_t sw = g->stride[2], kk = j->kk;

	for (int64_t p = p0, off = 0; p < p0 + nc;) {
		int64_t ow = p % OW, oh = (p / OW) % OH, od = p / OW / OH;
		int64_t len = min64(OW - ow, p0 + nc - p);

		for (int64_t kd = 0, t = 0; kd < g->k[0]; kd++) {
			int64_t iz = od * g->stride[0] - g->pad_b[0] + kd * g->dil[0];

			for (int64_t kh = 0; kh < g->k[1]; kh++) {
				int64_t iy = oh * g->stride[1] - g->pad_b[1] + kh * g->dil[1];
				bool in = iz >= 0 && iz < g->in[0] && iy >= 0 && iy < IH;

				for (int64_t kw = 0; kw < g->k[2]; kw++, t++) {
					int64_t ix0 = ow * sw - g->pad_b[2] + kw * g->dil[2], lo = 0, hi = -1;
					/* the tap's first input of the run, once inside */
					int64_t so = (iz * IH + iy) * IW + ix0;

					if (in) {
						lo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
						hi = IW - 1 - ix0 < 0 ? -1 : (IW - 1 - ix0) / sw;
						hi = min64(hi, len - 1);
					}
					for (int64_t ci = ci0; ci < ci1; ci++) {
						uint8_t *d = dst + ((ci - ci0) * kk + t) * nc + off;

						if (lo > hi) {
							fill(d, pad, len);
							continue;
						}
						fill(d, pad, lo);
						copy_strided(d + lo, xg + (so + ci * j->in_sp + lo * sw),
							     hi - lo + 1, sw);
						fill(d + hi + 1, pad, len - hi - 1);
					}
				}
			}
		}
		off += len;
		p += len;
	}
}

/*
 * Four rows of @n bytes interleaved into @n quads at @dst, each byte xor-ed
 * with @flip: 16 quads at a time, the tail one at a time.
 */
static void interleave4(uint8_t *restrict dst, const uint8_t *const r[4], int64_t n, uint8_t flip)
{
	const __m128i f = _mm_set1_epi8((char)flip);
	int64_t c = 0;

	for (; c + 16 <= n; c += 16) {
		__m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r[0] + c)), f);
		__m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r[1] + c)), f);
		__m128i cc = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r[2] + c)), f);
		__m128i d = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r[3] + c)), f);
		__m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
		__m128i cd0 = _mm_unpacklo_epi8(cc, d), cd1 = _mm_unpackhi_epi8(cc, d);
		uint8_t *o = dst + 4 * c;

		_mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi16(ab0, cd0));
		_mm_storeu_si128((__m128i *)(o + 16), _mm_unpackhi_epi16(ab0, cd0));
		_mm_storeu_si128((__m128i *)(o + 32), _mm_unpacklo_epi16(ab1, cd1));
		_mm_storeu_si128((__m128i *)(o + 48), _mm_unpackhi_epi16(ab1, cd1));
	}
	for (; c < n; c++)
		for (int t = 0; t < 4; t++)
			dst[4 * c + t] = r[t][c] ^ flip;
}

/*
 * @n 4-byte words src[0], src[sw], ... (words): a copy, the even words
 * (SSE2 shuffles, four from 32 bytes), or one at a time.
 */
static void copy_words(uint8_t *restrict dst, const uint8_t *restrict src, int64_t n, int64_t sw)
{
	int64_t c = 0;

	if (sw == 1) {
		copy_run(dst, src, 4 * n);
		return;
	}
	if (sw == 2) {
		/* loads words 2c .. 2c + 7, inside the run's 2n - 1 while c + 4 < n */
		for (; c + 4 < n; c += 4) {
			__m128 lo = _mm_loadu_ps((const float *)(const void *)(src + 8 * c));
			__m128 hi = _mm_loadu_ps((const float *)(const void *)(src + 8 * c + 16));

			_mm_storeu_ps((float *)(void *)(dst + 4 * c),
				      _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
		}
	}
	for (; c < n; c++)
		memcpy(dst + 4 * c, src + 4 * c * sw, 4);
}

/*
 * B of a tile in tap-major quads (conv_tap4()), straight from the input:
 * the input rows the tile reads, their channels interleaved by four
 * (flipped) into the lane's slot once; then per run of output pixels
 * along a row inside one panel, per channel quad and tap, the run's words
 * copied into the panel's K4 step (padding: the zero point's word). One
 * copy of 4 len bytes where im2col made four of len bytes and the packing
 * interleaved them again; the quads' bytes are those of the im2col path.
 */
static void pack_tap4(const struct qconv *c, uint8_t *slot, const uint8_t *xg, int64_t p0,
		      int64_t nc, uint8_t *bp, int32_t *cs)
{
	const struct iconv_job *j = c->j;
	const struct ert_conv_geom *g = &j->g;
	const int64_t OW = g->out[2], IH = g->in[1], IW = g->in[2];
	const int64_t sh = g->stride[1], sw = g->stride[2], KH = g->k[1], KW = g->k[2];
	const int64_t NR = ert_qgemm_nr(c->k), K4 = c->K4, c4n = j->cin_g / 4, kk = j->kk;
	const int64_t oh0 = p0 / OW, oh1 = (p0 + nc - 1) / OW;
	const int64_t y0 = oh0 * sh - g->pad_b[1] < 0 ? 0 : oh0 * sh - g->pad_b[1];
	const int64_t y1 = min64(IH, oh1 * sh - g->pad_b[1] + (KH - 1) * g->dil[1] + 1);
	const int64_t L = y1 > y0 ? (y1 - y0) * IW : 0;     /* bytes per channel */
	const uint8_t pad = c->xpad ^ c->xflip;
	uint8_t *x4 = slot + c->lay.rows;

	for (int64_t c4 = 0; c4 < c4n && L > 0; c4++) {
		const uint8_t *r[4];

		for (int t = 0; t < 4; t++)
			r[t] = xg + (4 * c4 + t) * j->in_sp + y0 * IW;
		interleave4(x4 + c4 * L * 4, r, L, c->xflip);
	}
	for (int64_t p = p0; p < p0 + nc;) {
		const int64_t ow = p % OW, oh = p / OW, col = p - p0, j0 = col / NR * NR;
		const int64_t len = min64(min64(OW - ow, p0 + nc - p), j0 + NR - col);
		const int64_t w = nc - j0 < NR ? rup(nc - j0, c->k->vc) : NR;
		uint8_t *d0 = bp + j0 * K4 * 4 + (col - j0) * 4;

		for (int64_t kh = 0, t = 0; kh < KH; kh++) {
			int64_t iy = oh * sh - g->pad_b[1] + kh * g->dil[1];
			bool in = iy >= 0 && iy < IH;

			for (int64_t kw = 0; kw < KW; kw++, t++) {
				int64_t ix0 = ow * sw - g->pad_b[2] + kw * g->dil[2], lo = 0, hi = -1;
				const uint8_t *s = x4 + ((in ? iy - y0 : 0) * IW + ix0) * 4;

				if (in) {
					lo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
					hi = IW - 1 - ix0 < 0 ? -1 : (IW - 1 - ix0) / sw;
					hi = min64(hi, len - 1);
				}
				for (int64_t c4 = 0; c4 < c4n; c4++) {
					uint8_t *d = d0 + (c4 * kk + t) * w * 4;

					if (lo > hi) {
						fill(d, pad, 4 * len);
						continue;
					}
					fill(d, pad, 4 * lo);
					copy_words(d + 4 * lo, s + c4 * L * 4 + 4 * lo * sw, hi - lo + 1,
						   sw);
					fill(d + 4 * (hi + 1), pad, 4 * (len - hi - 1));
				}
			}
		}
		p += len;
	}
	/* the last panel's columns past the tile, as ert_qgemm_pack_b_quad() leaves them */
	const int64_t jl = (nc - 1) / NR * NR, wl = rup(nc - jl, c->k->vc);

	for (int64_t q = 0; nc - jl < wl && q < K4; q++)
		memset(bp + jl * K4 * 4 + (q * wl + nc - jl) * 4, 0, (size_t)(4 * (wl - nc + jl)));
	if (!cs)
		return;
	for (int64_t j0 = 0; j0 < nc; j0 += NR) {
		const int64_t w = nc - j0 < NR ? rup(nc - j0, c->k->vc) : NR, n = min64(NR, nc - j0);

		for (int64_t q = 0; q < K4; q++) {
			const uint8_t *b = bp + j0 * K4 * 4 + q * w * 4;

			for (int64_t jj = 0; jj < n; jj++)
				cs[j0 + jj] += b[4 * jj] + b[4 * jj + 1] + b[4 * jj + 2] + b[4 * jj + 3];
		}
	}
}

/* The rows of one lane's tile: image n, group gi, pixels from p0, rows from m0 of the group. */
struct conv_rows {
	const struct qconv *c;
	int64_t n, gi, p0, m0, nc;
	const int32_t *cs;        /* per column of the tile, or NULL */
	struct ert_qgemm_epi e;   /* the output stage, but for the row terms */
	int32_t c0[C_ROWS];       /* per row: bias + K az' bz' - bz' rowsum */
};

static void conv_finish(void *ctx, int64_t i0, int64_t rows, const int32_t *raw, int64_t j0,
			int64_t w)
{
	struct conv_rows *r = ctx;
	const struct qconv *c = r->c;
	const struct iconv_job *j = c->j;
	const int64_t m0 = r->gi * j->m_g + r->m0 + i0;
	/* v = raw + (bias + K az' bz' - bz' rowsum) - az' colsum */
	const struct ert_qgemm_rows rt = { .c0 = r->c0 + i0, .c1 = c->naz + m0,
					   .mult1 = c->mult + m0, .shift1 = c->shift + m0,
					   .f1 = c->f + m0 };

	r->e.u = r->cs ? r->cs + j0 : NULL;
	if (c->res_epi)
		r->e.r = (const uint8_t *)j->r->data + (r->n * j->m + m0) * j->out_sp + r->p0 + j0;
	c->k->epi_rows(raw, TILE_LD, rows, w, &r->e, &rt,
		       (uint8_t *)j->y->data +
			       ((r->n * j->m + m0) * j->out_sp + r->p0 + j0) * (size_t)c->osz,
		       j->out_sp * c->osz);
	/*
	 * The fused residual's rows of the tile, which the epilogue of the
	 * later panels reads (or qconv_item() once every panel is done): a few
	 * lines from another plane each, which the hardware prefetchers do not
	 * see coming; fetched into L2 while the other panels are computed.
	 */
	for (int64_t i = 0; j->res && j0 == 0 && i < rows; i++) {
		const char *rp = (const char *)j->r->data + (r->n * j->m + m0 + i) * j->out_sp + r->p0;

		for (int64_t o = 0; o < r->nc; o += 64)
			_mm_prefetch(rp + o, _MM_HINT_T1);
		_mm_prefetch(rp + r->nc - 1, _MM_HINT_T1);
	}
}

static void qconv_item(const void *arg, int64_t it, uint32_t *slot)
{
	const struct qconv *c = arg;
	const struct iconv_job *j = c->j;
	const struct ert_qgemm_kernel *k = c->k;
	const int64_t K = c->K, K4 = c->K4;
	uint8_t *ws = (uint8_t *)slot, *bp = ws + c->lay.b;
	int32_t *cs = c->need_cs ? (int32_t *)(ws + c->lay.cs) : NULL;
	int64_t chunk = it % c->nchunks, r = it / c->nchunks;
	int64_t tl = r % c->ntiles, gi = (r / c->ntiles) % j->group, n = r / c->ntiles / j->group;
	int64_t p0 = tl * c->nc, nc = min64(c->nc, j->out_sp - p0);
	const uint8_t *xg = (const uint8_t *)j->x->data + (n * j->c_in + gi * j->cin_g) * j->in_sp;

	if (cs)
		memset(cs, 0, (size_t)nc * sizeof(*cs));
	/*
	 * The rows of B: the input planes themselves, or the tile's im2col, a
	 * chunk of channels at a time (whole K4 steps but for the last) packed
	 * while the chunk is in L1.
	 */
	if (c->tap4)
		pack_tap4(c, ws, xg, p0, nc, bp, cs);
	for (int64_t ci0 = 0; !c->tap4 && ci0 < j->cin_g; ci0 += c->im_ch) {
		const int64_t ci1 = min64(ci0 + c->im_ch, j->cin_g);
		const int64_t r0 = ci0 * j->kk, r1 = ci1 * j->kk;
		const uint8_t *src = xg + p0;
		int64_t src_stride = j->in_sp, first = 0;

		if (!c->direct) {
			im2col_tile(ws + c->lay.rows, xg, j, p0, nc, c->xpad, ci0, ci1);
			src = ws + c->lay.rows;
			src_stride = nc;
			first = r0;
		}
		for (int64_t q = r0 / 4; q < (r1 + 3) / 4; q++) {
			const uint8_t *rows[4];

			for (int t = 0; t < 4; t++)
				rows[t] = 4 * q + t < r1 ? src + (4 * q + t - first) * src_stride : NULL;
			/*
			 * From the planes, each row is a short run (nc bytes) of
			 * another plane, which the hardware prefetchers do not
			 * foresee: fetch those of the quad PF_QUADS ahead.
			 */
			if (c->direct && 4 * (q + PF_QUADS) + 3 < r1)
				for (int t = 0; t < 4; t++) {
					const char *pf = (const char *)src +
							 (4 * (q + PF_QUADS) + t) * src_stride;

					for (int64_t o = 0; o < nc; o += 64)
						_mm_prefetch(pf + o, _MM_HINT_T0);
					_mm_prefetch(pf + nc - 1, _MM_HINT_T0);
				}
			ert_qgemm_pack_b_quad(k, rows, c->xflip, nc, K4, q, bp, cs);
		}
	}

	const int64_t m_lo = chunk * c->mchunk, m_hi = min64(m_lo + c->mchunk, j->m_g);
	const size_t blk = ert_qgemm_a_block_bytes(k, K);
	const int64_t nblk = (j->m_g + k->mr - 1) / k->mr;
	const int64_t step = c->w_packed ? C_ROWS : c->arows;
	struct tile t = { .k = k, .K4 = K4, .nc = nc, .b = bp, .a_blk = blk,
			  .c = (int32_t *)(ws + c->lay.c) };
	struct conv_rows cr = { .c = c, .n = n, .gi = gi, .p0 = p0, .nc = nc, .cs = cs,
				.e = c->base };

	for (int64_t i0 = m_lo; i0 < m_hi; i0 += step) {
		int64_t rows = min64(step, m_hi - i0);
		const int32_t *rsum;

		if (c->w_packed) {
			const uint8_t *base = c->w_packed + (size_t)gi * c->w_per;

			t.a = base + (size_t)(i0 / k->mr) * blk;
			rsum = (const int32_t *)(base + (size_t)nblk * blk) + i0;
		} else {
			int32_t *rs = (int32_t *)(ws + c->lay.rs);
			const uint8_t *w = (const uint8_t *)j->w->data + (gi * j->m_g + i0) * K;

			for (int64_t b = 0; b < rows; b += k->mr)
				ert_qgemm_pack_a_block(k, w + b * K, c->w_u8, K, 1,
						       min64(k->mr, rows - b), K,
						       ws + c->lay.a + (size_t)(b / k->mr) * blk, rs + b);
			t.a = ws + c->lay.a;
			rsum = rs;
		}
		cr.m0 = i0;
		for (int64_t i = 0; i < rows; i++)
			cr.c0[i] = (int32_t)((uint32_t)c->cadd[gi * j->m_g + i0 + i] -
					     (uint32_t)c->bz * (uint32_t)rsum[i]);
		run_tile(&t, rows, conv_finish, &cr);
		/* else the fused QLinearAdd over the tile's rows while they are in cache */
		for (int64_t i = 0; j->res && !c->res_epi && i < rows; i++)
			ert_qconv_residual(j, (n * j->m + gi * j->m_g + i0 + i) * j->out_sp + p0, nc);
	}
}

bool ert_qconv_gemm_run(struct ert_cpu *cpu, struct ert_exec *x, const struct iconv_job *j,
			size_t skip, ert_status *st, struct ert_err *err)
{
	const struct ert_qgemm_kernel *k = ert_qgemm_kernel_for(cpu->isa);
	const struct ert_cpu_packed *pk = x->state;
	uint8_t *tables = x->workspace ? (uint8_t *)x->workspace + skip : NULL;
	size_t tsz = conv_tables(j->m), ts = conv_table_i32(j->m);
	int32_t *cadd, *naz, *mult, *shift;
	double *f;
	struct qconv c;
	int64_t items;

	if (!k || !conv_usable(j) || !tables || x->workspace_size < skip + tsz)
		return false;
	memset(&c, 0, sizeof(c));
	c.j = j;
	c.k = k;
	c.K = j->cin_g * j->kk;
	c.K4 = ert_qgemm_k4(c.K);
	c.w_u8 = j->w->dtype == ERT_DTYPE_UINT8;
	if (pk && (pk->key.fmt & ~ERT_QGEMM_KEY_TAP4) == ert_qgemm_key_fmt(k, c.w_u8)) {
		c.w_packed = (const uint8_t *)pk->data;
		c.w_per = pk->stride * sizeof(float);
	}
	/* tap-major B where A is so (prepacked), or where the orders are the same (1x1) */
	c.tap4 = conv_tap4(j) &&
		 (j->kk == 1 || (c.w_packed && (pk->key.fmt & ERT_QGEMM_KEY_TAP4)));
	for (int64_t m = 0; m < j->m && !c.need_cs; m++)
		c.need_cs = ert_qlinalg_zp(j->wzp, m) != (c.w_u8 ? 128 : 0);
	c.direct = conv_direct(&j->g);
	c.xflip = j->x->dtype == ERT_DTYPE_INT8 ? 0x80 : 0;
	c.xpad = (uint8_t)ert_qlinalg_zp(j->xzp, 0);
	c.bz = ert_qlinalg_zp(j->xzp, 0) + (c.xflip ? 128 : 0);
	cadd = (int32_t *)tables;
	naz = (int32_t *)(tables + ts);
	mult = (int32_t *)(tables + 2 * ts);
	shift = (int32_t *)(tables + 3 * ts);
	f = (double *)(tables + 4 * ts);
	for (int64_t m = 0; m < j->m; m++) {
		int32_t az = ert_qlinalg_zp(j->wzp, m) - (c.w_u8 ? 128 : 0);
		uint32_t bias = j->bias ? (uint32_t)((const int32_t *)j->bias->data)[m] : 0;

		cadd[m] = (int32_t)(bias + (uint32_t)c.K * (uint32_t)az * (uint32_t)c.bz);
		naz[m] = (int32_t)-(uint32_t)az;
		mult[m] = j->chans ? clamp_mult(j->chans[m].m) : 0;
		shift[m] = j->chans ? clamp_shift(j->chans[m].s) : 0;
		f[m] = j->chans ? j->chans[m].f : 0.0;
	}
	c.f = f;
	c.cadd = cadd;
	c.naz = naz;
	c.mult = mult;
	c.shift = shift;
	c.nc = tile_cols(k, c.K, j->out_sp);
	c.ntiles = (j->out_sp + c.nc - 1) / c.nc;
	c.arows = a_rows(k, c.K, j->m_g);
	c.im_ch = c.direct ? j->cin_g : im2col_chans(j->kk, j->cin_g, c.nc);
	items = j->x->dims[0] * j->group * c.ntiles;
	c.mchunk = row_chunk(cpu, k, items, j->m_g);
	c.nchunks = (j->m_g + c.mchunk - 1) / c.mchunk;
	c.osz = (int64_t)ert_dtype_size(j->y->dtype);
	lane_layout(k, c.K, c.nc, j->m_g, c.direct ? 0 : j->kk, j, &c.lay);
	epi_base(&c.base, j->qlinear, true, &j->qo);
	c.res_epi = j->res && c.base.mode == ERT_QGEMM_OUT_FIXED && c.osz == 1;
	c.base.res = c.res_epi ? j->res : NULL;
	*st = ert_qlinalg_run_lanes(cpu, x, skip + tsz, items * c.nchunks,
				    (int64_t)(c.lay.total / sizeof(uint32_t)), qconv_item, &c, err);
	return true;
}

/* ---- matrix multiplication ---- */

struct qmm {
	const struct imm_job *j;
	const struct ert_qgemm_kernel *k;
	const uint8_t *b_packed;  /* prepacked B per batch of B, b_per bytes apart; or NULL */
	size_t b_per;
	struct lane_layout lay;
	struct ert_qgemm_epi base;
	int64_t K4, nc, ntiles, mchunk, nchunks, rows_b; /* rows_b: batch problems */
	int64_t arows;            /* rows of A packed at a time */
	int64_t b_rs, b_cs, osz;
	bool a_u8, b_s8, need_t;
	const int32_t *negbz;     /* -bz'_j per column, or NULL (per-tensor: folded) */
	int32_t bz1;              /* per-tensor bz' */
	const int32_t *mult, *shift;
	const double *f;
};

/* The per-row a_scale of the float rule (no channel table) stays with the reference. */
static bool mm_usable(const struct imm_job *j)
{
	return j->k > 0 && j->m > 0 && j->n > 0 && (j->kind == IMM_INTEGER || j->chans);
}

static bool mm_usable_plan(const struct imm_job *j)
{
	return j->k > 0 && j->m > 0 && j->n > 0 &&
	       (j->kind == IMM_INTEGER || (j->as && j->as->numel == 1));
}

/* Bytes of the per-column tables in front of the lanes. */
static size_t mm_tables(int64_t n)
{
	return 3 * rup64((size_t)n * sizeof(int32_t)) + rup64((size_t)n * sizeof(double));
}

size_t ert_qmm_gemm_workspace(const struct imm_job *j, uint32_t lanes)
{
	if (!mm_usable_plan(j))
		return 0;
	return mm_tables(j->n) + max_slot(j->m, j->k, j->n, 0, NULL) * (lanes < 1 ? 1 : lanes);
}

static int64_t b_batches(const struct imm_job *j)
{
	int64_t nb = 1;

	for (int32_t d = 0; d < j->bb; d++)
		nb *= j->b->dims[d];
	return nb;
}

ert_status ert_qmm_gemm_prepare(struct ert_cpu *cpu, struct ert_exec *x, const struct imm_job *j,
				struct ert_err *err)
{
	const struct ert_qgemm_kernel *k = ert_qgemm_kernel_for(cpu->isa);
	uint32_t bi = j->kind == IMM_INTEGER ? 1 : 3;
	struct ert_cpu_packed *pk;
	ert_status st;

	if (!k || !mm_usable_plan(j))
		return ERT_OK;
	x->kernel = k->name;
	if (!x->in_const || !x->in_const[bi])
		return ERT_OK;

	struct ert_cpu_pack_key key = {
		.src = (const float *)j->b->data, .kind = ERT_CPU_PACK_Q8B, .panel = ert_qgemm_nr(k),
		.rows = j->k, .cols = j->n, .rs = j->b_trans ? 1 : j->n, .cs = j->b_trans ? j->k : 1,
		.count = b_batches(j), .src_stride = j->k * j->n,
		.fmt = ert_qgemm_key_fmt(k, j->b->dtype == ERT_DTYPE_UINT8),
	};

	st = ert_cpu_pack_get(cpu, &key, &pk);
	if (st != ERT_OK)
		ert_node_fail(x->node, err, st, "out of memory packing weights");
	x->state = pk;
	return st;
}

/* Offsets of batch problem @t's A and B (numpy broadcast), as the reference's imm_row(). */
static void mm_offsets(const struct imm_job *j, int64_t t, int64_t *oa, int64_t *ob, int64_t *tb)
{
	const struct ert_value *a = j->a, *b = j->b, *y = j->y;
	int64_t rem = t, sa = j->m * j->k, sb = j->k * j->n, bt = 0, bstride = 1;

	*oa = *ob = 0;
	for (int32_t d = (int32_t)j->nb - 1; d >= 0; d--) {
		int64_t idx = rem % y->dims[d];
		int32_t ia = d - ((int32_t)j->nb - j->ba), ib = d - ((int32_t)j->nb - j->bb);

		rem /= y->dims[d];
		if (ia >= 0) {
			*oa += a->dims[ia] != 1 ? idx * sa : 0;
			sa *= a->dims[ia];
		}
		if (ib >= 0) {
			*ob += b->dims[ib] != 1 ? idx * sb : 0;
			bt += b->dims[ib] != 1 ? idx * bstride : 0;
			sb *= b->dims[ib];
			bstride *= b->dims[ib];
		}
	}
	*tb = bt;
}

/* The rows of one lane's tile: batch problem bt, columns from n0, rows from i0. */
struct mm_rows {
	const struct qmm *c;
	int64_t bt, n0, i0;
	const int32_t *rsum;      /* per row of the tile */
	const int32_t *t;         /* per column of the tile: colsum - K bz' */
};

static void mm_finish(void *ctx, int64_t i0, int64_t rows, const int32_t *raw, int64_t j0,
		      int64_t w)
{
	const struct mm_rows *r = ctx;
	const struct qmm *c = r->c;
	const struct imm_job *j = c->j;
	const int64_t col = r->n0 + j0, row0 = r->bt * j->m + r->i0 + i0;

	for (int64_t ii = i0; ii < i0 + rows; ii++) {
		int64_t i = r->i0 + ii;
		int32_t az = ert_qlinalg_zp(j->azp, i) - (c->a_u8 ? 128 : 0);
		struct ert_qgemm_epi ee = c->base, *e = &ee;

		/* v = raw - bz'_j rowsum_i - az'_i (colsum_j - K bz'_j) + C(i, j) */
		if (c->negbz) {
			e->c1 = (uint32_t)r->rsum[ii];
			e->u = c->negbz + col;
		} else {
			e->c0 = -(uint32_t)c->bz1 * (uint32_t)r->rsum[ii];
		}
		if (az) {
			e->c2 = -(uint32_t)az;
			e->t = r->t + j0;
		}
		if (j->c) {
			const struct ert_value *cv = j->c;
			const int32_t *d = cv->data;
			bool per_col = cv->rank >= 1 && cv->dims[cv->rank - 1] != 1;
			int64_t ri = cv->rank == 2 && cv->dims[0] != 1 ? i : 0;

			if (per_col)
				e->w = d + ri * cv->dims[cv->rank - 1] + col;
			else
				e->c0 += (uint32_t)d[ri * (cv->rank == 2 ? cv->dims[1] : 1)];
		}
		if (c->mult) {
			e->mult = c->mult + col;
			e->shift = c->shift + col;
		}
		if (c->f)
			e->f = c->f + col;
		c->k->epi(raw + (ii - i0) * TILE_LD, w, e,
			  (uint8_t *)j->y->data + ((row0 + ii - i0) * j->n + col) * (size_t)c->osz);
	}
}

static void qmm_item(const void *arg, int64_t it, uint32_t *slot)
{
	const struct qmm *c = arg;
	const struct imm_job *j = c->j;
	const struct ert_qgemm_kernel *k = c->k;
	const int64_t K = j->k, K4 = c->K4;
	uint8_t *ws = (uint8_t *)slot;
	int32_t *t = (int32_t *)(ws + c->lay.t), *rs = (int32_t *)(ws + c->lay.rs);
	int64_t chunk = it % c->nchunks, r = it / c->nchunks;
	int64_t tl = r % c->ntiles, bt = r / c->ntiles, oa, ob, tb;
	int64_t n0 = tl * c->nc, nc = min64(c->nc, j->n - n0);
	const size_t blk = ert_qgemm_a_block_bytes(k, K);
	const uint8_t *bp;
	const int32_t *cs;

	mm_offsets(j, bt, &oa, &ob, &tb);
	if (c->b_packed) {
		const uint8_t *base = c->b_packed + (size_t)tb * c->b_per;

		bp = base + ert_qgemm_b_panel_offset(k, K, n0);
		cs = (const int32_t *)(base + ert_qgemm_b_bytes(k, K, j->n)) + n0;
	} else {
		bp = ws + c->lay.b;
		cs = (const int32_t *)(ws + c->lay.cs);
		ert_qgemm_pack_b(k, (const uint8_t *)j->b->data + ob + n0 * c->b_cs, c->b_s8,
				 c->b_rs, c->b_cs, K, nc, ws + c->lay.b, (int32_t *)(ws + c->lay.cs));
	}
	/* t_j = colsum_j - K * bz'_j, for the rows whose az' is not zero */
	if (c->need_t)
		for (int64_t jj = 0; jj < nc; jj++)
			t[jj] = (int32_t)((uint32_t)cs[jj] -
					  (uint32_t)K * (uint32_t)(c->negbz ? -c->negbz[n0 + jj]
									    : c->bz1));

	const int64_t m_lo = chunk * c->mchunk, m_hi = min64(m_lo + c->mchunk, j->m);
	struct tile tt = { .k = k, .K4 = K4, .nc = nc, .a = ws + c->lay.a, .b = bp, .a_blk = blk,
			   .c = (int32_t *)(ws + c->lay.c) };
	struct mm_rows mr = { .c = c, .bt = bt, .n0 = n0, .rsum = rs, .t = t };

	for (int64_t i0 = m_lo; i0 < m_hi; i0 += c->arows) {
		int64_t rows = min64(c->arows, m_hi - i0);
		const uint8_t *a = (const uint8_t *)j->a->data + oa + i0 * j->a_rs;

		for (int64_t b = 0; b < rows; b += k->mr)
			ert_qgemm_pack_a_block(k, a + b * j->a_rs, c->a_u8, j->a_rs, j->a_cs,
					       min64(k->mr, rows - b), K,
					       ws + c->lay.a + (size_t)(b / k->mr) * blk, rs + b);
		mr.i0 = i0;
		run_tile(&tt, rows, mm_finish, &mr);
	}
}

bool ert_qmm_gemm_run(struct ert_cpu *cpu, struct ert_exec *x, const struct imm_job *j,
		      size_t skip, ert_status *st, struct ert_err *err)
{
	const struct ert_qgemm_kernel *k = ert_qgemm_kernel_for(cpu->isa);
	const struct ert_cpu_packed *pk = x->state;
	uint8_t *tables = x->workspace ? (uint8_t *)x->workspace + skip : NULL;
	size_t tsz = mm_tables(j->n);
	int32_t *negbz, *mult, *shift;
	double *f;
	struct qmm c;
	int64_t items;
	bool az_any = false;

	if (!k || !mm_usable(j) || !mm_usable_plan(j) || !tables ||
	    x->workspace_size < skip + tsz)
		return false;
	memset(&c, 0, sizeof(c));
	c.j = j;
	c.k = k;
	c.K4 = ert_qgemm_k4(j->k);
	c.a_u8 = j->a->dtype == ERT_DTYPE_UINT8;
	c.b_s8 = j->b->dtype == ERT_DTYPE_INT8;
	c.b_rs = j->b_trans ? 1 : j->n;
	c.b_cs = j->b_trans ? j->k : 1;
	if (pk && pk->key.fmt == ert_qgemm_key_fmt(k, !c.b_s8)) {
		c.b_packed = (const uint8_t *)pk->data;
		c.b_per = pk->stride * sizeof(float);
	}
	negbz = (int32_t *)tables;
	mult = (int32_t *)(tables + rup64((size_t)j->n * sizeof(int32_t)));
	shift = (int32_t *)(tables + 2 * rup64((size_t)j->n * sizeof(int32_t)));
	f = (double *)(tables + 3 * rup64((size_t)j->n * sizeof(int32_t)));
	/* bz'_j = bz_j + 128 for int8 B (packed flipped), bz_j for uint8 */
	c.bz1 = ert_qlinalg_zp(j->bzp, 0) + (c.b_s8 ? 128 : 0);
	if (j->bzp && j->bzp->numel > 1) {
		for (int64_t jj = 0; jj < j->n; jj++)
			negbz[jj] = -(ert_qlinalg_zp(j->bzp, jj) + (c.b_s8 ? 128 : 0));
		c.negbz = negbz;
	}
	for (int64_t i = 0; i < j->m && !az_any; i++)
		az_any = ert_qlinalg_zp(j->azp, i) != (c.a_u8 ? 128 : 0);
	c.need_t = az_any;
	epi_base(&c.base, j->kind != IMM_INTEGER, j->quantised, &j->qo);
	if (j->kind != IMM_INTEGER) {
		for (int64_t jj = 0; jj < j->n; jj++) {
			mult[jj] = clamp_mult(j->chans[jj].m);
			shift[jj] = clamp_shift(j->chans[jj].s);
			f[jj] = j->chans[jj].f;
		}
		c.mult = mult;
		c.shift = shift;
		c.f = f;
	}
	c.nc = tile_cols(k, j->k, j->n);
	c.ntiles = (j->n + c.nc - 1) / c.nc;
	c.rows_b = 1;
	for (int64_t d = 0; d < j->nb; d++)
		c.rows_b *= j->y->dims[d];
	items = c.rows_b * c.ntiles;
	c.mchunk = row_chunk(cpu, k, items, j->m);
	c.nchunks = (j->m + c.mchunk - 1) / c.mchunk;
	c.arows = a_rows(k, j->k, j->m);
	c.osz = (int64_t)ert_dtype_size(j->y->dtype);
	lane_layout(k, j->k, c.nc, j->m, 0, NULL, &c.lay);
	*st = ert_qlinalg_run_lanes(cpu, x, skip + tsz, items * c.nchunks,
				    (int64_t)(c.lay.total / sizeof(uint32_t)), qmm_item, &c, err);
	return true;
}
