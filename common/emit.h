/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A report section's counters described once, written as text and as
 * JSON from that one description: a new counter is one more row, in both
 * outputs (docs/architecture.md, "A new report field").
 *
 *	static const struct emit_field returns_fields[] = {
 *		{"matched", "returns: %" PRIu64 " matched", EMIT_AT(struct st, matched)},
 *		{"missing", ", %" PRIu64 " missing", EMIT_AT(struct st, missing)},
 *		{"unarmed", NULL, EMIT_AT(struct st, noret)},	(JSON only)
 *	};
 *	emit__text(f, returns_fields, EMIT_N(returns_fields), &st);
 *	emit__json(w, returns_fields, EMIT_N(returns_fields), &st);
 *
 * Threads: none of its own; the caller's FILE and json writer.
 */
#ifndef COMMON_EMIT_H
#define COMMON_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json;

/* One counter of a section: a uint64_t at off in the object described,
 * or what get returns for it (a counter summed from two fields). */
struct emit_field {
	const char *key;  /* its JSON key; NULL: text only */
	/* its text: a printf format of exactly one PRIu64 conversion, with
	 * the separator or heading that comes before it; NULL: JSON only */
	const char *text;
	size_t off;
	uint64_t (*get)(const void *obj); /* instead of off, unless NULL */
};

#define EMIT_AT(type, member) offsetof(type, member), NULL
#define EMIT_GET(fn) 0, (fn)
#define EMIT_N(a) (sizeof(a) / sizeof((a)[0]))

/* The value of field fl of obj. */
uint64_t emit__value(const struct emit_field *fl, const void *obj);

/* The text fragments of the n fields of obj, in order, on f (the caller
 * ends the line). Fields without text are skipped. */
void emit__text(FILE *f, const struct emit_field *fl, size_t n, const void *obj);

/* The keys and values of the n fields of obj into w's open object, in
 * order. Fields without a key are skipped. Returns 0 or the writer's
 * sticky error (common/json.h). */
int emit__json(struct json *w, const struct emit_field *fl, size_t n, const void *obj);

/*
 * A table: rows of one struct, its columns described once. The text is a
 * heading line and one line a row, each column right-aligned in its width
 * (left-aligned: a negative width), one space between columns (two before
 * one flagged EMIT_GAP2); the JSON is one object a row, a key a column,
 * in the table's order. A column of the text only has no key, one of the
 * JSON only no heading.
 *
 *	static const struct emit_col io_cols[] = {
 *		{"in_bytes", "IN_BYTES", 12, EMIT_COUNT, EMIT_COL(struct row, in)},
 *		{"fid", NULL, 0, EMIT_U32, EMIT_COL(struct row, fid)},
 *		{"name", "FUNCTION", 0, EMIT_STR, EMIT_COL(struct row, name), .flags = EMIT_GAP2},
 *	};
 *	emit__head(f, io_cols, EMIT_N(io_cols));
 *	emit__row_text(f, io_cols, EMIT_N(io_cols), &row, lb, NULL);
 *	emit__row_json(w, io_cols, EMIT_N(io_cols), &row, NULL);
 */
enum emit_type {
	EMIT_U64,   /* uint64_t */
	EMIT_COUNT, /* uint64_t; marked + in the text when the table's counts are lower bounds */
	EMIT_U32,   /* uint32_t */
	EMIT_INT,   /* int */
	EMIT_NS_MS, /* uint64_t nanoseconds: milliseconds (%.3f) in the text, ns in JSON */
	EMIT_STR,   /* const char *: '?' in the text and null in JSON when NULL */
	EMIT_CHARS, /* a char array (NUL-ended within it) */
	EMIT_PCT,   /* double, a ratio: a percentage in the text (%.1f%%), the ratio in JSON */
	EMIT_DBL,   /* double */
};

/* What a column's get returns, by its type; null: no value (JSON null,
 * '-' in the text). */
struct emit_val {
	union {
		uint64_t u;
		int64_t i;
		double d;
		const char *s;
	};
	bool null;
};

/* The mark of a count that is a lower bound: 1234+ */
#define EMIT_LB_MARK "+"

#define EMIT_GAP2 0x1u	  /* two spaces before it in the text */
#define EMIT_NONZERO 0x2u /* in JSON only when not 0 (or NULL) */
#define EMIT_DASH0 0x4u	  /* '-' in the text for 0 (nothing measured) */

struct emit_col {
	const char *key;  /* its JSON key; NULL: text only */
	const char *head; /* its text heading; NULL: JSON only */
	int width;	  /* text width; negative: left-aligned */
	enum emit_type type;
	size_t off;	/* the row's field */
	struct emit_val (*get)(const void *row, const void *ctx); /* instead of off, unless NULL */
	unsigned flags; /* EMIT_GAP2, EMIT_NONZERO, EMIT_DASH0 */
	/* strings: at most this many characters in the text (0: all);
	 * EMIT_PCT, EMIT_DBL: decimals (0: 1) */
	int prec;
	/* the text: a printf format of one conversion of the value's type,
	 * printed as it is, right after the column before (no separator, no
	 * width, no heading); NULL: by type, in width */
	const char *fmt;
	/* the conditions it needs, bits of the table's own (emit__select);
	 * 0: always there */
	unsigned when;
};

/* Where a column's value is (designated: .flags and .prec may follow). */
#define EMIT_COL(type, member) .off = offsetof(type, member)
#define EMIT_FN(fn) .get = (fn)

/* v right-aligned in width columns, EMIT_LB_MARK inside the width when
 * lb (a lower bound): an EMIT_COUNT cell, for a column of the caller's. */
void emit__count(FILE *f, int width, uint64_t v, bool lb);

/* Copies to out the columns of c[0..n) whose conditions (.when) are all
 * in have, in order; returns how many (at most n). */
size_t emit__select(struct emit_col *out, const struct emit_col *c, size_t n, unsigned have);

/* The value of column c in row (ctx: what get takes). */
struct emit_val emit__col_value(const struct emit_col *c, const void *row, const void *ctx);

/* The text headings of the n columns, on f, ended with a newline. */
void emit__head(FILE *f, const struct emit_col *c, size_t n);

/* Row's text columns on f, ended with a newline; lb: EMIT_COUNT columns are
 * lower bounds. */
void emit__row_text(FILE *f, const struct emit_col *c, size_t n, const void *row, bool lb,
		    const void *ctx);

/* The same, without the newline, for a line that has more (columns the
 * table does not know, such as one per thread): first says whether these
 * are the line's first cells (no separator before them). */
void emit__head_cells(FILE *f, const struct emit_col *c, size_t n, bool first);
void emit__cells(FILE *f, const struct emit_col *c, size_t n, const void *row, bool lb,
		 const void *ctx, bool first);

/* Row's JSON columns as keys and values into w's open object (the caller
 * begins and ends it). Returns 0 or the writer's sticky error. */
int emit__row_json(struct json *w, const struct emit_col *c, size_t n, const void *row,
		   const void *ctx);

#endif /* COMMON_EMIT_H */
