/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Arguments and return values of one call (--args, --retval): the rules
 * as users write them, the values as the probes send them (CABBPF_EV_VALUE
 * events, include/cabbpf_event.h) put back together, and how they are
 * shown. The probes read only what a rule names, for the functions it
 * names; a value the ring had no room for is shown as not read ("?").
 */
#ifndef COMMON_CALLVALS_H
#define COMMON_CALLVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cabbpf_event.h"

struct json;

/* Flags of one value (struct callvals.flags). */
#define CALLVALS_UNREADABLE 1u /* the string could not be read: v is the pointer */
#define CALLVALS_TRUNC 2u      /* the string filled the buffer: maybe longer */
#define CALLVALS_PARTIAL 4u    /* pieces of it were lost (a full ring) */
#define CALLVALS_DONE 8u       /* its last piece came */

/* The values of one call, by item (0..5: --args items in the rule's
 * order; CABBPF_VAL_RET: the return value). */
struct callvals {
	uint8_t have; /* bit i: a piece of item i came */
	uint8_t type[CABBPF_VAL_ITEMS];
	uint8_t reg[CABBPF_VAL_ITEMS];
	uint8_t flags[CABBPF_VAL_ITEMS];
	uint8_t len[CABBPF_VAL_ITEMS];	/* a string's bytes so far */
	uint8_t next[CABBPF_VAL_ITEMS]; /* the next piece expected */
	uint64_t v[CABBPF_VAL_ITEMS];	/* an integer, a length, or the pointer */
	char s[CABBPF_VAL_ITEMS][CABBPF_VAL_STR_MAX];
};

/*
 * Parse a --args rule, "GLOB:ITEM[,ITEM]..." with ITEM argN, str(argN) or
 * strlen(argN) (N from 0 to 5), at most CABBPF_VAL_ARGS_MAX items, into
 * the glob (copied into glob[len]) and sp's nvals, reg[] and type[] (its
 * other fields untouched). Returns 0, -EINVAL (malformed: nothing logged,
 * the caller says which option) or -ENAMETOOLONG. Any thread.
 */
int callvals__parse_args(const char *rule, char *glob, size_t len, struct cabbpf_fnspec *sp);

/*
 * Parse a --retval rule, "GLOB", "GLOB:int" or "GLOB:str", into the glob
 * and *type (CABBPF_VT_INT or CABBPF_VT_STR). Returns 0, -EINVAL (an
 * empty glob) or -ENAMETOOLONG. Any thread.
 */
int callvals__parse_retval(const char *rule, char *glob, size_t len, uint8_t *type);

/* Clear cv: no value. */
void callvals__clear(struct callvals *cv);

/* Add one CABBPF_EV_VALUE piece (its meta, words w1 and w2) to cv. */
void callvals__put(struct callvals *cv, uint32_t meta, uint64_t w1, uint64_t w2);

/* Whether cv holds any argument (items 0..5), or the return value. */
bool callvals__has_args(const struct callvals *cv);
bool callvals__has_ret(const struct callvals *cv);

/* Item i's label into buf[24]: "arg0", "str(arg1)", "strlen(arg2)",
 * "retval"; returns buf. */
const char *callvals__label(const struct callvals *cv, unsigned i, char buf[24]);

/*
 * Item i's value as text into buf[len] (always terminated): a decimal
 * integer (negative as signed), a hexadecimal one from 2^32 up (a
 * pointer), a string quoted with C escapes and "..." when cut, "(unread
 * 0x...)" for a string that could not be read, "?" when pieces were lost.
 * Returns buf.
 */
const char *callvals__format(const struct callvals *cv, unsigned i, char *buf, size_t len);

/* The arguments, ", "-separated, as "label=value" (labels) or values
 * only, into buf[len] (terminated; cut when longer). Returns buf. */
const char *callvals__args_text(const struct callvals *cv, bool labels, char *buf, size_t len);

/*
 * The values as a JSON object {"arg0": 5, "str(arg1)": "abc", "retval":
 * 0, ...}: integers as numbers (signed), strings as strings, an
 * unreadable string as null, a string cut short with "label.truncated":
 * true. Returns 0 or -errno.
 */
int callvals__json(const struct callvals *cv, struct json *w);

/*
 * The values as label-value text pairs, "arg0\0005\0retval\0003\0\0": each
 * label and its text (callvals__format) NUL-terminated, an empty label
 * last. A compact copy to keep (the timeline keeps one per call). Returns
 * a malloc'd block the caller frees, or NULL (no value, no memory).
 */
char *callvals__pairs(const struct callvals *cv);

/* The size of a callvals__pairs block, its last NUL included. */
size_t callvals__pairs_size(const char *pairs);

#endif /* COMMON_CALLVALS_H */
