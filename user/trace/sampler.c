// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "pipeline/record.h"
#include "user/trace/progress.h"
#include "user/trace/sampler.h"
#include "user/trace/trace.h"

struct window {
	uint64_t start, end;	       /* ns since the run's start: the epoch stores */
	uint64_t pstart, pend;	       /* the target's progress then (ns) */
	uint64_t attach_ns, detach_ns; /* putting the probes in, taking them out */
	/* the probes' share of its progress (ns), and its systematic error
	 * (one sign) */
	struct progress_leak leak;
};

struct sampler {
	struct sampler_opts o;
	struct trace *tr;
	uint64_t t0;	       /* the run's start, CLOCK_MONOTONIC ns */
	struct window *w;      /* w[epoch - 1] */
	uint64_t *won;	       /* [n], for struct an_windows: each window's on-time */
	double *won_sd;	       /* [n], its systematic error (an_windows.on_sd) */
	bool clock;	       /* the target's user-mode time is measured (else wall) */
	uint64_t p0;	       /* the progress at the start, ns */
	bool by_progress;      /* the estimates are by progress (else wall time) */
	uint32_t n, cap;
	bool on;   /* a window is open */
	bool duty; /* the duty cycle drives the toggles */
	int req;   /* -1 none, 0 off, 1 on (sampler__request) */
	uint64_t period_ns, on_len_ns;
	uint64_t next_ns; /* the duty cycle's next toggle, since t0 */
	struct an_windows aw;
	uint64_t wall_ns; /* the run */
	uint64_t p_total; /* the target's progress over the run, ns */
	bool failed;	  /* an attach failed: no more windows */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The target's progress so far, ns (trace__progress_ns). */
static uint64_t progress_now(const struct sampler *s)
{
	uint64_t ns;

	trace__progress_ns(s->tr, &ns);
	return ns;
}

static int grow(struct sampler *s)
{
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 64;
		struct window *w = realloc(s->w, cap * sizeof(*w));

		if (!w)
			return -ENOMEM;
		s->w = w;
		s->cap = cap;
	}
	memset(&s->w[s->n], 0, sizeof(s->w[s->n]));
	return 0;
}

uint64_t sampler__now(void)
{
	return mono_ns();
}

int sampler__new(const struct sampler_opts *o, struct trace *tr, uint64_t attach_ns,
		 struct sampler **out)
{
	struct sampler *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->tr = tr;
	/* Without a progress measure, wall time (trace__attach said so). */
	s->clock = trace__progress_ns(tr, &s->p0);
	s->t0 = mono_ns();
	s->req = -1;
	s->duty = o->pct > 0 && o->pct < 100 && o->period_ms;
	s->period_ns = (uint64_t)o->period_ms * 1000000ULL;
	s->on_len_ns = (uint64_t)((double)s->period_ns * o->pct / 100.0);
	if (!o->start_disabled) {
		/* trace__attach put the probes in: open window 1. */
		if (grow(s)) {
			free(s);
			return -ENOMEM;
		}
		trace__set_epoch(tr, 1);
		s->w[0].start = mono_ns() - s->t0;
		s->w[0].pstart = s->p0;
		s->w[0].attach_ns = attach_ns;
		s->n = 1;
		s->on = true;
		s->next_ns = s->w[0].start + s->on_len_ns;
	} else {
		s->duty = false; /* the user turns it on */
	}
	*out = s;
	return 0;
}

void sampler__request(struct sampler *s, bool on)
{
	if (s)
		s->req = on;
}

static int open_window(struct sampler *s)
{
	uint64_t a0;
	int err;

	if (s->failed || s->n >= REC_EPOCH_MASK)
		return 0;
	err = grow(s);
	if (err)
		return err;
	a0 = mono_ns();
	err = trace__resume(s->tr);
	if (err) {
		log_err("sampling: putting the probes back failed (%s): tracing stays off",
			strerror(-err));
		s->failed = true;
		return err;
	}
	s->w[s->n].attach_ns = mono_ns() - a0;
	/* Every probe is in: the window opens now, all at once. */
	trace__set_epoch(s->tr, s->n + 1);
	s->w[s->n].start = mono_ns() - s->t0;
	s->w[s->n].pstart = progress_now(s);
	s->n++;
	s->on = true;
	log_debug("sampling: window %" PRIu32 " on at %.3f s (attach %.3f ms)", s->n,
		  s->w[s->n - 1].start / 1e9, s->w[s->n - 1].attach_ns / 1e6);
	return 0;
}

