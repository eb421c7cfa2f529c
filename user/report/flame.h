/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The calling-context tree's views (analyzers/cct.h hands the tree over):
 * FlameGraph's folded stacks and a self-contained SVG flame graph.
 */
#ifndef USER_REPORT_FLAME_H
#define USER_REPORT_FLAME_H

#include <stdbool.h>
#include <stdio.h>

#include "analyzers/cct.h"

/*
 * FlameGraph's folded stacks of t, one line per context whose metric value
 * is non-zero: "main;b;c 1234" (the root left out, frames outermost first,
 * children in name order; ';' in names becomes ':'). metric: see enum
 * cct_metric. Returns 0, -ENOMEM or -EIO. Any one thread.
 */
int flame__write_folded(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx,
			enum cct_metric metric);

/*
 * A self-contained SVG flame graph of t (no script, no external resource):
 * frames as rectangles, widths from metric as in the folded output (a
 * frame's value plus its children's), the root at the bottom, a <title> on
 * every frame with its calls, wall and on-CPU times and share. Frames
 * narrower than 0.1 px are left out (counted in the subtitle). title is
 * shown at the top (escaped). Returns 0, -ENOMEM or -EIO. Any one thread.
 */
int flame__write_svg(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx,
		     enum cct_metric metric, bool cpu_time, const char *title);

#endif /* USER_REPORT_FLAME_H */
