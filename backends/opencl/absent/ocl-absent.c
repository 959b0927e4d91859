/* SPDX-License-Identifier: MIT */
/*
 * The OpenCL backend's factories in a build without it: static binaries
 * (libedgert-nocl.a, see the Makefile), since the ICD loader exists only as
 * a shared library. A session that lists opencl runs on its other backends.
 */
#include "ert-backend-impl.h"

ert_status ert_opencl_backend_create(const ert_config *cfg, struct ert_backend **out,
				     struct ert_err *err);
ert_status ert_opencl_backend_probe(const ert_config *cfg, struct ert_backend **out,
				    struct ert_err *err);

ert_status ert_opencl_backend_create(const ert_config *cfg, struct ert_backend **out,
				     struct ert_err *err)
{
	ert_err_set(err, "opencl: this build has no OpenCL backend (a static binary: the ICD loader is a shared library)");
	return ERT_STATUS_UNSUPPORTED;
}

ert_status ert_opencl_backend_probe(const ert_config *cfg, struct ert_backend **out,
				    struct ert_err *err)
{
	return ert_opencl_backend_create(cfg, out, err);
}

const char *ert_opencl_backend_device(const struct ert_backend *be);
bool ert_ocl_claims_op(enum ert_op op);

const char *ert_opencl_backend_device(const struct ert_backend *be)
{
	return NULL;
}

/* `edgert ops` in a static binary: no op runs on OpenCL here. */
bool ert_ocl_claims_op(enum ert_op op)
{
	(void)op;
	return false;
}
