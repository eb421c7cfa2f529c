// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for the calling-context tree (analyzers/cct.h), fed exactly as
 * the runner feeds it: synthetic event sequences with known timestamps run
 * through a real shadow stack (pipeline/shadow.h) into the analyzer. Every
 * tree is compared node by node, times to the nanosecond; the views
 * (folded stacks, SVG) line by line.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "user/report/sec.h"
#include "analyzers/analyzer.h"
#include "analyzers/cct.h"
#include "user/report/flame.h"
#include "common/json.h"
#include "pipeline/shadow.h"
#include "cabbpf_guard.h"

#define GUARD_FID(site, fl) ((uint32_t)(site) | (uint32_t)(fl) << 8)

enum { MAIN, A, B, C, D, F, WORKER, NFN };
static const char *const names[NFN] = {"main", "a", "b", "c", "d", "f", "worker"};

#define BASE_SP 0x7fff0000ULL
#define MAXD 512

/* One program thread: a shadow stack feeding one analyzer set. */
struct drv {
	struct an_ctx ctx;
	struct cct_opts o;
	struct an_set set;
	struct shadow sh;
	struct shadow_sink k;
	uint64_t ts;
	uint32_t fid[MAXD];
	int depth;
};

static void sink_call(void *ctx, const struct an_call *c)
{
	an_set__on_call(ctx, c);
}

static void sink_return(void *ctx, const struct an_return *r)
{
	an_set__on_return(ctx, r);
}

static void drv_init(struct drv *d, uint32_t tid, const struct cct_opts *o)
{
	const struct analyzer_ops *ops = &analyzer_cct;

	memset(d, 0, sizeof(*d));
	if (o)
		d->o = *o;
	else
		d->o.min_pct = -1;
	d->ctx.fnames = names;
	d->ctx.nfuncs = NFN;
	d->ctx.top = 50;
	d->ctx.cct = &d->o;
	ck_assert_int_eq(an_set__init(&d->set, &ops, 1, &d->ctx), 0);
	shadow__init(&d->sh, tid);
	d->k = (struct shadow_sink){.on_call = sink_call, .on_return = sink_return, .ctx = &d->set};
	d->ts = 1000;
}

static void drv_fini(struct drv *d)
{
	shadow__fini(&d->sh);
	an_set__fini(&d->set);
}

static uint64_t slot(int depth)
{
	return BASE_SP - 16 * (uint64_t)(depth + 1);
}

/* After dt ns, call fid from the current frame. */
static void call(struct drv *d, uint32_t fid, uint64_t dt)
{
	d->ts += dt;
	ck_assert_int_lt(d->depth, MAXD);
	shadow__entry(&d->sh, fid, slot(d->depth), d->ts, &d->k);
	d->fid[d->depth++] = fid;
}

/* After dt ns, the current frame returns. */
static void ret(struct drv *d, uint64_t dt)
{
	d->ts += dt;
	ck_assert_int_gt(d->depth, 0);
	d->depth--;
	shadow__return(&d->sh, d->fid[d->depth], slot(d->depth) + 8, d->ts, &d->k);
}

/* The thread is off its CPU for ns (a switch-in event after it). */
static void off(struct drv *d, uint64_t ns)
{
	d->ts += ns;
	shadow__offcpu(&d->sh, ns);
}

static void *state(struct drv *d)
{
	return an_set__state(&d->set, "cct");
}

static uint32_t fid_of(const char *name)
{
	uint32_t i;

	for (i = 0; i < NFN; i++)
		if (!strcmp(names[i], name))
			return i;
	ck_abort_msg("no function %s", name);
	return 0;
}

/* The node at path "main;a;c" below the root, or CCT_NONE. */
static uint32_t at(const struct cct_tree *t, const char *path)
{
	char buf[256], *save = NULL, *tok;
	uint32_t id = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ";", &save); tok && id != CCT_NONE;
	     tok = strtok_r(NULL, ";", &save))
		id = cct__child(t, id, fid_of(tok));
	return id;
}

static const struct cct_node *node(const struct cct_tree *t, const char *path)
{
	uint32_t id = at(t, path);

	ck_assert_msg(id != CCT_NONE, "no context %s", path);
	return cct__node(t, id);
}

static void assert_node(const struct cct_tree *t, const char *path, uint64_t calls, uint64_t incl,
			uint64_t self)
{
	const struct cct_node *n = node(t, path);

	ck_assert_msg(n->calls == calls, "%s: calls %llu, want %llu", path,
		      (unsigned long long)n->calls, (unsigned long long)calls);
	ck_assert_msg(n->incl_ns == incl, "%s: incl %llu, want %llu", path,
		      (unsigned long long)n->incl_ns, (unsigned long long)incl);
	ck_assert_msg(n->self_ns == self, "%s: self %llu, want %llu", path,
		      (unsigned long long)n->self_ns, (unsigned long long)self);
}

/* Incl >= self everywhere, children's inclusive sum <= the parent's (the
 * root excepted: it has no time of its own), the same for on-CPU time,
 * and on-CPU <= wall. */
