// SPDX-License-Identifier: BSD-2-Clause
/* A file mapped read-only (image.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/elf/image.h"
#include "common/log.h"

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
	/* Shared, not private: the kernel writes a uprobe's int3 into every
	 * private mapping of the file that may execute (uprobe_mmap,
	 * valid_vma), ours too, when a probe has no pid filter (another
	 * cabbpf in --cgroup mode, bpftrace, perf probe). Read through such
	 * a mapping, the planner found int3 at probed entries and refused
	 * them, and a switcher could go unseen. A shared one is never
	 * written: the page cache holds the file's own bytes. */
	p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, im->fd, 0);
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

int image__check_arch(const char *path)
{
	static const struct {
		unsigned short em;
		const char *name;
	} names[] = {{3, "i386"},   {40, "arm"},   {183, "aarch64"},  {243, "riscv"},
		     {21, "ppc64"}, {22, "s390x"}, {258, "loongarch"}};
	unsigned char h[20];
	unsigned short em;
	const char *name = NULL;
	size_t i;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0; /* syms__load says why */
	if (fread(h, 1, sizeof(h), f) != sizeof(h) || memcmp(h, "\177ELF", 4)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	em = h[5] == 2 ? (unsigned short)(h[18] << 8 | h[19])
		       : (unsigned short)(h[18] | h[19] << 8);
	if (em == 62 && h[4] == 2) /* EM_X86_64, ELFCLASS64 */
		return 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].em == em)
			name = names[i].name;
	if (h[4] != 2 && em == 62)
		name = "x32";
	if (name)
		log_err("%s is built for %s: cabbpf traces x86-64 programs", path, name);
	else
		log_err("%s is built for another architecture (ELF machine %u): cabbpf traces "
			"x86-64 programs",
			path, em);
	return -ENOEXEC;
}

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static bool elf_ok;

/* libelf wants its version set once per process before any use. */
static void init_libelf(void)
{
	elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

int image__open_elf(const char *path, int *fdp, Elf **elfp)
{
	struct stat sb;
	Elf *elf = NULL;
	int fd, err = 0;

	*fdp = -1;
	*elfp = NULL;
	pthread_once(&elf_once, init_libelf);
	if (!elf_ok)
		return -ENOEXEC;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0)
		err = -errno;
	else if (S_ISDIR(sb.st_mode))
		err = -EISDIR;
	else if (!S_ISREG(sb.st_mode))
		err = -ENOEXEC;
	if (!err) {
		elf = elf_begin(fd, ELF_C_READ, NULL);
		if (!elf || elf_kind(elf) != ELF_K_ELF)
			err = -ENOEXEC;
	}
	if (err) {
		if (elf)
			elf_end(elf);
		close(fd);
		return err;
	}
	*fdp = fd;
	*elfp = elf;
	return 0;
}
