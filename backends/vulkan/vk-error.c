/* SPDX-License-Identifier: MIT */
/* VkResult names and the ert_status a failed Vulkan call becomes. */
#include <stdio.h>

#include "vulkan/vk-impl.h"

const char *ert_vk_result_name(VkResult rc)
{
	static _Thread_local char unknown[32];

#define NAME(x) case x: return #x
	switch ((int)rc) {
	NAME(VK_SUCCESS);
	NAME(VK_NOT_READY);
	NAME(VK_TIMEOUT);
	NAME(VK_EVENT_SET);
	NAME(VK_EVENT_RESET);
	NAME(VK_INCOMPLETE);
	NAME(VK_ERROR_OUT_OF_HOST_MEMORY);
	NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY);
	NAME(VK_ERROR_INITIALIZATION_FAILED);
	NAME(VK_ERROR_DEVICE_LOST);
	NAME(VK_ERROR_MEMORY_MAP_FAILED);
	NAME(VK_ERROR_LAYER_NOT_PRESENT);
	NAME(VK_ERROR_EXTENSION_NOT_PRESENT);
	NAME(VK_ERROR_FEATURE_NOT_PRESENT);
	NAME(VK_ERROR_INCOMPATIBLE_DRIVER);
	NAME(VK_ERROR_TOO_MANY_OBJECTS);
	NAME(VK_ERROR_FORMAT_NOT_SUPPORTED);
	NAME(VK_ERROR_FRAGMENTED_POOL);
	NAME(VK_ERROR_UNKNOWN);
	NAME(VK_ERROR_OUT_OF_POOL_MEMORY);
	NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE);
	NAME(VK_ERROR_FRAGMENTATION);
	NAME(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS);
	NAME(VK_PIPELINE_COMPILE_REQUIRED);
	NAME(VK_ERROR_VALIDATION_FAILED_EXT);
	default:
		snprintf(unknown, sizeof(unknown), "VK_RESULT(%d)", (int)rc);
		return unknown;
	}
#undef NAME
}

ert_status ert_vk_fail(struct ert_err *err, VkResult rc, const char *what,
		       const struct ert_node *n)
{
	if (n)
		ert_err_set(err, "vulkan: %s '%s': %s failed (%s)", ert_op_name(n->op),
			    n->name ? n->name : "", what, ert_vk_result_name(rc));
	else
		ert_err_set(err, "vulkan: %s failed (%s)", what, ert_vk_result_name(rc));
	switch (rc) {
	case VK_ERROR_OUT_OF_HOST_MEMORY:
	case VK_ERROR_OUT_OF_DEVICE_MEMORY:
	case VK_ERROR_OUT_OF_POOL_MEMORY:
	case VK_ERROR_FRAGMENTED_POOL:
		return ERT_STATUS_OUT_OF_MEMORY;
	default:
		return ERT_STATUS_BACKEND;
	}
}