static void assert_invariants(const struct cct_tree *t)
{
	uint32_t id, c;

	for (id = 0; id < t->n; id++) {
		const struct cct_node *n = cct__node(t, id);
		uint64_t sum = 0, csum = 0, kids = 0;

		ck_assert_uint_ge(n->incl_ns, n->self_ns);
		ck_assert_uint_ge(n->cpu_incl_ns, n->cpu_self_ns);
		ck_assert_uint_le(n->cpu_incl_ns, n->incl_ns);
		ck_assert_uint_le(n->cpu_self_ns, n->self_ns);
		for (c = n->child; c != CCT_NONE; c = cct__node(t, c)->sibling) {
			ck_assert_uint_eq(cct__node(t, c)->parent, id);
			ck_assert_uint_gt(c, id);
			sum += cct__node(t, c)->incl_ns;
			csum += cct__node(t, c)->cpu_incl_ns;
			kids++;
		}
		ck_assert_uint_eq(kids, n->nchild);
		if (id) {
			ck_assert_uint_le(sum, n->incl_ns);
			ck_assert_uint_le(csum, n->cpu_incl_ns);
		}
	}
}

/* main -> a -> c -> d, main -> b -> (c -> d) x2: c and d under two
 * callers each, exact times. */
static void run_contexts(struct drv *d)
{
	call(d, MAIN, 0); /* t=1000 */
	call(d, A, 10);	  /* 1010 */
	call(d, C, 10);	  /* 1020 */
	call(d, D, 10);	  /* 1030 */
	ret(d, 5);	  /* d 5 */
	ret(d, 5);	  /* c 20, self 15 */
	ret(d, 5);	  /* a 35, self 15 */
	call(d, B, 100);  /* 1145 */
	call(d, C, 1);	  /* 1146 */
	call(d, D, 1);	  /* 1147 */
	ret(d, 7);	  /* d 7 */
	ret(d, 1);	  /* c 9, self 2 */
	call(d, C, 1);	  /* 1156 */
	call(d, D, 1);	  /* 1157 */
	ret(d, 3);	  /* d 3 */
	ret(d, 1);	  /* c 5, self 2 */
	ret(d, 1);	  /* b 17 (1145..1162), self 3 */
	ret(d, 8);	  /* main 170 (1000..1170) */
}

START_TEST(contexts_exact)
{
	const struct cct_tree *t;
	struct drv d;

	drv_init(&d, 7, NULL);
	run_contexts(&d);
	t = cct__merged(state(&d));
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->n, 8); /* root, main, a, a;c, a;c;d, b, b;c, b;c;d */
	assert_node(t, "main", 1, 170, 170 - 35 - 17);
	assert_node(t, "main;a", 1, 35, 15);
	assert_node(t, "main;a;c", 1, 20, 15);
	assert_node(t, "main;a;c;d", 1, 5, 5);
	assert_node(t, "main;b", 1, 17, 3);
	assert_node(t, "main;b;c", 2, 14, 4);
	assert_node(t, "main;b;c;d", 2, 10, 10);
	ck_assert_uint_eq(at(t, "main;c"), CCT_NONE);
	ck_assert_uint_eq(at(t, "a"), CCT_NONE);
	/* No switch events: on-CPU equals wall. */
	ck_assert_uint_eq(node(t, "main;b;c")->cpu_incl_ns, 14);
	ck_assert_uint_eq(node(t, "main;b;c")->cpu_self_ns, 4);
	ck_assert_uint_eq(cct__nthreads(state(&d)), 1);
	ck_assert_uint_eq(cct__thread(state(&d), 0)->tid, 7);
	assert_invariants(t);
	drv_fini(&d);
}
END_TEST

/* Off-CPU intervals come out of every frame live across them. */
START_TEST(on_cpu_time)
{
	const struct cct_tree *t;
	struct drv d;

	drv_init(&d, 1, NULL);
	call(&d, MAIN, 0);
	call(&d, A, 10);
	off(&d, 1000); /* a asleep: out of a and main */
	ret(&d, 20);   /* a: wall 1020, on-CPU 20 */
	call(&d, B, 5);
	call(&d, C, 5);
	off(&d, 300); /* out of c, b, main */
	ret(&d, 10);  /* c: wall 310, on-CPU 10 */
	ret(&d, 5);   /* b: wall 320, on-CPU 20, self on-CPU 10 */
	ret(&d, 5);   /* main: wall 1360, on-CPU 60 */
	t = cct__merged(state(&d));
	assert_node(t, "main;a", 1, 1020, 1020);
	ck_assert_uint_eq(node(t, "main;a")->cpu_incl_ns, 20);
	ck_assert_uint_eq(node(t, "main;a")->cpu_self_ns, 20);
	ck_assert_uint_eq(node(t, "main;b;c")->cpu_incl_ns, 10);
	ck_assert_uint_eq(node(t, "main;b")->incl_ns, 320);
	ck_assert_uint_eq(node(t, "main;b")->cpu_incl_ns, 20);
	ck_assert_uint_eq(node(t, "main;b")->cpu_self_ns, 10);
	ck_assert_uint_eq(node(t, "main")->incl_ns, 1360);
	ck_assert_uint_eq(node(t, "main")->cpu_incl_ns, 60);
	ck_assert_uint_eq(node(t, "main")->cpu_self_ns, 60 - 20 - 20);
	assert_invariants(t);
	drv_fini(&d);
}
END_TEST

/* main -> f -> f -> f: kept as a chain; collapsed into one node. */
static void run_recursion(struct drv *d)
{
	call(d, MAIN, 0);
	call(d, F, 10); /* f1 at 1010 */
	call(d, F, 10); /* f2 at 1020 */
	call(d, F, 10); /* f3 at 1030 */
	call(d, D, 1);	/* d under f3 at 1031 */
	ret(d, 4);	/* d 4 */
	ret(d, 5);	/* f3 10 (1030..1040), self 6 */
	ret(d, 5);	/* f2 25 (1020..1045), self 15 */
	ret(d, 5);	/* f1 40 (1010..1050), self 15 */
	call(d, F, 10); /* another f1 at 1060 */
	ret(d, 2);	/* 2 */
	ret(d, 3);	/* main 65 */
}

