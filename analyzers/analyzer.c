// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "common/json.h"
#include "common/log.h"

/* Registry order is report order: counts first, then the graph, then I/O,
 * then the calling-context tree (its views are the longest), the call
 * durations, then the input-sensitive profiles (opt-in: analyzers/isp.c
 * says why). */
static const struct analyzer_ops *const registry[] = {
	&analyzer_count,
	&analyzer_callgraph,
	&analyzer_io,
	&analyzer_cct,
	&analyzer_latency,
	&analyzer_timeline, /* opt-in: --timeline */
	&analyzer_isp,
	&analyzer_replay, /* cabbpf replay's */
};

#define NREG (sizeof(registry) / sizeof(registry[0]))

_Static_assert(NREG <= AN_MAX, "AN_MAX too small for the registry");

unsigned analyzer__count(void)
{
	return NREG;
}

const struct analyzer_ops *analyzer__get(unsigned i)
{
	return i < NREG ? registry[i] : NULL;
}

static const struct analyzer_ops *find_n(const char *name, size_t len)
{
	unsigned i;

	for (i = 0; i < NREG; i++)
		if (strlen(registry[i]->name) == len && !strncmp(registry[i]->name, name, len))
			return registry[i];
	return NULL;
}

const struct analyzer_ops *analyzer__find(const char *name)
{
	return name ? find_n(name, strlen(name)) : NULL;
}

static void log_valid(void)
{
	char buf[256] = "";
	size_t off = 0;
	unsigned i;

	for (i = 0; i < NREG && off < sizeof(buf); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? ", " : "",
					registry[i]->name);
	log_err("valid analyzers: %s", buf);
}

int analyzer__select(const char *list, const struct analyzer_ops *out[AN_MAX], unsigned *n)
{
	bool want[NREG] = {false};
	const char *p = list;
	unsigned i, k = 0;

	*n = 0;
	if (!list) {
		for (i = 0; i < NREG; i++)
			if (!registry[i]->opt_in)
				out[k++] = registry[i];
		*n = k;
		return 0;
	}
	while (*p) {
		const char *s = p, *e;
		const struct analyzer_ops *ops;

		while (*s == ' ' || *s == '\t')
			s++;
		e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		p = *e ? e + 1 : e;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e == s)
			continue; /* "count,,callgraph" or a trailing comma */
		if (e - s == 3 && !strncmp(s, "all", 3)) {
			for (i = 0; i < NREG; i++)
				want[i] |= !registry[i]->opt_in;
			continue;
		}
		ops = find_n(s, (size_t)(e - s));
		if (!ops) {
			log_err("unknown analyzer '%.*s'", (int)(e - s), s);
			log_valid();
			return -EINVAL;
		}
		for (i = 0; i < NREG; i++)
			if (registry[i] == ops)
				want[i] = true;
	}
	for (i = 0; i < NREG; i++)
		if (want[i])
			out[k++] = registry[i];
	if (!k) {
		log_err("no analyzer selected in '%s'", list);
		log_valid();
		return -EINVAL;
	}
	*n = k;
	return 0;
}
