/* SPDX-License-Identifier: MIT */
/*
 * The Vulkan instance, the device and its compute queue, and the one
 * pipeline layout: the process's, shared by the sessions that choose the
 * same, and a session's own command pool and fence.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan/vk-impl.h"

#define MAX_DEVICES 16
#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

/*
 * An instance, one per validation setting (ERT_VULKAN_VALIDATION): a
 * session that asks for the layer never gets an instance without it, nor
 * the reverse. Its devices hold it (refs).
 */
struct ert_vk_inst {
	struct ert_vk_inst *next;    /* the process's instances (under devs_lock) */
	uint32_t refs;               /* its devices, and a session while it opens one (devs_lock) */
	bool validation;
	VkInstance instance;
	VkDebugUtilsMessengerEXT messenger;
	/* the messenger runs on whichever thread made the call: msg_lock protects what it counts */
	pthread_mutex_t msg_lock;
	uint32_t errors;             /* messages of severity error so far, any session's */
	char last[256];              /* the latest of them */
};

/*
 * A device of an instance, one per physical device (ERT_VULKAN_DEVICE
 * chooses among them): its queue, and the layouts every pipeline uses.
 */
struct ert_vk_dev {
	struct ert_vk_dev *next;     /* the process's devices (under devs_lock) */
	uint32_t refs;               /* sessions holding it (devs_lock) */
	struct ert_vk_inst *inst;    /* held */
	VkPhysicalDevice phys;
	VkDevice dev;
	VkQueue queue;
	/* a VkQueue is externally synchronized: every submit and wait-idle on it, any session's */
	pthread_mutex_t queue_lock;
	uint32_t queue_family;
	uint32_t timestamp_bits;
	VkPhysicalDeviceProperties props;
	VkPhysicalDeviceMemoryProperties mem_props;
	bool f16_storage;            /* storageBuffer16BitAccess enabled (the device has it) */
	/* what it has of the speed paths' features; shaderFloat16 enabled where it has it */
	struct ert_vk_caps caps;
	/* dma-buf import's entry point, its two extensions enabled; else NULL and why not */
	PFN_vkGetMemoryFdPropertiesKHR get_fd_props;
	const char *dmabuf_why;
	VkDescriptorSetLayout set_layout;
	VkPipelineLayout pipe_layout;
	/*
	 * What its sessions share beyond the queue (gpu-common/gpu-share.h):
	 * pipelines (built through pipe_cache, into which each session's cache
	 * file is merged; modules and pipe_cache's merges under pipes' lock)
	 * and uploaded constants; each entry freed with the last session
	 * holding it.
	 */
	bool tables;                 /* pipes and consts initialised */
	struct ert_gpu_share pipes;
	struct ert_gpu_share consts;
	VkShaderModule modules[ERT_VK_MAX_SHADERS];
	VkPipelineCache pipe_cache;
};

/*
 * devs_lock protects both lists and every refs; it is held while a first
 * session creates an instance or a device, so that a second one created at
 * once on another thread waits and shares it.
 */
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ert_vk_inst *insts;
static struct ert_vk_dev *open_devs;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
						 VkDebugUtilsMessageTypeFlagsEXT type,
						 const VkDebugUtilsMessengerCallbackDataEXT *d,
						 void *user)
{
	struct ert_vk_inst *in = user;
	const char *msg = d && d->pMessage ? d->pMessage : "?";

	if (!(sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT))
		return VK_FALSE;
	pthread_mutex_lock(&in->msg_lock);
	in->errors++;
	snprintf(in->last, sizeof(in->last), "%s", msg);
	pthread_mutex_unlock(&in->msg_lock);
	fprintf(stderr, "edgert: vulkan validation error: %s\n", msg);
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

static void inst_free(struct ert_vk_inst *in)
{
	if (in->messenger) {
		PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)
			vkGetInstanceProcAddr(in->instance, "vkDestroyDebugUtilsMessengerEXT");

		if (destroy)
			destroy(in->instance, in->messenger, NULL);
	}
	if (in->instance)
		vkDestroyInstance(in->instance, NULL);
	pthread_mutex_destroy(&in->msg_lock);
	free(in);
}

