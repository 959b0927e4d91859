/* SPDX-License-Identifier: MIT */
/*
 * Device timestamps: a VkQueryPool of timestamp queries, written into a
 * command buffer around recorded work and read back as nanoseconds once the
 * work has run. Used by the autotuner (vk-tune.c) and for per-op device times.
 */
#include <stdlib.h>
#include <string.h>

#include "vulkan/vk-impl.h"

/* The most slots a timer may have (a profile of a large model: two per dispatch). */
#define MAX_SLOTS 65536u

ert_status ert_vk_timer_new(struct ert_vk *vk, uint32_t slots, struct ert_vk_timer *t,
			    struct ert_err *err)
{
	VkQueryPoolCreateInfo qi = {
		.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
		.queryType = VK_QUERY_TYPE_TIMESTAMP,
		.queryCount = slots,
	};
	const char *hook = getenv("ERT_VULKAN_TEST_NO_TIMESTAMPS");
	VkResult rc;

	memset(t, 0, sizeof(*t));
	if (!slots || slots > MAX_SLOTS) {
		ert_err_set(err, "vulkan: a timer of %u timestamps (1..%u)", slots, MAX_SLOTS);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	/* a test hook: behave as a device without timestamps */
	if (hook && *hook && strcmp(hook, "0")) {
		ert_err_set(err, "vulkan: no timestamps (ERT_VULKAN_TEST_NO_TIMESTAMPS is set)");
		return ERT_STATUS_UNSUPPORTED;
	}
	if (!vk->timestamp_bits || !(vk->props.limits.timestampPeriod > 0.0f)) {
		ert_err_set(err, "vulkan: %s has no timestamps on its compute queue (timestampValidBits %u, timestampPeriod %g)",
			    vk->props.deviceName, vk->timestamp_bits,
			    (double)vk->props.limits.timestampPeriod);
		return ERT_STATUS_UNSUPPORTED;
	}
	rc = vkCreateQueryPool(vk->dev, &qi, NULL, &t->pool);
	if (rc != VK_SUCCESS) {
		t->pool = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreateQueryPool (timestamps)", NULL);
	}
	t->slots = slots;
	t->period_ns = (double)vk->props.limits.timestampPeriod;
	t->mask = vk->timestamp_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << vk->timestamp_bits) - 1;
	return ERT_OK;
}

void ert_vk_timer_free(struct ert_vk *vk, struct ert_vk_timer *t)
{
	if (t->pool && vk->dev)
		vkDestroyQueryPool(vk->dev, t->pool, NULL);
	memset(t, 0, sizeof(*t));
}

void ert_vk_timer_reset(VkCommandBuffer cmd, const struct ert_vk_timer *t, uint32_t first,
			uint32_t count)
{
	if (first < t->slots && count)
		vkCmdResetQueryPool(cmd, t->pool, first,
				    count > t->slots - first ? t->slots - first : count);
}

void ert_vk_timer_stamp(VkCommandBuffer cmd, const struct ert_vk_timer *t, uint32_t slot)
{
	if (slot < t->slots)
		vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t->pool, slot);
}

ert_status ert_vk_timer_read(struct ert_vk *vk, const struct ert_vk_timer *t, uint32_t first,
			     uint32_t count, uint64_t *ns, struct ert_err *err)
{
	uint64_t stack[2 * 64], *raw = stack, prev = 0, sum = 0;
	ert_status st = ERT_OK;
	VkResult rc;

	if (!t->pool || first >= t->slots || !count || count > t->slots - first) {
		ert_err_set(err, "vulkan: timestamps %u..%u are not in a timer of %u", first,
			    first + count, t->slots);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (count > 64 && !(raw = malloc(2 * sizeof(*raw) * count))) {
		ert_err_set(err, "vulkan: out of memory reading %u timestamps", count);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	/* no WAIT_BIT: a slot never written answers "not available" instead of hanging */
	rc = vkGetQueryPoolResults(vk->dev, t->pool, first, count, 2 * sizeof(*raw) * count, raw,
				   2 * sizeof(*raw),
				   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
	if (rc != VK_SUCCESS && rc != VK_NOT_READY) {
		st = ert_vk_fail(err, rc, "vkGetQueryPoolResults (timestamps)", NULL);
		goto out;
	}
	/* every slot there before @ns is written: a failed read leaves it as it was */
	for (uint32_t i = 0; i < count; i++) {
		if (!raw[2 * i + 1]) {
			ert_err_set(err, "vulkan: timestamp %u was not written (or its work has not run)",
				    first + i);
			st = ERT_STATUS_BACKEND;
			goto out;
		}
	}
	for (uint32_t i = 0; i < count; i++) {
		uint64_t v = raw[2 * i] & t->mask;

		/* each gap taken modulo the counter's width: a counter that wrapped once */
		if (i)
			sum += (v - prev) & t->mask;
		ns[i] = (uint64_t)((double)sum * t->period_ns + 0.5);
		prev = v;
	}
out:
	if (raw != stack)
		free(raw);
	return st;
}
