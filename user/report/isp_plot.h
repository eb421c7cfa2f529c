/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --plots DIR: the isp analyzer's cost and workload plots, one SVG per
 * routine (isp_plot.c says what they show), from the profiles
 * analyzers/isp.h hands over.
 */
#ifndef USER_REPORT_ISP_PLOT_H
#define USER_REPORT_ISP_PLOT_H

/*
 * Write one SVG cost plot per routine with at least 2 distinct sizes into
 * directory dir, through common/outfile.h; state is the isp analyzer's
 * instance. Returns the number written (>= 0) or -errno (logged). Main
 * thread, after the run.
 */
int isp_plot__write(void *state, const char *dir);

/* Whether dir can take the plots (a directory, not a symlink, writable,
 * its path free of other users' links, every *.svg in it one we may
 * replace; created when absent). Returns 0 or -errno after logging why. */
int isp_plot__check_dir(const char *dir);

#endif /* USER_REPORT_ISP_PLOT_H */
