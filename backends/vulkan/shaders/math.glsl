// SPDX-License-Identifier: MIT
// The math helpers, over the type F: common.glsl includes this file with F
// float, and again with F float16_t in the half-arithmetic variant
// (-DERT_F16_ARITH; GLSL overloads them by type). Every constant is F(...),
// so the half versions compute in half. ERT_TANH_MAX: where tanh is +-1 in F.
//
// Near 0 a series (drivers may compute tanh from exp and lose the small
// values to cancellation); beyond, the builtin, clamped where tanh is +-1
// (some drivers compute inf/inf there).
F ert_tanh(F v)
{
	if (abs(v) < F(0.1)) {
		F z = v * v;

		return v * (F(1.0) + z * (F(-1.0 / 3.0) + z * (F(2.0 / 15.0) + z * F(-17.0 / 315.0))));
	}
	return tanh(clamp(v, F(-ERT_TANH_MAX), F(ERT_TANH_MAX)));
}

// Series near 0 (no cancellation), Abramowitz and Stegun 7.1.26 beyond
// (absolute error below 1.5e-7).
F ert_erf(F v)
{
	F a = abs(v);

	if (a < F(0.5)) {
		F z = v * v;

		return v * F(1.1283791670955126) *
		       (F(1.0) + z * (F(-1.0 / 3.0) + z * (F(0.1) + z * (F(-1.0 / 42.0) + z * (F(1.0 / 216.0) +
			z * (F(-1.0 / 1320.0) + z * F(1.0 / 9360.0)))))));
	}
	F t = F(1.0) / (F(1.0) + F(0.3275911) * a);
	F y = F(1.0) - t * (F(0.254829592) + t * (F(-0.284496736) + t * (F(1.421413741) +
		  t * (F(-1.453152027) + t * F(1.061405429))))) * exp(-a * a);

	return v < F(0.0) ? -y : y;
}

// Series near 0, where exp(v) - 1 and log(1 + v) cancel.
F ert_expm1(F v)
{
	if (abs(v) < F(0.1))
		return v * (F(1.0) + v * (F(0.5) + v * (F(1.0 / 6.0) + v * (F(1.0 / 24.0) +
		       v * (F(1.0 / 120.0) + v * F(1.0 / 720.0))))));
	return exp(v) - F(1.0);
}

F ert_log1p(F v)
{
	if (abs(v) < F(0.1))
		return v * (F(1.0) + v * (F(-0.5) + v * (F(1.0 / 3.0) + v * (F(-0.25) + v * (F(0.2) +
		       v * (F(-1.0 / 6.0) + v * F(1.0 / 7.0)))))));
	return log(F(1.0) + v);
}

F ert_gelu(F v)
{
	return F(0.5) * v * (F(1.0) + ert_erf(v * F(0.70710678118654752440)));
}

// (in half, v * v * v overflows beyond |v| 40: tanh's clamp gives the limit, v or 0)
F ert_gelu_tanh(F v)
{
	return F(0.5) * v * (F(1.0) + ert_tanh(F(0.79788456080286535588) * (v + F(0.044715) * v * v * v)));
}

// (exp(-v) overflows to inf for very negative v: 1 / inf is the limit, 0)
F ert_sigmoid(F v)
{
	return F(1.0) / (F(1.0) + exp(-v));
}