START_TEST(recursion_kept_and_collapsed)
{
	struct cct_opts o = {.min_pct = -1, .collapse_recursion = true};
	const struct cct_tree *t;
	struct drv d;

	drv_init(&d, 1, NULL);
	run_recursion(&d);
	t = cct__merged(state(&d));
	ck_assert_uint_eq(t->n, 6);
	assert_node(t, "main", 1, 65, 65 - 42);
	assert_node(t, "main;f", 2, 42, 17);
	assert_node(t, "main;f;f", 1, 25, 15);
	assert_node(t, "main;f;f;f", 1, 10, 6);
	assert_node(t, "main;f;f;f;d", 1, 4, 4);
	assert_invariants(t);
	drv_fini(&d);

	drv_init(&d, 1, &o);
	run_recursion(&d);
	t = cct__merged(state(&d));
	ck_assert_uint_eq(t->n, 4); /* root, main, main;f, main;f;d */
	/* calls: every activation; inclusive: outermost ones (40 + 2);
	 * self: every activation's (15 + 15 + 6 + 2). */
	assert_node(t, "main;f", 4, 42, 38);
	assert_node(t, "main;f;d", 1, 4, 4);
	ck_assert_uint_eq(at(t, "main;f;f"), CCT_NONE);
	assert_invariants(t);
	drv_fini(&d);
}
END_TEST

/* Past the node cap, new contexts fold into their caller, counted. */
START_TEST(node_cap_folds_and_counts)
{
	struct cct_opts o = {.min_pct = -1, .max_nodes = 4}; /* root, main, a, c */
	struct cct_memory m;
	const struct cct_tree *t;
	struct drv d;

	drv_init(&d, 1, &o);
	run_contexts(&d);
	t = cct__merged(state(&d));
	ck_assert_uint_eq(t->n, 4);
	cct__memory(state(&d), &m);
	ck_assert_uint_eq(m.nodes, 4);
	ck_assert_uint_eq(m.max_nodes, 4);
	/* d under a;c (1), then b, its 2 c and 2 d: 6 calls folded. */
	ck_assert_uint_eq(m.folded_calls, 6);
	assert_node(t, "main;a;c", 1, 20, 20); /* d's 5 folded into its self */
	ck_assert_uint_eq(node(t, "main;a;c")->folded, 1);
	/* b folded into main: main's self takes b's self and, b's callees
	 * folded into main too, theirs: all of main's 170 but a's 35. */
	assert_node(t, "main", 1, 170, 170 - 35);
	ck_assert_uint_eq(node(t, "main")->folded, 5);
	ck_assert_uint_eq(at(t, "main;b"), CCT_NONE);
	assert_invariants(t);
	drv_fini(&d);
}
END_TEST

/* Below a folded call everything folds into the same node, also a callee
 * whose function has a context of its own next to the folded one. */
START_TEST(node_cap_folds_descendants)
{
	struct cct_opts o = {.min_pct = -1, .max_nodes = 3}; /* root, main, a */
	struct cct_memory m;
	const struct cct_tree *t;
	struct drv d;

	drv_init(&d, 1, &o);
	call(&d, MAIN, 0);
	call(&d, A, 1);
	ret(&d, 2);
	call(&d, B, 1); /* folded into main */
	call(&d, A, 1); /* main;b;a: folded, not main;a */
	call(&d, C, 1); /* main;b;a;c: folded */
	ret(&d, 4);
	ret(&d, 3);
	ret(&d, 2);
	ret(&d, 1);
	t = cct__merged(state(&d));
	ck_assert_uint_eq(t->n, 3);
	assert_node(t, "main;a", 1, 2, 2);
	/* main: 1..17, a's 2 apart; b, a, c folded: their self in main's */
	assert_node(t, "main", 1, 16, 14);
	ck_assert_uint_eq(node(t, "main")->folded, 3);
	cct__memory(state(&d), &m);
	ck_assert_uint_eq(m.folded_calls, 3);
	assert_invariants(t);
	drv_fini(&d);
}
END_TEST

/* Two threads in two instances (two analyzer threads), merged. */
START_TEST(merge_over_threads)
{
	const struct cct_tree *t, *t0, *t1;
	struct drv d1, d2;
	int i;

	drv_init(&d1, 100, NULL);
	drv_init(&d2, 200, NULL);
	run_contexts(&d1);
	for (i = 0; i < 3; i++) {
		call(&d2, WORKER, 1);
		call(&d2, C, 1);
		ret(&d2, 10);
		ret(&d2, 1);
	}
	call(&d2, MAIN, 1); /* a second thread's own main context */
	ret(&d2, 4);
	ck_assert_int_eq(analyzer_cct.merge(state(&d1), state(&d2)), 0);
	t = cct__merged(state(&d1));
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(cct__node(t, 0)->nchild, 2); /* main and worker */
	assert_node(t, "worker", 3, 36, 6);
	assert_node(t, "worker;c", 3, 30, 30);
	assert_node(t, "main", 2, 174, 170 - 35 - 17 + 4);
	assert_node(t, "main;b;c;d", 2, 10, 10);
	ck_assert_uint_eq(cct__nthreads(state(&d1)), 2);
	t0 = cct__thread(state(&d1), 0);
	t1 = cct__thread(state(&d1), 1);
	ck_assert_uint_eq(t0->tid, 100);
	ck_assert_uint_eq(t1->tid, 200);
	ck_assert_uint_eq(at(t0, "worker"), CCT_NONE);
	assert_node(t1, "worker;c", 3, 30, 30);
	assert_node(t1, "main", 1, 4, 4);
	/* src is left unchanged */
	ck_assert_uint_eq(cct__nthreads(state(&d2)), 1);
	assert_invariants(t);
	drv_fini(&d1);
	drv_fini(&d2);
}
END_TEST

