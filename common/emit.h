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

#endif /* COMMON_EMIT_H */
