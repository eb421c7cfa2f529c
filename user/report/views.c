// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "common/log.h"
#include "common/outfile.h"
#include "pipeline/runner.h"
#include "common/outputs.h"
#include "user/report/flame.h"
#include "user/report/isp_plot.h"
#include "user/report/perfetto.h"
#include "user/report/pprof.h"
#include "user/report/views.h"
#include "analyzers/timeline.h"
#include "analyzers/isp.h"
#include "user/elf/syms.h"

void views__init(struct view_opts *v)
{
	memset(v, 0, sizeof(*v));
	v->cct.min_pct = -1; /* CCT_DEFAULT_MIN_PCT */
	v->metric = CCT_METRIC_AUTO; /* sampled when the run was */
	v->cct.sort = CCT_SORT_TOTAL;
}

bool views__selects(const char *list, const char *name)
{
	const char *p = list;
	size_t n = strlen(name);

	if (!list) {
		const struct analyzer_ops *ops = analyzer__find(name);

		return ops && !ops->opt_in;
	}
	while ((p = strstr(p, name))) {
		bool start = p == list || p[-1] == ',' || p[-1] == ' ';
		bool end = !p[n] || p[n] == ',' || p[n] == ' ';

		if (start && end)
			return true;
		p += n;
	}
	return false;
}

const char *views__analyzers(const struct view_opts *v, const char *list, char *buf, size_t len)
{
	if (!v->timeline_path)
		return list;
	snprintf(buf, len, "%s,timeline", list ? list : "all");
	return buf;
}

int views__check(const struct view_opts *v, const char *analyzers, bool entry_only)
{
	const char *paths[3] = {v->folded_path, v->svg_path, v->pprof_path};
	static const char *const opt[3] = {"--folded", "--flamegraph", "--pprof"};
	int i, j, err;

	for (i = 0; i < 3; i++) {
		if (!paths[i])
			continue;
		if (entry_only || !views__selects(analyzers, "cct")) {
			log_err("%s needs the cct analyzer (-a ...,cct) and return probes (no "
				"--entry-only)",
				opt[i]);
			return -EINVAL;
		}
		err = outfile__check(paths[i]);
		if (err) {
			log_err("cannot write %s %s: %s", opt[i], paths[i], outfile__strerror(err));
			return -EINVAL;
		}
	}
	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++)
			if (paths[i] && paths[j] && !strcmp(paths[i], paths[j])) {
				log_err("%s and %s name the same file", opt[i], opt[j]);
				return -EINVAL;
			}
	if (v->timeline_limit && !v->timeline_path) {
		log_err("--timeline-limit goes with --timeline FILE");
		return -EINVAL;
	}
	if (!v->timeline_path)
		return 0;
	if (entry_only) {
		log_err("--timeline needs return probes (no --entry-only): an activation is a call "
			"and its return");
		return -EINVAL;
	}
	err = outfile__check(v->timeline_path);
	if (err) {
		log_err("cannot write --timeline %s: %s", v->timeline_path, outfile__strerror(err));
		return -EINVAL;
	}
	for (i = 0; i < 3; i++)
		if (paths[i] && !strcmp(paths[i], v->timeline_path)) {
			log_err("%s and --timeline name the same file", opt[i]);
			return -EINVAL;
		}
	return 0;
}

size_t views__exclude(const struct view_opts *v, const struct symtab *st, size_t *idx, size_t *n)
{
	if (!v->nexcludes || !st || !idx)
		return 0;
	return syms__exclude(st, v->excludes, v->nexcludes, idx, n);
}

