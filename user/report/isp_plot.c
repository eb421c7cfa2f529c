// SPDX-License-Identifier: BSD-2-Clause
/*
 * --plots DIR: one SVG per routine (isp.h), as a person reads it: the
 * cost plot (log-log axes with decade ticks; per size the range of its
 * activations' costs (min to max), their average, and the statistic the
 * fit uses (the minimum, sec_isp.c says why); the fitted curve with its
 * band (the fit's relative residual, 2 standard deviations either side);
 * labelled axes, a legend) and under it, on the same size axis, the
 * workload plot (how
 * many activations had each size: one bar per size, linear count axis);
 * each point's and bar's figures on hover. Self-contained: no script, no
 * external reference. Files through common/outfile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzers/analyzer.h"
#include "analyzers/fit.h"
#include "analyzers/isp.h"
#include "common/log.h"
#include "common/outfile.h"
#include "common/xml.h"
#include "user/report/isp_plot.h"

#define W 720
#define H 694
#define ML 90 /* margins: left (tick labels), right, top (title) */
#define MR 30
#define MT 100 /* title, subtitles and the legend's row above it */
#define PB 424	/* the cost plot's bottom (its x tick labels under it) */
#define WT 476	/* the workload plot: top and bottom, on the same x axis */
#define WB 606

struct axis {
	double lo, hi; /* log10 of the range's ends, whole decades */
};

static void axis_of(struct axis *a, double vmin, double vmax)
{
	a->lo = floor(log10(vmin));
	a->hi = ceil(log10(vmax));
	if (a->hi <= a->lo)
		a->hi = a->lo + 1;
}

static double px(const struct axis *a, double v)
{
	return ML + (log10(v) - a->lo) / (a->hi - a->lo) * (W - ML - MR);
}

static double py(const struct axis *a, double v)
{
	return PB - (log10(v) - a->lo) / (a->hi - a->lo) * (PB - MT);
}

/* A frame from y top to bottom, the x grid at each decade, the decade
 * labels under it and minor ticks. */
static void x_axis(FILE *f, const struct axis *ax, int top, int bottom)
{
	int d, k;

	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		   "stroke=\"#000\"/>\n",
		ML, top, W - ML - MR, bottom - top);
	for (d = (int)ax->lo; d <= (int)ax->hi; d++) {
		double x = px(ax, pow(10, d));

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x,
			top, x, bottom);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">1e%d</text>\n", x,
			bottom + 16, d);
		for (k = 2; k < 10 && d < (int)ax->hi; k++) {
			double xm = px(ax, k * pow(10, d));

			fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>\n",
				xm, bottom, xm, bottom - 4);
		}
	}
}

/* The workload plot: one bar per size (size >= 1: the log axis), its
 * height the activations of that size on a linear axis from 0 to the
 * most frequent size's count; a title above it, the count axis left. */
static void workload(FILE *f, const struct isp_routine *fn, const struct axis *ax, bool drawable)
{
	uint64_t most = 0;
	size_t i;

	for (i = 0; i < fn->n; i++)
		if (fn->pts[i].size && fn->pts[i].calls > most)
			most = fn->pts[i].calls;
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">workload: activations per "
		   "input size</text>\n",
		ML, WT - 8);
	fprintf(f, "<text transform=\"translate(20,%d) rotate(-90)\" text-anchor=\"middle\">"
		   "activations</text>\n",
		(WT + WB) / 2);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", ML - 6, WB + 4);
	if (!drawable || !most)
		return;
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%" PRIu64 "</text>\n", ML - 6,
		WT + 4, most);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n", ML, WT,
		W - MR, WT);
	if (most > 1 && most % 2 == 0) { /* counts are whole: a whole middle tick */
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%" PRIu64 "</text>\n",
			ML - 6, (WT + WB) / 2.0 + 4, most / 2);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			ML, (WT + WB) / 2.0, W - MR, (WT + WB) / 2.0);
	}
	for (i = 0; i < fn->n; i++) {
		const struct isp_point *p = &fn->pts[i];
		double h = (double)p->calls / (double)most * (WB - WT);

		if (!p->size)
			continue;
		fprintf(f, "<rect class=\"wl\" x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"%.1f\" "
			   "fill=\"#777\"><title>size %" PRIu64 ": %" PRIu64 " activation%s</title>"
			   "</rect>\n",
			px(ax, (double)p->size) - 3, WB - h, h, p->size, p->calls,
			p->calls == 1 ? "" : "s");
	}
}

