// SPDX-License-Identifier: BSD-2-Clause
/* Arguments and return values of a call: rules, pieces, text and JSON
 * (callvals.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/callvals.h"
#include "common/json.h"

/* One ITEM of a --args rule, [p, end): its type and register. */
static int parse_item(const char *p, const char *end, uint8_t *type, uint8_t *reg)
{
	size_t n = (size_t)(end - p), pre = 0;

	*type = CABBPF_VT_INT;
	if (n > 5 && !strncmp(p, "int(", 4)) {
		*type = CABBPF_VT_INT32;
		pre = 4;
	} else if (n > 8 && !strncmp(p, "strlen(", 7)) {
		*type = CABBPF_VT_STRLEN;
		pre = 7;
	} else if (n > 5 && !strncmp(p, "str(", 4)) {
		*type = CABBPF_VT_STR;
		pre = 4;
	}
	if (pre && end[-1] != ')')
		return -EINVAL;
	if (pre)
		end--;
	p += pre;
	if (end - p != 4 || strncmp(p, "arg", 3) || p[3] < '0' || p[3] > '5')
		return -EINVAL;
	*reg = (uint8_t)(p[3] - '0');
	return 0;
}

/* Copy rule[0, n) into glob[len]. */
static int copy_glob(const char *rule, size_t n, char *glob, size_t len)
{
	if (!n)
		return -EINVAL;
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(glob, rule, n);
	glob[n] = 0;
	return 0;
}

int callvals__parse_args(const char *rule, char *glob, size_t len, struct cabbpf_fnspec *sp)
{
	const char *colon = strrchr(rule, ':'), *p, *e;
	uint8_t n = 0;
	int err;

	if (!colon || !colon[1])
		return -EINVAL;
	for (p = colon + 1; *p; p = *e ? e + 1 : e) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		if (n == CABBPF_VAL_ARGS_MAX)
			return -EINVAL;
		err = parse_item(p, e, &sp->type[n], &sp->reg[n]);
		if (err)
			return err;
		n++;
		if (*e && !e[1])
			return -EINVAL; /* a trailing comma */
	}
	err = copy_glob(rule, (size_t)(colon - rule), glob, len);
	if (err)
		return err;
	sp->nvals = n;
	return 0;
}

int callvals__parse_retval(const char *rule, char *glob, size_t len, uint8_t *type)
{
	const char *colon = strrchr(rule, ':');
	size_t n = strlen(rule);

	*type = CABBPF_VT_INT;
	if (colon && (!strcmp(colon + 1, "str") || !strcmp(colon + 1, "int"))) {
		*type = colon[1] == 's' ? CABBPF_VT_STR : CABBPF_VT_INT32;
		n = (size_t)(colon - rule);
	}
	return copy_glob(rule, n, glob, len);
}

void callvals__clear(struct callvals *cv)
{
	cv->have = 0;
}

void callvals__put(struct callvals *cv, uint32_t meta, uint64_t w1, uint64_t w2)
{
	unsigned i = CABBPF_VAL_ITEM(meta), part = CABBPF_VAL_PART(meta);
	unsigned n = CABBPF_VAL_LEN(meta);

	if (i >= CABBPF_VAL_ITEMS)
		return;
	if (!(cv->have & 1u << i) || !part) { /* a new value (a first piece) */
		cv->have |= (uint8_t)(1u << i);
		cv->type[i] = (uint8_t)CABBPF_VAL_TYPE(meta);
		if (cv->type[i] == CABBPF_VT_INT && (meta & CABBPF_VAL_I32))
			cv->type[i] = CABBPF_VT_INT32;
		cv->reg[i] = (uint8_t)CABBPF_VAL_REG(meta);
		cv->flags[i] = part ? CALLVALS_PARTIAL : 0;
		cv->len[i] = 0;
		cv->next[i] = 0;
		cv->v[i] = 0;
	}
	if (meta & CABBPF_VAL_UNREADABLE)
		cv->flags[i] |= CALLVALS_UNREADABLE;
	if (meta & CABBPF_VAL_TRUNC)
		cv->flags[i] |= CALLVALS_TRUNC;
	if (meta & CABBPF_VAL_LAST)
		cv->flags[i] |= CALLVALS_DONE;
	if (cv->type[i] != CABBPF_VT_STR || (cv->flags[i] & CALLVALS_UNREADABLE)) {
		cv->v[i] = w2;
		return;
	}
	if (part != cv->next[i])
		cv->flags[i] |= CALLVALS_PARTIAL; /* a piece before it was lost */
	cv->next[i] = (uint8_t)(part + 1);
	if (n > 16)
		n = 16;
	memcpy(cv->s[i] + part * 16, &w1, 8);
	memcpy(cv->s[i] + part * 16 + 8, &w2, 8);
	if (part * 16 + n > cv->len[i])
		cv->len[i] = (uint8_t)(part * 16 + n);
}

bool callvals__has_args(const struct callvals *cv)
{
	return cv && (cv->have & ((1u << CABBPF_VAL_ARGS_MAX) - 1));
}

bool callvals__has_ret(const struct callvals *cv)
{
	return cv && (cv->have & 1u << CABBPF_VAL_RET);
}

const char *callvals__label(const struct callvals *cv, unsigned i, char buf[24])
{
	static const char *const fmt[] = {"arg%u", "arg%u", "str(arg%u)", "strlen(arg%u)",
					  "int(arg%u)"};

	if (i == CABBPF_VAL_RET)
		snprintf(buf, 24, "retval");
	else
		snprintf(buf, 24, fmt[cv->type[i] <= CABBPF_VT_INT32 ? cv->type[i] : 0],
			 cv->reg[i]);
	return buf;
}