/* A longjmp: frames vanish without returns, popped as missing at the next
 * entry; the tree keeps their calls, counts them missing, and their time
 * up to that entry (an upper bound). */
START_TEST(longjmp_missing)
{
	const struct cct_tree *t;
	struct drv d;

	drv_init(&d, 1, NULL);
	call(&d, MAIN, 0);
	call(&d, A, 1);
	call(&d, B, 1);
	call(&d, C, 1);
	d.depth = 1; /* longjmp back into main */
	call(&d, D, 5);
	ret(&d, 2);
	ret(&d, 1);
	t = cct__merged(state(&d));
	/* the dead frames' times run to the entry that found them gone */
	assert_node(t, "main;a", 1, 7, 1);
	assert_node(t, "main;a;b", 1, 6, 1);
	assert_node(t, "main;a;b;c", 1, 5, 5);
	ck_assert_uint_eq(node(t, "main;a")->missing, 1);
	ck_assert_uint_eq(node(t, "main;a;b")->missing, 1);
	ck_assert_uint_eq(node(t, "main;a;b;c")->missing, 1);
	assert_node(t, "main;d", 1, 2, 2);
	assert_node(t, "main", 1, 11, 2);
	assert_invariants(t);
	drv_fini(&d);
}
END_TEST

/* Random well-formed sequences: the invariants and the totals hold. */
START_TEST(random_invariants)
{
	unsigned seed = 12345;
	uint64_t calls = 0, sum = 0;
	const struct cct_tree *t;
	struct drv d;
	uint32_t id;
	int i;

	drv_init(&d, 1, NULL);
	call(&d, MAIN, 0);
	for (i = 0; i < 20000; i++) {
		unsigned r = (unsigned)rand_r(&seed);

		if (r % 7 == 0)
			off(&d, r % 50);
		else if (d.depth < 40 && (r % 3 || d.depth == 1)) {
			call(&d, 1 + r % (NFN - 1), r % 13);
			calls++;
		} else if (d.depth > 1) {
			ret(&d, r % 17);
		}
	}
	while (d.depth)
		ret(&d, 1);
	t = cct__merged(state(&d));
	assert_invariants(t);
	for (id = 1; id < t->n; id++)
		sum += cct__node(t, id)->calls;
	ck_assert_uint_eq(sum, calls + 1);
	drv_fini(&d);
}
END_TEST

/* A coroutine switch parks the stack and resumes it later: the path is
 * rebuilt from the shadow frames (gen), callers stay right. */
START_TEST(stack_switch_resync)
{
	const struct cct_tree *t;
	struct drv d;

	drv_init(&d, 1, NULL);
	call(&d, MAIN, 0);
	call(&d, A, 1);
	d.ts += 1;
	/* swapcontext from inside a: park this stack under slot(1) + 8 */
	ck_assert_int_eq(shadow__guard(&d.sh, GUARD_FID(CABBPF_GS_SWITCH, CABBPF_GF_SWAPCONTEXT),
				       slot(1), d.ts, &d.k),
			 0);
	d.depth = 0;
	call(&d, WORKER, 1); /* the coroutine's stack: a root context */
	call(&d, C, 1);
	ret(&d, 1);
	/* switch back: resume the parked stack */
	d.ts += 1;
	shadow__guard(&d.sh, GUARD_FID(CABBPF_GS_SWITCH_TO, 0), slot(1) + 8, d.ts, &d.k);
	d.depth = 2;
	d.fid[0] = MAIN;
	d.fid[1] = A;
	call(&d, B, 1); /* under main;a again */
	ret(&d, 3);
	/* the end of the run: main and a are still live (the runner does
	 * this in runner__join) */
	shadow__close_open(&d.sh, d.ts + 2, &d.k);
	t = cct__merged(state(&d));
	assert_node(t, "main;a;b", 1, 3, 3);
	assert_node(t, "worker;c", 1, 1, 1);
	ck_assert_uint_eq(at(t, "worker;b"), CCT_NONE);
	assert_invariants(t);
	drv_fini(&d);
}
END_TEST

/* A forked child (pipeline/shadow.h, FORKS): its stack starts as its
 * parent's copy, main;a, and its calls nest under contexts made for those
 * frames, which hold the child's time from the fork and no call of their
 * own (the parent counted them); the tree's totals still cover its parts. */
