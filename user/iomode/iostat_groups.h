/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --io's figures as the report reads them (user/report/io_report.c): the
 * kernel's keys grouped by process, command, cgroup or container (or all
 * in one), and the files, each sorted most input first. Data only: how it
 * is shown is the report's. Main thread only, as struct iostat.
 */
#ifndef USER_IOMODE_IOSTAT_GROUPS_H
#define USER_IOMODE_IOSTAT_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "cabbpf_event.h"
#include "user/iomode/iostat.h"
#include "user/proc/container.h"

enum iostat_by { IOSTAT_BY_PROC, IOSTAT_BY_CGROUP, IOSTAT_BY_CONTAINER, IOSTAT_BY_COMMAND };

/* A group of stat keys: a process (pid + cgroup), a cgroup, a container, or
 * everything; per (syscall, fd kind) totals inside (iostat__group_cell). */
struct iostat_group {
	uint32_t pid;
	uint64_t cgid;
	const char *cgroup; /* cgid's path (owned by the struct iostat), or NULL */
	char comm[16];
	char container[CONTAINER_ID_LEN + 1]; /* "" outside containers */
	const char *runtime;		      /* the container's, or NULL */
	/* Sparse: a process uses a few of the 156 (syscall, fd kind) cells,
	 * and a dense table of 1 KiB values took ~170 KiB per group: a 10 s
	 * --io of a machine starting 1,800 processes a second reached 1 GiB. */
	uint8_t at[CABBPF_SC__MAX][CABBPF_FD__MAX]; /* index in cells + 1; 0: none */
	uint8_t ncells;
	struct cabbpf_iostat_val *cells; /* owned */
	uint64_t nproc;			 /* IOSTAT_BY_COMMAND: processes (folded ones included) */
	uint64_t in_bytes, out_bytes, in_calls, out_calls, errors, in_short, in_ok;
};

/* Cell (sc, fdkind) of g: its figures, or zeros when it has none. */
const struct cabbpf_iostat_val *iostat__group_cell(const struct iostat_group *g, unsigned sc,
						   unsigned k);

/* s's keys grouped by by, most input bytes first (ended processes folded
 * into their command's row are in no IOSTAT_BY_PROC group; containers'
 * groups only for keys in one). Returns the array (free with
 * iostat__groups_free) and its length in *n, or NULL when out of memory. */
struct iostat_group **iostat__groups(struct iostat *s, enum iostat_by by, size_t *n);
void iostat__groups_free(struct iostat_group **g, size_t n);

/* Every key in one group (free with iostat__group_free), or NULL. */
struct iostat_group *iostat__group_all(struct iostat *s);
void iostat__group_free(struct iostat_group *g);

/* A file (or socket, pipe...) of a process. */
struct iostat_file {
	struct cabbpf_iofile_val t; /* its totals; t.name: the kernel's last path component */
	uint32_t pid;
	int32_t fd;
	uint64_t ino;
	const char *name; /* path or socket peer (owned by the struct iostat), or NULL */
};

/* The files, most input first: an array the caller frees, its length in
 * *n; NULL when out of memory. */
struct iostat_file *iostat__files(struct iostat *s, size_t *n);

/* What the report says of the figures' extent. */
struct iostat_info {
	unsigned top;		/* rows per text table */
	uint64_t procs_folded;	/* ended processes counted in their command's row only */
	uint64_t files_folded;	/* files of those */
};
void iostat__info(const struct iostat *s, struct iostat_info *i);

#endif /* USER_IOMODE_IOSTAT_GROUPS_H */
