/* SPDX-License-Identifier: MIT */
/*
 * ert-test.h — a minimal unit-test harness. Each test binary defines tests with
 * ERT_TEST(name) and lists them in main() through ert_test_main(). The run prints
 * one line per failure and ends with "N passed, N failed".
 */
#ifndef ERT_TEST_H
#define ERT_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

struct ert_test_case {
	const char *name;
	void (*fn)(int *failed);
};

#define ERT_TEST(name) static void test_##name(int *ert_test_failed_)
#define ERT_TEST_ENTRY(name) { #name, test_##name }

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,    \
				__LINE__, #cond);                                 \
			*ert_test_failed_ = 1;                                    \
		}                                                                 \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                        \
	do {                                                                      \
		long long a_ = (long long)(a), b_ = (long long)(b);               \
		if (a_ != b_) {                                                   \
			fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n",      \
				__FILE__, __LINE__, #a, a_, b_);                  \
			*ert_test_failed_ = 1;                                    \
		}                                                                 \
	} while (0)

#define CHECK_NEAR(a, b, tol)                                                     \
	do {                                                                      \
		double a_ = (double)(a), b_ = (double)(b);                        \
		if (!(fabs(a_ - b_) <= (tol))) {                                  \
			fprintf(stderr, "%s:%d: %s == %g, expected %g (tol %g)\n", \
				__FILE__, __LINE__, #a, a_, b_, (double)(tol));   \
			*ert_test_failed_ = 1;                                    \
		}                                                                 \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                        \
	do {                                                                      \
		const char *a_ = (a), *b_ = (b);                                  \
		if (strcmp(a_, b_) != 0) {                                        \
			fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", \
				__FILE__, __LINE__, #a, a_, b_);                  \
			*ert_test_failed_ = 1;                                    \
		}                                                                 \
	} while (0)

/* Stop the current test (after a failed CHECK on which later steps depend). */
#define REQUIRE(cond)                                                             \
	do {                                                                      \
		CHECK(cond);                                                      \
		if (*ert_test_failed_)                                            \
			return;                                                   \
	} while (0)

static inline int ert_test_main(const struct ert_test_case *cases, size_t n, int argc,
				char **argv)
{
	int passed = 0, failed = 0;

	for (size_t i = 0; i < n; i++) {
		int f = 0;

		if (argc > 1 && !strstr(cases[i].name, argv[1]))
			continue;
		cases[i].fn(&f);
		if (f) {
			printf("FAIL %s\n", cases[i].name);
			failed++;
		} else {
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#define ERT_TEST_MAIN(...)                                                        \
	int main(int argc, char **argv)                                           \
	{                                                                         \
		static const struct ert_test_case cases_[] = { __VA_ARGS__ };     \
		return ert_test_main(cases_, sizeof(cases_) / sizeof(cases_[0]),  \
				     argc, argv);                                 \
	}

#endif
