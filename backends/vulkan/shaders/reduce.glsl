// SPDX-License-Identifier: MIT
// A work-group's reduction in shared memory (ERT_GPU_RED_WG items per group).
shared float part[ERT_GPU_RED_WG];

// Reduce v over the group (max when is_max, else sum); every item gets the result.
float wg_reduce(float v, bool is_max)
{
	uint l = gl_LocalInvocationID.x;

	part[l] = v;
	for (uint s = ERT_GPU_RED_WG / 2; s > 0; s >>= 1) {
		// each halving reads what the previous one wrote
		barrier();
		if (l < s) {
			float o = part[l + s];

			part[l] = is_max ? (o > part[l] || isnan(o) ? o : part[l]) : part[l] + o;
		}
	}
	// part[0] is final before anyone reads it
	barrier();
	v = part[0];
	// and read by all before the next reduction writes part[]
	barrier();
	return v;
}
