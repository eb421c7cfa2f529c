// SPDX-License-Identifier: BSD-2-Clause
#include "common/xml.h"

void xml__escape(FILE *f, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			fputc((unsigned char)s[i] < 0x20 ? ' ' : s[i], f);
		}
	}
}
