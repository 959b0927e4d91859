/* SPDX-License-Identifier: MIT */
/* Status strings, the thread-local last error, config defaults, names. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

static const char *past_prefix(const char *msg, const char *prefix, size_t len, char sep,
			       bool any_case)
{
	if (!len || (any_case ? strncasecmp(msg, prefix, len) : strncmp(msg, prefix, len)) ||
	    msg[len] != sep)
		return NULL;
	msg += len + 1;
	return sep == ':' && *msg == ' ' ? msg + 1 : msg;
}

const char *ert_msg_past_backend(const char *msg, const char *backend)
{
	size_t len = strlen(backend);
	const char *p = past_prefix(msg, backend, len, ':', true);

	return p ? p : (p = past_prefix(msg, backend, len, ' ', true)) ? p : msg;
}

void ert_op_error_set(struct ert_err *err, const struct ert_node *n,
		      const struct ert_backend *be, ert_status st, const char *msg)
{
	bool cpu = be->type == ERT_BACKEND_CPU;
	char why[sizeof(err->msg)], label[160];
	const char *p = why;
	size_t len;

	/* @msg may be err->msg */
	snprintf(why, sizeof(why), "%s", msg && msg[0] ? msg : ert_status_string(st));
	ert_node_label(n, label, sizeof(label));
	len = strlen(label);
	for (int k = 0; k < 2; k++) {
		const char *q = past_prefix(p, label, len, ':', false);

		p = q ? q : cpu ? p : ert_msg_past_backend(p, be->ops->name);
	}
	if (!*p)
		p = ert_status_string(st);
	/* a sentence naming the op elsewhere ("X failed for Type 'name'") keeps it there */
	if (strstr(p, label) && cpu)
		ert_err_set(err, "%s", p);
	else if (strstr(p, label))
		ert_err_set(err, "%s: %s", be->ops->name, p);
	else if (cpu)
		ert_err_set(err, "%s: %s", label, p);
	else
		ert_err_set(err, "%s: %s: %s", label, be->ops->name, p);
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
