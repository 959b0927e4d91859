/* SPDX-License-Identifier: MIT */
/*
 * The Vulkan backend's choice of its speed paths from a device's features
 * (ert_vk_paths_choose, vk-device.c), without a device: half arithmetic for
 * precision LOW's elementwise ops where the device has shaderFloat16 (and
 * float16 storage), subgroup reductions where compute shaders have subgroup
 * arithmetic, and $ERT_VULKAN_F16 / $ERT_VULKAN_SUBGROUP forcing either way.
 */
#include "ert-test.h"
#include "vulkan/vk-impl.h"

static const struct ert_vk_caps all = { .storage16 = true, .float16 = true,
					 .subgroup_arith = true, .subgroup_size = 32 };
static const struct ert_vk_caps storage_only = { .storage16 = true };
static const struct ert_vk_caps none = { 0 };

static ert_status choose(const struct ert_vk_caps *c, ert_level p, const char *f16,
			 const char *sg, struct ert_vk_paths *out)
{
	struct ert_err err = { "" };
	ert_status st = ert_vk_paths_choose(c, p, f16, sg, "dev", out, &err);

	/* a refusal says why, naming the variable */
	if (st != ERT_OK && !strstr(err.msg, "ERT_VULKAN_"))
		return ERT_STATUS_INTERNAL;
	return st;
}

ERT_TEST(everything_where_the_device_has_it)
{
	struct ert_vk_paths p;

	REQUIRE(choose(&all, ERT_LEVEL_LOW, NULL, NULL, &p) == ERT_OK);
	CHECK(p.f16_storage && p.f16_arith && p.subgroup);
	CHECK(strstr(p.note, "subgroup (size 32)") && strstr(p.note, "half arithmetic"));
	/* an empty variable is unset */
	REQUIRE(choose(&all, ERT_LEVEL_LOW, "", "", &p) == ERT_OK);
	CHECK(p.f16_storage && p.f16_arith && p.subgroup);
}

ERT_TEST(half_arithmetic_only_for_low_with_storage)
{
	struct ert_vk_paths p;

	REQUIRE(choose(&all, ERT_LEVEL_NORMAL, NULL, NULL, &p) == ERT_OK);
	CHECK(!p.f16_storage && !p.f16_arith && p.subgroup);
	REQUIRE(choose(&all, ERT_LEVEL_HIGH, NULL, NULL, &p) == ERT_OK);
	CHECK(!p.f16_storage && !p.f16_arith);
	/* no shaderFloat16: storage with float arithmetic */
	REQUIRE(choose(&storage_only, ERT_LEVEL_LOW, NULL, NULL, &p) == ERT_OK);
	CHECK(p.f16_storage && !p.f16_arith && !p.subgroup);
	CHECK(strstr(p.note, "no shaderFloat16") && strstr(p.note, "shared memory"));
	/* shaderFloat16 without 16-bit storage: nothing in float16 */
	{
		struct ert_vk_caps c = { .float16 = true };

		REQUIRE(choose(&c, ERT_LEVEL_LOW, NULL, NULL, &p) == ERT_OK);
		CHECK(!p.f16_storage && !p.f16_arith);
	}
	REQUIRE(choose(&none, ERT_LEVEL_LOW, NULL, NULL, &p) == ERT_OK);
	CHECK(!p.f16_storage && !p.f16_arith && !p.subgroup);
}

ERT_TEST(f16_variable)
{
	struct ert_vk_paths p;

	REQUIRE(choose(&all, ERT_LEVEL_LOW, "off", NULL, &p) == ERT_OK);
	CHECK(!p.f16_storage && !p.f16_arith);
	REQUIRE(choose(&all, ERT_LEVEL_LOW, "storage", NULL, &p) == ERT_OK);
	CHECK(p.f16_storage && !p.f16_arith);
	REQUIRE(choose(&all, ERT_LEVEL_LOW, "arith", NULL, &p) == ERT_OK);
	CHECK(p.f16_storage && p.f16_arith);
	/* insisting on what the device lacks */
	CHECK_EQ_INT(choose(&storage_only, ERT_LEVEL_LOW, "arith", NULL, &p), ERT_STATUS_UNSUPPORTED);
	CHECK_EQ_INT(choose(&none, ERT_LEVEL_LOW, "storage", NULL, &p), ERT_STATUS_UNSUPPORTED);
	CHECK_EQ_INT(choose(&none, ERT_LEVEL_LOW, "arith", NULL, &p), ERT_STATUS_UNSUPPORTED);
	/* outside LOW it insists on nothing */
	REQUIRE(choose(&none, ERT_LEVEL_NORMAL, "arith", NULL, &p) == ERT_OK);
	CHECK(!p.f16_storage && !p.f16_arith);
	/* a wrong value is refused at any precision */
	CHECK_EQ_INT(choose(&all, ERT_LEVEL_NORMAL, "half", NULL, &p), ERT_STATUS_INVALID_ARGUMENT);
	CHECK_EQ_INT(choose(&all, ERT_LEVEL_LOW, "ON", NULL, &p), ERT_STATUS_INVALID_ARGUMENT);
}

