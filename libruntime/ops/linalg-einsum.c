/* SPDX-License-Identifier: MIT */
/* Einsum equation parsing: labels, ellipsis, implicit output, size checks. */
#include <string.h>

#include "ops/linalg-einsum.h"

#define ELL_BASE 52

static int letter_id(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return 26 + (c - 'A');
	return -1;
}

/*
 * Parse one term (operand or output) from @s up to @end into @lab. @ell_rank:
 * number of axes '...' stands for (-1 if not yet known: output term).
 */
static ert_status parse_term(const char *s, const char *end, int32_t ell_rank, uint8_t *lab,
			     int32_t *rank_out, bool *has_ell, struct ert_err *err,
			     const char *who)
{
	int32_t r = 0;

	*has_ell = false;
	while (s < end) {
		if (*s == ' ') {
			s++;
			continue;
		}
		if (*s == '.') {
			if (end - s < 3 || s[1] != '.' || s[2] != '.' || *has_ell) {
				ert_err_set(err, "Einsum '%s': bad ellipsis in the equation", who);
				return ERT_STATUS_INVALID_MODEL;
			}
			*has_ell = true;
			for (int32_t j = ell_rank - 1; j >= 0; j--) {
				if (r >= ERT_MAX_RANK)
					goto too_many;
				lab[r++] = (uint8_t)(ELL_BASE + j);
			}
			s += 3;
			continue;
		}
		int id = letter_id(*s);

		if (id < 0) {
			ert_err_set(err, "Einsum '%s': bad character '%c' in the equation", who, *s);
			return ERT_STATUS_INVALID_MODEL;
		}
		if (r >= ERT_MAX_RANK)
			goto too_many;
		lab[r++] = (uint8_t)id;
		s++;
	}
	*rank_out = r;
	return ERT_OK;
too_many:
	ert_err_set(err, "Einsum '%s': a term has more than %d axes", who, ERT_MAX_RANK);
	return ERT_STATUS_UNSUPPORTED;
}

static int32_t count_letters(const char *s, const char *end)
{
	int32_t c = 0;

	for (; s < end; s++)
		if (letter_id(*s) >= 0)
			c++;
	return c;
}

ert_status ert_einsum_parse(struct ert_einsum *e, const char *eq, uint32_t n,
			    const struct ert_value *const *ops, struct ert_err *err,
			    const char *who)
{
	const char *arrow = strstr(eq, "->");
	const char *lhs_end = arrow ? arrow : eq + strlen(eq);
	const char *s = eq;
	int32_t max_ell = 0;
	int count[ERT_EINSUM_MAX_LABELS] = { 0 };
	ert_status st;

	memset(e, 0, sizeof(*e));
	if (n < 1 || n > ERT_EINSUM_MAX_OPS) {
		ert_err_set(err, "Einsum '%s': %u operands; 1 to %d are supported", who, n,
			    ERT_EINSUM_MAX_OPS);
		return ERT_STATUS_UNSUPPORTED;
	}
	for (int i = 0; i < ERT_EINSUM_MAX_LABELS; i++)
		e->size[i] = -1;
	e->n_ops = n;
	for (uint32_t k = 0; k < n; k++) {
		const char *t_end = memchr(s, ',', (size_t)(lhs_end - s));
		bool has_ell;

		if (!t_end)
			t_end = lhs_end;
		if (k + 1 < n && t_end == lhs_end) {
			ert_err_set(err, "Einsum '%s': equation has fewer terms than the %u inputs",
				    who, n);
			return ERT_STATUS_INVALID_MODEL;
		}
		int32_t letters = count_letters(s, t_end);
		int32_t ell = ops[k]->rank - letters;

		st = parse_term(s, t_end, ell < 0 ? 0 : ell, e->label[k], &e->rank[k], &has_ell,
				err, who);
		if (st != ERT_OK)
			return st;
		if (e->rank[k] != ops[k]->rank || (!has_ell && ell != 0)) {
			ert_err_set(err, "Einsum '%s': term %u has %d axes but input %u has rank %d",
				    who, k, (int)letters, k, (int)ops[k]->rank);
			return ERT_STATUS_SHAPE;
		}
		if (has_ell && ell > max_ell)
			max_ell = ell;
		for (int32_t a = 0; a < e->rank[k]; a++) {
			int l = e->label[k][a];
			int64_t d = ops[k]->dims[a];

			if (e->size[l] < 0 || e->size[l] == 1) {
				e->size[l] = d;
			} else if (d != e->size[l] && d != 1) {
				ert_err_set(err, "Einsum '%s': label sizes %lld and %lld do not match",
					    who, (long long)e->size[l], (long long)d);
				return ERT_STATUS_SHAPE;
			}
			count[l]++;
		}
		s = t_end + 1;
	}
	if (s <= lhs_end && s != lhs_end + 1) {
		ert_err_set(err, "Einsum '%s': equation has more terms than the %u inputs", who, n);
		return ERT_STATUS_INVALID_MODEL;
	}
	if (arrow) {
		bool has_ell;

		st = parse_term(arrow + 2, arrow + strlen(arrow), max_ell, e->out_label,
				&e->out_rank, &has_ell, err, who);
		if (st != ERT_OK)
			return st;
		for (int32_t a = 0; a < e->out_rank; a++) {
			int l = e->out_label[a];

			if (e->in_out[l] || (l < ELL_BASE && !count[l])) {
				ert_err_set(err, "Einsum '%s': output label '%c' repeated or unknown",
					    who, l < 26 ? 'a' + l : 'A' + l - 26);
				return ERT_STATUS_INVALID_MODEL;
			}
			e->in_out[l] = true;
		}
	} else {
		int32_t r = 0;

		for (int32_t j = max_ell - 1; j >= 0; j--)
			e->out_label[r++] = (uint8_t)(ELL_BASE + j);
		for (int l = 0; l < ELL_BASE; l++)
			if (count[l] == 1) {
				if (r >= ERT_MAX_RANK) {
					ert_err_set(err, "Einsum '%s': output rank too large", who);
					return ERT_STATUS_UNSUPPORTED;
				}
				e->out_label[r++] = (uint8_t)l;
			}
		e->out_rank = r;
		for (int32_t a = 0; a < r; a++)
			e->in_out[e->out_label[a]] = true;
	}
	return ERT_OK;
}
