// SPDX-License-Identifier: MIT
// The binary ops of binary.comp and binary_same.comp.
float binary_op(float a, float b, int op)
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
		if (b == 0.0)
			return 1.0;
		if (a == 0.0)
			return b > 0.0 ? 0.0 : 1.0 / 0.0;
		if (a < 0.0) {
			if (b != floor(b))
				return (a - a) / (a - a); // NaN
			float r = pow(-a, b);

			return mod(b, 2.0) == 1.0 ? -r : r;
		}
		return pow(a, b);
	}
	case ERT_GPU_BIN_PRELU: return a < 0.0 ? a * b : a;
	default: return 0.0;
	}
}
