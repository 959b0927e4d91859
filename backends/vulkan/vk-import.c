/* SPDX-License-Identifier: MIT */
/*
 * dma-buf import: another backend's buffer (an enpu BO exported with PRIME)
 * as a VkBuffer, so that steps read the NPU's results in place instead of
 * through the staging copies (docs/vulkan.md, "Zero copy with the NPU").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vulkan/vk-impl.h"

static const char *const dmabuf_exts[] = {
	VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
	VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME,
};

/* $ERT_VULKAN_DMABUF: 1 auto (unset, "" or "auto"), 0 "off", -1 anything else. */
static int env_mode(const char *env)
{
	if (!env || !*env || !strcmp(env, "auto"))
		return 1;
	return strcmp(env, "off") ? -1 : 0;
}

int ert_vk_dmabuf_decide(const VkExtensionProperties *exts, uint32_t n, const char *env,
			 const char **why_out)
{
	bool fd = false, dma = false;
	int mode = env_mode(env);

	if (mode <= 0) {
		*why_out = mode ? "ERT_VULKAN_DMABUF is not 'auto' or 'off'" : "ERT_VULKAN_DMABUF=off";
		return mode;
	}
	for (uint32_t i = 0; i < n; i++) {
		fd |= !strcmp(exts[i].extensionName, dmabuf_exts[0]);
		dma |= !strcmp(exts[i].extensionName, dmabuf_exts[1]);
	}
	if (!fd || !dma) {
		*why_out = !fd ? "the device has no VK_KHR_external_memory_fd" :
			"the device has no VK_EXT_external_memory_dma_buf";
		return 0;
	}
	*why_out = NULL;
	return 1;
}

ert_status ert_vk_dmabuf_enable(VkPhysicalDevice phys, const char **names, uint32_t *n_names,
				bool *enabled_out, const char **why_out, struct ert_err *err)
{
	VkExtensionProperties *exts = NULL;
	uint32_t n = 0;

	*enabled_out = false;
	if (vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL) != VK_SUCCESS)
		n = 0;
	if (n) {
		exts = calloc(n, sizeof(*exts));
		if (!exts) {
			ert_err_set(err, "vulkan: out of memory listing device extensions");
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		/* VK_INCOMPLETE still fills the first n */
		if (vkEnumerateDeviceExtensionProperties(phys, NULL, &n, exts) < 0)
			n = 0;
	}
	/* the device enables what it has; each session applies the variable */
	if (ert_vk_dmabuf_decide(exts, n, NULL, why_out) == 1) {
		names[(*n_names)++] = dmabuf_exts[0];
		names[(*n_names)++] = dmabuf_exts[1];
		*enabled_out = true;
	}
	free(exts);
	return ERT_OK;
}

