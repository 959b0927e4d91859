/* SPDX-License-Identifier: MIT */
/* Choosing the OpenCL device, and its context and queue. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl/ocl-impl.h"

#define MAX_PLATFORMS 16
#define MAX_DEVICES 32

/* "P:D" with two decimal indices and nothing else; false otherwise. */
static bool parse_choice(const char *s, unsigned long *p, unsigned long *d)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*p = strtoul(s, &end, 10);
	if (errno || *end != ':' || end[1] < '0' || end[1] > '9')
		return false;
	*d = strtoul(end + 1, &end, 10);
	return !errno && *end == '\0';
}

static cl_uint list_devices(cl_platform_id pf, cl_device_id *devs, cl_uint cap)
{
	cl_uint n = 0;

	/* a platform with no device answers CL_DEVICE_NOT_FOUND: none, not a failure */
	if (clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, cap, devs, &n) != CL_SUCCESS)
		return 0;
	return n < cap ? n : cap;
}

static cl_device_type device_type(cl_device_id d)
{
	cl_device_type t = 0;

	if (clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(t), &t, NULL) != CL_SUCCESS)
		return 0;
	return t;
}

static ert_status choose(struct ert_ocl *cl, bool gpu_only, struct ert_err *err)
{
	cl_platform_id pfs[MAX_PLATFORMS];
	cl_device_id devs[MAX_DEVICES];
	cl_uint npf = 0;
	const char *env = getenv("ERT_OPENCL_DEVICE");
	const char *any = getenv("ERT_OPENCL_TEST_AUTO_ANY");
	cl_int rc = clGetPlatformIDs(MAX_PLATFORMS, pfs, &npf);

	/* test hook: `auto` takes a CPU device too (PoCL), to test what auto does */
	if (any && *any && strcmp(any, "0"))
		gpu_only = false;
	if (rc == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (rc == CL_SUCCESS && npf == 0)) {
		ert_err_set(err, "opencl: no OpenCL platform (is an ICD installed under /etc/OpenCL/vendors?)");
		return ERT_STATUS_UNSUPPORTED;
	}
	if (rc != CL_SUCCESS) {
		ert_ocl_fail(err, rc, "clGetPlatformIDs", NULL);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (npf > MAX_PLATFORMS)
		npf = MAX_PLATFORMS;
	if (env && *env) {
		unsigned long p, d;
		cl_uint nd;

		if (!parse_choice(env, &p, &d)) {
			ert_err_set(err, "opencl: ERT_OPENCL_DEVICE='%s' is not PLATFORM:DEVICE (two indices, as 'clinfo -l' lists them)",
				    env);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		if (p >= npf) {
			ert_err_set(err, "opencl: ERT_OPENCL_DEVICE='%s': platform %lu does not exist (%u platforms)",
				    env, p, npf);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		nd = list_devices(pfs[p], devs, MAX_DEVICES);
		if (d >= nd) {
			ert_err_set(err, "opencl: ERT_OPENCL_DEVICE='%s': platform %lu has no device %lu (%u devices)",
				    env, p, d, nd);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		if (gpu_only && !(device_type(devs[d]) & CL_DEVICE_TYPE_GPU)) {
			ert_err_set(err, "opencl: ERT_OPENCL_DEVICE='%s' is not a GPU", env);
			return ERT_STATUS_UNSUPPORTED;
		}
		cl->platform = pfs[p];
		cl->device = devs[d];
		return ERT_OK;
	}
	/* the first GPU of any platform, else the first device of any */
	for (int pass = 0; pass < 2; pass++) {
		for (cl_uint p = 0; p < npf; p++) {
			cl_uint nd = list_devices(pfs[p], devs, MAX_DEVICES);

			for (cl_uint d = 0; d < nd; d++) {
				if (pass == 0 && !(device_type(devs[d]) & CL_DEVICE_TYPE_GPU))
					continue;
				cl->platform = pfs[p];
				cl->device = devs[d];
				return ERT_OK;
			}
		}
		if (gpu_only)
			break;
	}
	ert_err_set(err, gpu_only ? "opencl: no GPU among the OpenCL devices" :
		    "opencl: the OpenCL platforms have no device");
	return ERT_STATUS_UNSUPPORTED;
}

static void info_string(cl_device_id d, cl_device_info what, char *buf, size_t size)
{
	if (clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS)
		snprintf(buf, size, "?");
	buf[size - 1] = '\0';
}

ert_status ert_ocl_device_open(struct ert_ocl *cl, bool gpu_only, struct ert_err *err)
{
	cl_context_properties props[3];
	ert_status st = choose(cl, gpu_only, err);
	cl_int rc;

	if (st != ERT_OK)
		return st;
	if (clGetPlatformInfo(cl->platform, CL_PLATFORM_NAME, sizeof(cl->platform_name),
			      cl->platform_name, NULL) != CL_SUCCESS)
		snprintf(cl->platform_name, sizeof(cl->platform_name), "?");
	cl->platform_name[sizeof(cl->platform_name) - 1] = '\0';
	info_string(cl->device, CL_DEVICE_NAME, cl->device_name, sizeof(cl->device_name));
	info_string(cl->device, CL_DRIVER_VERSION, cl->driver_version, sizeof(cl->driver_version));
	info_string(cl->device, CL_DEVICE_VERSION, cl->device_version, sizeof(cl->device_version));
	if (clGetPlatformInfo(cl->platform, CL_PLATFORM_VERSION, sizeof(cl->platform_version),
			      cl->platform_version, NULL) != CL_SUCCESS)
		snprintf(cl->platform_version, sizeof(cl->platform_version), "?");
	cl->platform_version[sizeof(cl->platform_version) - 1] = '\0';
	cl->device_type = device_type(cl->device);
	rc = clGetDeviceInfo(cl->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(cl->max_wg),
			     &cl->max_wg, NULL);
	if (rc == CL_SUCCESS)
		rc = clGetDeviceInfo(cl->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
				     sizeof(cl->max_alloc), &cl->max_alloc, NULL);
	if (rc == CL_SUCCESS)
		rc = clGetDeviceInfo(cl->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(cl->local_mem),
				     &cl->local_mem, NULL);
	if (rc == CL_SUCCESS)
		rc = clGetDeviceInfo(cl->device, CL_DEVICE_MAX_COMPUTE_UNITS,
				     sizeof(cl->compute_units), &cl->compute_units, NULL);
	if (rc != CL_SUCCESS)
		return ert_ocl_fail(err, rc, "clGetDeviceInfo", NULL);

	props[0] = CL_CONTEXT_PLATFORM;
	props[1] = (cl_context_properties)cl->platform;
	props[2] = 0;
	cl->ctx = clCreateContext(props, 1, &cl->device, NULL, NULL, &rc);
	if (!cl->ctx)
		return ert_ocl_fail(err, rc, "clCreateContext", NULL);
	/* in order: each op reads what the one before it wrote, with no events */
	cl->queue = clCreateCommandQueue(cl->ctx, cl->device, 0, &rc);
	if (!cl->queue)
		return ert_ocl_fail(err, rc, "clCreateCommandQueue", NULL);
	return ERT_OK;
}

void ert_ocl_device_close(struct ert_ocl *cl)
{
	if (cl->queue) {
		/* nothing may still use the buffers and kernels about to go */
		clFinish(cl->queue);
		clReleaseCommandQueue(cl->queue);
	}
	if (cl->ctx)
		clReleaseContext(cl->ctx);
	cl->queue = NULL;
	cl->ctx = NULL;
}
