// SPDX-License-Identifier: BSD-2-Clause
/*
 * libcabnext.so: a plugin for tests/targets/dlopener.c ("dlopener N
 * libcabnext.so") whose plug_work reaches getpid the way an interposer
 * (an LD_PRELOAD library) reaches the function it wraps: dlsym(RTLD_NEXT).
 * glibc's dlsym learns which object calls it from its own return address,
 * so a return probe on dlsym (its trampoline is in no object) makes that
 * call fail: "RTLD_NEXT used in code not dynamically loaded", and this
 * plugin exits 4 with the message on stderr.
 *
 * Exact, for a dlopener run with N calls (N > 0): plug_work N, and one
 * dlsym(RTLD_NEXT) call, in the first (dlopener's own dlsym is a second).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#define TRACED __attribute__((noinline, noipa))

TRACED long plug_work(long x)
{
	static pid_t (*real_getpid)(void);

	if (!real_getpid) {
		real_getpid = (pid_t(*)(void))dlsym(RTLD_NEXT, "getpid");
		if (!real_getpid) {
			fprintf(stderr, "cabnext: %s\n", dlerror());
			exit(4);
		}
	}
	return x + (real_getpid() > 0);
}