static void close_window(struct sampler *s, bool detach)
{
	struct window *w = &s->w[s->n - 1];
	uint64_t d0;

	/* Closed at once: from here the probes emit nothing, also while
	 * they are being taken out. */
	trace__set_epoch(s->tr, 0);
	w->end = mono_ns() - s->t0;
	w->pend = progress_now(s);
	s->on = false;
	if (!detach)
		return;
	d0 = mono_ns();
	(void)trace__pause(s->tr); /* cannot fail once sampling is on */
	w->detach_ns = mono_ns() - d0;
	log_debug("sampling: window %" PRIu32 " off at %.3f s (detach %.3f ms)", s->n, w->end / 1e9,
		  w->detach_ns / 1e6);
}

int sampler__tick(struct sampler *s, uint64_t now_ns)
{
	uint64_t t = now_ns - s->t0;
	int err = 0;

	if (s->req >= 0) {
		bool want = s->req;

		s->req = -1;
		if (s->duty)
			log_info("sampling: the duty cycle stops; SIGUSR1/SIGUSR2 turn tracing "
				 "on and off from now on");
		s->duty = false;
		if (want && !s->on)
			err = open_window(s);
		else if (!want && s->on)
			close_window(s, true);
		return err;
	}
	if (!s->duty || t < s->next_ns)
		return 0;
	if (s->on) {
		close_window(s, true);
		/* The next window starts at the next period boundary. */
		s->next_ns = (t / s->period_ns + 1) * s->period_ns;
	} else {
		err = open_window(s);
		s->next_ns = mono_ns() - s->t0 + s->on_len_ns;
	}
	return err;
}

void sampler__hit(struct sampler *s, uint32_t epoch, uint32_t fid)
{
	if (s && s->o.hit_leak && epoch >= 1 && epoch <= s->n && fid < s->o.nfuncs) {
		s->w[epoch - 1].leak.ns += s->o.hit_leak[fid].ns;
		/* Every hit of a class is corrected by the same calibrated
		 * figure: its error adds up linearly, not in quadrature. */
		s->w[epoch - 1].leak.sd_ns += s->o.hit_leak[fid].sd_ns;
	}
}

/* What the progress clock counted in window w, ns. */
static uint64_t counted(const struct window *w)
{
	return w->pend > w->pstart ? w->pend - w->pstart : 0;
}

/* Window w's progress, ns: what its clock counted less what the probes'
 * traps added to it, rounded. */
static uint64_t progress_of(const struct window *w)
{
	double t = (double)counted(w) - w->leak.ns;

	return t > 0 ? (uint64_t)(t + 0.5) : 0;
}

void sampler__finish(struct sampler *s, uint64_t end_ns)
{
	uint64_t p1, leak = 0;
	uint32_t i;

	if (!s)
		return;
	if (s->on)
		close_window(s, false); /* trace__detach removes the probes next */
	p1 = progress_now(s);
	/* By the target's progress when there is enough of it to count
	 * (user/trace/progress.h PROGRESS_MIN_TICKS). */
	s->by_progress = s->clock && p1 >= s->p0 + PROGRESS_MIN_TICKS * PROGRESS_TICK_NS;
	free(s->won);
	free(s->won_sd);
	s->won = calloc(s->n ? s->n : 1, sizeof(*s->won));
	s->won_sd = calloc(s->n ? s->n : 1, sizeof(*s->won_sd));
	for (i = 0; s->won && s->won_sd && i < s->n; i++) {
		const struct window *w = &s->w[i];

		if (s->by_progress) {
			s->won[i] = progress_of(w);
			s->won_sd[i] = w->leak.sd_ns;
			/* what came off, in the run's own count too */
			leak += (uint64_t)fmax(0.0, fmin(w->leak.ns, (double)counted(w)));
		} else
			s->won[i] = w->end > w->start ? w->end - w->start : 0;
	}
	s->aw.n = s->won && s->won_sd ? s->n : 0;
	s->aw.on = s->won;
	s->aw.on_sd = s->won_sd;
	s->wall_ns = end_ns - s->t0;
	s->aw.total = s->by_progress ? p1 - s->p0 - (leak < p1 - s->p0 ? leak : p1 - s->p0)
				     : s->wall_ns;
	s->aw.measure = s->by_progress ? "user CPU" : "wall";
	s->p_total = p1 - s->p0;
}

