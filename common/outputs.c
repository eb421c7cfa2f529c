// SPDX-License-Identifier: BSD-2-Clause
/* What became of each output file: see common/outputs.h. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "common/json.h"
#include "common/outfile.h"
#include "common/outputs.h"

static int one(struct json *w, const char *option, const char *path, int err)
{
	int e = json__begin_object(w);

	e |= json__kv_string(w, "option", option);
	e |= json__kv_string(w, "path", path ? path : "-");
	e |= json__kv_bool(w, "written", !err);
	/* the reason as the message on stderr said it, and the errno's name */
	e |= json__kv_string(w, "error", err ? outfile__strerror(err) : NULL);
	e |= json__kv_string(w, "errno", err ? strerrorname_np(-err) : NULL);
	e |= json__end_object(w);
	return e;
}

int outputs__json(const struct outputs *outs, const char *json_option, const char *json_path,
		  struct json *w)
{
	unsigned i;
	int e = json__key(w, "outputs");

	e |= json__begin_array(w);
	for (i = 0; outs && i < outs->n; i++)
		e |= one(w, outs->r[i].option, outs->r[i].path, outs->r[i].err);
	e |= one(w, json_option, json_path, 0);
	e |= json__end_array(w);
	return e ? -EIO : 0;
}

int outputs__note(struct outputs *outs, const char *option, const char *path, int err)
{
	if (!outs)
		return err;
	if (outs->n < OUTPUTS_MAX)
		outs->r[outs->n++] = (struct output_result){option, path, err};
	return err;
}

int outputs__failed(const struct outputs *outs)
{
	unsigned i;

	for (i = 0; outs && i < outs->n; i++)
		if (outs->r[i].err)
			return outs->r[i].err;
	return 0;
}
