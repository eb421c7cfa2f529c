/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The --io report: the run's figures (user/iomode/iostat_groups.h) as
 * text and as JSON (docs/json-schema.md, "--io"), each table described
 * once (common/emit.h). Main thread only, as struct iostat.
 */
#ifndef USER_REPORT_IO_REPORT_H
#define USER_REPORT_IO_REPORT_H

#include <stdio.h>

#include "user/iomode/iostat.h"

/* The full text report on f. Returns 0 or -EIO / -ENOMEM. */
int io_report__text(struct iostat *s, FILE *f, const struct iostat_run *r);

/* The full JSON report into path ("-" = stdout, never through a planted
 * symlink: common/outfile.h), r->outputs listed in it. Returns 0 or
 * -errno (a failed write's own: ENOSPC...). */
int io_report__json(struct iostat *s, const char *path, const struct iostat_run *r);

#endif /* USER_REPORT_IO_REPORT_H */