const struct an_windows *sampler__windows(const struct sampler *s)
{
	return s ? &s->aw : NULL;
}

/* The windows' wall time, summed. */
static uint64_t on_wall(const struct sampler *s)
{
	uint64_t on = 0;
	uint32_t i;

	for (i = 0; i < s->n; i++)
		on += s->w[i].end > s->w[i].start ? s->w[i].end - s->w[i].start : 0;
	return on;
}

int sampler__json(const struct sampler *s, struct json *w)
{
	uint32_t i;

	json__key(w, "sampling");
	json__begin_object(w);
	json__kv_double(w, "percent", s->o.pct);
	json__kv_u64(w, "period_ms", s->o.period_ms);
	json__kv_bool(w, "start_disabled", s->o.start_disabled);
	json__kv_u64(w, "run_ns", s->wall_ns);
	json__kv_u64(w, "on_ns", on_wall(s));
	json__kv_string(w, "measure", s->by_progress ? "user_cpu" : "wall");
	json__kv_u64(w, "user_cpu_ns", s->p_total);
	json__kv_double(w, "fraction",
			s->aw.total ? (double)sampling__on(&s->aw) / (double)s->aw.total : 0.0);
	json__key(w, "windows");
	json__begin_array(w);
	for (i = 0; i < s->n; i++) {
		const struct window *x = &s->w[i];

		json__begin_object(w);
		json__kv_u64(w, "epoch", i + 1);
		json__kv_u64(w, "start_ns", x->start);
		json__kv_u64(w, "end_ns", x->end);
		json__kv_u64(w, "on_ns", x->end > x->start ? x->end - x->start : 0);
		json__kv_u64(w, "user_cpu_ns", counted(x));
		json__kv_u64(w, "probes_ns", (uint64_t)(x->leak.ns + 0.5));
		json__kv_u64(w, "probes_sd_ns", (uint64_t)(x->leak.sd_ns + 0.5));
		json__kv_u64(w, "attach_ns", x->attach_ns);
		json__kv_u64(w, "detach_ns", x->detach_ns);
		json__end_object(w);
	}
	json__end_array(w);
	return json__end_object(w);
}

void sampler__text(const struct sampler *s, FILE *f)
{
	uint64_t on = on_wall(s), att = 0, det = 0;
	uint32_t i;

	for (i = 0; i < s->n; i++) {
		att += s->w[i].attach_ns;
		det += s->w[i].detach_ns;
	}
	fprintf(f,
		"sampling: on %.1f%% of %.3f s in %" PRIu32 " window%s; off between them, "
		"probes out of the target (putting them back in took %.3f s in all, with the "
		"kernel's release of the previous ones; taking them out %.3f s)\n",
		s->wall_ns ? 100.0 * (double)on / (double)s->wall_ns : 0.0,
		(double)s->wall_ns / 1e9, s->n, s->n == 1 ? "" : "s", att / 1e9, det / 1e9);
	/* A program that computed most of a run too short to measure its
	 * progress: inside the windows its probes set its pace, and an
	 * estimate by wall time is low by up to the slowdown they cause
	 * (1000x for a 3 ns function probed at 7 us a call). */
	if (!s->by_progress && s->wall_ns &&
	    (double)s->p_total >= 0.25 * (double)s->wall_ns)
		fprintf(f,
			"sampling: estimates by wall time (the target used %.2f s of CPU, "
			"under the %.1f s needed to measure its progress) although it "
			"computed for %.0f%% of the run: where its probes slow it inside the "
			"windows they are LOW, up to that slowdown; sample a longer run\n",
			(double)s->p_total / 1e9,
			PROGRESS_MIN_TICKS * (double)PROGRESS_TICK_NS / 1e9,
			100.0 * (double)s->p_total / (double)s->wall_ns);
}


void sampler__free(struct sampler *s)
{

	if (!s)
		return;
	free(s->w);
	free(s->won);
	free(s->won_sd);
	free(s);
}
