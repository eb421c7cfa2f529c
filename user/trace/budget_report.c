// SPDX-License-Identifier: BSD-2-Clause
/*
 * The budget's report: the estimated overhead, the epochs and the
 * functions' modes, as text and JSON. budget_int.h lists the budget's
 * files.
 */
#include <math.h>
#include <stdio.h>

#include "common/json.h"
#include "user/trace/budget_int.h"

/* ----------------------------------------------------------- report -- */

/* The estimated overhead: the probes' cost over the target's own
 * progress (model), as a fraction. */
static double overhead(const struct budget *b)
{
	double nat = (double)b->cpu_ns - b->trap;

	return nat > 0 ? b->trap / nat : 0;
}

int budget__json(const struct budget *b, struct json *w)
{
	uint32_t i, f;
	char buf[24];

	json__key(w, "budget");
	json__begin_object(w);
	json__kv_double(w, "percent", b->o.pct);
	json__kv_u64(w, "period_ms", b->o.period_ms);
	json__kv_string(w, "measure", b->by_progress ? "user_cpu" : "wall");
	json__kv_u64(w, "run_ns", b->wall_ns);
	json__kv_u64(w, "cpu_ns", b->cpu_ns);
	json__kv_u64(w, "probe_ns_est", (uint64_t)llround(b->trap));
	json__kv_double(w, "cost_margin", COST_MARGIN);
	json__kv_u64(w, "gated_hits", b->ngated);
	json__kv_double(w, "overhead_est", overhead(b));
	json__kv_u64(w, "changes", b->swaps);
	json__kv_u64(w, "guard_changes", b->trips);
	json__kv_u64(w, "windows", b->nwin);
	json__kv_u64(w, "windows_cut", b->ncut);
	json__key(w, "epochs");
	json__begin_array(w);
	for (i = 0; i < b->nep; i++) {
		const struct bepoch *e = &b->ep[i];
		uint32_t nx = 0, ns = 0;

		for (f = 0; f < b->o.nfuncs; f++) {
			nx += b->snaps[e->snap][f] == AN_B_EXACT;
			ns += b->snaps[e->snap][f] == AN_B_SAMPLED;
		}
		json__begin_object(w);
		json__kv_u64(w, "epoch", i + 1);
		json__kv_u64(w, "start_ns", e->t0);
		json__kv_u64(w, "end_ns", e->t1);
		json__kv_u64(w, "user_cpu_ns",
			     (e->p1 > e->p0 ? e->p1 - e->p0 : 0) * PROGRESS_TICK_NS);
		json__kv_u64(w, "cpu_ns", e->c1 > e->c0 ? e->c1 - e->c0 : 0);
		json__kv_u64(w, "probe_ns_est", (uint64_t)llround(e->m1 - e->m0));
		json__kv_bool(w, "window", e->window);
		json__kv_bool(w, "cut", e->cut);
		json__kv_u64(w, "exact", nx);
		json__kv_u64(w, "sampled", ns);
		json__end_object(w);
	}
	json__end_array(w);
	json__key(w, "functions");
	json__begin_array(w);
	for (f = 0; f < b->o.nfuncs; f++) {
		uint64_t xn = 0, sn = 0, on = 0;

		if (b->mode[f] == AN_B_NONE)
			continue;
		for (i = 0; i < b->nep; i++) {
			const struct bepoch *e = &b->ep[i];
			uint64_t d = e->t1 > e->t0 ? e->t1 - e->t0 : 0;

			if (b->snaps[e->snap][f] == AN_B_EXACT)
				xn += d;
			else if (b->snaps[e->snap][f] == AN_B_SAMPLED) {
				sn += d;
				on += e->window ? d : 0;
			}
		}
		json__begin_object(w);
		json__kv_string(w, "name",
				b->o.names && b->o.names[f]
					? b->o.names[f]
					: (snprintf(buf, sizeof(buf), "fid#%u", f), buf));
		json__kv_u64(w, "fid", f);
		json__kv_string(w, "mode", b->mode[f] == AN_B_EXACT ? "exact" : "sampled");
		json__kv_u64(w, "exact_ns", xn);
		json__kv_u64(w, "sampled_ns", sn);
		json__kv_u64(w, "window_ns", on);
		json__kv_double(w, "cost_ns", b->o.cost_ns[f]);
		json__end_object(w);
	}
	json__end_array(w);
	return json__end_object(w);
}

void budget__text(const struct budget *b, FILE *f)
{
	uint32_t i, fid, always = 0, some = 0;
	uint64_t on = 0;

	for (fid = 0; fid < b->o.nfuncs; fid++) {
		bool s = false;

		if (b->mode[fid] == AN_B_NONE)
			continue;
		for (i = 0; i < b->nep && !s; i++)
			s = b->snaps[b->ep[i].snap][fid] == AN_B_SAMPLED;
		some += s;
		always += !s;
	}
	for (i = 0; i < b->nep; i++)
		on += b->ep[i].window && b->ep[i].t1 > b->ep[i].t0 ? b->ep[i].t1 - b->ep[i].t0 : 0;
	fprintf(f,
		"budget: %.4g%% of the target's CPU time; its probes cost an estimated %.1f%% "
		"(%.3f s of %.3f s CPU, the measured costs taken %.0f%% dearer); %u function%s exact all along, %u sampled some of the "
		"time, in %u window%s (%.1f%% of %.3f s)%s; %u change%s of the exact set\n",
		b->o.pct, 100 * overhead(b), b->trap / 1e9, (double)b->cpu_ns / 1e9,
		100 * (COST_MARGIN - 1), always,
		always == 1 ? "" : "s", some, b->nwin, b->nwin == 1 ? "" : "s",
		b->wall_ns ? 100.0 * (double)on / (double)b->wall_ns : 0.0,
		(double)b->wall_ns / 1e9, b->ncut ? ", some cut short" : "", b->swaps,
		b->swaps == 1 ? "" : "s");
}
