/* SPDX-License-Identifier: MIT */
/* The Vulkan instance, the device and its compute queue, and the one pipeline layout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan/vk-impl.h"

#define MAX_DEVICES 16
#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
						 VkDebugUtilsMessageTypeFlagsEXT type,
						 const VkDebugUtilsMessengerCallbackDataEXT *d,
						 void *user)
{
	struct ert_vk *vk = user;

	if (!(sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT))
		return VK_FALSE;
	if (!vk->validation_errors++)
		snprintf(vk->validation_first, sizeof(vk->validation_first), "%s",
			 d && d->pMessage ? d->pMessage : "?");
	fprintf(stderr, "edgert: vulkan validation error: %s\n", d && d->pMessage ? d->pMessage : "?");
	return VK_FALSE;
}

static bool has_layer(const char *name)
{
	VkLayerProperties layers[64];
	uint32_t n = 64;

	/* VK_INCOMPLETE still fills the first 64 */
	if (vkEnumerateInstanceLayerProperties(&n, layers) < 0)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(layers[i].layerName, name))
			return true;
	return false;
}

/*
 * ERT_VULKAN_VALIDATION=1 turns the Khronos validation layer on, with a
 * messenger that prints every error and counts it: a step or a sync that
 * finds a new one fails (ert_vk_validation_check), so tests cannot miss one.
 */
static ert_status instance_create(struct ert_vk *vk, struct ert_err *err)
{
	const char *v = getenv("ERT_VULKAN_VALIDATION");
	const char *layers[] = { VALIDATION_LAYER };
	const char *exts[] = { VK_EXT_DEBUG_UTILS_EXTENSION_NAME };
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "edgert",
		.pEngineName = "edgert",
		.apiVersion = VK_API_VERSION_1_1,
	};
	VkDebugUtilsMessengerCreateInfoEXT dm = {
		.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
		.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
				   VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
		.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		.pfnUserCallback = on_message,
		.pUserData = vk,
	};
	VkInstanceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	VkResult rc;

	vk->validation = v && *v && strcmp(v, "0");
	if (vk->validation) {
		if (!has_layer(VALIDATION_LAYER)) {
			ert_err_set(err, "vulkan: ERT_VULKAN_VALIDATION is set but the layer %s is not installed (vulkan-validationlayers)",
				    VALIDATION_LAYER);
			return ERT_STATUS_UNSUPPORTED;
		}
		ci.enabledLayerCount = 1;
		ci.ppEnabledLayerNames = layers;
		ci.enabledExtensionCount = 1;
		ci.ppEnabledExtensionNames = exts;
		/* also catches what vkCreateInstance itself reports */
		ci.pNext = &dm;
	}
	rc = vkCreateInstance(&ci, NULL, &vk->instance);
	if (rc == VK_ERROR_INCOMPATIBLE_DRIVER || rc == VK_ERROR_INITIALIZATION_FAILED) {
		vk->instance = VK_NULL_HANDLE;
		ert_err_set(err, "vulkan: no Vulkan driver (%s from vkCreateInstance: is an ICD installed under /usr/share/vulkan/icd.d?)",
			    ert_vk_result_name(rc));
		return ERT_STATUS_UNSUPPORTED;
	}
	if (rc != VK_SUCCESS) {
		vk->instance = VK_NULL_HANDLE;
		ert_vk_fail(err, rc, "vkCreateInstance", NULL);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (vk->validation) {
		PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)
			vkGetInstanceProcAddr(vk->instance, "vkCreateDebugUtilsMessengerEXT");

		if (!create) {
			ert_err_set(err, "vulkan: the validation layer has no vkCreateDebugUtilsMessengerEXT");
			return ERT_STATUS_UNSUPPORTED;
		}
		rc = create(vk->instance, &dm, NULL, &vk->messenger);
		if (rc != VK_SUCCESS)
			return ert_vk_fail(err, rc, "vkCreateDebugUtilsMessengerEXT", NULL);
	}
	return ERT_OK;
}

/* A decimal index and nothing else; false otherwise. */
static bool parse_index(const char *s, unsigned long *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && *end == '\0';
}

static bool is_gpu(VkPhysicalDeviceType t)
{
	return t == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
	       t == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
	       t == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
}

