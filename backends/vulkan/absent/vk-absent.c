/* SPDX-License-Identifier: MIT */
/*
 * The Vulkan backend's factories in a build without it: static binaries
 * (libedgert-nocl.a, see the Makefile), since the Vulkan loader exists only
 * as a shared library. A session that lists vulkan runs on its other backends.
 */
#include "ert-backend-impl.h"

ert_status ert_vulkan_backend_create(const ert_config *cfg, struct ert_backend **out,
				     struct ert_err *err);
ert_status ert_vulkan_backend_probe(const ert_config *cfg, struct ert_backend **out,
				    struct ert_err *err);
const char *ert_vulkan_backend_device(const struct ert_backend *be);
const char *ert_vulkan_backend_paths(const struct ert_backend *be);
bool ert_vk_claims_op(enum ert_op op);

ert_status ert_vulkan_backend_create(const ert_config *cfg, struct ert_backend **out,
				     struct ert_err *err)
{
	ert_err_set(err, "vulkan: this build has no Vulkan backend (a static binary: the Vulkan loader is a shared library)");
	return ERT_STATUS_UNSUPPORTED;
}

ert_status ert_vulkan_backend_probe(const ert_config *cfg, struct ert_backend **out,
				    struct ert_err *err)
{
	return ert_vulkan_backend_create(cfg, out, err);
}

const char *ert_vulkan_backend_device(const struct ert_backend *be)
{
	return NULL;
}

const char *ert_vulkan_backend_paths(const struct ert_backend *be)
{
	return NULL;
}

/* `edgert ops` in a static binary: no op runs on Vulkan here. */
bool ert_vk_claims_op(enum ert_op op)
{
	(void)op;
	return false;
}
