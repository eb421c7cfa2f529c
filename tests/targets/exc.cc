// SPDX-License-Identifier: BSD-2-Clause
/*
 * exc MODE N — C++ exceptions thrown through functions a tracer probes.
 * Built by build.sh with g++ and clang++ at -O0 and -O2 (exc-gxx-O0,
 * exc-gxx-O2, exc-clangxx-O0, exc-clangxx-O2).
 *
 * Every function below has C linkage (extern "C": plain symbol names such
 * as thrower_inner, selectable with -f thrower_inner) but is compiled as
 * C++, so it may throw. They are noinline (and noipa with g++; clang has no
 * noipa, an empty asm volatile barrier stands in), and each call is
 * followed by a barrier, so every call below is a real call at -O2 too.
 * Each function bumps its own counter (atomic) on its first line, through
 * the helper tally() (also a function of the binary: leave it out of a
 * selection whose edges a test asserts).
 *
 * The basic chain, used by most modes: catcher(i) calls thrower_outer(i)
 * -> thrower_mid(i) -> thrower_inner(i), which throws std::runtime_error
 * (or, where a mode says so, returns 3*i+1).
 *
 * MODE (N >= 0 iterations i = 0..N-1; main calls catcher(i) each time
 * unless said otherwise):
 *   basic           inner always throws; catcher catches.
 *   rethrow         catcher -> rethrower -> outer -> mid -> inner throws;
 *                   rethrower catches and does `throw;`, catcher catches.
 *   nested          catcher -> nester: nested try blocks; the inner one
 *                   catches the runtime_error and calls translate(), which
 *                   throws std::logic_error from inside that catch block;
 *                   nester's outer try catches it; catcher sees no throw.
 *   dtor            catcher -> guarded: an object on guarded's frame whose
 *                   destructor calls cleanup_fn(i) while the exception
 *                   unwinds guarded.
 *   threads         4 std::threads each run thread_body(t), which calls
 *                   catcher(i) N times (basic chain) concurrently.
 *   cancel          N times: a pthread runs cancel_thread -> blocker, which
 *                   holds an object whose destructor calls cleanup_fn, and
 *                   blocks in read(2) on an empty pipe in a loop; main
 *                   pthread_cancels it (forced unwinding through blocker
 *                   and cancel_thread) and joins it, expecting
 *                   PTHREAD_CANCELED. No catcher call.
 *   untraced_catch  catcher -> plain_catcher, which catches (leave
 *                   plain_catcher out of the selection: the catch is then
 *                   in an untraced frame between traced ones).
 *   deep            catcher -> deep_rec(100) -> ... -> deep_rec(1) ->
 *                   thrower_inner, which throws: 102 frames of traced
 *                   functions pending (more than the kernel's 64 return
 *                   probes per thread), caught at the top by catcher.
 *   mixed           catcher -> outer -> mid -> inner, which throws when
 *                   i % 3 == 0 and returns otherwise; after its try block,
 *                   caught or not, catcher calls after_catch(i), which
 *                   returns normally, and then returns normally to main.
 *
 * With EXC_WAIT in the environment it first prints "ready" and waits for
 * SIGUSR1 (blocked, no handler), then runs as above.
 *
 * Output (stdout), deterministic for a given MODE and N:
 *   "mode=MODE n=N caught=C sum=S" (C: exceptions that reached catcher's
 *   catch clause: N in basic, rethrow, dtor, deep; 4N in threads; 0 in
 *   nested and untraced_catch; ceil(N/3) in mixed. S: a checksum of
 *   returned values and caught exceptions), in cancel mode "mode=cancel n=N canceled=C" (C
 *   joins that saw PTHREAD_CANCELED), then as the LAST line the program's
 *   own counts of every function above:
 *   "calls: catcher=.. thrower_outer=.. thrower_mid=.. thrower_inner=..
 *    rethrower=.. nester=.. translate=.. guarded=.. cleanup_fn=..
 *    plain_catcher=.. deep_rec=.. after_catch=.. thread_body=..
 *    cancel_thread=.. blocker=.."
 * Exact counts per mode (all others 0):
 *   basic:   catcher, thrower_outer, thrower_mid, thrower_inner: N
 *   rethrow: those and rethrower: N
 *   nested:  those and nester, translate: N
 *   dtor:    those and guarded, cleanup_fn: N
 *   threads: catcher, outer, mid, inner: 4N; thread_body: 4
 *   cancel:  cancel_thread, blocker, cleanup_fn: N
 *   untraced_catch: catcher, outer, mid, inner, plain_catcher: N
 *   deep:    catcher, thrower_inner: N; deep_rec: 100N
 *   mixed:   catcher, outer, mid, inner, after_catch: N
 * Nothing on stderr; exit status 0 (1 if a check of its own failed);
 * usage errors print a usage line on stderr and exit 2.
 */
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