static ert_status choose(struct ert_vk *vk, bool gpu_only, struct ert_err *err)
{
	static const VkPhysicalDeviceType order[] = {
		VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
		VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, VK_PHYSICAL_DEVICE_TYPE_CPU,
		VK_PHYSICAL_DEVICE_TYPE_OTHER,
	};
	VkPhysicalDevice devs[MAX_DEVICES];
	VkPhysicalDeviceProperties p;
	uint32_t n = MAX_DEVICES;
	const char *env = getenv("ERT_VULKAN_DEVICE");
	VkResult rc = vkEnumeratePhysicalDevices(vk->instance, &n, devs);

	if (rc < 0) {
		ert_vk_fail(err, rc, "vkEnumeratePhysicalDevices", NULL);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (n == 0) {
		ert_err_set(err, "vulkan: no Vulkan device (no ICD under /usr/share/vulkan/icd.d found one)");
		return ERT_STATUS_UNSUPPORTED;
	}
	if (env && *env) {
		unsigned long d;

		if (!parse_index(env, &d)) {
			ert_err_set(err, "vulkan: ERT_VULKAN_DEVICE='%s' is not a device index (as 'vulkaninfo --summary' lists them)",
				    env);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		if (d >= n) {
			ert_err_set(err, "vulkan: ERT_VULKAN_DEVICE='%s': there is no device %lu (%u devices)",
				    env, d, n);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		vkGetPhysicalDeviceProperties(devs[d], &p);
		if (gpu_only && !is_gpu(p.deviceType)) {
			ert_err_set(err, "vulkan: ERT_VULKAN_DEVICE='%s' (%s) is not a GPU", env,
				    p.deviceName);
			return ERT_STATUS_UNSUPPORTED;
		}
		vk->phys = devs[d];
		return ERT_OK;
	}
	for (size_t t = 0; t < sizeof(order) / sizeof(order[0]); t++) {
		if (gpu_only && !is_gpu(order[t]))
			break;
		for (uint32_t d = 0; d < n; d++) {
			vkGetPhysicalDeviceProperties(devs[d], &p);
			if (p.deviceType == order[t]) {
				vk->phys = devs[d];
				return ERT_OK;
			}
		}
	}
	ert_err_set(err, gpu_only ? "vulkan: no GPU among the Vulkan devices" :
		    "vulkan: no usable Vulkan device");
	return ERT_STATUS_UNSUPPORTED;
}

static ert_status layout_create(struct ert_vk *vk, struct ert_err *err)
{
	VkDescriptorSetLayoutBinding b[ERT_VK_MAX_BINDINGS];
	VkPushConstantRange push = {
		.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		.size = ERT_VK_PUSH_WORDS * 4,
	};
	VkDescriptorSetLayoutCreateInfo sl = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = ERT_VK_MAX_BINDINGS,
		.pBindings = b,
	};
	VkPipelineLayoutCreateInfo pl = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &vk->set_layout,
		.pushConstantRangeCount = 1,
		.pPushConstantRanges = &push,
	};
	VkResult rc;

	for (uint32_t i = 0; i < ERT_VK_MAX_BINDINGS; i++)
		b[i] = (VkDescriptorSetLayoutBinding){
			.binding = i,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = 1,
			.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		};
	rc = vkCreateDescriptorSetLayout(vk->dev, &sl, NULL, &vk->set_layout);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkCreateDescriptorSetLayout", NULL);
	rc = vkCreatePipelineLayout(vk->dev, &pl, NULL, &vk->pipe_layout);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkCreatePipelineLayout", NULL);
	return ERT_OK;
}

/*
 * Precision LOW: float16 storage where the device has storageBuffer16BitAccess
 * (VK_KHR_16bit_storage, core in Vulkan 1.1; lavapipe has it), enabled in
 * @feat for vkCreateDevice. Arithmetic stays float32 (the
 * shaders widen on load and round on store), so shaderFloat16 is not needed.
 * $ERT_VULKAN_F16=off keeps LOW in float32; =storage insists (UNSUPPORTED on a
 * device without the feature, rather than LOW in float32).
 */
static ert_status setup_f16(struct ert_vk *vk, VkPhysicalDevice16BitStorageFeatures *feat,
			    struct ert_err *err)
{
	const char *env = getenv("ERT_VULKAN_F16");
	bool forced = env && !strcmp(env, "storage");
	VkPhysicalDevice16BitStorageFeatures has = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
	};
	VkPhysicalDeviceFeatures2 f2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &has,
	};

	if (env && *env && !forced && strcmp(env, "off")) {
		ert_err_set(err, "vulkan: ERT_VULKAN_F16='%s': expected 'storage' or 'off'", env);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (vk->precision != ERT_LEVEL_LOW || (env && !strcmp(env, "off")))
		return ERT_OK;
	vkGetPhysicalDeviceFeatures2(vk->phys, &f2);
	if (!has.storageBuffer16BitAccess) {
		if (!forced)
			return ERT_OK;
		ert_err_set(err, "vulkan: ERT_VULKAN_F16=storage but %s has no storageBuffer16BitAccess",
			    vk->props.deviceName);
		return ERT_STATUS_UNSUPPORTED;
	}
	feat->storageBuffer16BitAccess = VK_TRUE;
	vk->f16_storage = true;
	return ERT_OK;
}

