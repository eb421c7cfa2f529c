// SPDX-License-Identifier: BSD-2-Clause
/*
 * The calling-context tree's views: folded stacks and the SVG flame graph
 * (flame.h), from the tree analyzers/cct.h hands over.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "analyzers/cct.h"
#include "common/xml.h"
#include "user/report/flame.h"

/* -------------------------------------------------------------- views -- */

/* Context id's value by metric m; own: its own self times as shown
 * (cct__shown_times), for CCT_METRIC_SAMPLED. A frame's width is its value
 * plus its children's, so a frame always covers its children. */
static uint64_t metric_of(const struct cct_tree *t, uint32_t id, enum cct_metric m,
			  const uint64_t *own)
{
	const struct cct_node *n = cct__node(t, id);

	switch (m) {
	case CCT_METRIC_CALLS:
		return n->calls;
	case CCT_METRIC_CPU:
		return n->cpu_self_ns;
	case CCT_METRIC_SAMPLED:
		return own[id];
	default:
		return n->self_ns;
	}
}

/* A name for folded stacks: ';' separates frames and a line ends at '\n',
 * so neither may appear in a frame. */
static void put_folded_name(char *dst, const char *src)
{
	for (; *src; src++, dst++)
		*dst = *src == ';' ? ':' : *src == '\n' || *src == '\r' ? ' ' : *src;
	*dst = 0;
}

int flame__write_folded(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx,
			 enum cct_metric metric)
{
	struct cct_walk w = {.t = t, .names = ctx};
	size_t *off = NULL, cap = 4096, len, ocap = 64;
	char *buf = malloc(cap), b[24];
	uint64_t *own = NULL, *own_incl = NULL;
	uint32_t id, d;
	int err = -ENOMEM;

	off = malloc(ocap * sizeof(*off));
	if (!buf || !off || cct_walk__push(&w, 0))
		goto cleanup;
	if (metric == CCT_METRIC_SAMPLED && cct__shown_times(t, ctx, &own, &own_incl, NULL, NULL))
		goto cleanup;
	off[0] = 0;
	while ((id = cct_walk__next(&w, &d, NULL, NULL)) != CCT_NONE) {
		const struct cct_node *n = cct__node(t, id);
		const char *name = an_ctx__name(ctx, n->fid, b);
		uint64_t v = metric_of(t, id, metric, own);

		if (d + 1 >= ocap) {
			size_t *no = realloc(off, 2 * ocap * sizeof(*off));

			if (!no)
				goto cleanup;
			off = no;
			ocap *= 2;
		}
		len = off[d - 1];
		while (len + strlen(name) + 2 > cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				goto cleanup;
			buf = nb;
			cap *= 2;
		}
		if (d > 1)
			buf[len++] = ';';
		put_folded_name(buf + len, name);
		off[d] = len + strlen(buf + len);
		if (v)
			fprintf(f, "%.*s %" PRIu64 "\n", (int)off[d], buf, v);
		if (cct_walk__push(&w, id))
			goto cleanup;
	}
	err = ferror(f) ? -EIO : 0;
cleanup:
	cct_walk__fini(&w);
	free(buf);
	free(off);
	free(own);
	free(own_incl);
	return err;
}

/* FlameGraph's "hot" palette, chosen by the name so that a function keeps
 * its colour across graphs. */
static void frame_colour(const char *name, unsigned rgb[3])
{
	uint64_t h = 1469598103934665603ULL;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ULL;
	rgb[0] = 205 + (unsigned)(h % 51);
	rgb[1] = (unsigned)((h >> 8) % 231);
	rgb[2] = (unsigned)((h >> 16) % 56);
}

/* A frame's label: its name without the library's "libc:" prefix, which
 * would take a narrow frame's few characters ("li.."); the tooltip keeps
 * the whole name. A prefix is what precedes the first ':' not part of a
 * "::" (C++ and Rust scopes start no prefix). */
static const char *frame_label(const char *name)
{
	size_t n = strcspn(name, ":<( ");

	return n && name[n] == ':' && name[n + 1] != ':' && name[n + 1] ? name + n + 1 : name;
}

