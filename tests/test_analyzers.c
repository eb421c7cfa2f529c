// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for analyzers/: shadow stack, count and callgraph analyzers,
 * the runner's per-thread ordering (through runner__feed and through real
 * per-processor CABs, also with several analyzer threads), JSON writer,
 * registry. No root, no kernel: event streams come from a small emulator of
 * a program plus the kernel's uprobe/uretprobe behaviour (below), and every
 * count is compared for equality with what the emulated program did.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "user/report/sec.h"
#include "analyzers/analyzer.h"
#include "analyzers/callgraph.h"
#include "analyzers/count.h"
#include "analyzers/latency.h"
#include "analyzers/replay.h"
#include "analyzers/sampling.h"
#include "common/hmap.h"
#include "common/xml.h"
#include "common/emit.h"
#include "common/json.h"
#include "pipeline/record.h"
#include "pipeline/runner.h"
#include "user/report/sections.h"
#include "pipeline/shadow.h"
#include "cab/cab.h"
#include "cabbpf_event.h"
#include "cabbpf_guard.h"

/* ------------------------------------------------------------ emulator -- */
/*
 * emu: one program thread with a real-looking x86-64 stack, and the kernel's
 * uretprobe bookkeeping as kernel/events/uprobes.c does it:
 *  - call: push the return address (sp -= 8, E = sp), entry event at E;
 *    a return instance is installed only if fewer than 64 are pending
 *    (checked before dead instances are cleaned up), and installing first
 *    drops instances that are no longer alive (E_new >= E_old; for a tail
 *    call "chained" E_new > E_old);
 *  - tail call: jmp from the current function to another; same slot E;
 *    chained when the slot already holds the trampoline;
 *  - return: through the trampoline (if the slot holds it) the kernel drops
 *    dead instances below and reports every instance at this slot,
 *    innermost first, at sp = E + 8;
 *  - longjmp: frames vanish, nothing is reported, instances stay until
 *    cleaned.
 * It also records the truth: calls per function and caller->callee edges by
 * the program's real stack.
 */
#define NF 8
#define ROOTI NF /* index of <root> in truth tables */
#define EMU_MAX 4096

struct ev {
	uint32_t kind, fid;
	uint64_t seq, ts, sp;
};

struct emu_frame {
	uint32_t fid;
	uint64_t E;	  /* return-address slot */
	uint64_t body_sp; /* sp inside the function */
	bool slot_tramp;  /* the slot holds the uretprobe trampoline */
};

struct emu {
	uint32_t tid;
	uint64_t seq, ts, sp;
	struct emu_frame st[EMU_MAX];
	int depth;
	struct {
		uint64_t E;
		uint32_t fid;
	} k[EMU_MAX]; /* kernel return instances, k[nk-1] innermost */
	int nk;
	bool drop_next; /* lose the next event (a full ring) */
	struct ev *ev;
	size_t nev, cap;
	/* truth */
	uint64_t calls[NF];
	uint64_t edges[NF + 1][NF];
	uint64_t returns; /* return events delivered */
	uint64_t frames;  /* frames entered */
};

static void emu_init(struct emu *e, uint32_t tid)
{
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	e->sp = 0x7ffff0000000ULL;
}

static void emu_fini(struct emu *e)
{
	free(e->ev);
	e->ev = NULL;
}

static void emit(struct emu *e, uint32_t kind, uint32_t fid, uint64_t sp)
{
	e->ts += 100;
	if (e->drop_next) {
		/* Dropped before the seq is taken: no hole, like the BPF side. */
		e->drop_next = false;
		return;
	}
	if (e->nev == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 256;
		e->ev = realloc(e->ev, e->cap * sizeof(*e->ev));
		ck_assert_ptr_nonnull(e->ev);
	}
	e->ev[e->nev++] = (struct ev){kind, fid, e->seq++, e->ts, sp};
	if (kind == CABBPF_EV_RETURN)
		e->returns++;
}

/* The kernel's prepare_uretprobe(): returns whether an instance was made. */
static bool k_entry(struct emu *e, uint64_t E, uint32_t fid, bool chained)
{
	if (e->nk >= SHADOW_URETPROBE_DEPTH)
		return false;
	while (e->nk && !(chained ? E <= e->k[e->nk - 1].E : E < e->k[e->nk - 1].E))
		e->nk--;
	e->k[e->nk].E = E;
	e->k[e->nk].fid = fid;
	e->nk++;
	return true;
}

static uint32_t emu_top(const struct emu *e)
{
	return e->depth ? e->st[e->depth - 1].fid : ROOTI;
}

static void emu_call(struct emu *e, uint32_t fid)
{
	struct emu_frame *f;

	ck_assert_int_lt(e->depth, EMU_MAX);
	e->calls[fid]++;
	e->edges[emu_top(e)][fid]++;
	e->frames++;
	e->sp -= 8;
	f = &e->st[e->depth++];
	f->fid = fid;
	f->E = e->sp;
	f->slot_tramp = k_entry(e, f->E, fid, false);
	emit(e, CABBPF_EV_ENTRY, fid, f->E);
	e->sp -= 32; /* the callee's own frame */
	f->body_sp = e->sp;
}

/* The current function jumps to fid, reusing its return-address slot. */
static void emu_tail(struct emu *e, uint32_t fid)
{
	struct emu_frame *prev = &e->st[e->depth - 1], *f;
	bool inst;

	e->calls[fid]++;
	e->edges[prev->fid][fid]++;
	e->frames++;
	e->sp = prev->E;
	inst = k_entry(e, prev->E, fid, prev->slot_tramp);
	f = &e->st[e->depth++];
	f->fid = fid;
	f->E = prev->E;
	f->slot_tramp = prev->slot_tramp || inst;
	emit(e, CABBPF_EV_ENTRY, fid, f->E);
	e->sp -= 32;
	f->body_sp = e->sp;
}

/* `ret` from the current function (and the tail chain that shares its slot). */
static void emu_ret(struct emu *e)
{
	struct emu_frame *f = &e->st[e->depth - 1];
	uint64_t E = f->E;
	bool tramp = f->slot_tramp;

	while (e->depth && e->st[e->depth - 1].E == E)
		e->depth--;
	e->sp = E + 8;
	if (!tramp)
		return;
	while (e->nk && e->k[e->nk - 1].E < E)
		e->nk--; /* longjmp'd over: freed silently */
	while (e->nk && e->k[e->nk - 1].E == E) {
		emit(e, CABBPF_EV_RETURN, e->k[e->nk - 1].fid, E + 8);
		e->nk--;
	}
}

/* longjmp to a setjmp in the frame at index keep - 1. */
static void emu_longjmp(struct emu *e, int keep)
{
	e->depth = keep;
	e->sp = e->st[keep - 1].body_sp;
}

/* ------------------------------------------------------------ helpers -- */

static const char *const fnames[NF] = {"main", "a", "b", "c", "f", "leaf", "t", "u"};
enum { MAIN, A, B, C, F, LEAF, T, U };

static uint32_t cfid(uint32_t i)
{
	return i == ROOTI ? AN_ROOT : i;
}

static void recs_of(const struct ev *ev, size_t n, uint64_t *w)
{
	size_t i;

	for (i = 0; i < n; i++)
		rec__encode(w + i * REC_WORDS, ev[i].kind, ev[i].fid, ev[i].ts, ev[i].sp);
}

/* Feed events [from, to) of e to the runner in chunks of up to chunk. */
static void feed_range(struct runner *r, const struct emu *e, size_t from, size_t to, size_t chunk)
{
	uint64_t w[64 * REC_WORDS];
	size_t i, n;

	ck_assert_uint_le(chunk, 64);
	for (i = from; i < to; i += n) {
		n = to - i < chunk ? to - i : chunk;
		recs_of(&e->ev[i], n, w);
		ck_assert_int_eq(runner__feed(r, e->tid, e->ev[i].seq, w, (uint32_t)n), 0);
	}
}

static struct runner *new_runner(const char *analyzers, unsigned nthreads, struct cab_pp **bufs,
				 unsigned nbufs)
{
	struct runner_opts o = {
		.fnames = fnames,
		.nfuncs = NF,
		.analyzers = analyzers,
		.nthreads = nthreads,
	};
	struct runner *r = NULL;

	ck_assert_int_eq(runner__new(&o, bufs, nbufs, &r), 0);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* Every count and edge the analyzers saw equals the emulated truth. */
static void check_truth(const struct runner *r, struct emu *const *es, unsigned nes)
{
	const void *cnt = runner__analyzer(r, "count");
	const void *cg = runner__analyzer(r, "callgraph");
	uint64_t calls[NF] = {0}, edges[NF + 1][NF] = {{0}};
	size_t nedges = 0;
	unsigned i, a, b;

	ck_assert_ptr_nonnull(cnt);
	ck_assert_ptr_nonnull(cg);
	for (i = 0; i < nes; i++) {
		for (b = 0; b < NF; b++) {
			calls[b] += es[i]->calls[b];
			ck_assert_uint_eq(count__thread_calls(cnt, es[i]->tid, b), es[i]->calls[b]);
			for (a = 0; a <= NF; a++) {
				edges[a][b] += es[i]->edges[a][b];
				ck_assert_uint_eq(
					callgraph__thread_edge(cg, es[i]->tid, cfid(a), b),
					es[i]->edges[a][b]);
			}
		}
	}
	for (b = 0; b < NF; b++) {
		ck_assert_uint_eq(count__calls(cnt, b), calls[b]);
		for (a = 0; a <= NF; a++) {
			ck_assert_uint_eq(callgraph__edge(cg, cfid(a), b), edges[a][b]);
			nedges += edges[a][b] != 0;
		}
	}
	ck_assert_uint_eq(callgraph__nedges(cg), nedges);
}

/* Returns are accounted for: matched = delivered, and every frame entered
 * is matched, missing or open. */
static void check_returns(const struct runner *r, struct emu *const *es, unsigned nes)
{
	struct runner_stats st;
	uint64_t frames = 0, returns = 0;
	unsigned i;

	runner__stats(r, &st);
	for (i = 0; i < nes; i++) {
		frames += es[i]->frames;
		returns += es[i]->returns;
	}
	ck_assert_uint_eq(st.returns.matched, returns);
	ck_assert_uint_eq(st.returns.orphan, 0);
	ck_assert_uint_eq(st.returns.matched + st.returns.missing + st.open, frames);
	ck_assert_uint_eq(st.order_gaps, 0);
	ck_assert_uint_eq(st.bad_records, 0);
	ck_assert_uint_eq(st.dup_records, 0);
}

/* Run one emulated thread through a fresh runner (1 thread, in order). */
static struct runner *run_one(struct emu *e, size_t chunk)
{
	struct runner *r = new_runner(NULL, 1, NULL, 0);

	feed_range(r, e, 0, e->nev, chunk);
	ck_assert_int_eq(runner__join(r), 0);
	return r;
}

/* ---------------------------------------------------- shadow, direct -- */

struct rec_sink {
	struct an_call calls[64];
	struct an_return rets[64];
	unsigned ncalls, nrets;
};

static void rs_call(void *ctx, const struct an_call *c)
{
	struct rec_sink *s = ctx;

	ck_assert_uint_lt(s->ncalls, 64);
	s->calls[s->ncalls++] = *c;
}

static void rs_ret(void *ctx, const struct an_return *r)
{
	struct rec_sink *s = ctx;

	ck_assert_uint_lt(s->nrets, 64);
	s->rets[s->nrets++] = *r;
}

static void shadow_feed(struct shadow *s, const struct emu *e, const struct shadow_sink *k)
{
	size_t i;

	for (i = 0; i < e->nev; i++) {
		if (e->ev[i].kind == CABBPF_EV_ENTRY)
			ck_assert_int_eq(
				shadow__entry(s, e->ev[i].fid, e->ev[i].sp, e->ev[i].ts, k), 0);
		else
			shadow__return(s, e->ev[i].fid, e->ev[i].sp, e->ev[i].ts, k);
	}
}

START_TEST(test_shadow_nesting_times)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow s;
	struct emu e;

	/* main { a { b } { c } } : ts advances 100 per event. */
	emu_init(&e, 1);
	emu_call(&e, MAIN); /* 100 */
	emu_call(&e, A);    /* 200 */
	emu_call(&e, B);    /* 300 */
	emu_ret(&e);	    /* 400 */
	emu_call(&e, C);    /* 500 */
	emu_ret(&e);	    /* 600 */
	emu_ret(&e);	    /* 700 */
	emu_ret(&e);	    /* 800 */
	shadow__init(&s, 1);
	shadow_feed(&s, &e, &k);

	ck_assert_uint_eq(rs.ncalls, 4);
	ck_assert_uint_eq(rs.calls[0].caller, AN_ROOT);
	ck_assert_uint_eq(rs.calls[1].caller, MAIN);
	ck_assert_uint_eq(rs.calls[2].caller, A);
	ck_assert_uint_eq(rs.calls[2].depth, 2);
	ck_assert_uint_eq(rs.calls[3].caller, A);
	ck_assert_uint_eq(rs.nrets, 4);
	/* b, c, a, main; all matched. */
	ck_assert_uint_eq(rs.rets[0].fid, B);
	ck_assert(rs.rets[0].matched);
	ck_assert_uint_eq(rs.rets[0].incl_ns, 100);
	ck_assert_uint_eq(rs.rets[1].fid, C);
	ck_assert_uint_eq(rs.rets[2].fid, A);
	ck_assert_uint_eq(rs.rets[2].incl_ns, 500);
	ck_assert_uint_eq(rs.rets[2].self_ns, 300);
	ck_assert_uint_eq(rs.rets[2].caller, MAIN);
	ck_assert_uint_eq(rs.rets[3].fid, MAIN);
	ck_assert_uint_eq(rs.rets[3].incl_ns, 700);
	ck_assert_uint_eq(rs.rets[3].self_ns, 200);
	ck_assert_uint_eq(s.c.matched, 4);
	ck_assert_uint_eq(s.c.missing + s.c.orphan + s.c.depth_limited, 0);
	ck_assert_uint_eq(shadow__depth(&s), 0);
	shadow__fini(&s);
	shadow__fini(NULL);
	emu_fini(&e);
}
END_TEST

START_TEST(test_shadow_orphan)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow s;

	shadow__init(&s, 7);
	/* Probes attached mid-call: a return with nothing open was entered
	 * before the trace started (BEFORE THE START), not an orphan. */
	shadow__return(&s, A, 0x1008, 10, &k);
	ck_assert_uint_eq(s.c.before, 1);
	ck_assert_uint_eq(s.c.orphan, 0);
	/* main at 0x2000 open; a return at a slot below main's that matches
	 * no frame (its entry was lost) leaves main alone. */
	ck_assert_int_eq(shadow__entry(&s, MAIN, 0x2000, 20, &k), 0);
	shadow__return(&s, B, 0x1f00 + 8, 30, &k);
	ck_assert_uint_eq(s.c.orphan, 1);
	ck_assert_uint_eq(shadow__depth(&s), 1);
	/* Same slot as main but another function: orphan, main stays. */
	shadow__return(&s, C, 0x2008, 40, &k);
	ck_assert_uint_eq(s.c.orphan, 2);
	ck_assert_uint_eq(shadow__top(&s), MAIN);
	shadow__return(&s, MAIN, 0x2008, 50, &k);
	ck_assert_uint_eq(s.c.matched, 1);
	ck_assert_uint_eq(s.c.missing, 0);
	/* A bogus sp cannot match. */
	shadow__return(&s, MAIN, 4, 60, &k);
	ck_assert_uint_eq(s.c.orphan, 3);
	shadow__fini(&s);
}
END_TEST

/* A slot word (include/cabbpf_event.h) of an entry whose slot held the
 * return address addr, or the trampoline. */
static uint32_t slot_of(uint32_t addr)
{
	return CABBPF_SLOT_KNOWN | (addr & CABBPF_SLOT_TAG_MASK) << CABBPF_SLOT_TAG_SHIFT;
}
#define SLOT_TRAMP (CABBPF_SLOT_KNOWN | CABBPF_SLOT_ARMED)

