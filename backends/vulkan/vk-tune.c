/* SPDX-License-Identifier: MIT */
/*
 * Autotuning of a step's launches (ert_config.tune): the candidates and the
 * table come from gpu-common/gpu-tune.c; this file builds each candidate's
 * pipeline (the local size is a specialization constant), times them with
 * device timestamps (vk-timer.c) on the step's own buffers, and applies the
 * choice. The table is kept in the cache file (vk-cache.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan/ops/vk-ops.h"

/* Slots of the tuner's timer: two a timed run. */
#define TIMER_SLOTS (2 * ERT_TUNE_MAX_CANDIDATES * 5)

/* Candidate @c of @t as a pipeline's constants and a dispatch's groups. */
static void cand_launch(const struct ert_vk_tunable *t, const struct ert_tune_cand *c,
			uint32_t spec[ERT_VK_MAX_SPEC], uint32_t *n_spec, uint32_t groups[3])
{
	const struct ert_tune_variant *v = &t->space.v[c->variant];
	uint64_t l0 = c->lws[0] ? c->lws[0] : 1, l1 = c->lws[1] ? c->lws[1] : 1;

	memcpy(spec, t->spec[c->variant], sizeof(t->spec[0]));
	*n_spec = t->n_spec[c->variant];
	spec[0] = (uint32_t)l0;
	if (v->dims == 1) {
		vk_grid((v->gws[0] + l0 - 1) / l0, groups);
	} else {
		spec[1] = (uint32_t)l1;
		groups[0] = (uint32_t)((v->gws[0] + l0 - 1) / l0);
		groups[1] = (uint32_t)((v->gws[1] + l1 - 1) / l1);
	}
	groups[2] = t->zgroups ? t->zgroups : 1;
}

static bool fits(const struct ert_vk *vk, const uint32_t groups[3])
{
	return groups[0] && groups[1] && groups[2] && ert_vk_groups_over(vk, groups) < 0;
}

bool ert_vk_tunable_fits(const struct ert_vk *vk, const struct ert_vk_tunable *t)
{
	struct ert_tune_cand c;
	uint32_t spec[ERT_VK_MAX_SPEC], n_spec, groups[3];

	ert_tune_candidates(ERT_TUNE_NONE, &t->space, &c, 1);
	cand_launch(t, &c, spec, &n_spec, groups);
	return ert_vk_groups_over(vk, groups) < 0;
}

