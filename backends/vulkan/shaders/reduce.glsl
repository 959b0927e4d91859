// SPDX-License-Identifier: MIT
// A work-group's reduction (ERT_GPU_RED_WG items per group), for the row
// shaders (softmax, layernorm, plane_reduce): every item passes its value,
// every item gets the group's max (is_max) or sum. Float in every variant.
//
// Built in two ways. Plain: a tree in shared memory. With -DERT_SUBGROUP
// ("NAME.sg", launched where the device has subgroup arithmetic in compute
// shaders, VkPhysicalDeviceSubgroupProperties): subgroupAdd/subgroupMax
// within each subgroup, then each subgroup's result through shared memory.
// Neither depends on the subgroup size: a group of 64 holds any number of
// subgroups (64 / gl_SubgroupSize; sizes are powers of two), and a subgroup
// larger than the group (128) is one partial subgroup, whose operations
// cover its active items, the group's.
#ifdef ERT_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

// one per subgroup: at most ERT_GPU_RED_WG of them
shared float part[ERT_GPU_RED_WG];

float wg_reduce(float v, bool is_max)
{
	float r;

	// @is_max is the same in the whole group: these stay uniform
	if (is_max) {
		// subgroupMax's answer is undefined where a NaN is compared: a
		// NaN anywhere makes the result NaN, as the tree does
		r = subgroupMax(isnan(v) ? -1.0 / 0.0 : v);
		if (subgroupMax(isnan(v) ? 1u : 0u) != 0u)
			r = uintBitsToFloat(0x7fc00000u);
	} else {
		r = subgroupAdd(v);
	}
	if (gl_NumSubgroups == 1u)
		return r;
	if (subgroupElect())
		part[gl_SubgroupID] = r;
	// every subgroup's result is there before anyone reads them
	barrier();
	r = part[0];
	for (uint s = 1u; s < gl_NumSubgroups; s++) {
		float o = part[s];

		r = is_max ? (o > r || isnan(o) ? o : r) : r + o;
	}
	// and read by all before the next reduction writes part[]
	barrier();
	return r;
}
#else
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
#endif
