/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/image — a whole file mapped read-only, for the modules that read a
 * binary's code and data by file offset (user/plan, user/callsites,
 * user/guard).
 * Threads: an image is owned by one thread; its bytes may be read by any.
 */
#ifndef USER_IMAGE_H
#define USER_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

struct image {
	const uint8_t *base; /* NULL when not mapped */
	size_t size;
	int fd; /* open while mapped (libelf may read through it) */
};

/* Maps path (shared: the file's bytes, never another tool's uprobe
 * breakpoints). Returns 0 and fills *im (release with image__unmap), or
 * -ENOEXEC (empty file) or the -errno of open, fstat or mmap; *im is then
 * left unmapped (image__unmap on it is a no-op). Threads: any. */
int image__map(const char *path, struct image *im);

/* The executable at path must be x86-64 (the probes, the BPF programs
 * and the guard assume it): checked before any planning. Returns 0 (also
 * for a file that cannot be read or is not ELF: syms__load says why), or
 * -ENOEXEC after logging which architecture it is built for. Threads: any. */
int image__check_arch(const char *path);

/*
 * Open path as an ELF file for libelf: a regular file (-EISDIR for a
 * directory, -ENOEXEC for a FIFO, tty or device, which would block or feed
 * libelf garbage), read with ELF_C_READ (pread, not mmap: a binary
 * truncated under us is an error, not SIGBUS), of kind ELF (-ENOEXEC
 * otherwise, also when libelf cannot start). Returns 0 with *fd and *elf
 * (the caller ends them: elf_end, close), or -errno. Threads: any.
 */
int image__open_elf(const char *path, int *fd, Elf **elf);

/* Unmaps and closes; an unmapped or zeroed image is fine. */
void image__unmap(struct image *im);

#endif /* USER_IMAGE_H */