ert_status ert_vk_device_open(struct ert_vk *vk, bool gpu_only, struct ert_err *err)
{
	VkPhysicalDevice16BitStorageFeatures f16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
	};
	VkQueueFamilyProperties fam[16];
	uint32_t nfam = 16;
	float prio = 1.0f;
	VkDeviceQueueCreateInfo qi = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueCount = 1,
		.pQueuePriorities = &prio,
	};
	VkDeviceCreateInfo di = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = &f16,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qi,
	};
	VkCommandPoolCreateInfo cp = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
	};
	VkFenceCreateInfo fi = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	const char *gemm = getenv("ERT_VULKAN_GEMM");
	ert_status st = instance_create(vk, err);
	bool found = false;
	VkResult rc;

	if (st == ERT_OK)
		st = choose(vk, gpu_only, err);
	if (st != ERT_OK)
		return st;
	vkGetPhysicalDeviceProperties(vk->phys, &vk->props);
	vkGetPhysicalDeviceMemoryProperties(vk->phys, &vk->mem_props);
	if (vk->props.apiVersion < VK_API_VERSION_1_1) {
		ert_err_set(err, "vulkan: %s has Vulkan %u.%u; 1.1 or later is needed",
			    vk->props.deviceName, VK_API_VERSION_MAJOR(vk->props.apiVersion),
			    VK_API_VERSION_MINOR(vk->props.apiVersion));
		return ERT_STATUS_UNSUPPORTED;
	}
	vk->gemm_direct = vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
	if (gemm && *gemm) {
		if (strcmp(gemm, "tiled") && strcmp(gemm, "direct")) {
			ert_err_set(err, "vulkan: ERT_VULKAN_GEMM='%s' is not 'tiled' or 'direct'", gemm);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		vk->gemm_direct = !strcmp(gemm, "direct");
		vk->gemm_forced = true;
	}
	vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &nfam, fam);
	for (uint32_t i = 0; i < nfam && !found; i++) {
		if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
			vk->queue_family = i;
			vk->timestamp_bits = fam[i].timestampValidBits;
			found = true;
		}
	}
	if (!found) {
		ert_err_set(err, "vulkan: %s has no compute queue", vk->props.deviceName);
		return ERT_STATUS_UNSUPPORTED;
	}
	st = setup_f16(vk, &f16, err);
	if (st != ERT_OK)
		return st;
	qi.queueFamilyIndex = vk->queue_family;
	rc = vkCreateDevice(vk->phys, &di, NULL, &vk->dev);
	if (rc != VK_SUCCESS) {
		vk->dev = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreateDevice", NULL);
	}
	vkGetDeviceQueue(vk->dev, vk->queue_family, 0, &vk->queue);
	cp.queueFamilyIndex = vk->queue_family;
	rc = vkCreateCommandPool(vk->dev, &cp, NULL, &vk->cmd_pool);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkCreateCommandPool", NULL);
	rc = vkCreateFence(vk->dev, &fi, NULL, &vk->fence);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkCreateFence", NULL);
	return layout_create(vk, err);
}

void ert_vk_device_close(struct ert_vk *vk)
{
	if (vk->dev) {
		/* nothing may still use what is about to go */
		vkDeviceWaitIdle(vk->dev);
		if (vk->pipe_layout)
			vkDestroyPipelineLayout(vk->dev, vk->pipe_layout, NULL);
		if (vk->set_layout)
			vkDestroyDescriptorSetLayout(vk->dev, vk->set_layout, NULL);
		if (vk->pipe_cache)
			vkDestroyPipelineCache(vk->dev, vk->pipe_cache, NULL);
		if (vk->fence)
			vkDestroyFence(vk->dev, vk->fence, NULL);
		if (vk->cmd_pool)
			vkDestroyCommandPool(vk->dev, vk->cmd_pool, NULL);
		vkDestroyDevice(vk->dev, NULL);
	}
	if (vk->instance) {
		if (vk->messenger) {
			PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)
				vkGetInstanceProcAddr(vk->instance, "vkDestroyDebugUtilsMessengerEXT");

			if (destroy)
				destroy(vk->instance, vk->messenger, NULL);
		}
		vkDestroyInstance(vk->instance, NULL);
	}
	vk->dev = VK_NULL_HANDLE;
	vk->instance = VK_NULL_HANDLE;
}

ert_status ert_vk_validation_check(struct ert_vk *vk, struct ert_err *err)
{
	if (vk->validation_errors == vk->validation_seen)
		return ERT_OK;
	ert_err_set(err, "vulkan: the validation layer reported %u error(s), the first: %.200s",
		    vk->validation_errors - vk->validation_seen, vk->validation_first);
	vk->validation_seen = vk->validation_errors;
	return ERT_STATUS_BACKEND;
}
