// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

enum lvl_kind { LVL_ROOT, LVL_OBJECT, LVL_ARRAY };

struct lvl {
	enum lvl_kind kind;
	uint64_t n;	/* members (object) or elements (array) written so far */
	bool after_key; /* object: a key was written, its value is due */
};

struct json {
	FILE *f;
	bool pretty;
	int err;	/* sticky: first error seen */
	unsigned depth; /* index of the current level in lv[] */
	unsigned cap;	/* levels allocated in lv */
	struct lvl *lv; /* grown on demand: a call tree nests as deep as the
			   program recursed */
};

/* Pretty output indents at most this many levels: deeper nesting would
 * make the indentation alone quadratic in the depth. */
#define INDENT_MAX 64

int json__new(FILE *f, bool pretty, struct json **out)
{
	struct json *w;

	*out = NULL;
	if (!f)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cap = 16;
	w->lv = calloc(w->cap, sizeof(*w->lv));
	if (!w->lv) {
		free(w);
		return -ENOMEM;
	}
	w->f = f;
	w->pretty = pretty;
	w->lv[0].kind = LVL_ROOT;
	*out = w;
	return 0;
}

void json__free(struct json *w)
{
	if (w)
		free(w->lv);
	free(w);
}

unsigned json__depth(const struct json *w)
{
	return w->depth;
}

static int fail(struct json *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

static void put(struct json *w, const char *s, size_t n)
{
	if (!w->err && fwrite(s, 1, n, w->f) != n)
		fail(w, -EIO);
}

static void puts_(struct json *w, const char *s)
{
	put(w, s, strlen(s));
}

static void newline(struct json *w, unsigned depth)
{
	unsigned i;

	if (!w->pretty)
		return;
	put(w, "\n", 1);
	for (i = 0; i < depth && i < INDENT_MAX; i++)
		put(w, "  ", 2);
}

/* Everything that precedes a value: a comma and indent in arrays, checks. */
static int before_value(struct json *w)
{
	struct lvl *l = &w->lv[w->depth];

	if (w->err)
		return w->err;
	switch (l->kind) {
	case LVL_ROOT:
		/* One top-level value per writer. */
		if (l->n)
			return fail(w, -EINVAL);
		l->n++;
		break;
	case LVL_OBJECT:
		/* A value inside an object needs its key first. */
		if (!l->after_key)
			return fail(w, -EINVAL);
		l->after_key = false;
		break;
	case LVL_ARRAY:
		if (l->n)
			put(w, ",", 1);
		newline(w, w->depth);
		l->n++;
		break;
	}
	return w->err;
}

static int begin(struct json *w, enum lvl_kind kind, const char *open)
{
	int err = before_value(w);

	if (err)
		return err;
	if (w->depth == JSON_MAX_DEPTH)
		return fail(w, -EINVAL);
	if (w->depth + 1 == w->cap) {
		struct lvl *v = realloc(w->lv, 2 * (size_t)w->cap * sizeof(*v));

		if (!v)
			return fail(w, -ENOMEM);
		w->lv = v;
		w->cap *= 2;
	}
	w->depth++;
	w->lv[w->depth] = (struct lvl){.kind = kind};
	puts_(w, open);
	return w->err;
}

static int end(struct json *w, enum lvl_kind kind, const char *close)
{
	struct lvl *l = &w->lv[w->depth];

	if (w->err)
		return w->err;
	if (l->kind != kind || l->after_key)
		return fail(w, -EINVAL);
	w->depth--;
	if (l->n)
		newline(w, w->depth);
	puts_(w, close);
	return w->err;
}

int json__begin_object(struct json *w)
{
	return begin(w, LVL_OBJECT, "{");
}

int json__end_object(struct json *w)
{
	return end(w, LVL_OBJECT, "}");
}

int json__begin_array(struct json *w)
{
	return begin(w, LVL_ARRAY, "[");
}

int json__end_array(struct json *w)
{
	return end(w, LVL_ARRAY, "]");
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	/* A NUL among the continuation bytes fails the 0x80 test below, so
	 * this never reads past the string's end. */
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static void put_string(struct json *w, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	const unsigned char *run = s; /* start of bytes copied verbatim */
	char esc[8];
	size_t n;

	put(w, "\"", 1);
	while (*s) {
		const char *rep = NULL;

		n = 1;
		switch (*s) {
		case '"':
			rep = "\\\"";
			break;
		case '\\':
			rep = "\\\\";
			break;
		case '\n':
			rep = "\\n";
			break;
		case '\r':
			rep = "\\r";
			break;
		case '\t':
			rep = "\\t";
			break;
		case '\b':
			rep = "\\b";
			break;
		case '\f':
			rep = "\\f";
			break;
		default:
			if (*s < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x", *s);
				rep = esc;
			} else if (*s >= 0x80) {
				n = utf8_len(s);
				if (!n) {
					rep = "\\ufffd";
					n = 1;
				}
			}
		}
		if (rep) {
			put(w, (const char *)run, (size_t)(s - run));
			puts_(w, rep);
			s += n;
			run = s;
		} else {
			s += n;
		}
	}
	put(w, (const char *)run, (size_t)(s - run));
	put(w, "\"", 1);
}

int json__key(struct json *w, const char *k)
{
	struct lvl *l = &w->lv[w->depth];

	if (w->err)
		return w->err;
	if (!k || l->kind != LVL_OBJECT || l->after_key)
		return fail(w, -EINVAL);
	if (l->n)
		put(w, ",", 1);
	newline(w, w->depth);
	l->n++;
	l->after_key = true;
	put_string(w, k);
	puts_(w, w->pretty ? ": " : ":");
	return w->err;
}

int json__key_u64(struct json *w, uint64_t k)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, k);
	return json__key(w, buf);
}