#define SVG_W 1200
#define SVG_PAD 10
#define SVG_FRAME_H 16
#define SVG_TOP 52
#define SVG_CHAR_W 7.0 /* 12 px Verdana, average */
#define SVG_MIN_W 0.1  /* px: narrower frames are left out */

static void svg_frame(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx, uint32_t id,
		      double x, double y, double wpx, uint64_t width, uint64_t total,
		      enum cct_metric metric, bool cpu_time, const uint64_t *own,
		      const uint64_t *own_incl, const bool *unknown)
{
	const struct cct_node *n = cct__node(t, id);
	const char *name = id ? an_ctx__name(ctx, n->fid, (char[24]){0}) : "all";
	struct cct_node all;
	uint32_t c;

	if (!id) {
		/* The root has no activations: show its children's sums. */
		all = *n;
		for (c = n->child; c != CCT_NONE; c = cct__node(t, c)->sibling) {
			all.calls += cct__node(t, c)->calls;
			all.incl_ns += cct__node(t, c)->incl_ns;
			all.cpu_incl_ns += cct__node(t, c)->cpu_incl_ns;
		}
		n = &all;
	}
	static const char *const unit[] = {"wall ns", "calls", "on-CPU ns", "sampled ns"};
	unsigned rgb[3];
	size_t fit;

	if (id)
		frame_colour(name, rgb);
	else
		rgb[0] = 250, rgb[1] = 120, rgb[2] = 80;
	fputs("<g><title>", f);
	xml__escape(f, name, SIZE_MAX);
	fprintf(f, " (%.2f%% of %s)\ncalls: %" PRIu64 "\nwall: total %.3f ms, self %.3f ms",
		total ? 100.0 * (double)width / (double)total : 0.0,
		unit[metric <= CCT_METRIC_SAMPLED ? metric : 0], n->calls,
		(double)n->incl_ns / 1e6, (double)n->self_ns / 1e6);
	if (ctx->cpu_sample_ns && id) {
		fprintf(f, " (traced, probes included)\nown (sampled): total %.3f ms, self ",
			(double)own_incl[id] / 1e6);
		if (unknown[id])
			fputs("not known (the probes' measured aftermath exceeds its samples)", f);
		else
			fprintf(f, "%.3f ms", (double)own[id] / 1e6);
	}
	if (cpu_time)
		fprintf(f, "\non-CPU: total %.3f ms, self %.3f ms", (double)n->cpu_incl_ns / 1e6,
			(double)n->cpu_self_ns / 1e6);
	if (n->missing || n->unwound || n->folded)
		fprintf(f,
			"\nwithout return: %" PRIu32 ", unwound: %" PRIu32
			", folded calls: %" PRIu32,
			n->missing, n->unwound, n->folded);
	fprintf(f,
		"</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>",
		x, y, wpx, SVG_FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	fit = wpx > 3 * SVG_CHAR_W ? (size_t)((wpx - 6) / SVG_CHAR_W) : 0;
	name = id ? frame_label(name) : name;
	if (fit >= 2) {
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + SVG_FRAME_H - 4.5);
		if (strlen(name) <= fit) {
			xml__escape(f, name, SIZE_MAX);
		} else {
			xml__escape(f, name, fit - 2);
			fputs("..", f);
		}
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
}

int flame__write_svg(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx,
		     enum cct_metric metric, bool cpu_time, const char *title)
{
	uint64_t *width = calloc((size_t)t->n + 1, sizeof(*width));
	uint64_t *own = NULL, *own_incl = NULL;
	bool *unknown = NULL;
	uint32_t *depth = calloc((size_t)t->n + 1, sizeof(*depth));
	double *xcur = NULL, scale, wpx;
	struct cct_walk w = {.t = t, .names = ctx};
	uint32_t id, d, maxd = 0, skipped = 0, shown = 0;
	size_t xcap = 64;
	int err = -ENOMEM, height;

	xcur = malloc(xcap * sizeof(*xcur));
	if (!width || !depth || !xcur || cct__shown_times(t, ctx, &own, &own_incl, &unknown, NULL))
		goto cleanup;
	/* Widths as flamegraph.pl gets them from the folded lines: a
	 * frame's own value plus its children's widths (children have larger
	 * ids, so one pass downwards sums them). */
	for (id = t->n; id-- > 1;) {
		width[id] += metric_of(t, id, metric, own);
		width[cct__node(t, id)->parent] += width[id];
	}
	width[0] += metric_of(t, 0, metric, own);
	scale = width[0] ? (double)(SVG_W - 2 * SVG_PAD) / (double)width[0] : 0;
	for (id = 1; id < t->n; id++) {
		depth[id] = depth[cct__node(t, id)->parent] + 1;
		if ((double)width[id] * scale >= SVG_MIN_W && depth[id] > maxd)
			maxd = depth[id];
	}
	height = SVG_TOP + (int)(maxd + 1) * SVG_FRAME_H + SVG_PAD + 16;
	fprintf(f,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
		"rect:hover{stroke:#000;stroke-width:0.5}"
		".t{font-size:17px;text-anchor:middle}.s{fill:#555;text-anchor:middle}</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n"
		"<text class=\"t\" x=\"%d\" y=\"24\">",
		SVG_W, height, SVG_W, height, SVG_W, height, SVG_W / 2);
	xml__escape(f, title ? title : "Flame Graph", SIZE_MAX);
	fputs("</text>\n", f);
	if (!width[0]) {
		fprintf(f,
			"<text class=\"s\" x=\"%d\" y=\"44\">no samples: every context's %s "
			"is 0</text>\n</svg>\n",
			SVG_W / 2, metric == CCT_METRIC_CALLS ? "call count" : "time");
		err = ferror(f) ? -EIO : 0;
		goto cleanup;
	}
	svg_frame(f, t, ctx, 0, SVG_PAD, height - SVG_PAD - 16 - SVG_FRAME_H,
		  (double)width[0] * scale, width[0], width[0], metric, cpu_time, own, own_incl,
		  unknown);
	xcur[0] = 0;
	xcur[1] = 0;
	if (cct_walk__push(&w, 0))
		goto cleanup;
	while ((id = cct_walk__next(&w, &d, NULL, NULL)) != CCT_NONE) {
		double x;

		if (d + 1 >= xcap) {
			double *nx = realloc(xcur, 2 * xcap * sizeof(*xcur));

			if (!nx)
				goto cleanup;
			xcur = nx;
			xcap *= 2;
		}
		x = xcur[d];
		xcur[d] += (double)width[id];
		wpx = (double)width[id] * scale;
		if (wpx < SVG_MIN_W) {
			skipped++;
			continue; /* and its subtree: narrower still */
		}
		shown++;
		svg_frame(f, t, ctx, id, SVG_PAD + x * scale,
			  height - SVG_PAD - 16 - (double)(d + 1) * SVG_FRAME_H, wpx, width[id],
			  width[0], metric, cpu_time, own, own_incl, unknown);
		xcur[d + 1] = x;
		if (cct_walk__push(&w, id))
			goto cleanup;
	}
	fprintf(f,
		"<text class=\"s\" x=\"%d\" y=\"42\">%u frames; width: %s per context (self, with "
		"the children's above it)%s; hover for calls and times</text>\n",
		SVG_W / 2, shown,
		metric == CCT_METRIC_CALLS     ? "calls"
		: metric == CCT_METRIC_CPU     ? "on-CPU time (traced)"
		: metric == CCT_METRIC_SAMPLED ? "the program's own CPU time (sampled)"
					       : "wall time (traced, probes included)",
		skipped ? ", narrow frames left out" : "");
	fputs("</svg>\n", f);
	err = ferror(f) ? -EIO : 0;
cleanup:
	cct_walk__fini(&w);
	free(width);
	free(own);
	free(own_incl);
	free(unknown);
	free(depth);
	free(xcur);
	return err;
}
