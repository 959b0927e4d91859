/* SPDX-License-Identifier: MIT */
/*
 * edgert conform — run ONNX backend test cases (model.onnx + test_data_set_*)
 * and compare every output with the tolerances ONNX's own runner uses.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "edgert.h"
#include "onnx.pb-c.h"
#include "onnx/onnx-import.h"
#include "session/session-impl.h"

#define MAX_CASE_INPUTS 64

struct conform_opts {
	const char *filter;
	uint32_t threads;
	double rtol, atol;
	const char *gate_file;   /* op types a test must pass when it uses only these */
	double min_rate;         /* with a gate: minimum share of all tests passed */
	const char *errata_file; /* cases whose reference data is known to be wrong */
	const char *tol_file;    /* cases with their own absolute tolerance */
	/*
	 * Set per case: the model has a random generator (Bernoulli, Random*,
	 * Multinomial). Its outputs are checked for dtype, shape and support
	 * (every value within the reference's range, and whole where the
	 * reference's values all are), never element by element: ONNX's
	 * expected values are one draw of numpy's generator.
	 */
	bool random;
	bool verbose;
	bool gating;             /* --gate or --min-rate given */
	ert_config cfg;          /* backends from --backend (num_backends 0: the CPU) */
	bool device;             /* --backend names a backend other than the CPU */
};

/*
 * OFFLOAD: with --backend naming a device, a case some of whose ops the
 * device does not take (they would run on the CPU): not run, counted apart.
 */
enum verdict { PASS, FAIL, SKIP, OFFLOAD };

struct skip_count {
	char op[64];
	uint32_t n;
};

struct tally {
	uint32_t passed, failed, skipped;
	uint32_t gate_failed, gate_unsupported, known_bad;
	struct skip_count *skips;
	uint32_t n_skips;
	char **gate_ops;
	uint32_t n_gate_ops;
	char **errata;           /* case names, each followed by its reason */
	char **errata_why;
	uint32_t n_errata;
	char **tols;             /* --tolerances: case names, each followed by "ATOL REASON" */
	char **tols_why;
	uint32_t n_tols;
	uint32_t random_cases;   /* cases compared for dtype, shape and support only */
	/* --backend naming a device */
	uint32_t offloaded;      /* cases with an op the device did not take */
	struct skip_count *cpu_ops; /* op types that stayed on the CPU, and in how many cases */
	uint32_t n_cpu_ops;
	struct skip_count *dev_ops; /* op types the device ran in cases run on it */
	uint32_t n_dev_ops;
};

static const char usage[] =
	"USAGE: edgert conform [OPTIONS] DIR...\n"
	"\n"
	"Run every ONNX backend test case found in each DIR (a directory holding\n"
	"model.onnx and test_data_set_*/ directories, or a directory of such\n"
	"directories) and compare the outputs with ONNX's tolerances:\n"
	"|got - want| <= atol + rtol * |want|, exact for integers and booleans.\n"
	"Prints one line per failure with the worst error, the unsupported op types\n"
	"of skipped cases, and last 'N passed, N failed, N skipped'.\n"
	"\n"
	"OPTIONS:\n"
	"  -f, --filter TEXT     only cases whose directory name contains TEXT\n"
	"  -t, --threads N       CPU threads (1..32, default 1)\n"
	"      --rtol R          relative tolerance (default 1e-3)\n"
	"      --atol A          absolute tolerance (default 1e-7)\n"
	"      --gate FILE       op types (one per line): every case using only these\n"
	"                        must pass; failures of other cases are printed and\n"
	"                        counted but do not fail the run\n"
	"      --min-rate R      fail unless at least R (0..1) of all cases pass;\n"
	"                        without --gate, failures up to that rate are allowed\n"
	"      --errata FILE     cases whose expected outputs are known to be wrong,\n"
	"                        one 'NAME REASON' per line: such a case that fails\n"
	"                        is reported as XFAIL and counted as skipped; one\n"
	"                        that passes is a failure (the erratum is stale)\n"
	"      --tolerances FILE cases compared with their own absolute tolerance,\n"
	"                        one 'NAME ATOL REASON' per line\n"
	"  -b, --backend LIST    backends in order (cpu, opencl, vulkan, npu, auto);\n"
	"                        a list without cpu tests those devices: a case runs\n"
	"                        and counts only when every op of it runs on them;\n"
	"                        the others are counted as 'not on DEVICE' with the\n"
	"                        op types left to the CPU, and the op types the\n"
	"                        device ran are listed\n"
	"  -v, --verbose         print every case\n"
	"  -h, --help            show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert conform ../shared/conformance/onnx-backend/node\n"
	"  edgert conform -f conv ../shared/conformance/onnx-backend/node\n"
	"  edgert conform --threads 2 ../shared/conformance/onnx-backend/light\n"
	"  edgert conform --backend opencl ../shared/conformance/onnx-backend/node\n";

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of @dir that start with @prefix (NULL: all). */
static char **list_dir(const char *dir, const char *prefix, uint32_t *count)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	uint32_t n = 0, cap = 0;
	struct dirent *e;

	*count = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (prefix && strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		if (n == cap) {
			char **grown = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));

			if (!grown)
				break;
			names = grown;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (names)
		qsort(names, n, sizeof(*names), cmp_str);
	*count = n;
	return names;
}