/* Write one view into path through a temporary file renamed over it. */
static int write_view(const char *path, const char *what, void *state, const struct cct_tree *t,
		      const struct view_opts *v, const char *title, const char *binary,
		      uint64_t duration_ns)
{
	struct outfile of;
	int err;

	err = outfile__open(&of, path);
	if (err) {
		log_err("cannot write %s %s: %s", what, path, outfile__strerror(err));
		return err;
	}
	if (!strcmp(what, "--folded"))
		err = flame__write_folded(of.f, t, cct__ctx(state),
					cct__metric(v->metric, cct__ctx(state)));
	else if (!strcmp(what, "--pprof"))
		err = pprof__write(of.f, t, cct__ctx(state), cct__opts(state)->cpu_time, binary,
				   duration_ns);
	else
		err = flame__write_svg(of.f, t, cct__ctx(state), cct__metric(v->metric, cct__ctx(state)),
				     cct__opts(state)->cpu_time, title);
	err = outfile__finish(&of, err);
	if (err)
		log_err("writing %s %s: %s", what, path, outfile__strerror(err));
	return err;
}

/* --timeline: the timeline analyzer's events, said on stderr with the
 * cut if any. */
static int write_timeline(const struct view_opts *v, struct runner *r, int pid, const char *title)
{
	const void *state = runner__analyzer(r, "timeline");
	uint64_t kept = 0, cut = 0;
	struct outfile of;
	int err;

	if (!state) {
		log_err("--timeline: the timeline analyzer did not run");
		return -EINVAL;
	}
	err = outfile__open(&of, v->timeline_path);
	if (err) {
		log_err("cannot write --timeline %s: %s", v->timeline_path, outfile__strerror(err));
		return err;
	}
	err = outfile__finish(&of, perfetto__write(state, of.f, pid, title, &kept, &cut));
	if (err) {
		log_err("writing --timeline %s: %s", v->timeline_path, outfile__strerror(err));
		return err;
	}
	if (cut)
		log_warn("--timeline %s: %llu events written, %llu more cut by --timeline-limit %u "
			 "(the first events, in the order they completed, are kept)",
			 v->timeline_path, (unsigned long long)kept, (unsigned long long)cut,
			 v->timeline_limit ? v->timeline_limit : TIMELINE_DEFAULT_LIMIT);
	else
		log_info("--timeline %s: %llu events", v->timeline_path, (unsigned long long)kept);
	return 0;
}

int views__write(const struct view_opts *v, struct runner *r, int pid, const char *title,
		 const char *binary, uint64_t duration_ns, struct outputs *outs)
{
	static const char *const opt[3] = {"--folded", "--flamegraph", "--pprof"};
	const char *paths[3] = {v->folded_path, v->svg_path, v->pprof_path};
	void *state = NULL;
	const struct cct_tree *t = NULL;
	int err = 0, e, i;

	if (v->timeline_path)
		err = outputs__note(outs, "--timeline", v->timeline_path,
				    write_timeline(v, r, pid, title));
	if (!paths[0] && !paths[1] && !paths[2])
		return err;
	state = (void *)runner__analyzer(r, "cct");
	if (!state)
		log_err("--folded/--flamegraph/--pprof: the cct analyzer did not run");
	else
		t = cct__merged(state); /* NULL: it logged why */
	for (i = 0; i < 3; i++) {
		if (!paths[i])
			continue;
		e = !state ? -EINVAL
		    : !t   ? -ENOMEM
			   : write_view(paths[i], opt[i], state, t, v, title, binary, duration_ns);
		if (outputs__note(outs, opt[i], paths[i], e))
			err = e;
	}
	return err;
}

int views__write_plots(const struct isp_opts *isp, struct runner *rn, struct outputs *outs)
{
	void *a = rn ? (void *)runner__analyzer(rn, "isp") : NULL;
	int n;

	if (!isp || !isp->plots_dir || !a)
		return 0;
	n = isp_plot__write(a, isp->plots_dir);
	outputs__note(outs, "--plots", isp->plots_dir, n < 0 ? n : 0);
	if (n < 0)
		return n; /* isp_plot__write said why */
	log_info("--plots: %d cost plot%s written to %s", n, n == 1 ? "" : "s", isp->plots_dir);
	return 0;
}
