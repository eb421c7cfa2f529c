// SPDX-License-Identifier: BSD-2-Clause
/* Readable names: see user/demangle.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "user/demangle.h"

/* GCC's clone suffixes on a C name: ".isra.0", ".constprop.1", ".part.2",
 * ".lto_priv.0", ".cold" ... Returns where the first one starts, or NULL. */
static const char *clone_suffix(const char *name)
{
	const char *dot = strchr(name, '.');

	/* A name that starts with '.' or has none is not a clone. */
	return dot && dot != name && dot[1] ? dot : NULL;
}

char *demangle__name(const char *name)
{
	const char *sfx;
	char *r;

	if (!name || !*name)
		return NULL;
	/* Itanium C++ (and Rust's legacy scheme, which wraps it), and Rust
	 * v0 (_R): libiberty tells them apart itself. */
	if ((name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')) ||
	    !strncmp(name, "__Z", 3)) {
		r = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
		if (r)
			return r;
	}
	sfx = clone_suffix(name);
	if (!sfx)
		return NULL;
	if (asprintf(&r, "%.*s [clone %s]", (int)(sfx - name), name, sfx) < 0)
		return NULL;
	return r;
}

size_t demangle__base_len(const char *name)
{
	size_t i, n = strlen(name);
	int angle = 0;

	for (i = 0; i < n; i++) {
		if (name[i] == '<')
			angle++;
		else if (name[i] == '>' && angle > 0)
			angle--;
		/* "operator()" and "operator<" are names, not lists */
		else if (name[i] == '(' && !angle &&
			 !(i >= 8 && !strncmp(name + i - 8, "operator", 8)))
			return i;
		else if (name[i] == ' ' && !angle && !strncmp(name + i, " [clone", 7))
			return i;
	}
	return n;
}
