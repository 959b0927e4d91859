/* SPDX-License-Identifier: MIT */
/*
 * CPU feature detection (cpuid, xgetbv, the AMX permission request) and the
 * choice of kernel level.
 */
#include <cpuid.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu/isa.h"

/* arch_prctl() requests (asm/prctl.h), and the tile data state component. */
#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static struct ert_cpu_features features;
static pthread_once_t features_once = PTHREAD_ONCE_INIT;

static unsigned long long read_xcr0(void)
{
	unsigned int lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((unsigned long long)hi << 32) | lo;
}

/*
 * Linux hands out the AMX tile data state only to processes that ask for it
 * (it makes every signal frame 8 KiB larger); ask once, before any tile use.
 */
static bool amx_permitted(void)
{
	unsigned long bits = 0;

	if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0)
		return false;
	if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &bits) != 0)
		return false;
	return bits & (1ul << XFEATURE_XTILEDATA);
}

static void detect(void)
{
	struct ert_cpu_features *f = &features;
	unsigned int a, b, c, d, max;

	f->l2_bytes = sysconf(_SC_LEVEL2_CACHE_SIZE) > 0 ? sysconf(_SC_LEVEL2_CACHE_SIZE) : 0;
	if (!__get_cpuid(0, &max, &b, &c, &d))
		return;
	memcpy(f->vendor, &b, 4);
	memcpy(f->vendor + 4, &d, 4);
	memcpy(f->vendor + 8, &c, 4);
	__cpuid(1, a, b, c, d);
	f->sse41 = c & (1u << 19);
	f->fma = c & (1u << 12);
	f->avx = c & (1u << 28);
	f->f16c = c & (1u << 29);
	if (c & (1u << 27)) { /* OSXSAVE: XCR0 says which register state the OS saves */
		unsigned long long xcr0 = read_xcr0();

		f->os_ymm = (xcr0 & 0x6) == 0x6;
		f->os_zmm = f->os_ymm && (xcr0 & 0xe0) == 0xe0;
		f->os_tile = (xcr0 & 0x60000) == 0x60000;
	}
	if (max >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		f->avx2 = b & (1u << 5);
		f->avx512f = b & (1u << 16);
		f->avx512dq = b & (1u << 17);
		f->avx512cd = b & (1u << 28);
		f->avx512bw = b & (1u << 30);
		f->avx512vl = b & (1u << 31);
		f->avx512vnni = c & (1u << 11);
		f->amx_bf16 = d & (1u << 22);
		f->avx512fp16 = d & (1u << 23);
		f->amx_tile = d & (1u << 24);
		f->amx_int8 = d & (1u << 25);
		if (a >= 1) {
			__cpuid_count(7, 1, a, b, c, d);
			f->avxvnni = a & (1u << 4);
			f->avx512bf16 = a & (1u << 5);
		}
	}
	if (f->os_tile && f->amx_tile && f->amx_int8)
		f->os_tile = amx_permitted();
	else
		f->os_tile = false;

	__cpuid(0x80000000, max, b, c, d);
	if (max >= 0x80000004) {
		unsigned int r[12];
		char *s = f->brand, *e;

		for (unsigned int i = 0; i < 3; i++)
			__cpuid(0x80000002 + i, r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]);
		memcpy(f->brand, r, 48);
		f->brand[48] = '\0';
		while (*s == ' ')
			s++;
		memmove(f->brand, s, strlen(s) + 1);
		e = f->brand + strlen(f->brand);
		while (e > f->brand && e[-1] == ' ')
			*--e = '\0';
	}
}

const struct ert_cpu_features *ert_cpu_features(void)
{
	pthread_once(&features_once, detect);
	return &features;
}

enum ert_cpu_isa ert_cpu_isa_best(void)
{
	const struct ert_cpu_features *f = ert_cpu_features();

	if (!(f->os_ymm && f->avx && f->avx2 && f->fma && f->f16c))
		return ERT_ISA_SCALAR;
	if (!(f->os_zmm && f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq))
		return ERT_ISA_AVX2;
	if (!f->avx512vnni)
		return ERT_ISA_AVX512;
	if (!(f->os_tile && f->amx_tile && f->amx_int8 && f->amx_bf16))
		return ERT_ISA_AVX512VNNI;
	return ERT_ISA_AMX;
}

static const char *const isa_names[ERT_ISA_COUNT] = {
	[ERT_ISA_SCALAR] = "scalar",
	[ERT_ISA_AVX2] = "avx2",
	[ERT_ISA_AVX512] = "avx512",
	[ERT_ISA_AVX512VNNI] = "avx512vnni",
	[ERT_ISA_AMX] = "amx",
};

const char *ert_cpu_isa_name(enum ert_cpu_isa isa)
{
	return (unsigned)isa < ERT_ISA_COUNT ? isa_names[isa] : "unknown";
}

int ert_cpu_isa_from_name(const char *name)
{
	for (int i = 0; i < ERT_ISA_COUNT; i++)
		if (strcmp(name, isa_names[i]) == 0)
			return i;
	return -1;
}

ert_status ert_cpu_isa_choose(int cfg_level, enum ert_cpu_isa *out, struct ert_err *err)
{
	enum ert_cpu_isa best = ert_cpu_isa_best(), isa = best;
	const char *env = getenv("ERT_CPU_ISA");

	/* ert_cpu_level counts from AUTO = 0, SCALAR = 1. */
	if (cfg_level > 0) {
		enum ert_cpu_isa want = (enum ert_cpu_isa)(cfg_level - 1);

		if (want > best) {
			ert_err_set(err, "cpu_level %s: this CPU supports at most %s",
				    ert_cpu_isa_name(want), ert_cpu_isa_name(best));
			return ERT_STATUS_UNSUPPORTED;
		}
		isa = want;
	}
	if (env && *env) {
		int want = ert_cpu_isa_from_name(env);

		if (want < 0) {
			ert_err_set(err, "ERT_CPU_ISA='%s' is not one of scalar, avx2, avx512, "
				    "avx512vnni, amx", env);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		if ((enum ert_cpu_isa)want > best) {
			ert_err_set(err, "ERT_CPU_ISA=%s: this CPU supports at most %s", env,
				    ert_cpu_isa_name(best));
			return ERT_STATUS_UNSUPPORTED;
		}
		if ((enum ert_cpu_isa)want < isa)
			isa = (enum ert_cpu_isa)want;
	}
	*out = isa;
	return ERT_OK;
}

