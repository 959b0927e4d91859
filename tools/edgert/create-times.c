/* SPDX-License-Identifier: MIT */
/* edgert bench: session creation by phase (create-times.h). */
#include "create-times.h"
#include "session/session-impl.h"

struct phase {
	const char *name;
	double ms;
};

enum { P_DEVICE, P_CACHE, P_PROGRAMS, P_KERNELS, P_TUNING, P_UPLOADS, P_CALIB, P_MEMORY,
       P_PLANNING, N_PHASES };

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* The phases of @t; planning is the rest of the total, never below 0. */
static void phases(const struct ert_create_times *t, struct phase p[N_PHASES])
{
	const struct ert_backend_times *b = &t->be;
	double sum = 0;

	p[P_DEVICE] = (struct phase){ "device", ms(b->device_ns) };
	p[P_CACHE] = (struct phase){ "cache", ms(b->cache_ns) };
	p[P_PROGRAMS] = (struct phase){ "programs", ms(b->programs_ns) };
	p[P_KERNELS] = (struct phase){ "kernels", ms(b->kernels_ns) };
	p[P_TUNING] = (struct phase){ "tuning", ms(b->tune_ns) };
	p[P_UPLOADS] = (struct phase){ "uploads", ms(b->upload_ns) };
	p[P_CALIB] = (struct phase){ "calibration", ms(t->calib_ns) };
	p[P_MEMORY] = (struct phase){ "memory", ms(t->memory_ns) };
	for (int i = 0; i < P_PLANNING; i++)
		sum += p[i].ms;
	p[P_PLANNING] = (struct phase){ "planning", ms(t->total_ns) > sum ? ms(t->total_ns) - sum : 0 };
}

void cli_create_times_print(FILE *out, const ert_session *sess)
{
	const struct ert_create_times *t = &sess->created;
	const struct ert_backend_times *b = &t->be;
	struct phase p[N_PHASES];
	char why[N_PHASES][128];

	phases(t, p);
	snprintf(why[P_DEVICE], sizeof(why[0]), "%s", b->device_shared ? "device and queue of another session, shared"
						  : "device and queue opened");
	snprintf(why[P_CACHE], sizeof(why[0]), "cache file read and written");
	snprintf(why[P_PROGRAMS], sizeof(why[0]),
		 "%u loaded from the cache file, %u built, %u from another session",
		 b->programs_loaded, b->programs_built, b->programs_shared);
	snprintf(why[P_KERNELS], sizeof(why[0]), "kernel objects of the launches");
	snprintf(why[P_TUNING], sizeof(why[0]), "%u launches timed, %u taken from the cache file",
		 b->launches_timed, b->launches_reused);
	snprintf(why[P_UPLOADS], sizeof(why[0]),
		 "%.2f MiB of constants to the device, %.2f MiB another session had uploaded",
		 (double)b->upload_bytes / (1024.0 * 1024.0),
		 (double)b->upload_shared_bytes / (1024.0 * 1024.0));
	snprintf(why[P_CALIB], sizeof(why[0]), "the fp16 guard's run on the CPU (precision low)");
	snprintf(why[P_MEMORY], sizeof(why[0]), "memory plan, arenas allocated");
	snprintf(why[P_PLANNING], sizeof(why[0]),
		 "the rest: shapes, folding, placement, arguments, CPU packing");
	for (int i = 0; i < N_PHASES; i++)
		fprintf(out, "  %-12s %10.3f ms  %s\n", p[i].name, p[i].ms, why[i]);
}

void cli_create_times_json(FILE *out, const ert_session *sess)
{
	const struct ert_create_times *t = &sess->created;
	const struct ert_backend_times *b = &t->be;
	struct phase p[N_PHASES];

	phases(t, p);
	fprintf(out, "{\"total_ms\": %.4f", ms(t->total_ns));
	for (int i = 0; i < N_PHASES; i++)
		fprintf(out, ", \"%s_ms\": %.4f", p[i].name, p[i].ms);
	fprintf(out, ", \"device_shared\": %s, \"programs_loaded\": %u, \"programs_built\": %u, "
		"\"programs_shared\": %u, \"launches_timed\": %u, \"launches_reused\": %u, "
		"\"upload_bytes\": %llu, \"upload_shared_bytes\": %llu}",
		b->device_shared ? "true" : "false", b->programs_loaded, b->programs_built,
		b->programs_shared, b->launches_timed, b->launches_reused,
		(unsigned long long)b->upload_bytes, (unsigned long long)b->upload_shared_bytes);
}
