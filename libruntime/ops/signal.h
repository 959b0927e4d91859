/* SPDX-License-Identifier: MIT */
/*
 * signal.h — DFT and STFT parameters, shared by their shape inference
 * (ops/signal.c) and the CPU kernels (backends/cpu/ops/signal.c), so both
 * read the attributes and the length inputs one way.
 */
#ifndef ERT_OPS_SIGNAL_H
#define ERT_OPS_SIGNAL_H

#include "ert-op-impl.h"

/*
 * The longest transform: a kernel keeps one table of n twiddles and one
 * line of n complex values in its workspace (32 n bytes), and a length
 * that is not a power of two costs n^2 multiplications per line.
 */
#define ERT_DFT_MAX (INT64_C(1) << 24)

struct ert_dft_params {
	int32_t axis;     /* normalised, never the last (complex) axis */
	int64_t n;        /* transform length (dft_length) */
	bool inverse, onesided, complex_in;
};

struct ert_stft_params {
	int64_t step, length, frames, bins;
	bool onesided;
};

/* Read and check DFT's axis (attribute before opset 20, input 2 after), length and flags. */
ert_status ert_dft_params(const struct ert_node *n, const struct ert_value *const *in, uint32_t n_in,
			  struct ert_dft_params *p, struct ert_err *err);
/* Read and check STFT's frame step, frame length (or the window's) and onesided. */
ert_status ert_stft_params(const struct ert_node *n, const struct ert_value *const *in,
			   uint32_t n_in, struct ert_stft_params *p, struct ert_err *err);

#endif /* ERT_OPS_SIGNAL_H */