START_TEST(forked_child_contexts)
{
	const struct cct_tree *t;
	struct drv p, c;

	drv_init(&p, 1, NULL);
	drv_init(&c, 2, NULL);
	call(&p, MAIN, 0);
	call(&p, A, 1);
	ck_assert_int_eq(shadow__inherit(&c.sh, p.sh.f, p.sh.depth, 2000), 0);
	c.ts = 2000;
	c.depth = 2;
	c.fid[0] = MAIN;
	c.fid[1] = A;
	call(&c, B, 10);
	ret(&c, 5);
	call(&c, B, 5);
	ret(&c, 5);
	ret(&c, 5); /* a, inherited: closed by the child's return */
	shadow__close_open(&c.sh, c.ts + 5, &c.k);
	t = cct__merged(state(&c));
	assert_node(t, "main;a;b", 2, 10, 10);
	assert_node(t, "main;a", 0, 30, 20);
	assert_node(t, "main", 0, 35, 5);
	ck_assert_uint_eq(at(t, "b"), CCT_NONE);
	assert_invariants(t);
	drv_fini(&c);
	drv_fini(&p);
}
END_TEST

static char *capture(int (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fn(f, arg), 0);
	fclose(f);
	return buf;
}

struct view_arg {
	struct drv *d;
	enum cct_metric m;
};

static int folded_fn(FILE *f, void *arg)
{
	struct view_arg *a = arg;

	return flame__write_folded(f, cct__merged(state(a->d)), &a->d->ctx, a->m);
}

static int svg_fn(FILE *f, void *arg)
{
	struct view_arg *a = arg;

	return flame__write_svg(f, cct__merged(state(a->d)), &a->d->ctx, a->m, true, "t<&>");
}

START_TEST(folded_exact)
{
	struct drv d;
	struct view_arg a = {.d = &d, .m = CCT_METRIC_WALL};
	char *s;

	drv_init(&d, 1, NULL);
	run_contexts(&d);
	s = capture(folded_fn, &a);
	ck_assert_str_eq(s, "main 118\n"
			    "main;a 15\n"
			    "main;a;c 15\n"
			    "main;a;c;d 5\n"
			    "main;b 3\n"
			    "main;b;c 4\n"
			    "main;b;c;d 10\n");
	free(s);
	a.m = CCT_METRIC_CALLS;
	s = capture(folded_fn, &a);
	ck_assert_str_eq(s, "main 1\n"
			    "main;a 1\n"
			    "main;a;c 1\n"
			    "main;a;c;d 1\n"
			    "main;b 1\n"
			    "main;b;c 2\n"
			    "main;b;c;d 2\n");
	free(s);
	drv_fini(&d);
}
END_TEST

/* --times sampled: each CPU-clock sample goes to the frame on top (self)
 * and to its callers' inclusive samples as it closes, whether it closed by
 * its return or was found dead (a longjmp past it); samples with no frame
 * live go to the thread's root count. The folded output's sampled metric
 * is samples x period, the default (AUTO) when the run was sampled. */
START_TEST(samples_by_context)
{
	struct drv d;
	struct view_arg a = {.d = &d, .m = CCT_METRIC_SAMPLED};
	const struct cct_tree *t;
	char *s;
	int i;

	drv_init(&d, 1, NULL);
	d.ctx.cpu_sample_ns = 1000;
	shadow__cpu_sample(&d.sh); /* before any traced call: root */
	call(&d, MAIN, 10);
	shadow__cpu_sample(&d.sh);
	call(&d, A, 10);
	for (i = 0; i < 3; i++)
		shadow__cpu_sample(&d.sh);
	call(&d, C, 10);
	shadow__cpu_sample(&d.sh);
	/* c and a are left by a longjmp: b's entry at a's slot finds them dead */
	d.depth = 1;
	call(&d, B, 10);
	shadow__cpu_sample(&d.sh);
	shadow__cpu_sample(&d.sh);
	ret(&d, 10);
	ret(&d, 10);
	ck_assert_uint_eq(d.sh.c.samples, 8);
	ck_assert_uint_eq(d.sh.c.samples_root, 1);
	ck_assert_uint_eq(d.sh.c.missing, 2);
	t = cct__merged(state(&d));
	ck_assert_uint_eq(node(t, "main")->samples_self, 1);
	ck_assert_uint_eq(node(t, "main")->samples_incl, 7);
	ck_assert_uint_eq(node(t, "main;a")->samples_self, 3);
	ck_assert_uint_eq(node(t, "main;a")->samples_incl, 4);
	ck_assert_uint_eq(node(t, "main;a;c")->samples_self, 1);
	ck_assert_uint_eq(node(t, "main;b")->samples_incl, 2);
	s = capture(folded_fn, &a);
	ck_assert_str_eq(s, "main 1000\n"
			    "main;a 3000\n"
			    "main;a;c 1000\n"
			    "main;b 2000\n");
	free(s);
	ck_assert_int_eq(cct__metric(CCT_METRIC_AUTO, &d.ctx), CCT_METRIC_SAMPLED);
	d.ctx.cpu_sample_ns = 0;
	ck_assert_int_eq(cct__metric(CCT_METRIC_AUTO, &d.ctx), CCT_METRIC_WALL);
	drv_fini(&d);
}
END_TEST

/* With sampled times the text tree ranks siblings, shares and hides by
 * them: a takes 1000 ns of traced wall time and 1 sample, b 10 ns and 5
 * samples (a program whose probes dwarf b's own time would show that):
 * b comes first at 5/6 of main's sampled time; traced, a does. */
static char *text_of(struct drv *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(sec_cct__text(state(d), f), 0);
	fclose(f);
	return buf;
}