/* ENTRY rule 2 by the slot word (pipeline/shadow.h): a frame at the new
 * entry's slot is a tail caller when the slot holds the trampoline, dead
 * when it holds another return address, or its own while its return was
 * armed; the old rules decide otherwise (no word, or a frame without an
 * armed return at its own address). */
START_TEST(test_shadow_slot_word)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow s;

	shadow__init(&s, 9);
	ck_assert_int_eq(shadow__entry_slot(&s, MAIN, 0x2000, 10, false, slot_of(1), &k), 0);
	/* longjmp out of a: the next call at a's slot, from another call
	 * site of main, gets caller main and closes a (missing: no JUMP) */
	ck_assert_int_eq(shadow__entry_slot(&s, A, 0x1f00, 20, false, slot_of(2), &k), 0);
	ck_assert_int_eq(shadow__entry_slot(&s, B, 0x1f00, 30, false, slot_of(3), &k), 0);
	ck_assert_uint_eq(rs.calls[2].caller, MAIN);
	ck_assert_uint_eq(s.c.missing, 1);
	/* b tail-calls c: the slot holds the trampoline, b lives */
	ck_assert_int_eq(shadow__entry_slot(&s, C, 0x1f00, 40, false, SLOT_TRAMP, &k), 0);
	ck_assert_uint_eq(rs.calls[3].caller, B);
	ck_assert_uint_eq(shadow__depth(&s), 3);
	/* c inherits b's return address: a frame at b's slot with it would
	 * still be told by the armed return */
	ck_assert_uint_eq(s.f[2].slot, slot_of(3));
	shadow__return(&s, C, 0x1f08, 50, &k);
	shadow__return(&s, B, 0x1f08, 50, &k);
	ck_assert_uint_eq(s.c.matched, 2);
	/* the same call site again after a frame died at it: its return was
	 * armed, so alive it would have left the trampoline: dead */
	ck_assert_int_eq(shadow__entry_slot(&s, A, 0x1f00, 60, false, slot_of(2), &k), 0);
	ck_assert_int_eq(shadow__entry_slot(&s, A, 0x1f00, 70, false, slot_of(2), &k), 0);
	ck_assert_uint_eq(rs.calls[5].caller, MAIN);
	ck_assert_uint_eq(s.c.missing, 2);
	/* a frame whose return was not armed (lost to a backtrace) at its own
	 * address: a tail call of its own, by the old rules */
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_BACKTRACE, 0x1e00, 75, &k), 0);
	ck_assert_int_eq(shadow__entry_slot(&s, B, 0x1f00, 80, false, slot_of(2), &k), 0);
	ck_assert_uint_eq(rs.calls[6].caller, A);
	/* ... at another address: dead, with its tail callee (b missing, a
	 * closed as switched: its return was lost) */
	ck_assert_int_eq(shadow__entry_slot(&s, C, 0x1f00, 90, false, slot_of(4), &k), 0);
	ck_assert_uint_eq(rs.calls[7].caller, MAIN);
	ck_assert_uint_eq(s.c.switched, 1);
	ck_assert_uint_eq(s.c.missing, 3);
	shadow__fini(&s);
}
END_TEST

/* GUARD JUMP (longjmp): the frames the next event finds dead are unwound,
 * also one at that event's own slot entered before the jump (the same call
 * site calling again, without a slot word); unwinding ends there. */
START_TEST(test_shadow_jump)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow s;

	shadow__init(&s, 9);
	ck_assert_int_eq(shadow__entry(&s, MAIN, 0x2000, 10, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, A, 0x1f00, 20, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, B, 0x1e00, 30, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_JUMP, 0x1d00, 40, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, A, 0x1f00, 50, &k), 0);
	ck_assert_uint_eq(rs.calls[3].caller, MAIN);
	ck_assert_uint_eq(s.c.unwound, 2);
	ck_assert_uint_eq(s.c.missing, 0);
	ck_assert(!s.unwinding);
	/* after it, a frame at an equal slot is a tail caller again */
	ck_assert_int_eq(shadow__entry(&s, B, 0x1f00, 60, &k), 0);
	ck_assert_uint_eq(rs.calls[4].caller, A);
	/* a jump that lands in a frame which then tail-calls: the slot word
	 * keeps the lander (the old rules took it for dead) */
	ck_assert_int_eq(shadow__entry_slot(&s, C, 0x1d00, 70, false, slot_of(5), &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_JUMP, 0x1c00, 80, &k), 0);
	ck_assert_int_eq(shadow__entry_slot(&s, U, 0x1f00, 90, false, SLOT_TRAMP, &k), 0);
	ck_assert_uint_eq(rs.calls[6].caller, B);
	ck_assert_uint_eq(s.c.unwound, 3);
	shadow__fini(&s);
}
END_TEST

/* A rethrow (`throw;`, std::rethrow_exception): after the first catch the
 * exception is in flight again, and the frame that caught and rethrew is
 * unwound at the outer catch, which is at its slot (issue 44: it was kept,
 * and took the outer catcher's next call). */
START_TEST(test_shadow_rethrow)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow s;

	shadow__init(&s, 9);
	ck_assert_int_eq(shadow__entry(&s, MAIN, 0x2000, 10, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, T, 0x1f00, 20, &k), 0); /* top */
	ck_assert_int_eq(shadow__entry(&s, A, 0x1e00, 30, &k), 0); /* mid */
	ck_assert_int_eq(shadow__entry(&s, LEAF, 0x1d00, 40, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_THROW, 0x1c00, 50, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_CATCH, 0x1e00, 60, &k), 0); /* in top */
	ck_assert_uint_eq(s.c.unwound, 2);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_THROW, 0x1d80, 70, &k), 0); /* throw; */
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_THROW, 0x1e00, 80, &k), 0); /* resume */
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_CATCH, 0x1f00, 90, &k), 0); /* in main */
	ck_assert_uint_eq(s.c.unwound, 3);
	ck_assert_int_eq(shadow__entry(&s, B, 0x1f00, 100, &k), 0);
	ck_assert_uint_eq(rs.calls[4].caller, MAIN);
	ck_assert_uint_eq(s.c.missing, 0);
	shadow__fini(&s);
}
END_TEST

/* c called at 0x1c00 at ts, its return lost; called again at the same
 * slot (taken for a tail callee, returns), and called once more: the
 * first frame is found dead. */
static void return_lost_then_call(struct shadow *s, const struct shadow_sink *k, uint64_t ts)
{
	ck_assert_int_eq(shadow__entry(s, C, 0x1c00, ts, k), 0);
	ck_assert_int_eq(shadow__entry(s, C, 0x1c00, ts + 2, k), 0);
	shadow__return(s, C, 0x1c08, ts + 4, k);
	ck_assert_int_eq(shadow__entry(s, C, 0x1c00, ts + 6, k), 0);
}

/* SAMPLING (pipeline/shadow.h): window 1 sees main call a; a returns and
 * main calls b while tracing is off; window 2 sees b's return (an orphan of
 * a later window), then a call of a at the same slot as a's dead frame:
 * a's frame is closed as sampled (not a tail caller: no a -> a edge), and
 * its caller is main again, recovered from the slots (main called a at
 * this slot in window 1, under main's slot); a's own callee has a. A call
 * at a slot never seen below main (something entered while tracing was
 * off may sit in between) has caller <resumed>. Window 4: the thread's
 * first call there loses its return (WINDOW START), counted apart from
 * missing; a later one is missing. */
START_TEST(test_shadow_sampling_windows)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow s;

	shadow__init(&s, 3);
	shadow__set_epoch(&s, 1);
	ck_assert_int_eq(shadow__entry(&s, MAIN, 0x2000, 10, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, A, 0x1f00, 20, &k), 0);
	shadow__set_epoch(&s, 2);
	shadow__return(&s, B, 0x1f08, 30, &k);
	ck_assert_uint_eq(s.c.orphan_sampled, 1);
	ck_assert_uint_eq(s.c.orphan, 0);
	ck_assert_int_eq(shadow__entry(&s, A, 0x1f00, 40, &k), 0);
	ck_assert_uint_eq(s.c.sampled, 1);
	ck_assert_uint_eq(s.c.missing, 0);
	ck_assert_uint_eq(rs.nrets, 1);
	ck_assert(rs.rets[0].sampled && !rs.rets[0].matched && rs.rets[0].fid == A);
	ck_assert_uint_eq(rs.ncalls, 3);
	ck_assert_uint_eq(rs.calls[2].caller, MAIN);
	ck_assert_uint_eq(rs.calls[2].epoch, 2);
	ck_assert_int_eq(shadow__entry(&s, B, 0x1e00, 42, &k), 0);
	ck_assert_uint_eq(rs.calls[3].caller, A);
	shadow__return(&s, B, 0x1e08, 44, &k);
	shadow__return(&s, A, 0x1f08, 50, &k);
	ck_assert_uint_eq(s.c.matched, 2);
	ck_assert_uint_eq(rs.rets[2].fid, A);
	ck_assert_uint_eq(rs.rets[2].incl_ns, 10);
	/* window 3: c at a slot main never called at: <resumed> */
	shadow__set_epoch(&s, 3);
	ck_assert_int_eq(shadow__entry(&s, C, 0x1c00, 60, &k), 0);
	ck_assert_uint_eq(rs.calls[4].caller, AN_RESUMED);
	/* Window 4: the thread's first call there loses its return (WINDOW
	 * START): the next call comes at its slot, is taken for its tail
	 * callee, returns, and the event after is not the first's return.
	 * Not "missing"; a later call that does the same is. */
	shadow__set_epoch(&s, 4);
	return_lost_then_call(&s, &k, 70);
	ck_assert_uint_eq(s.c.window_start, 1);
	ck_assert_uint_eq(s.c.missing, 0);
	shadow__return(&s, C, 0x1c08, 92, &k);
	return_lost_then_call(&s, &k, 94);
	ck_assert_uint_eq(s.c.window_start, 1);
	ck_assert_uint_eq(s.c.missing, 1);
	/* Without sampling (epoch 0 throughout) the same equal slot is a
	 * tail call: the old rule stands. */
	shadow__fini(&s);
	memset(&rs, 0, sizeof(rs));
	shadow__init(&s, 4);
	ck_assert_int_eq(shadow__entry(&s, MAIN, 0x2000, 10, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, A, 0x1f00, 20, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, B, 0x1f00, 30, &k), 0);
	ck_assert_uint_eq(rs.calls[2].caller, A);
	ck_assert_uint_eq(s.c.sampled + s.c.missing, 0);
	shadow__fini(&s);
}
END_TEST

/* main (0x2000) -> a (0x1f00) -> b (0x1e00: where a's later calls put
 * their slots) -> c (0x1d00), which throws (GUARD THROW at 0x1c00, ts 50). */
static void throw_through(struct shadow *s, const struct shadow_sink *k)
{
	ck_assert_int_eq(shadow__entry(s, MAIN, 0x2000, 10, k), 0);
	ck_assert_int_eq(shadow__entry(s, A, 0x1f00, 20, k), 0);
	ck_assert_int_eq(shadow__entry(s, B, 0x1e00, 30, k), 0);
	ck_assert_int_eq(shadow__entry(s, C, 0x1d00, 40, k), 0);
	ck_assert_int_eq(shadow__guard(s, CABBPF_GS_THROW, 0x1c00, 50, k), 0);
}

/* GUARD events (pipeline/shadow.h): an exception unwinds b and c, caught
 * in a; a survives and returns (the guard re-armed it). */
START_TEST(test_shadow_guard_exception)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow s;

	shadow__init(&s, 1);
	throw_through(&s, &k);
	ck_assert(s.unwinding);
	/* __cxa_begin_catch called from a's landing pad: same slot as b's. */
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_CATCH, 0x1e00, 60, &k), 0);
	/* unwinding ends with the next call or return event */
	ck_assert(s.unwinding && s.caught);
	ck_assert_uint_eq(s.c.unwound, 2);
	ck_assert_uint_eq(rs.nrets, 2);
	ck_assert_uint_eq(rs.rets[0].fid, C);
	ck_assert(rs.rets[0].unwound && !rs.rets[0].matched);
	ck_assert_uint_eq(rs.rets[1].fid, B);
	ck_assert(rs.rets[1].unwound);
	/* a's next callee has the caller right, a's return matches. */
	ck_assert_int_eq(shadow__entry(&s, LEAF, 0x1e00, 70, &k), 0);
	ck_assert(!s.unwinding);
	ck_assert_uint_eq(rs.calls[4].caller, A);
	shadow__return(&s, LEAF, 0x1e08, 80, &k);
	shadow__return(&s, A, 0x1f08, 90, &k);
	ck_assert_uint_eq(rs.rets[3].fid, A);
	ck_assert(rs.rets[3].matched);
	ck_assert_uint_eq(rs.rets[3].incl_ns, 70);
	ck_assert_uint_eq(s.c.matched, 2);
	ck_assert_uint_eq(s.c.missing, 0);
	/* Without a throw, dead frames below a catch are missing, not
	 * unwound; one at its slot jumped there (a tail call) and lives. */
	ck_assert_int_eq(shadow__entry(&s, B, 0x1f00, 100, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, C, 0x1e00, 101, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_CATCH, 0x1f00, 110, &k), 0);
	ck_assert_uint_eq(s.c.missing, 1);
	ck_assert_uint_eq(rs.rets[rs.nrets - 1].fid, C);
	ck_assert_uint_eq(shadow__depth(&s), 2);
	ck_assert(!s.unwinding);
	shadow__return(&s, B, 0x1f08, 110, &k);
	ck_assert_uint_eq(s.c.matched, 3);
	/* A catch deeper than some unwound frames (Rust catches in a helper
	 * the catching frame calls): the next event still finds them
	 * unwound. */
	ck_assert_int_eq(shadow__entry(&s, B, 0x1f00, 111, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, C, 0x1e00, 112, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_THROW, 0x1c00, 113, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_CATCH, 0x1d80, 114, &k), 0);
	ck_assert_uint_eq(s.c.unwound, 2);
	shadow__return(&s, MAIN, 0x2008, 115, &k); /* pops c and b: unwound */
	ck_assert_uint_eq(s.c.unwound, 4);
	ck_assert(!s.unwinding);
	ck_assert_uint_eq(s.c.missing, 1);
	ck_assert_int_eq(shadow__entry(&s, MAIN, 0x2000, 116, &k), 0);
	/* Forced unwinding that never meets a catch: the thread ends with
	 * unwinding set (the runner counts what is left as unwound). */
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_FORCED, 0x1000, 120, &k), 0);
	ck_assert(s.unwinding);
	ck_assert_uint_eq(shadow__depth(&s), 1);
	shadow__fini(&s);
}
END_TEST

/* Frames at a catch site's slot: dead if the exception in flight unwound
 * them, alive if they jumped there (pipeline/shadow.h, CATCH and rule 2c of
 * ENTRY). The events are those of tests/targets/exc.cc's dtor mode and of
 * libstdc++'s __cxa_end_catch, as the probes see them. */
