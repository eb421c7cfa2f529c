// SPDX-License-Identifier: BSD-2-Clause
/* The context every analyzer reads (struct an_ctx, analyzer.h): a
 * function's name, linkage name and source line. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "common/json.h"

const struct an_src *an_ctx__src(const struct an_ctx *c, uint32_t fid)
{
	if (!c->src || fid >= c->nfuncs || !c->src[fid].file)
		return NULL;
	return &c->src[fid];
}

void an_ctx__json_src(const struct an_ctx *c, uint32_t fid, struct json *w)
{
	const struct an_src *s = an_ctx__src(c, fid);

	if (!s)
		return;
	json__kv_string(w, "file", s->file);
	if (s->line)
		json__kv_u64(w, "line", s->line);
}

const char *an_ctx__linkage(const struct an_ctx *c, uint32_t fid)
{
	const char *l;

	if (!c->lnames || fid >= c->nfuncs || !(l = c->lnames[fid]))
		return NULL;
	return c->fnames[fid] && !strcmp(c->fnames[fid], l) ? NULL : l;
}

const char *an_ctx__name(const struct an_ctx *c, uint32_t fid, char buf[24])
{
	if (fid == AN_ROOT)
		return AN_ROOT_NAME;
	if (fid == AN_RESUMED)
		return AN_RESUMED_NAME;
	if (c->fnames && fid < c->nfuncs && c->fnames[fid])
		return c->fnames[fid];
	snprintf(buf, 24, "fid#%" PRIu32, fid);
	return buf;
}
