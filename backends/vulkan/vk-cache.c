/* SPDX-License-Identifier: MIT */
/*
 * The cache file (ert_config.cache_path): the bytes of the device's
 * VkPipelineCache and the table of tuned launches (vk-tune.c), read when the
 * device opens (the bytes handed to vkCreatePipelineCache and merged into
 * the device's cache, which every session on it builds through), written
 * back (temporary file, fsync, rename) once a plan built or took from
 * another session a pipeline the file did not have, or tuned a launch. The
 * device's cache then holds what the process's sessions have built, so a
 * session's file may get more pipelines than its own model's.
 *
 * Format (host order): "ERTVKPC\0", u32 format version, u32 vendor id, u32
 * device id, u32 driver version, 16 bytes pipelineCacheUUID, u64 size, the
 * cache's bytes, the tuning table (gpu-common's ert_tune_serialize), u64
 * FNV-1a of everything before. Nothing is trusted: a file that is short,
 * damaged, of another version or made for another device or driver is
 * ignored with a warning on stderr and rewritten; the driver checks the
 * cache's own header again, and each tuning entry is used only when it is
 * a candidate of its launch.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vulkan/vk-impl.h"

#define CACHE_MAGIC "ERTVKPC"
#define CACHE_VERSION 2u
#define HEADER_BYTES (8 + 4 * 4 + VK_UUID_SIZE + 8)
#define CACHE_MAX (256u << 20)

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
	snprintf(vk->cache_note, sizeof(vk->cache_note),
		 "vulkan: ignoring the cache file '%s': %s; it will be rewritten", vk->cache_path, why);
	fprintf(stderr, "edgert: %s\n", vk->cache_note);
	vk->cache_rejected = true;
	vk->cache_dirty = true;
}

/*
 * Why the @len bytes at @buf are not a cache file of this device and
 * driver, or NULL: then *@data and *@size are the pipeline cache's bytes
 * (within @buf) and the file's tuning entries are in vk->tuned.
 */
static const char *cache_parse(struct ert_vk *vk, const unsigned char *buf, size_t len,
			       const unsigned char **data, size_t *size)
{
	unsigned char want[HEADER_BYTES];
	struct ert_rd r = { buf, len, false };
	const char *why;
	uint64_t sum, n;
	size_t used;

	if (len < HEADER_BYTES + 8)
		return "too short to be a cache file";
	if (memcmp(buf, CACHE_MAGIC, 8))
		return "not a Vulkan cache file of edgert";
	memcpy(&sum, buf + len - 8, 8);
	if (ert_hash64(ERT_HASH64_INIT, buf, len - 8) != sum)
		return "damaged (checksum)";
	r.left -= 8;
	ert_rd_take(&r, 8);
	header(vk, want, 0);
	if (ert_rd_u32(&r) != CACHE_VERSION)
		return "of another format version";
	if (memcmp(ert_rd_take(&r, 12 + VK_UUID_SIZE), want + 12, 12 + VK_UUID_SIZE))
		return "made for another device or driver";
	n = ert_rd_u64(&r);
	*data = n <= r.left ? ert_rd_take(&r, (size_t)n) : NULL;
	if (!*data)
		return "damaged (size)";
	*size = (size_t)n;
	/* the table is read whole or not at all (it is empty before) */
	why = ert_tune_parse(&vk->tuned, r.p, r.left, &used);
	if (!why && used != r.left)
		why = "damaged (bytes after the tuning table)";
	if (why)
		ert_tune_table_free(&vk->tuned);
	/* what the file holds need not be written back */
	vk->tuned.dirty = false;
	return why;
}

/* The file's pipeline cache bytes (malloc'd) in *@data, or NULL with a warning. */
static void *cache_read(struct ert_vk *vk, size_t *size_out)
{
	unsigned char *buf = NULL;
	const unsigned char *data = NULL;
	const char *why;
	size_t size = 0;
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
	if ((unsigned long)len > CACHE_MAX || !(buf = malloc(len ? (size_t)len : 1)) ||
	    fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		warn(vk, "too large or unreadable");
		return NULL;
	}
	fclose(f);
	why = cache_parse(vk, buf, (size_t)len, &data, &size);
	if (why) {
		free(buf);
		warn(vk, why);
		return NULL;
	}
	memmove(buf, data, size);
	*size_out = size;
	return buf;
}

