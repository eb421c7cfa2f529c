// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The target's progress, for sampling estimates (user/trace/progress.c):
 * a CPU clock on every CPU fires every sample period (1 ms) while the
 * CPU runs in user mode (exclude_kernel: a probe's trap, which is kernel
 * time, never counts); this program counts the ticks that land in the
 * target. So the count grows with the user-mode time the target spends,
 * whatever its probes cost: a program slowed 100 times inside a sampling
 * window still shows the progress it made there.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 target_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ticks SEC(".maps");

/* Whether ip is in the process's xol area: the return probes' trampoline
 * and the instructions single-stepped out of line run there, in user
 * mode, and are the probes' time, not the target's progress (as
 * bpf/trace.bpf.c in_xol_area). A kernel whose BTF does not name the
 * area: never. */
static __always_inline bool in_xol_area(struct task_struct *task, __u64 ip)
{
	struct xol_area *xa = NULL;

	if (!bpf_core_field_exists(xa->vaddr) || !task->mm)
		return false;
	xa = task->mm->uprobes_state.xol_area;
	return xa && ip - xa->vaddr < 4096;
}

SEC("perf_event")
int on_tick(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 k = 0;
	__u64 *v;

	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	if (in_xol_area(task, ctx->regs.ip))
		return 0;
	/* Kernel-mode ticks never get here: the event has exclude_kernel
	 * (user/trace/progress.c), and the hrtimer drops them before any
	 * overflow handler runs. */
	v = bpf_map_lookup_elem(&ticks, &k);
	if (v)
		*v += 1;
	return 0;
}
