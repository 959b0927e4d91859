/* SPDX-License-Identifier: MIT */
/* The CPU backend's thread pool: every index visited exactly once, any size. */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include <pthread.h>

#include "cpu/cpu-impl.h"
#include "cpu/work-parts.h"
#include "ert-test.h"

struct visit {
	atomic_int *hits;
	atomic_int calls;
};

static void mark(void *arg, int64_t begin, int64_t end)
{
	struct visit *v = arg;

	atomic_fetch_add(&v->calls, 1);
	for (int64_t i = begin; i < end; i++)
		atomic_fetch_add(&v->hits[i], 1);
}

static int visit_all(struct ert_threadpool *pool, int64_t n, int64_t grain)
{
	struct visit v = { calloc((size_t)(n ? n : 1), sizeof(atomic_int)), 0 };
	int ok = v.hits != NULL;

	ert_parallel_for(pool, n, grain, mark, &v);
	for (int64_t i = 0; ok && i < n; i++)
		ok = atomic_load(&v.hits[i]) == 1;
	free(v.hits);
	return ok;
}

ERT_TEST(every_index_once)
{
	for (uint32_t threads = 1; threads <= 4; threads++) {
		struct ert_threadpool *pool = ert_threadpool_create(threads);

		REQUIRE(pool);
		CHECK_EQ_INT(ert_threadpool_size(pool), threads);
		CHECK(visit_all(pool, 0, 1));
		CHECK(visit_all(pool, 1, 1));
		CHECK(visit_all(pool, 7, 1));
		CHECK(visit_all(pool, 1000, 3));
		CHECK(visit_all(pool, 100003, 64));
		ert_threadpool_destroy(pool);
	}
	CHECK(visit_all(NULL, 50, 1));
}

ERT_TEST(many_jobs_in_a_row)
{
	struct ert_threadpool *pool = ert_threadpool_create(3);
	int ok = 1;

	REQUIRE(pool);
	for (int i = 0; i < 2000 && ok; i++)
		ok = visit_all(pool, 1 + i % 97, 1);
	CHECK(ok);
	ert_threadpool_destroy(pool);
}

static void pause_us(long us)
{
	struct timespec t = { 0, us * 1000 };

	nanosleep(&t, NULL);
}

/* Chunks of which the last item sleeps, so that the caller waits past its spin. */
static void mark_slow_last(void *arg, int64_t begin, int64_t end)
{
	if (end == 64)
		pause_us(300);
	mark(arg, begin, end);
}

/*
 * Jobs after pauses longer than a thread's spin (so the workers sleep and a
 * post must wake them) and jobs that outlast the caller's spin (so it sleeps
 * and the last worker must wake it): every index once, and none hangs.
 */
ERT_TEST(jobs_across_sleeps)
{
	struct ert_threadpool *pool = ert_threadpool_create(3);
	int ok = 1;

	REQUIRE(pool);
	for (int i = 0; i < 60 && ok; i++) {
		struct visit v = { calloc(64, sizeof(atomic_int)), 0 };

		REQUIRE(v.hits);
		pause_us(i % 3 * 100);
		ert_parallel_for(pool, 64, 1, i % 2 ? mark_slow_last : mark, &v);
		for (int64_t k = 0; ok && k < 64; k++)
			ok = atomic_load(&v.hits[k]) == 1;
		free(v.hits);
	}
	CHECK(ok);
	ert_threadpool_destroy(pool);
}

ERT_TEST(grain_bounds_chunks)
{
	struct ert_threadpool *pool = ert_threadpool_create(4);
	struct visit v = { calloc(100, sizeof(atomic_int)), 0 };

	REQUIRE(pool && v.hits);
	/* n <= grain runs inline as one call */
	ert_parallel_for(pool, 100, 100, mark, &v);
	CHECK_EQ_INT(atomic_load(&v.calls), 1);
	atomic_store(&v.calls, 0);
	/* chunks are never smaller than the grain: at most 100 / 30 + 1 calls */
	ert_parallel_for(pool, 100, 30, mark, &v);
	CHECK(atomic_load(&v.calls) <= 4);
	free(v.hits);
	ert_threadpool_destroy(pool);
}

/* One thread alone: its own part front to back, then the others' from their backs. */
ERT_TEST(work_parts_order)
{
	struct ert_work_part parts[3];
	uint32_t item, got[10], n = 0;
	static const uint32_t want[10] = { 3, 4, 5, 9, 8, 7, 6, 2, 1, 0 };

	/* 10 items in 3 parts: [0, 3) [3, 6) [6, 10) */
	ert_work_parts_split(parts, 3, 10);
	while (n < 10 && ert_work_take(parts, 3, 1, &item))
		got[n++] = item;
	CHECK_EQ_INT(n, 10);
	for (uint32_t i = 0; i < n; i++)
		CHECK_EQ_INT(got[i], want[i]);
	CHECK(!ert_work_take(parts, 3, 1, &item));
	CHECK(!ert_work_take(parts, 3, 0, &item));
}

struct taker {
	struct ert_work_part *parts;
	uint32_t nparts, self;
	atomic_int *hits;
};

static void *take_all(void *arg)
{
	struct taker *t = arg;
	uint32_t item;

	while (ert_work_take(t->parts, t->nparts, t->self, &item))
		atomic_fetch_add(&t->hits[item], 1);
	return NULL;
}

/* Threads taking and stealing at once: every item once, also when a part's owner never comes. */
ERT_TEST(work_parts_every_item_once)
{
	enum { ITEMS = 20000, PARTS = 4 };
	static struct ert_work_part parts[PARTS];
	atomic_int *hits = calloc(ITEMS, sizeof(*hits));

	REQUIRE(hits);
	for (uint32_t takers = 1; takers <= PARTS; takers++) {
		pthread_t th[PARTS];
		struct taker tk[PARTS];
		int ok = 1;

		for (uint32_t i = 0; i < ITEMS; i++)
			atomic_store(&hits[i], 0);
		ert_work_parts_split(parts, PARTS, ITEMS);
		for (uint32_t i = 0; i < takers; i++) {
			tk[i] = (struct taker){ parts, PARTS, i, hits };
			REQUIRE(pthread_create(&th[i], NULL, take_all, &tk[i]) == 0);
		}
		for (uint32_t i = 0; i < takers; i++)
			pthread_join(th[i], NULL);
		for (uint32_t i = 0; i < ITEMS && ok; i++)
			ok = atomic_load(&hits[i]) == 1;
		CHECK(ok);
	}
	free(hits);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(every_index_once), ERT_TEST_ENTRY(many_jobs_in_a_row),
	      ERT_TEST_ENTRY(jobs_across_sleeps),
	      ERT_TEST_ENTRY(grain_bounds_chunks), ERT_TEST_ENTRY(work_parts_order),
	      ERT_TEST_ENTRY(work_parts_every_item_once))