static void free_list(char **names, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void count_op(struct skip_count **list, uint32_t *n, const char *op)
{
	for (uint32_t i = 0; i < *n; i++) {
		if (strcmp((*list)[i].op, op) == 0) {
			(*list)[i].n++;
			return;
		}
	}
	struct skip_count *grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (!grown)
		return;
	*list = grown;
	snprintf((*list)[*n].op, sizeof((*list)[0].op), "%s", op);
	(*list)[(*n)++].n = 1;
}

static void count_skip(struct tally *t, const char *op)
{
	count_op(&t->skips, &t->n_skips, op);
}

static int cmp_count_op(const void *a, const void *b)
{
	return strcmp(((const struct skip_count *)a)->op, ((const struct skip_count *)b)->op);
}

/* "unsupported op 'Foo' ..." or "failed to plan: Foo 'node': ..." → Foo */
static void op_from_message(const char *msg, char *op, size_t size)
{
	const char *p = strstr(msg, "unsupported op '");

	snprintf(op, size, "?");
	if (p) {
		p += strlen("unsupported op '");
	} else if ((p = strstr(msg, "failed to plan: "))) {
		p += strlen("failed to plan: ");
		const char *q = strchr(p, ' ');

		if (q)
			snprintf(op, size, "%.*s", (int)(q - p), p);
		return;
	} else if (strstr(msg, "type string")) {
		snprintf(op, size, "(string tensors)");
		return;
	} else if (strstr(msg, "is not a tensor")) {
		snprintf(op, size, "(maps, nested sequences, sparse tensors)");
		return;
	} else {
		return;
	}
	const char *q = strchr(p, '\'');

	if (q)
		snprintf(op, size, "%.*s", (int)(q - p), p);
}

/* The case's model as protobuf-c reads it (the caller frees it), or NULL. */
static Onnx__ModelProto *read_model(const char *model_path)
{
	struct ert_err oerr = { "" };
	FILE *f = ert_file_fopen_regular(model_path, NULL, &oerr);
	Onnx__ModelProto *m = NULL;
	uint8_t *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)size)) && fread(buf, 1, (size_t)size, f) == (size_t)size)
		m = onnx__model_proto__unpack(NULL, (size_t)size, buf);
	free(buf);
	fclose(f);
	if (m && !m->graph) {
		onnx__model_proto__free_unpacked(m, NULL);
		m = NULL;
	}
	return m;
}

/* Does the model's main graph hold a random generator? */
static bool has_random_op(const char *model_path)
{
	Onnx__ModelProto *m = read_model(model_path);
	bool found = false;

	for (size_t i = 0; m && i < m->graph->n_node && !found; i++)
		found = ert_op_is_random(ert_op_from_name(m->graph->node[i]->op_type));
	if (m)
		onnx__model_proto__free_unpacked(m, NULL);
	return found;
}

/* Does the model use only gate ops, and only tensors (of any dtype but string)? */
static bool in_gate(const struct tally *t, const char *model_path)
{
	Onnx__ModelProto *m = read_model(model_path);
	bool ok;

	if (!m)
		return false;
	ok = true;
	for (size_t i = 0; i < m->graph->n_node && ok; i++) {
		bool found = false;

		for (uint32_t g = 0; g < t->n_gate_ops && !found; g++)
			found = strcmp(t->gate_ops[g], m->graph->node[i]->op_type) == 0;
		ok = found;
	}
	Onnx__ValueInfoProto **vis[2] = { m->graph->input, m->graph->output };
	size_t nvis[2] = { m->graph->n_input, m->graph->n_output };

	for (int k = 0; k < 2 && ok; k++) {
		for (size_t i = 0; i < nvis[k] && ok; i++) {
			const Onnx__TypeProto *tp = vis[k][i]->type;

			/* string tensors, sequences, maps and optionals are outside the gate */
			if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
			    tp->tensor_type->elem_type == ERT_DTYPE_STRING)
				ok = false;
		}
	}
	onnx__model_proto__free_unpacked(m, NULL);
	return ok;
}

static double value_at(const struct ert_value *v, const void *data, int64_t i)
{
	struct ert_value tmp = *v;

	tmp.data = (void *)data;
	return ert_value_get_float(&tmp, i);
}

/*
 * A random generator's output against one reference draw: every value lies
 * in [min, max] of the reference's, and is whole where all of those are
 * (Bernoulli's 0 and 1 stay 0 and 1).
 */
static bool compare_support(const ert_item *got, const struct ert_value *want, char *why,
			    size_t why_size)
{
	const void *gd = got->data;
	double lo = INFINITY, hi = -INFINITY;
	bool whole = true;

	for (int64_t i = 0; i < want->numel; i++) {
		double w = value_at(want, want->data, i);

		lo = fmin(lo, w);
		hi = fmax(hi, w);
		whole &= w == floor(w);
	}
	for (int64_t i = 0; i < want->numel; i++) {
		double g = value_at(want, gd, i);

		if (!(g >= lo && g <= hi) || (whole && g != floor(g))) {
			snprintf(why, why_size, "random output: element %lld = %g is outside the "
				 "reference's support ([%g, %g]%s)", (long long)i, g, lo, hi,
				 whole ? ", whole numbers" : "");
			return false;
		}
	}
	return true;
}

