/* SPDX-License-Identifier: MIT */
/*
 * ert_gpu_kernel_name() (backends/gpu-common): the name a GPU step reports
 * for its kernel in the variant it runs. The float32 names come back as they
 * are; in float16 storage the "-f32" element (before a '-' or the end, not
 * "-f32x") becomes "-f16" ("-f16a" with half arithmetic); the names made are
 * interned (one pointer per name, also across threads), and a name without
 * "-f32" is left alone.
 */
#include <pthread.h>

#include "ert-test.h"
#include "gpu-common/gpu-backend.h"

ERT_TEST(f32_names_unchanged)
{
	const char *n = "ocl-gemm-f32-32x32";

	CHECK(ert_gpu_kernel_name(n, ERT_GPU_VARIANT_F32) == n);
	CHECK(ert_gpu_kernel_name(NULL, ERT_GPU_VARIANT_F16) == NULL);
}

ERT_TEST(f16_names)
{
	CHECK_EQ_STR(ert_gpu_kernel_name("vk-binary-f32", ERT_GPU_VARIANT_F16), "vk-binary-f16");
	CHECK_EQ_STR(ert_gpu_kernel_name("ocl-gemm-f32-32x32", ERT_GPU_VARIANT_F16),
		     "ocl-gemm-f16-32x32");
	CHECK_EQ_STR(ert_gpu_kernel_name("ocl-conv-gemm-f32-64x64", ERT_GPU_VARIANT_F16),
		     "ocl-conv-gemm-f16-64x64");
	CHECK_EQ_STR(ert_gpu_kernel_name("vk-binary-f32", ERT_GPU_VARIANT_F16A), "vk-binary-f16a");
	CHECK(ert_gpu_kernel_name("vk-binary-f32", ERT_GPU_VARIANT_F16A) !=
	      ert_gpu_kernel_name("vk-binary-f32", ERT_GPU_VARIANT_F16));
	/* only a whole "-f32" element */
	CHECK_EQ_STR(ert_gpu_kernel_name("x-f32x-f32", ERT_GPU_VARIANT_F16), "x-f32x-f16");
	const char *other = "vk-copy";
	CHECK(ert_gpu_kernel_name(other, ERT_GPU_VARIANT_F16) == other);
	const char *f16 = ert_gpu_kernel_name("vk-gemm-f32", ERT_GPU_VARIANT_F16);
	CHECK(ert_gpu_kernel_name(f16, ERT_GPU_VARIANT_F16) == f16);
}

ERT_TEST(interned)
{
	char a[] = "vk-softmax-f32", b[] = "vk-softmax-f32";
	const char *x = ert_gpu_kernel_name(a, ERT_GPU_VARIANT_F16);

	CHECK(x != a);
	CHECK(ert_gpu_kernel_name(b, ERT_GPU_VARIANT_F16) == x);
	a[0] = 'X';	/* the name made does not point into its argument */
	CHECK_EQ_STR(x, "vk-softmax-f16");
}

static void *name_on_thread(void *arg)
{
	return (void *)ert_gpu_kernel_name(arg, ERT_GPU_VARIANT_F16);
}

ERT_TEST(threads_share_one_name)
{
	pthread_t t[4];
	void *got[4];

	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, name_on_thread, "ocl-pool2d-f32") == 0);
	for (int i = 0; i < 4; i++)
		CHECK(pthread_join(t[i], &got[i]) == 0);
	for (int i = 1; i < 4; i++)
		CHECK(got[i] == got[0]);
	CHECK_EQ_STR(got[0], "ocl-pool2d-f16");
}

int main(int argc, char **argv)
{
	static const struct ert_test_case cases[] = {
		ERT_TEST_ENTRY(f32_names_unchanged),
		ERT_TEST_ENTRY(f16_names),
		ERT_TEST_ENTRY(interned),
		ERT_TEST_ENTRY(threads_share_one_name),
	};

	return ert_test_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
