/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sampling toggles (Laurenzano et al., PEBIL, section V): tracing on only in windows,
 * with every function probe removed in between (trace__pause: no
 * breakpoint left, the target runs at native speed), either on a duty
 * cycle (--sample P% over --sample-period MS) or by request (SIGUSR1 on,
 * SIGUSR2 off; --start-disabled starts off). Each window gets its own epoch
 * (1, 2, ...), so the analysis tells the windows apart, and the windows'
 * on-times feed the whole-run estimates (analyzers/sampling.h).
 *
 * A window is exactly the interval between two stores of the epoch the
 * probes read (trace__set_epoch): set once every probe is in, cleared
 * before they are taken out. Putting probes in and taking them out takes
 * time (closing a link waits for the kernel's grace periods: 50-100 ms
 * here, even for one function); the probes emit nothing meanwhile, and
 * the report gives those times.
 *
 * All calls from the loader's main thread.
 */
#ifndef USER_TRACE_SAMPLER_H
#define USER_TRACE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "analyzers/sampling.h"
#include "user/trace/progress.h"

struct trace;
struct json;

struct sampler_opts {
	double pct;	      /* duty cycle, 0 < pct <= 100; 0: no duty cycle */
	uint32_t period_ms;   /* duty cycle period (> 0 with pct) */
	bool start_disabled;  /* off until the first request (SIGUSR1) */
	/* [nfuncs] or NULL: what one probe hit of each function adds to the
	 * progress clock, taken out of each window's progress (sampler__hit);
	 * its error widens the estimates' intervals (analyzers/sampling.h) */
	const struct progress_leak *hit_leak;
	uint32_t nfuncs;
};

struct sampler;

/* The run starts now (for a launched command: just before it is let go).
 * tr was attached with o.sampling (and o.start_paused when
 * start_disabled), taking attach_ns; window 1 opens now unless
 * start_disabled. Returns 0 and *out (free with sampler__free), or
 * -ENOMEM. */
int sampler__new(const struct sampler_opts *o, struct trace *tr, uint64_t attach_ns,
		 struct sampler **out);

/* One probe hit (an entry or a return event) of function fid in window
 * epoch (the event's), for hit_leak. The loader's thread. */
void sampler__hit(struct sampler *s, uint32_t epoch, uint32_t fid);

/* CLOCK_MONOTONIC in ns (the clock of the probes' timestamps). */
uint64_t sampler__now(void);

/* Ask for tracing on (true) or off (a signal's request; the duty cycle,
 * if any, then stops: the user took over). Acted on at the next tick. */
void sampler__request(struct sampler *s, bool on);

/* Toggle as the duty cycle or a request says. Returns 0, or the
 * attach's -errno (logged; tracing then stays off). */
int sampler__tick(struct sampler *s, uint64_t now_ns);

/* The run ends at end_ns: close the open window (its probes are removed
 * by trace__detach, which the caller does next; end_ns is taken as the
 * middle of that). */
void sampler__finish(struct sampler *s, uint64_t end_ns);

/* The windows, for runner__set_windows. Valid until sampler__free. */
const struct an_windows *sampler__windows(const struct sampler *s);

/* Write key "sampling" into the open JSON object w: the options and every
 * window ({"epoch", "start_ns", "end_ns", "on_ns", "attach_ns",
 * "detach_ns"}, times from the run's start). Returns the writer's error. */
int sampler__json(const struct sampler *s, struct json *w);

/* One line for the text report's summary, into f. */
void sampler__text(const struct sampler *s, FILE *f);

void sampler__free(struct sampler *s);

#endif /* USER_TRACE_SAMPLER_H */
