/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Text inside the SVG files cabbpf writes (the flame graph, the isp cost
 * plots): function names come from the target's symbol tables and may hold
 * anything.
 */
#ifndef COMMON_XML_H
#define COMMON_XML_H

#include <stddef.h>
#include <stdio.h>

/* At most max bytes of s into f as XML character data or an attribute
 * value: & < > " ' escaped, control characters (which XML 1.0 forbids)
 * written as blanks. Any thread, on a FILE it owns. */
void xml__escape(FILE *f, const char *s, size_t max);

#endif /* COMMON_XML_H */