START_TEST(sampled_order)
{
	struct drv d;
	char *s, *pa, *pb;
	int i;

	drv_init(&d, 1, NULL);
	d.o.min_pct = 0;
	d.ctx.cpu_sample_ns = 1000;
	call(&d, MAIN, 10);
	call(&d, A, 10);
	shadow__cpu_sample(&d.sh);
	ret(&d, 1000);
	call(&d, B, 10);
	for (i = 0; i < 5; i++)
		shadow__cpu_sample(&d.sh);
	ret(&d, 10);
	ret(&d, 10);
	s = text_of(&d);
	pa = strstr(s, "  a\n");
	pb = strstr(s, "  b\n");
	ck_assert_msg(pa && pb && pb < pa, "%s", s);
	ck_assert_msg(strstr(s, " 83.33% ") && strstr(s, " 16.67% "), "%s", s);
	ck_assert_ptr_nonnull(strstr(s, "functions by sampled total"));
	free(s);
	d.ctx.cpu_sample_ns = 0;
	s = text_of(&d);
	pa = strstr(s, "  a\n");
	pb = strstr(s, "  b\n");
	ck_assert_msg(pa && pb && pa < pb, "%s", s);
	ck_assert_ptr_nonnull(strstr(s, "functions by total"));
	free(s);
	drv_fini(&d);
}
END_TEST

/* The probes' aftermath (an_ctx.aft_in, aft_out: what a traced call adds
 * to the sampled time after its entry's trap, in the callee, and after
 * its return's, in the caller) comes out of each context's own time: the
 * shadow stack's per frame (an_return.aft_*) and the tree's
 * (cct__own_times) agree. main calls a twice, a calls c once each time. */
static uint64_t ret_aft_self[NFN], ret_aft_incl[NFN];

static void aft_sink_return(void *ctx, const struct an_return *r)
{
	ret_aft_self[r->fid] += r->aft_self_ns;
	ret_aft_incl[r->fid] += r->aft_incl_ns;
	an_set__on_return(ctx, r);
}

START_TEST(aftermath_taken_out)
{
	static const uint32_t in[NFN] = {[MAIN] = 1000, [A] = 2000, [C] = 3000};
	static const uint32_t out[NFN] = {[MAIN] = 10, [A] = 200, [C] = 400};
	struct drv d;
	const struct cct_tree *t;
	int64_t self[8], incl[8];
	int i, k;

	drv_init(&d, 1, NULL);
	d.ctx.cpu_sample_ns = 10000;
	d.ctx.aft_in = in;
	d.ctx.aft_out = out;
	d.sh.aft_in = in;
	d.sh.aft_out = out;
	d.sh.naft = NFN;
	d.k.on_return = aft_sink_return;
	memset(ret_aft_self, 0, sizeof(ret_aft_self));
	memset(ret_aft_incl, 0, sizeof(ret_aft_incl));
	call(&d, MAIN, 10);
	for (k = 0; k < 2; k++) {
		call(&d, A, 10);
		for (i = 0; i < 2; i++)
			shadow__cpu_sample(&d.sh);
		call(&d, C, 10);
		shadow__cpu_sample(&d.sh);
		ret(&d, 10);
		ret(&d, 10);
	}
	shadow__cpu_sample(&d.sh);
	ret(&d, 10);
	/* self: its entries' aftermath, and its children's returns' */
	ck_assert_uint_eq(ret_aft_self[C], 2 * 3000);
	ck_assert_uint_eq(ret_aft_self[A], 2 * (2000 + 400));
	ck_assert_uint_eq(ret_aft_self[MAIN], 1000 + 2 * 200);
	/* incl: every traced call's inside it too (its own return's is its
	 * caller's) */
	ck_assert_uint_eq(ret_aft_incl[A], 2 * (2000 + 3000 + 400));
	ck_assert_uint_eq(ret_aft_incl[MAIN], 1000 + 2 * (2000 + 3000 + 400 + 200));
	t = cct__merged(state(&d));
	ck_assert_uint_lt(t->n, 8);
	cct__own_times(t, &d.ctx, self, incl);
	/* a: 4 samples (40 us) less 4.8 us; c: 2 samples less 6 us; main:
	 * 1 sample less 1.4 us, and 7 samples less its 13.8 us inside */
	ck_assert_int_eq(self[at(t, "main;a")], 40000 - 4800);
	ck_assert_int_eq(self[at(t, "main;a;c")], 20000 - 6000);
	ck_assert_int_eq(self[at(t, "main")], 10000 - 1400);
	ck_assert_int_eq(incl[at(t, "main")], 70000 - (int64_t)ret_aft_incl[MAIN]);
	ck_assert_int_eq(incl[at(t, "main;a")], 60000 - (int64_t)ret_aft_incl[A]);
	/* the aftermath larger than the samples: below 0 (sums stay
	 * unbiased; what is shown: totals_carried_up) */
	d.ctx.cpu_sample_ns = 100;
	cct__own_times(t, &d.ctx, self, incl);
	ck_assert_int_eq(self[at(t, "main;a")], 400 - 4800);
	drv_fini(&d);
}
END_TEST

/* What is shown of the sampled times (cct__carry_times): the aftermath
 * comes off once, where it landed (a context's self), a self below 0 shows
 * 0, and each total is its self plus its children's totals, so no total
 * is below its parts (issue 65, item 5: main's total was computed on its
 * own and clamped, and fell below heavy's). main calls b (which calls c
 * 1,000 times: its returns' aftermath lands on b, far beyond b's one
 * sample), then d (40 samples, no calls below). */