#if defined(__clang__)
#define TRACED __attribute__((noinline))
#else
#define TRACED __attribute__((noinline, noipa))
#endif
#define BARRIER() __asm__ volatile("" ::: "memory")

enum {
	C_CATCHER,
	C_OUTER,
	C_MID,
	C_INNER,
	C_RETHROWER,
	C_NESTER,
	C_TRANSLATE,
	C_GUARDED,
	C_CLEANUP,
	C_PLAIN,
	C_DEEP,
	C_AFTER,
	C_THREAD,
	C_CANCEL,
	C_BLOCKER,
	C__N,
};

static const char *const names[C__N] = {
	"catcher",    "thrower_outer", "thrower_mid", "thrower_inner", "rethrower",
	"nester",     "translate",     "guarded",     "cleanup_fn",    "plain_catcher",
	"deep_rec",   "after_catch",   "thread_body", "cancel_thread", "blocker",
};

static std::atomic<long> counts[C__N];
static std::atomic<long> checksum;
static std::atomic<long> caught;

enum mode {
	M_BASIC,
	M_RETHROW,
	M_NESTED,
	M_DTOR,
	M_THREADS,
	M_CANCEL,
	M_UNTRACED,
	M_DEEP,
	M_MIXED,
};
static enum mode mode;

/* Each counted function's first line. A helper, not the atomic add
 * itself: inlined, g++ -O2 makes `lock addq` the function's first
 * instruction, where uprobes refuse to go. */
#define COUNT(c) tally(c)

/* Calls cleanup_fn from its destructor: runs during unwinding. */
struct cleanup_guard {
	long i;
	~cleanup_guard();
};

extern "C" {

TRACED void tally(int c)
{
	counts[c].fetch_add(1, std::memory_order_relaxed);
	BARRIER();
}

TRACED void cleanup_fn(long i)
{
	COUNT(C_CLEANUP);
	checksum.fetch_add(i % 7, std::memory_order_relaxed);
	BARRIER();
}

TRACED long thrower_inner(long i)
{
	COUNT(C_INNER);
	BARRIER();
	if (mode != M_MIXED || i % 3 == 0)
		throw std::runtime_error("thrower_inner");
	return 3 * i + 1;
}

TRACED long thrower_mid(long i)
{
	COUNT(C_MID);
	long r = thrower_inner(i);
	BARRIER();
	return r + 1;
}

TRACED long thrower_outer(long i)
{
	COUNT(C_OUTER);
	long r = thrower_mid(i);
	BARRIER();
	return r + 1;
}

TRACED long rethrower(long i)
{
	COUNT(C_RETHROWER);
	try {
		long r = thrower_outer(i);
		BARRIER();
		return r;
	} catch (const std::runtime_error &) {
		checksum.fetch_add(2, std::memory_order_relaxed);
		throw;
	}
}

TRACED void translate(long i)
{
	COUNT(C_TRANSLATE);
	BARRIER();
	throw std::logic_error(i % 2 ? "odd" : "even");
}

TRACED long nester(long i)
{
	COUNT(C_NESTER);
	try {
		try {
			long r = thrower_outer(i);
			BARRIER();
			return r;
		} catch (const std::runtime_error &) {
			translate(i);
			BARRIER();
		}
	} catch (const std::logic_error &e) {
		return e.what()[0] == 'o' ? 5 : 4;
	}
	return -100; /* not reached */
}

TRACED long guarded(long i)
{
	COUNT(C_GUARDED);
	cleanup_guard g{i};
	long r = thrower_outer(i);
	BARRIER();
	return r;
}

TRACED long plain_catcher(long i)
{
	COUNT(C_PLAIN);
	try {
		long r = thrower_outer(i);
		BARRIER();
		return r;
	} catch (const std::runtime_error &) {
		return -3;
	}
}

TRACED long deep_rec(long d, long i)
{
	COUNT(C_DEEP);
	long r = d > 1 ? deep_rec(d - 1, i) : thrower_inner(i);
	BARRIER();
	return r + 1;
}

TRACED void after_catch(long i)
{
	COUNT(C_AFTER);
	checksum.fetch_add(i & 1, std::memory_order_relaxed);
	BARRIER();
}

TRACED long catcher(long i)
{
	long r = 0;

	COUNT(C_CATCHER);
	try {
		switch (mode) {
		case M_RETHROW:
			r = rethrower(i);
			break;
		case M_NESTED:
			r = nester(i);
			break;
		case M_DTOR:
			r = guarded(i);
			break;
		case M_UNTRACED:
			r = plain_catcher(i);
			break;
		case M_DEEP:
			r = deep_rec(100, i);
			break;
		default:
			r = thrower_outer(i);
			break;
		}
		BARRIER();
	} catch (const std::runtime_error &e) {
		caught.fetch_add(1, std::memory_order_relaxed);
		r = (long)strlen(e.what());
	}
	if (mode == M_MIXED) {
		after_catch(i);
		BARRIER();
	}
	return r;
}

TRACED void thread_body(long n)
{
	COUNT(C_THREAD);
	for (long i = 0; i < n; i++) {
		checksum.fetch_add(catcher(i), std::memory_order_relaxed);
		BARRIER();
	}
}

/* The pipe blocker reads from: nobody ever writes to it. */
static int block_fd = -1;
static sem_t started;

/* Blocks in read(2), a cancellation point, until cancelled. */
TRACED void blocker(long i)
{
	COUNT(C_BLOCKER);
	cleanup_guard g{i};
	char c;

	sem_post(&started); /* not a cancellation point */
	for (;;) {
		if (read(block_fd, &c, 1) >= 0 || errno != EINTR)
			break;
	}
	BARRIER();
}

TRACED void *cancel_thread(void *arg)
{
	COUNT(C_CANCEL);
	blocker((long)(intptr_t)arg);
	BARRIER();
	return nullptr;
}

} /* extern "C" */

