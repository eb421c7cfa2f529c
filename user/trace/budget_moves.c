// SPDX-License-Identifier: BSD-2-Clause
/*
 * The budget's moves: functions moved between exact and sampled (link
 * sets swapped in and out by group), and the sampling windows opened and
 * closed. budget_int.h lists the budget's files.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "user/trace/budget_int.h"

/* ------------------------------------------------------------ moves -- */

void budget_moves__count_modes(struct budget *b)
{
	uint32_t i;

	b->nexact = b->nsampled = 0;
	for (i = 0; i < b->o.nfuncs; i++) {
		b->nexact += b->mode[i] == AN_B_EXACT;
		b->nsampled += b->mode[i] == AN_B_SAMPLED;
	}
}

/* -v: the functions that changed mode, a few by name. */
static void log_moves(const struct budget *b, const char *why)
{
	char list[256];
	size_t len = 0;
	uint32_t i, up = 0, down = 0;

	list[0] = 0;
	for (i = 0; i < b->o.nfuncs; i++) {
		if (b->next[i] == b->mode[i])
			continue;
		up += b->next[i] == AN_B_EXACT;
		down += b->next[i] == AN_B_SAMPLED;
		if (len < sizeof(list) - 64 && b->o.names && b->o.names[i])
			len += (size_t)snprintf(
				list + len, sizeof(list) - len, "%s%c%s", len ? " " : "",
				b->next[i] == AN_B_EXACT ? '+' : '-', b->o.names[i]);
	}
	log_debug("budget: %s: %u exact again, %u sampled from now on (%s%s)", why, up, down, list,
		  len >= sizeof(list) - 64 ? " ..." : "");
}

/* A group not in use (nor in taken), the one left longest ago: a group
 * used again gets a new generation (user/trace/trace.h), 256 of them, so
 * its oldest links were taken out 32 x 256 link sets ago. CABBPF_NGROUPS
 * if none. */
static unsigned free_group(struct budget *b, uint32_t taken)
{
	uint32_t busy = b->live | taken | (b->window ? 1u << b->wg : 0);
	unsigned g, best = CABBPF_NGROUPS;

	for (g = 0; g < CABBPF_NGROUPS; g++)
		if (!(busy & (1u << g)) && (best == CABBPF_NGROUPS || b->used[g] < b->used[best]))
			best = g;
	if (best < CABBPF_NGROUPS)
		b->used[best] = ++b->uses;
	return best;
}

/* Take out the exact groups in drop (a mask), which the gate's last store
 * closed: out of the target now, released in a thread. */
static void drop_groups(struct budget *b, uint32_t drop)
{
	unsigned g;

	for (g = 0; g < CABBPF_NGROUPS; g++)
		if (drop & (1u << g))
			trace__detach_group(b->tr, g);
}

/* Put next[] and ngrp[] in force with one gate store, the exact groups
 * in being live | add and not drop: the groups added are in already,
 * the groups dropped go out after. Returns 0, or -errno (then the groups
 * added are taken out again and nothing changed). */
int budget_moves__commit(struct budget *b, uint32_t add, uint32_t drop, const char *why)
{
	uint32_t live = b->live;
	uint8_t *t;
	int err;

	log_moves(b, why);
	t = b->mode, b->mode = b->next, b->next = t;
	t = b->grp, b->grp = b->ngrp, b->ngrp = t;
	budget_moves__count_modes(b);
	b->live = (live | add) & ~drop;
	err = budget__new_epoch(b);
	if (err) {
		log_err("budget: %s: what is traced stays as it is from now on", strerror(-err));
		b->failed = true;
		t = b->mode, b->mode = b->next, b->next = t;
		t = b->grp, b->grp = b->ngrp, b->ngrp = t;
		budget_moves__count_modes(b);
		b->live = live;
		drop_groups(b, add);
		return err;
	}
	drop_groups(b, drop);
	b->swaps++;
	return 0;
}

/*
 * Put next[] in force (the period's choice): every bucket that loses a
 * function is rebuilt without it (its other functions go into a new group
 * beside it: they never miss a call), the functions becoming exact go
 * into a new group of their own; one gate store; the old buckets go out.
 * A bucket or the new group that cannot be made now (no free group, an
 * attach refused, sites still being released) leaves its functions as
 * they were. Returns 0 or -errno.
 */