START_TEST(totals_carried_up)
{
	static const uint32_t in[NFN] = {[B] = 10, [C] = 10, [D] = 10};
	static const uint32_t out[NFN] = {[B] = 10, [C] = 200, [D] = 10};
	uint64_t shown[8], total[8], *s2, *i2;
	struct drv d;
	const struct cct_tree *t;
	int64_t own[8], incl[8];
	bool unknown[8], *u2;
	uint32_t main_, b, c, dd, nu;
	int i;

	drv_init(&d, 1, NULL);
	d.ctx.cpu_sample_ns = 1000; /* 1 us */
	d.ctx.aft_in = in;
	d.ctx.aft_out = out;
	d.sh.aft_in = in;
	d.sh.aft_out = out;
	d.sh.naft = NFN;
	call(&d, MAIN, 10);
	call(&d, B, 10);
	shadow__cpu_sample(&d.sh);
	for (i = 0; i < 1000; i++) {
		call(&d, C, 10);
		if (i % 100 == 0) /* 10 samples in c */
			shadow__cpu_sample(&d.sh);
		ret(&d, 10);
	}
	ret(&d, 10);
	call(&d, D, 10);
	for (i = 0; i < 40; i++)
		shadow__cpu_sample(&d.sh);
	ret(&d, 10);
	ret(&d, 10);
	t = cct__merged(state(&d));
	ck_assert_uint_lt(t->n, 8);
	main_ = at(t, "main"), b = at(t, "main;b"), c = at(t, "main;b;c"), dd = at(t, "main;d");
	cct__own_times(t, &d.ctx, own, incl);
	/* b: 1 sample less 10 ns in and 1,000 x 200 ns out; c: 10 samples
	 * less 1,000 x 10 ns (exactly 0); d: 40 less 10; main: none, less b's
	 * and d's returns' */
	ck_assert_int_eq(own[b], 1000 - 10 - 200000);
	ck_assert_int_eq(own[c], 0);
	ck_assert_int_eq(own[dd], 40000 - 10);
	ck_assert_int_eq(own[main_], -20);
	/* the inclusive own time of main, as computed on its own, is below
	 * d's: what the report showed before */
	ck_assert_int_lt(incl[main_], incl[dd]);
	nu = cct__carry_times(t, &d.ctx, own, shown, total, unknown);
	/* selves: 0 where below 0, the rest as measured */
	ck_assert_uint_eq(shown[b], 0);
	ck_assert_uint_eq(shown[c], 0);
	ck_assert_uint_eq(shown[dd], 40000 - 10);
	ck_assert_uint_eq(shown[main_], 0);
	/* totals carried up from them, exactly */
	ck_assert_uint_eq(total[c], 0);
	ck_assert_uint_eq(total[b], 0);
	ck_assert_uint_eq(total[dd], 40000 - 10);
	ck_assert_uint_eq(total[main_], 40000 - 10);
	ck_assert_uint_eq(total[0], shown[0] + total[main_]);
	/* b's aftermath exceeds its 1 sample by far more than its sampling
	 * error (1.96 us): not known; main's 20 ns below its 0 samples is
	 * within theirs (3 periods): 0, known */
	ck_assert(unknown[b]);
	ck_assert(!unknown[main_] && !unknown[c] && !unknown[dd]);
	ck_assert_uint_eq(nu, 1);
	/* every total covers its parts */
	for (i = 1; i < (int)t->n; i++) {
		uint64_t parts = shown[i];
		uint32_t k;

		for (k = cct__node(t, (uint32_t)i)->child; k != CCT_NONE;
		     k = cct__node(t, k)->sibling)
			parts += total[k];
		ck_assert_uint_eq(total[i], parts);
	}
	/* the allocating form gives the same */
	ck_assert_int_eq(cct__shown_times(t, &d.ctx, &s2, &i2, &u2, &nu), 0);
	ck_assert_uint_eq(nu, 1);
	for (i = 0; i < (int)t->n; i++) {
		ck_assert_uint_eq(s2[i], shown[i]);
		ck_assert_uint_eq(i2[i], total[i]);
		ck_assert(u2[i] == unknown[i]);
	}
	free(s2);
	free(i2);
	free(u2);
	drv_fini(&d);
}
END_TEST