PFN_vkGetMemoryFdPropertiesKHR ert_vk_dmabuf_entry(VkDevice dev, bool enabled,
						   const char **why_out)
{
	PFN_vkGetMemoryFdPropertiesKHR fn = NULL;

	if (!enabled)
		return NULL;
	fn = (PFN_vkGetMemoryFdPropertiesKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdPropertiesKHR");
	if (!fn)
		*why_out = "the driver has no vkGetMemoryFdPropertiesKHR";
	return fn;
}

ert_status ert_vk_dmabuf_setup(struct ert_vk *vk, PFN_vkGetMemoryFdPropertiesKHR fn,
			       const char *dev_why, struct ert_err *err)
{
	const char *env = getenv("ERT_VULKAN_DMABUF");
	int mode = env_mode(env);

	vk->dmabuf = false;
	vk->get_fd_props = NULL;
	if (mode < 0) {
		ert_err_set(err, "vulkan: ERT_VULKAN_DMABUF='%s': expected 'auto' or 'off'", env);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	vk->dmabuf_why = !mode ? "ERT_VULKAN_DMABUF=off" : dev_why;
	if (mode && fn) {
		vk->dmabuf = true;
		vk->get_fd_props = fn;
	}
	return ERT_OK;
}

/* The memory type for the buffer @req over the dma-buf whose types are @fd_bits: device-local preferred. */
static ert_status import_type(struct ert_vk *vk, uint32_t fd_bits, const VkMemoryRequirements *req,
			      uint32_t *type_out, struct ert_err *err)
{
	int type = ert_vk_memory_type(vk, req->memoryTypeBits & fd_bits, 0,
				      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);

	if (type < 0) {
		ert_err_set(err, "vulkan: %s has no memory type for both a storage buffer (0x%x) and the dma-buf (0x%x)",
			    vk->props.deviceName, req->memoryTypeBits, fd_bits);
		return ERT_STATUS_UNSUPPORTED;
	}
	*type_out = (uint32_t)type;
	return ERT_OK;
}

ert_status ert_vk_import_fd(struct ert_vk *vk, int fd, size_t size, struct ert_vk_arena *a,
			    struct ert_err *err)
{
	VkExternalMemoryBufferCreateInfo eb = {
		.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
		.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT,
	};
	VkBufferCreateInfo bi = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.pNext = &eb,
		.size = size ? size : 64,
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
			 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkImportMemoryFdInfoKHR imp = {
		.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
		.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT,
		.fd = -1,
	};
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &imp };
	VkMemoryFdPropertiesKHR fp = { .sType = VK_STRUCTURE_TYPE_MEMORY_FD_PROPERTIES_KHR };
	VkMemoryRequirements req;
	off_t fd_size;
	ert_status st;
	VkResult rc;

	*a = (struct ert_vk_arena){ 0 };
	if (!vk->dmabuf) {
		ert_err_set(err, "vulkan: %s cannot import a dma-buf: %s", vk->props.deviceName,
			    vk->dmabuf_why ? vk->dmabuf_why : "not set up");
		return ERT_STATUS_UNSUPPORTED;
	}
	/* a dma-buf's size is its end; the checks below keep invalid fds from the driver */
	fd_size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
	/* the offset is the caller's (a dma-buf's has no use, other files' may) */
	if (fd_size >= 0)
		lseek(fd, 0, SEEK_SET);
	if (fd_size < 0) {
		ert_err_set(err, "vulkan: dma-buf fd %d: %s", fd, strerror(fd < 0 ? EBADF : errno));
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (size > vk->props.limits.maxStorageBufferRange || (uint64_t)size > (uint64_t)fd_size) {
		ert_err_set(err, "vulkan: a buffer of %zu bytes over a dma-buf of %lld bytes (the device's storage buffers go up to %u)",
			    size, (long long)fd_size, vk->props.limits.maxStorageBufferRange);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	/* what the driver makes of the fd, before anything is created */
	rc = vk->get_fd_props(vk->dev, VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT, fd, &fp);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkGetMemoryFdPropertiesKHR (dma-buf)", NULL);
	rc = vkCreateBuffer(vk->dev, &bi, NULL, &a->buf);
	if (rc != VK_SUCCESS) {
		a->buf = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreateBuffer (dma-buf import)", NULL);
	}
	vkGetBufferMemoryRequirements(vk->dev, a->buf, &req);
	if ((uint64_t)req.size > (uint64_t)fd_size) {
		ert_err_set(err, "vulkan: the buffer needs %llu bytes, the dma-buf has %lld",
			    (unsigned long long)req.size, (long long)fd_size);
		st = ERT_STATUS_UNSUPPORTED;
		goto err_buf;
	}
	st = import_type(vk, fp.memoryTypeBits, &req, &ai.memoryTypeIndex, err);
	if (st != ERT_OK)
		goto err_buf;
	ai.allocationSize = req.size;
	/* a successful import owns the fd: give it a dup, the caller keeps its own */
	imp.fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (imp.fd < 0) {
		ert_err_set(err, "vulkan: duplicating dma-buf fd %d: %s", fd, strerror(errno));
		st = ERT_STATUS_BACKEND;
		goto err_buf;
	}
	rc = vkAllocateMemory(vk->dev, &ai, NULL, &a->mem);
	if (rc != VK_SUCCESS) {
		a->mem = VK_NULL_HANDLE;
		close(imp.fd);
		st = ert_vk_fail(err, rc, "vkAllocateMemory (dma-buf import)", NULL);
		goto err_buf;
	}
	rc = vkBindBufferMemory(vk->dev, a->buf, a->mem, 0);
	if (rc != VK_SUCCESS) {
		st = ert_vk_fail(err, rc, "vkBindBufferMemory (dma-buf import)", NULL);
		goto err_buf;
	}
	return ERT_OK;
err_buf:
	/* freeing the imported memory closes its fd */
	ert_vk_buffer_del(vk, a->buf, a->mem);
	*a = (struct ert_vk_arena){ 0 };
	return st;
}