ert_status ert_vk_cache_open(struct ert_vk *vk, const char *path, struct ert_err *err)
{
	VkPipelineCacheCreateInfo pc = { .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO };
	VkPipelineCache file = VK_NULL_HANDLE;
	void *data = NULL;
	size_t size = 0;
	VkResult rc = VK_SUCCESS;

	if (path && *path) {
		vk->cache_path = strdup(path);
		if (!vk->cache_path) {
			ert_err_set(err, "vulkan: out of memory");
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		data = cache_read(vk, &size);
	}
	if (data) {
		pc.initialDataSize = size;
		pc.pInitialData = data;
		rc = vkCreatePipelineCache(vk->dev, &pc, NULL, &file);
		if (rc == VK_SUCCESS) {
			/* the device's cache is every session's: a merge into it is externally synchronized */
			pthread_mutex_lock(&vk->shared_pipes->lock);
			rc = vkMergePipelineCaches(vk->dev, vk->pipe_cache, 1, &file);
			pthread_mutex_unlock(&vk->shared_pipes->lock);
			vkDestroyPipelineCache(vk->dev, file, NULL);
		}
		/* the driver refused the bytes: the device's cache goes on without them */
		if (rc != VK_SUCCESS)
			warn(vk, "refused by the driver");
	}
	vk->cache_loaded = data != NULL && !vk->cache_rejected;
	free(data);
	vk->cache_in_file = vk->cache_loaded;
	vk->cache_size = size;
	return ERT_OK;
}

void ert_vk_cache_flush(struct ert_vk *vk)
{
	unsigned char h[HEADER_BYTES];
	unsigned char *buf = NULL;
	char *tmp = NULL;
	size_t size = 0, tsize;
	uint64_t sum;
	int fd = -1;
	bool ok;

	if (!vk->cache_path || (!vk->cache_dirty && !vk->tuned.dirty) || vk->cache_unwritable ||
	    !vk->pipe_cache)
		return;
	tsize = ert_tune_serialize(&vk->tuned, NULL, 0);
	/* not while another session builds through the cache or merges into it (same size twice) */
	pthread_mutex_lock(&vk->shared_pipes->lock);
	ok = vkGetPipelineCacheData(vk->dev, vk->pipe_cache, &size, NULL) == VK_SUCCESS &&
	     size <= CACHE_MAX && tsize <= CACHE_MAX && (buf = malloc(size + tsize)) &&
	     vkGetPipelineCacheData(vk->dev, vk->pipe_cache, &size, buf) == VK_SUCCESS;
	pthread_mutex_unlock(&vk->shared_pipes->lock);
	if (!ok)
		goto fail;
	if (vk->cache_in_file && size == vk->cache_size && !vk->tuned.dirty) {
		/* the driver added nothing to what the file holds, nor the tuner */
		vk->cache_dirty = false;
		free(buf);
		return;
	}
	/* the driver may give fewer bytes the second time: the table right after them */
	ert_tune_serialize(&vk->tuned, buf + size, tsize);
	header(vk, h, size);
	sum = ert_hash64(ert_hash64(ERT_HASH64_INIT, h, sizeof(h)), buf, size + tsize);
	if (asprintf(&tmp, "%s.tmp.XXXXXX", vk->cache_path) < 0) {
		tmp = NULL;
		goto fail;
	}
	fd = mkstemp(tmp);
	if (fd < 0)
		goto fail;
	/* written whole and on disk before it replaces the old file */
	if (write(fd, h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    write(fd, buf, size + tsize) != (ssize_t)(size + tsize) ||
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
	vk->tuned.dirty = false;
	vk->cache_in_file = true;
	vk->cache_size = size;
	free(tmp);
	free(buf);
	return;
fail:
	if (fd >= 0)
		close(fd);
	snprintf(vk->cache_note, sizeof(vk->cache_note),
		 "vulkan: cannot write the cache file '%s' (%s); running without it", vk->cache_path,
		 strerror(errno));
	fprintf(stderr, "edgert: %s\n", vk->cache_note);
	vk->cache_unwritable = true;
	free(tmp);
	free(buf);
}

void ert_vk_cache_close(struct ert_vk *vk)
{
	free(vk->cache_path);
	vk->cache_path = NULL;
}
