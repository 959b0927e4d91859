/* SPDX-License-Identifier: MIT */
/*
 * The pipeline cache in the cache file (ert_config.cache_path): the bytes of
 * the backend's VkPipelineCache, read when the device opens and handed to
 * vkCreatePipelineCache, written back (temporary file, fsync, rename) once a
 * plan built a pipeline the file did not have.
 *
 * Format (host order): "ERTVKPC\0", u32 format version, u32 vendor id, u32
 * device id, u32 driver version, 16 bytes pipelineCacheUUID, u64 size, the
 * cache's bytes, u64 FNV-1a of everything before. Nothing is trusted: a file
 * that is short, damaged, of another version or made for another device or
 * driver is ignored with a warning on stderr and rewritten; the driver
 * checks the cache's own header again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vulkan/vk-impl.h"

#define CACHE_MAGIC "ERTVKPC"
#define CACHE_VERSION 1u
#define HEADER_BYTES (8 + 4 * 4 + VK_UUID_SIZE + 8)
#define CACHE_MAX (256u << 20)

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void header(const struct ert_vk *vk, unsigned char *h, uint64_t size)
{
	uint32_t v[4] = { CACHE_VERSION, vk->props.vendorID, vk->props.deviceID,
			  vk->props.driverVersion };

	memcpy(h, CACHE_MAGIC, 8);
	memcpy(h + 8, v, sizeof(v));
	memcpy(h + 24, vk->props.pipelineCacheUUID, VK_UUID_SIZE);
	memcpy(h + 24 + VK_UUID_SIZE, &size, 8);
}

static void warn(struct ert_vk *vk, const char *why)
{
	fprintf(stderr, "edgert: vulkan: ignoring the cache file '%s': %s; it will be rewritten\n",
		vk->cache_path, why);
	vk->cache_rejected = true;
	vk->cache_dirty = true;
}

/* The file's pipeline cache bytes (malloc'd) in *@data, or NULL with a warning. */
static void *cache_read(struct ert_vk *vk, size_t *size_out)
{
	unsigned char want[HEADER_BYTES];
	unsigned char *buf = NULL;
	uint64_t size, sum;
	long len;
	FILE *f = fopen(vk->cache_path, "rb");

	*size_out = 0;
	if (!f) {
		/* none yet: written after the first plan */
		vk->cache_dirty = true;
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		warn(vk, "cannot be read");
		return NULL;
	}
	if ((unsigned long)len < HEADER_BYTES + 8 || (unsigned long)len > CACHE_MAX + HEADER_BYTES + 8 ||
	    !(buf = malloc((size_t)len)) || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		warn(vk, (unsigned long)len < HEADER_BYTES + 8 ? "too short to be a cache file" :
		     "too large or unreadable");
		return NULL;
	}
	fclose(f);
	if (memcmp(buf, CACHE_MAGIC, 8)) {
		free(buf);
		warn(vk, "not a Vulkan cache file of edgert");
		return NULL;
	}
	memcpy(&sum, buf + len - 8, 8);
	memcpy(&size, buf + 24 + VK_UUID_SIZE, 8);
	if (fnv1a(0xcbf29ce484222325ull, buf, (size_t)len - 8) != sum ||
	    size != (uint64_t)len - HEADER_BYTES - 8) {
		free(buf);
		warn(vk, "damaged (checksum)");
		return NULL;
	}
	header(vk, want, size);
	if (memcmp(buf + 8, want + 8, 4)) {
		free(buf);
		warn(vk, "of another format version");
		return NULL;
	}
	if (memcmp(buf + 12, want + 12, HEADER_BYTES - 12 - 8)) {
		free(buf);
		warn(vk, "made for another device or driver");
		return NULL;
	}
	memmove(buf, buf + HEADER_BYTES, (size_t)size);
	*size_out = (size_t)size;
	return buf;
}

ert_status ert_vk_cache_open(struct ert_vk *vk, const char *path, struct ert_err *err)
{
	VkPipelineCacheCreateInfo pc = { .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO };
	void *data = NULL;
	size_t size = 0;
	VkResult rc;

	if (path && *path) {
		vk->cache_path = strdup(path);
		if (!vk->cache_path) {
			ert_err_set(err, "vulkan: out of memory");
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		data = cache_read(vk, &size);
	}
	pc.initialDataSize = size;
	pc.pInitialData = data;
	rc = vkCreatePipelineCache(vk->dev, &pc, NULL, &vk->pipe_cache);
	if (rc != VK_SUCCESS && data) {
		/* the driver refused the bytes: start empty */
		warn(vk, "refused by the driver");
		pc.initialDataSize = 0;
		pc.pInitialData = NULL;
		rc = vkCreatePipelineCache(vk->dev, &pc, NULL, &vk->pipe_cache);
	}
	vk->cache_loaded = data != NULL && !vk->cache_rejected;
	free(data);
	if (rc != VK_SUCCESS) {
		vk->pipe_cache = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreatePipelineCache", NULL);
	}
	vk->cache_in_file = vk->cache_loaded;
	vk->cache_size = size;
	return ERT_OK;
}

void ert_vk_cache_flush(struct ert_vk *vk)
{
	unsigned char h[HEADER_BYTES];
	unsigned char *buf = NULL;
	char *tmp = NULL;
	size_t size = 0;
	uint64_t sum;
	int fd = -1;

	if (!vk->cache_path || !vk->cache_dirty || vk->cache_unwritable || !vk->pipe_cache)
		return;
	if (vkGetPipelineCacheData(vk->dev, vk->pipe_cache, &size, NULL) != VK_SUCCESS ||
	    size > CACHE_MAX || !(buf = malloc(size ? size : 1)) ||
	    vkGetPipelineCacheData(vk->dev, vk->pipe_cache, &size, buf) != VK_SUCCESS)
		goto fail;
	if (vk->cache_in_file && size == vk->cache_size) {
		/* the driver added nothing to what the file holds */
		vk->cache_dirty = false;
		free(buf);
		return;
	}
	header(vk, h, size);
	sum = fnv1a(fnv1a(0xcbf29ce484222325ull, h, sizeof(h)), buf, size);
	if (asprintf(&tmp, "%s.tmp.XXXXXX", vk->cache_path) < 0) {
		tmp = NULL;
		goto fail;
	}
	fd = mkstemp(tmp);
	if (fd < 0)
		goto fail;
	/* written whole and on disk before it replaces the old file */
	if (write(fd, h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    (size && write(fd, buf, size) != (ssize_t)size) ||
	    write(fd, &sum, 8) != 8 || fsync(fd) || close(fd)) {
		fd = -1;
		unlink(tmp);
		goto fail;
	}
	fd = -1;
	if (rename(tmp, vk->cache_path)) {
		unlink(tmp);
		goto fail;
	}
	vk->cache_dirty = false;
	vk->cache_in_file = true;
	vk->cache_size = size;
	free(tmp);
	free(buf);
	return;
fail:
	if (fd >= 0)
		close(fd);
	fprintf(stderr, "edgert: vulkan: cannot write the cache file '%s' (%s); running without it\n",
		vk->cache_path, strerror(errno));
	vk->cache_unwritable = true;
	free(tmp);
	free(buf);
}

void ert_vk_cache_close(struct ert_vk *vk)
{
	free(vk->cache_path);
	vk->cache_path = NULL;
}
