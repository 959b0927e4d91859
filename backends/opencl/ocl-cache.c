/* SPDX-License-Identifier: MIT */
/*
 * The cache file (ert_config.cache_path): program binaries the driver gave
 * for this device, so that a later session loads them instead of compiling
 * the sources, and the launches tuned on it (ocl-tune.c), so that a later
 * session times nothing. Layout (host byte order, which the device key
 * implies):
 *
 *   "ERTCLBIN" u32 version (2; 1 had no tuning table)
 *   key: u32 count, then per string u32 length + bytes (platform, platform
 *        version, device, device version, driver version)
 *   u32 entries, then per entry: u32 name length + name, u64 source hash,
 *        u64 binary size + binary
 *   the tuning table (gpu-common/gpu-tune.h: ert_tune_serialize)
 *   u64 FNV-1a of every byte before it
 *
 * A file that is short, damaged (checksum), of another version or of another
 * device or driver is ignored with a warning and rewritten when a program is
 * built. A valid entry is still only a hint: the driver must accept the
 * binary (clCreateProgramWithBinary, clBuildProgram), else the program is
 * built from source and the entry replaced. Writes go to a temporary file
 * renamed over the path, so a reader sees the old file or the new one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opencl/ocl-impl.h"

#define MAGIC "ERTCLBIN"
#define VERSION 2u
#define MAX_FILE (256u << 20)
#define N_KEY 5

uint64_t ert_ocl_hash(uint64_t h, const void *data, size_t size)
{
	return ert_hash64(h, data, size);
}

static void key_strings(const struct ert_ocl *cl, const char *key[N_KEY])
{
	key[0] = cl->platform_name;
	key[1] = cl->platform_version;
	key[2] = cl->device_name;
	key[3] = cl->device_version;
	key[4] = cl->driver_version;
}

static void warn(struct ert_ocl *cl, const char *fmt, const char *what)
{
	snprintf(cl->cache.note, sizeof(cl->cache.note), fmt, cl->cache.path, what);
	fprintf(stderr, "edgert: opencl: %s\n", cl->cache.note);
}

/* Parse @buf (@size bytes) into the cache; a reason when it is not usable. */
static const char *parse(struct ert_ocl *cl, const unsigned char *buf, size_t size)
{
	struct ert_ocl_cache *c = &cl->cache;
	struct ert_rd r = { buf, size, false };
	const char *key[N_KEY];
	const void *magic;
	uint64_t sum;
	uint32_t n;

	if (size < 8 + 4 + 8 || memcmp(buf, MAGIC, 8) != 0)
		return "not an edgert OpenCL cache file";
	memcpy(&sum, buf + size - 8, 8);
	if (ert_ocl_hash(ERT_OCL_HASH_INIT, buf, size - 8) != sum)
		return "damaged or truncated (checksum)";
	r.left -= 8;
	magic = ert_rd_take(&r, 8);
	(void)magic;
	if (ert_rd_u32(&r) != VERSION)
		return "written by another version of edgert";
	key_strings(cl, key);
	if (ert_rd_u32(&r) != N_KEY)
		return "damaged (key)";
	for (int i = 0; i < N_KEY; i++) {
		uint32_t len = ert_rd_u32(&r);
		const char *s = ert_rd_take(&r, len);

		if (!s)
			return "damaged (key)";
		if (len != strlen(key[i]) || memcmp(s, key[i], len) != 0)
			return "made for another device or driver";
	}
	n = ert_rd_u32(&r);
	for (uint32_t i = 0; i < n && !r.bad; i++) {
		uint32_t len = ert_rd_u32(&r);
		const char *name = ert_rd_take(&r, len);
		uint64_t hash = ert_rd_u64(&r), bsize = ert_rd_u64(&r);
		const void *bin = ert_rd_take(&r, (size_t)bsize);
		struct ert_ocl_cache_entry *e;

		if (r.bad || !len || len >= sizeof(e->name) || bsize > MAX_FILE)
			return "damaged (entry)";
		/* programs this build does not have are dropped */
		if (c->n == ERT_OCL_MAX_PROGRAMS)
			continue;
		e = &c->entries[c->n];
		memcpy(e->name, name, len);
		e->name[len] = '\0';
		e->hash = hash;
		e->size = (size_t)bsize;
		e->bin = malloc(e->size ? e->size : 1);
		if (!e->bin)
			return "too large to read (out of memory)";
		memcpy(e->bin, bin, e->size);
		c->n++;
	}
	if (r.bad)
		return "damaged (length)";
	size_t used = 0;
	const char *why = ert_tune_parse(&c->tuned, r.p, r.left, &used);

	if (why)
		return why;
	if (used != r.left)
		return "damaged (length)";
	c->tuned.dirty = false;
	return NULL;
}

static void drop_entries(struct ert_ocl_cache *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		free(c->entries[i].bin);
	c->n = 0;
	ert_tune_table_free(&c->tuned);
}

