/* SPDX-License-Identifier: MIT */
/* The backend registry: one factory per backend type. */
#include "ert-backend-impl.h"

ert_status ert_cpu_backend_create(const ert_config *cfg, struct ert_backend **out,
				  struct ert_err *err);

static const struct {
	ert_backend_type type;
	ert_backend_create_fn create;
} registry[] = {
	{ ERT_BACKEND_CPU, ert_cpu_backend_create },
};

ert_status ert_backend_create(ert_backend_type type, const ert_config *cfg,
			      struct ert_backend **out, struct ert_err *err)
{
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
		if (registry[i].type != type)
			continue;
		ert_status st = registry[i].create(cfg, out, err);

		if (st == ERT_OK && (*out)->ops->abi_version != ERT_BACKEND_ABI_VERSION) {
			ert_err_set(err, "backend %s has ABI version %u, expected %u",
				    (*out)->ops->name, (*out)->ops->abi_version,
				    ERT_BACKEND_ABI_VERSION);
			ert_backend_destroy(*out);
			return ERT_STATUS_BACKEND;
		}
		return st;
	}
	ert_err_set(err, "backend %s is not available in this build", ert_backend_type_name(type));
	return ERT_STATUS_UNSUPPORTED;
}