/*
 * With @validation (ERT_VULKAN_VALIDATION=1) the Khronos validation layer is
 * on, with a messenger that prints every error and counts it: a step or a
 * sync that finds a new one fails (ert_vk_validation_check), so tests cannot
 * miss one.
 */
static ert_status inst_new(bool validation, struct ert_vk_inst **out, struct ert_err *err)
{
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
	};
	VkInstanceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	struct ert_vk_inst *in;
	ert_status st = ERT_STATUS_UNSUPPORTED;
	VkResult rc;

	if (validation && !has_layer(VALIDATION_LAYER)) {
		ert_err_set(err, "vulkan: ERT_VULKAN_VALIDATION is set but the layer %s is not installed (vulkan-validationlayers)",
			    VALIDATION_LAYER);
		return ERT_STATUS_UNSUPPORTED;
	}
	in = calloc(1, sizeof(*in));
	if (!in) {
		ert_err_set(err, "vulkan: out of memory opening the instance");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	if (pthread_mutex_init(&in->msg_lock, NULL) != 0) {
		free(in);
		ert_err_set(err, "vulkan: cannot make the instance's lock");
		return ERT_STATUS_BACKEND;
	}
	in->validation = validation;
	dm.pUserData = in;
	if (validation) {
		ci.enabledLayerCount = 1;
		ci.ppEnabledLayerNames = layers;
		ci.enabledExtensionCount = 1;
		ci.ppEnabledExtensionNames = exts;
		/* also catches what vkCreateInstance itself reports */
		ci.pNext = &dm;
	}
	rc = vkCreateInstance(&ci, NULL, &in->instance);
	if (rc != VK_SUCCESS) {
		in->instance = VK_NULL_HANDLE;
		if (rc == VK_ERROR_INCOMPATIBLE_DRIVER || rc == VK_ERROR_INITIALIZATION_FAILED)
			ert_err_set(err, "vulkan: no Vulkan driver (%s from vkCreateInstance: is an ICD installed under /usr/share/vulkan/icd.d?)",
				    ert_vk_result_name(rc));
		else
			ert_vk_fail(err, rc, "vkCreateInstance", NULL);
		goto error;
	}
	if (validation) {
		PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)
			vkGetInstanceProcAddr(in->instance, "vkCreateDebugUtilsMessengerEXT");

		if (!create) {
			ert_err_set(err, "vulkan: the validation layer has no vkCreateDebugUtilsMessengerEXT");
			goto error;
		}
		rc = create(in->instance, &dm, NULL, &in->messenger);
		if (rc != VK_SUCCESS) {
			in->messenger = VK_NULL_HANDLE;
			st = ert_vk_fail(err, rc, "vkCreateDebugUtilsMessengerEXT", NULL);
			goto error;
		}
	}
	in->refs = 1;
	*out = in;
	return ERT_OK;
error:
	inst_free(in);
	return st;
}

/* The instance of @validation with one more hold (devs_lock held). */
static ert_status inst_get(bool validation, struct ert_vk_inst **out, struct ert_err *err)
{
	struct ert_vk_inst *in;
	ert_status st;

	for (in = insts; in; in = in->next) {
		if (in->validation == validation) {
			in->refs++;
			*out = in;
			return ERT_OK;
		}
	}
	st = inst_new(validation, &in, err);
	if (st != ERT_OK)
		return st;
	in->next = insts;
	insts = in;
	*out = in;
	return ERT_OK;
}

