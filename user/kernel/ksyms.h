/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where a kernel symbol's code lies, from /proc/kallsyms: its address and
 * the next symbol's, so a BPF program can tell whether an address on a
 * kernel stack is in it (the time sampler tells the program's page faults
 * from the probes' traps by the kernel entry at the bottom of the
 * interrupted stack: bpf/trace.bpf.c in_own_fault).
 */
#ifndef USER_KERNEL_KSYMS_H
#define USER_KERNEL_KSYMS_H

#include <stdint.h>

/*
 * The text symbol NAME of the kernel proper (not a module's), as
 * [*lo, *hi): its address, and the lowest address of any symbol above it.
 * Returns 0; -ENOENT when the kernel lists no such symbol, or hides the
 * addresses (kptr_restrict: every address 0); -errno when
 * /proc/kallsyms cannot be read. Reads the whole file (~100,000 lines):
 * call once, at start-up. Any thread.
 */
int ksyms__range(const char *name, uint64_t *lo, uint64_t *hi);

#endif
