/* SPDX-License-Identifier: MIT */
/*
 * RegexFullMatch on the C library's POSIX regex (regcomp/regexec, glibc's
 * extended syntax), with ONNX's RE2 pattern translated first. A full match
 * is a property of the language a pattern describes, so POSIX's
 * leftmost-longest and RE2's leftmost-first semantics agree on it, and lazy
 * quantifiers (x*?) may be read as greedy ones. What the translation takes
 * (docs/strings.md): POSIX ERE; the escapes \d \D \w \W \s \S (ASCII, as in
 * RE2) outside brackets, \d \w \s inside them; \b \B; escaped punctuation;
 * \t \n \r \f \v; (?: ...). What it refuses, at prepare, with the pattern in
 * the message: (?flags) and named groups, \p{...}, \A \z \Q...\E, \x.., \pN
 * and back-references (which RE2 has not either), \D \W \S inside brackets.
 * Matching runs in the C.UTF-8 locale when the system has it, so that "."
 * and bracket expressions take a UTF-8 character, as RE2 does.
 */
#include <locale.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops/strings.h"

#define WORD "0-9A-Za-z_"
#define SPACE "\t\n\f\r "
#define DIGIT "0-9"

struct rx_out {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct rx_out *o, const char *s, size_t n)
{
	if (o->oom)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = (o->len + n + 1) * 2;
		char *b = realloc(o->buf, cap);

		if (!b) {
			o->oom = true;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void puts_(struct rx_out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* A bracket expression from @p (after '['); its end in *@end. NULL: the reason it is refused. */
static const char *bracket(struct rx_out *o, const char *p, const char **end)
{
	struct rx_out body = { 0 };
	bool dash = false, close = false, neg = false;

	if (*p == '^') {
		neg = true;
		p++;
	}
	if (*p == ']') { /* a leading ']' is literal in both syntaxes */
		close = true;
		p++;
	}
	while (*p && *p != ']') {
		if (p[0] == '[' && p[1] == ':') { /* [:alpha:] and friends, as POSIX has them */
			const char *q = strstr(p + 2, ":]");

			if (!q)
				return "an unterminated [: class";
			put(&body, p, (size_t)(q + 2 - p));
			p = q + 2;
			continue;
		}
		if (*p != '\\') {
			if (*p == '-' && (p[1] == ']' || body.len == 0))
				dash = true;
			else
				put(&body, p, 1);
			p++;
			continue;
		}
		p++;
		switch (*p) {
		case 'd': puts_(&body, DIGIT); break;
		case 'w': puts_(&body, WORD); break;
		case 's': puts_(&body, SPACE); break;
		case 't': puts_(&body, "\t"); break;
		case 'n': puts_(&body, "\n"); break;
		case 'r': puts_(&body, "\r"); break;
		case 'f': puts_(&body, "\f"); break;
		case 'v': puts_(&body, "\v"); break;
		case '-': dash = true; break;
		case ']': close = true; break;
		case '\0': free(body.buf); return "a trailing backslash";
		default:
			if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9')) {
				free(body.buf);
				return "an escape inside brackets other than \\d \\w \\s \\t \\n \\r \\f \\v";
			}
			/* escaped punctuation: literal (a leading '^' is moved last below) */
			put(&body, p, 1);
			break;
		}
		p++;
	}
	if (*p != ']') {
		free(body.buf);
		return "an unterminated bracket expression";
	}
	*end = p + 1;
	/* POSIX: ']' first, '-' last, '^' anywhere but first */
	puts_(o, neg ? "[^" : "[");
	if (close)
		puts_(o, "]");
	if (body.len && body.buf[0] == '^' && !close) {
		put(o, body.buf + 1, body.len - 1);
		puts_(o, "^");
	} else if (body.len) {
		put(o, body.buf, body.len);
	}
	if (dash)
		puts_(o, "-");
	if (!close && !body.len && !dash)
		puts_(o, "]"); /* "[]" is no class in either syntax: let regcomp say so */
	puts_(o, "]");
	o->oom |= body.oom;
	free(body.buf);
	return NULL;
}

/*
 * @re (RE2) as a POSIX extended pattern anchored at both ends, in *@out
 * (malloc'd). NULL, or why the pattern is refused.
 */
static const char *translate(const char *re, char **out)
{
	struct rx_out o = { 0 };
	const char *p = re, *why = NULL;

	puts_(&o, "^(");
	while (*p && !why) {
		switch (*p) {
		case '[':
			why = bracket(&o, p + 1, &p);
			continue;
		case '(':
			if (p[1] == '?') {
				if (p[2] != ':') {
					why = "(? flags, named groups and lookarounds";
					continue;
				}
				p += 2;
			}
			puts_(&o, "(");
			break;
		case '*': case '+': case '?': case '}':
			put(&o, p, 1);
			if (p[1] == '?') /* lazy: the same full matches */
				p++;
			break;
		case '\\':
			p++;
			switch (*p) {
			case 'd': puts_(&o, "[" DIGIT "]"); break;
			case 'D': puts_(&o, "[^" DIGIT "]"); break;
			case 'w': puts_(&o, "[" WORD "]"); break;
			case 'W': puts_(&o, "[^" WORD "]"); break;
			case 's': puts_(&o, "[" SPACE "]"); break;
			case 'S': puts_(&o, "[^" SPACE "]"); break;
			case 'b': puts_(&o, "\\b"); break;
			case 'B': puts_(&o, "\\B"); break;
			case 't': puts_(&o, "\t"); break;
			case 'n': puts_(&o, "\n"); break;
			case 'r': puts_(&o, "\r"); break;
			case 'f': puts_(&o, "\f"); break;
			case 'v': puts_(&o, "\v"); break;
			case '\0': why = "a trailing backslash"; continue;
			default:
				if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				    (*p >= '0' && *p <= '9')) {
					why = "an escape POSIX cannot express (\\p, \\A, \\z, \\Q, \\x, \\1, ...)";
					continue;
				}
				put(&o, p - 1, 2); /* escaped punctuation */
				break;
			}
			break;
		default:
			put(&o, p, 1);
			break;
		}
		p++;
	}
	puts_(&o, ")$");
	if (why || o.oom) {
		free(o.buf);
		return why ? why : "out of memory";
	}
	*out = o.buf;
	return NULL;
}

static locale_t rx_locale(void)
{
	static locale_t loc;
	static bool tried;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	locale_t l;

	/* made once; never freed, like the C library's own locales */
	pthread_mutex_lock(&lock);
	if (!tried) {
		loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
		tried = true;
	}
	l = loc;
	pthread_mutex_unlock(&lock);
	return l;
}

ert_status ert_cpu_regex_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_attr *a = ert_node_attr(x->node, "pattern");
	locale_t loc = rx_locale(), old = (locale_t)0;
	regex_t *rx;
	char *posix = NULL;
	const char *why;
	int rc;

