/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One function per rule of user/callsites.h, for tests/test_callsites.c.
 * Every f_* starts with mov %edi,%eax (single-stepped) and, unless the rule
 * says otherwise, ends with ret followed by nop padding. Built as a PIE and,
 * with -DNOPIE, as a non-PIE (absolute addresses). Never run.
 */
	.text
	.p2align 4
	.type f_direct, @function
f_direct:		/* OK: two plain calls from main */
	mov %edi, %eax
	ret
	.size f_direct, .-f_direct

	.p2align 4
	.type f_tail, @function
f_tail:			/* JUMPED: main tail-jumps to it with jmp rel32 */
	mov %edi, %eax
	ret
	.size f_tail, .-f_tail

	.p2align 4
	.type f_short, @function
f_short:		/* JUMPED: a short jmp rel8 from f_shorter */
	mov %edi, %eax
	ret
	.size f_short, .-f_short

	.type f_shorter, @function
f_shorter:
	test %edi, %edi
	jz f_short
	ret
	.size f_shorter, .-f_shorter

	.p2align 4
	.type f_lea, @function
f_lea:			/* ADDRESS: lea f_lea(%rip) in main */
	mov %edi, %eax
	ret
	.size f_lea, .-f_lea

	.p2align 4
	.type f_data, @function
f_data:			/* ADDRESS: a pointer to it in .data */
	mov %edi, %eax
	ret
	.size f_data, .-f_data

	.p2align 4
	.type f_pre, @function
f_pre:			/* no ret: runs into f_fall */
	mov %edi, %eax
	.size f_pre, .-f_pre
	.type f_fall, @function
f_fall:			/* FALLTHROUGH */
	mov %edi, %eax
	ret
	.size f_fall, .-f_fall

	.p2align 4
	.type f_table, @function
f_table:		/* BODY: an indirect jump inside */
	mov %edi, %eax
	jmp *%rax
	.size f_table, .-f_table

	.p2align 4
	.globl f_export
	.type f_export, @function
f_export:		/* EXPORTED (built with -rdynamic) */
	mov %edi, %eax
	ret
	.size f_export, .-f_export

	.p2align 4
	.type f_never, @function
f_never:		/* NO_CALLS */
	mov %edi, %eax
	ret
	.size f_never, .-f_never

	.p2align 4
	.type f_bnd, @function
f_bnd:			/* ADDRESS: only a prefixed (bnd) call reaches it */
	mov %edi, %eax
	ret
	.size f_bnd, .-f_bnd

	.p2align 4
	.type f_unsized, @function
f_unsized:		/* ADDRESS: called from code no sized symbol covers */
	mov %edi, %eax
	ret
	.size f_unsized, .-f_unsized

	.p2align 4
	.type f_rec, @function
f_rec:			/* OK: calls itself, and main calls it */
	mov %edi, %eax
	test %eax, %eax
	jz 1f
	dec %edi
	call f_rec
1:	ret
	.size f_rec, .-f_rec

	.p2align 4
	.type f_imm, @function
f_imm:			/* non-PIE: ADDRESS (mov $f_imm); PIE: OK */
	mov %edi, %eax
	ret
	.size f_imm, .-f_imm

	.p2align 4
	.globl main
	.type main, @function
main:
	push %rbx
	call f_direct
	call f_direct
	call f_lea
	lea f_lea(%rip), %rax
	call f_data
	call f_fall
	call f_table
	call f_export
	bnd call f_bnd
	call f_rec
	call f_imm
	call f_after_call
	call f_shorter
#ifdef NOPIE
	mov $f_imm, %edi
#endif
	pop %rbx
	jmp f_tail
	.size main, .-main

	.p2align 4
	.type ends_with_call, @function
ends_with_call:
	mov %edi, %eax
	call abort
	.size ends_with_call, .-ends_with_call
	.type f_after_call, @function
f_after_call:		/* OK: follows a call to a function that never returns */
	mov %edi, %eax
	ret
	.size f_after_call, .-f_after_call

	.p2align 4
unsized_helper:		/* no .type, no .size: only rule 2 sees it */
	call f_unsized
	call ends_with_call
	ret

	.data
	.p2align 3
	.quad f_data

	.section .note.GNU-stack, "", @progbits
