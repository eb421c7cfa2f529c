/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The names of what the I/O tracer sees (include/cabbpf_event.h's enums):
 * system calls and fd kinds, as the reports print them. Shared by the I/O
 * analyzer and the --io mode. Pure; any thread.
 */
#ifndef COMMON_SYSCALLS_H
#define COMMON_SYSCALLS_H

#include "cabbpf_event.h"

/* Name of a syscall (enum cabbpf_sc) and of an fd kind (enum
 * cabbpf_fdkind): static strings, "?" when out of range; never NULL. */
const char *syscalls__name(unsigned sc);
const char *syscalls__fdkind_name(unsigned kind);

#endif /* COMMON_SYSCALLS_H */
