/* SPDX-License-Identifier: MIT */
/*
 * A persistent pthread pool for parallel_for. A job is split into chunks,
 * cut into one home part per thread (cpu/work-parts.h: thread i takes its
 * part's chunks first, then steals from the others' ends), and the calling
 * thread, thread 0, works on chunks too. Between jobs a worker spins for a
 * short while (a model's ops come one after another, microseconds apart)
 * and then sleeps on a condition variable; the caller likewise spins
 * briefly for the last worker before it sleeps. Waking a sleeping thread
 * costs tens of microseconds per op, which was most of what two threads
 * lost against one on small ops. Posting a job and finishing one take the
 * mutex only when a thread sleeps (counted in sleepers / caller_sleeps):
 * with both spinning, a job costs the cache lines of its fields, its parts
 * and the counters, not the mutex's line going back and forth as well. An
 * empty job on two threads (Sapphire Rapids, 200000 in a row) took 1.38-1.45
 * us (median) with the mutex taken each time, 0.70-0.73 us without.
 */
#include <stdatomic.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "cpu/cpu-impl.h"
#include "cpu/work-parts.h"

#ifdef ERT_POOL_STATS
#include <stdio.h>
/*
 * Counters for studying how jobs split (a build option: make POOL_STATS=1):
 * per job function, how often it ran, its wall time, each thread's time
 * inside it, how late the first worker started, how long the caller
 * waited for the last one, and its fastest call (on a machine shared with
 * other work, the sums carry their time too). Printed to stderr when the
 * pool is destroyed.
 */
#define STAT_SLOTS 128
#define STAT_THREADS 8
struct pool_stat {
	ert_range_fn fn;
	uint64_t calls, serial, wall_ns, serial_ns, late_ns, join_ns;
	uint64_t min_wall_ns, min_serial_ns; /* the fastest call: robust on a shared machine */
	atomic_uint_fast64_t busy_ns[STAT_THREADS], chunks[STAT_THREADS];
};
#endif

struct ert_threadpool {
	pthread_mutex_t lock;    /* taken to sleep, to wake a sleeper and to set quit */
	pthread_cond_t wake;     /* workers wait here for a new generation */
	pthread_cond_t done;     /* the caller waits here for pending == 0 */
	atomic_uint_fast64_t generation; /* bumped for each job */
	atomic_uint pending;     /* workers still inside the current job */
	atomic_bool quit;
	atomic_uint sleepers;    /* workers in (or about to enter) the wait on wake */
	atomic_bool caller_sleeps; /* the caller is in (or about to enter) the wait on done */

	ert_range_fn fn;
	void *arg;
	int64_t n, chunk;
	struct ert_work_part *parts; /* one a thread: chunk indexes */

	uint32_t num_workers;
	pthread_t *workers;
	struct pool_worker *worker_args;
	pthread_mutex_t run_lock; /* serialises parallel_for calls on one pool */
#ifdef ERT_POOL_STATS
	struct pool_stat stats[STAT_SLOTS];
	struct pool_stat *cur;
	int64_t posted_ns;
	atomic_int_fast64_t first_start_ns;
	pthread_mutex_t stat_lock; /* the table: a job's chunk may run a small job inline */
#endif
};

/* What a worker thread is started with: its pool and its index (1..workers). */
struct pool_worker {
	struct ert_threadpool *p;
	uint32_t index;
};

static int64_t now_ns(void);
#ifdef ERT_POOL_STATS

static struct pool_stat *stat_of(struct ert_threadpool *p, ert_range_fn fn)
{
	size_t h = ((uintptr_t)fn >> 4) % STAT_SLOTS;

	for (size_t i = 0; i < STAT_SLOTS; i++, h = (h + 1) % STAT_SLOTS)
		if (!p->stats[h].fn || p->stats[h].fn == fn) {
			p->stats[h].fn = fn;
			return &p->stats[h];
		}
	return &p->stats[0];
}