START_TEST(svg_frames)
{
	struct drv d;
	struct view_arg a = {.d = &d, .m = CCT_METRIC_WALL};
	char *s, *p;
	int rects = 0;

	drv_init(&d, 1, NULL);
	run_contexts(&d);
	s = capture(svg_fn, &a);
	ck_assert_ptr_nonnull(strstr(s, "<svg "));
	ck_assert_ptr_nonnull(strstr(s, "</svg>\n"));
	ck_assert_ptr_nonnull(strstr(s, ">t&lt;&amp;&gt;</text>")); /* title escaped */
	for (p = s; (p = strstr(p, "<rect x=")); p++)
		rects++;
	ck_assert_int_eq(rects, 1 + 8); /* background, all + 7 contexts */
	/* main spans the whole width: 1180 px */
	ck_assert_ptr_nonnull(strstr(s, "<title>main (100.00% of wall ns)\ncalls: 1\n"
					"wall: total 0.000 ms, self 0.000 ms"));
	ck_assert_ptr_nonnull(strstr(s, "width=\"1180.0\""));
	ck_assert_ptr_nonnull(strstr(s, "<title>c (11.76% of wall ns)\ncalls: 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "<title>c (8.24% of wall ns)\ncalls: 2\n"));
	free(s);
	drv_fini(&d);
}
END_TEST

/* A frame's label leaves out the library ("libc:"), which would take a
 * narrow frame's room; its tooltip keeps the whole name, and C++ scopes
 * ("std::") are not taken for a library. */
START_TEST(svg_labels)
{
	static const char *const lib_names[NFN] = {
		[MAIN] = "std::vector<int>::push_back",
		[A] = "libc:memcpy",
		[B] = "libstdc++:std::terminate()",
		[C] = "c",
		[D] = "d",
	};
	struct drv d;
	struct view_arg a = {.d = &d, .m = CCT_METRIC_WALL};
	char *s;

	drv_init(&d, 1, NULL);
	d.ctx.fnames = lib_names;
	run_contexts(&d);
	s = capture(svg_fn, &a);
	ck_assert_ptr_nonnull(strstr(s, "<title>std::vector&lt;int&gt;::push_back (100.00%"));
	ck_assert_ptr_nonnull(strstr(s, ">std::vector&lt;int&gt;::push_back</text>"));
	ck_assert_ptr_nonnull(strstr(s, "<title>libc:memcpy (20.59%"));
	ck_assert_ptr_nonnull(strstr(s, ">memcpy</text>"));
	ck_assert_ptr_nonnull(strstr(s, "<title>libstdc++:std::terminate() ("));
	ck_assert_ptr_nonnull(strstr(s, ">std::terminate()</text>"));
	ck_assert_ptr_null(strstr(s, "\">libc:")); /* no label */
	ck_assert_ptr_null(strstr(s, "\">libstdc"));
	free(s);
	drv_fini(&d);
}
END_TEST

static int json_fn(FILE *f, void *arg)
{
	struct json *w;
	int err;

	ck_assert_int_eq(json__new(f, false, &w), 0);
	json__begin_object(w);
	err = sec_cct__json(state(arg), w);
	json__end_object(w);
	if (!err)
		err = json__finish(w);
	json__free(w);
	return err;
}

START_TEST(json_tree)
{
	struct drv d;
	char *s;

	drv_init(&d, 9, NULL);
	call(&d, MAIN, 0);
	call(&d, A, 1);
	ret(&d, 2);
	ret(&d, 3);
	s = capture(json_fn, &d);
	ck_assert_ptr_nonnull(
		strstr(s, "\"cct\":{\"name\":\"<root>\",\"calls\":0,\"incl_ns\":0,\"self_ns\":0,"
			  "\"cpu_incl_ns\":null,\"cpu_self_ns\":null,\"children\":[{\"name\":"
			  "\"main\",\"calls\":1,\"incl_ns\":6,\"self_ns\":4,\"cpu_incl_ns\":null,"
			  "\"cpu_self_ns\":null,\"children\":[{\"name\":\"a\",\"calls\":1,"
			  "\"incl_ns\":2,\"self_ns\":2,"));
	ck_assert_ptr_nonnull(strstr(s, "\"cct_threads\":{\"9\":{\"name\":\"<root>\""));
	free(s);
	d.o.cpu_time = true;
	s = capture(json_fn, &d);
	ck_assert_ptr_nonnull(strstr(s, "\"name\":\"a\",\"calls\":1,\"incl_ns\":2,\"self_ns\":2,"
					"\"cpu_incl_ns\":2,\"cpu_self_ns\":2,\"children\":[]}"));
	free(s);
	drv_fini(&d);
}
END_TEST

/* A recursion 300 deep: JSON nests 600+ levels, the text report and the
 * views walk it without recursion. */
START_TEST(deep_tree_reports)
{
	struct drv d;
	struct view_arg a = {.d = &d, .m = CCT_METRIC_CALLS};
	char *s, *buf = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	drv_init(&d, 1, NULL);
	call(&d, MAIN, 0);
	for (i = 0; i < 300; i++)
		call(&d, F, 1);
	while (d.depth)
		ret(&d, 1);
	ck_assert_uint_eq(cct__merged(state(&d))->n, 302);
	s = capture(json_fn, &d);
	ck_assert_ptr_nonnull(strstr(s, "\"cct_info\":{\"nodes\":302,"));
	free(s);
	s = capture(folded_fn, &a);
	ck_assert_int_eq((int)strlen(s),
			 (int)(301 * strlen("main 1\n") + 300 * 301 / 2 * strlen(";f")));
	free(s);
	f = open_memstream(&buf, &len);
	d.o.min_pct = 0;
	ck_assert_int_eq(sec_cct__text(state(&d), f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "calling-context tree: 301 contexts, 1 thread"));
	free(buf);
	drv_fini(&d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cct");
	TCase *tc = tcase_create("tree");

	tcase_add_test(tc, contexts_exact);
	tcase_add_test(tc, on_cpu_time);
	tcase_add_test(tc, recursion_kept_and_collapsed);
	tcase_add_test(tc, node_cap_folds_and_counts);
	tcase_add_test(tc, node_cap_folds_descendants);
	tcase_add_test(tc, merge_over_threads);
	tcase_add_test(tc, longjmp_missing);
	tcase_add_test(tc, random_invariants);
	tcase_add_test(tc, stack_switch_resync);
	tcase_add_test(tc, forked_child_contexts);
	tcase_add_test(tc, folded_exact);
	tcase_add_test(tc, svg_frames);
	tcase_add_test(tc, svg_labels);
	tcase_add_test(tc, samples_by_context);
	tcase_add_test(tc, sampled_order);
	tcase_add_test(tc, aftermath_taken_out);
	tcase_add_test(tc, totals_carried_up);
	tcase_add_test(tc, json_tree);
	tcase_add_test(tc, deep_tree_reports);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
