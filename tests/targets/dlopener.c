// SPDX-License-Identifier: BSD-2-Clause
/*
 * dlopener [-w] N [LIB]: prints "ready <pid>" on stdout ("ready" without -w,
 * so that a traced run prints what an untraced one does); with -w it then
 * blocks until SIGUSR1 (sigwaitinfo: no handler), without -w it first sleeps
 * 20 ms (the plugin is mapped well after start). Then load_plugin()
 * dlopens LIB (default "libcabplug.so", a NAME: ld.so searches DT_RUNPATH
 * $ORIGIN/plugins-O0 or -O2 (set by build.sh), LD_LIBRARY_PATH, ...), and
 * run_plugin() calls its plug_work N times through dlsym's pointer; prints
 * "done" on stdout and exits 0. dlopen/dlsym failure: message on stderr,
 * exit 3. Usage error: exit 2.
 * Exact: main 1, load_plugin 1, run_plugin 1; edges main->load_plugin 1,
 * main->run_plugin 1, run_plugin->plug_work N. The plugin's own counts:
 * tests/targets/plugin/cabplug.c (plug_init 1, plug_leaf N+5, plug_work N).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))

typedef long (*work_fn)(long);

TRACED work_fn load_plugin(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	work_fn f;

	if (!h) {
		fprintf(stderr, "dlopener: %s\n", dlerror());
		return NULL;
	}
	f = (work_fn)dlsym(h, "plug_work");
	if (!f)
		fprintf(stderr, "dlopener: %s\n", dlerror());
	return f;
}

TRACED long run_plugin(work_fn f, long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++) {
		s += f(i);
		__asm__ volatile("" ::: "memory");
	}
	return s;
}

int main(int argc, char **argv)
{
	struct timespec ts = {0, 20 * 1000000};
	int wait = argc > 1 && !strcmp(argv[1], "-w");
	const char *lib;
	work_fn f;
	sigset_t set;
	char *end;
	long n;

	if (argc - wait < 2 || argc - wait > 3) {
		fprintf(stderr, "usage: dlopener [-w] N [LIB]\n");
		return 2;
	}
	n = strtol(argv[1 + wait], &end, 10);
	if (*end || n < 0) {
		fprintf(stderr, "usage: dlopener [-w] N [LIB]\n");
		return 2;
	}
	lib = argc - wait == 3 ? argv[2 + wait] : "libcabplug.so";
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (wait)
		printf("ready %d\n", (int)getpid());
	else
		printf("ready\n");
	fflush(stdout);
	if (wait)
		sigwaitinfo(&set, NULL);
	else
		nanosleep(&ts, NULL);
	f = load_plugin(lib);
	__asm__ volatile("" ::: "memory");
	if (!f)
		return 3;
	run_plugin(f, n);
	__asm__ volatile("" ::: "memory");
	printf("done\n");
	fflush(stdout);
	return 0;
}
