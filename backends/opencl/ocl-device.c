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

/* The process's open devices; devs_lock protects the list and every entry's refs. */
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ert_ocl_dev *devs;

static void dev_free(struct ert_ocl_dev *d)
{
	/* sessions let go of every entry before the device goes: these free nothing */
	ert_gpu_share_fini(&d->progs);
	ert_gpu_share_fini(&d->consts);
	if (d->ctx)
		clReleaseContext(d->ctx);
	free(d);
}

/* What @pf/@dev report, and a context on it. */
static ert_status dev_new(cl_platform_id pf, cl_device_id dev, struct ert_ocl_dev **out,
			  struct ert_err *err)
{
	struct ert_ocl_dev *d = calloc(1, sizeof(*d));
	cl_context_properties props[3];
	cl_int rc;

	if (!d) {
		ert_err_set(err, "opencl: out of memory opening the device");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	if (!ert_gpu_share_init(&d->progs, sizeof(cl_program), ert_ocl_program_free, d)) {
		free(d);
		ert_err_set(err, "opencl: cannot make the device's lock");
		return ERT_STATUS_BACKEND;
	}
	if (!ert_gpu_share_init(&d->consts, sizeof(cl_mem), ert_ocl_const_free, d)) {
		ert_gpu_share_fini(&d->progs);
		free(d);
		ert_err_set(err, "opencl: cannot make the device's lock");
		return ERT_STATUS_BACKEND;
	}
	d->platform = pf;
	d->device = dev;
	if (clGetPlatformInfo(pf, CL_PLATFORM_NAME, sizeof(d->platform_name), d->platform_name,
			      NULL) != CL_SUCCESS)
		snprintf(d->platform_name, sizeof(d->platform_name), "?");
	d->platform_name[sizeof(d->platform_name) - 1] = '\0';
	info_string(dev, CL_DEVICE_NAME, d->device_name, sizeof(d->device_name));
	info_string(dev, CL_DRIVER_VERSION, d->driver_version, sizeof(d->driver_version));
	info_string(dev, CL_DEVICE_VERSION, d->device_version, sizeof(d->device_version));
	if (clGetPlatformInfo(pf, CL_PLATFORM_VERSION, sizeof(d->platform_version),
			      d->platform_version, NULL) != CL_SUCCESS)
		snprintf(d->platform_version, sizeof(d->platform_version), "?");
	d->platform_version[sizeof(d->platform_version) - 1] = '\0';
	d->device_type = device_type(dev);
	rc = clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(d->max_wg), &d->max_wg,
			     NULL);
	if (rc == CL_SUCCESS)
		rc = clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(d->max_alloc),
				     &d->max_alloc, NULL);
	if (rc == CL_SUCCESS)
		rc = clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(d->local_mem),
				     &d->local_mem, NULL);
	if (rc == CL_SUCCESS)
		rc = clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(d->compute_units),
				     &d->compute_units, NULL);
	if (rc != CL_SUCCESS) {
		dev_free(d);
		return ert_ocl_fail(err, rc, "clGetDeviceInfo", NULL);
	}
	props[0] = CL_CONTEXT_PLATFORM;
	props[1] = (cl_context_properties)pf;
	props[2] = 0;
	d->ctx = clCreateContext(props, 1, &dev, NULL, NULL, &rc);
	if (!d->ctx) {
		dev_free(d);
		return ert_ocl_fail(err, rc, "clCreateContext", NULL);
	}
	d->refs = 1;
	*out = d;
	return ERT_OK;
}

/* The open device @dev of @pf with one more hold, opening it when no session has it. */
static ert_status dev_get(cl_platform_id pf, cl_device_id dev, struct ert_ocl_dev **out,
			  bool *shared, struct ert_err *err)
{
	struct ert_ocl_dev *d;
	ert_status st = ERT_OK;

	/* held while a first session opens the context: a second waits and shares it */
	pthread_mutex_lock(&devs_lock);
	for (d = devs; d; d = d->next)
		if (d->device == dev && d->platform == pf)
			break;
	*shared = d != NULL;
	if (d) {
		d->refs++;
	} else {
		st = dev_new(pf, dev, &d, err);
		if (st == ERT_OK) {
			d->next = devs;
			devs = d;
		}
	}
	pthread_mutex_unlock(&devs_lock);
	if (st == ERT_OK)
		*out = d;
	return st;
}

static void dev_put(struct ert_ocl_dev *d)
{
	struct ert_ocl_dev **pp;
	bool last;

	pthread_mutex_lock(&devs_lock);
	last = --d->refs == 0;
	if (last) {
		for (pp = &devs; *pp; pp = &(*pp)->next) {
			if (*pp == d) {
				*pp = d->next;
				break;
			}
		}
	}
	pthread_mutex_unlock(&devs_lock);
	/* unlinked: no other session can find it any more */
	if (last)
		dev_free(d);
}

uint32_t ert_ocl_devices_open(void)
{
	uint32_t n = 0;

	pthread_mutex_lock(&devs_lock);
	for (const struct ert_ocl_dev *d = devs; d; d = d->next)
		n++;
	pthread_mutex_unlock(&devs_lock);
	return n;
}

ert_status ert_ocl_device_open(struct ert_ocl *cl, bool gpu_only, struct ert_err *err)
{
	uint64_t t0 = ert_clock_ns();
	ert_status st = choose(cl, gpu_only, err);
	struct ert_ocl_dev *d;
	cl_int rc;

	if (st == ERT_OK)
		st = dev_get(cl->platform, cl->device, &cl->dev, &cl->times.device_shared, err);
	if (st != ERT_OK)
		return st;
	d = cl->dev;
	cl->ctx = d->ctx;
	memcpy(cl->platform_name, d->platform_name, sizeof(cl->platform_name));
	memcpy(cl->device_name, d->device_name, sizeof(cl->device_name));
	memcpy(cl->driver_version, d->driver_version, sizeof(cl->driver_version));
	memcpy(cl->platform_version, d->platform_version, sizeof(cl->platform_version));
	memcpy(cl->device_version, d->device_version, sizeof(cl->device_version));
	cl->device_type = d->device_type;
	cl->max_wg = d->max_wg;
	cl->max_alloc = d->max_alloc;
	cl->local_mem = d->local_mem;
	cl->compute_units = d->compute_units;
	/* in order: each op reads what the one before it wrote, with no events */
	cl->queue = clCreateCommandQueue(cl->ctx, cl->device,
					 cl->device_times ? CL_QUEUE_PROFILING_ENABLE : 0, &rc);
	cl->times.device_ns += ert_clock_ns() - t0;
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
	if (cl->dev)
		dev_put(cl->dev);
	cl->queue = NULL;
	cl->ctx = NULL;
	cl->dev = NULL;
}