static void stats_print(struct ert_threadpool *p)
{
	for (size_t i = 0; i < STAT_SLOTS; i++) {
		struct pool_stat *s = &p->stats[i];

		if (!s->fn)
			continue;
		fprintf(stderr, "pool-stat fn=%p calls=%llu wall_us=%.1f serial=%llu serial_us=%.1f late_us=%.1f join_us=%.1f min_wall_us=%.2f min_serial_us=%.2f",
			(void *)s->fn, (unsigned long long)s->calls, s->wall_ns / 1e3,
			(unsigned long long)s->serial, s->serial_ns / 1e3, s->late_ns / 1e3,
			s->join_ns / 1e3, s->min_wall_ns / 1e3, s->min_serial_ns / 1e3);
		for (unsigned t = 0; t <= p->num_workers && t < STAT_THREADS; t++)
			fprintf(stderr, " busy%u_us=%.1f chunks%u=%llu", t,
				atomic_load(&s->busy_ns[t]) / 1e3, t,
				(unsigned long long)atomic_load(&s->chunks[t]));
		fputc('\n', stderr);
	}
}
#endif

/* Thread @self's share of the job: its part's chunks, then any left elsewhere. */
static void run_chunks(struct ert_threadpool *p, uint32_t self)
{
	uint32_t c;

	while (ert_work_take(p->parts, p->num_workers + 1, self, &c)) {
		int64_t b = (int64_t)c * p->chunk;
		int64_t e = b + p->chunk < p->n ? b + p->chunk : p->n;

#ifdef ERT_POOL_STATS
		int64_t t0 = now_ns();
		int_fast64_t zero = 0;
		uint32_t slot = self < STAT_THREADS ? self : STAT_THREADS - 1;

		if (self)
			atomic_compare_exchange_strong(&p->first_start_ns, &zero, t0);
		p->fn(p->arg, b, e);
		atomic_fetch_add(&p->cur->busy_ns[slot], now_ns() - t0);
		atomic_fetch_add(&p->cur->chunks[slot], 1);
#else
		p->fn(p->arg, b, e);
#endif
	}
}

/* How long a thread spins for the next job or the last worker before it sleeps. */
#define SPIN_NS 50000

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Spin until *@v differs from @old or SPIN_NS pass; true if it changed. */
static bool spin_while_u64(atomic_uint_fast64_t *v, uint64_t old, atomic_bool *quit)
{
	int64_t end = 0;

	for (unsigned i = 0;; i++) {
		if (atomic_load(v) != old || atomic_load(quit))
			return true;
		if ((i & 255) == 0) {
			int64_t t = now_ns();

			if (!end)
				end = t + SPIN_NS;
			else if (t > end)
				return false;
		}
		ert_cpu_relax();
	}
}

static void *worker_main(void *arg)
{
	const struct pool_worker *w = arg;
	struct ert_threadpool *p = w->p;
	uint64_t seen = 0;

	for (;;) {
		if (!spin_while_u64(&p->generation, seen, &p->quit)) {
			/*
			 * sleepers goes up before generation is read again (both
			 * seq_cst), and the poster bumps generation before it reads
			 * sleepers: one of the two sees the other's change
			 */
			pthread_mutex_lock(&p->lock);
			atomic_fetch_add(&p->sleepers, 1);
			while (!atomic_load(&p->quit) && atomic_load(&p->generation) == seen)
				pthread_cond_wait(&p->wake, &p->lock);
			atomic_fetch_sub(&p->sleepers, 1);
			pthread_mutex_unlock(&p->lock);
		}
		if (atomic_load(&p->quit))
			break;
		seen = atomic_load(&p->generation);
		run_chunks(p, w->index);
		/* the same pairing with the caller's caller_sleeps and pending */
		if (atomic_fetch_sub(&p->pending, 1) == 1 && atomic_load(&p->caller_sleeps)) {
			pthread_mutex_lock(&p->lock);
			pthread_cond_signal(&p->done);
			pthread_mutex_unlock(&p->lock);
		}
	}
	return NULL;
}

struct ert_threadpool *ert_threadpool_create(uint32_t num_threads)
{
	struct ert_threadpool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->run_lock, NULL);
#ifdef ERT_POOL_STATS
	pthread_mutex_init(&p->stat_lock, NULL);
#endif
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->done, NULL);
	p->parts = aligned_alloc(_Alignof(struct ert_work_part),
				 sizeof(*p->parts) * (num_threads > 1 ? num_threads : 1));
	if (!p->parts) {
		ert_threadpool_destroy(p);
		return NULL;
	}
	if (num_threads > 1) {
		p->workers = calloc(num_threads - 1, sizeof(*p->workers));
		p->worker_args = calloc(num_threads - 1, sizeof(*p->worker_args));
		if (!p->workers || !p->worker_args) {
			ert_threadpool_destroy(p);
			return NULL;
		}
		for (uint32_t i = 0; i + 1 < num_threads; i++) {
			p->worker_args[i] = (struct pool_worker){ p, i + 1 };
			if (pthread_create(&p->workers[i], NULL, worker_main, &p->worker_args[i]) != 0)
				break;
			p->num_workers++;
		}
	}
	return p;
}

