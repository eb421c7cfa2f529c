// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/kernel/bpfload.h"
#include "common/log.h"

/* A load's log can be megabytes (a verifier log at level 1); what
 * explains a refusal is at its end, and the program's name at the start
 * of its message: a message longer than half of this keeps its first line
 * and its tail, and past this the oldest messages go. */
#define LOG_MAX (1u << 20)

static __thread struct bpfload_log *capture;

/* Append s (n bytes) to l. */
static void append(struct bpfload_log *l, const char *s, size_t n)
{
	size_t cap = l->cap;
	char *b;

	if (l->len + n + 1 > LOG_MAX) {
		size_t drop = l->len + n + 1 - LOG_MAX;

		drop = drop > l->len ? l->len : drop;
		memmove(l->buf, l->buf + drop, l->len - drop);
		l->len -= drop;
	}
	while (cap < l->len + n + 1)
		cap = cap ? cap * 2 : 4096;
	if (cap != l->cap) {
		b = realloc(l->buf, cap);
		if (!b)
			return; /* out of memory: this message is not kept */
		l->buf = b;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = 0;
}

/* Keep message m (n bytes) in l. */
static void keep(struct bpfload_log *l, const char *m, size_t n)
{
	const char *nl = memchr(m, '\n', n);
	static const char cut[] = "...\n";

	if (n <= LOG_MAX / 2 || !nl) {
		append(l, m, n <= LOG_MAX / 2 ? n : LOG_MAX / 2);
		return;
	}
	append(l, m, (size_t)(nl + 1 - m));
	append(l, cut, sizeof(cut) - 1);
	append(l, m + n - LOG_MAX / 4, LOG_MAX / 4);
}

int bpfload__print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char small[1024], *m = small;
	va_list aq;
	int n;

	if (!capture) {
		if (level != LIBBPF_WARN && !log_verbose)
			return 0;
		fputs("cabbpf: ", stderr);
		return vfprintf(stderr, fmt, ap);
	}
	va_copy(aq, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small)) {
		/* a verifier log comes as one message: kept whole */
		m = malloc((size_t)n + 1);
		if (m)
			vsnprintf(m, (size_t)n + 1, fmt, aq);
	}
	va_end(aq);
	if (n < 0 || !m)
		return n < 0 ? n : -ENOMEM;
	if (level == LIBBPF_WARN)
		keep(capture, m, (size_t)n);
	if (log_verbose)
		fprintf(stderr, "cabbpf: %s", m);
	if (m != small)
		free(m);
	return n;
}

void bpfload__begin(struct bpfload_log *l)
{
	memset(l, 0, sizeof(*l));
	l->outer = capture;
	capture = l;
}

void bpfload__end(struct bpfload_log *l)
{
	if (capture == l)
		capture = l->outer;
}

void bpfload__free(struct bpfload_log *l)
{
	if (!l)
		return;
	free(l->buf);
	l->buf = NULL;
	l->len = l->cap = 0;
}

void bpfload__refused_prog(const char *log, char *name, size_t len)
{
	static const char *const marks[] = {"': BPF program load failed", "': failed to load",
					    "': -- BEGIN PROG LOAD LOG --"};
	const char *best = NULL, *p, *q;
	size_t i;

	name[0] = 0;
	if (!log)
		return;
	/* the last program named as failing */
	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		for (p = strstr(log, marks[i]); p; p = strstr(p + 1, marks[i]))
			if (!best || p > best)
				best = p;
	if (!best)
		return;
	for (q = best; q > log && q[-1] != '\''; q--)
		;
	if (q == log || (size_t)(best - q) >= len || q - 6 < log || strncmp(q - 6, "prog '", 6))
		return;
	memcpy(name, q, (size_t)(best - q));
	name[best - q] = 0;
}

/* Print the last n non-empty lines of [from, to), indented. */
static void print_tail(const char *from, const char *to, int n)
{
	const char *p = to;
	int seen = 0;

	while (p > from && seen <= n) {
		p--;
		if (*p == '\n' && p + 1 < to && p[1] != '\n')
			seen++;
	}
	if (*p == '\n')
		p++;
	while (p < to) {
		const char *e = memchr(p, '\n', (size_t)(to - p));

		if (!e)
			e = to;
		if (e > p && strncmp(p, "processed ", 10) && strncmp(p, "verification time", 17))
			fprintf(stderr, "    %.*s\n", (int)(e - p), p);
		p = e + 1;
	}
}

void bpfload__explain(const struct bpfload_log *l, const char *what, int err)
{
	const char *log = l ? l->buf : NULL, *b, *e;
	char prog[128];

	bpfload__refused_prog(log, prog, sizeof(prog));
	b = log ? strstr(log, "-- BEGIN PROG LOAD LOG --") : NULL;
	/* the last program log: the refused one */
	while (b && strstr(b + 1, "-- BEGIN PROG LOAD LOG --"))
		b = strstr(b + 1, "-- BEGIN PROG LOAD LOG --");
	e = b ? strstr(b, "-- END PROG LOAD LOG --") : NULL;
	if (prog[0] && b && e) {
		b = strchr(b, '\n');
		log_err("loading %s: the kernel refused BPF program '%s' (%s); the verifier's "
			"last lines:",
			what, prog, strerror(err < 0 ? -err : err));
		if (b && b < e)
			print_tail(b + 1, e, 6);
		if (!log_verbose)
			fprintf(stderr, "    (the whole verifier log: cabbpf -v)\n");
		return;
	}
	if ((err == -EPERM || err == -EACCES) && geteuid() != 0) {
		log_err("loading %s: permission denied (run as root)", what);
		return;
	}
	if (log && log[0]) {
		log_err("loading %s: %s; libbpf said:", what, strerror(err < 0 ? -err : err));
		print_tail(log, log + strlen(log), 4);
		return;
	}
	log_err("loading %s: %s", what, strerror(err < 0 ? -err : err));
}