START_TEST(test_shadow_guard_catch_slot)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow s;

	shadow__init(&s, 1);
	/* main -> a (catcher) -> b (holds an object with a destructor) ->
	 * c, which throws with no traced callee. */
	throw_through(&s, &k);
	/* b's landing pad runs the destructor, which calls leaf at c's
	 * slot: c is dead (unwound), leaf's caller is b, not c. */
	ck_assert_int_eq(shadow__entry(&s, LEAF, 0x1d00, 60, &k), 0);
	ck_assert_uint_eq(s.c.unwound, 1);
	ck_assert_uint_eq(rs.rets[0].fid, C);
	ck_assert(rs.rets[0].unwound);
	ck_assert_uint_eq(rs.calls[4].caller, B);
	shadow__return(&s, LEAF, 0x1d08, 70, &k);
	ck_assert_uint_eq(s.c.matched, 1);
	/* _Unwind_Resume from b's landing pad, then a catches:
	 * __cxa_begin_catch at b's slot. */
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_THROW, 0x1d00, 80, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_CATCH, 0x1e00, 90, &k), 0);
	ck_assert_uint_eq(s.c.unwound, 2);
	/* a ends its catch block with a jump to an untraced __cxa_end_catch,
	 * which jumps to _Unwind_DeleteException: a catch site at a's own
	 * slot, before any other event. a lives: its return matches. */
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_CATCH, 0x1f00, 100, &k), 0);
	ck_assert_uint_eq(shadow__depth(&s), 2);
	shadow__return(&s, A, 0x1f08, 110, &k);
	ck_assert_uint_eq(s.c.matched, 2);
	/* A traced __cxa_end_catch (t) called from main's catch block, no
	 * exception in flight: it jumps to _Unwind_DeleteException (a
	 * catch site at its slot) and lives; the exception's destructor
	 * (u) is its callee; __cxa_free_exception (f), jumped to at its
	 * slot, its tail callee; both return. */
	ck_assert_int_eq(shadow__entry(&s, T, 0x1f00, 120, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_CATCH, 0x1f00, 130, &k), 0);
	ck_assert_uint_eq(shadow__depth(&s), 2);
	ck_assert_int_eq(shadow__entry(&s, U, 0x1e00, 140, &k), 0);
	ck_assert_uint_eq(rs.calls[rs.ncalls - 1].caller, T);
	shadow__return(&s, U, 0x1e08, 150, &k);
	ck_assert_int_eq(shadow__entry(&s, F, 0x1f00, 160, &k), 0);
	ck_assert_uint_eq(rs.calls[rs.ncalls - 1].caller, T);
	shadow__return(&s, F, 0x1f08, 170, &k);
	shadow__return(&s, T, 0x1f08, 170, &k);
	ck_assert_uint_eq(s.c.matched, 5);
	ck_assert_uint_eq(s.c.missing + s.c.orphan, 0);
	ck_assert_uint_eq(s.c.unwound, 2);
	ck_assert_uint_eq(shadow__depth(&s), 1);
	shadow__fini(&s);
}
END_TEST

/* swapcontext: frames are parked under the sp the left context resumes
 * with, and come back (with callers right) when the thread switches back. */
START_TEST(test_shadow_guard_switch)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	uint32_t swap = CABBPF_GS_SWITCH | CABBPF_GF_SWAPCONTEXT << 8;
	uint32_t set = CABBPF_GS_SWITCH | CABBPF_GF_SETCONTEXT << 8;
	struct shadow s;

	shadow__init(&s, 1);
	/* main stack: main { consume { swapcontext -> coroutine } } */
	ck_assert_int_eq(shadow__entry(&s, MAIN, 0x7000, 10, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, A, 0x6f00, 20, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, swap, 0x6e00, 30, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_SWITCH_TO, 0x3000, 30, &k), 0);
	ck_assert_uint_eq(s.depth, 0);
	ck_assert_uint_eq(s.npark, 1);
	ck_assert_uint_eq(shadow__depth(&s), 2);
	/* coroutine stack, lower: produce { step } */
	ck_assert_int_eq(shadow__entry(&s, B, 0x2f00, 40, &k), 0);
	ck_assert_uint_eq(rs.calls[2].caller, AN_ROOT);
	ck_assert_int_eq(shadow__entry(&s, LEAF, 0x2e00, 50, &k), 0);
	shadow__return(&s, LEAF, 0x2e08, 60, &k);
	/* produce switches back to consume: saved sp 0x6e00 + 8. */
	ck_assert_int_eq(shadow__guard(&s, swap, 0x2e00, 70, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_SWITCH_TO, 0x6e08, 70, &k), 0);
	ck_assert_uint_eq(s.depth, 2);
	ck_assert_uint_eq(shadow__top(&s), A);
	/* consume's callee gets consume as its caller, on the main stack. */
	ck_assert_int_eq(shadow__entry(&s, LEAF, 0x6e00, 80, &k), 0);
	ck_assert_uint_eq(rs.calls[4].caller, A);
	shadow__return(&s, LEAF, 0x6e08, 90, &k);
	/* back to the coroutine (parked under 0x2e08), which ends with
	 * setcontext (uc_link) to main: its frames are closed as switched */
	ck_assert_int_eq(shadow__guard(&s, swap, 0x6e00, 100, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_SWITCH_TO, 0x2e08, 100, &k), 0);
	ck_assert_uint_eq(shadow__top(&s), B);
	ck_assert_int_eq(shadow__guard(&s, set, 0x2f00, 110, &k), 0);
	ck_assert_uint_eq(s.c.switched, 1);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_SWITCH_TO, 0x6e08, 110, &k), 0);
	ck_assert_uint_eq(shadow__top(&s), A);
	ck_assert_uint_eq(s.npark, 0);
	/* consume and main lost their returns (restored by the guard): their
	 * frames close as switched when found dead, never as missing. */
	ck_assert_int_eq(shadow__entry(&s, C, 0x7000, 120, &k), 0);
	ck_assert_uint_eq(s.c.switched, 3);
	ck_assert_uint_eq(s.c.missing, 0);
	ck_assert_uint_eq(s.c.matched, 2);
	/* Parked stacks that never resume are closed by abandon. */
	ck_assert_int_eq(shadow__guard(&s, swap, 0x6f00, 130, &k), 0);
	ck_assert_uint_eq(s.npark, 1);
	shadow__abandon(&s, 140, &k);
	ck_assert_uint_eq(s.npark, 0);
	ck_assert_uint_eq(s.c.switched, 4);
	ck_assert_uint_eq(shadow__depth(&s), 0);
	shadow__fini(&s);
}
END_TEST

/* The program's own backtrace: live frames lose their returns. */
START_TEST(test_shadow_guard_backtrace)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow s;

	shadow__init(&s, 1);
	ck_assert_int_eq(shadow__entry(&s, MAIN, 0x2000, 10, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, A, 0x1f00, 20, &k), 0);
	ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_BACKTRACE, 0x1e00, 30, &k), 0);
	ck_assert_int_eq(shadow__entry(&s, B, 0x2000, 40, &k), 0);
	ck_assert_uint_eq(s.c.switched, 2);
	ck_assert_uint_eq(s.c.missing, 0);
	ck_assert_uint_eq(rs.calls[2].caller, AN_ROOT);
	shadow__fini(&s);
}
END_TEST

/* A signal handler on an alternate stack [0x1e40, 0x1e80): the frames
 * below its top (A, B: the guard restored their return addresses) are set
 * aside while it runs, so its calls nest under MAIN and match; the first
 * event back on the thread's stack puts them back, and they close as
 * switched when found dead. A handler's frame left open (a siglongjmp
 * out) is missing. Without the BASE event (lost), A and B close at the
 * handler's first call. */
START_TEST(test_shadow_guard_altstack)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow s;
	int base;

	for (base = 1; base >= 0; base--) {
		memset(&rs, 0, sizeof(rs));
		shadow__init(&s, 1);
		ck_assert_int_eq(shadow__entry(&s, MAIN, 0x2000, 10, &k), 0);
		ck_assert_int_eq(shadow__entry(&s, A, 0x1e00, 20, &k), 0);
		ck_assert_int_eq(shadow__entry(&s, B, 0x1d00, 30, &k), 0);
		ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_ALTSTACK, 0x1e80, 40, &k), 0);
		if (base)
			ck_assert_int_eq(shadow__guard(&s, CABBPF_GS_ALTSTACK_BASE, 0x1e40, 41, &k),
					 0);
		ck_assert_uint_eq(s.depth, base ? 1 : 3);
		ck_assert_uint_eq(shadow__depth(&s), 3); /* open, if the run ended */
		ck_assert_int_eq(shadow__entry(&s, C, 0x1e70, 50, &k), 0);
		ck_assert_uint_eq(rs.calls[3].caller, MAIN);
		ck_assert_uint_eq(s.c.switched, base ? 0 : 2);
		shadow__return(&s, C, 0x1e78, 60, &k);
		ck_assert_uint_eq(s.c.matched, 1);
		ck_assert_int_eq(shadow__entry(&s, C, 0x1e60, 70, &k), 0); /* left open */
		/* back on the thread's stack: A called again at its old slot */
		ck_assert_int_eq(shadow__entry(&s, A, 0x1e00, 80, &k), 0);
		/* without the base, nothing tells the handler's frame ended */
		ck_assert_uint_eq(rs.calls[5].caller, base ? MAIN : C);
		ck_assert_uint_eq(s.c.switched, 2);
		ck_assert_uint_eq(s.c.missing, base ? 1 : 0);
		ck_assert_uint_eq(shadow__depth(&s), base ? 2 : 3);
		shadow__close_open(&s, 90, &k);
		ck_assert_uint_eq(shadow__depth(&s), 0);
		shadow__fini(&s);
	}
}
END_TEST

/* ------------------------------------------------- through the runner -- */

START_TEST(test_simple_nesting)
{
	struct count_time t;
	struct runner_stats st;
	struct runner *r;
	struct emu e, *es[1] = {&e};
	const void *cnt;
	int i;

	emu_init(&e, 100);
	emu_call(&e, MAIN);
	for (i = 0; i < 3; i++) {
		emu_call(&e, A);
		emu_call(&e, B);
		emu_ret(&e);
		emu_call(&e, C);
		emu_ret(&e);
		emu_ret(&e);
	}
	emu_call(&e, B);
	emu_ret(&e);
	emu_ret(&e);
	r = run_one(&e, 5);
	check_truth(r, es, 1);
	check_returns(r, es, 1);
	cnt = runner__analyzer(r, "count");
	ck_assert_uint_eq(count__calls(cnt, A), 3);
	ck_assert_uint_eq(count__calls(cnt, B), 4);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), A, B), 3);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), MAIN, B), 1);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), AN_ROOT, MAIN), 1);
	/* Each a: 6 events = 500 ns inclusive, b and c 100 each. */
	count__time(cnt, A, &t);
	ck_assert_uint_eq(t.matched, 3);
	ck_assert_uint_eq(t.incl_ns, 3 * 500);
	ck_assert_uint_eq(t.self_ns, 3 * 300);
	count__time(cnt, MAIN, &t);
	ck_assert_uint_eq(t.incl_ns, e.ts - 100);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.records, e.nev);
	ck_assert_uint_eq(st.returns.matched, 11);
	ck_assert_uint_eq(st.open, 0);
	ck_assert_uint_eq(st.threads, 1);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

/* f(n) { if (n > 1) f(n - 1); } */
static void emu_rec(struct emu *e, int n)
{
	emu_call(e, F);
	if (n > 1)
		emu_rec(e, n - 1);
	emu_ret(e);
}

