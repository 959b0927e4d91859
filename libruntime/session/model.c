/* SPDX-License-Identifier: MIT */
/* Loading models: .ert files are mapped and used in place; .onnx is imported. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ert-file.h"
#include "format/ert-format.h"
#include "onnx/onnx-import.h"
#include "opt/passes.h"
#include "session/session-impl.h"

static void put_err(char *err, size_t size, const char *msg)
{
	if (err && size)
		snprintf(err, size, "%s", msg);
	ert_set_last_error(ERT_STATUS_INVALID_ARGUMENT, "%s", msg);
}

static ert_status model_new(struct ert_graph *g, ert_model **out)
{
	ert_model *m = calloc(1, sizeof(*m));

	if (!m)
		return ERT_STATUS_OUT_OF_MEMORY;
	atomic_init(&m->refs, 1);
	m->graph = g;
	*out = m;
	return ERT_OK;
}

static void model_free(ert_model *m)
{
	ert_model_unref(atomic_load(&m->unfused));
	if (!m->graph_borrowed)
		ert_graph_destroy(m->graph);
	if (m->map)
		munmap(m->map, m->map_size);
	free(m->copy);
	free(m);
}

/* Loads .ert when the magic matches, ONNX otherwise. @dir: for ONNX external data. */
static ert_status load_image(const void *data, size_t size, const char *dir,
			     struct ert_graph **g, struct ert_err *e)
{
	if (ert_format_probe(data, size))
		return ert_format_load(data, size, g, e);

	struct ert_onnx_options opt = { .optimize = true };

	return ert_onnx_import_memory(data, size, dir, &opt, g, e);
}

/*
 * ERT_MODEL_LOAD_COPY: the file's bytes in anonymous memory of the same
 * page alignment as a mapping, so nothing later done to the file reaches the
 * model. The file is read to its size at open; a short read is an error.
 */
static void *read_private_copy(int fd, size_t size, const char *path, struct ert_err *e)
{
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		ert_err_set(e, "cannot copy '%s' into memory: %s", path, strerror(errno));
		return MAP_FAILED;
	}
	for (size_t got = 0; got < size;) {
		ssize_t r = pread(fd, p + got, size - got, (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ert_err_set(e, "cannot read '%s': %s", path,
				    r < 0 ? strerror(errno) : "the file shrank while being read");
			munmap(p, size);
			return MAP_FAILED;
		}
		got += (size_t)r;
	}
	if (mprotect(p, size, PROT_READ) != 0) {
		ert_err_set(e, "cannot copy '%s' into memory: %s", path, strerror(errno));
		munmap(p, size);
		return MAP_FAILED;
	}
	return p;
}

ERT_API ert_status ert_model_load_file(const char *path, ert_model **model_out, char *err,
				       size_t err_size)
{
	return ert_model_load_file_flags(path, 0, model_out, err, err_size);
}

