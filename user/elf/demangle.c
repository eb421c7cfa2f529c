// SPDX-License-Identifier: BSD-2-Clause
/* Readable names: see user/elf/demangle.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "user/elf/demangle.h"

/* Whether s is a run of GCC clone suffixes: (".isra" | ".constprop" |
 * ".part" | ".lto_priv" | ".cold" | ".localalias" | ".clone") each with
 * an optional ".N". Other dots belong to the name (Go's "main.worker"). */
static bool clone_suffixes(const char *s)
{
	static const char *const words[] = {"isra", "constprop",  "part", "lto_priv",
					    "cold", "localalias", "clone"};
	size_t i, n;

	if (!*s)
		return false;
	while (*s) {
		if (*s != '.')
			return false;
		s++;
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			n = strlen(words[i]);
			if (!strncmp(s, words[i], n) && (s[n] == '.' || !s[n]))
				break;
		}
		if (i == sizeof(words) / sizeof(words[0]))
			return false;
		s += n;
		if (s[0] == '.' && s[1] >= '0' && s[1] <= '9')
			for (s++; *s >= '0' && *s <= '9'; s++)
				;
	}
	return true;
}

/* Where a C name's GCC clone suffixes start ("work.isra.0"), or NULL. */
static const char *clone_suffix(const char *name)
{
	const char *dot;

	for (dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.'))
		if (dot != name && clone_suffixes(dot))
			return dot;
	return NULL;
}

char *demangle__name(const char *name)
{
	const char *sfx;
	char *r;

	if (!name || !*name)
		return NULL;
	/* Itanium C++ (and Rust's legacy scheme, which wraps it), and Rust
	 * v0 (_R): libiberty tells them apart itself. */
	if ((name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')) || !strncmp(name, "__Z", 3)) {
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