int budget_moves__apply(struct budget *b, const char *why)
{
	uint32_t add = 0, drop = 0, i, n;
	unsigned k, g;
	int err;

	memcpy(b->ngrp, b->grp, b->o.nfuncs);
	for (k = 0; k < CABBPF_NGROUPS; k++) {
		bool loses = false;

		if (!(b->live & (1u << k)))
			continue;
		for (i = 0, n = 0; i < b->o.nfuncs; i++) {
			if (b->grp[i] != k)
				continue;
			loses |= b->next[i] != AN_B_EXACT;
			b->member[i] = b->next[i] == AN_B_EXACT;
			n += b->member[i];
		}
		if (!loses)
			continue;
		for (i = 0; i < b->o.nfuncs; i++)
			if (b->grp[i] != k)
				b->member[i] = 0;
		g = n ? free_group(b, add) : CABBPF_NGROUPS;
		if (n && (g == CABBPF_NGROUPS || trace__attach_group(b->tr, g, b->member))) {
			/* not now: the bucket stays as it is */
			for (i = 0; i < b->o.nfuncs; i++)
				if (b->grp[i] == k)
					b->next[i] = AN_B_EXACT;
			continue;
		}
		for (i = 0; i < b->o.nfuncs; i++)
			if (b->grp[i] == k)
				b->ngrp[i] = b->member[i] ? (uint8_t)g : BUDGET_NO_GROUP;
		if (n)
			add |= 1u << g;
		drop |= 1u << k;
	}
	for (i = 0, n = 0; i < b->o.nfuncs; i++) {
		b->member[i] = b->next[i] == AN_B_EXACT && b->mode[i] != AN_B_EXACT;
		n += b->member[i];
	}
	if (n) {
		g = free_group(b, add);
		err = g == CABBPF_NGROUPS ? -EBUSY : trace__attach_group(b->tr, g, b->member);
		for (i = 0; i < b->o.nfuncs; i++)
			if (b->member[i]) {
				if (err)
					b->next[i] = b->mode[i];
				else
					b->ngrp[i] = (uint8_t)g;
			}
		if (!err)
			add |= 1u << g;
	}
	if (!add && !drop)
		return 0;
	return budget_moves__commit(b, add, drop, why);
}

void budget_moves__open_window(struct budget *b, uint64_t t)
{
	uint32_t i;
	int err;

	unsigned g;

	/* Each window's links wait in a thread of their own for the kernel
	 * to release them, which can last as long as the target (see
	 * trace__attach_group): past a few hundred, no more windows. */
	if (trace__closing(b->tr) > MAX_CLOSING) {
		if (!b->closing_full)
			log_warn("budget: %u sets of probes still being released by the kernel: "
				 "no more windows (the sampled functions' counts are estimated "
				 "from those so far)",
				 trace__closing(b->tr));
		b->closing_full = true;
		b->want_window = false;
		return;
	}
	for (i = 0; i < b->o.nfuncs; i++)
		b->member[i] = b->mode[i] == AN_B_SAMPLED;
	g = free_group(b, 0);
	if (g == CABBPF_NGROUPS)
		return; /* the last window's probes are still being released */
	b->wg = g;
	err = trace__attach_group(b->tr, g, b->member);
	if (err) {
		log_err("budget: attaching the sampled functions failed (%s): no more windows",
			strerror(-err));
		b->failed = true;
		return;
	}
	b->window = true;
	b->want_window = false;
	if (budget__new_epoch(b)) {
		b->window = false;
		trace__detach_group(b->tr, b->wg);
		b->failed = true;
		return;
	}
	b->win_t0 = budget__mono_ns() - b->t0;
	b->win_m0 = b->trap;
	b->win_c0 = budget__cpu_ns(b);
	b->nwin++;
	log_debug("budget: window %u on at %.3f s for %.1f ms (%u sampled functions)", b->nwin,
		  (double)t / 1e9, (double)b->win_len / 1e6, b->nsampled);
}

void budget_moves__close_window(struct budget *b, uint64_t t, bool cut)
{
	uint64_t cpu = budget__cpu_ns(b);
	uint32_t i;

	b->window = false;
	(void)budget__new_epoch(b); /* at E2BIG the window stays in its epoch: still exact */
	if (cut) {
		b->ep[b->nep - 2].cut = true;
		b->ncut++;
	}
	for (i = 0; i < b->o.nfuncs; i++)
		b->member[i] = b->mode[i] == AN_B_SAMPLED;
	trace__detach_group(b->tr, b->wg);
	/* What a window costs per wall ns, for the next one's length. */
	if (t > b->win_t0)
		b->on_rate = (b->trap - b->win_m0) / (double)(t - b->win_t0);
	b->mk.wnat += fmax(0, (double)(cpu - b->win_c0) - (b->trap - b->win_m0));
	log_debug("budget: window %u off at %.3f s%s", b->nwin, (double)t / 1e9,
		  cut ? " (cut: over the budget)" : "");
}
