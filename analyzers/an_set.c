// SPDX-License-Identifier: BSD-2-Clause
/* A set of analyzer instances, the one thing a runner worker feeds: each
 * event fanned out to every analyzer that takes its kind (analyzer.h). */
#include <errno.h>
#include <string.h>

#include "analyzers/analyzer.h"

int an_set__init(struct an_set *s, const struct analyzer_ops *const *ops, unsigned n,
		 const struct an_ctx *ctx)
{
	unsigned i;
	int err = 0;

	memset(s, 0, sizeof(*s));
	if (n > AN_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		s->ops[i] = ops[i];
		err = ops[i]->init(ctx, &s->state[i]);
		if (err)
			goto cleanup;
		s->n = i + 1;
	}
	return 0;
cleanup:
	an_set__fini(s);
	return err;
}

void an_set__fini(struct an_set *s)
{
	unsigned i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		s->ops[i]->free(s->state[i]);
	memset(s, 0, sizeof(*s));
}

void an_set__on_call(void *set, const struct an_call *c)
{
	struct an_set *s = set;
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (s->ops[i]->on_call) /* NULL: an analyzer of I/O only */
			s->ops[i]->on_call(s->state[i], c);
}

void an_set__on_return(void *set, const struct an_return *r)
{
	struct an_set *s = set;
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (s->ops[i]->on_return)
			s->ops[i]->on_return(s->state[i], r);
}

void an_set__on_io(struct an_set *s, const struct an_io *io)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (s->ops[i]->on_io)
			s->ops[i]->on_io(s->state[i], io);
}

void *an_set__state(const struct an_set *s, const char *name)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->ops[i]->name, name))
			return s->state[i];
	return NULL;
}