START_TEST(test_recursion)
{
	struct count_time t;
	struct runner *r;
	struct emu e, *es[1] = {&e};
	const void *cg;

	emu_init(&e, 5);
	emu_call(&e, MAIN);
	emu_rec(&e, 10);
	emu_rec(&e, 3);
	emu_ret(&e);
	r = run_one(&e, 7);
	check_truth(r, es, 1);
	check_returns(r, es, 1);
	cg = runner__analyzer(r, "callgraph");
	ck_assert_uint_eq(count__calls(runner__analyzer(r, "count"), F), 13);
	ck_assert_uint_eq(callgraph__edge(cg, MAIN, F), 2);
	ck_assert_uint_eq(callgraph__edge(cg, F, F), 11);
	ck_assert_uint_eq(callgraph__nedges(cg), 3);
	/* Inclusive time counts only outermost activations: the first f
	 * spans 20 events (19 * 100 ns), the second 6 (5 * 100 ns). */
	count__time(runner__analyzer(r, "count"), F, &t);
	ck_assert_uint_eq(t.matched, 13);
	ck_assert_uint_eq(t.incl_ns, 1900 + 500);
	/* Self time: 100 ns for the innermost f, 200 ns for each other f
	 * (its entry-to-child and child-to-return), never double counted. */
	ck_assert_uint_eq(t.self_ns, 2 * 100 + 11 * 200);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

/* g(n) { leaf(); if (n > 1) g(n - 1); } — the leaf call shares the slot the
 * recursive call will use, which is what makes lost returns hard. */
static void emu_rec_leaf(struct emu *e, int n)
{
	emu_call(e, F);
	emu_call(e, LEAF);
	emu_ret(e);
	if (n > 1)
		emu_rec_leaf(e, n - 1);
	emu_ret(e);
}

START_TEST(test_deep_recursion)
{
	struct runner_stats st;
	struct runner *r;
	struct emu e, *es[1] = {&e};
	const void *cg;

	emu_init(&e, 9);
	emu_call(&e, MAIN);
	emu_rec_leaf(&e, 200);
	emu_call(&e, A); /* after the storm, ordinary calls still attribute right */
	emu_ret(&e);
	emu_ret(&e);
	/* The kernel reported only the outermost 64 pending frames: main,
	 * f1..f63, and the leaves of f1..f62. */
	ck_assert_uint_eq(e.returns, 1 + 63 + 62 + 1);
	r = run_one(&e, 16);
	check_truth(r, es, 1);
	check_returns(r, es, 1);
	cg = runner__analyzer(r, "callgraph");
	ck_assert_uint_eq(count__calls(runner__analyzer(r, "count"), F), 200);
	ck_assert_uint_eq(count__calls(runner__analyzer(r, "count"), LEAF), 200);
	ck_assert_uint_eq(callgraph__edge(cg, AN_ROOT, MAIN), 1);
	ck_assert_uint_eq(callgraph__edge(cg, MAIN, F), 1);
	ck_assert_uint_eq(callgraph__edge(cg, F, F), 199);
	ck_assert_uint_eq(callgraph__edge(cg, F, LEAF), 200);
	ck_assert_uint_eq(callgraph__edge(cg, MAIN, A), 1);
	ck_assert_uint_eq(callgraph__nedges(cg), 5);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.returns.matched, 127);
	ck_assert_uint_eq(st.returns.missing, 401 + 1 - 127);
	ck_assert_uint_eq(st.returns.depth_limited, 401 + 1 - 127);
	ck_assert_uint_eq(st.open, 0);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

START_TEST(test_longjmp)
{
	struct runner_stats st;
	struct runner *r;
	struct emu e, *es[1] = {&e};
	const void *cg;
	int i;

	/* main: while (setjmp(env) < 3) run(); run -> a -> b -> c ->
	 * longjmp(env). The third run returns normally. */
	emu_init(&e, 3);
	emu_call(&e, MAIN);
	for (i = 0; i < 3; i++) {
		emu_call(&e, T);
		emu_call(&e, A);
		emu_call(&e, B);
		emu_call(&e, C);
		if (i < 2) {
			emu_longjmp(&e, 1);
		} else {
			emu_ret(&e);
			emu_ret(&e);
			emu_ret(&e);
			emu_ret(&e);
		}
	}
	/* After the jumps main calls something else at the same slot. */
	emu_call(&e, B);
	emu_ret(&e);
	/* And a longjmp from a deeper level to an inner setjmp in a. */
	emu_call(&e, A);
	emu_call(&e, B);
	emu_call(&e, C);
	emu_longjmp(&e, 2); /* back into a */
	emu_call(&e, C);    /* a calls c at b's old slot */
	emu_ret(&e);
	emu_ret(&e);
	emu_ret(&e);
	r = run_one(&e, 4);
	check_truth(r, es, 1);
	check_returns(r, es, 1);
	cg = runner__analyzer(r, "callgraph");
	ck_assert_uint_eq(callgraph__edge(cg, MAIN, T), 3);
	ck_assert_uint_eq(callgraph__edge(cg, T, T), 0);
	ck_assert_uint_eq(callgraph__edge(cg, T, A), 3);
	ck_assert_uint_eq(callgraph__edge(cg, MAIN, B), 1);
	ck_assert_uint_eq(callgraph__edge(cg, A, C), 1);
	runner__stats(r, &st);
	/* Two unwound run->a->b->c chains, and b->c once. */
	ck_assert_uint_eq(st.returns.missing, 2 * 4 + 2);
	ck_assert_uint_eq(st.returns.depth_limited, 0);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

START_TEST(test_tail_call)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct runner_stats st;
	struct shadow s;
	struct runner *r;
	struct emu e, *es[1] = {&e};
	const void *cg;

	/* main -> t; t calls a, then `jmp u`; u calls b, then `jmp c`; c
	 * returns: the kernel reports c, u, t at the same sp. */
	emu_init(&e, 4);
	emu_call(&e, MAIN);
	emu_call(&e, T);
	emu_call(&e, A);
	emu_ret(&e);
	emu_tail(&e, U);
	emu_call(&e, B);
	emu_ret(&e);
	emu_tail(&e, C);
	emu_ret(&e);
	emu_call(&e, A); /* main's next call reuses the slot */
	emu_ret(&e);
	emu_ret(&e);
	ck_assert_uint_eq(e.returns, 7);

	shadow__init(&s, 4);
	shadow_feed(&s, &e, &k);
	ck_assert_uint_eq(s.c.matched, 7);
	ck_assert_uint_eq(s.c.missing, 0);
	/* c, u and t closed innermost first, all matched, times nested. */
	ck_assert_uint_eq(rs.rets[2].fid, C);
	ck_assert_uint_eq(rs.rets[3].fid, U);
	ck_assert_uint_eq(rs.rets[4].fid, T);
	ck_assert(rs.rets[4].matched);
	ck_assert_uint_gt(rs.rets[4].incl_ns, rs.rets[3].incl_ns);
	shadow__fini(&s);

	r = run_one(&e, 3);
	check_truth(r, es, 1);
	check_returns(r, es, 1);
	cg = runner__analyzer(r, "callgraph");
	ck_assert_uint_eq(callgraph__edge(cg, T, U), 1);
	ck_assert_uint_eq(callgraph__edge(cg, U, C), 1);
	ck_assert_uint_eq(callgraph__edge(cg, MAIN, A), 1);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.returns.missing, 0);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

START_TEST(test_tail_call_past_limit)
{
	struct runner *r;
	struct emu e, *es[1] = {&e};
	int i;

	/* Tail calls inside a recursion deeper than 64: chained frames that
	 * got no return instance. Calls stay exact; returns balance. */
	emu_init(&e, 11);
	emu_call(&e, MAIN);
	for (i = 0; i < 70; i++)
		emu_call(&e, F);
	emu_call(&e, A);
	emu_ret(&e);
	emu_call(&e, B); /* sibling of a at the same slot, past the limit */
	emu_ret(&e);
	for (i = 0; i < 70; i++)
		emu_ret(&e);
	emu_call(&e, T);
	emu_tail(&e, U);
	emu_ret(&e);
	emu_ret(&e);
	r = run_one(&e, 8);
	check_truth(r, es, 1);
	check_returns(r, es, 1);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

START_TEST(test_lost_return)
{
	struct runner_stats st;
	struct runner *r;
	struct emu e;
	const void *cg;

	/* A return event lost (ring full; counted by the loader as lost):
	 * main calls a (its return dropped), then b and c at the same slot.
	 * At b's entry a still looks like a tail caller (documented); b's
	 * return shows it was not, and from c on attribution is right. */
	emu_init(&e, 8);
	emu_call(&e, MAIN);
	emu_call(&e, A);
	e.drop_next = true;
	emu_ret(&e);
	emu_call(&e, B);
	emu_ret(&e);
	emu_call(&e, C);
	emu_ret(&e);
	emu_ret(&e);
	r = run_one(&e, 2);
	cg = runner__analyzer(r, "callgraph");
	ck_assert_uint_eq(count__calls(runner__analyzer(r, "count"), B), 1);
	ck_assert_uint_eq(callgraph__edge(cg, A, B), 1);
	ck_assert_uint_eq(callgraph__edge(cg, MAIN, C), 1);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.returns.matched, 3);
	ck_assert_uint_eq(st.returns.missing, 1);
	ck_assert_uint_eq(st.returns.orphan, 0);
	ck_assert_uint_eq(st.open, 0);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

START_TEST(test_open_frames)
{
	struct runner_stats st;
	struct runner *r;
	struct emu e;

	/* Tracing stops while main and a are still running. */
	emu_init(&e, 2);
	emu_call(&e, MAIN);
	emu_call(&e, A);
	emu_call(&e, B);
	emu_ret(&e);
	r = run_one(&e, 10);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.open, 2);
	ck_assert_uint_eq(st.returns.matched, 1);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

/* Program activity for thread e, seeded: calls, returns, recursion past
 * the uretprobe limit; no longjmp or tail calls (whose corner cases are
 * documented as approximate), so every edge must be exact. */
static void emu_random(struct emu *e, unsigned seed, unsigned steps, bool wild)
{
	unsigned i;

	emu_call(e, MAIN);
	for (i = 0; i < steps; i++) {
		unsigned x = rand_r(&seed) % 100;

		if (e->depth < 2 || (x < 52 && e->depth < 100)) {
			emu_call(e, 1 + rand_r(&seed) % (NF - 1));
		} else if (wild && x < 54 && e->depth > 3) {
			emu_longjmp(e, 1 + (int)(rand_r(&seed) % (unsigned)(e->depth - 2)));
		} else if (wild && x < 57) {
			emu_tail(e, 1 + rand_r(&seed) % (NF - 1));
		} else {
			emu_ret(e);
		}
	}
	while (e->depth)
		emu_ret(e);
}

START_TEST(test_interleaved_threads)
{
	struct runner *r = new_runner("count,callgraph", 1, NULL, 0);
	struct emu *es[3];
	size_t pos[3] = {0};
	unsigned seed = 42, i, left = 3;
	const void *cnt;

	for (i = 0; i < 3; i++) {
		es[i] = malloc(sizeof(struct emu));
		ck_assert_ptr_nonnull(es[i]);
		emu_init(es[i], 1000 + i);
		emu_random(es[i], 7 + i, 3000, false);
	}
	/* Chunks of the three threads interleave, each thread in order. */
	while (left) {
		i = rand_r(&seed) % 3;
		if (pos[i] == es[i]->nev)
			continue;
		{
			size_t n = 1 + rand_r(&seed) % 20;

			if (n > es[i]->nev - pos[i])
				n = es[i]->nev - pos[i];
			feed_range(r, es[i], pos[i], pos[i] + n, n);
			pos[i] += n;
			if (pos[i] == es[i]->nev)
				left--;
		}
	}
	ck_assert_int_eq(runner__join(r), 0);
	check_truth(r, es, 3);
	check_returns(r, es, 3);
	cnt = runner__analyzer(r, "count");
	ck_assert_uint_eq(count__nthreads(cnt), 3);
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(count__thread_total(cnt, 1000 + i), es[i]->frames);
		emu_fini(es[i]);
		free(es[i]);
	}
	runner__free(r);
}
END_TEST

START_TEST(test_merge_out_of_order_feed)
{
	struct runner_stats st;
	struct runner *r = new_runner(NULL, 1, NULL, 0);
	struct emu *e = malloc(sizeof(*e)), *es[1] = {e};
	size_t n, q;

	ck_assert_ptr_nonnull(e);
	emu_init(e, 77);
	emu_random(e, 99, 2000, false);
	n = e->nev;
	q = n / 4;
	/* Quarters fed as 3, 1, 4, 2 (in chunks of 8): the runner must hold
	 * 3 and 4 aside and analyze 1, 2, 3, 4. */
	feed_range(r, e, 2 * q, 3 * q, 8);
	feed_range(r, e, 0, q, 8);
	feed_range(r, e, 3 * q, n, 8);
	feed_range(r, e, q, 2 * q, 8);
	ck_assert_int_eq(runner__join(r), 0);
	check_truth(r, es, 1);
	check_returns(r, es, 1);
	runner__stats(r, &st);
	ck_assert_uint_gt(st.out_of_order, 0);
	ck_assert_uint_eq(st.records, n);
	runner__free(r);
	emu_fini(e);
	free(e);
}
END_TEST

START_TEST(test_merge_gaps_and_dups)
{
	struct runner_stats st;
	struct runner *r = new_runner(NULL, 1, NULL, 0);
	struct emu e;
	int i;

	emu_init(&e, 5);
	emu_call(&e, MAIN);
	for (i = 0; i < 20; i++) {
		emu_call(&e, A);
		emu_ret(&e);
	}
	emu_ret(&e);
	ck_assert_uint_eq(e.nev, 42);
	/* 10..19 never arrives; 0..9 arrives twice; 30..41 before 20..29. */
	feed_range(r, &e, 30, 42, 6);
	feed_range(r, &e, 0, 10, 10);
	feed_range(r, &e, 5, 10, 5);
	feed_range(r, &e, 20, 30, 4);
	runner__stats(r, &st); /* before join: nothing is final, just no crash */
	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.order_gaps, 1);
	ck_assert_uint_eq(st.gap_records, 10);
	ck_assert_uint_eq(st.dup_records, 5);
	ck_assert_uint_eq(st.records, 32);
	ck_assert_uint_eq(st.returns.orphan, 0);
	/* Calls of a: 5 in 0..9 (odd seqs are entries), 5 in 20..29, 5 in
	 * 30..39: the 5 in the hole are lost, and counted as such. */
	ck_assert_uint_eq(count__calls(runner__analyzer(r, "count"), A), 15);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

START_TEST(test_tid_reuse)
{
	struct runner_stats st;
	struct runner *r = new_runner(NULL, 1, NULL, 0);
	struct emu e1, e2;

	/* Thread 50 exits inside a; a new thread gets tid 50 again. */
	emu_init(&e1, 50);
	emu_call(&e1, MAIN);
	emu_call(&e1, A);
	emu_init(&e2, 50);
	e2.ts = 10000;
	e2.sp = 0x7fff00000000ULL;
	emu_call(&e2, B);
	emu_ret(&e2);
	feed_range(r, &e1, 0, e1.nev, 4);
	feed_range(r, &e2, 0, e2.nev, 4);
	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.tid_reuse, 1);
	ck_assert_uint_eq(st.returns.missing, 2);
	ck_assert_uint_eq(st.returns.matched, 1);
	ck_assert_uint_eq(st.dup_records, 0);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), AN_ROOT, B), 1);
	runner__free(r);
	emu_fini(&e1);
	emu_fini(&e2);
}
END_TEST

/* One thread's call main -> a (returned), main still open when fed
 * again: records from seq 0 at stack top sp, a's entry flagged noret if
 * asked. */
static void one_call(uint64_t *w, uint64_t ts, uint64_t sp, bool a_noret)
{
	rec__encode(w, CABBPF_EV_ENTRY, MAIN, ts, sp);
	rec__encode(w + REC_WORDS, CABBPF_EV_ENTRY, A | (a_noret ? REC_FID_NORET : 0), ts + 1,
		    sp - 0x40);
	if (!a_noret)
		rec__encode(w + 2 * REC_WORDS, CABBPF_EV_RETURN, A, ts + 2, sp - 0x38);
	else /* its return never comes: the next call finds it dead */
		rec__encode(w + 2 * REC_WORDS, CABBPF_EV_ENTRY, B, ts + 2, sp - 0x40);
}

/* per_process: each process's threads in its own instances (by the
 * chunk's tag), the merged result equal to all of them, a reused tid
 * bound to its new process; two analyzer threads, so the processes'
 * instances are folded across them. */
START_TEST(test_per_process)
{
	_Atomic uint32_t used = NF;
	struct runner_opts o = {
		.fnames = fnames,
		.nfuncs = NF,
		.nfuncs_used = &used,
		.analyzers = "count,callgraph",
		.nthreads = 2,
		.per_process = true,
	};
	struct runner_stats st;
	struct runner *r = NULL;
	uint64_t w[3 * REC_WORDS];
	size_t i;

	ck_assert_int_eq(runner__new(&o, NULL, 0, &r), 0);
	one_call(w, 100, 0x7000, false);
	/* process 10: threads 10 and 11 (two analyzer threads own them) */
	ck_assert_int_eq(runner__feed_tag(r, 10, 10, 0, w, 3), 0);
	ck_assert_int_eq(runner__feed_tag(r, 11, 10, 0, w, 3), 0);
	/* process 20: thread 21, its a armed no return */
	one_call(w, 200, 0x7000, true);
	ck_assert_int_eq(runner__feed_tag(r, 21, 20, 0, w, 3), 0);
	/* thread 11 again from sequence 0: its id reused by process 30 */
	one_call(w, 300, 0x6000, false);
	ck_assert_int_eq(runner__feed_tag(r, 11, 30, 0, w, 3), 0);
	ck_assert_int_eq(runner__join(r), 0);

	ck_assert_uint_eq(runner__nprocs(r), 3);
	ck_assert_uint_eq(runner__proc_pid(r, 0), 10);
	ck_assert_uint_eq(runner__proc_pid(r, 1), 20);
	ck_assert_uint_eq(runner__proc_pid(r, 2), 30);
	ck_assert_uint_eq(count__calls(runner__proc_analyzer(r, 0, "count"), MAIN), 2);
	ck_assert_uint_eq(count__calls(runner__proc_analyzer(r, 0, "count"), A), 2);
	ck_assert_uint_eq(count__calls(runner__proc_analyzer(r, 0, "count"), B), 0);
	ck_assert_uint_eq(count__calls(runner__proc_analyzer(r, 1, "count"), A), 1);
	ck_assert_uint_eq(count__calls(runner__proc_analyzer(r, 1, "count"), B), 1);
	/* a, which armed no return, is dead when b comes at its slot */
	ck_assert_uint_eq(callgraph__edge(runner__proc_analyzer(r, 1, "callgraph"), MAIN, B), 1);
	ck_assert_uint_eq(count__calls(runner__proc_analyzer(r, 2, "count"), MAIN), 1);
	ck_assert_uint_eq(callgraph__edge(runner__proc_analyzer(r, 2, "callgraph"), MAIN, A), 1);
	ck_assert_ptr_null(runner__proc_analyzer(r, 3, "count"));
	/* merged: the sum */
	ck_assert_uint_eq(count__calls(runner__analyzer(r, "count"), MAIN), 4);
	ck_assert_uint_eq(count__calls(runner__analyzer(r, "count"), A), 4);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), MAIN, A), 4);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), MAIN, B), 1);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.tid_reuse, 1);
	ck_assert_uint_eq(st.returns.matched, 3);
	ck_assert_uint_eq(st.returns.noret, 1);
	/* the first thread 11's main, ended with it */
	ck_assert_uint_eq(st.returns.missing, 1);
	ck_assert_uint_eq(st.unattributed, 0);
	for (i = 0; i < 3; i++) {
		struct runner_stats ps;

		runner__proc_stats(r, i, &ps);
		ck_assert_uint_eq(ps.records, i == 0 ? 6 : 3);
		ck_assert_uint_eq(ps.threads, i == 0 ? 2 : 1);
		ck_assert_uint_eq(ps.returns.matched, i == 1 ? 0 : i == 0 ? 2 : 1);
		ck_assert_uint_eq(ps.returns.missing, i == 0);
		ck_assert_uint_eq(ps.returns.noret, i == 1);
		ck_assert_uint_eq(ps.open, i == 1 ? 2 : 1); /* main (and b) */
	}
	runner__free(r);
}
END_TEST

/* An entry that armed no return: counted, the caller of what it calls,
 * closed as "noret" (not missing) when a later event finds it dead. */
START_TEST(test_noret_entry)
{
	struct runner *r = new_runner("count,callgraph", 1, NULL, 0);
	struct runner_stats st;
	uint64_t w[5 * REC_WORDS];

	rec__encode(w, CABBPF_EV_ENTRY, MAIN, 1, 0x7000);
	rec__encode(w + REC_WORDS, CABBPF_EV_ENTRY, A | REC_FID_NORET, 2, 0x6f00);
	rec__encode(w + 2 * REC_WORDS, CABBPF_EV_ENTRY, B, 3, 0x6e00); /* a calls b */
	rec__encode(w + 3 * REC_WORDS, CABBPF_EV_RETURN, B, 4, 0x6e08);
	rec__encode(w + 4 * REC_WORDS, CABBPF_EV_ENTRY, C, 5,
		    0x6f00); /* a returned: main calls c */
	ck_assert_int_eq(runner__feed(r, 1, 0, w, 5), 0);
	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.bad_records, 0);
	ck_assert_uint_eq(count__calls(runner__analyzer(r, "count"), A), 1);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), MAIN, A), 1);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), A, B), 1);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), MAIN, C), 1);
	ck_assert_uint_eq(st.returns.noret, 1);
	ck_assert_uint_eq(st.returns.missing, 0);
	ck_assert_uint_eq(st.returns.depth_limited, 0);
	ck_assert_uint_eq(st.returns.matched, 1);
	runner__free(r);
}
END_TEST

