// SPDX-License-Identifier: BSD-2-Clause
/* The rules are spelled out in shadow.h; this file follows them in order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/callvals.h"
#include "common/vec.h"
#include "pipeline/shadow.h"
#include "cabbpf_guard.h"

void shadow__init(struct shadow *s, uint32_t tid)
{
	memset(s, 0, sizeof(*s));
	s->tid = tid;
}

/* Keep a closed frame's values for the next frame that needs some. */
static void spare(struct shadow *s, struct shadow_frame *fr)
{
	if (!fr->vals)
		return;
	memcpy(fr->vals, &s->spare_vals, sizeof(s->spare_vals)); /* the list's link */
	s->spare_vals = fr->vals;
	fr->vals = NULL;
}

static void free_vals(struct shadow_frame *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(f[i].vals);
}

bool shadow__value(struct shadow *s, uint32_t fid, uint32_t meta, uint64_t w1, uint64_t w2)
{
	struct shadow_frame *f = s->depth ? &s->f[s->depth - 1] : NULL;

	if (!f || f->fid != fid)
		return false;
	if (!f->vals) {
		if (s->spare_vals) {
			f->vals = s->spare_vals;
			memcpy(&s->spare_vals, f->vals, sizeof(s->spare_vals));
		} else if (!(f->vals = malloc(sizeof(*f->vals)))) {
			s->c.nomem++;
			return false;
		}
		callvals__clear(f->vals);
	}
	callvals__put(f->vals, meta, w1, w2);
	return true;
}

void shadow__fini(struct shadow *s)
{
	size_t i;

	if (!s)
		return;
	while (s->spare_vals) {
		struct callvals *v = s->spare_vals;

		memcpy(&s->spare_vals, v, sizeof(s->spare_vals));
		free(v);
	}
	free_vals(s->f, s->depth);
	free_vals(s->alt_f, s->alt_n);
	for (i = 0; i < s->npark; i++) {
		free_vals(s->park[i].f, s->park[i].depth);
		free(s->park[i].f);
	}
	free(s->park);
	free(s->alt_f);
	free(s->f);
	hmap__fini(&s->active);
	hmap__fini(&s->seen);
	memset(s, 0, sizeof(*s));
}

/* Pop the top frame, closed by a return event at ts (matched) or found dead
 * at the event with timestamp ts (missing). */