/* The plot of one sorted routine. Returns 0 or -EIO. */
/* One size's figures as drawn: the fitted statistic, the range, the
 * average (the callees' probes out when comp). */
struct pt {
	double x, min, max, avg, lo, hi;
};

/* Whether point i of fn can go on log axes (size and a cost > 0). */
static bool pt_of(const struct isp_routine *fn, size_t i, bool comp, struct pt *q)
{
	const struct isp_point *p = &fn->pts[i];
	double off = comp ? (double)(p->cost_sum - p->comp_sum) / (double)p->calls : 0;

	q->x = (double)p->size;
	q->min = (double)(comp ? p->comp_min : p->cost_min);
	q->avg = (double)(comp ? p->comp_sum : p->cost_sum) / (double)p->calls;
	/* the max with the average activation's probes out: an estimate */
	q->max = fmax((double)p->cost_max - off, q->min);
	q->lo = q->min > 0 ? q->min : q->avg;
	q->hi = q->max;
	return p->size && q->hi > 0 && q->lo > 0;
}

/* The fitted curve times (1 + k * rel_sd), 200 segments over the sizes,
 * clipped to the frame. */
static void curve(FILE *f, const struct fit_result *fit, const struct axis *ax,
		  const struct axis *ay, double xmin, double xmax, double k, const char *style)
{
	bool pen = false;
	int j;

	fprintf(f, "<path clip-path=\"url(#frame)\" fill=\"none\" %s d=\"", style);
	for (j = 0; j <= 200; j++) {
		double n = pow(10, log10(xmin) + (log10(xmax) - log10(xmin)) * j / 200);
		double y = fit__eval(fit, n) * (1 + k * fit->rel_sd);

		if (!(y > 0)) {
			pen = false;
			continue;
		}
		/* keep far-off values finite for the renderer */
		y = fmin(fmax(y, pow(10, ay->lo - 3)), pow(10, ay->hi + 3));
		fprintf(f, "%c%.1f %.1f ", pen ? 'L' : 'M', px(ax, n), py(ay, y));
		pen = true;
	}
	fputs("\"/>\n", f);
}

/* The band: the curve at +2 sd, back along it at -2 sd (or the axis). */
static void band(FILE *f, const struct fit_result *fit, const struct axis *ax,
		 const struct axis *ay, double xmin, double xmax)
{
	int j;

	fputs("<path clip-path=\"url(#frame)\" fill=\"#2a7\" fill-opacity=\"0.18\" "
	      "stroke=\"none\" d=\"",
	      f);
	for (j = 0; j <= 400; j++) {
		int k = j <= 200 ? j : 400 - j;
		double n = pow(10, log10(xmin) + (log10(xmax) - log10(xmin)) * k / 200);
		double y = fit__eval(fit, n) * (1 + (j <= 200 ? 2 : -2) * fit->rel_sd);

		y = fmin(fmax(y, pow(10, ay->lo - 3)), pow(10, ay->hi + 3));
		fprintf(f, "%c%.1f %.1f ", j ? 'L' : 'M', px(ax, n), py(ay, y));
	}
	fputs("Z\"/>\n", f);
}