ert_status ert_vk_launch_tunable(struct ert_vk *vk, struct ert_vk_step *st,
				 const struct ert_vk_tunable *t, struct ert_err *err)
{
	struct ert_tune_cand c[ERT_TUNE_MAX_CANDIDATES];
	uint32_t spec[ERT_VK_MAX_SPEC], n_spec, groups[3];
	struct ert_vk_launch *l;
	ert_status s;

	/* a launch with no choice under this mode (a small tensor) is not tuned */
	bool tuned = vk->tune != ERT_TUNE_NONE &&
		     ert_tune_candidates(vk->tune, &t->space, c, ERT_TUNE_MAX_CANDIDATES) > 1;

	ert_tune_candidates(ERT_TUNE_NONE, &t->space, c, 1);
	cand_launch(t, &c[0], spec, &n_spec, groups);
	/* a tuned launch gets its pipeline from the tuner: only the chosen one is built warm */
	s = ert_vk_launch_add(vk, st, tuned ? NULL : t->shader[0], spec, n_spec, groups, err);
	if (s != ERT_OK || !tuned)
		return s;
	l = &st->launch[st->n_launch - 1];
	l->tunable = malloc(sizeof(*l->tunable));
	if (!l->tunable) {
		ert_err_set(err, "vulkan: %s '%s': out of memory while preparing",
			    ert_op_name(st->node->op), st->node->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	*l->tunable = *t;
	l->tunable->space.need_lws = true;
	return ERT_OK;
}

static uint64_t hash_u64(uint64_t h, uint64_t v)
{
	return ert_hash64(h, &v, sizeof(v));
}

/*
 * The table's key: the variants' shaders (their SPIR-V: a changed shader is
 * tuned again), and the launch's shape: its variants' sizes and constants and
 * every push constant but the tensors' offsets.
 */
static void make_key(const struct ert_vk_launch *l, const struct ert_vk_tunable *t,
		     struct ert_tune_key *k)
{
	uint64_t src = ERT_HASH64_INIT, shape = ERT_HASH64_INIT;

	memset(k, 0, sizeof(*k));
	snprintf(k->kernel, sizeof(k->kernel), "%s", t->name);
	for (uint32_t i = 0; i < t->space.n; i++) {
		const struct ert_tune_variant *v = &t->space.v[i];
		int idx = ert_vk_shader_index(t->shader[i]);

		src = ert_hash64(src, t->shader[i], strlen(t->shader[i]) + 1);
		if (idx >= 0)
			src = ert_hash64(src, ert_vk_shaders[idx].words, ert_vk_shaders[idx].size);
		shape = hash_u64(shape, v->dims);
		for (int d = 0; d < 3; d++) {
			shape = hash_u64(shape, v->gws[d]);
			shape = hash_u64(shape, v->lws[d]);
		}
		shape = hash_u64(shape, v->free_lws);
		shape = hash_u64(shape, v->max_wg);
		for (uint32_t j = 0; j < t->n_spec[i]; j++)
			shape = hash_u64(shape, t->spec[i][j]);
	}
	shape = hash_u64(shape, t->zgroups);
	shape = hash_u64(shape, l->n_push);
	for (uint32_t j = 0; j < l->n_push; j++)
		shape = hash_u64(shape, l->off_mask >> j & 1 ? 0 : l->push[j]);
	k->source = src;
	k->shape = shape;
}

/* The tuner's timer and command buffer; false (said once) when the device has no timestamps. */
static ert_status tuner_ready(struct ert_vk *vk, bool *ready, struct ert_err *err)
{
	VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = vk->cmd_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	ert_status s;
	VkResult rc;

	*ready = false;
	if (vk->tune_untimed)
		return ERT_OK;
	if (!vk->tune_timer.pool) {
		struct ert_err why = { "" };

		s = ert_vk_timer_new(vk, TIMER_SLOTS, &vk->tune_timer, &why);
		if (s == ERT_STATUS_UNSUPPORTED) {
			fprintf(stderr, "edgert: %s; launches keep their built-in sizes (not tuned)\n",
				why.msg);
			vk->tune_untimed = true;
			return ERT_OK;
		}
		if (s != ERT_OK) {
			ert_err_set(err, "%s", why.msg);
			return s;
		}
	}
	if (!vk->tune_cmd) {
		rc = vkAllocateCommandBuffers(vk->dev, &ai, &vk->tune_cmd);
		if (rc != VK_SUCCESS) {
			vk->tune_cmd = VK_NULL_HANDLE;
			return ert_vk_fail(err, rc, "vkAllocateCommandBuffers (tuning)", NULL);
		}
	}
	*ready = true;
	return ERT_OK;
}

/*
 * Time the @n candidates @c of launch @l (set @set): the fastest in *@best,
 * its least time in *@best_ns; *@timed false when none could be (no
 * timestamps, or no candidate's pipeline could be made).
 */
static ert_status time_all(struct ert_vk *vk, struct ert_vk_step *st, const struct ert_vk_launch *l,
			   VkDescriptorSet set, const struct ert_tune_cand *c, uint32_t n,
			   struct ert_tune_cand *best, uint64_t *best_ns, bool *timed,
			   struct ert_err *err)
{
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	const struct ert_vk_tunable *t = l->tunable;
	uint32_t reps = ert_tune_repeats(vk->tune);
	struct ert_vk_launch run[ERT_TUNE_MAX_CANDIDATES];
	bool ok[ERT_TUNE_MAX_CANDIDATES] = { false };
	uint64_t ns[2 * 5];
	bool ready;
	ert_status s = tuner_ready(vk, &ready, err);
	VkResult rc;

	*timed = false;
	*best = c[0];
	*best_ns = UINT64_MAX;
	if (s != ERT_OK || !ready || !reps)
		return s;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t spec[ERT_VK_MAX_SPEC], n_spec;
		struct ert_err ignored = { "" };

		run[i] = *l;
		cand_launch(t, &c[i], spec, &n_spec, run[i].groups);
		/* a size the device refuses is no candidate */
		ok[i] = fits(vk, run[i].groups) &&
			ert_vk_pipeline_get(vk, t->shader[c[i].variant], spec, n_spec, &run[i].pipe,
					    st->node, &ignored) == ERT_OK;
	}
	rc = vkBeginCommandBuffer(vk->tune_cmd, &bi);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkBeginCommandBuffer (tuning)", st->node);
	ert_vk_timer_reset(vk->tune_cmd, &vk->tune_timer, 0, 2 * n * reps);
	for (uint32_t i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		/* FAST warms up the first only; the others find the caches as it left them */
		if (i == 0 || vk->tune != ERT_TUNE_FAST) {
			ert_vk_cmd_barrier(vk->tune_cmd);
			ert_vk_cmd_launch(vk, vk->tune_cmd, &run[i], set);
		}
		for (uint32_t r = 0; r < reps; r++) {
			ert_vk_cmd_barrier(vk->tune_cmd);
			ert_vk_timer_stamp(vk->tune_cmd, &vk->tune_timer, 2 * (i * reps + r));
			ert_vk_cmd_launch(vk, vk->tune_cmd, &run[i], set);
			ert_vk_timer_stamp(vk->tune_cmd, &vk->tune_timer, 2 * (i * reps + r) + 1);
		}
	}
	rc = vkEndCommandBuffer(vk->tune_cmd);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkEndCommandBuffer (tuning)", st->node);
	s = ert_vk_queue_cmd(vk, vk->tune_cmd, err);
	if (s == ERT_OK)
		s = ert_vk_flush(vk, err);
	if (s != ERT_OK)
		return s;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t least = UINT64_MAX;

		if (!ok[i])
			continue;
		s = ert_vk_timer_read(vk, &vk->tune_timer, 2 * i * reps, 2 * reps, ns, err);
		if (s != ERT_OK)
			return s;
		for (uint32_t r = 0; r < reps; r++)
			if (ns[2 * r + 1] - ns[2 * r] < least)
				least = ns[2 * r + 1] - ns[2 * r];
		if (least < *best_ns) {
			*best = c[i];
			*best_ns = least;
		}
		*timed = true;
	}
	return ERT_OK;
}

