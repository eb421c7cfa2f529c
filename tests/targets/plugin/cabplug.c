// SPDX-License-Identifier: BSD-2-Clause
/*
 * libcabplug.so: the plugin tests/targets/dlopener.c loads with dlopen from
 * a directory no standard search covers (build.sh puts it into
 * OUTDIR/plugins-O0 and OUTDIR/plugins-O2; dlopener-OX finds it through its
 * DT_RUNPATH $ORIGIN/plugins-OX, or through LD_LIBRARY_PATH).
 *
 * Exact, for a dlopener run with N calls:
 *   plug_init 1 (a constructor: runs inside dlopen, called by ld.so);
 *   plug_leaf N + PLUG_CTOR_CALLS (5): 5 from plug_init, N from plug_work;
 *   plug_work N (from dlopener's run_plugin, through a pointer).
 * Edges: plug_init -> plug_leaf 5; plug_work -> plug_leaf N.
 */
#define TRACED __attribute__((noinline, noipa))
#define PLUG_CTOR_CALLS 5

static volatile long sink;

TRACED long plug_leaf(long x)
{
	sink += x;
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

TRACED long plug_work(long x)
{
	long r = plug_leaf(x);

	__asm__ volatile("" ::: "memory");
	return r;
}

TRACED __attribute__((constructor)) static void plug_init(void)
{
	long i;

	for (i = 0; i < PLUG_CTOR_CALLS; i++) {
		plug_leaf(i);
		__asm__ volatile("" ::: "memory");
	}
}