int json__string(struct json *w, const char *s)
{
	int err;

	if (!s)
		return json__null(w);
	err = before_value(w);
	if (err)
		return err;
	put_string(w, s);
	return w->err;
}

static int put_number(struct json *w, const char *txt)
{
	int err = before_value(w);

	if (err)
		return err;
	puts_(w, txt);
	return w->err;
}

int json__u64(struct json *w, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return put_number(w, buf);
}

int json__i64(struct json *w, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return put_number(w, buf);
}

int json__double(struct json *w, double v)
{
	char buf[32];

	if (!isfinite(v))
		return json__null(w);
	/* The shortest of 15 or 17 significant digits that reads back exactly,
	 * so 0.1 stays "0.1" yet no value is rounded. */
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	return put_number(w, buf);
}

int json__bool(struct json *w, bool v)
{
	return put_number(w, v ? "true" : "false");
}

int json__null(struct json *w)
{
	return put_number(w, "null");
}

int json__finish(struct json *w)
{
	if (w->err)
		return w->err;
	if (w->depth != 0 || w->lv[0].n != 1)
		return fail(w, -EINVAL);
	put(w, "\n", 1);
	if (!w->err && fflush(w->f))
		fail(w, -EIO);
	if (!w->err && ferror(w->f))
		fail(w, -EIO);
	return w->err;
}

int json__kv_u64(struct json *w, const char *k, uint64_t v)
{
	json__key(w, k);
	return json__u64(w, v);
}

int json__kv_i64(struct json *w, const char *k, int64_t v)
{
	json__key(w, k);
	return json__i64(w, v);
}

int json__kv_null(struct json *w, const char *k)
{
	json__key(w, k);
	return json__null(w);
}

int json__kv_double(struct json *w, const char *k, double v)
{
	json__key(w, k);
	return json__double(w, v);
}

int json__kv_string(struct json *w, const char *k, const char *s)
{
	json__key(w, k);
	return json__string(w, s);
}

int json__kv_bool(struct json *w, const char *k, bool v)
{
	json__key(w, k);
	return json__bool(w, v);
}