/* Set @l to run as candidate @c (the built-in @c0 where the device takes no such groups). */
static ert_status apply(struct ert_vk *vk, struct ert_vk_step *st, struct ert_vk_launch *l,
			const struct ert_tune_cand *c, const struct ert_tune_cand *c0,
			struct ert_err *err)
{
	const struct ert_vk_tunable *t = l->tunable;
	uint32_t spec[ERT_VK_MAX_SPEC], n_spec, groups[3];
	VkPipeline pipe;
	ert_status s;

	cand_launch(t, c, spec, &n_spec, groups);
	if (!fits(vk, groups)) {
		c = c0;
		cand_launch(t, c, spec, &n_spec, groups);
	}
	s = ert_vk_pipeline_get(vk, t->shader[c->variant], spec, n_spec, &pipe, st->node, err);
	if (s != ERT_OK)
		return s;
	l->pipe = pipe;
	memcpy(l->groups, groups, sizeof(groups));
	return ERT_OK;
}

ert_status ert_vk_tune_launch(struct ert_vk *vk, struct ert_vk_step *st, struct ert_vk_launch *l,
			      VkDescriptorSet set, struct ert_err *err)
{
	struct ert_tune_cand cands[ERT_TUNE_MAX_CANDIDATES], best;
	const struct ert_vk_tunable *t = l->tunable;
	uint32_t n = ert_tune_candidates(vk->tune, &t->space, cands, ERT_TUNE_MAX_CANDIDATES);
	uint64_t t0 = ert_clock_ns(), p0 = vk->times.programs_ns, ns;
	const struct ert_tune_entry *e;
	struct ert_tune_key key;
	bool refused, timed;
	ert_status s = ERT_OK;

	best = cands[0];
	if (n > 1) {
		make_key(l, t, &key);
		e = ert_tune_lookup(&vk->tuned, &key, &t->space, vk->tune, &refused);
		/* not a choice this build offers: a damaged or foreign entry, tuned again */
		vk->tune_refused += refused;
		if (e) {
			best = e->best;
			vk->tune_reused++;
		} else if (ert_tune_times(vk->tune,
					  vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)) {
			s = time_all(vk, st, l, set, cands, n, &best, &ns, &timed, err);
			if (s == ERT_OK && timed) {
				vk->tune_timed++;
				/* out of memory for the table: the choice still holds for this step */
				ert_tune_put(&vk->tuned, &key, &best, vk->tune,
					     ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns);
			}
		}
	}
	if (s == ERT_OK)
		s = apply(vk, st, l, &best, &cands[0], err);
	/* the pipelines built meanwhile are counted as pipelines, not tuning */
	vk->times.tune_ns += ert_clock_ns() - t0 - (vk->times.programs_ns - p0);
	return s;
}

void ert_vk_tune_close(struct ert_vk *vk)
{
	if (vk->dev && vk->tune_cmd)
		vkFreeCommandBuffers(vk->dev, vk->cmd_pool, 1, &vk->tune_cmd);
	vk->tune_cmd = VK_NULL_HANDLE;
	ert_vk_timer_free(vk, &vk->tune_timer);
	ert_tune_table_free(&vk->tuned);
}