/* FORKS (pipeline/shadow.h): a forked child's stack starts as a copy of
 * its parent's at the fork. Its calls get the callers the copy has, its
 * own return closes an inherited frame (not matched: the parent's call),
 * with the child's time from the fork, and a copy is made only into an
 * empty stack. */
START_TEST(test_shadow_inherit)
{
	struct rec_sink rs = {0};
	struct shadow_sink k = {rs_call, rs_ret, &rs};
	struct shadow p, c;

	shadow__init(&p, 10);
	shadow__init(&c, 11);
	ck_assert_int_eq(shadow__entry(&p, MAIN, 0x7000, 10, &k), 0);
	ck_assert_int_eq(shadow__entry(&p, A, 0x6f00, 20, &k), 0);
	ck_assert_int_eq(shadow__inherit(&c, p.f, p.depth, 100), 0);
	ck_assert_uint_eq(shadow__depth(&c), 2);
	ck_assert_uint_eq(c.c.inherited, 2);
	ck_assert_uint_eq(shadow__open_inherited(&c), 2);
	/* the child calls leaf from inside a, twice */
	rs.ncalls = rs.nrets = 0;
	ck_assert_int_eq(shadow__entry(&c, LEAF, 0x6e00, 110, &k), 0);
	shadow__return(&c, LEAF, 0x6e08, 120, &k);
	ck_assert_int_eq(shadow__entry(&c, LEAF, 0x6e00, 130, &k), 0);
	shadow__return(&c, LEAF, 0x6e08, 140, &k);
	ck_assert_uint_eq(rs.ncalls, 2);
	ck_assert_uint_eq(rs.calls[0].caller, A);
	ck_assert_uint_eq(rs.calls[0].depth, 2);
	ck_assert_uint_eq(rs.calls[1].caller, A);
	/* its own return from a: the inherited frame, closed, not matched */
	shadow__return(&c, A, 0x6f08, 150, &k);
	ck_assert_uint_eq(rs.nrets, 3);
	ck_assert_uint_eq(rs.rets[2].fid, A);
	ck_assert(rs.rets[2].inherited);
	ck_assert(!rs.rets[2].matched);
	ck_assert_uint_eq(rs.rets[2].incl_ns, 50);     /* from the fork */
	ck_assert_uint_eq(rs.rets[2].self_ns, 50 - 20); /* its leaves' out */
	ck_assert_uint_eq(c.c.matched, 2);		/* the leaves only */
	ck_assert_uint_eq(c.c.inherited_matched, 1);
	/* main's return never comes (the guard put it back): a call from
	 * main's caller's level finds it dead, counted as inherited only */
	ck_assert_int_eq(shadow__entry(&c, B, 0x7000, 160, &k), 0);
	ck_assert_uint_eq(rs.calls[2].caller, AN_ROOT);
	ck_assert_uint_eq(c.c.missing + c.c.orphan + c.c.before, 0);
	ck_assert_uint_eq(shadow__open_inherited(&c), 0);
	/* the parent is untouched; a copy goes into an empty stack only */
	ck_assert_uint_eq(shadow__depth(&p), 2);
	ck_assert_int_eq(shadow__inherit(&c, p.f, p.depth, 200), -EINVAL);
	shadow__fini(&c);
	shadow__fini(&p);
}
END_TEST

/* A parent's stream: main, a; FORK of child at seq 2; leaf; a and main
 * return. Records from seq 0 into w (6 records). */
static void fork_parent(uint64_t *w, uint32_t child)
{
	rec__encode(w, CABBPF_EV_ENTRY, MAIN, 10, 0x7000);
	rec__encode(w + REC_WORDS, CABBPF_EV_ENTRY, A, 20, 0x6f00);
	rec__encode(w + 2 * REC_WORDS, CABBPF_EV_FORK, child, 30, 0);
	rec__encode(w + 3 * REC_WORDS, CABBPF_EV_ENTRY, LEAF, 40, 0x6e00);
	rec__encode(w + 4 * REC_WORDS, CABBPF_EV_RETURN, LEAF, 50, 0x6e08);
	rec__encode(w + 5 * REC_WORDS, CABBPF_EV_RETURN, A, 60, 0x6f08);
	rec__encode(w + 6 * REC_WORDS, CABBPF_EV_RETURN, MAIN, 70, 0x7008);
}

/* A child's stream: FORKED (parent ptid's FORK at pseq), k calls of leaf
 * from inside a, then a fork of its own (FORK of gchild, when not 0),
 * and its returns from a and main. Returns the records written. */
static uint32_t fork_child(uint64_t *w, uint32_t ptid, uint64_t pseq, uint32_t k,
			   uint32_t gchild)
{
	uint32_t n = 0, i;

	rec__encode(w, CABBPF_EV_FORKED, ptid, 31, pseq);
	n++;
	for (i = 0; i < k; i++) {
		rec__encode(w + n++ * REC_WORDS, CABBPF_EV_ENTRY, LEAF, 40 + i, 0x6e00);
		rec__encode(w + n++ * REC_WORDS, CABBPF_EV_RETURN, LEAF, 40 + i, 0x6e08);
	}
	if (gchild)
		rec__encode(w + n++ * REC_WORDS, CABBPF_EV_FORK, gchild, 90, 0);
	rec__encode(w + n++ * REC_WORDS, CABBPF_EV_RETURN, A, 100, 0x6f08);
	rec__encode(w + n++ * REC_WORDS, CABBPF_EV_RETURN, MAIN, 110, 0x7008);
	return n;
}

/* Forks through the runner (pipeline/runner.h, Forks), in the order that
 * makes the child wait: a grandchild's events first, then its parent's
 * (itself a child), then theirs, on two analyzer threads (tids 10 and
 * 12 on one, 11 on the other). Every child's calls of leaf have a as
 * their caller, the grandchild's too; their returns of a and main close
 * their inherited frames; nothing missing, orphan or open. */
START_TEST(test_fork_order)
{
	struct runner *r = new_runner("count,callgraph", 2, NULL, 0);
	struct runner_stats st;
	uint64_t wp[7 * REC_WORDS], wc[16 * REC_WORDS], wg[16 * REC_WORDS];
	uint32_t nc, ng;
	const void *cg;

	fork_parent(wp, 11);
	nc = fork_child(wc, 10, 2, 3, 12);
	ng = fork_child(wg, 11, 7, 4, 0); /* the child's FORK: seq 1 + 6 */
	ck_assert_int_eq(runner__feed_tag(r, 12, 12, 0, wg, ng), 0);
	ck_assert_int_eq(runner__feed_tag(r, 11, 11, 0, wc, nc), 0);
	ck_assert_int_eq(runner__feed_tag(r, 10, 10, 0, wp, 7), 0);
	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	cg = runner__analyzer(r, "callgraph");
	ck_assert_uint_eq(callgraph__edge(cg, A, LEAF), 1 + 3 + 4);
	ck_assert_uint_eq(callgraph__edge(cg, AN_ROOT, LEAF), 0);
	ck_assert_uint_eq(callgraph__edge(cg, AN_ROOT, MAIN), 1);
	ck_assert_uint_eq(callgraph__edge(cg, MAIN, A), 1);
	ck_assert_uint_eq(count__calls(runner__analyzer(r, "count"), A), 1);
	ck_assert_uint_eq(st.forks_inherited, 2);
	ck_assert_uint_eq(st.forks_waited, 2);
	ck_assert_uint_eq(st.forks_unknown + st.forks_unclaimed, 0);
	ck_assert_uint_eq(st.returns.inherited, 4);
	ck_assert_uint_eq(st.returns.inherited_matched, 4);
	ck_assert_uint_eq(st.returns.matched, 3 + 3 + 4); /* the leaves, a and main */
	ck_assert_uint_eq(st.returns.missing + st.returns.orphan + st.returns.before, 0);
	ck_assert_uint_eq(st.open + st.order_gaps + st.bad_records, 0);
	runner__free(r);
}
END_TEST

/* What cannot be inherited is counted, and nothing waits for ever: a
 * FORKED whose parent's FORK was lost in the kernel (known at once), one
 * whose parent's FORK never comes (waits until the join), and a FORK no
 * child takes (the child's FORKED lost). Each such child starts empty:
 * its calls' caller is <root>. */
START_TEST(test_fork_lost)
{
	struct runner *r = new_runner("count,callgraph", 1, NULL, 0);
	struct runner_stats st;
	uint64_t wp[7 * REC_WORDS], wc[16 * REC_WORDS];
	uint32_t nc;

	nc = fork_child(wc, 10, CABBPF_FORK_LOST, 2, 0);
	ck_assert_int_eq(runner__feed_tag(r, 11, 11, 0, wc, nc), 0);
	nc = fork_child(wc, 20, 2, 3, 0); /* thread 20 never comes */
	ck_assert_int_eq(runner__feed_tag(r, 21, 21, 0, wc, nc), 0);
	fork_parent(wp, 31); /* 31's FORKED lost: its stream starts with leaf */
	ck_assert_int_eq(runner__feed_tag(r, 10, 10, 0, wp, 7), 0);
	nc = fork_child(wc, 10, 2, 1, 0);
	ck_assert_int_eq(runner__feed_tag(r, 31, 31, 0, wc + REC_WORDS, nc - 1), 0);
	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), AN_ROOT, LEAF),
			  2 + 3 + 1);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), A, LEAF), 1);
	ck_assert_uint_eq(st.forks_unknown, 2);
	ck_assert_uint_eq(st.forks_unclaimed, 1);
	ck_assert_uint_eq(st.forks_inherited, 0);
	ck_assert_uint_eq(st.forks_waited, 1);
	ck_assert_uint_eq(st.order_gaps, 0);
	runner__free(r);
}
END_TEST

START_TEST(test_bad_records)
{
	struct runner_stats st;
	struct runner *r = new_runner("count", 1, NULL, 0);
	uint64_t w[3 * REC_WORDS];

	rec__encode(w, CABBPF_EV_ENTRY, NF + 3, 1, 0x1000); /* fid out of range */
	rec__encode(w + REC_WORDS, 0x55, 1, 2, 0x1000);	    /* unknown kind */
	rec__encode(w + 2 * REC_WORDS, CABBPF_EV_ENTRY, A, 3, 0x1000);
	ck_assert_int_eq(runner__feed(r, 1, 0, w, 3), 0);
	ck_assert_int_eq(runner__feed(r, 1, 3, w, 0), 0); /* empty chunk */
	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.bad_records, 2);
	ck_assert_uint_eq(st.records, 1);
	ck_assert_uint_eq(count__calls(runner__analyzer(r, "count"), A), 1);
	ck_assert_ptr_null(runner__analyzer(r, "callgraph"));
	/* Feeding after join is refused. */
	ck_assert_int_eq(runner__feed(r, 1, 3, w, 1), -EINVAL);
	runner__free(r);
}
END_TEST

START_TEST(test_pending_limit)
{
	struct runner_opts o = {.fnames = fnames, .nfuncs = NF, .max_pending = 10};
	struct runner_stats st;
	struct runner *r = NULL;
	struct emu e;
	int i;

	emu_init(&e, 6);
	emu_call(&e, MAIN);
	for (i = 0; i < 20; i++) {
		emu_call(&e, A);
		emu_ret(&e);
	}
	emu_ret(&e);
	ck_assert_int_eq(runner__new(&o, NULL, 0, &r), 0);
	/* 0..3 never comes (sampling mode recycled it); 4.. piles up. */
	feed_range(r, &e, 4, 42, 4);
	runner__stats(r, &st);
	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.order_gaps, 1);
	ck_assert_uint_eq(st.forced_gaps, 1);
	ck_assert_uint_eq(st.gap_records, 4);
	ck_assert_uint_eq(st.records, 38);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

/* ------------------------------------------------ with real cab_pp -- */

static struct cab_pp *new_pp(size_t chunk_records)
{
	struct cab_pp_opts po = {
		.chunk_records = chunk_records,
		.record_words = REC_WORDS,
		.nchunks = 8,
		.mode = CAB_EXHAUSTIVE,
	};
	struct cab_pp *pp = NULL;

	ck_assert_int_eq(cab_pp__new(&po, &pp), 0);
	return pp;
}

static void pp_put(struct cab_pp *pp, const struct emu *e, size_t from, size_t n)
{
	uint64_t *w = cab_pp__reserve(pp, e->tid, e->ev[from].seq);

	ck_assert_ptr_nonnull(w);
	recs_of(&e->ev[from], n, w);
	cab_pp__commit(pp, (uint32_t)n);
}

/* Forks with the analyzer threads running (pipeline/runner.h, Forks):
 * each stream is read by the thread that does not own it (forwarded),
 * the grandchild's and the child's before their parents': the result of
 * test_fork_order, whatever the threads' timing. */
START_TEST(test_fork_threads)
{
	struct cab_pp *pp[2] = {new_pp(32), new_pp(32)};
	uint64_t wp[7 * REC_WORDS], wc[16 * REC_WORDS], wg[16 * REC_WORDS], *w;
	struct runner_stats st;
	struct runner *r;
	uint32_t nc, ng;

	fork_parent(wp, 11);
	nc = fork_child(wc, 10, 2, 3, 12);
	ng = fork_child(wg, 11, 7, 4, 0);
	/* buffer b is read by thread b, tid t analyzed by thread t % 2 */
	w = cab_pp__reserve_tag(pp[1], 12, 12, 0);
	ck_assert_ptr_nonnull(w);
	memcpy(w, wg, ng * REC_WORDS * sizeof(*w));
	cab_pp__commit(pp[1], ng);
	w = cab_pp__reserve_tag(pp[0], 11, 11, 0);
	ck_assert_ptr_nonnull(w);
	memcpy(w, wc, nc * REC_WORDS * sizeof(*w));
	cab_pp__commit(pp[0], nc);
	w = cab_pp__reserve_tag(pp[1], 10, 10, 0);
	ck_assert_ptr_nonnull(w);
	memcpy(w, wp, 7 * REC_WORDS * sizeof(*w));
	cab_pp__commit(pp[1], 7);
	cab_pp__close(pp[0]);
	cab_pp__close(pp[1]);
	r = new_runner("callgraph", 2, pp, 2);
	ck_assert_int_eq(runner__start(r), 0);
	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), A, LEAF), 1 + 3 + 4);
	ck_assert_uint_eq(callgraph__edge(runner__analyzer(r, "callgraph"), AN_ROOT, LEAF), 0);
	ck_assert_uint_eq(st.forks_inherited, 2);
	ck_assert_uint_eq(st.forks_unknown + st.forks_unclaimed, 0);
	ck_assert_uint_eq(st.returns.inherited_matched, 4);
	ck_assert_uint_eq(st.returns.missing + st.returns.orphan + st.returns.before, 0);
	ck_assert_uint_eq(st.open + st.order_gaps, 0);
	runner__free(r);
	cab_pp__free(pp[0]);
	cab_pp__free(pp[1]);
}
END_TEST

START_TEST(test_merge_two_buffers)
{
	struct cab_pp *pp[2] = {new_pp(16), new_pp(16)};
	struct runner_stats st;
	struct runner *r;
	struct emu e, *es[1] = {&e};
	size_t i, k = 0;

	/* The thread migrated: chunks alternate between CPU 1 and CPU 0, and
	 * CPU 0 (read first) holds the later half of every pair. */
	emu_init(&e, 321);
	emu_random(&e, 5, 400, false);
	for (i = 0; i < e.nev; i += 16, k++) {
		size_t n = e.nev - i < 16 ? e.nev - i : 16;

		pp_put(pp[(k & 1) ? 0 : 1], &e, i, n);
	}
	cab_pp__close(pp[0]);
	cab_pp__close(pp[1]);
	r = new_runner(NULL, 1, pp, 2);
	ck_assert_int_eq(runner__start(r), 0);
	ck_assert_int_eq(runner__join(r), 0);
	check_truth(r, es, 1);
	check_returns(r, es, 1);
	runner__stats(r, &st);
	ck_assert_uint_gt(st.out_of_order, 0);
	ck_assert_uint_eq(st.records, e.nev);
	ck_assert(cab_pp__drained(pp[0]) && cab_pp__drained(pp[1]));
	runner__free(r);
	cab_pp__free(pp[0]);
	cab_pp__free(pp[1]);
	emu_fini(&e);
}
END_TEST

