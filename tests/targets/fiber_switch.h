/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FIBER_SWITCH(name) defines void name(void **save, void *to): a coroutine
 * switch of a program's own, as libco's coctx_swap or a fibre library's:
 * push the callee-saved registers, store rsp in *save, load rsp from to,
 * pop them and return on the other stack. No name tells a profiler what it
 * is (cabbpf finds it by its code: insn__switches_stack). Used by
 * tests/targets/fiber.c and tests/targets/plugin/cabfiber.c.
 */
#ifndef TESTS_TARGETS_FIBER_SWITCH_H
#define TESTS_TARGETS_FIBER_SWITCH_H

#define FIBER_SWITCH(name)                                                                         \
	__asm__(".text\n"                                                                          \
		".globl " #name "\n"                                                               \
		".type " #name ", @function\n" #name ":\n"                                         \
		"	pushq %rbp\n"                                                                    \
		"	pushq %rbx\n"                                                                    \
		"	pushq %r12\n"                                                                    \
		"	pushq %r13\n"                                                                    \
		"	pushq %r14\n"                                                                    \
		"	pushq %r15\n"                                                                    \
		"	movq %rsp, (%rdi)\n"                                                             \
		"	movq %rsi, %rsp\n"                                                               \
		"	popq %r15\n"                                                                     \
		"	popq %r14\n"                                                                     \
		"	popq %r13\n"                                                                     \
		"	popq %r12\n"                                                                     \
		"	popq %rbx\n"                                                                     \
		"	popq %rbp\n"                                                                     \
		"	ret\n"                                                                           \
		".size " #name ", .-" #name "\n");                                                 \
	void name(void **save, void *to)

#endif
