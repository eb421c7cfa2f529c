// SPDX-License-Identifier: BSD-2-Clause
/* A file mapped read-only (image.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/elf/image.h"

int image__map(const char *path, struct image *im)
{
	struct stat sb;
	void *p;
	int err;

	im->base = NULL;
	im->size = 0;
	im->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (im->fd < 0)
		return -errno;
	if (fstat(im->fd, &sb)) {
		err = -errno;
		goto cleanup;
	}
	if (sb.st_size <= 0) {
		err = -ENOEXEC;
		goto cleanup;
	}
	p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, im->fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	im->base = p;
	im->size = (size_t)sb.st_size;
	return 0;
cleanup:
	close(im->fd);
	im->fd = -1;
	return err;
}

void image__unmap(struct image *im)
{
	if (!im || !im->base)
		return;
	munmap((void *)im->base, im->size);
	close(im->fd);
	im->base = NULL;
	im->size = 0;
	im->fd = -1;
}
