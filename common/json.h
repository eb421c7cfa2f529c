/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A tiny streaming JSON writer. The writer tracks nesting and puts the
 * commas, colons and (optionally) newlines and indentation itself, so callers
 * only say what comes next:
 *
 *	json__begin_object(w);
 *	json__kv_u64(w, "events", n);
 *	json__key(w, "functions"); json__begin_array(w); ... json__end_array(w);
 *	json__end_object(w);
 *	err = json__finish(w);
 *
 * Strings are escaped as RFC 8259 requires; bytes that are not valid UTF-8
 * become U+FFFD so the output is always valid JSON. Doubles that are NaN or
 * infinite are written as null (JSON has no such numbers).
 *
 * Errors are sticky: after a misuse (a value where a key is due, unbalanced
 * end, nesting deeper than JSON_MAX_DEPTH) or a write error, every later call
 * returns the same error and writes nothing, so callers may check only the
 * return of json__finish().
 *
 * Threads: a writer has no lock; one thread at a time may use it.
 */
#ifndef ANALYZERS_JSON_H
#define ANALYZERS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Nesting limit: a calling-context tree nests two levels per call level
 * (object, children array), as deep as the program recursed. */
#define JSON_MAX_DEPTH (1 << 20)

struct json;

/*
 * Start a writer on f (not owned: the caller closes it after json__free()).
 * pretty: newline and two-space indent per level; else compact.
 * Returns 0 and sets *out (caller frees with json__free), or -EINVAL/-ENOMEM.
 */
int json__new(FILE *f, bool pretty, struct json **out);
/* Free the writer (does not close the FILE). NULL is fine. */
void json__free(struct json *w);

/* Each returns 0, or the writer's sticky error: -EINVAL (misuse), -EIO,
 * -ENOMEM (nesting could not grow). */
int json__begin_object(struct json *w);
int json__end_object(struct json *w);
int json__begin_array(struct json *w);
int json__end_array(struct json *w);
/* A key inside an object; the next call must write its value. */
int json__key(struct json *w, const char *k);
/* A key spelled as a decimal number, e.g. a thread id: {"4242": ...}. */
int json__key_u64(struct json *w, uint64_t k);
int json__string(struct json *w, const char *s); /* NULL writes null */
int json__u64(struct json *w, uint64_t v);
int json__i64(struct json *w, int64_t v);
int json__double(struct json *w, double v);
int json__bool(struct json *w, bool v);
int json__null(struct json *w);
/* A key and its value in one call: the counters objects of the reports
 * are long lists of these. Same returns as the calls they stand for. */
int json__kv_u64(struct json *w, const char *k, uint64_t v);
int json__kv_i64(struct json *w, const char *k, int64_t v);
int json__kv_double(struct json *w, const char *k, double v);
int json__kv_string(struct json *w, const char *k, const char *s);
int json__kv_bool(struct json *w, const char *k, bool v);
int json__kv_null(struct json *w, const char *k);

/*
 * Check that every object and array was closed, end the output with a
 * newline and flush. Returns 0, -EINVAL (unbalanced or misuse earlier) or
 * -EIO (a write failed).
 */
int json__finish(struct json *w);

/* Current nesting depth (0 at top level): lets a caller assert balance. */
unsigned json__depth(const struct json *w);

#endif /* ANALYZERS_JSON_H */