cleanup_guard::~cleanup_guard()
{
	cleanup_fn(i);
	BARRIER();
}

static int run_cancel(long n)
{
	long canceled = 0;
	int fds[2];

	if (pipe(fds) || sem_init(&started, 0, 0))
		return 1;
	block_fd = fds[0];
	for (long i = 0; i < n; i++) {
		pthread_t t;
		void *ret = nullptr;

		if (pthread_create(&t, nullptr, cancel_thread, (void *)(intptr_t)i))
			return 1;
		while (sem_wait(&started) && errno == EINTR)
			;
		pthread_cancel(t);
		pthread_join(t, &ret);
		canceled += ret == PTHREAD_CANCELED;
	}
	close(fds[0]);
	close(fds[1]);
	printf("mode=cancel n=%ld canceled=%ld\n", n, canceled);
	return canceled == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = {"basic",   "rethrow",	 "nested", "dtor", "threads",
					    "cancel", "untraced_catch", "deep",   "mixed"};
	char *end;
	long n;
	int m, ret = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: exc MODE N (MODE: basic rethrow nested dtor threads cancel "
				"untraced_catch deep mixed)\n");
		return 2;
	}
	for (m = 0; m < (int)(sizeof(modes) / sizeof(modes[0])); m++)
		if (!strcmp(argv[1], modes[m]))
			break;
	n = strtol(argv[2], &end, 10);
	if (m == (int)(sizeof(modes) / sizeof(modes[0])) || *end || !*argv[2] || n < 0) {
		fprintf(stderr, "usage: exc MODE N (MODE: basic rethrow nested dtor threads cancel "
				"untraced_catch deep mixed)\n");
		return 2;
	}
	mode = (enum mode)m;
	/* EXC_WAIT set: "ready" on stdout, then nothing until SIGUSR1 (no
	 * handler: blocked and waited for), so a tracer can be in place
	 * before the first call (whole-container tests). */
	if (getenv("EXC_WAIT")) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready\n");
		fflush(stdout);
		if (sigwait(&set, &sig))
			return 1;
	}
	if (mode == M_CANCEL) {
		ret = run_cancel(n);
	} else if (mode == M_THREADS) {
		std::vector<std::thread> ts;

		for (int t = 0; t < 4; t++)
			ts.emplace_back(thread_body, n);
		for (auto &t : ts)
			t.join();
	} else {
		for (long i = 0; i < n; i++) {
			checksum.fetch_add(catcher(i), std::memory_order_relaxed);
			BARRIER();
		}
	}
	if (mode != M_CANCEL)
		printf("mode=%s n=%ld caught=%ld sum=%ld\n", argv[1], n, caught.load(),
		       checksum.load());
	printf("calls:");
	for (int c = 0; c < C__N; c++)
		printf(" %s=%ld", names[c], counts[c].load());
	printf("\n");
	return ret;
}