void ert_threadpool_destroy(struct ert_threadpool *p)
{
	if (!p)
		return;
#ifdef ERT_POOL_STATS
	stats_print(p);
#endif
	pthread_mutex_lock(&p->lock);
	atomic_store(&p->quit, true);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (uint32_t i = 0; i < p->num_workers; i++)
		pthread_join(p->workers[i], NULL);
	free(p->workers);
	free(p->worker_args);
	free(p->parts);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->run_lock);
#ifdef ERT_POOL_STATS
	pthread_mutex_destroy(&p->stat_lock);
#endif
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->done);
	free(p);
}

uint32_t ert_threadpool_size(const struct ert_threadpool *p)
{
	return p ? p->num_workers + 1 : 1;
}

void ert_parallel_for(struct ert_threadpool *p, int64_t n, int64_t grain,
		      ert_range_fn fn, void *arg)
{
	if (n <= 0)
		return;
	if (grain < 1)
		grain = 1;
	if (!p || p->num_workers == 0 || n <= grain) {
#ifdef ERT_POOL_STATS
		if (p) {
			int64_t t0 = now_ns();

			fn(arg, 0, n);
			pthread_mutex_lock(&p->stat_lock);
			struct pool_stat *s = stat_of(p, fn);

			int64_t d = now_ns() - t0;

			s->serial++;
			s->serial_ns += d;
			if (!s->min_serial_ns || (uint64_t)d < s->min_serial_ns)
				s->min_serial_ns = d;
			pthread_mutex_unlock(&p->stat_lock);
			return;
		}
#endif
		fn(arg, 0, n);
		return;
	}
	uint32_t threads = p->num_workers + 1;
	/* About four chunks per thread balances load without much contention. */
	int64_t chunk = (n + threads * 4 - 1) / (threads * 4);

	if (chunk < grain)
		chunk = grain;

	pthread_mutex_lock(&p->run_lock);
	/* every worker left the last job (pending 0): none reads these fields now */
	p->fn = fn;
	p->arg = arg;
	p->n = n;
	p->chunk = chunk;
	ert_work_parts_split(p->parts, threads, (uint64_t)((n + chunk - 1) / chunk));
	atomic_store(&p->pending, p->num_workers);
#ifdef ERT_POOL_STATS
	pthread_mutex_lock(&p->stat_lock);
	p->cur = stat_of(p, fn);
	pthread_mutex_unlock(&p->stat_lock);
	p->posted_ns = now_ns();
	atomic_store(&p->first_start_ns, 0);
#endif
	/* the job's fields are visible to whoever sees the new generation */
	atomic_fetch_add(&p->generation, 1);
	if (atomic_load(&p->sleepers)) {
		pthread_mutex_lock(&p->lock);
		pthread_cond_broadcast(&p->wake);
		pthread_mutex_unlock(&p->lock);
	}

	run_chunks(p, 0);

#ifdef ERT_POOL_STATS
	int64_t main_done = now_ns();
#endif
	int64_t end = 0;

	for (unsigned i = 0; atomic_load(&p->pending); i++) {
		if ((i & 255) == 0) {
			int64_t t = now_ns();

			if (!end) {
				end = t + SPIN_NS;
			} else if (t > end) {
				pthread_mutex_lock(&p->lock);
				atomic_store(&p->caller_sleeps, true);
				while (atomic_load(&p->pending))
					pthread_cond_wait(&p->done, &p->lock);
				atomic_store(&p->caller_sleeps, false);
				pthread_mutex_unlock(&p->lock);
				break;
			}
		}
		ert_cpu_relax();
	}
#ifdef ERT_POOL_STATS
	int64_t t_end = now_ns();

	p->cur->calls++;
	p->cur->wall_ns += t_end - p->posted_ns;
	if (!p->cur->min_wall_ns || (uint64_t)(t_end - p->posted_ns) < p->cur->min_wall_ns)
		p->cur->min_wall_ns = t_end - p->posted_ns;
	p->cur->join_ns += t_end - main_done;
	if (atomic_load(&p->first_start_ns))
		p->cur->late_ns += atomic_load(&p->first_start_ns) - p->posted_ns;
#endif
	pthread_mutex_unlock(&p->run_lock);
}
