// SPDX-License-Identifier: BSD-2-Clause
/* Every site of a process-filtered multi-uprobe, by file (sites.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hmap.h"
#include "common/vec.h"
#include "user/probe/probe_sites.h"

struct site_file {
	char *path;
	dev_t dev;
	ino_t ino;
	struct hmap offs; /* offset -> 1 */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct site_file *files;
static size_t nfiles, cap;
static void (*listener)(void *ctx, const char *path, const uint64_t *offs, size_t n);
static void *listener_ctx;

void probe_sites__on_add(void (*fn)(void *ctx, const char *path, const uint64_t *offs, size_t n),
			 void *ctx)
{
	pthread_mutex_lock(&mu);
	listener = fn;
	listener_ctx = ctx;
	pthread_mutex_unlock(&mu);
}

int probe_sites__add(const char *path, const uint64_t *offs, size_t n)
{
	void (*fn)(void *ctx, const char *path, const uint64_t *offs, size_t n);
	struct site_file *f = NULL, *nf;
	void *ctx;
	struct stat sb;
	uint64_t *v;
	size_t i;
	int err = 0;

	if (stat(path, &sb))
		return -errno;
	pthread_mutex_lock(&mu);
	for (i = 0; i < nfiles && !f; i++)
		if (files[i].dev == sb.st_dev && files[i].ino == sb.st_ino)
			f = &files[i];
	if (!f) {
		nf = vec__grow(files, &cap, nfiles + 1, sizeof(*nf), 8);
		if (!nf) {
			err = -ENOMEM;
			goto cleanup;
		}
		files = nf;
		f = &files[nfiles];
		memset(f, 0, sizeof(*f));
		f->path = strdup(path);
		if (!f->path) {
			err = -ENOMEM;
			goto cleanup;
		}
		f->dev = sb.st_dev;
		f->ino = sb.st_ino;
		hmap__init(&f->offs);
		nfiles++;
	}
	for (i = 0; i < n && !err; i++)
		if (!(err = hmap__upsert(&f->offs, offs[i], &v)))
			*v = 1;
cleanup:
	fn = listener;
	ctx = listener_ctx;
	pthread_mutex_unlock(&mu);
	if (!err && fn)
		fn(ctx, path, offs, n);
	return err;
}

void probe_sites__each(void (*fn)(void *ctx, const char *path, dev_t dev, ino_t ino,
				  const uint64_t *offs, size_t n),
		       void *ctx)
{
	uint64_t *offs = NULL;
	size_t i, k, it;
	struct hmap_ent *e;

	pthread_mutex_lock(&mu);
	for (i = 0; i < nfiles; i++) {
		uint64_t *no = realloc(offs, (hmap__len(&files[i].offs) + 1) * sizeof(*no));

		if (!no)
			break;
		offs = no;
		for (k = 0, it = 0; hmap__next(&files[i].offs, &it, &e);)
			offs[k++] = e->key;
		fn(ctx, files[i].path, files[i].dev, files[i].ino, offs, k);
	}
	pthread_mutex_unlock(&mu);
	free(offs);
}

void probe_sites__reset(void)
{
	size_t i;

	pthread_mutex_lock(&mu);
	for (i = 0; i < nfiles; i++) {
		free(files[i].path);
		hmap__fini(&files[i].offs);
	}
	free(files);
	files = NULL;
	nfiles = cap = 0;
	pthread_mutex_unlock(&mu);
}
