/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one logging header. Diagnostics and statistics go to stderr; results
 * go to stdout (never through these macros). Any thread may log.
 */
#ifndef USER_LOG_H
#define USER_LOG_H

#include <stdio.h>

extern int log_verbose; /* set by -v; defined in common/log.c */

#define log_err(fmt, ...) fprintf(stderr, "cabbpf: error: " fmt "\n", ##__VA_ARGS__)
#define log_warn(fmt, ...) fprintf(stderr, "cabbpf: warning: " fmt "\n", ##__VA_ARGS__)
#define log_info(fmt, ...) fprintf(stderr, "cabbpf: " fmt "\n", ##__VA_ARGS__)
#define log_debug(fmt, ...)                                                                        \
	do {                                                                                       \
		if (log_verbose)                                                                   \
			fprintf(stderr, "cabbpf: debug: " fmt "\n", ##__VA_ARGS__);                \
	} while (0)

#endif /* USER_LOG_H */
