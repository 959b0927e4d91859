/* SPDX-License-Identifier: MIT */
/* The backend registry: one factory per backend type. */
#include "ert-backend-impl.h"

ert_status ert_cpu_backend_create(const ert_config *cfg, struct ert_backend **out,
				  struct ert_err *err);
ert_status ert_npu_backend_create(const ert_config *cfg, struct ert_backend **out,
				  struct ert_err *err);
ert_status ert_npu_backend_probe(const ert_config *cfg, struct ert_backend **out,
				 struct ert_err *err);
ert_status ert_opencl_backend_create(const ert_config *cfg, struct ert_backend **out,
				     struct ert_err *err);
ert_status ert_opencl_backend_probe(const ert_config *cfg, struct ert_backend **out,
				    struct ert_err *err);
ert_status ert_vulkan_backend_create(const ert_config *cfg, struct ert_backend **out,
				     struct ert_err *err);
ert_status ert_vulkan_backend_probe(const ert_config *cfg, struct ert_backend **out,
				    struct ert_err *err);

/*
 * create: the backend when named in the config (the NPU falls back to its
 * simulator, OpenCL and Vulkan take any device); probe: the backend only on
 * real hardware, for AUTO (OpenCL, Vulkan: a GPU).
 */
static const struct {
	ert_backend_type type;
	ert_backend_create_fn create;
	ert_backend_create_fn probe;
} registry[] = {
	{ ERT_BACKEND_CPU, ert_cpu_backend_create, NULL },
	{ ERT_BACKEND_OPENCL, ert_opencl_backend_create, ert_opencl_backend_probe },
	{ ERT_BACKEND_VULKAN, ert_vulkan_backend_create, ert_vulkan_backend_probe },
	{ ERT_BACKEND_NPU, ert_npu_backend_create, ert_npu_backend_probe },
};

/* Factories registered at run time (tests); they take precedence over the table above. */
static ert_backend_create_fn registered[ERT_BACKEND_AUTO];

void ert_backend_register(ert_backend_type type, ert_backend_create_fn create)
{
	if ((unsigned)type < ERT_BACKEND_AUTO)
		registered[type] = create;
}

static ert_backend_create_fn find_factory(ert_backend_type type, bool probe)
{
	if ((unsigned)type < ERT_BACKEND_AUTO && registered[type])
		return probe ? NULL : registered[type];
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (registry[i].type == type)
			return probe ? registry[i].probe : registry[i].create;
	return NULL;
}

static ert_status make_backend(ert_backend_type type, const ert_config *cfg, bool probe,
			       struct ert_backend **out, struct ert_err *err)
{
	ert_backend_create_fn create = find_factory(type, probe);
	ert_status st;

	if (!create) {
		ert_err_set(err, "backend %s is not available in this build",
			    ert_backend_type_name(type));
		return ERT_STATUS_UNSUPPORTED;
	}
	st = create(cfg, out, err);
	if (st == ERT_OK && (*out)->ops->abi_version != ERT_BACKEND_ABI_VERSION) {
		ert_err_set(err, "backend %s has ABI version %u, expected %u", (*out)->ops->name,
			    (*out)->ops->abi_version, ERT_BACKEND_ABI_VERSION);
		ert_backend_destroy(*out);
		return ERT_STATUS_BACKEND;
	}
	return st;
}

ert_status ert_backend_create(ert_backend_type type, const ert_config *cfg,
			      struct ert_backend **out, struct ert_err *err)
{
	return make_backend(type, cfg, false, out, err);
}

ert_status ert_backend_probe(ert_backend_type type, const ert_config *cfg,
			     struct ert_backend **out, struct ert_err *err)
{
	return make_backend(type, cfg, true, out, err);
}