static void pop(struct shadow *s, bool matched, uint64_t ts, const struct shadow_sink *k)
{
	struct shadow_frame *fr = &s->f[--s->depth];
	uint64_t dur = ts >= fr->ts ? ts - fr->ts : 0;
	/* Off-CPU time inside the frame: switch events arrive in program
	 * order, so every interval added since the entry lies inside it. */
	uint64_t off = s->off_ns - fr->off0;
	uint64_t cpu = dur > off ? dur - off : 0;
	uint64_t *act = hmap__find(&s->active, fr->fid);
	struct an_return r = {
		.tid = s->tid,
		.fid = fr->fid,
		.caller = fr->caller,
		.matched = matched,
		.recursive = fr->recursive,
		.ts = ts,
		.depth = (uint32_t)s->depth,
		.gen = s->gen,
		.frames = s->f,
	};

	if (fr->ret)
		s->nret--;
	if (act && *act)
		(*act)--;
	/* Exact when matched; otherwise an upper bound (up to the event that
	 * found the frame dead, or the end of the run), as charged to the
	 * parent below: analyzers of exact times read them only when
	 * matched, a tree uses them so a frame still holds its children. */
	r.incl_ns = dur;
	r.self_ns = dur > fr->child_ns ? dur - fr->child_ns : 0;
	r.cpu_incl_ns = cpu;
	r.cpu_self_ns = cpu > fr->child_cpu_ns ? cpu - fr->child_cpu_ns : 0;
	r.samples_self = fr->samples;
	r.samples_incl = fr->samples + fr->child_samples;
	if (s->aft_in && fr->fid < s->naft) {
		r.aft_self_ns = s->aft_in[fr->fid] + fr->aft_child_out;
		r.aft_incl_ns = s->aft_in[fr->fid] + fr->aft_child_incl;
		/* its entry's; its return's below, where a traced caller
		 * has it taken out (an untraced one's time is no traced
		 * function's: nothing is taken out of it) */
		s->c.aft_ns += s->aft_in[fr->fid];
	}
	if (fr->inherited) {
		/* the parent's call (FORKS): counted in c.inherited at the
		 * fork; the child's own return closed it, or it ends open
		 * (times up to the end, for a tree) or dead */
		r.inherited = true;
		r.matched = false;
		if (matched)
			s->c.inherited_matched++;
		else if (s->closing_open)
			r.open = true;
	} else if (matched) {
		s->c.matched++;
	} else if (s->closing_open) {
		r.open = true; /* the end of the run, not a lost return */
	} else if (s->exec_closing) {
		s->c.exec++;
	} else if (fr->lost) {
		r.switched = true;
		s->c.switched++;
	} else if (fr->noret) {
		/* counted at its entry (c.noret): no return was ever due */
	} else if (s->unwinding) {
		r.unwound = true;
		s->c.unwound++;
	} else if (fr->epoch != s->epoch) {
		r.sampled = true;
		s->c.sampled++;
	} else if (fr->opener) {
		s->c.window_start++; /* WINDOW START (shadow.h) */
	} else {
		s->c.missing++;
	}
	/* Charge the parent for this child, also for a missing one (then dur
	 * is an upper bound), so the parent's self time excludes it. */
	if (s->depth) {
		s->f[s->depth - 1].child_ns += dur;
		s->f[s->depth - 1].child_cpu_ns += cpu;
		s->f[s->depth - 1].child_samples += r.samples_incl;
		if (s->aft_out && fr->fid < s->naft) {
			uint64_t out = s->aft_out[fr->fid];

			s->f[s->depth - 1].aft_child_out += out;
			s->f[s->depth - 1].aft_child_incl += r.aft_incl_ns + out;
			s->c.aft_ns += out;
		}
	}
	k->on_return(k->ctx, &r);
	spare(s, fr);
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

/* Whether frame f was unwound by the exception in flight (thrown, not yet
 * caught): it was entered before the throw, so no code of its own runs
 * until a catch, only the landing pads of the frames being unwound, whose
 * calls at f's slot come from f's caller: f is dead, not a tail caller. */
static bool in_flight_victim(const struct shadow *s, const struct shadow_frame *f)
{
	return s->unwinding && (!s->caught || s->jumped) && f->throws != s->throws;
}

/* ENTRY rule 2 by the entry's slot word (CABBPF_SLOT_*): 0 when frame f at
 * the entry's slot is alive (the slot holds the trampoline: a live frame
 * armed it, and the entry is its tail callee), 1 when it is dead (the slot
 * holds another return address than f's own: a call overwrote it; or f's
 * return was armed, so that alive it would have left the trampoline
 * there: the same call site called again), -1 when the word does not tell
 * (not read, or f's own address and f's return not armed: its tail call,
 * or its call site calling again). */
static int slot_says(const struct shadow_frame *f, uint32_t slot)
{
	if (!(slot & CABBPF_SLOT_KNOWN))
		return -1;
	if (slot & CABBPF_SLOT_ARMED)
		return 0;
	if ((f->slot & CABBPF_SLOT_KNOWN) && f->slot != slot)
		return 1;
	if (f->ret && !f->lost && !f->noret)
		return 1;
	return -1;
}

/* After a catch, the first call or return event has popped every frame
 * the exception unwound: unwinding is over. */
static void end_unwinding(struct shadow *s)
{
	if (s->caught)
		s->unwinding = s->caught = s->jumped = false;
}

static int push(struct shadow *s, const struct shadow_frame *fr)
{
	struct shadow_frame *nf;
	uint64_t *act;
	int err;

	nf = vec__grow(s->f, &s->cap, s->depth + 1, sizeof(*nf), 64);
	if (!nf)
		return -ENOMEM;
	s->f = nf;
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

/* --budget: whether some function's probes were out in the thread's
 * current epoch (pipeline/shadow.h, BUDGET). The loader sets the bit
 * before the epoch opens, and its events come after: acquire pairs with
 * its release. */
static bool epoch_partial(const struct shadow *s)
{
	uint32_t e = s->epoch & 0xffffff;

	return s->partial &&
	       (__atomic_load_n(&s->partial[e >> 3], __ATOMIC_ACQUIRE) >> (e & 7)) & 1;
}

/* Sampling: the caller of a call at entry slot sp (pipeline/shadow.h,
 * SAMPLING). Remembers the slots of calls whose caller was known. */
static uint32_t resumed_caller(struct shadow *s, uint64_t sp)
{
	uint64_t top_sp = s->depth ? s->f[s->depth - 1].sp : 0, *v;
	uint64_t key = (sp * 0x9E3779B97F4A7C15ULL) ^ top_sp;
	bool known = !epoch_partial(s) &&
		     (s->epoch == 1 || (s->depth && s->f[s->depth - 1].epoch == s->epoch));

	if (known) {
		/* Out of memory only loses a later recovery. */
		(void)hmap__upsert(&s->seen, key, &v);
		return shadow__top(s);
	}
	return hmap__find(&s->seen, key) ? shadow__top(s) : AN_RESUMED;
}

/* Below, with the other GUARD rules. */
static void alt_check(struct shadow *s, uint64_t sp, uint64_t ts, const struct shadow_sink *k);
static void alt_end(struct shadow *s, uint64_t ts, const struct shadow_sink *k);

int shadow__entry(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts,
		  const struct shadow_sink *k)
{
	return shadow__entry_slot(s, fid, sp, ts, false, 0, k);
}

int shadow__entry_noret(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts, bool noret,
			const struct shadow_sink *k)
{
	return shadow__entry_slot(s, fid, sp, ts, noret, 0, k);
}

int shadow__entry_slot(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts, bool noret,
		       uint32_t slot, const struct shadow_sink *k)
{
	struct shadow_frame fr;
	struct an_call c;
	bool unwound = false;
	uint32_t own;
	int err;

	alt_check(s, sp, ts, k);
	chain_check(s, false, sp, ts, k);
	/* Rule 1: frames below the new return-address slot are dead. */
	while (s->depth && s->f[s->depth - 1].sp < sp) {
		if (s->f[s->depth - 1].ret)
			unwound = true;
		pop(s, false, ts, k);
	}
	/* Rule 2: an equal slot is a tail caller unless it cannot be one:
	 * the slot's word tells when it can; else the rules of shadow.h. */
	while (s->depth && s->f[s->depth - 1].sp == sp) {
		const struct shadow_frame *t = &s->f[s->depth - 1];
		int dead = slot_says(t, slot);

		if (dead < 0)
			dead = !t->ret || unwound || t->epoch != s->epoch || in_flight_victim(s, t);
		if (!dead)
			break;
		pop(s, false, ts, k);
	}
	end_unwinding(s);
	/* The frame's own return address: the one the call pushed, or, for
	 * a tail callee, its tail caller's (the slot it reuses). */
	own = slot & CABBPF_SLOT_ARMED
		      ? (s->depth && s->f[s->depth - 1].sp == sp ? s->f[s->depth - 1].slot : 0)
		      : slot & (CABBPF_SLOT_KNOWN | CABBPF_SLOT_TAG_MASK << CABBPF_SLOT_TAG_SHIFT);

	c = (struct an_call){
		.tid = s->tid,
		/* After a window that was not the first, a caller entered
		 * while tracing was off may sit between the top frame (or the
		 * bottom of the stack) and this call: not known, unless the
		 * stack pointers say otherwise (resumed_caller). */
		.caller = s->epoch ? resumed_caller(s, sp) : shadow__top(s),
		.callee = fid,
		.depth = (uint32_t)s->depth,
		.epoch = s->epoch,
		.ts = ts,
		.frames = s->f,
		.gen = s->gen,
	};
	fr = (struct shadow_frame){
		.sp = sp,
		.ts = ts,
		.off0 = s->off_ns,
		.fid = fid,
		.caller = c.caller,
		.epoch = s->epoch,
		.throws = s->throws,
		.slot = own,
		/* The kernel checks its depth before it cleans up dead return
		 * instances; live frames are the best estimate we have. */
		.ret = !noret && s->nret < SHADOW_URETPROBE_DEPTH,
		.noret = noret,
		/* WINDOW START (shadow.h): a window's epochs carry events of
		 * every function (budget: not a partial epoch) */
		.opener = s->epoch && s->epoch != s->entry_epoch && !epoch_partial(s),
	};
	s->entry_epoch = s->epoch;
	if (noret)
		s->c.noret++;
	else if (!fr.ret)
		s->c.depth_limited++;
	err = push(s, &fr);
	if (err)
		s->c.nomem++;
	c.frames = s->f; /* push may have moved them */
	k->on_call(k->ctx, &c);
	return err;
}

void shadow__return(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts,
		    const struct shadow_sink *k)
{
	uint64_t e;
	size_t i;

	alt_check(s, sp, ts, k);
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
	end_unwinding(s);
	/* Rule 2: find the frame of fid among those at this slot. */
	for (i = s->depth; i > 0 && s->f[i - 1].sp == e; i--)
		if (s->f[i - 1].fid == fid)
			break;
	if (i == 0 || s->f[i - 1].sp != e) {
		if (s->epoch > 1)
			s->c.orphan_sampled++;
		else if (!s->depth)
			s->c.before++; /* BEFORE THE START (shadow.h) */
		else
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

/* Close every frame of the current stack as switched. */
static void drop_all(struct shadow *s, uint64_t ts, const struct shadow_sink *k)
{
	size_t i;

	for (i = 0; i < s->depth; i++)
		s->f[i].lost = true;
	while (s->depth)
		pop(s, false, ts, k);
}

/* Take the current stack's frames off the books of live frames (recursion
 * and the uretprobe depth are per stack as far as the analysis goes). */
static void unlive(struct shadow *s, const struct shadow_frame *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t *act = hmap__find(&s->active, f[i].fid);

		if (act && *act)
			(*act)--;
		if (f[i].ret)
			s->nret--;
	}
}

/* Put frames f[0..n) back on the books of live frames. */
static void relive(struct shadow *s, const struct shadow_frame *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t *act;

		if (!hmap__upsert(&s->active, f[i].fid, &act))
			(*act)++;
		if (f[i].ret)
			s->nret++;
	}
}

/* Close parked stack i (its frames switched) and remove it; the current
 * stack is set aside meanwhile, so pop() reports the parked frames. */
static void close_park(struct shadow *s, size_t i, uint64_t ts, const struct shadow_sink *k)
{
	struct shadow_park p = s->park[i];
	struct shadow_frame *cur = s->f;
	size_t depth = s->depth, cap = s->cap;

	s->park[i] = s->park[--s->npark];
	unlive(s, cur, depth);
	s->gen++;
	s->f = p.f;
	s->depth = s->cap = p.depth;
	relive(s, p.f, p.depth);
	drop_all(s, ts, k);
	free(s->f);
	s->gen++;
	s->f = cur;
	s->depth = depth;
	s->cap = cap;
	relive(s, cur, depth);
}

/* Park the current stack under key; the thread goes on with an empty one. */
static int park(struct shadow *s, uint64_t key, uint64_t ts, const struct shadow_sink *k)
{
	struct shadow_park *v;
	size_t i;

	for (i = 0; i < s->depth; i++)
		s->f[i].lost = true;
	if (!s->depth)
		return 0;
	for (i = 0; i < s->npark; i++)
		if (s->park[i].key == key) /* a stale one: that context is gone */
			close_park(s, i--, ts, k);
	if (s->npark == SHADOW_MAX_PARKED)
		close_park(s, 0, ts, k);
	v = realloc(s->park, (s->npark + 1) * sizeof(*v));
	if (!v) {
		drop_all(s, ts, k);
		return -ENOMEM;
	}
	s->park = v;
	unlive(s, s->f, s->depth);
	v[s->npark].key = key;
	v[s->npark].f = s->f;
	v[s->npark++].depth = s->depth;
	s->gen++;
	s->f = NULL;
	s->depth = s->cap = 0;
	return 0;
}

/* The thread resumes the context parked under key, if any. */
static void unpark(struct shadow *s, uint64_t key, uint64_t ts, const struct shadow_sink *k)
{
	size_t i;

	for (i = 0; i < s->npark && s->park[i].key != key; i++)
		;
	if (i == s->npark)
		return;
	drop_all(s, ts, k); /* nothing should be here: the switch parked it */
	free(s->f);
	s->gen++;
	s->f = s->park[i].f;
	s->depth = s->cap = s->park[i].depth;
	s->park[i] = s->park[--s->npark];
	relive(s, s->f, s->depth);
}

/* Set the frames below alt_hi aside while a signal handler runs on the
 * alternate stack [lo, alt_hi) (ALTSTACK in shadow.h). Without memory
 * they stay, marked lost: the handler's first call closes them. */
static void alt_aside(struct shadow *s, uint64_t lo)
{
	size_t n = 0;

	while (n < s->depth && s->f[s->depth - 1 - n].sp < s->alt_hi)
		n++;
	if (!n || lo >= s->alt_hi || !(s->alt_f = malloc(n * sizeof(*s->alt_f)))) {
		s->alt_hi = 0;
		return;
	}
	s->depth -= n;
	memcpy(s->alt_f, s->f + s->depth, n * sizeof(*s->alt_f));
	unlive(s, s->alt_f, n);
	s->alt_n = n;
	s->alt_lo = lo;
	s->gen++;
}

/* The handler is over (or the thread ends): close what it left open on
 * the alternate stack, and put the set-aside frames back on top. */
static void alt_end(struct shadow *s, uint64_t ts, const struct shadow_sink *k)
{
	struct shadow_frame *nf;

	if (!s->alt_n) {
		s->alt_hi = 0;
		return;
	}
	while (s->depth && s->f[s->depth - 1].sp >= s->alt_lo && s->f[s->depth - 1].sp < s->alt_hi)
		pop(s, false, ts, k);
	s->alt_hi = 0;
	nf = vec__grow(s->f, &s->cap, s->depth + s->alt_n, sizeof(*nf), 64);
	if (nf) {
		s->f = nf;
		memcpy(s->f + s->depth, s->alt_f, s->alt_n * sizeof(*nf));
		relive(s, s->f + s->depth, s->alt_n);
		s->depth += s->alt_n;
	} else {
		s->c.nomem++; /* their returns were lost anyway */
		free_vals(s->alt_f, s->alt_n);
	}
	free(s->alt_f);
	s->alt_f = NULL;
	s->alt_n = 0;
	s->gen++;
}

/* An event at sp outside the handler's alternate stack ends it. */
static void alt_check(struct shadow *s, uint64_t sp, uint64_t ts, const struct shadow_sink *k)
{
	if (s->alt_n && (sp < s->alt_lo || sp >= s->alt_hi))
		alt_end(s, ts, k);
}

int shadow__guard(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts,
		  const struct shadow_sink *k)
{
	uint32_t fl = CABBPF_GUARD_FLAVOUR(fid);
	size_t i;

	if (CABBPF_GUARD_SITE(fid) != CABBPF_GS_ALTSTACK_BASE)
		alt_check(s, sp, ts, k);
	chain_check(s, false, sp, ts, k);
	switch (CABBPF_GUARD_SITE(fid)) {
	case CABBPF_GS_THROW:
	case CABBPF_GS_FORCED:
		/* A rethrow after a catch: the exception is in flight again
		 * (a catch's victims not found yet are still unwound). */
		s->unwinding = true;
		s->caught = false;
		s->throws++;
		return 0;
	case CABBPF_GS_JUMP:
		/* Thrown and caught at once: the first call or return event
		 * closes every frame the jump left, unwound (JUMP in shadow.h). */
		s->unwinding = s->caught = s->jumped = true;
		s->throws++;
		return 0;
	case CABBPF_GS_CATCH:
		/* Below the catch's own return slot nothing lives, nor at it
		 * a frame the exception in flight unwound (the catcher's
		 * callee that threw used that very slot): close those frames
		 * now, unwound after a THROW, missing otherwise. Any other
		 * frame at the slot jumped to the catch site and lives (CATCH
		 * in shadow.h). The catch functions are never traced
		 * themselves (user/trace/guard.h), so none of them is here. */
		while (s->depth && (s->f[s->depth - 1].sp < sp ||
				    (s->f[s->depth - 1].sp == sp &&
				     in_flight_victim(s, &s->f[s->depth - 1]))))
			pop(s, false, ts, k);
		/* The catch point may be deeper than some dead frames (Rust
		 * catches in a helper called from the catching frame): the
		 * next call or return event finds the rest, still unwound. */
		s->caught = s->unwinding;
		return 0;
	case CABBPF_GS_BACKTRACE:
		for (i = 0; i < s->depth; i++)
			s->f[i].lost = true;
		return 0;
	case CABBPF_GS_SWITCH:
		if (fl == CABBPF_GF_SWAPCONTEXT)
			return park(s, sp + 8, ts, k);
		drop_all(s, ts, k); /* setcontext, fcontext: nobody resumes it by sp */
		return 0;
	case CABBPF_GS_SWITCH_TO:
		unpark(s, sp, ts, k);
		return 0;
	case CABBPF_GS_ALTSTACK:
		/* A handler still set aside ended at alt_check above: this
		 * sp, a stack's top, is outside its alternate stack. */
		for (i = s->depth; i > 0 && s->f[i - 1].sp < sp; i--)
			s->f[i - 1].lost = true;
		s->alt_hi = sp;
		return 0;
	case CABBPF_GS_ALTSTACK_BASE:
		alt_aside(s, sp);
		return 0;
	default:
		return 0;
	}
}

int shadow__inherit(struct shadow *s, const struct shadow_frame *f, size_t n, uint64_t ts)
{
	size_t i;

	if (shadow__depth(s))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct shadow_frame fr = f[i];

		/* The child's own share of the call: its time from the fork,
		 * no child of the parent's, no value of the parent's. */
		fr.ts = ts;
		fr.off0 = s->off_ns;
		fr.child_ns = fr.child_cpu_ns = 0;
		fr.samples = fr.child_samples = 0;
		fr.aft_child_out = fr.aft_child_incl = 0;
		fr.throws = s->throws;
		fr.vals = NULL;
		fr.inherited = true;
		/* Its return may come (a return event matches it by sp and
		 * fid, as any), but is not counted on: the guard of a traced
		 * parent puts the child's inherited return addresses back at
		 * its birth (user/trace/guard.h, guard__forks), so the frame
		 * is then closed when found dead (ENTRY rules 1 and 2a). */
		fr.ret = false;
		if (push(s, &fr)) {
			s->c.nomem += n - i;
			return -ENOMEM;
		}
		s->c.inherited++;
	}
	/* Context-sensitive analyzers rebuild their path from the frames
	 * (struct an_call.gen). */
	s->gen++;
	return 0;
}

size_t shadow__open_inherited(const struct shadow *s)
{
	size_t n = 0, i, j;

	for (i = 0; i < s->depth; i++)
		n += s->f[i].inherited;
	for (i = 0; i < s->alt_n; i++)
		n += s->alt_f[i].inherited;
	for (j = 0; j < s->npark; j++)
		for (i = 0; i < s->park[j].depth; i++)
			n += s->park[j].f[i].inherited;
	return n;
}

void shadow__exec(struct shadow *s, uint64_t ts, const struct shadow_sink *k)
{
	s->exec_closing = true;
	shadow__abandon(s, ts, k);
	s->exec_closing = false;
	s->unwinding = s->caught = s->jumped = false;
}

void shadow__abandon(struct shadow *s, uint64_t ts, const struct shadow_sink *k)
{
	alt_end(s, ts, k);
	s->chain_sp = 0;
	while (s->depth)
		pop(s, false, ts, k);
	while (s->npark)
		close_park(s, s->npark - 1, ts, k);
}

void shadow__offcpu(struct shadow *s, uint64_t off_ns)
{
	s->off_ns += off_ns;
	s->c.offcpu_ns += off_ns;
	s->c.switches++;
}

size_t shadow__open_noret(const struct shadow *s)
{
	size_t n = 0, i, j;

	/* an inherited one is counted in c.inherited instead (FORKS) */
	for (i = 0; i < s->depth; i++)
		n += s->f[i].noret && !s->f[i].inherited;
	for (i = 0; i < s->alt_n; i++)
		n += s->alt_f[i].noret && !s->alt_f[i].inherited;
	for (j = 0; j < s->npark; j++)
		for (i = 0; i < s->park[j].depth; i++)
			n += s->park[j].f[i].noret && !s->park[j].f[i].inherited;
	return n;
}

void shadow__close_open(struct shadow *s, uint64_t ts, const struct shadow_sink *k)
{
	s->chain_sp = 0;
	s->closing_open = true;
	while (s->depth)
		pop(s, false, ts, k);
	s->closing_open = false;
}
