// SPDX-License-Identifier: BSD-2-Clause
/*
 * insns — functions whose first instruction is one the kernel's uprobe
 * rules (arch/x86/kernel/uprobes.c) decide on in a particular way, to
 * compare cabbpf's plan (user/elf/insn.c, insn__kernel_refuses) with what
 * the kernel does when the probe is attached (issue 15).
 *
 * Every ins_* function is written in assembly so its first bytes are
 * exact; each returns a value that depends on that first instruction
 * having run. main calls the ones this CPU can run (AVX2 for the VEX ones)
 * once each and prints "ins_NAME=VALUE" lines, then "done". The EVEX one
 * (AVX-512) is never called: attaching needs only the mapping.
 * `insns wait` prints "ready" and waits for a signal instead (SIGKILL
 * ends it): the kernel checks a probe's instruction when it puts the
 * breakpoint into a process that maps the file, so a test needs one.
 *
 *   ins_vmovd      c5 f9 6e c6        vmovd %esi,%xmm0     refused (6e)
 *   ins_vpcmpeqb   c5 f1 74 c1        vpcmpeqb             accepted (74)
 *   ins_vzeroupper c5 f8 77           vzeroupper           accepted (77)
 *   ins_evex       62 f1 7d 48 6f 07  vmovdqa32 (%rdi),%zmm0 refused (6f)
 *   ins_cs_mov     2e 48 8b 07        cs mov (%rdi),%rax   refused (prefix)
 *   ins_lock_add   f0 48 01 37        lock add %rsi,(%rdi) refused (prefix)
 *   ins_xchg_ax    66 90              xchg %ax,%ax         a nop
 *   ins_mov        48 89 f8           mov %rdi,%rax        accepted
 *   ins_push       55                 push %rbp            accepted
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__asm__(".text\n"
	".globl ins_vmovd\n.type ins_vmovd,@function\n"
	"ins_vmovd:\n"
	"  .byte 0xc5, 0xf9, 0x6e, 0xc6\n" /* vmovd %esi,%xmm0 */
	"  vmovd %xmm0, %eax\n"
	"  ret\n"
	".size ins_vmovd, .-ins_vmovd\n"

	".globl ins_vpcmpeqb\n.type ins_vpcmpeqb,@function\n"
	"ins_vpcmpeqb:\n"
	"  .byte 0xc5, 0xf1, 0x74, 0xc1\n" /* vpcmpeqb %xmm1,%xmm1,%xmm0 */
	"  vmovd %xmm0, %eax\n"		    /* all ones: 0xffffffff */
	"  ret\n"
	".size ins_vpcmpeqb, .-ins_vpcmpeqb\n"

	".globl ins_vzeroupper\n.type ins_vzeroupper,@function\n"
	"ins_vzeroupper:\n"
	"  .byte 0xc5, 0xf8, 0x77\n" /* vzeroupper */
	"  mov $7, %eax\n"
	"  ret\n"
	".size ins_vzeroupper, .-ins_vzeroupper\n"

	".globl ins_evex\n.type ins_evex,@function\n"
	"ins_evex:\n"
	"  .byte 0x62, 0xf1, 0x7d, 0x48, 0x6f, 0x07\n" /* vmovdqa32 (%rdi),%zmm0 */
	"  ret\n"
	".size ins_evex, .-ins_evex\n"

	".globl ins_cs_mov\n.type ins_cs_mov,@function\n"
	"ins_cs_mov:\n"
	"  .byte 0x2e, 0x48, 0x8b, 0x07\n" /* cs mov (%rdi),%rax */
	"  ret\n"
	".size ins_cs_mov, .-ins_cs_mov\n"

	".globl ins_lock_add\n.type ins_lock_add,@function\n"
	"ins_lock_add:\n"
	"  .byte 0xf0, 0x48, 0x01, 0x37\n" /* lock add %rsi,(%rdi) */
	"  mov (%rdi), %rax\n"
	"  ret\n"
	".size ins_lock_add, .-ins_lock_add\n"

	".globl ins_xchg_ax\n.type ins_xchg_ax,@function\n"
	"ins_xchg_ax:\n"
	"  .byte 0x66, 0x90\n" /* xchg %ax,%ax */
	"  mov %rdi, %rax\n"
	"  ret\n"
	".size ins_xchg_ax, .-ins_xchg_ax\n"

	".globl ins_mov\n.type ins_mov,@function\n"
	"ins_mov:\n"
	"  .byte 0x48, 0x89, 0xf8\n" /* mov %rdi,%rax */
	"  ret\n"
	".size ins_mov, .-ins_mov\n"

	".globl ins_push\n.type ins_push,@function\n"
	"ins_push:\n"
	"  push %rbp\n"
	"  lea 1(%rdi), %rax\n"
	"  pop %rbp\n"
	"  ret\n"
	".size ins_push, .-ins_push\n");

unsigned ins_vmovd(unsigned a, unsigned b);
unsigned ins_vpcmpeqb(void);
unsigned ins_vzeroupper(void);
void ins_evex(const void *p);
long ins_cs_mov(const long *p);
long ins_lock_add(long *p, long v);
long ins_xchg_ax(long v);
long ins_mov(long v);
long ins_push(long v);

int main(int argc, char **argv)
{
	long cell = 40;
	int avx2;

	(void)argv;
	__builtin_cpu_init();
	avx2 = __builtin_cpu_supports("avx2");
	printf("ready\n");
	fflush(stdout);
	if (argc > 1) {
		for (;;)
			pause();
	}
	if (avx2) {
		printf("ins_vmovd=%u\n", ins_vmovd(0, 1234));
		printf("ins_vpcmpeqb=%#x\n", ins_vpcmpeqb());
		printf("ins_vzeroupper=%u\n", ins_vzeroupper());
	}
	printf("ins_cs_mov=%ld\n", ins_cs_mov(&cell));
	printf("ins_lock_add=%ld\n", ins_lock_add(&cell, 2));
	printf("ins_xchg_ax=%ld\n", ins_xchg_ax(5));
	printf("ins_mov=%ld\n", ins_mov(6));
	printf("ins_push=%ld\n", ins_push(7));
	if (argc < 0) /* never: keeps ins_evex referenced */
		ins_evex(argv);
	printf("done\n");
	return 0;
}
