/* SPDX-License-Identifier: MIT */
/* Status strings, the thread-local last error, config defaults, names. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "session/session-impl.h"

static _Thread_local char last_error[512];

ert_status ert_set_last_error(ert_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return st;
}

ERT_API const char *ert_last_error(void)
{
	return last_error;
}

ERT_API const char *ert_status_string(ert_status st)
{
	switch (st) {
	case ERT_OK: return "ok";
	case ERT_STATUS_INVALID_ARGUMENT: return "invalid argument";
	case ERT_STATUS_OUT_OF_MEMORY: return "out of memory";
	case ERT_STATUS_IO: return "i/o error";
	case ERT_STATUS_INVALID_MODEL: return "invalid model";
	case ERT_STATUS_VERSION: return "unsupported model format version";
	case ERT_STATUS_UNSUPPORTED: return "unsupported";
	case ERT_STATUS_SHAPE: return "shape mismatch";
	case ERT_STATUS_DTYPE: return "dtype mismatch";
	case ERT_STATUS_BACKEND: return "backend failure";
	case ERT_STATUS_STOPPED: return "stopped by callback";
	case ERT_STATUS_NOT_FOUND: return "not found";
	case ERT_STATUS_INTERNAL: return "internal error";
	case ERT_STATUS_BUSY: return "session busy";
	}
	return "unknown status";
}

ERT_API const char *ert_backend_type_name(ert_backend_type type)
{
	switch (type) {
	case ERT_BACKEND_CPU: return "cpu";
	case ERT_BACKEND_OPENCL: return "opencl";
	case ERT_BACKEND_VULKAN: return "vulkan";
	case ERT_BACKEND_NPU: return "npu";
	case ERT_BACKEND_AUTO: return "auto";
	}
	return "unknown";
}

ERT_API void ert_config_init(ert_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->struct_size = sizeof(*cfg);
	cfg->backends[0] = ERT_BACKEND_CPU;
	cfg->num_backends = 1;
	cfg->shape_mutable = 1;
}