static int write_svg(FILE *f, const struct an_ctx *ctx, uint32_t fid,
		     const struct isp_routine *fn)
{
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
	struct axis ax, ay;
	size_t i, undrawn = 0;
	uint64_t acts = 0;
	bool comp = fn->compensated, fitted = fn->fitted;
	const struct fit_result *fit = &fn->fit;
	char buf[24];
	int d;

	for (i = 0; i < fn->n; i++) {
		struct pt q;

		acts += fn->pts[i].calls;
		if (!pt_of(fn, i, comp, &q)) {
			undrawn++;
			continue;
		}
		xmin = fmin(xmin, q.x);
		xmax = fmax(xmax, q.x);
		ymin = fmin(ymin, q.lo);
		ymax = fmax(ymax, q.hi);
	}
	if (xmax == 0) /* nothing drawable: empty axes over one decade */
		xmin = xmax = ymin = ymax = 1;
	/* the fitted curve stays inside the y range it is drawn in */
	axis_of(&ax, xmin, xmax);
	axis_of(&ay, ymin, ymax);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
		W, H, W, H);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H);
	fputs("<text x=\"20\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", f);
	xml__escape(f, an_ctx__name(ctx, fid, buf), SIZE_MAX);
	fputs(": cost against input size</text>\n<text x=\"20\" y=\"44\" fill=\"#444\">", f);
	fprintf(f, "%" PRIu64 " activations, %zu distinct sizes; ", acts, fn->n);
	if (fitted) {
		char cand[96];

		fprintf(f, "minimum per size fitted %s, R&#178; %.3f",
			fit__candidates_name(fit, cand, sizeof(cand)), fit->r2);
		if (fit->has_exponent)
			fprintf(f, ", log-log exponent %.2f", fit->exponent);
		fprintf(f, "</text>\n<text x=\"20\" y=\"62\" fill=\"#444\">"
			   "cost &#8776; %.4g + %.4g &#215; %.*s", fit->a, fit->b,
			(int)strlen(fit__class_name(fit->cls)) - 3, fit__class_name(fit->cls) + 2);
	} else {
		fprintf(f, "no fit (fewer than %d sizes &#8805; 1)", FIT_MIN_SIZES);
	}
	if (undrawn)
		fprintf(f, "; %zu size%s at 0 not on log axes", undrawn, undrawn == 1 ? "" : "s");
	fputs("</text>\n", f);
	/* frames, grids and decade ticks: the cost plot, and the workload
	 * plot under it on the same size axis */
	x_axis(f, &ax, MT, PB);
	x_axis(f, &ax, WT, WB);
	for (d = (int)ay.lo; d <= (int)ay.hi; d++) {
		double y = py(&ay, pow(10, d));

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", ML,
			y, W - MR, y);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>\n", ML - 6,
			y + 4, d);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">input size (%s, log scale)</text>\n",
		(ML + W - MR) / 2, WB + 40,
		fn->arg ? "the --size argument" : "bytes read by the activation and its callees");
	fprintf(f, "<text transform=\"translate(20,%d) rotate(-90)\" text-anchor=\"middle\">"
		   "cost (%s%s, log scale)</text>\n",
		(MT + PB) / 2, isp__cost_unit(fn->cost), comp ? ", callees' probes out" : "");
	workload(f, fn, &ax, xmax > 0);
	/* fitted curve, clipped to the frame */
	fprintf(f, "<clipPath id=\"frame\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>"
		   "</clipPath>\n",
		ML, MT, W - ML - MR, PB - MT);
	if (fitted && xmax > 0) {
		/* the band first, under the curve and the points */
		band(f, fit, &ax, &ay, xmin, xmax);
		curve(f, fit, &ax, &ay, xmin, xmax, 0, "stroke=\"#2a7\" stroke-width=\"2\"");
	}
	/* per size: the range (a gray bar), the average (square), the fitted
	 * statistic (circle) on top */
	for (i = 0; i < fn->n; i++) {
		struct pt q;

		if (!pt_of(fn, i, comp, &q))
			continue;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
			   "stroke-width=\"3\"/>\n",
			px(&ax, q.x), py(&ay, q.lo), px(&ax, q.x), py(&ay, q.hi));
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"#36c\">"
			   "<title>size %" PRIu64 ": %" PRIu64 " calls, avg %.0f</title></rect>\n",
			px(&ax, q.x) - 3.5, py(&ay, q.avg) - 3.5, fn->pts[i].size, fn->pts[i].calls,
			q.avg);
	}
	for (i = 0; i < fn->n; i++) {
		struct pt q;

		if (!pt_of(fn, i, comp, &q))
			continue;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"#d33\">"
			   "<title>size %" PRIu64 ": %" PRIu64 " calls, min %.0f (fitted), max %.0f"
			   "</title></circle>\n",
			px(&ax, q.x), py(&ay, q.min), fn->pts[i].size, fn->pts[i].calls, q.min,
			q.max);
	}
	/* legend: one row above the plot, never over a point */
	fprintf(f, "<g transform=\"translate(%d,%d)\">\n"
		   "<circle cx=\"5\" cy=\"-4\" r=\"4.5\" fill=\"#d33\"/>"
		   "<text x=\"15\" y=\"0\">minimum (fitted)</text>\n"
		   "<rect x=\"126.5\" y=\"-7.5\" width=\"7\" height=\"7\" fill=\"#36c\"/>"
		   "<text x=\"140\" y=\"0\">average</text>\n"
		   "<line x1=\"200\" y1=\"-11\" x2=\"200\" y2=\"3\" stroke=\"#999\" "
		   "stroke-width=\"3\"/><text x=\"208\" y=\"0\">min to max</text>\n"
		   "<rect x=\"288\" y=\"-10\" width=\"18\" height=\"12\" fill=\"#2a7\" "
		   "fill-opacity=\"0.18\"/>"
		   "<line x1=\"288\" y1=\"-4\" x2=\"306\" y2=\"-4\" stroke=\"#2a7\" "
		   "stroke-width=\"2\"/><text x=\"312\" y=\"0\">fitted %s, &#177;2 sd band</text>\n"
		   "</g>\n",
		ML, MT - 10, fitted ? fit__class_name(fit->cls) : "(none)");
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}