/* Whether item i arrived whole. */
static bool complete(const struct callvals *cv, unsigned i)
{
	return (cv->have & 1u << i) && (cv->flags[i] & CALLVALS_DONE) &&
	       !(cv->flags[i] & CALLVALS_PARTIAL);
}

/* An integer as text: decimal, negative as signed, from 2^32 up hex. */
static void format_int(uint64_t v, char *buf, size_t len)
{
	int64_t s = (int64_t)v;

	if (s < 0 && s >= INT32_MIN)
		snprintf(buf, len, "%" PRId64, s);
	else if (v < (uint64_t)1 << 32)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%#" PRIx64, v);
}

/* A string quoted with C escapes into buf[len]. */
static void format_str(const char *s, size_t n, bool cut, char *buf, size_t len)
{
	size_t o = 0, i;

	if (len < 8) {
		snprintf(buf, len, "\"\"");
		return;
	}
	buf[o++] = '"';
	for (i = 0; i < n && o + 8 < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else if (c == '\t') {
			buf[o++] = '\\';
			buf[o++] = 't';
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o++] = '"';
	if ((cut || i < n) && o + 4 <= len) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = 0;
}

const char *callvals__format(const struct callvals *cv, unsigned i, char *buf, size_t len)
{
	if (!len)
		return buf;
	if (i >= CABBPF_VAL_ITEMS || !complete(cv, i)) {
		snprintf(buf, len, "?");
		return buf;
	}
	if (cv->flags[i] & CALLVALS_UNREADABLE)
		snprintf(buf, len, "(unread %#" PRIx64 ")", cv->v[i]);
	else if (cv->type[i] == CABBPF_VT_STR)
		format_str(cv->s[i], cv->len[i], cv->flags[i] & CALLVALS_TRUNC, buf, len);
	else if (cv->type[i] == CABBPF_VT_INT32)
		snprintf(buf, len, "%" PRId32, (int32_t)(uint32_t)cv->v[i]);
	else
		format_int(cv->v[i], buf, len);
	return buf;
}

const char *callvals__args_text(const struct callvals *cv, bool labels, char *buf, size_t len)
{
	char lb[24], v[CABBPF_VAL_STR_MAX * 4 + 16];
	size_t o = 0;
	unsigned i;

	if (!len)
		return buf;
	buf[0] = 0;
	for (i = 0; cv && i < CABBPF_VAL_ARGS_MAX; i++) {
		int k;

		if (!(cv->have & 1u << i))
			continue;
		callvals__format(cv, i, v, sizeof(v));
		k = snprintf(buf + o, len - o, "%s%s%s%s", o ? ", " : "",
			     labels ? callvals__label(cv, i, lb) : "", labels ? "=" : "", v);
		if (k < 0 || (size_t)k >= len - o)
			break; /* cut: snprintf terminated it */
		o += (size_t)k;
	}
	return buf;
}

char *callvals__pairs(const struct callvals *cv)
{
	char lb[24], v[CABBPF_VAL_STR_MAX * 4 + 16], *out, *o;
	size_t n = 1;
	unsigned i;

	if (!cv || !cv->have)
		return NULL;
	for (i = 0; i < CABBPF_VAL_ITEMS; i++)
		if (cv->have & 1u << i)
			n += strlen(callvals__label(cv, i, lb)) +
			     strlen(callvals__format(cv, i, v, sizeof(v))) + 2;
	out = o = malloc(n);
	if (!out)
		return NULL;
	for (i = 0; i < CABBPF_VAL_ITEMS; i++) {
		if (!(cv->have & 1u << i))
			continue;
		o = stpcpy(o, callvals__label(cv, i, lb)) + 1;
		o = stpcpy(o, callvals__format(cv, i, v, sizeof(v))) + 1;
	}
	*o = 0;
	return out;
}

size_t callvals__pairs_size(const char *pairs)
{
	const char *p = pairs;

	while (*p) {
		p += strlen(p) + 1; /* the label */
		p += strlen(p) + 1; /* its value */
	}
	return (size_t)(p - pairs) + 1;
}

int callvals__json(const struct callvals *cv, struct json *w)
{
	char lb[24], key[40];
	unsigned i;

	json__begin_object(w);
	for (i = 0; cv && i < CABBPF_VAL_ITEMS; i++) {
		if (!(cv->have & 1u << i))
			continue;
		json__key(w, callvals__label(cv, i, lb));
		if (!complete(cv, i) || (cv->flags[i] & CALLVALS_UNREADABLE)) {
			json__null(w);
		} else if (cv->type[i] == CABBPF_VT_STR) {
			char s[CABBPF_VAL_STR_MAX + 1];

			memcpy(s, cv->s[i], cv->len[i]);
			s[cv->len[i]] = 0;
			json__string(w, s);
			if (cv->flags[i] & CALLVALS_TRUNC) {
				snprintf(key, sizeof(key), "%s.truncated", lb);
				json__kv_bool(w, key, true);
			}
		} else if (cv->type[i] == CABBPF_VT_STRLEN) {
			json__u64(w, cv->v[i]);
		} else if (cv->type[i] == CABBPF_VT_INT32) {
			json__i64(w, (int32_t)(uint32_t)cv->v[i]);
		} else {
			json__i64(w, (int64_t)cv->v[i]);
		}
	}
	return json__end_object(w);
}