/* Compare one output; writes a reason into @why on mismatch. */
static bool compare_output(const struct conform_opts *o, const ert_item *got,
			   const struct ert_value *want, char *why, size_t why_size)
{
	ert_dtype dt = got->dtype;
	uint32_t rank = got->rank;
	const void *gd = got->data;

	if (dt != want->dtype) {
		snprintf(why, why_size, "dtype %s, expected %s", ert_dtype_name(dt),
			 ert_dtype_name(want->dtype));
		return false;
	}
	bool shape_ok = rank == (uint32_t)want->rank;

	for (uint32_t d = 0; shape_ok && d < rank; d++)
		shape_ok = got->dims[d] == want->dims[d];
	if (!shape_ok) {
		char a[128] = "", b[128] = "";
		size_t la = 0, lb = 0;

		for (uint32_t d = 0; d < rank && la < sizeof(a) - 24; d++)
			la += (size_t)snprintf(a + la, sizeof(a) - la, "%s%lld", d ? "x" : "",
					       (long long)got->dims[d]);
		for (int32_t d = 0; d < want->rank && lb < sizeof(b) - 24; d++)
			lb += (size_t)snprintf(b + lb, sizeof(b) - lb, "%s%lld", d ? "x" : "",
					       (long long)want->dims[d]);
		snprintf(why, why_size, "shape [%s], expected [%s]", a, b);
		return false;
	}
	if (!want->numel)
		return true;
	if (!gd) {
		snprintf(why, why_size, "no data");
		return false;
	}
	if (o->random)
		return compare_support(got, want, why, why_size);
	if (dt == ERT_DTYPE_STRING) {
		const ert_string *gs = gd, *ws = want->data;

		for (int64_t i = 0; i < want->numel; i++)
			if (gs[i].len != ws[i].len ||
			    (ws[i].len && memcmp(gs[i].data, ws[i].data, (size_t)ws[i].len) != 0)) {
				snprintf(why, why_size, "string %lld differs (got '%.*s', want '%.*s')",
					 (long long)i, (int)(gs[i].len < 64 ? gs[i].len : 64),
					 gs[i].len ? gs[i].data : "", (int)(ws[i].len < 64 ? ws[i].len : 64),
					 ws[i].len ? ws[i].data : "");
				return false;
			}
		return true;
	}
	bool is_float = ert_dtype_is_float(dt) && ert_dtype_size(dt) >= 2;

	if (!is_float) {
		/* integers, bools, 8-bit floats, int4: bit-exact */
		if (memcmp(gd, want->data, want->nbytes) == 0)
			return true;
		for (int64_t i = 0; i < want->numel && ert_dtype_size(dt); i++) {
			if (memcmp((const uint8_t *)gd + i * ert_dtype_size(dt),
				   (const uint8_t *)want->data + i * ert_dtype_size(dt),
				   ert_dtype_size(dt)) != 0) {
				snprintf(why, why_size, "element %lld differs (got %g, want %g)",
					 (long long)i, value_at(want, gd, i),
					 value_at(want, want->data, i));
				return false;
			}
		}
		snprintf(why, why_size, "packed data differs");
		return false;
	}
	double worst = 0, worst_got = 0, worst_want = 0;
	int64_t worst_i = -1;

	for (int64_t i = 0; i < want->numel; i++) {
		double g = value_at(want, gd, i), w = value_at(want, want->data, i);

		if (isnan(w) && isnan(g))
			continue;
		if (isinf(w) && g == w)
			continue;
		double err = fabs(g - w);

		if (isnan(err) || err > o->atol + o->rtol * fabs(w)) {
			double excess = isnan(err) ? INFINITY : err;

			if (worst_i < 0 || excess > worst) {
				worst = excess;
				worst_i = i;
				worst_got = g;
				worst_want = w;
			}
		}
	}
	if (worst_i < 0)
		return true;
	snprintf(why, why_size, "max abs error %.3g at element %lld (got %.7g, want %.7g)", worst,
		 (long long)worst_i, worst_got, worst_want);
	return false;
}

static const ert_tensor *input_of(ert_session *sess, uint32_t k)
{
	return ert_session_get_input(sess, k);
}

static const ert_tensor *output_of(ert_session *sess, uint32_t k)
{
	return ert_session_get_output(sess, k);
}

/*
 * Load test_data_set inputs/outputs named prefix_N.pb, N = 0, 1, ...; those
 * whose kind (@kind_of, or NULL: all tensors) is a sequence or optional are
 * left empty (read with the ert_item functions).
 */
static uint32_t load_tensors(const char *dir, const char *prefix, struct ert_value *vals,
			     ert_session *sess, const ert_tensor *(*kind_of)(ert_session *, uint32_t),
			     char why[256])
{
	uint32_t n = 0;

	for (; n < MAX_CASE_INPUTS; n++) {
		char path[4096], name[256];
		struct ert_err err = { "" };

		snprintf(path, sizeof(path), "%s/%s_%u.pb", dir, prefix, n);
		if (!is_file(path))
			break;
		memset(&vals[n], 0, sizeof(vals[n]));
		if (n < (kind_of == input_of ? ert_session_input_count(sess) :
			 ert_session_output_count(sess)) &&
		    ert_tensor_kind(kind_of(sess, n)) != ERT_VALUE_TENSOR)
			continue;
		if (ert_onnx_load_tensor_file(path, &vals[n], name, sizeof(name), &err) != ERT_OK) {
			snprintf(why, 256, "cannot read %s_%u.pb: %.200s", prefix, n, err.msg);
			for (uint32_t k = 0; k < n; k++)
				free(vals[k].data);
			return UINT32_MAX;
		}
	}
	return n;
}

