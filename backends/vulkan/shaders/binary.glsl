// SPDX-License-Identifier: MIT
// The binary ops of binary.comp and binary_same.comp, in CT (half in the
// half-arithmetic variant, common.glsl); the fused activation after them is
// float in every variant.
CT binary_op(CT a, CT b, int op)
{
	switch (op) {
	case ERT_GPU_BIN_ADD: return a + b;
	case ERT_GPU_BIN_SUB: return a - b;
	case ERT_GPU_BIN_MUL: return a * b;
	case ERT_GPU_BIN_DIV: return a / b;
	case ERT_GPU_BIN_MAX: return isnan(a) || isnan(b) ? a + b : max(a, b);
	case ERT_GPU_BIN_MIN: return isnan(a) || isnan(b) ? a + b : min(a, b);
	case ERT_GPU_BIN_POW: {
		// GLSL's pow is undefined for a <= 0: C's pow for those cases
		if (b == CT(0.0))
			return CT(1.0);
		if (a == CT(0.0))
			return b > CT(0.0) ? CT(0.0) : CT(1.0) / CT(0.0);
		if (a < CT(0.0)) {
			if (b != floor(b))
				return (a - a) / (a - a); // NaN
			CT r = pow(-a, b);

			return mod(b, CT(2.0)) == CT(1.0) ? -r : r;
		}
		return pow(a, b);
	}
	case ERT_GPU_BIN_PRELU: return a < CT(0.0) ? a * b : a;
	default: return CT(0.0);
	}
}