ERT_TEST(subgroup_variable)
{
	struct ert_vk_paths p;
	struct ert_vk_caps no_arith = { .subgroup_arith = false, .subgroup_size = 64 };

	REQUIRE(choose(&all, ERT_LEVEL_NORMAL, NULL, "off", &p) == ERT_OK);
	CHECK(!p.subgroup);
	CHECK(strstr(p.note, "ERT_VULKAN_SUBGROUP=off") != NULL);
	REQUIRE(choose(&all, ERT_LEVEL_NORMAL, NULL, "on", &p) == ERT_OK);
	CHECK(p.subgroup);
	/* a subgroup size without arithmetic in compute is not enough */
	REQUIRE(choose(&no_arith, ERT_LEVEL_NORMAL, NULL, NULL, &p) == ERT_OK);
	CHECK(!p.subgroup);
	CHECK_EQ_INT(choose(&no_arith, ERT_LEVEL_NORMAL, NULL, "on", &p), ERT_STATUS_UNSUPPORTED);
	CHECK_EQ_INT(choose(&all, ERT_LEVEL_NORMAL, NULL, "1", &p), ERT_STATUS_INVALID_ARGUMENT);
}

ERT_TEST(caps_from_the_device_structures)
{
	VkPhysicalDevice16BitStorageFeatures s16 = { .storageBuffer16BitAccess = VK_TRUE };
	VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16 = { .shaderFloat16 = VK_TRUE };
	/* lavapipe 22.3's answer */
	VkPhysicalDeviceSubgroupProperties sg = {
		.subgroupSize = 8,
		.supportedStages = VK_SHADER_STAGE_FRAGMENT_BIT | VK_SHADER_STAGE_COMPUTE_BIT,
		.supportedOperations = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT |
				       VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT,
	};
	struct ert_vk_caps c;

	ert_vk_caps_make(&s16, &f16, &sg, &c);
	CHECK(c.storage16 && c.float16 && c.subgroup_arith);
	CHECK_EQ_INT(c.subgroup_size, 8);
	/* the extension not listed: no shaderFloat16, whatever else */
	ert_vk_caps_make(&s16, NULL, &sg, &c);
	CHECK(c.storage16 && !c.float16);
	f16.shaderFloat16 = VK_FALSE;
	ert_vk_caps_make(&s16, &f16, &sg, &c);
	CHECK(!c.float16);
	/* subgroups in fragment shaders only, or without arithmetic, or without basic */
	sg.supportedStages = VK_SHADER_STAGE_FRAGMENT_BIT;
	ert_vk_caps_make(&s16, &f16, &sg, &c);
	CHECK(!c.subgroup_arith);
	sg.supportedStages = VK_SHADER_STAGE_COMPUTE_BIT;
	sg.supportedOperations = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT;
	ert_vk_caps_make(&s16, &f16, &sg, &c);
	CHECK(!c.subgroup_arith);
	sg.supportedOperations = VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
	ert_vk_caps_make(&s16, &f16, &sg, &c);
	CHECK(!c.subgroup_arith);
	sg.supportedOperations |= VK_SUBGROUP_FEATURE_BASIC_BIT;
	ert_vk_caps_make(&s16, &f16, &sg, &c);
	CHECK(c.subgroup_arith);
	s16.storageBuffer16BitAccess = VK_FALSE;
	ert_vk_caps_make(&s16, &f16, &sg, &c);
	CHECK(!c.storage16);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(caps_from_the_device_structures),
	      ERT_TEST_ENTRY(everything_where_the_device_has_it),
	      ERT_TEST_ENTRY(half_arithmetic_only_for_low_with_storage),
	      ERT_TEST_ENTRY(f16_variable), ERT_TEST_ENTRY(subgroup_variable))
