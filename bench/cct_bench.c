// SPDX-License-Identifier: BSD-2-Clause
/*
 * cct_bench: the cct analyzer's own cost per event and its memory per
 * node, without the kernel: synthetic call/return sequences run through a
 * real shadow stack (pipeline/shadow.h) into an analyzer set, timed with
 * no analyzer, with count, callgraph, cct and isp; each figure is its time
 * over the shadow stack's alone (isp: also points per second, a point
 * being an entry and a return).
 *   flat: main calls leaf N times (the hot loop of bench/overhead.sh);
 *   fan:  ten functions each calling all ten, D levels deep (10^D leaves:
 *         1,111,110 distinct contexts for D = 6), for bytes per node.
 * Usage: cct_bench [N] [D]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzers/analyzer.h"
#include "analyzers/cct.h"
#include "pipeline/shadow.h"

#define NF 12
static const char *names[NF] = {"main", "leaf", "f0", "f1", "f2", "f3",
				"f4",	"f5",	"f6", "f7", "f8", "f9"};

struct bench {
	struct shadow sh;
	struct an_set set;
	struct shadow_sink k;
	uint64_t ts, events;
	int depth;
};

static void on_call(void *ctx, const struct an_call *c)
{
	an_set__on_call(ctx, c);
}

static void on_return(void *ctx, const struct an_return *r)
{
	an_set__on_return(ctx, r);
}

static uint64_t slot(int d)
{
	return 0x7fff0000ULL - 16 * (uint64_t)(d + 1);
}

static void call(struct bench *b, uint32_t fid)
{
	shadow__entry(&b->sh, fid, slot(b->depth++), b->ts += 7, &b->k);
	b->events++;
}

static void ret(struct bench *b, uint32_t fid)
{
	b->depth--;
	shadow__return(&b->sh, fid, slot(b->depth) + 8, b->ts += 5, &b->k);
	b->events++;
}

static void fan(struct bench *b, int d)
{
	uint32_t i;

	for (i = 0; i < 10; i++) {
		call(b, 2 + i);
		if (d > 1)
			fan(b, d - 1);
		ret(b, 2 + i);
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ns per event of workload w through the analyzers named in list ("" none). */
static double run(const char *list, int w, long n, int d, struct cct_memory *m)
{
	const struct analyzer_ops *ops[AN_MAX];
	struct an_ctx ctx = {.fnames = names, .nfuncs = NF, .top = 10};
	struct cct_opts o = {.min_pct = -1, .max_nodes = 4u << 20};
	struct bench b;
	unsigned nops = 0;
	double t0, t;
	long i;

	memset(&b, 0, sizeof(b));
	ctx.cct = &o;
	if (*list && analyzer__select(list, ops, &nops))
		exit(1);
	if (an_set__init(&b.set, ops, nops, &ctx))
		exit(1);
	shadow__init(&b.sh, 1);
	b.k = (struct shadow_sink){.on_call = on_call, .on_return = on_return, .ctx = &b.set};
	t0 = now();
	call(&b, 0);
	if (w == 0)
		for (i = 0; i < n; i++) {
			call(&b, 1);
			ret(&b, 1);
		}
	else
		fan(&b, d);
	ret(&b, 0);
	t = now() - t0;
	if (m && an_set__state(&b.set, "cct"))
		cct__memory(an_set__state(&b.set, "cct"), m);
	shadow__fini(&b.sh);
	an_set__fini(&b.set);
	return t * 1e9 / (double)b.events;
}

static double best(const char *list, int w, long n, int d, struct cct_memory *m)
{
	double x, bst = 1e18;
	int r;

	for (r = 0; r < 3; r++) {
		x = run(list, w, n, d, m);
		if (x < bst)
			bst = x;
	}
	return bst;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	int d = argc > 2 ? atoi(argv[2]) : 6, w;
	static const char *const wl[] = {"flat", "fan"};
	struct cct_memory m;

	printf("cct_bench: ns per event (entry or return), best of 3; node = %zu bytes\n",
	       sizeof(struct cct_node));
	for (w = 0; w < 2; w++) {
		double base = best("", w, n, d, NULL);
		double cnt = best("count", w, n, d, NULL);
		double cg = best("callgraph", w, n, d, NULL);
		double cct = best("cct", w, n, d, &m);
		double isp = best("isp", w, n, d, NULL);

		printf("%-5s shadow stack alone %6.1f | count +%5.1f | callgraph +%5.1f | cct "
		       "+%5.1f "
		       "ns/event",
		       wl[w], base, cnt - base, cg - base, cct - base);
		printf(" | isp +%5.1f ns/event (%.1f M points/s with the shadow stack)", isp - base,
		       1e3 / (2 * isp));
		printf(" | tree: %llu nodes, %llu bytes, %.1f bytes/node\n",
		       (unsigned long long)m.nodes, (unsigned long long)m.bytes,
		       m.nodes ? (double)m.bytes / (double)m.nodes : 0.0);
	}
	return 0;
}
