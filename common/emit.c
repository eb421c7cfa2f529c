// SPDX-License-Identifier: BSD-2-Clause
/* A section's counters written as text and JSON from one description:
 * emit.h. */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "common/emit.h"
#include "common/json.h"

uint64_t emit__value(const struct emit_field *fl, const void *obj)
{
	uint64_t v;

	if (fl->get)
		return fl->get(obj);
	memcpy(&v, (const char *)obj + fl->off, sizeof(v));
	return v;
}

void emit__text(FILE *f, const struct emit_field *fl, size_t n, const void *obj)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fl[i].text)
			fprintf(f, fl[i].text, emit__value(&fl[i], obj));
}

int emit__json(struct json *w, const struct emit_field *fl, size_t n, const void *obj)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n; i++)
		if (fl[i].key)
			err = json__kv_u64(w, fl[i].key, emit__value(&fl[i], obj));
	return err;
}

struct emit_val emit__col_value(const struct emit_col *c, const void *row, const void *ctx)
{
	const char *p = (const char *)row + c->off;
	struct emit_val v = {.u = 0};
	uint32_t u32;
	int i32;

	if (c->get)
		return c->get(row, ctx);
	switch (c->type) {
	case EMIT_U32:
		memcpy(&u32, p, sizeof(u32));
		v.u = u32;
		break;
	case EMIT_INT:
		memcpy(&i32, p, sizeof(i32));
		v.i = i32;
		break;
	case EMIT_STR:
		memcpy(&v.s, p, sizeof(v.s));
		break;
	case EMIT_CHARS:
		v.s = p;
		break;
	case EMIT_PCT:
	case EMIT_DBL:
		memcpy(&v.d, p, sizeof(v.d));
		break;
	default:
		memcpy(&v.u, p, sizeof(v.u));
	}
	return v;
}

void emit__count(FILE *f, int width, uint64_t v, bool lb)
{
	if (lb) {
		width -= (int)strlen(EMIT_LB_MARK);
		fprintf(f, "%*" PRIu64 "%s", width < 0 ? 0 : width, v, EMIT_LB_MARK);
	} else {
		fprintf(f, "%*" PRIu64, width, v);
	}
}

size_t emit__select(struct emit_col *out, const struct emit_col *c, size_t n, unsigned have)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if ((c[i].when & have) == c[i].when)
			out[k++] = c[i];
	return k;
}

/* The text before column c: nothing before the first. */
static const char *sep(const struct emit_col *c, bool first)
{
	return first ? "" : c->flags & EMIT_GAP2 ? "  " : " ";
}

void emit__head_cells(FILE *f, const struct emit_col *c, size_t n, bool first)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i].head && !c[i].fmt) {
			fprintf(f, "%s%*s", sep(&c[i], first), c[i].width, c[i].head);
			first = false;
		}
}

void emit__head(FILE *f, const struct emit_col *c, size_t n)
{
	emit__head_cells(f, c, n, true);
	fputc('\n', f);
}

void emit__row_text(FILE *f, const struct emit_col *c, size_t n, const void *row, bool lb,
		    const void *ctx)
{
	emit__cells(f, c, n, row, lb, ctx, true);
	fputc('\n', f);
}

void emit__cells(FILE *f, const struct emit_col *c, size_t n, const void *row, bool lb,
		 const void *ctx, bool first)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct emit_val v;
		int w = c[i].width;

		if (!c[i].head)
			continue;
		v = emit__col_value(&c[i], row, ctx);
		if (c[i].fmt) {
			if (c[i].type == EMIT_STR || c[i].type == EMIT_CHARS)
				fprintf(f, c[i].fmt, v.s ? v.s : "?");
			else if (c[i].type == EMIT_PCT || c[i].type == EMIT_DBL)
				fprintf(f, c[i].fmt, v.d);
			else
				fprintf(f, c[i].fmt, v.u);
			continue;
		}
		fputs(sep(&c[i], first), f);
		first = false;
		if (v.null || (c[i].flags & EMIT_DASH0 && !v.u)) {
			fprintf(f, "%*s", w, "-");
			continue;
		}
		switch (c[i].type) {
		case EMIT_COUNT:
			emit__count(f, w, v.u, lb);
			break;
		case EMIT_U64:
		case EMIT_U32:
			fprintf(f, "%*" PRIu64, w, v.u);
			break;
		case EMIT_INT:
			fprintf(f, "%*" PRId64, w, v.i);
			break;
		case EMIT_NS_MS:
			fprintf(f, "%*.3f", w, (double)v.u / 1e6);
			break;
		case EMIT_STR:
		case EMIT_CHARS:
			fprintf(f, "%*.*s", w, c[i].prec ? c[i].prec : INT_MAX, v.s ? v.s : "?");
			break;
		case EMIT_PCT:
			fprintf(f, "%*.*f%%", w > 0 ? w - 1 : w, c[i].prec ? c[i].prec : 1, 100 * v.d);
			break;
		case EMIT_DBL:
			fprintf(f, "%*.*f", w, c[i].prec ? c[i].prec : 1, v.d);
			break;
		}
	}
}

int emit__row_json(struct json *w, const struct emit_col *c, size_t n, const void *row,
		   const void *ctx)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n; i++) {
		struct emit_val v;

		if (!c[i].key)
			continue;
		v = emit__col_value(&c[i], row, ctx);
		if (v.null) {
			err = json__kv_null(w, c[i].key);
			continue;
		}
		switch (c[i].type) {
		case EMIT_STR:
		case EMIT_CHARS:
			if (!v.s && c[i].flags & EMIT_NONZERO)
				break;
			err = json__kv_string(w, c[i].key, v.s);
			break;
		case EMIT_PCT:
		case EMIT_DBL:
			if (!v.d && c[i].flags & EMIT_NONZERO)
				break;
			err = json__kv_double(w, c[i].key, v.d);
			break;
		case EMIT_INT:
			if (!v.i && c[i].flags & EMIT_NONZERO)
				break;
			err = json__kv_i64(w, c[i].key, v.i);
			break;
		default:
			if (!v.u && c[i].flags & EMIT_NONZERO)
				break;
			err = json__kv_u64(w, c[i].key, v.u);
		}
	}
	return err;
}