/* A producer that emulates the loader: several program threads migrating
 * between two CPUs, chunks of random size, published while the analyzer
 * threads consume. */
#define NPROG 5
struct producer {
	struct cab_pp **pp;
	unsigned npp;
	struct emu *es[NPROG];
};

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	size_t pos[NPROG] = {0};
	unsigned seed = 1234, cpu[NPROG] = {0}, left = NPROG, i;

	while (left) {
		struct emu *e;
		size_t n;

		i = rand_r(&seed) % NPROG;
		e = p->es[i];
		if (pos[i] == e->nev)
			continue;
		if (rand_r(&seed) % 4 == 0)
			cpu[i] = rand_r(&seed) % p->npp; /* migrate */
		n = 1 + rand_r(&seed) % 32;
		if (n > e->nev - pos[i])
			n = e->nev - pos[i];
		pp_put(p->pp[cpu[i]], e, pos[i], n);
		pos[i] += n;
		if (pos[i] == e->nev)
			left--;
	}
	for (i = 0; i < p->npp; i++)
		cab_pp__close(p->pp[i]);
	return NULL;
}

static void concurrent(unsigned nthreads, bool wild)
{
	struct cab_pp *pp[2] = {new_pp(32), new_pp(32)};
	struct producer p = {.pp = pp, .npp = 2};
	struct runner_stats st;
	struct runner *r;
	pthread_t th;
	uint64_t nev = 0;
	unsigned i;

	for (i = 0; i < NPROG; i++) {
		p.es[i] = malloc(sizeof(struct emu));
		ck_assert_ptr_nonnull(p.es[i]);
		emu_init(p.es[i], 4000 + i);
		emu_random(p.es[i], 100 * nthreads + i, 20000, wild);
		nev += p.es[i]->nev;
	}
	r = new_runner(NULL, nthreads, pp, 2);
	ck_assert_int_eq(runner__start(r), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, producer_main, &p), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.records, nev);
	ck_assert_uint_eq(st.threads, NPROG);
	if (nthreads > 1)
		ck_assert_uint_gt(st.forwarded, 0);
	if (!wild) {
		check_truth(r, p.es, NPROG);
		check_returns(r, p.es, NPROG);
	} else {
		/* longjmp and tail calls: calls stay exact, returns balance. */
		const void *cnt = runner__analyzer(r, "count");
		uint64_t frames = 0;
		unsigned f;

		for (f = 0; f < NF; f++) {
			uint64_t want = 0;

			for (i = 0; i < NPROG; i++)
				want += p.es[i]->calls[f];
			ck_assert_uint_eq(count__calls(cnt, f), want);
		}
		for (i = 0; i < NPROG; i++)
			frames += p.es[i]->frames;
		ck_assert_uint_eq(st.returns.matched + st.returns.missing + st.open, frames);
		ck_assert_uint_eq(st.order_gaps, 0);
	}
	runner__free(r);
	cab_pp__free(pp[0]);
	cab_pp__free(pp[1]);
	for (i = 0; i < NPROG; i++) {
		emu_fini(p.es[i]);
		free(p.es[i]);
	}
}

START_TEST(test_concurrent_1)
{
	concurrent(1, false);
}
END_TEST

START_TEST(test_concurrent_2)
{
	concurrent(2, false);
}
END_TEST

START_TEST(test_concurrent_3_wild)
{
	concurrent(3, true);
}
END_TEST

START_TEST(test_free_unjoined)
{
	struct cab_pp *pp[1] = {new_pp(8)};
	struct runner *r = new_runner(NULL, 2, pp, 1);

	/* The producer never closes: free must still stop the threads. */
	ck_assert_int_eq(runner__start(r), 0);
	ck_assert_int_eq(runner__start(r), -EINVAL);
	runner__free(r);
	cab_pp__free(pp[0]);
	runner__free(NULL);
}
END_TEST

/* ------------------------------------------------------------ reports -- */

static char *run_text(struct runner *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(sections__text(r, f), 0);
	fclose(f);
	return buf;
}

static char *run_json(struct runner *r, bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json *w = NULL;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(json__new(f, pretty, &w), 0);
	json__begin_object(w);
	json__key(w, "events");
	json__u64(w, 6);
	ck_assert_int_eq(sections__json(r, w), 0);
	json__end_object(w);
	ck_assert_int_eq(json__finish(w), 0);
	json__free(w);
	fclose(f);
	return buf;
}

