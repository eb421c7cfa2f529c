// SPDX-License-Identifier: BSD-2-Clause
/* The rules are spelled out in shadow.h; this file follows them in order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/shadow.h"

void shadow__init(struct shadow *s, uint32_t tid)
{
	memset(s, 0, sizeof(*s));
	s->tid = tid;
}

void shadow__fini(struct shadow *s)
{
	if (!s)
		return;
	free(s->f);
	hmap__fini(&s->active);
	memset(s, 0, sizeof(*s));
}

/* Pop the top frame, closed by a return event at ts (matched) or found dead
 * at the event with timestamp ts (missing). */
static void pop(struct shadow *s, bool matched, uint64_t ts, const struct shadow_sink *k)
{
	struct shadow_frame *fr = &s->f[--s->depth];
	uint64_t dur = ts >= fr->ts ? ts - fr->ts : 0;
	uint64_t *act = hmap__find(&s->active, fr->fid);
	struct an_return r = {
		.tid = s->tid,
		.fid = fr->fid,
		.caller = fr->caller,
		.matched = matched,
		.recursive = fr->recursive,
		.ts = ts,
	};

	if (fr->ret)
		s->nret--;
	if (act && *act)
		(*act)--;
	if (matched) {
		r.incl_ns = dur;
		r.self_ns = dur > fr->child_ns ? dur - fr->child_ns : 0;
		s->c.matched++;
	} else {
		s->c.missing++;
	}
	/* Charge the parent for this child, also for a missing one (then dur
	 * is an upper bound), so the parent's self time excludes it. */
	if (s->depth)
		s->f[s->depth - 1].child_ns += dur;
	k->on_return(k->ctx, &r);
}

/* Rule 3 of RETURN: a frame left at the sp of the last matched return must
 * be a tail caller whose return is the very next event; if the next event
 * is anything else, that frame is dead. */
static void chain_check(struct shadow *s, bool is_return, uint64_t sp, uint64_t ts,
			const struct shadow_sink *k)
{
	uint64_t e;

	if (!s->chain_sp)
		return;
	e = s->chain_sp - 8;
	if (!(is_return && sp == s->chain_sp))
		while (s->depth && s->f[s->depth - 1].sp == e)
			pop(s, false, ts, k);
	s->chain_sp = 0;
}

static int push(struct shadow *s, const struct shadow_frame *fr)
{
	uint64_t *act;
	int err;

	if (s->depth == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		struct shadow_frame *nf = realloc(s->f, ncap * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		s->f = nf;
		s->cap = ncap;
	}
	err = hmap__upsert(&s->active, fr->fid, &act);
	if (err)
		return err;
	s->f[s->depth] = *fr;
	s->f[s->depth].recursive = *act > 0;
	(*act)++;
	s->depth++;
	if (fr->ret)
		s->nret++;
	return 0;
}

int shadow__entry(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts,
		  const struct shadow_sink *k)
{
	struct shadow_frame fr;
	struct an_call c;
	bool unwound = false;
	int err;

	chain_check(s, false, sp, ts, k);
	/* Rule 1: frames below the new return-address slot are dead. */
	while (s->depth && s->f[s->depth - 1].sp < sp) {
		if (s->f[s->depth - 1].ret)
			unwound = true;
		pop(s, false, ts, k);
	}
	/* Rule 2: an equal slot is a tail caller unless it cannot be one. */
	while (s->depth && s->f[s->depth - 1].sp == sp && (!s->f[s->depth - 1].ret || unwound))
		pop(s, false, ts, k);

	c = (struct an_call){
		.tid = s->tid,
		.caller = shadow__top(s),
		.callee = fid,
		.depth = (uint32_t)s->depth,
		.ts = ts,
	};
	fr = (struct shadow_frame){
		.sp = sp,
		.ts = ts,
		.fid = fid,
		.caller = c.caller,
		/* The kernel checks its depth before it cleans up dead return
		 * instances; live frames are the best estimate we have. */
		.ret = s->nret < SHADOW_URETPROBE_DEPTH,
	};
	if (!fr.ret)
		s->c.depth_limited++;
	err = push(s, &fr);
	if (err)
		s->c.nomem++;
	k->on_call(k->ctx, &c);
	return err;
}

void shadow__return(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts,
		    const struct shadow_sink *k)
{
	uint64_t e;
	size_t i;

	chain_check(s, true, sp, ts, k);
	if (sp < 8) {
		/* Not a user stack pointer: nothing can match it. */
		s->c.orphan++;
		return;
	}
	e = sp - 8;
	/* Rule 1: the thread's sp is above these frames already. */
	while (s->depth && s->f[s->depth - 1].sp < e)
		pop(s, false, ts, k);
	/* Rule 2: find the frame of fid among those at this slot. */
	for (i = s->depth; i > 0 && s->f[i - 1].sp == e; i--)
		if (s->f[i - 1].fid == fid)
			break;
	if (i == 0 || s->f[i - 1].sp != e) {
		s->c.orphan++;
		return;
	}
	while (s->depth > i)
		pop(s, false, ts, k);
	pop(s, true, ts, k);
	/* Rule 3: a frame left at this slot must return next. */
	if (s->depth && s->f[s->depth - 1].sp == e)
		s->chain_sp = sp;
}

void shadow__abandon(struct shadow *s, uint64_t ts, const struct shadow_sink *k)
{
	s->chain_sp = 0;
	while (s->depth)
		pop(s, false, ts, k);
}
