/* SPDX-License-Identifier: MIT */
/* The kernel names the GPU backends report: the variant a step runs, in one place. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gpu-common/gpu-backend.h"

/* kernel names are literals of the backends' tables: a few dozen per variant */
#define NAMES_MAX 128
#define NAME_BYTES 48

static const char *const variant_tag[ERT_GPU_N_VARIANTS] = {
	[ERT_GPU_VARIANT_F32] = "f32",
	[ERT_GPU_VARIANT_F16] = "f16",
	[ERT_GPU_VARIANT_F16A] = "f16a",
};

/* protects names and n_names: sessions are prepared on several threads at once */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static char names[NAMES_MAX][NAME_BYTES];
static unsigned n_names;

/* The "-f32" of @name followed by '-' or the end, or NULL. */
static const char *f32_element(const char *name)
{
	for (const char *at = strstr(name, "-f32"); at; at = strstr(at + 1, "-f32"))
		if (at[4] == '-' || at[4] == '\0')
			return at;
	return NULL;
}

const char *ert_gpu_kernel_name(const char *name, enum ert_gpu_variant v)
{
	const char *at = name ? f32_element(name) : NULL;
	const char *out = name;
	char want[NAME_BYTES];
	int len;

	if (!at || v == ERT_GPU_VARIANT_F32 || (unsigned)v >= ERT_GPU_N_VARIANTS)
		return name;
	len = snprintf(want, sizeof(want), "%.*s-%s%s", (int)(at - name), name, variant_tag[v],
		       at + 4);
	if (len < 0 || (size_t)len >= sizeof(want))
		return name;
	pthread_mutex_lock(&names_lock);
	for (unsigned i = 0; i < n_names; i++)
		if (!strcmp(names[i], want)) {
			out = names[i];
			goto done;
		}
	assert(n_names < NAMES_MAX);	/* more kernel names than the backends have */
	if (n_names < NAMES_MAX) {
		memcpy(names[n_names], want, (size_t)len + 1);
		out = names[n_names++];
	}
done:
	pthread_mutex_unlock(&names_lock);
	return out;
}