int isp_plot__check_dir(const char *dir)
{
	char d[4096];
	struct stat sb;
	size_t n = strlen(dir);
	int err;

	/* "DIR/" is DIR: lstat would follow a link at DIR through the slash */
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n >= sizeof(d)) {
		log_err("--plots %s: %s", dir, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	memcpy(d, dir, n);
	d[n] = 0;
	/* As root, a symlink here could send the plots anywhere. */
	if (lstat(d, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		log_err("--plots %s: is a symbolic link (give the directory itself)", dir);
		return -ELOOP;
	}
	if (lstat(d, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
		log_err("--plots %s: not a directory", dir);
		return -ENOTDIR;
	}
	/* its path resolved as every output's, made if absent (its parent
	 * must exist), and the plots already in it ones we may replace: a
	 * bad path never costs a trace */
	err = outfile__check_dir(d, true);
	if (err == -EACCES)
		log_err("--plots %s: not writable", dir);
	else if (err == -ENOENT)
		log_err("--plots %s: cannot create it: its parent does not exist", dir);
	else if (err == -EISDIR || err == -EEXIST || err == -EPERM)
		log_err("--plots %s: a plot file in it cannot be replaced (a directory, not a "
			"regular file, or another user's)", dir);
	else if (err)
		log_err("--plots %s: %s", dir, outfile__strerror(err));
	return err;
}

/* dir/NAME.svg with NAME's characters other than [A-Za-z0-9_.-] as '_'
 * (and the fid appended then, since two names may map to one file). */
static int plot_path(char *out, size_t len, const char *dir, const char *name, uint32_t fid)
{
	char safe[128];
	bool changed = false;
	size_t i;

	for (i = 0; name[i] && i + 1 < sizeof(safe); i++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-' || (c == '.' && i);

		safe[i] = ok ? c : '_';
		changed |= !ok;
	}
	safe[i] = 0;
	changed |= name[i] != 0;
	if (changed)
		return snprintf(out, len, "%s/%s-%" PRIu32 ".svg", dir, safe, fid) >= (int)len
			       ? -ENAMETOOLONG
			       : 0;
	return snprintf(out, len, "%s/%s.svg", dir, safe) >= (int)len ? -ENAMETOOLONG : 0;
}

int isp_plot__write(void *state, const char *dir)
{
	const struct an_ctx *ctx = isp__ctx(state);
	char path[4096], buf[24];
	uint32_t i;
	int written = 0, err = 0;

	for (i = 0; i < ctx->nfuncs; i++) {
		struct isp_routine rt;
		struct outfile of;
		int e = isp__routine(state, i, &rt);

		if (e == -ENOENT || (!e && rt.n < 2))
			continue; /* no point, or one size: nothing to plot against */
		if (!e)
			e = plot_path(path, sizeof(path), dir, an_ctx__name(ctx, i, buf), i);
		if (!e && (e = outfile__open(&of, path)) == 0)
			e = outfile__finish(&of, write_svg(of.f, ctx, i, &rt));
		if (e) {
			log_err("--plots: writing %s: %s", path, outfile__strerror(e));
			err = e;
			continue;
		}
		written++;
	}
	return err ? err : written;
}