/* Drop a hold on @in (devs_lock held); the last one destroys it. */
static void inst_put(struct ert_vk_inst *in)
{
	struct ert_vk_inst **pp;

	if (--in->refs)
		return;
	for (pp = &insts; *pp; pp = &(*pp)->next) {
		if (*pp == in) {
			*pp = in->next;
			break;
		}
	}
	inst_free(in);
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

static ert_status layout_create(struct ert_vk_dev *d, struct ert_err *err)
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
		.pSetLayouts = &d->set_layout,
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
	rc = vkCreateDescriptorSetLayout(d->dev, &sl, NULL, &d->set_layout);
	if (rc != VK_SUCCESS) {
		d->set_layout = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreateDescriptorSetLayout", NULL);
	}
	rc = vkCreatePipelineLayout(d->dev, &pl, NULL, &d->pipe_layout);
	if (rc != VK_SUCCESS) {
		d->pipe_layout = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreatePipelineLayout", NULL);
	}
	return ERT_OK;
}

bool ert_vk_device_has_ext(VkPhysicalDevice phys, const char *name)
{
	VkExtensionProperties *ext;
	uint32_t n = 0;
	bool found = false;

	if (vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL) != VK_SUCCESS || !n)
		return false;
	ext = calloc(n, sizeof(*ext));
	/* VK_INCOMPLETE (the list grew) still fills the first n */
	if (ext && vkEnumerateDeviceExtensionProperties(phys, NULL, &n, ext) >= 0)
		for (uint32_t i = 0; i < n && !found; i++)
			found = !strcmp(ext[i].extensionName, name);
	free(ext);
	return found;
}

/*
 * Which of the speed paths' features @phys has. shaderFloat16 is asked only
 * where the device lists VK_KHR_shader_float16_int8 (the instance is Vulkan
 * 1.1, where its structure is the extension's); subgroup properties are
 * core 1.1.
 */
static void caps_query(VkPhysicalDevice phys, struct ert_vk_caps *c)
{
	bool ext16 = ert_vk_device_has_ext(phys, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
	VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR,
	};
	VkPhysicalDevice16BitStorageFeatures s16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
		.pNext = ext16 ? &f16 : NULL,
	};
	VkPhysicalDeviceFeatures2 f2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &s16,
	};
	VkPhysicalDeviceSubgroupProperties sg = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
	};
	VkPhysicalDeviceProperties2 p2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &sg,
	};

	vkGetPhysicalDeviceFeatures2(phys, &f2);
	vkGetPhysicalDeviceProperties2(phys, &p2);
	ert_vk_caps_make(&s16, ext16 ? &f16 : NULL, &sg, c);
}