/*
 * Where a case's ops ran, with --backend naming a device: the op types of the
 * steps on the CPU and on other backends, each type once per case. Steps of
 * the plan are visited before each run (ert_session_visit_steps) and every
 * op is seen again by before_op while it runs, which also covers the nodes
 * planned at run time after a data-dependent op.
 */
struct placement {
	struct skip_count *cpu, *dev;
	uint32_t n_cpu, n_dev;
	char dev_name[32];       /* the device's backend name, once a step ran there */
};

static void place_op(struct placement *pl, const char *type, const char *backend)
{
	struct skip_count **list = strcmp(backend, "cpu") == 0 ? &pl->cpu : &pl->dev;
	uint32_t *n = list == &pl->cpu ? &pl->n_cpu : &pl->n_dev;

	for (uint32_t i = 0; i < *n; i++)
		if (strcmp((*list)[i].op, type) == 0)
			return;
	if (list == &pl->dev && !pl->dev_name[0])
		snprintf(pl->dev_name, sizeof(pl->dev_name), "%s", backend);
	count_op(list, n, type);
}

static void place_step(const struct ert_node *node, const struct ert_value *const *in,
		       uint32_t n_in, const struct ert_value *const *out, uint32_t n_out,
		       const char *backend, void *user)
{
	place_op(user, ert_op_name(node->op), backend);
}

static int place_before_op(const ert_op_info *op, void *user)
{
	/* the steps' placement: a subgraph's ops run where their If/Loop/Scan does */
	if (!op->depth)
		place_op(user, op->type, op->backend);
	return 0;
}

static void placement_clear(struct placement *pl)
{
	free(pl->cpu);
	free(pl->dev);
	pl->cpu = pl->dev = NULL;
	pl->n_cpu = pl->n_dev = 0;
}

/* "Cast, Mul" (the CPU's op types of a case) into @buf. */
static void placement_cpu_list(const struct placement *pl, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < pl->n_cpu && len + 1 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
					pl->cpu[i].op);
}

/* A tensor output as an ert_item. */
static void item_of_tensor(const ert_tensor *t, ert_item *it)
{
	memset(it, 0, sizeof(*it));
	it->dtype = ert_tensor_dtype(t);
	it->rank = ert_tensor_rank(t);
	for (uint32_t d = 0; d < it->rank && d < ERT_MAX_RANK; d++)
		it->dims[d] = ert_tensor_dim(t, d);
	it->data = ert_tensor_data(t);
	it->size = ert_tensor_byte_size(t);
}

/*
 * Input @k of @sess, a sequence or optional: set from its test data file
 * (a SequenceProto or OptionalProto). 0, or -1 with @why set.
 */
