// SPDX-License-Identifier: BSD-2-Clause
/*
 * altstack MODE N — a signal handler on an alternate stack (sigaltstack,
 * SA_ONSTACK) that calls a function, taken N times at the bottom of a
 * recursion, as stack-overflow handlers, crash reporters and interpreters'
 * signal machinery do. Where the alternate stack lies is what matters to
 * return probes: the kernel takes a pending return instance whose slot
 * lies below the handler's sp for a frame that returned.
 *   above   the alternate stack is an array in main's frame: above the
 *           recursion's frames (the handler runs above them);
 *   thread  a thread's alternate stack mapped before the thread was
 *           created: mmap places the thread's stack below it;
 *   below   the alternate stack is mapped by the main thread: below its
 *           stack (nothing for the kernel to drop).
 *
 * A run: N times, descend(5) recurses to descend(0), which raises SIGUSR1
 * (delivered at once, to this thread); on_usr1 calls leaf. In "thread",
 * a second thread does it all (run_thread), main waits for it.
 * Exact counts: descend 6N; on_usr1 N; leaf N; main 1; loop 1;
 * use_alt_stack 1; run_thread 1 in "thread", else 0.
 * Exact edges: descend -> descend 5N; loop -> descend N; on_usr1 -> leaf
 * N; main -> loop (run_thread -> loop in "thread") 1.
 * Output: stdout "sum=S leaves=N" (S = 6N), then as the LAST line
 * "calls: descend=D on_usr1=H leaf=L run_thread=R loop=1
 * use_alt_stack=1" (its own counts);
 * nothing on stderr; exit status 0; usage errors exit 2.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TRACED __attribute__((noinline, noipa))
#define ALT_BYTES (64 * 1024)

static long n_descend, n_on_usr1, n_leaf, n_run_thread, n_loop, n_use_alt_stack;
static long rounds, sum;
static void *alt_mem;

TRACED long leaf(long x)
{
	n_leaf++;
	return x + 1;
}

TRACED void on_usr1(int sig)
{
	(void)sig;
	n_on_usr1++;
	leaf(n_on_usr1);
}

TRACED long descend(int n)
{
	n_descend++;
	if (n == 0) {
		raise(SIGUSR1);
		return 1;
	}
	long r = descend(n - 1);

	/* not r + 1 straight away: gcc -O2 turns that into a loop */
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

TRACED int use_alt_stack(void *mem)
{
	stack_t ss = {.ss_sp = mem, .ss_size = ALT_BYTES};

	n_use_alt_stack++;
	return sigaltstack(&ss, NULL);
}

TRACED void loop(void)
{
	long i;

	n_loop++;
	for (i = 0; i < rounds; i++)
		sum += descend(5);
}

TRACED void *run_thread(void *arg)
{
	(void)arg;
	n_run_thread++;
	if (use_alt_stack(alt_mem))
		return NULL;
	loop();
	return &n_run_thread; /* non-NULL: done */
}

int main(int argc, char **argv)
{
	char above[ALT_BYTES]; /* in main's frame: the "above" stack */
	struct sigaction sa;
	pthread_t t;
	char *end;
	void *ok = &sa;

	if (argc != 3 || (rounds = strtol(argv[2], &end, 10)) < 0 || *end ||
	    (strcmp(argv[1], "above") && strcmp(argv[1], "thread") && strcmp(argv[1], "below"))) {
		fprintf(stderr, "usage: altstack above|thread|below N\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	if (strcmp(argv[1], "above")) {
		alt_mem = mmap(NULL, ALT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (alt_mem == MAP_FAILED)
			return 1;
	}
	if (!strcmp(argv[1], "thread")) {
		if (pthread_create(&t, NULL, run_thread, NULL) || pthread_join(t, &ok) || !ok)
			return 1;
	} else {
		if (use_alt_stack(alt_mem ? alt_mem : above))
			return 1;
		loop();
	}
	printf("sum=%ld leaves=%ld\n", sum, n_leaf);
	printf("calls: descend=%ld on_usr1=%ld leaf=%ld run_thread=%ld loop=%ld "
	       "use_alt_stack=%ld\n",
	       n_descend, n_on_usr1, n_leaf, n_run_thread, n_loop, n_use_alt_stack);
	return 0;
}