	if (!a || a->type != ERT_ATTR_STRING || strlen(a->s) != a->len)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL,
				     "pattern must be a string without NUL bytes");
	if ((why = translate(a->s, &posix))) {
		return ert_node_fail(x->node, err,
				     strcmp(why, "out of memory") == 0 ? ERT_STATUS_OUT_OF_MEMORY
								       : ERT_STATUS_UNSUPPORTED,
				     "pattern '%.200s' uses %s (edgert matches with POSIX regex: "
				     "docs/strings.md)", a->s, why);
	}
	rx = malloc(sizeof(*rx));
	if (!rx) {
		free(posix);
		return ert_node_fail(x->node, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	}
	if (loc)
		old = uselocale(loc);
	rc = regcomp(rx, posix, REG_EXTENDED | REG_NOSUB);
	if (loc)
		uselocale(old);
	if (rc) {
		char msg[128];

		regerror(rc, rx, msg, sizeof(msg));
		free(rx);
		free(posix);
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL, "pattern '%.200s': %s",
				     a->s, msg);
	}
	free(posix);
	x->state = rx;
	return ERT_OK;
}

ert_status ert_cpu_regex_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	const ert_string *s = in->data;
	uint8_t *y = x->out[0]->data;
	locale_t loc = rx_locale(), old = (locale_t)0;
	regmatch_t m = { 0 };

	if (loc)
		old = uselocale(loc);
	for (int64_t i = 0; i < in->numel; i++) {
		/* REG_STARTEND: the string's bytes as they are, NULs included, no copy */
		m.rm_so = 0;
		m.rm_eo = (regoff_t)s[i].len;
		y[i] = regexec(x->state, s[i].len ? s[i].data : "", 1, &m, REG_STARTEND) == 0;
	}
	if (loc)
		uselocale(old);
	return ERT_OK;
}

void ert_cpu_regex_release(struct ert_exec *x)
{
	if (x->state)
		regfree(x->state);
	free(x->state);
	x->state = NULL;
}