ERT_API ert_status ert_model_load_file_flags(const char *path, uint32_t flags,
					     ert_model **model_out, char *err, size_t err_size)
{
	struct ert_err e = { "" };
	struct ert_graph *g = NULL;
	struct stat stbuf;
	ert_model *m = NULL;
	void *map = MAP_FAILED;
	ert_status st;
	int fd = -1;

	if (!path || !model_out) {
		put_err(err, err_size, "failed to load model: NULL argument");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (flags & ~(uint32_t)ERT_MODEL_LOAD_COPY) {
		char msg[96];

		snprintf(msg, sizeof(msg), "failed to load model: unknown flags 0x%x",
			 flags & ~(uint32_t)ERT_MODEL_LOAD_COPY);
		put_err(err, err_size, msg);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	fd = ert_file_open_regular(path, &stbuf, &e);
	if (fd < 0) {
		/* a directory, FIFO or device is the caller's mistake, not an I/O error */
		st = errno == EINVAL || errno == EISDIR ? ERT_STATUS_INVALID_ARGUMENT
							: ERT_STATUS_IO;
		goto error;
	}
	if (stbuf.st_size == 0) {
		ert_err_set(&e, "'%s' is empty", path);
		st = ERT_STATUS_INVALID_MODEL;
		goto error;
	}
	if (flags & ERT_MODEL_LOAD_COPY) {
		map = read_private_copy(fd, (size_t)stbuf.st_size, path, &e);
		if (map == MAP_FAILED) {
			st = ERT_STATUS_IO;
			goto error;
		}
	} else {
		map = mmap(NULL, (size_t)stbuf.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			ert_err_set(&e, "cannot map '%s': %s", path, strerror(errno));
			st = ERT_STATUS_IO;
			goto error;
		}
	}
	char *dir = strdup(path);

	if (!dir) {
		st = ERT_STATUS_OUT_OF_MEMORY;
		ert_err_set(&e, "out of memory");
		goto error;
	}
	char *slash = strrchr(dir, '/');

	if (slash)
		slash[1] = '\0';
	else
		strcpy(dir, ".");
	st = load_image(map, (size_t)stbuf.st_size, dir, &g, &e);
	free(dir);
	if (st != ERT_OK)
		goto error;
	st = model_new(g, &m);
	if (st != ERT_OK) {
		ert_err_set(&e, "out of memory");
		goto error;
	}
	if (ert_format_probe(map, (size_t)stbuf.st_size)) {
		/* weights point into the mapping: it lives as long as the model */
		m->map = map;
		m->map_size = (size_t)stbuf.st_size;
	} else {
		munmap(map, (size_t)stbuf.st_size);
	}
	close(fd);
	*model_out = m;
	return ERT_OK;
error:
	ert_graph_destroy(g);
	if (map != MAP_FAILED)
		munmap(map, (size_t)stbuf.st_size);
	if (fd >= 0)
		close(fd);
	char msg[600];

	snprintf(msg, sizeof(msg), "%s", e.msg[0] ? e.msg : ert_status_string(st));
	put_err(err, err_size, msg);
	ert_set_last_error(st, "%s", msg);
	return st;
}

ERT_API ert_status ert_model_load_memory(const void *data, size_t size, int copy,
					 ert_model **model_out, char *err, size_t err_size)
{
	struct ert_err e = { "" };
	struct ert_graph *g = NULL;
	void *own = NULL;
	ert_model *m;
	ert_status st;

	if (!data || !size || !model_out) {
		put_err(err, err_size, "failed to load model: empty buffer or NULL argument");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (copy) {
		own = malloc(size);
		if (!own) {
			put_err(err, err_size, "failed to load model: out of memory");
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		memcpy(own, data, size);
		data = own;
	}
	st = load_image(data, size, NULL, &g, &e);
	if (st == ERT_OK && model_new(g, &m) != ERT_OK) {
		st = ERT_STATUS_OUT_OF_MEMORY;
		ert_err_set(&e, "out of memory");
	}
	if (st != ERT_OK) {
		ert_graph_destroy(g);
		free(own);
		put_err(err, err_size, e.msg[0] ? e.msg : ert_status_string(st));
		ert_set_last_error(st, "%s", e.msg);
		return st;
	}
	m->copy = own;
	*model_out = m;
	return ERT_OK;
}

ERT_API ert_model *ert_model_ref(ert_model *m)
{
	if (m)
		atomic_fetch_add(&m->refs, 1);
	return m;
}

ERT_API void ert_model_unref(ert_model *m)
{
	if (m && atomic_fetch_sub(&m->refs, 1) == 1)
		model_free(m);
}

ERT_API uint32_t ert_model_input_count(const ert_model *m)
{
	return m ? m->graph->n_inputs : 0;
}

ERT_API uint32_t ert_model_output_count(const ert_model *m)
{
	return m ? m->graph->n_outputs : 0;
}

ERT_API const char *ert_model_input_name(const ert_model *m, uint32_t i)
{
	return m && i < m->graph->n_inputs ? m->graph->tensors[m->graph->inputs[i]].name : NULL;
}

ERT_API const char *ert_model_output_name(const ert_model *m, uint32_t i)
{
	return m && i < m->graph->n_outputs ? m->graph->tensors[m->graph->outputs[i]].name : NULL;
}

/*
 * Only the CPU runs an InvertedResidual (opt/fuse-irblock.c): on a session
 * that also has a GPU each block would be a CPU island between device
 * steps, with its input and output copied across. Such a session
 * plans the Convs instead, on a model of its own: the graph written as an
 * .ert image and loaded back (constants then point into the image, which
 * the model keeps: one copy of the weights, shared by every such session
 * of @m), then unfused.
 */
ert_model *ert_model_unfused_irblock(ert_model *m, struct ert_err *err)
{
	const struct ert_graph *g = m->graph;
	ert_model *u = atomic_load(&m->unfused), *expect = NULL;
	struct ert_graph *ug = NULL;
	bool any = false;
	void *img = NULL;
	size_t size = 0;

	for (uint32_t i = 0; i < g->n_nodes && !any; i++)
		any = !g->nodes[i].dead && g->nodes[i].op == ERT_OP_InvertedResidual;
	if (!any)
		return ert_model_ref(m);
	if (u)
		return ert_model_ref(u);
	if (ert_format_write_memory(g, NULL, &img, &size, err) != ERT_OK)
		return NULL;
	if (ert_format_load(img, size, &ug, err) != ERT_OK ||
	    ert_opt_unfuse_irblock(ug, err) != ERT_OK) {
		ert_graph_destroy(ug);
		free(img);
		return NULL;
	}
	if (model_new(ug, &u) != ERT_OK) {
		ert_graph_destroy(ug);
		free(img);
		ert_err_set(err, "out of memory");
		return NULL;
	}
	u->copy = img;
	/* another session may have made one meanwhile: keep the first */
	if (!atomic_compare_exchange_strong(&m->unfused, &expect, u)) {
		ert_model_unref(u);
		u = expect;
	}
	return ert_model_ref(u);
}

const struct ert_graph *ert_model_graph(const ert_model *m)
{
	return m->graph;
}
