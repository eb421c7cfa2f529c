// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "user/elf/syms.h"
#include "user/trace/calibrate.h"
#include "user/trace/trace.h"

#define CALIB_CALLS 2000

/* One function per entry class, written in assembly so that their first
 * instruction is what their name says whatever the compiler does. */
__asm__(".text\n"
	".globl cabbpf_calib_nop5\n.type cabbpf_calib_nop5, @function\n"
	"cabbpf_calib_nop5:\n\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret\n"
	".size cabbpf_calib_nop5, .-cabbpf_calib_nop5\n"
	".globl cabbpf_calib_push\n.type cabbpf_calib_push, @function\n"
	"cabbpf_calib_push:\n\tpush %rbp\n\tpop %rbp\n\tret\n"
	".size cabbpf_calib_push, .-cabbpf_calib_push\n"
	".globl cabbpf_calib_mov\n.type cabbpf_calib_mov, @function\n"
	"cabbpf_calib_mov:\n\tmov %rdi, %rax\n\tret\n"
	".size cabbpf_calib_mov, .-cabbpf_calib_mov\n");
void cabbpf_calib_nop5(void);
void cabbpf_calib_push(void);
void cabbpf_calib_mov(void);

static const struct {
	const char *name;
	void (*fn)(void);
	enum insn_class cls;
} calib[] = {
	{"cabbpf_calib_nop5", cabbpf_calib_nop5, INSN_NOP5},
	{"cabbpf_calib_push", cabbpf_calib_push, INSN_EMULATED},
	{"cabbpf_calib_mov", cabbpf_calib_mov, INSN_SSTEP},
};
#define NCALIB (sizeof(calib) / sizeof(calib[0]))

/* The child's own CPU time: a trap's handling is charged to it, time
 * spent preempted by other work is not (under load, wall time measured
 * the machine's other work: 2x the cost with two CPU hogs). */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The child: time every function (best of 3 rounds of CALIB_CALLS), hand
 * the times over, wait for the probes, time them again. */
static void child_main(int rd, int wr)
{
	uint64_t t[2][NCALIB];
	char go;
	int pass, r;
	size_t k, i;

	for (pass = 0; pass < 2; pass++) {
		if (pass && read(rd, &go, 1) != 1)
			_exit(1);
		for (k = 0; k < NCALIB; k++) {
			t[pass][k] = UINT64_MAX;
			for (r = 0; r < 3; r++) {
				uint64_t a = now_ns(), d;

				for (i = 0; i < CALIB_CALLS; i++)
					calib[k].fn();
				d = now_ns() - a;
				if (d < t[pass][k])
					t[pass][k] = d;
			}
		}
		if (write(wr, t[pass], sizeof(t[pass])) != (ssize_t)sizeof(t[pass]))
			_exit(1);
	}
	_exit(0);
}

static int on_event(void *ctx, unsigned cpu, const struct cabbpf_event *e)
{
	(void)ctx, (void)cpu, (void)e;
	return 0;
}

int calibrate__probe_costs(bool no_times, double cost_ns[INSN__NCLASS])
{
	int to_child[2] = {-1, -1}, from_child[2] = {-1, -1}, status, err = 0;
	uint64_t offsets[NCALIB], base[NCALIB], traced[NCALIB];
	char exe[PATH_MAX];
	struct symtab *st = NULL;
	struct trace *tr = NULL;
	struct trace_opts to;
	pid_t pid = -1;
	ssize_t len;
	size_t k;

	memset(cost_ns, 0, sizeof(double) * INSN__NCLASS);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0) {
		err = -errno;
		goto cleanup;
	}
	exe[len] = 0;
	err = syms__load(exe, &st);
	if (err)
		goto cleanup;
	for (k = 0; k < NCALIB; k++) {
		const struct sym *s = syms__find(st, calib[k].name);

		if (!s) {
			err = -ENOENT;
			goto cleanup;
		}
		offsets[k] = s->offset;
	}
	if (pipe2(to_child, O_CLOEXEC) || pipe2(from_child, O_CLOEXEC)) {
		err = -errno;
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (pid == 0)
		child_main(to_child[0], from_child[1]);
	if (read(from_child[0], base, sizeof(base)) != (ssize_t)sizeof(base)) {
		err = -EIO;
		goto cleanup;
	}
	memset(&to, 0, sizeof(to));
	to.pid = pid;
	to.binary = exe;
	to.offsets = offsets;
	to.nfuncs = NCALIB;
	/* every event stays in the ring (nobody drains it): room for all */
	to.ring_bytes = 1u << 20;
	to.no_times = no_times;
	to.on_event = on_event;
	err = trace__open(&to, &tr);
	if (!err)
		err = trace__attach(tr);
	if (err)
		goto cleanup;
	if (write(to_child[1], "g", 1) != 1 ||
	    read(from_child[0], traced, sizeof(traced)) != (ssize_t)sizeof(traced)) {
		err = -EIO;
		goto cleanup;
	}
	for (k = 0; k < NCALIB; k++)
		cost_ns[calib[k].cls] =
			traced[k] > base[k] ? (double)(traced[k] - base[k]) / CALIB_CALLS : 0;
	log_info("probe cost per traced call, measured: %.0f ns (nop5), %.0f ns (emulated), "
		 "%.0f ns (single-stepped) entry and return",
		 cost_ns[INSN_NOP5], cost_ns[INSN_EMULATED], cost_ns[INSN_SSTEP]);
cleanup:
	if (err)
		log_warn("measuring the probes' cost failed (%s): times are not compensated",
			 strerror(-err));
	trace__free(tr);
	if (pid > 0) {
		if (err)
			kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	for (k = 0; k < 2; k++) {
		if (to_child[k] >= 0)
			close(to_child[k]);
		if (from_child[k] >= 0)
			close(from_child[k]);
	}
	syms__free(st);
	return err;
}
