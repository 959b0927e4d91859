/* SPDX-License-Identifier: MIT */
/* Placement and splits of a session's plan (see placement.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "placement.h"
#include "opencl/ocl-impl.h"
#include "vulkan/vk-impl.h"
#include "session/session-impl.h"

struct visit {
	const struct ert_graph *g;
	ert_session *sess;
	uint32_t fp16_ops, fp32_kept;
	const char **producer;   /* per graph tensor: backend of the step writing it */
	FILE *out;
	const char *split_backend;
	uint32_t split, ops_in_split, steps;
	uint32_t crossings;
	size_t crossing_bytes;
};

static void end_split(struct visit *v)
{
	if (v->split_backend)
		fprintf(v->out, "  (%u op%s)\n", v->ops_in_split, v->ops_in_split == 1 ? "" : "s");
}

static void visit_step(const struct ert_node *n, const struct ert_value *const *in, uint32_t n_in,
		       const struct ert_value *const *out, uint32_t n_out, const char *backend,
		       void *user)
{
	struct visit *v = user;

	if (!v->split_backend || strcmp(v->split_backend, backend) != 0) {
		end_split(v);
		v->split++;
		v->ops_in_split = 0;
		v->split_backend = backend;
		fprintf(v->out, "split %u: %s\n", v->split, backend);
	}
	fprintf(v->out, "  %-4u %-26s %s\n", v->steps, ert_op_name(n->op), n->name);

	bool fp16;
	const char *why;
	float max, bound;

	/* precision LOW on a backend storing float16: what the fp16 guard kept in fp32 */
	if (ert_session_fp16_note(v->sess, n, &fp16, &why, &max, &bound)) {
		v->fp16_ops += fp16;
		if (!fp16 && why) {
			v->fp32_kept++;
			fprintf(v->out, "         kept in fp32 by the fp16 guard: max |x| of '%s' is %g (bound %g)\n",
				why, (double)max, (double)bound);
		}
	}
	for (uint32_t k = 0; k < n_in && k < n->n_inputs; k++) {
		int32_t t = n->inputs[k];
		const char *from = t >= 0 ? v->producer[t] : NULL;

		if (!from || !strcmp(from, backend))
			continue;
		fprintf(v->out, "         <- '%s' from %s (%zu bytes, shared in place)\n",
			v->g->tensors[t].name, from, in[k] ? in[k]->nbytes : (size_t)0);
		v->crossings++;
		v->crossing_bytes += in[k] ? in[k]->nbytes : 0;
	}
	for (uint32_t k = 0; k < n_out && k < n->n_outputs; k++)
		if (n->outputs[k] >= 0 && out[k])
			v->producer[n->outputs[k]] = backend;
	v->ops_in_split++;
	v->steps++;
}

bool cli_print_placement(const char *cmd, ert_model *model, ert_session *sess, FILE *out)
{
	/* the session's graph (a device session's may be unfused: ert_model_unfused_irblock()) */
	const struct ert_graph *g = ert_model_graph(sess->model);
	struct visit v = { .g = g, .out = out, .sess = sess };
	ert_status st;

	v.producer = calloc(g->n_tensors ? g->n_tensors : 1, sizeof(*v.producer));
	if (!v.producer) {
		cli_error(cmd, "out of memory");
		return false;
	}
	fprintf(out, "placement (each split runs on one backend; '<-' marks a tensor crossing from another):\n");
	st = ert_session_visit_steps(sess, visit_step, &v);
	free(v.producer);
	if (st != ERT_OK) {
		cli_error(cmd, "failed to plan: %s", ert_session_error(sess));
		return false;
	}
	end_split(&v);
	fprintf(out, "%u op%s in %u split%s; %u crossing%s of %zu bytes between backends\n",
		v.steps, v.steps == 1 ? "" : "s", v.split, v.split == 1 ? "" : "s", v.crossings,
		v.crossings == 1 ? "" : "s", v.crossing_bytes);
	if (v.fp16_ops || v.fp32_kept)
		fprintf(out, "precision low: %u op%s in fp16, %u kept in fp32 by the fp16 guard\n",
			v.fp16_ops, v.fp16_ops == 1 ? "" : "s", v.fp32_kept);
	for (uint32_t i = 0; i < sess->n_backends; i++) {
		const char *dev = ert_opencl_backend_device(sess->backends[i]);

		if (dev)
			fprintf(out, "opencl device: %s\n", dev);
		dev = ert_vulkan_backend_device(sess->backends[i]);
		if (dev)
			fprintf(out, "vulkan device: %s\nvulkan paths: %s\n", dev,
				ert_vulkan_backend_paths(sess->backends[i]));
	}
	return true;
}