START_TEST(test_report_json_exact)
{
	struct runner *r = new_runner(NULL, 1, NULL, 0);
	struct emu e;
	char *js;

	emu_init(&e, 42);
	emu_call(&e, MAIN);
	emu_call(&e, A);
	emu_ret(&e);
	emu_call(&e, A);
	emu_ret(&e);
	emu_ret(&e);
	feed_range(r, &e, 0, e.nev, 4);
	ck_assert_int_eq(runner__join(r), 0);
	/* Text mode: not joined is refused; here it is joined. */
	js = run_json(r, false);
	ck_assert_str_eq(
		js,
		"{\"events\":6,"
		"\"functions\":["
		"{\"name\":\"a\",\"fid\":1,\"calls\":2,\"matched\":2,\"incl_ns\":200,"
		"\"self_ns\":200,\"threads\":{\"42\":2}},"
		"{\"name\":\"main\",\"fid\":0,\"calls\":1,\"matched\":1,\"incl_ns\":500,"
		"\"self_ns\":300,\"threads\":{\"42\":1}},"
		"{\"name\":\"b\",\"fid\":2,\"calls\":0,\"matched\":0,\"incl_ns\":0,\"self_ns\":0,"
		"\"threads\":{}},"
		"{\"name\":\"c\",\"fid\":3,\"calls\":0,\"matched\":0,\"incl_ns\":0,\"self_ns\":0,"
		"\"threads\":{}},"
		"{\"name\":\"f\",\"fid\":4,\"calls\":0,\"matched\":0,\"incl_ns\":0,\"self_ns\":0,"
		"\"threads\":{}},"
		"{\"name\":\"leaf\",\"fid\":5,\"calls\":0,\"matched\":0,\"incl_ns\":0,\"self_ns\":"
		"0,"
		"\"threads\":{}},"
		"{\"name\":\"t\",\"fid\":6,\"calls\":0,\"matched\":0,\"incl_ns\":0,\"self_ns\":0,"
		"\"threads\":{}},"
		"{\"name\":\"u\",\"fid\":7,\"calls\":0,\"matched\":0,\"incl_ns\":0,\"self_ns\":0,"
		"\"threads\":{}}],"
		"\"threads\":{\"42\":{\"calls\":3,\"functions\":{\"a\":2,\"main\":1}}},"
		"\"callgraph\":["
		"{\"caller\":\"main\",\"callee\":\"a\",\"calls\":2,\"threads\":{\"42\":2}},"
		"{\"caller\":\"<root>\",\"callee\":\"main\",\"calls\":1,\"threads\":{\"42\":1}}],"
		"\"io\":{\"events\":0,\"functions\":[],\"outside\":{\"in_bytes\":0,\"out_bytes\":0,"
		"\"in_calls\":0,\"out_calls\":0},\"syscalls\":[],\"threads\":{},\"bad_records\":0,"
		"\"nomem\":0},"
		"\"cct\":{\"name\":\"<root>\",\"calls\":0,\"incl_ns\":0,\"self_ns\":0,"
		"\"cpu_incl_ns\":null,\"cpu_self_ns\":null,\"children\":["
		"{\"name\":\"main\",\"calls\":1,\"incl_ns\":500,\"self_ns\":300,"
		"\"cpu_incl_ns\":null,\"cpu_self_ns\":null,\"children\":["
		"{\"name\":\"a\",\"calls\":2,\"incl_ns\":200,\"self_ns\":200,"
		"\"cpu_incl_ns\":null,\"cpu_self_ns\":null,\"children\":[]}]}]},"
		"\"cct_threads\":{\"42\":{\"name\":\"<root>\",\"calls\":0,\"incl_ns\":0,"
		"\"self_ns\":0,\"cpu_incl_ns\":null,\"cpu_self_ns\":null,\"children\":["
		"{\"name\":\"main\",\"calls\":1,\"incl_ns\":500,\"self_ns\":300,"
		"\"cpu_incl_ns\":null,\"cpu_self_ns\":null,\"children\":["
		"{\"name\":\"a\",\"calls\":2,\"incl_ns\":200,\"self_ns\":200,"
		"\"cpu_incl_ns\":null,\"cpu_self_ns\":null,\"children\":[]}]}]}},"
		/* one 4096-node chunk of 80-byte nodes, its pointer array, the
		 * thread's state and its 64-entry path */
		"\"cct_info\":{\"nodes\":3,\"merged_nodes\":3,\"bytes\":328336,"
		"\"max_nodes\":1048576,\"folded_calls\":0,\"nomem\":0,"
		"\"collapse_recursion\":false,\"cpu_time\":false,"
		"\"wall_includes_probe_cost\":true,\"sampled\":false,\"est_self_unknown\":0,"
		"\"comp_unfit\":0},"
		/* main's call of 500 ns, a's two of 100 (on-CPU the same: no
		 * switch events) */
		"\"latency\":{\"time\":\"traced\",\"not_recorded\":0,\"functions\":["
		"{\"name\":\"main\",\"fid\":0,\"calls\":1,\"wall\":"
		"{\"min_ns\":500,\"max_ns\":500,\"sum_ns\":500,\"p50_ns\":[500,500],"
		"\"p90_ns\":[500,500],\"p99_ns\":[500,500],"
		"\"buckets\":[{\"lo_ns\":256,\"hi_ns\":511,\"count\":1}]},"
		"\"cpu\":"
		"{\"min_ns\":500,\"max_ns\":500,\"sum_ns\":500,\"p50_ns\":[500,500],"
		"\"p90_ns\":[500,500],\"p99_ns\":[500,500],"
		"\"buckets\":[{\"lo_ns\":256,\"hi_ns\":511,\"count\":1}]}},"
		"{\"name\":\"a\",\"fid\":1,\"calls\":2,\"wall\":"
		"{\"min_ns\":100,\"max_ns\":100,\"sum_ns\":200,\"p50_ns\":[100,100],"
		"\"p90_ns\":[100,100],\"p99_ns\":[100,100],"
		"\"buckets\":[{\"lo_ns\":64,\"hi_ns\":127,\"count\":2}]},"
		"\"cpu\":"
		"{\"min_ns\":100,\"max_ns\":100,\"sum_ns\":200,\"p50_ns\":[100,100],"
		"\"p90_ns\":[100,100],\"p99_ns\":[100,100],"
		"\"buckets\":[{\"lo_ns\":64,\"hi_ns\":127,\"count\":2}]}}]},"
		"\"returns\":{\"matched\":3,\"missing\":0,\"unwound\":0,\"switched\":0,\"exec\":0,"
		"\"orphan\":0,\"sampled\":0,\"orphan_sampled\":0,\"window_start\":0,\"before_"
		"attach\":0,\"open\":0,\"depth_"
		"limited\":0,\"unarmed\":0,\"inherited\":0,\"inherited_returned\":0},"
		"\"order_gaps\":0,\"order_gap_events\":0,"
		"\"runner\":{\"analyzer_threads\":1,\"analyzed\":6,\"chunks\":2,"
		"\"out_of_order_chunks\":0,\"forwarded_chunks\":0,\"forced_gaps\":0,\"threads\":1,"
		"\"tid_reuse\":0,\"forks_inherited\":0,\"forks_unknown\":0,\"forks_unclaimed\":0,"
		"\"forks_waited\":0,\"bad_records\":0,\"dup_records\":0,\"nomem_records\":0,"
		"\"size_records\":0,\"size_unset\":0,\"value_records\":0,\"value_unset\":0}}\n");
	free(js);
	js = run_json(r, true);
	ck_assert_ptr_nonnull(
		strstr(js, "\n  \"callgraph\": [\n    {\n      \"caller\": \"main\""));
	free(js);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

/* Every analyzer of the registry has its section of the report
 * (user/report/sec.h): one added without is not silently left out. */
START_TEST(every_analyzer_has_a_section)
{
	unsigned i;

	ck_assert_uint_gt(analyzer__count(), 0);
	for (i = 0; i < analyzer__count(); i++)
		ck_assert_msg(sections__known(analyzer__get(i)->name), "analyzer %s has no section",
			      analyzer__get(i)->name);
	ck_assert(!sections__known("nope"));
}
END_TEST

START_TEST(test_report_text)
{
	struct runner *r = new_runner(NULL, 1, NULL, 0), *r2;
	struct runner_opts o = {.fnames = fnames, .nfuncs = NF, .top = 2};
	struct emu e1, e2;
	char *txt;

	ck_assert_int_eq(sections__text(r, stdout), -EINVAL); /* not joined */
	emu_init(&e1, 11);
	emu_init(&e2, 12);
	emu_call(&e1, MAIN);
	emu_call(&e1, A);
	emu_ret(&e1);
	emu_call(&e1, B);
	emu_ret(&e1);
	emu_call(&e1, C);
	emu_ret(&e1);
	emu_ret(&e1);
	emu_call(&e2, A);
	emu_call(&e2, A);
	emu_ret(&e2);
	feed_range(r, &e1, 0, e1.nev, 3);
	feed_range(r, &e2, 0, e2.nev, 3);
	ck_assert_int_eq(runner__join(r), 0);
	txt = run_text(r);
	ck_assert_ptr_nonnull(
		strstr(txt, "calls per function: 4 of 8 functions called, by 2 threads"));
	/* a: 3 calls, 1 by T11, 2 by T12; sorted first. */
	ck_assert_ptr_nonnull(strstr(txt, "T12"));
	ck_assert_ptr_nonnull(strstr(txt, "call graph: 6 caller -> callee edges"));
	ck_assert_ptr_nonnull(strstr(txt, "<root> -> main"));
	ck_assert_ptr_nonnull(strstr(txt, "returns: 5 matched, 0 missing"));
	ck_assert_ptr_nonnull(strstr(txt, "0 orphan, 0 entered before attach, 1 open at stop"));
	ck_assert_ptr_nonnull(strstr(txt, "0 gaps"));
	{
		/* The first data row is the most called function. */
		const char *row = strstr(txt, "FUNCTION\n");

		ck_assert_ptr_nonnull(row);
		row = strchr(row, '\n') + 1;
		ck_assert_ptr_nonnull(strstr(row, "  a\n"));
		ck_assert(strstr(row, "  a\n") < strstr(row, "  main\n"));
	}
	free(txt);

	/* top = 2: the rest is summarised. */
	ck_assert_int_eq(runner__new(&o, NULL, 0, &r2), 0);
	feed_range(r2, &e1, 0, e1.nev, 3);
	ck_assert_int_eq(runner__join(r2), 0);
	txt = run_text(r2);
	ck_assert_ptr_nonnull(strstr(txt, "... 2 more functions"));
	ck_assert_ptr_nonnull(strstr(txt, "... 2 more edges"));
	ck_assert_ptr_null(strstr(txt, "T11")); /* one thread: no thread columns */
	free(txt);
	runner__free(r2);
	runner__free(r);
	emu_fini(&e1);
	emu_fini(&e2);
}
END_TEST

/* Sampling whose windows hold none of the run's progress (the probes took
 * all of the target's time in them, or they were too short for a tick):
 * no estimate can be made, and the report says so instead of printing an
 * empty list under its heading; with progress in two windows it gives
 * the estimate (every call in window 1 of 2: 100 + 300 units of 600). */
START_TEST(test_report_sampling_no_progress)
{
	static const uint64_t zero[1] = {0}, on[2] = {100, 300};
	struct an_windows none = {.n = 1, .on = zero, .total = 600, .measure = "user CPU"};
	struct an_windows two = {.n = 2, .on = on, .total = 600, .measure = "user CPU"};
	struct runner *r = new_runner("count", 1, NULL, 0);
	struct emu e;
	char *txt;

	emu_init(&e, 11);
	emu_call(&e, MAIN);
	emu_call(&e, A);
	emu_ret(&e);
	emu_ret(&e);
	feed_range(r, &e, 0, e.nev, 4);
	ck_assert_int_eq(runner__join(r), 0);
	runner__set_windows(r, &none);
	txt = run_text(r);
	ck_assert_msg(strstr(txt, "none: the windows hold none of the run's user CPU time"), "%s",
		      txt);
	free(txt);
	runner__set_windows(r, &two);
	txt = run_text(r);
	ck_assert_msg(!strstr(txt, "none: the windows"), "%s", txt);
	ck_assert_msg(strstr(txt, "Whole run, estimated"), "%s", txt);
	free(txt);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

/* Losses make counts lower bounds: the tables of the analyzers that
 * depend on the lost kind mark them ("N+", in the column's width) with a
 * note under the table; the others and a run without losses are as
 * before; the JSON lists the analyzers. */
static char *lower_bounds_json(struct runner *r, unsigned kind)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json *w = NULL;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(json__new(f, false, &w), 0);
	ck_assert_int_eq(sections__json_lower_bounds(r, w, kind), 0);
	ck_assert_int_eq(json__finish(w), 0);
	json__free(w);
	fclose(f);
	return buf;
}

START_TEST(test_report_lower_bounds)
{
	struct runner *r = new_runner(NULL, 1, NULL, 0);
	char *plain, *txt, *js;
	struct emu e;

	emu_init(&e, 11);
	emu_call(&e, MAIN);
	emu_call(&e, A);
	emu_ret(&e);
	emu_ret(&e);
	feed_range(r, &e, 0, e.nev, 3);
	ck_assert_int_eq(runner__join(r), 0);
	plain = run_text(r);
	ck_assert_ptr_null(strstr(plain, AN_LB_MARK));

	runner__set_lost(r, 5, 0, 0);
	txt = run_text(r);
	/* count and callgraph: CALLS right-aligned in 12 columns, marked */
	ck_assert_ptr_nonnull(strstr(txt, "\n          1+"));
	ck_assert_ptr_nonnull(strstr(txt, "\n          1+  main -> a\n"));
	ck_assert_ptr_nonnull(
		strstr(txt, "  (+: a lower bound: 5 call events were lost (kernel ring full))\n"));
	ck_assert_ptr_null(strstr(txt, "I/O events were lost"));
	js = lower_bounds_json(r, AN_LOST_CALLS);
	ck_assert_str_eq(js, "[\"count\",\"callgraph\",\"cct\",\"latency\"]\n");
	free(js);
	js = lower_bounds_json(r, AN_LOST_IO);
	ck_assert_str_eq(js, "[]\n");
	free(js);
	free(txt);

	/* I/O lost: the io analyzer's note only */
	runner__set_lost(r, 0, 3, 0);
	txt = run_text(r);
	ck_assert_ptr_nonnull(
		strstr(txt, "  (+: a lower bound: 3 I/O events were lost (kernel ring full))\n"));
	ck_assert_ptr_null(strstr(txt, "call events"));
	ck_assert_ptr_null(strstr(txt, "1+  main -> a"));
	js = lower_bounds_json(r, AN_LOST_IO);
	ck_assert_str_eq(js, "[\"io\"]\n");
	free(js);
	free(txt);

	/* records overwritten in the CAB buffers: either kind */
	runner__set_lost(r, 0, 0, 7);
	txt = run_text(r);
	ck_assert_ptr_nonnull(strstr(
		txt, "(+: a lower bound: 7 records were overwritten (--cab-mode sampling))"));
	ck_assert_ptr_nonnull(strstr(txt, "1+  main -> a"));
	free(txt);

	runner__set_lost(r, 0, 0, 0);
	txt = run_text(r);
	ck_assert_str_eq(txt, plain);
	free(txt);
	free(plain);
	runner__free(r);
	emu_fini(&e);
}
END_TEST

/* ------------------------------------------------------- latency.c -- */

/* One matched return of fid lasting ns (on-CPU: half of it). */
static void lat_ret(void *st, uint32_t fid, uint64_t ns)
{
	struct an_return r;

	memset(&r, 0, sizeof(r));
	r.fid = fid;
	r.matched = true;
	r.incl_ns = ns;
	r.cpu_incl_ns = ns / 2;
	analyzer_latency.on_return(st, &r);
}

/* The replay analyzer on a recursion deeper than its first stack (64
 * frames: its growth moves them) and a leaf at the bottom: every entry
 * opened and closed at its depth, the leaf on one line, -N hiding what it
 * names; refused without cabbpf replay's options. */
START_TEST(test_replay_deep)
{
	const char *const names[] = {"down", "leaf", "top"};
	struct an_ctx ctx = {.fnames = names, .nfuncs = 3, .top = 10};
	struct shadow_frame fr[202];
	struct replay_opts ro;
	struct replay_counts n;
	char *buf = NULL, want[512];
	size_t len = 0;
	void *a = NULL;
	uint32_t i, d = 150;
	FILE *f;

	ck_assert_int_eq(analyzer_replay.init(&ctx, &a), -EINVAL);
	memset(fr, 0, sizeof(fr));
	f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	memset(&ro, 0, sizeof(ro));
	ro.out = f;
	ctx.replay = &ro;
	ck_assert_int_eq(analyzer_replay.init(&ctx, &a), 0);
	for (i = 0; i <= d; i++) { /* down x d, then leaf */
		struct an_call c = {.tid = 7, .callee = i < d ? 0 : 1, .depth = i,
				    .ts = 1000 + i, .frames = fr};

		c.caller = i ? 0 : AN_ROOT;
		analyzer_replay.on_call(a, &c);
		fr[i].fid = c.callee;
		fr[i].ts = c.ts;
	}
	for (i = d + 1; i-- > 0;) {
		struct an_return r = {.tid = 7, .fid = i < d ? 0 : 1, .matched = true,
				      .depth = i, .frames = fr, .ts = 5000 + (d - i)};

		r.incl_ns = r.ts - fr[i].ts;
		analyzer_replay.on_return(a, &r);
	}
	fclose(f);
	replay__counts(a, &n);
	ck_assert_uint_eq(n.calls, d + 1);
	ck_assert_uint_eq(n.shown, d + 1);
	/* the leaf at depth d, on one line */
	snprintf(want, sizeof(want), "       7 | %*sleaf();\n", (int)(2 * d), "");
	ck_assert_msg(strstr(buf, want), "no leaf line at depth %u", d);
	snprintf(want, sizeof(want), "       7 | %*s} /* down */\n", (int)(2 * (d - 1)), "");
	ck_assert_msg(strstr(buf, want), "no close at depth %u", d - 1);
	ck_assert_ptr_nonnull(strstr(buf, "       7 | down() {\n"));
	analyzer_replay.free(a);
	free(buf);
}
END_TEST

/* Durations of known value: each in its log2 bucket, exact counts, the
 * exact min and max, percentiles as the ranges that surely hold them,
 * unmatched frames left out, two instances merged as one; the JSON says
 * the same and the text names the busiest function. */
START_TEST(test_latency_buckets)
{
	const char *const names[] = {"fast", "slow", "never"};
	struct an_ctx ctx = {.fnames = names, .nfuncs = 3, .top = 10};
	const struct latency_hist *h;
	void *a = NULL, *b = NULL;
	struct an_return un;
	uint64_t lo, hi;
	char *buf = NULL, *txt = NULL;
	size_t len = 0, tlen = 0;
	struct json *w = NULL;
	FILE *f;
	int i;

	ck_assert_uint_eq(latency__bucket(0), 0);
	ck_assert_uint_eq(latency__bucket(1), 0);
	ck_assert_uint_eq(latency__bucket(2), 1);
	ck_assert_uint_eq(latency__bucket(1023), 9);
	ck_assert_uint_eq(latency__bucket(1024), 10);
	ck_assert_uint_eq(latency__bucket(UINT64_MAX), LATENCY_BUCKETS - 1);
	latency__bounds(10, &lo, &hi);
	ck_assert_uint_eq(lo, 1024);
	ck_assert_uint_eq(hi, 2047);
	ck_assert_int_eq(analyzer_latency.init(&ctx, &a), 0);
	ck_assert_int_eq(analyzer_latency.init(&ctx, &b), 0);
	/* fast: 90 calls of 1,500 ns and 10 of 5,000 ns, over two
	 * instances; slow: 3 calls of 20 ms */
	for (i = 0; i < 60; i++)
		lat_ret(a, 0, 1500);
	for (i = 0; i < 30; i++)
		lat_ret(b, 0, 1500);
	for (i = 0; i < 10; i++)
		lat_ret(b, 0, 5000);
	for (i = 0; i < 3; i++)
		lat_ret(a, 1, 20000000);
	memset(&un, 0, sizeof(un));
	un.fid = 2;
	un.incl_ns = 7;
	analyzer_latency.on_return(a, &un); /* not matched: no duration */
	ck_assert_int_eq(analyzer_latency.merge(a, b), 0);
	h = latency__hist(a, 0, false);
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(h->n, 100);
	ck_assert_uint_eq(h->b[10], 90);
	ck_assert_uint_eq(h->b[12], 10);
	ck_assert_uint_eq(h->min_ns, 1500);
	ck_assert_uint_eq(h->max_ns, 5000);
	ck_assert_uint_eq(h->sum_ns, 90 * 1500 + 10 * 5000);
	ck_assert(latency__percentile(h, 0.5, &lo, &hi));
	ck_assert_uint_eq(lo, 1500); /* bucket 1024-2047, narrowed by min */
	ck_assert_uint_eq(hi, 2047);
	ck_assert(latency__percentile(h, 0.9, &lo, &hi));
	ck_assert_uint_eq(hi, 2047); /* rank 90: still the first bucket */
	ck_assert(latency__percentile(h, 0.99, &lo, &hi));
	ck_assert_uint_eq(lo, 4096);
	ck_assert_uint_eq(hi, 5000); /* narrowed by max */
	h = latency__hist(a, 0, true);
	ck_assert_uint_eq(h->b[9], 90); /* on-CPU: 750 ns */
	ck_assert_uint_eq(latency__hist(a, 1, false)->n, 3);
	ck_assert_ptr_null(latency__hist(a, 2, false));

	f = open_memstream(&buf, &len);
	ck_assert_int_eq(json__new(f, false, &w), 0);
	ck_assert_int_eq(json__begin_object(w), 0);
	ck_assert_int_eq(sec_latency__json(a, w), 0);
	ck_assert_int_eq(json__end_object(w), 0);
	ck_assert_int_eq(json__finish(w), 0);
	json__free(w);
	fclose(f);
	/* slow first (the most time), then fast with its two buckets */
	ck_assert_msg(strstr(buf, "\"functions\":[{\"name\":\"slow\",\"fid\":1,\"calls\":3,"), "%s",
		      buf);
	ck_assert_msg(strstr(buf, "{\"name\":\"fast\",\"fid\":0,\"calls\":100,\"wall\":{"
				  "\"min_ns\":1500,\"max_ns\":5000,\"sum_ns\":185000,"
				  "\"p50_ns\":[1500,2047],\"p90_ns\":[1500,2047],"
				  "\"p99_ns\":[4096,5000],\"buckets\":[{\"lo_ns\":1024,"
				  "\"hi_ns\":2047,\"count\":90},{\"lo_ns\":4096,\"hi_ns\":8191,"
				  "\"count\":10}]}"),
		      "%s", buf);
	ck_assert_ptr_null(strstr(buf, "never"));
	free(buf);

	f = open_memstream(&txt, &tlen);
	ck_assert_int_eq(sec_latency__text(a, f), 0);
	fclose(f);
	ck_assert_msg(strstr(txt, "slow: 3 calls; wall min 20 ms"), "%s", txt);
	ck_assert_msg(strstr(txt, "fast: 100 calls; wall min 1.5 us, p50 1.5 us-2.05 us"), "%s",
		      txt);
	ck_assert_msg(strstr(txt, "        1024 -> 2047    : 90         |"), "%s", txt);
	free(txt);
	analyzer_latency.free(a);
	analyzer_latency.free(b);
}
END_TEST

/* ------------------------------------------------ registry, options -- */

START_TEST(test_select)
{
	const struct analyzer_ops *ops[AN_MAX];
	struct runner_opts o = {.fnames = fnames, .nfuncs = NF};
	struct runner *r = NULL;
	unsigned n;

	ck_assert_int_eq(analyzer__select(NULL, ops, &n), 0);
	/* all but the opt-in timeline, isp and replay */
	ck_assert_uint_eq(n, analyzer__count() - 3);
	ck_assert_uint_eq(n, 5); /* count, callgraph, io, cct, latency */
	ck_assert(analyzer_replay.opt_in);
	ck_assert_ptr_eq(ops[3], &analyzer_cct);
	ck_assert_ptr_eq(ops[4], &analyzer_latency);
	ck_assert(analyzer_isp.opt_in);
	ck_assert_int_eq(analyzer__select("isp,count", ops, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_eq(ops[1], &analyzer_isp);
	/* "all" is the same; the opt-in timeline only by name */
	ck_assert_int_eq(analyzer__select("all", ops, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(analyzer__select("all,timeline", ops, &n), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_ptr_eq(ops[5], &analyzer_timeline);
	ck_assert_int_eq(analyzer__select("timeline", ops, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(analyzer__select("callgraph", ops, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(ops[0]->name, "callgraph");
	/* Registry order, spaces, duplicates and empty items are fine. */
	ck_assert_int_eq(analyzer__select(" callgraph , count,,count ", ops, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_eq(ops[0], &analyzer_count);
	ck_assert_ptr_eq(ops[1], &analyzer_callgraph);
	ck_assert_int_eq(analyzer__select("count,bogus", ops, &n), -EINVAL);
	ck_assert_int_eq(analyzer__select("", ops, &n), -EINVAL);
	ck_assert_int_eq(analyzer__select(" , ", ops, &n), -EINVAL);
	ck_assert_int_eq(analyzer__select("counts", ops, &n), -EINVAL);
	ck_assert_ptr_eq(analyzer__find("count"), &analyzer_count);
	ck_assert_ptr_null(analyzer__find("coun"));
	ck_assert_ptr_eq(analyzer__get(2), &analyzer_io);
	ck_assert_ptr_eq(analyzer__get(3), &analyzer_cct);
	ck_assert_ptr_eq(analyzer__get(4), &analyzer_latency);
	ck_assert_ptr_eq(analyzer__get(5), &analyzer_timeline);
	ck_assert_ptr_eq(analyzer__get(6), &analyzer_isp);
	ck_assert_ptr_eq(analyzer__get(7), &analyzer_replay);
	ck_assert_ptr_null(analyzer__get(8));

	o.analyzers = "nope";
	ck_assert_int_eq(runner__new(&o, NULL, 0, &r), -EINVAL);
	ck_assert_ptr_null(r);
	o.analyzers = NULL;
	o.nfuncs = 3;
	o.fnames = NULL;
	ck_assert_int_eq(runner__new(&o, NULL, 0, &r), -EINVAL);
}
END_TEST

START_TEST(test_root_name)
{
	struct an_ctx c = {.fnames = fnames, .nfuncs = NF};
	const char *names[2] = {"x", NULL};
	struct an_ctx c2 = {.fnames = names, .nfuncs = 2};
	char buf[24];

	ck_assert_str_eq(an_ctx__name(&c, AN_ROOT, buf), "<root>");
	ck_assert_str_eq(an_ctx__name(&c, B, buf), "b");
	ck_assert_str_eq(an_ctx__name(&c2, 1, buf), "fid#1");
	ck_assert_str_eq(an_ctx__name(&c2, 9, buf), "fid#9");
}
END_TEST

/* ------------------------------------------------------------ json -- */

static char *json_of(void (*body)(struct json *), int *err, bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json *w = NULL;

	ck_assert_int_eq(json__new(f, pretty, &w), 0);
	body(w);
	*err = json__finish(w);
	json__free(w);
	fclose(f);
	return buf;
}

static void body_mixed(struct json *w)
{
	json__begin_object(w);
	json__key(w, "s");
	json__string(w, "q\"b\\n\n\t\x01 \xc3\xa9 \xff end");
	json__key(w, "arr");
	json__begin_array(w);
	json__u64(w, UINT64_MAX);
	json__i64(w, INT64_MIN);
	json__double(w, 0.1);
	json__double(w, 1.0 / 3.0);
	json__double(w, INFINITY);
	json__bool(w, true);
	json__null(w);
	json__string(w, NULL);
	json__begin_object(w);
	json__end_object(w);
	json__begin_array(w);
	json__end_array(w);
	json__end_array(w);
	json__key_u64(w, 4242);
	json__u64(w, 0);
	json__end_object(w);
}

static void body_value_without_key(struct json *w)
{
	json__begin_object(w);
	ck_assert_int_eq(json__u64(w, 1), -EINVAL);
	ck_assert_int_eq(json__end_object(w), -EINVAL); /* sticky */
}

static void body_unbalanced(struct json *w)
{
	json__begin_array(w);
	json__u64(w, 1);
}

static void body_key_in_array(struct json *w)
{
	json__begin_array(w);
	ck_assert_int_eq(json__key(w, "k"), -EINVAL);
}

static void body_two_roots(struct json *w)
{
	json__u64(w, 1);
	ck_assert_int_eq(json__u64(w, 2), -EINVAL);
}

static void body_deep(struct json *w)
{
	int i;

	for (i = 0; i < JSON_MAX_DEPTH; i++)
		ck_assert_int_eq(json__begin_array(w), 0);
	ck_assert_int_eq(json__begin_array(w), -EINVAL);
}

static void body_pretty(struct json *w)
{
	json__begin_object(w);
	json__key(w, "a");
	json__begin_array(w);
	json__u64(w, 1);
	json__u64(w, 2);
	json__end_array(w);
	json__key(w, "e");
	json__begin_object(w);
	json__end_object(w);
	json__end_object(w);
}

START_TEST(test_json)
{
	int err;
	char *s;

	s = json_of(body_mixed, &err, false);
	ck_assert_int_eq(err, 0);
	ck_assert_str_eq(s, "{\"s\":\"q\\\"b\\\\n\\n\\t\\u0001 \xc3\xa9 \\ufffd end\","
			    "\"arr\":[18446744073709551615,-9223372036854775808,0.1,"
			    "0.33333333333333331,null,true,null,null,{},[]],\"4242\":0}\n");
	free(s);
	s = json_of(body_pretty, &err, true);
	ck_assert_int_eq(err, 0);
	ck_assert_str_eq(s, "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": {}\n}\n");
	free(s);
	free(json_of(body_value_without_key, &err, false));
	ck_assert_int_eq(err, -EINVAL);
	free(json_of(body_unbalanced, &err, false));
	ck_assert_int_eq(err, -EINVAL);
	free(json_of(body_key_in_array, &err, false));
	ck_assert_int_eq(err, -EINVAL);
	free(json_of(body_two_roots, &err, false));
	ck_assert_int_eq(err, -EINVAL);
	free(json_of(body_deep, &err, false));
	ck_assert_int_eq(err, -EINVAL);
	json__free(NULL);
}
END_TEST

START_TEST(test_json_write_error)
{
	FILE *f = fopen("/dev/full", "w");
	struct json *w = NULL;
	int i;

	if (!f)
		return; /* no /dev/full: nothing to test */
	setvbuf(f, NULL, _IONBF, 0);
	ck_assert_int_eq(json__new(f, false, &w), 0);
	json__begin_array(w);
	for (i = 0; i < 10; i++)
		json__u64(w, (uint64_t)i);
	json__end_array(w);
	ck_assert_int_eq(json__finish(w), -EIO);
	json__free(w);
	fclose(f);
}
END_TEST

/* ------------------------------------------------------------ emit -- */

struct emit_obj {
	uint64_t a, b, c;
};

static uint64_t emit_sum(const void *obj)
{
	const struct emit_obj *o = obj;

	return o->a + o->c;
}

static const struct emit_field emit_fields[] = {
	{"a", "x: %" PRIu64 " apples", EMIT_AT(struct emit_obj, a)},
	{"b", NULL, EMIT_AT(struct emit_obj, b)},
	{NULL, ", %" PRIu64 " pears", EMIT_AT(struct emit_obj, c)},
	{"sum", "; %" PRIu64 " in all", EMIT_GET(emit_sum)},
};

static const struct emit_obj emit_o = {3, UINT64_MAX, 4};

static void body_emit(struct json *w)
{
	json__begin_object(w);
	ck_assert_int_eq(emit__json(w, emit_fields, EMIT_N(emit_fields), &emit_o), 0);
	json__end_object(w);
}

/* One description, both outputs: the text skips the JSON-only field and
 * the JSON the text-only one, each in the table's order. */
START_TEST(test_emit_text_and_json)
{
	char *buf = NULL, *js;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	emit__text(f, emit_fields, EMIT_N(emit_fields), &emit_o);
	fclose(f);
	ck_assert_str_eq(buf, "x: 3 apples, 4 pears; 7 in all");
	free(buf);
	js = json_of(body_emit, &err, false);
	ck_assert_int_eq(err, 0);
	ck_assert_str_eq(js, "{\"a\":3,\"b\":18446744073709551615,\"sum\":7}\n");
	free(js);
}
END_TEST

/* A table described once: a row's text cells and JSON keys, each in the
 * table's order; conditions, nulls, dashes, lower bounds, a format. */
struct emit_row {
	uint64_t calls, ns, extra;
	uint32_t fid;
	int fd;
	double share;
	const char *name;
	char comm[8];
	bool have;
};

static struct emit_val emit_row_cpu(const void *row, const void *ctx)
{
	const struct emit_row *r = row;

	ck_assert_ptr_eq(ctx, (const void *)&emit_o);
	return (struct emit_val){.u = r->ns / 2, .null = !r->have};
}

#define EMIT_EXTRA 1u

static const struct emit_col emit_cols[] = {
	{"name", NULL, 0, EMIT_STR, EMIT_COL(struct emit_row, name)},
	{"calls", "CALLS", 8, EMIT_COUNT, EMIT_COL(struct emit_row, calls)},
	{"ns", "MS", 8, EMIT_NS_MS, EMIT_COL(struct emit_row, ns), .flags = EMIT_DASH0},
	{"cpu_ns", "CPU", 6, EMIT_NS_MS, EMIT_FN(emit_row_cpu)},
	{"share", "PCT", 7, EMIT_PCT, EMIT_COL(struct emit_row, share), .prec = 2},
	{"extra", "EXTRA", 6, EMIT_U64, EMIT_COL(struct emit_row, extra), .when = EMIT_EXTRA},
	{"fd", "FD", 3, EMIT_INT, EMIT_COL(struct emit_row, fd), .flags = EMIT_NONZERO},
	{"comm", "COMM", -5, EMIT_CHARS, EMIT_COL(struct emit_row, comm), .prec = 3},
	{NULL, "NAME", 0, EMIT_STR, EMIT_COL(struct emit_row, name), .flags = EMIT_GAP2},
	{"fid", "", 0, EMIT_U32, EMIT_COL(struct emit_row, fid), .fmt = " [%" PRIu64 "]"},
};

static const struct emit_row emit_r1 = {1234, 2500000, 7, 9, -1, 0.5, "f", "abcdef", true};
static const struct emit_row emit_r2 = {5, 0, 0, 3, 0, 0.125, NULL, "x", false};
static struct emit_col emit_sel[EMIT_N(emit_cols)];
static size_t emit_nsel;

static void body_emit_rows(struct json *w)
{
	json__begin_array(w);
	json__begin_object(w);
	ck_assert_int_eq(emit__row_json(w, emit_sel, emit_nsel, &emit_r1, &emit_o), 0);
	json__end_object(w);
	json__begin_object(w);
	ck_assert_int_eq(emit__row_json(w, emit_sel, emit_nsel, &emit_r2, &emit_o), 0);
	json__end_object(w);
	json__end_array(w);
}

START_TEST(test_emit_table)
{
	char *buf = NULL, *js;
	size_t len = 0;
	FILE *f;
	int err;

	/* without the EXTRA condition: its column is left out of both */
	emit_nsel = emit__select(emit_sel, emit_cols, EMIT_N(emit_cols), 0);
	ck_assert_uint_eq(emit_nsel, EMIT_N(emit_cols) - 1);
	f = open_memstream(&buf, &len);
	emit__head(f, emit_sel, emit_nsel);
	emit__row_text(f, emit_sel, emit_nsel, &emit_r1, false, &emit_o);
	emit__row_text(f, emit_sel, emit_nsel, &emit_r2, true, &emit_o);
	fclose(f);
	ck_assert_str_eq(buf, "   CALLS       MS    CPU     PCT  FD COMM   NAME\n"
			      "    1234    2.500  1.250  50.00%  -1 abc    f [9]\n"
			      "      5+        -      -  12.50%   0 x      ? [3]\n");
	free(buf);
	js = json_of(body_emit_rows, &err, false);
	ck_assert_int_eq(err, 0);
	ck_assert_str_eq(js, "[{\"name\":\"f\",\"calls\":1234,\"ns\":2500000,\"cpu_ns\":1250000,"
			     "\"share\":0.5,\"fd\":-1,\"comm\":\"abcdef\",\"fid\":9},"
			     "{\"name\":null,\"calls\":5,\"ns\":0,\"cpu_ns\":null,\"share\":0.125,"
			     "\"comm\":\"x\",\"fid\":3}]\n");
	free(js);
	/* with it; and cells without the newline around columns of the caller's */
	emit_nsel = emit__select(emit_sel, emit_cols, EMIT_N(emit_cols), EMIT_EXTRA);
	ck_assert_uint_eq(emit_nsel, EMIT_N(emit_cols));
	buf = NULL;
	f = open_memstream(&buf, &len);
	emit__head_cells(f, emit_sel, 3, true);
	fputs(" |", f);
	emit__head_cells(f, emit_sel + 5, 1, false);
	fputc('\n', f);
	emit__cells(f, emit_sel, 3, &emit_r1, false, &emit_o, true);
	fputs(" |", f);
	emit__cells(f, emit_sel + 5, 1, &emit_r1, false, &emit_o, false);
	fclose(f);
	ck_assert_str_eq(buf, "   CALLS       MS |  EXTRA\n"
			      "    1234    2.500 |      7");
	free(buf);
}
END_TEST

START_TEST(test_hmap)
{
	struct hmap m;
	struct hmap_ent *e;
	uint64_t *v, sum = 0;
	size_t it = 0, n = 0;
	uint64_t k;

	hmap__init(&m);
	ck_assert_ptr_null(hmap__find(&m, 1));
	for (k = 0; k < 10000; k++) {
		ck_assert_int_eq(hmap__upsert(&m, k * 0x100000001ULL, &v), 0);
		ck_assert_uint_eq(*v, 0);
		*v = k;
	}
	ck_assert_int_eq(hmap__upsert(&m, 5 * 0x100000001ULL, &v), 0);
	ck_assert_uint_eq(*v, 5);
	ck_assert_uint_eq(hmap__len(&m), 10000);
	for (k = 0; k < 10000; k++) {
		v = hmap__find(&m, k * 0x100000001ULL);
		ck_assert_ptr_nonnull(v);
		ck_assert_uint_eq(*v, k);
	}
	ck_assert_ptr_null(hmap__find(&m, 3));
	while (hmap__next(&m, &it, &e)) {
		sum += e->val;
		n++;
	}
	ck_assert_uint_eq(n, 10000);
	ck_assert_uint_eq(sum, 9999ULL * 10000 / 2);
	hmap__fini(&m);
	hmap__fini(NULL);
}
END_TEST

/* xml__escape: markup escaped, control characters blanked, max bytes. */
START_TEST(test_xml_escape)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	xml__escape(f, "a<b>&\"c'\td", SIZE_MAX);
	fputc('|', f);
	xml__escape(f, "operator<<(int)", 9);
	fclose(f);
	ck_assert_str_eq(buf, "a&lt;b&gt;&amp;&quot;c&apos; d|operator&lt;");
	free(buf);
}
END_TEST

/* hmap__obj: one zeroed object per key, made once, found again. */
START_TEST(test_hmap_obj)
{
	struct hmap m;
	struct hmap_ent *e;
	uint64_t *o[100], *p;
	bool created;
	size_t it = 0, n = 0;

	hmap__init(&m);
	for (int k = 0; k < 100; k++) {
		o[k] = hmap__obj(&m, (uint64_t)k, 4 * sizeof(uint64_t), &created);
		ck_assert_ptr_nonnull(o[k]);
		ck_assert(created);
		ck_assert_uint_eq(o[k][0] | o[k][3], 0);
		o[k][3] = (uint64_t)k;
	}
	for (int k = 0; k < 100; k++) {
		p = hmap__obj(&m, (uint64_t)k, 4 * sizeof(uint64_t), &created);
		ck_assert_ptr_eq(p, o[k]);
		ck_assert(!created);
		ck_assert_uint_eq(p[3], (uint64_t)k);
	}
	ck_assert_ptr_eq(hmap__obj(&m, 7, 8, NULL), o[7]);
	while (hmap__next(&m, &it, &e)) {
		free((void *)(uintptr_t)e->val);
		n++;
	}
	ck_assert_uint_eq(n, 100);
	hmap__fini(&m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("analyzers");
	TCase *tc = tcase_create("unit");
	TCase *tcc = tcase_create("concurrent");

	tcase_add_test(tc, test_shadow_nesting_times);
	tcase_add_test(tc, test_shadow_orphan);
	tcase_add_test(tc, test_shadow_slot_word);
	tcase_add_test(tc, test_shadow_jump);
	tcase_add_test(tc, test_shadow_rethrow);
	tcase_add_test(tc, test_shadow_sampling_windows);
	tcase_add_test(tc, test_shadow_guard_exception);
	tcase_add_test(tc, test_shadow_guard_catch_slot);
	tcase_add_test(tc, test_shadow_guard_switch);
	tcase_add_test(tc, test_shadow_guard_backtrace);
	tcase_add_test(tc, test_shadow_guard_altstack);
	tcase_add_test(tc, test_shadow_inherit);
	tcase_add_test(tc, test_fork_order);
	tcase_add_test(tc, test_fork_lost);
	tcase_add_test(tc, test_fork_threads);
	tcase_add_test(tc, test_simple_nesting);
	tcase_add_test(tc, test_recursion);
	tcase_add_test(tc, test_deep_recursion);
	tcase_add_test(tc, test_longjmp);
	tcase_add_test(tc, test_tail_call);
	tcase_add_test(tc, test_tail_call_past_limit);
	tcase_add_test(tc, test_lost_return);
	tcase_add_test(tc, test_open_frames);
	tcase_add_test(tc, test_interleaved_threads);
	tcase_add_test(tc, test_merge_out_of_order_feed);
	tcase_add_test(tc, test_merge_gaps_and_dups);
	tcase_add_test(tc, test_tid_reuse);
	tcase_add_test(tc, test_bad_records);
	tcase_add_test(tc, test_per_process);
	tcase_add_test(tc, test_noret_entry);
	tcase_add_test(tc, test_pending_limit);
	tcase_add_test(tc, test_report_json_exact);
	tcase_add_test(tc, test_report_text);
	tcase_add_test(tc, every_analyzer_has_a_section);
	tcase_add_test(tc, test_report_sampling_no_progress);
	tcase_add_test(tc, test_report_lower_bounds);
	tcase_add_test(tc, test_latency_buckets);
	tcase_add_test(tc, test_replay_deep);
	tcase_add_test(tc, test_select);
	tcase_add_test(tc, test_root_name);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_json_write_error);
	tcase_add_test(tc, test_emit_text_and_json);
	tcase_add_test(tc, test_emit_table);
	tcase_add_test(tc, test_hmap);
	tcase_add_test(tc, test_hmap_obj);
	tcase_add_test(tc, test_xml_escape);
	suite_add_tcase(s, tc);

	tcase_add_test(tcc, test_merge_two_buffers);
	tcase_add_test(tcc, test_concurrent_1);
	tcase_add_test(tcc, test_concurrent_2);
	tcase_add_test(tcc, test_concurrent_3_wild);
	tcase_add_test(tcc, test_free_unjoined);
	tcase_set_timeout(tcc, 60);
	suite_add_tcase(s, tcc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
