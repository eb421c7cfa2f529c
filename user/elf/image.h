/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/image — a whole file mapped read-only, for the modules that read a
 * binary's code and data by file offset (user/plan, user/callsites).
 * Threads: an image is owned by one thread; its bytes may be read by any.
 */
#ifndef USER_IMAGE_H
#define USER_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct image {
	const uint8_t *base; /* NULL when not mapped */
	size_t size;
	int fd; /* open while mapped (libelf may read through it) */
};

/* Maps path. Returns 0 and fills *im (release with image__unmap), or
 * -ENOEXEC (empty file) or the -errno of open, fstat or mmap; *im is then
 * left unmapped (image__unmap on it is a no-op). Threads: any. */
int image__map(const char *path, struct image *im);

/* Unmaps and closes; an unmapped or zeroed image is fine. */
void image__unmap(struct image *im);

#endif /* USER_IMAGE_H */