void ert_ocl_cache_open(struct ert_ocl *cl, const char *path)
{
	struct ert_ocl_cache *c = &cl->cache;
	unsigned char *buf = NULL;
	const char *why = NULL;
	struct stat st;
	FILE *f;

	if (!path || !*path)
		return;
	c->path = strdup(path);
	if (!c->path)
		return;
	f = fopen(path, "rb");
	if (!f) {
		if (errno != ENOENT)
			warn(cl, "cannot read the cache file '%s' (%s): it will be rewritten",
			     strerror(errno));
		return;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if ((uint64_t)st.st_size > MAX_FILE)
		why = "larger than any cache file edgert writes";
	else if (!(buf = malloc(st.st_size ? (size_t)st.st_size : 1)) ||
		 fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		why = "cannot be read";
	else
		why = parse(cl, buf, (size_t)st.st_size);
	fclose(f);
	free(buf);
	if (why) {
		drop_entries(c);
		c->rejected = true;
		warn(cl, "ignoring the cache file '%s': %s; it will be rewritten", why);
	}
}

static struct ert_ocl_cache_entry *find(struct ert_ocl_cache *c, const char *name)
{
	for (uint32_t i = 0; i < c->n; i++)
		if (!strcmp(c->entries[i].name, name))
			return &c->entries[i];
	return NULL;
}

const struct ert_ocl_cache_entry *ert_ocl_cache_find(struct ert_ocl *cl, const char *name,
						     uint64_t hash)
{
	const struct ert_ocl_cache_entry *e = find(&cl->cache, name);

	return e && e->hash == hash ? e : NULL;
}

static bool put_bytes(FILE *f, uint64_t *sum, const void *p, size_t n)
{
	*sum = ert_ocl_hash(*sum, p, n);
	return fwrite(p, 1, n, f) == n;
}

static bool put_u32(FILE *f, uint64_t *sum, uint32_t v)
{
	return put_bytes(f, sum, &v, 4);
}

static bool put_u64(FILE *f, uint64_t *sum, uint64_t v)
{
	return put_bytes(f, sum, &v, 8);
}

static bool put_str(FILE *f, uint64_t *sum, const char *s)
{
	return put_u32(f, sum, (uint32_t)strlen(s)) && put_bytes(f, sum, s, strlen(s));
}

/* The whole cache to a temporary file beside the path, then renamed over it. */
static void save(struct ert_ocl *cl)
{
	struct ert_ocl_cache *c = &cl->cache;
	size_t len = strlen(c->path);
	uint64_t sum = ERT_OCL_HASH_INIT;
	const char *key[N_KEY];
	char *tmp = malloc(len + 16);
	size_t table_size = ert_tune_serialize(&c->tuned, NULL, 0);
	unsigned char *table = malloc(table_size);
	bool ok;
	FILE *f = NULL;
	int fd;

	/* one warning is enough: the same path will not become writable mid-session */
	if (!tmp || !table || c->unwritable) {
		free(tmp);
		free(table);
		return;
	}
	ert_tune_serialize(&c->tuned, table, table_size);
	snprintf(tmp, len + 16, "%s.tmp.XXXXXX", c->path);
	fd = mkstemp(tmp);
	if (fd < 0 || !(f = fdopen(fd, "wb"))) {
		warn(cl, "cannot write the cache file '%s' (%s)", strerror(errno));
		c->unwritable = true;
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		free(table);
		return;
	}
	key_strings(cl, key);
	ok = put_bytes(f, &sum, MAGIC, 8) && put_u32(f, &sum, VERSION) && put_u32(f, &sum, N_KEY);
	for (int i = 0; i < N_KEY && ok; i++)
		ok = put_str(f, &sum, key[i]);
	ok = ok && put_u32(f, &sum, c->n);
	for (uint32_t i = 0; i < c->n && ok; i++) {
		const struct ert_ocl_cache_entry *e = &c->entries[i];

		ok = put_str(f, &sum, e->name) && put_u64(f, &sum, e->hash) &&
		     put_u64(f, &sum, e->size) && put_bytes(f, &sum, e->bin, e->size);
	}
	ok = ok && table && put_bytes(f, &sum, table, table_size);
	ok = ok && fwrite(&sum, 1, 8, f) == 8;
	/* the data reaches the disk before the rename makes it the cache file */
	ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, c->path) != 0) {
		warn(cl, "cannot write the cache file '%s' (%s)", strerror(errno ? errno : EIO));
		c->unwritable = true;
		unlink(tmp);
	}
	free(tmp);
	free(table);
}

void ert_ocl_cache_put(struct ert_ocl *cl, const char *name, uint64_t hash, cl_program prog)
{
	struct ert_ocl_cache *c = &cl->cache;
	struct ert_ocl_cache_entry *e;
	unsigned char *bin;
	size_t size = 0;

	if (!c->path)
		return;
	/* one device: one binary */
	if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL) !=
	    CL_SUCCESS || !size || size > MAX_FILE)
		return;
	bin = malloc(size);
	if (!bin)
		return;
	if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL) != CL_SUCCESS ||
	    strlen(name) >= sizeof(e->name)) {
		free(bin);
		return;
	}
	e = find(c, name);
	if (!e) {
		if (c->n == ERT_OCL_MAX_PROGRAMS) {
			free(bin);
			return;
		}
		e = &c->entries[c->n++];
		snprintf(e->name, sizeof(e->name), "%s", name);
	} else {
		free(e->bin);
	}
	e->hash = hash;
	e->bin = bin;
	e->size = size;
	c->dirty = true;
}

void ert_ocl_cache_flush(struct ert_ocl *cl)
{
	struct ert_ocl_cache *c = &cl->cache;

	if (!c->path || (!c->dirty && !c->tuned.dirty))
		return;
	save(cl);
	/* written, or unwritable (and said so once): either way nothing to retry */
	c->dirty = false;
	c->tuned.dirty = false;
}

void ert_ocl_cache_close(struct ert_ocl *cl)
{
	drop_entries(&cl->cache);
	free(cl->cache.path);
	cl->cache.path = NULL;
}