void ert_vk_caps_make(const VkPhysicalDevice16BitStorageFeatures *s16,
		      const VkPhysicalDeviceShaderFloat16Int8FeaturesKHR *f16,
		      const VkPhysicalDeviceSubgroupProperties *sg, struct ert_vk_caps *c)
{
	const VkSubgroupFeatureFlags need = VK_SUBGROUP_FEATURE_BASIC_BIT |
					    VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;

	c->storage16 = s16->storageBuffer16BitAccess;
	c->float16 = f16 && f16->shaderFloat16;
	c->subgroup_arith = (sg->supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
			    (sg->supportedOperations & need) == need && sg->subgroupSize > 0;
	c->subgroup_size = sg->subgroupSize;
}

ert_status ert_vk_paths_choose(const struct ert_vk_caps *caps, ert_level precision,
			       const char *f16, const char *sg, const char *name,
			       struct ert_vk_paths *out, struct ert_err *err)
{
	bool f16_off = f16 && !strcmp(f16, "off"), want_storage = f16 && !strcmp(f16, "storage");
	bool want_arith = f16 && !strcmp(f16, "arith");
	bool sg_off = sg && !strcmp(sg, "off"), sg_on = sg && !strcmp(sg, "on");
	bool low = precision == ERT_LEVEL_LOW;
	const char *f16_why, *sg_why;

	memset(out, 0, sizeof(*out));
	if (f16 && *f16 && !f16_off && !want_storage && !want_arith) {
		ert_err_set(err, "vulkan: ERT_VULKAN_F16='%s': expected 'arith', 'storage' or 'off'", f16);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (sg && *sg && !sg_off && !sg_on) {
		ert_err_set(err, "vulkan: ERT_VULKAN_SUBGROUP='%s': expected 'on' or 'off'", sg);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (low && (want_storage || want_arith) && !caps->storage16) {
		ert_err_set(err, "vulkan: ERT_VULKAN_F16=%s but %s has no storageBuffer16BitAccess",
			    f16, name);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (low && want_arith && !caps->float16) {
		ert_err_set(err, "vulkan: ERT_VULKAN_F16=arith but %s has no shaderFloat16 (VK_KHR_shader_float16_int8)",
			    name);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (sg_on && !caps->subgroup_arith) {
		ert_err_set(err, "vulkan: ERT_VULKAN_SUBGROUP=on but %s has no subgroup arithmetic in compute shaders",
			    name);
		return ERT_STATUS_UNSUPPORTED;
	}
	out->f16_storage = low && !f16_off && caps->storage16;
	out->f16_arith = out->f16_storage && !want_storage && caps->float16;
	out->subgroup = !sg_off && caps->subgroup_arith;
	if (!low)
		f16_why = "precision not low";
	else if (f16_off)
		f16_why = "fp32 (ERT_VULKAN_F16=off)";
	else if (!out->f16_storage)
		f16_why = "fp32 (no storageBuffer16BitAccess)";
	else if (out->f16_arith)
		f16_why = "fp16 storage, half arithmetic (shaderFloat16)";
	else if (want_storage)
		f16_why = "fp16 storage, float arithmetic (ERT_VULKAN_F16=storage)";
	else
		f16_why = "fp16 storage, float arithmetic (no shaderFloat16)";
	if (out->subgroup)
		sg_why = "subgroup";
	else if (sg_off)
		sg_why = "shared memory (ERT_VULKAN_SUBGROUP=off)";
	else
		sg_why = "shared memory (no subgroup arithmetic in compute)";
	if (out->subgroup)
		snprintf(out->note, sizeof(out->note), "reductions %s (size %u); %s", sg_why,
			 caps->subgroup_size, f16_why);
	else
		snprintf(out->note, sizeof(out->note), "reductions %s; %s", sg_why, f16_why);
	return ERT_OK;
}

/* The session's paths from its device's features (ert_vk_paths_choose). */
static ert_status setup_paths(struct ert_vk *vk, const struct ert_vk_dev *d, struct ert_err *err)
{
	struct ert_vk_paths paths;
	ert_status st = ert_vk_paths_choose(&d->caps, vk->precision, getenv("ERT_VULKAN_F16"),
					    getenv("ERT_VULKAN_SUBGROUP"), vk->props.deviceName,
					    &paths, err);

	if (st != ERT_OK)
		return st;
	vk->f16_storage = paths.f16_storage;
	vk->f16_arith = paths.f16_arith;
	vk->subgroup = paths.subgroup;
	snprintf(vk->paths, sizeof(vk->paths), "%s", paths.note);
	return ERT_OK;
}

static void dev_free(struct ert_vk_dev *d)
{
	/* sessions let go of every entry before the device goes: these free nothing */
	if (d->tables) {
		ert_gpu_share_fini(&d->consts);
		ert_gpu_share_fini(&d->pipes);
	}
	if (d->dev) {
		for (int i = 0; i < ERT_VK_MAX_SHADERS; i++)
			if (d->modules[i])
				vkDestroyShaderModule(d->dev, d->modules[i], NULL);
		if (d->pipe_cache)
			vkDestroyPipelineCache(d->dev, d->pipe_cache, NULL);
		if (d->pipe_layout)
			vkDestroyPipelineLayout(d->dev, d->pipe_layout, NULL);
		if (d->set_layout)
			vkDestroyDescriptorSetLayout(d->dev, d->set_layout, NULL);
		vkDestroyDevice(d->dev, NULL);
	}
	pthread_mutex_destroy(&d->queue_lock);
	free(d);
}

/* Device @phys of instance @in (holding it: put when this fails), its queue and layouts. */
static ert_status dev_new(struct ert_vk_inst *in, VkPhysicalDevice phys, struct ert_vk_dev **out,
			  struct ert_err *err)
{
	VkPhysicalDeviceShaderFloat16Int8FeaturesKHR half = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR,
	};
	VkPhysicalDevice16BitStorageFeatures f16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
	};
	/* shaderFloat16's extension, dma-buf import's two */
	const char *exts[3];
	uint32_t n_exts = 0;
	bool dmabuf = false;
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
	VkPipelineCacheCreateInfo pc = { .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO };
	struct ert_vk_dev *d = calloc(1, sizeof(*d));
	bool found = false;
	ert_status st = ERT_STATUS_UNSUPPORTED;
	VkResult rc;

	if (!d) {
		inst_put(in);
		ert_err_set(err, "vulkan: out of memory opening the device");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	if (pthread_mutex_init(&d->queue_lock, NULL) != 0) {
		free(d);
		inst_put(in);
		ert_err_set(err, "vulkan: cannot make the queue's lock");
		return ERT_STATUS_BACKEND;
	}
	d->inst = in;
	d->phys = phys;
	vkGetPhysicalDeviceProperties(phys, &d->props);
	vkGetPhysicalDeviceMemoryProperties(phys, &d->mem_props);
	if (d->props.apiVersion < VK_API_VERSION_1_1) {
		ert_err_set(err, "vulkan: %s has Vulkan %u.%u; 1.1 or later is needed",
			    d->props.deviceName, VK_API_VERSION_MAJOR(d->props.apiVersion),
			    VK_API_VERSION_MINOR(d->props.apiVersion));
		goto error;
	}
	vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, fam);
	for (uint32_t i = 0; i < nfam && !found; i++) {
		if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
			d->queue_family = i;
			d->timestamp_bits = fam[i].timestampValidBits;
			found = true;
		}
	}
	if (!found) {
		ert_err_set(err, "vulkan: %s has no compute queue", d->props.deviceName);
		goto error;
	}
	/*
	 * what the device has of them is enabled (shaderFloat16 with its
	 * extension): the sessions it serves choose (setup_paths)
	 */
	caps_query(phys, &d->caps);
	d->f16_storage = d->caps.storage16;
	f16.storageBuffer16BitAccess = d->f16_storage;
	if (d->caps.float16) {
		half.shaderFloat16 = VK_TRUE;
		f16.pNext = &half;
		exts[n_exts++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
	}
	qi.queueFamilyIndex = d->queue_family;
	st = ert_vk_dmabuf_enable(phys, exts, &n_exts, &dmabuf, &d->dmabuf_why, err);
	if (st != ERT_OK)
		goto error;
	di.enabledExtensionCount = n_exts;
	di.ppEnabledExtensionNames = exts;
	rc = vkCreateDevice(phys, &di, NULL, &d->dev);
	if (rc != VK_SUCCESS) {
		d->dev = VK_NULL_HANDLE;
		st = ert_vk_fail(err, rc, "vkCreateDevice", NULL);
		goto error;
	}
	vkGetDeviceQueue(d->dev, d->queue_family, 0, &d->queue);
	d->get_fd_props = ert_vk_dmabuf_entry(d->dev, dmabuf, &d->dmabuf_why);
	st = layout_create(d, err);
	if (st != ERT_OK)
		goto error;
	rc = vkCreatePipelineCache(d->dev, &pc, NULL, &d->pipe_cache);
	if (rc != VK_SUCCESS) {
		d->pipe_cache = VK_NULL_HANDLE;
		st = ert_vk_fail(err, rc, "vkCreatePipelineCache", NULL);
		goto error;
	}
	if (!ert_gpu_share_init(&d->pipes, sizeof(VkPipeline), ert_vk_pipeline_free, &d->dev)) {
		st = ERT_STATUS_BACKEND;
		ert_err_set(err, "vulkan: cannot make the device's locks");
		goto error;
	}
	if (!ert_gpu_share_init(&d->consts, sizeof(struct ert_vk_const_obj), ert_vk_const_free,
				&d->dev)) {
		ert_gpu_share_fini(&d->pipes);
		st = ERT_STATUS_BACKEND;
		ert_err_set(err, "vulkan: cannot make the device's locks");
		goto error;
	}
	d->tables = true;
	d->refs = 1;
	*out = d;
	return ERT_OK;
error:
	dev_free(d);
	inst_put(in);
	return st;
}

/*
 * The device @phys of @in with one more hold, made when no session has it
 * (devs_lock held); the caller's hold on @in goes to the device (kept by a
 * new one, dropped when one is shared) and is dropped on failure.
 */
static ert_status dev_get(struct ert_vk_inst *in, VkPhysicalDevice phys, struct ert_vk_dev **out,
			  bool *shared, struct ert_err *err)
{
	struct ert_vk_dev *d;
	ert_status st;

	for (d = open_devs; d; d = d->next)
		if (d->inst == in && d->phys == phys)
			break;
	*shared = d != NULL;
	if (d) {
		d->refs++;
		inst_put(in);
		*out = d;
		return ERT_OK;
	}
	st = dev_new(in, phys, &d, err);
	if (st != ERT_OK)
		return st;
	d->next = open_devs;
	open_devs = d;
	*out = d;
	return ERT_OK;
}

/* Drop a session's hold on @d (devs_lock held); the last one destroys it and puts its instance. */
static void dev_put(struct ert_vk_dev *d)
{
	struct ert_vk_dev **pp;
	struct ert_vk_inst *in = d->inst;

	if (--d->refs)
		return;
	for (pp = &open_devs; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	dev_free(d);
	inst_put(in);
}

uint32_t ert_vk_devices_open(void)
{
	uint32_t n = 0;

	pthread_mutex_lock(&devs_lock);
	for (const struct ert_vk_dev *d = open_devs; d; d = d->next)
		n++;
	for (const struct ert_vk_inst *in = insts; in; in = in->next)
		n++;
	pthread_mutex_unlock(&devs_lock);
	return n;
}

/* Share (or open) the instance and the device this session chooses (devs_lock held). */
static ert_status take_device(struct ert_vk *vk, bool gpu_only, struct ert_err *err)
{
	struct ert_vk_inst *in;
	ert_status st = inst_get(vk->validation, &in, err);

	if (st != ERT_OK)
		return st;
	/* errors the layer reported before this session existed are not its own */
	pthread_mutex_lock(&in->msg_lock);
	vk->validation_seen = in->refs == 1 ? 0 : in->errors;
	pthread_mutex_unlock(&in->msg_lock);
	vk->instance = in->instance;
	st = choose(vk, gpu_only, err);
	if (st != ERT_OK) {
		inst_put(in);
		return st;
	}
	return dev_get(in, vk->phys, &vk->shared, &vk->times.device_shared, err);
}

ert_status ert_vk_device_open(struct ert_vk *vk, bool gpu_only, struct ert_err *err)
{
	VkCommandPoolCreateInfo cp = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
	};
	VkFenceCreateInfo fi = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	const char *v = getenv("ERT_VULKAN_VALIDATION");
	const char *gemm = getenv("ERT_VULKAN_GEMM");
	const struct ert_vk_dev *d;
	ert_status st;
	VkResult rc;

	vk->validation = v && *v && strcmp(v, "0");
	pthread_mutex_lock(&devs_lock);
	st = take_device(vk, gpu_only, err);
	pthread_mutex_unlock(&devs_lock);
	if (st != ERT_OK) {
		vk->instance = VK_NULL_HANDLE;
		vk->shared = NULL;
		return st;
	}
	d = vk->shared;
	vk->dev = d->dev;
	vk->queue = d->queue;
	vk->queue_family = d->queue_family;
	vk->timestamp_bits = d->timestamp_bits;
	vk->props = d->props;
	vk->mem_props = d->mem_props;
	vk->set_layout = d->set_layout;
	vk->pipe_layout = d->pipe_layout;
	vk->shared_pipes = &vk->shared->pipes;
	vk->modules = vk->shared->modules;
	vk->pipe_cache = d->pipe_cache;
	vk->shared_consts = &vk->shared->consts;
	vk->gemm_direct = vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
	if (gemm && *gemm) {
		if (strcmp(gemm, "tiled") && strcmp(gemm, "direct")) {
			ert_err_set(err, "vulkan: ERT_VULKAN_GEMM='%s' is not 'tiled' or 'direct'", gemm);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		vk->gemm_direct = !strcmp(gemm, "direct");
		vk->gemm_forced = true;
	}
	st = setup_paths(vk, d, err);
	if (st == ERT_OK)
		st = ert_vk_dmabuf_setup(vk, d->get_fd_props, d->dmabuf_why, err);
	if (st != ERT_OK)
		return st;
	cp.queueFamilyIndex = vk->queue_family;
	rc = vkCreateCommandPool(vk->dev, &cp, NULL, &vk->cmd_pool);
	if (rc != VK_SUCCESS) {
		vk->cmd_pool = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreateCommandPool", NULL);
	}
	rc = vkCreateFence(vk->dev, &fi, NULL, &vk->fence);
	if (rc != VK_SUCCESS) {
		vk->fence = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreateFence", NULL);
	}
	return ERT_OK;
}

VkResult ert_vk_queue_submit(struct ert_vk *vk, const VkSubmitInfo *si, VkFence fence)
{
	VkResult rc;

	/* the queue is every session's on this device: one submit at a time */
	pthread_mutex_lock(&vk->shared->queue_lock);
	rc = vkQueueSubmit(vk->queue, 1, si, fence);
	pthread_mutex_unlock(&vk->shared->queue_lock);
	return rc;
}

void ert_vk_queue_idle(struct ert_vk *vk)
{
	if (!vk->shared)
		return;
	/* waits for other sessions' work too: only when freeing what may still be in use */
	pthread_mutex_lock(&vk->shared->queue_lock);
	vkQueueWaitIdle(vk->queue);
	pthread_mutex_unlock(&vk->shared->queue_lock);
}

void ert_vk_device_close(struct ert_vk *vk)
{
	if (vk->shared) {
		/* nothing of this session's may still run when its pool and fence go */
		ert_vk_queue_idle(vk);
		if (vk->fence)
			vkDestroyFence(vk->dev, vk->fence, NULL);
		if (vk->cmd_pool)
			vkDestroyCommandPool(vk->dev, vk->cmd_pool, NULL);
		pthread_mutex_lock(&devs_lock);
		dev_put(vk->shared);
		pthread_mutex_unlock(&devs_lock);
	}
	vk->shared = NULL;
	vk->shared_pipes = NULL;
	vk->modules = NULL;
	vk->pipe_cache = VK_NULL_HANDLE;
	vk->shared_consts = NULL;
	vk->fence = VK_NULL_HANDLE;
	vk->cmd_pool = VK_NULL_HANDLE;
	vk->set_layout = VK_NULL_HANDLE;
	vk->pipe_layout = VK_NULL_HANDLE;
	vk->queue = VK_NULL_HANDLE;
	vk->dev = VK_NULL_HANDLE;
	vk->instance = VK_NULL_HANDLE;
}

ert_status ert_vk_validation_check(struct ert_vk *vk, struct ert_err *err)
{
	struct ert_vk_inst *in = vk->shared ? vk->shared->inst : NULL;
	uint32_t n;

	if (!in)
		return ERT_OK;
	pthread_mutex_lock(&in->msg_lock);
	n = in->errors - vk->validation_seen;
	if (n)
		ert_err_set(err, "vulkan: the validation layer reported %u error(s), the last: %.200s",
			    n, in->last);
	vk->validation_seen = in->errors;
	pthread_mutex_unlock(&in->msg_lock);
	return n ? ERT_STATUS_BACKEND : ERT_OK;
}
