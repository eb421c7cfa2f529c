// SPDX-License-Identifier: BSD-2-Clause
/* A kernel symbol's extent, from /proc/kallsyms (ksyms.h). */
#include "user/kernel/ksyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CABBPF_TEST_KALLSYMS=FILE: tests read a file of their own. */
static const char *ksyms_path(void)
{
	const char *p = getenv("CABBPF_TEST_KALLSYMS");

	return p && *p ? p : "/proc/kallsyms";
}

int ksyms__range(const char *name, uint64_t *lo, uint64_t *hi)
{
	FILE *f = fopen(ksyms_path(), "re");
	char *line = NULL, *end;
	size_t cap = 0;
	uint64_t at = 0, next = UINT64_MAX;
	int err = -ENOENT;

	if (!f)
		return -errno;
	/* The file is not sorted by address (modules, the BPF programs'
	 * symbols): find the symbol, then the least address above it. */
	while (getline(&line, &cap, f) > 0) {
		uint64_t a = strtoull(line, &end, 16);
		char type, sym[256];

		if (end == line || sscanf(end, " %c %255s", &type, sym) != 2)
			continue;
		if (!at && a && (type == 't' || type == 'T') && !strcmp(sym, name) &&
		    !strchr(end, '['))
			at = a;
	}
	if (!at)
		goto cleanup;
	rewind(f);
	while (getline(&line, &cap, f) > 0) {
		uint64_t a = strtoull(line, &end, 16);

		if (end != line && a > at && a < next)
			next = a;
	}
	if (next == UINT64_MAX)
		goto cleanup;
	*lo = at;
	*hi = next;
	err = 0;
cleanup:
	free(line);
	fclose(f);
	return err;
}