static int set_items_input(ert_session *sess, uint32_t k, const char *set_dir, char *why,
			   size_t why_size)
{
	struct ert_onnx_items v;
	struct ert_err err = { "" };
	ert_item *items;
	char path[4200];
	int ret = -1;

	snprintf(path, sizeof(path), "%.4096s/input_%u.pb", set_dir, k);
	if (ert_onnx_load_items_file(path, ert_tensor_kind(ert_session_get_input(sess, k)), &v,
				     &err) != ERT_OK) {
		snprintf(why, why_size, "cannot read input_%u.pb: %.300s", k, err.msg);
		return -1;
	}
	items = calloc(v.n ? v.n : 1, sizeof(*items));
	if (!items) {
		snprintf(why, why_size, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < v.n; i++) {
		items[i].dtype = v.items[i].dtype;
		items[i].rank = (uint32_t)v.items[i].rank;
		memcpy(items[i].dims, v.items[i].dims, sizeof(items[i].dims));
		items[i].data = v.items[i].data;
		items[i].size = v.items[i].nbytes;
	}
	if (ert_session_set_input_items(sess, k, !v.none, v.n, items) != ERT_OK)
		snprintf(why, why_size, "input %u: %s", k, ert_session_error(sess));
	else
		ret = 0;
out:
	free(items);
	ert_onnx_items_free(&v);
	return ret;
}

/* Output @k, a sequence or optional, against its test data file. */
static bool compare_items(const struct conform_opts *o, const ert_tensor *got, const char *set_dir,
			  uint32_t k, char *why, size_t why_size)
{
	struct ert_onnx_items want;
	struct ert_err err = { "" };
	char path[4200];
	bool ok = false;
	int64_t n = ert_tensor_item_count(got);

	snprintf(path, sizeof(path), "%.4096s/output_%u.pb", set_dir, k);
	if (ert_onnx_load_items_file(path, ert_tensor_kind(got), &want, &err) != ERT_OK) {
		snprintf(why, why_size, "cannot read output_%u.pb: %.200s", k, err.msg);
		return false;
	}
	if (!ert_tensor_has_value(got) != want.none) {
		snprintf(why, why_size, "%s, expected %s", want.none ? "a value" : "none",
			 want.none ? "none" : "a value");
		goto out;
	}
	if (n != (int64_t)want.n) {
		snprintf(why, why_size, "%lld tensors, expected %u", (long long)n, want.n);
		goto out;
	}
	for (uint32_t i = 0; i < want.n; i++) {
		char w[300];
		ert_item it;

		if (ert_tensor_get_item(got, i, &it) != ERT_OK ||
		    !compare_output(o, &it, &want.items[i], w, sizeof(w))) {
			snprintf(why, why_size, "tensor %u: %.240s", i, w);
			goto out;
		}
	}
	ok = true;
out:
	ert_onnx_items_free(&want);
	return ok;
}

static enum verdict run_set(const struct conform_opts *o, ert_session *sess, const char *set_dir,
			    struct placement *pl, char *why, size_t why_size, char *skip_op,
			    size_t skip_size)
{
	struct ert_value in[MAX_CASE_INPUTS], out[MAX_CASE_INPUTS];
	uint32_t n_in, n_out;
	enum verdict v = FAIL;
	char lwhy[256] = "";

	n_in = load_tensors(set_dir, "input", in, sess, input_of, lwhy);
	if (n_in == UINT32_MAX) {
		snprintf(why, why_size, "%s", lwhy);
		return FAIL;
	}
	n_out = load_tensors(set_dir, "output", out, sess, output_of, lwhy);
	if (n_out == UINT32_MAX) {
		snprintf(why, why_size, "%s", lwhy);
		n_out = 0;
		goto out;
	}
	if (n_in > ert_session_input_count(sess) || n_out != ert_session_output_count(sess)) {
		snprintf(why, why_size, "test data has %u inputs and %u outputs, model %u and %u",
			 n_in, n_out, ert_session_input_count(sess),
			 ert_session_output_count(sess));
		goto out;
	}
	for (uint32_t k = 0; k < n_in; k++) {
		if (ert_tensor_kind(ert_session_get_input(sess, k)) != ERT_VALUE_TENSOR) {
			if (set_items_input(sess, k, set_dir, why, why_size) != 0)
				goto out;
			continue;
		}
		/* numpy has no bfloat16: ONNX stores such test data as uint16 */
		if (in[k].dtype == ERT_DTYPE_UINT16 &&
		    ert_tensor_dtype(ert_session_get_input(sess, k)) == ERT_DTYPE_BFLOAT16)
			in[k].dtype = ERT_DTYPE_BFLOAT16;
		if (ert_session_resize_input(sess, k, (uint32_t)in[k].rank, in[k].dims) != ERT_OK ||
		    ert_session_set_input(sess, k, in[k].dtype, in[k].data, in[k].nbytes) != ERT_OK) {
			snprintf(why, why_size, "input %u: %s", k, ert_session_error(sess));
			goto out;
		}
	}
	ert_status st = ERT_OK;

	if (o->device)
		st = ert_session_visit_steps(sess, place_step, pl);
	if (st == ERT_OK)
		st = ert_session_run(sess);
	/* ops the device did not take: this case says nothing about the device */
	if (o->device && pl->n_cpu) {
		v = OFFLOAD;
		goto out;
	}
	if (st == ERT_STATUS_UNSUPPORTED) {
		v = SKIP;
		snprintf(skip_op, skip_size, "%s", ert_session_failed_op(sess));
		if (!skip_op[0])
			op_from_message(ert_session_error(sess), skip_op, skip_size);
		goto out;
	}
	if (st != ERT_OK) {
		snprintf(why, why_size, "%s", ert_session_error(sess));
		goto out;
	}
	if (o->device && !pl->n_dev) {
		/* every node was computed while planning, on the host */
		count_op(&pl->cpu, &pl->n_cpu, "(computed while planning)");
		v = OFFLOAD;
		goto out;
	}
	for (uint32_t k = 0; k < n_out; k++) {
		char w[300];

		if (out[k].dtype == ERT_DTYPE_UINT16 &&
		    ert_tensor_dtype(ert_session_get_output(sess, k)) == ERT_DTYPE_BFLOAT16)
			out[k].dtype = ERT_DTYPE_BFLOAT16;

		const ert_tensor *got = ert_session_get_output(sess, k);
		ert_item it;

		if (ert_tensor_kind(got) != ERT_VALUE_TENSOR) {
			if (!compare_items(o, got, set_dir, k, w, sizeof(w))) {
				snprintf(why, why_size, "output %u '%s': %s", k, ert_tensor_name(got), w);
				goto out;
			}
			continue;
		}
		item_of_tensor(got, &it);
		if (!compare_output(o, &it, &out[k], w, sizeof(w))) {
			snprintf(why, why_size, "output %u '%s': %s", k,
				 ert_tensor_name(ert_session_get_output(sess, k)), w);
			goto out;
		}
	}
	v = PASS;
out:
	for (uint32_t k = 0; k < n_in; k++)
		free(in[k].data);
	for (uint32_t k = 0; k < n_out; k++)
		free(out[k].data);
	return v;
}

static enum verdict run_case(const struct conform_opts *o, const char *case_dir,
			     struct placement *pl, char *why, size_t why_size, char *skip_op,
			     size_t skip_size)
{
	char path[4096], err[512];
	ert_model *model = NULL;
	ert_session *sess = NULL;
	ert_config cfg;
	enum verdict v = PASS;
	uint32_t n_sets;
	char **sets;
	ert_status st;

	snprintf(path, sizeof(path), "%s/model.onnx", case_dir);
	st = ert_model_load_file(path, &model, err, sizeof(err));
	if (st == ERT_STATUS_UNSUPPORTED) {
		op_from_message(err, skip_op, skip_size);
		return SKIP;
	}
	if (st != ERT_OK) {
		snprintf(why, why_size, "load: %s", err);
		return FAIL;
	}
	cfg = o->cfg;
	cfg.num_threads = o->threads;
	if (o->device) {
		cfg.before_op = place_before_op;
		cfg.callback_user = pl;
	}
	st = ert_session_create(model, &cfg, &sess);
	if (st == ERT_STATUS_UNSUPPORTED) {
		op_from_message(ert_last_error(), skip_op, skip_size);
		ert_model_unref(model);
		return SKIP;
	}
	if (st != ERT_OK) {
		snprintf(why, why_size, "%s", ert_last_error());
		ert_model_unref(model);
		return FAIL;
	}
	sets = list_dir(case_dir, "test_data_set_", &n_sets);
	if (!n_sets) {
		snprintf(why, why_size, "no test_data_set_* directories");
		v = FAIL;
	}
	for (uint32_t i = 0; i < n_sets && v == PASS; i++) {
		snprintf(path, sizeof(path), "%s/%s", case_dir, sets[i]);
		v = run_set(o, sess, path, pl, why, why_size, skip_op, skip_size);
		if (v == FAIL && n_sets > 1) {
			char tmp[512];

			snprintf(tmp, sizeof(tmp), "%.64s: %.400s", sets[i], why);
			snprintf(why, why_size, "%s", tmp);
		}
	}
	free_list(sets, n_sets);
	ert_session_destroy(sess);
	ert_model_unref(model);
	return v;
}

/* Collect case directories under @dir (itself, or its children). */
static void collect(const char *dir, const char *filter, char ***cases, uint32_t *n, uint32_t *cap)
{
	char path[4096];
	uint32_t count;
	char **names;

	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	if (is_file(path)) {
		if (*n == *cap) {
			char **grown = realloc(*cases, (*cap = *cap ? *cap * 2 : 256) * sizeof(**cases));

			if (!grown)
				return;
			*cases = grown;
		}
		(*cases)[*n] = strdup(dir);
		if ((*cases)[*n])
			(*n)++;
		return;
	}
	names = list_dir(dir, NULL, &count);
	for (uint32_t i = 0; i < count; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (filter && !strstr(names[i], filter) && !is_dir(path))
			continue;
		if (!is_dir(path))
			continue;
		char model[4200];

		snprintf(model, sizeof(model), "%s/model.onnx", path);
		if (is_file(model) && filter && !strstr(names[i], filter))
			continue;
		collect(path, filter, cases, n, cap);
	}
	free_list(names, count);
}

/*
 * One entry per non-empty line of @file ('#' starts a comment): the first
 * word into @names and, when @rest is given, the rest of the line into @rest.
 */
static int load_list(const char *file, const char *what, char ***names, char ***rest,
		     uint32_t *n)
{
	struct ert_err oerr = { "" };
	FILE *f = ert_file_fopen_regular(file, NULL, &oerr);
	char line[512];

	if (!f) {
		cli_error("conform", "%s file: %s", what, oerr.msg);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t"), *e = p + strcspn(p, " \t\r\n#"), *r;
		char *name, *why = NULL;

		if (e == p)
			continue;
		r = e + strspn(e, " \t");
		r[strcspn(r, "\r\n")] = '\0';
		*e = '\0';
		name = strdup(p);
		if (rest)
			why = strdup(*r && *r != '#' ? r : "(no reason given)");
		char **grown = realloc(*names, (*n + 1) * sizeof(*grown));
		char **grown_rest = grown && rest ? realloc(*rest, (*n + 1) * sizeof(*grown)) : NULL;

		if (grown)
			*names = grown;
		if (grown_rest)
			*rest = grown_rest;
		if (!name || !grown || (rest && (!why || !grown_rest))) {
			free(name);
			free(why);
			fclose(f);
			cli_error("conform", "out of memory reading '%s'", file);
			return -1;
		}
		(*names)[*n] = name;
		if (rest)
			(*rest)[*n] = why;
		(*n)++;
	}
	fclose(f);
	return 0;
}

static const char *erratum(const struct tally *t, const char *name)
{
	for (uint32_t i = 0; i < t->n_errata; i++)
		if (strcmp(t->errata[i], name) == 0)
			return t->errata_why[i];
	return NULL;
}

static bool parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

int ert_cmd_conform(int argc, char **argv);

int ert_cmd_conform(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "filter", required_argument, NULL, 'f' },
		{ "threads", required_argument, NULL, 't' },
		{ "rtol", required_argument, NULL, 'r' },
		{ "atol", required_argument, NULL, 'a' },
		{ "gate", required_argument, NULL, 'g' },
		{ "min-rate", required_argument, NULL, 'm' },
		{ "errata", required_argument, NULL, 'e' },
		{ "tolerances", required_argument, NULL, 'T' },
		{ "backend", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct conform_opts o = { .threads = 1, .rtol = 1e-3, .atol = 1e-7, .min_rate = 0 };
	struct tally t = { 0 };
	char dev_name[32] = "";
	char **cases = NULL;
	uint32_t n_cases = 0, cap = 0;
	bool tty = cli_progress_enabled();
	double d;
	int c, ret = 1;

	optind = 1;
	opterr = 0;
	ert_config_init(&o.cfg);
	while ((c = getopt_long(argc, argv, ":f:t:b:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (!cli_parse_backends("conform", optarg, &o.cfg))
				return 1;
			break;
		case 'f':
			o.filter = optarg;
			break;
		case 't':
			if (!parse_double(optarg, 1, ERT_MAX_THREADS, &d) || d != (uint32_t)d) {
				return cli_error("conform", "--threads must be 1..%d, got '%s'",
						 ERT_MAX_THREADS, optarg);
			}
			o.threads = (uint32_t)d;
			break;
		case 'r':
		case 'a':
			if (!parse_double(optarg, 0, 1e9, c == 'r' ? &o.rtol : &o.atol)) {
				return cli_error("conform", "--%s must be a number >= 0, got '%s'",
						 c == 'r' ? "rtol" : "atol", optarg);
			}
			break;
		case 'g':
			o.gate_file = optarg;
			break;
		case 'm':
			if (!parse_double(optarg, 0, 1, &o.min_rate)) {
				return cli_error("conform", "--min-rate must be 0..1, got '%s'", optarg);
			}
			break;
		case 'e':
			o.errata_file = optarg;
			break;
		case 'T':
			o.tol_file = optarg;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_getopt_error("conform", argv, c);
		}
	}
	if (optind >= argc) {
		return cli_error("conform", "no test directory given (see 'edgert conform --help')");
	}
	if (o.gate_file && load_list(o.gate_file, "gate", &t.gate_ops, NULL, &t.n_gate_ops) != 0)
		goto out;
	if (o.errata_file &&
	    load_list(o.errata_file, "errata", &t.errata, &t.errata_why, &t.n_errata) != 0)
		goto out;
	if (o.tol_file &&
	    load_list(o.tol_file, "tolerances", &t.tols, &t.tols_why, &t.n_tols) != 0)
		goto out;
	for (uint32_t i = 0; i < t.n_tols; i++) {
		char *end;
		double a = strtod(t.tols_why[i], &end);

		if (end == t.tols_why[i] || !(a >= 0 && a <= 1)) {
			cli_error("conform", "tolerances file: '%s %s': expected NAME ATOL REASON with "
				  "ATOL in [0, 1]", t.tols[i], t.tols_why[i]);
			goto out;
		}
	}
	o.gating = o.gate_file || o.min_rate > 0;
	/* a device listed without the CPU: its cases are those it runs entirely */
	for (uint32_t b = 0; b < o.cfg.num_backends; b++) {
		if (o.cfg.backends[b] == ERT_BACKEND_CPU) {
			o.device = false;
			break;
		}
		o.device = true;
	}
	for (int i = optind; i < argc; i++) {
		if (!is_dir(argv[i])) {
			cli_error("conform", "'%s' is not a directory", argv[i]);
			goto out;
		}
		collect(argv[i], o.filter, &cases, &n_cases, &cap);
	}
	if (n_cases == 0) {
		/* nothing ran: that is no evidence of conformance */
		cli_error("conform", "no test cases (directories holding model.onnx)%s%s%s under '%s'%s",
			  o.filter ? " matching '" : "", o.filter ? o.filter : "",
			  o.filter ? "'" : "", argv[optind], argc - optind > 1 ? " and the others" : "");
		goto out;
	}
	for (uint32_t i = 0; i < n_cases; i++) {
		char why[700] = "", skip_op[64] = "";
		const char *name = strrchr(cases[i], '/') ? strrchr(cases[i], '/') + 1 : cases[i];
		struct placement pl = { 0 };
		enum verdict v;

		struct conform_opts co = o;
		char mpath[4200];

		if (tty)
			fprintf(stderr, "\r\033[K[%u/%u] %s", i + 1, n_cases, name);
		for (uint32_t k = 0; k < t.n_tols; k++)
			if (strcmp(t.tols[k], name) == 0)
				co.atol = strtod(t.tols_why[k], NULL);
		snprintf(mpath, sizeof(mpath), "%s/model.onnx", cases[i]);
		co.random = has_random_op(mpath);
		v = run_case(&co, cases[i], &pl, why, sizeof(why), skip_op, sizeof(skip_op));
		if (co.random && v == PASS)
			t.random_cases++;
		if (pl.dev_name[0] && !dev_name[0])
			snprintf(dev_name, sizeof(dev_name), "%s", pl.dev_name);
		if (v == OFFLOAD) {
			char ops[256];

			t.offloaded++;
			for (uint32_t k = 0; k < pl.n_cpu; k++)
				count_op(&t.cpu_ops, &t.n_cpu_ops, pl.cpu[k].op);
			placement_cpu_list(&pl, ops, sizeof(ops));
			if (tty)
				fprintf(stderr, "\r\033[K");
			if (o.verbose)
				printf("cpu  %s: %s on the CPU\n", name, ops);
			placement_clear(&pl);
			continue;
		}
		if (v == PASS || v == FAIL)
			for (uint32_t k = 0; k < pl.n_dev; k++)
				count_op(&t.dev_ops, &t.n_dev_ops, pl.dev[k].op);
		placement_clear(&pl);
		bool gated = false;

		if (o.gate_file) {
			char mp[4200];


			snprintf(mp, sizeof(mp), "%s/model.onnx", cases[i]);
			gated = in_gate(&t, mp);
		}
		if (tty && v != PASS)
			fprintf(stderr, "\r\033[K");
		const char *bad_data = erratum(&t, name);

		if (bad_data && v == FAIL) {
			/* Neither passed nor failed: the expected outputs are wrong. */
			t.known_bad++;
			t.skipped++;
			printf("XFAIL %s: %s (known bad reference data: %s)\n", name, why, bad_data);
			fflush(stdout);
			continue;
		}
		if (bad_data && v == PASS) {
			v = FAIL;
			snprintf(why, sizeof(why),
				 "passes, but is listed as having bad reference data (%s): "
				 "remove the erratum", bad_data);
		}
		switch (v) {
		case PASS:
			t.passed++;
			if (o.verbose)
				printf("ok   %s\n", name);
			break;
		case FAIL:
			t.failed++;
			if (!o.gating || gated || bad_data)
				t.gate_failed++;
			printf("FAIL %s: %s%s\n", name, why,
			       o.gate_file && !gated && !bad_data ? " (outside the gate)" : "");
			break;
		case OFFLOAD:
			break;
		case SKIP:
			t.skipped++;
			count_skip(&t, skip_op);
			if (o.gate_file && gated) {
				t.gate_failed++;
				t.gate_unsupported++;
				printf("FAIL %s: unsupported op '%s' (inside the gate)\n", name, skip_op);
			}
			if (o.verbose)
				printf("skip %s: unsupported op '%s'\n", name, skip_op);
			break;
		}
		fflush(stdout);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (t.known_bad)
		printf("skipped (known bad reference data): %u\n", t.known_bad);
	if (t.random_cases)
		printf("passed with random outputs (dtype, shape and support compared): %u\n",
		       t.random_cases);
	if (t.n_skips) {
		printf("skipped (unsupported op):");
		for (uint32_t i = 0; i < t.n_skips; i++)
			printf(" %s x%u%s", t.skips[i].op, t.skips[i].n, i + 1 < t.n_skips ? "," : "");
		printf("\n");
	}
	if (o.device) {
		const char *dev = dev_name[0] ? dev_name : "the device";

		if (t.n_cpu_ops) {
			qsort(t.cpu_ops, t.n_cpu_ops, sizeof(*t.cpu_ops), cmp_count_op);
			printf("not on %s (op types left to the CPU, cases):", dev);
			for (uint32_t i = 0; i < t.n_cpu_ops; i++)
				printf(" %s x%u%s", t.cpu_ops[i].op, t.cpu_ops[i].n,
				       i + 1 < t.n_cpu_ops ? "," : "");
			printf("\n");
		}
		qsort(t.dev_ops, t.n_dev_ops, sizeof(*t.dev_ops), cmp_count_op);
		printf("%s claims %u op types in the cases it ran:", dev, t.n_dev_ops);
		for (uint32_t i = 0; i < t.n_dev_ops; i++)
			printf(" %s%s", t.dev_ops[i].op, i + 1 < t.n_dev_ops ? "," : "");
		printf("\n");
	}
	/* The last line counts what happened; the rules decide the exit status. */
	uint32_t failed = t.failed + t.gate_unsupported, skipped = t.skipped - t.gate_unsupported;

	if (o.gating) {
		double rate = n_cases ? (double)t.passed / n_cases : 0;
		bool rate_ok = rate + 1e-12 >= o.min_rate;

		printf("rules: ");
		if (o.gate_file)
			printf("%u failed inside the gate; ", t.gate_failed);
		printf("%.1f%% of %u cases passed, minimum %.1f%%: %s\n", 100 * rate, n_cases,
		       100 * o.min_rate, !t.gate_failed && rate_ok ? "met" : "NOT met");
		if (!rate_ok)
			printf("FAIL pass rate %.1f%% is below the minimum %.1f%%\n", 100 * rate,
			       100 * o.min_rate);
		ret = t.gate_failed || !rate_ok ? 1 : 0;
	} else {
		ret = t.failed ? 1 : 0;
	}
	if (o.device && !dev_name[0]) {
		/* nothing ran on the device: no evidence either way */
		printf("FAIL no case ran on the backends of --backend (is the device present?)\n");
		ret = 1;
	}
	if (o.device)
		printf("%u passed, %u failed, %u skipped, %u not on %s\n", t.passed, failed, skipped,
		       t.offloaded, dev_name[0] ? dev_name : "the device");
	else
		printf("%u passed, %u failed, %u skipped\n", t.passed, failed, skipped);
out:
	free(t.cpu_ops);
	free(t.dev_ops);
	free_list(cases, n_cases);
	free(t.skips);
	free_list(t.gate_ops, t.n_gate_ops);
	free_list(t.errata, t.n_errata);
	free_list(t.errata_why, t.n_errata);
	free_list(t.tols, t.n_tols);
	free_list(t.tols_why, t.n_tols);
	return ret;
}
