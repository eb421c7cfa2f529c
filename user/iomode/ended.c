// SPDX-License-Identifier: BSD-2-Clause
/*
 * --io's ended processes (iostat_int.h): the last counts of each, sent
 * whole by the kernel through the ring "iodone"; a pid the kernel reused
 * for another process; and, past o.keep of them kept one by one, the least
 * busy folded into their command's row.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "common/syscalls.h"
#include "user/proc/procfs.h"
#include "user/iomode/iostat_int.h"

/* pid's figures are all retired (it ended), or it is alive again (a pid
 * reused). */
void ended__mark(struct iostat *s, uint32_t pid, bool dead)
{
	uint64_t *v;

	if (hmap__upsert(&s->dead, pid, &v))
		return;
	if (dead && !(*v & 1)) {
		*v = 2 * s->round + 1;
		s->ndead++;
	} else if (!dead && (*v & 1)) {
		*v = 2;
		s->ndead--;
	}
}

/* A new process under pid (the kernel reuses pids: 32768 of them by
 * default): its figures get rows of their own from now on. */
void ended__new_process(struct iostat *s, uint32_t pid)
{
	uint64_t *g;

	if (!hmap__upsert(&s->gen, pid, &g))
		(*g)++;
	g = hmap__find(&s->starts, pid);
	if (g)
		*g = 0;
}

/* The start the ended process under pid was told by (0: none). */
static uint64_t told_start(struct iostat *s, uint32_t pid)
{
	uint64_t *v = hmap__find(&s->starts, pid);

	return v ? *v : 0;
}

bool ended__still_ending(struct iostat *s, uint32_t pid, uint64_t dv)
{
	uint64_t told = told_start(s, pid);
	long hz = sysconf(_SC_CLK_TCK);
	long long now;

	if (!told || hz <= 0 || 1000000000 % hz)
		return (dv >> 1) + 1 >= s->round;
	now = procfs__start_ticks((pid_t)pid);
	/* Gone between the two reads: it was the one ending. */
	return now < 0 || (uint64_t)now == told / (uint64_t)(1000000000 / hz);
}

/* Which process under pid is the current one (0: the first seen). */
static uint32_t gen_of(struct iostat *s, uint32_t pid)
{
	uint64_t *g = hmap__find(&s->gen, pid);

	return g ? (uint32_t)*g : 0;
}

/* The entry of kernel key k for the current process under k->pid; NULL
 * when out of memory. An entry of an earlier process under that pid is set
 * aside: its key's pad becomes nonzero, so no kernel key finds it again,
 * and it stays its own rows. */
struct sent *ended__entry(struct iostat *s, const struct cabbpf_iostat_key *k)
{
	uint32_t g = gen_of(s, k->pid);
	struct sent *e = ptab__get(&s->stats, k, sizeof(*k), sizeof(*e), true);

	if (e && e->set && e->gen != g) {
		s->asides = (uint16_t)(s->asides % 0xfffe + 1);
		e->k.pad = s->asides;
		e = ptab__get(&s->stats, k, sizeof(*k), sizeof(*e), true);
	}
	if (e && !e->set) {
		e->gen = g;
		e->set = true;
	}
	return e;
}

struct fent *ended__file_entry(struct iostat *s, const struct cabbpf_iofile_key *k)
{
	uint32_t g = gen_of(s, k->pid);
	struct fent *e = ptab__get(&s->files, k, sizeof(*k), sizeof(*e), true);

	if (e && e->set && e->gen != g) {
		/* A kernel fd is never negative: no kernel key finds it again. */
		s->fasides = s->fasides % (uint32_t)INT32_MAX + 1;
		e->k.fd = -(int32_t)s->fasides;
		e = ptab__get(&s->files, k, sizeof(*k), sizeof(*e), true);
	}
	if (e && !e->set) {
		e->gen = g;
		e->fd = k->fd;
		e->set = true;
	}
	return e;
}

/* One slot of an ended process (ring "iodone"), or of a live one whose
 * map key the kernel could not create (CABBPF_IODONE_LIVE): straight into
 * its retired figures, as a collection retires a dead process's keys. Its
 * files keep the kernel's dentry name (an ended process has no fd in /proc
 * to resolve). Returns 0 (libbpf's callback contract: go on). */
static struct sent *fold_row(struct iostat *s, const char *comm,
			     const struct cabbpf_iostat_key *k);

int ended__on_record(void *ctx, void *data, size_t size)
{
	const struct cabbpf_iodone *d = data;
	struct iostat *s = ctx;
	struct cabbpf_iostat_key k;
	struct cabbpf_iostat_val v;
	struct cabbpf_iofile_key fk;
	struct cabbpf_iofile_val fv;
	bool live = d->flags & CABBPF_IODONE_LIVE;
	struct sent *e;
	struct fent *f;
	uint64_t *dv, *sv, told;
	uint32_t ok;
	unsigned b;

	if (size < sizeof(*d))
		return 0;
	memset(&k, 0, sizeof(k));
	k.pid = d->pid;
	k.sc = d->sc;
	k.fdkind = d->fdkind;
	k.cgid = d->cgid;
	memset(&v, 0, sizeof(v));
	v.calls = d->calls;
	v.errors = d->errors;
	v.bytes = d->bytes;
	v.req = d->req;
	v.short_calls = d->short_calls;
	for (b = 0; b < CABBPF_HIST_BUCKETS; b++) {
		v.hist_req[b] = d->hist_req[b];
		v.hist_ret[b] = d->hist_ret[b];
	}
	memcpy(v.comm, d->comm, sizeof(v.comm));
	/* A late record of a process already folded into its command's row
	 * (the rest of an exit's records, read rounds after the first ones):
	 * into that row, the process not counted again (a 41st of 40 seen
	 * under emulation). Its file detail went with the fold. */
	sv = hmap__find(&s->folded, d->pid);
	if (sv && d->start_ns && *sv == d->start_ns) {
		struct sent *r = fold_row(s, v.comm, &k);

		if (r)
			iostat__add_stat(&r->base, &v);
		else
			log_warn("--io: out of memory: a process's figures are incomplete");
		return 0;
	}
	/* Records of another process than the one that ended under this pid:
	 * by their starts when both are known; else by time, since the
	 * records of one exit are written within microseconds (a drain can
	 * fall between two of them: the next round still takes the rest for
	 * the same process), so two rounds (100 ms) later it is another. */
	dv = hmap__find(&s->dead, d->pid);
	told = told_start(s, d->pid);
	if (dv && (*dv & 1) &&
	    (told && d->start_ns ? told != d->start_ns : (*dv >> 1) + 1 < s->round)) {
		ended__new_process(s, d->pid);
		ended__mark(s, d->pid, false);
	}
	e = ended__entry(s, &k);
	if (!e) {
		log_warn("--io: out of memory: a process's figures are incomplete");
		return 0;
	}
	/* A live process's slot (its key refused) joins its retired figures:
	 * the kernel's key never holds these calls. */
	iostat__add_stat(&e->base, &v);
	iostat__cg_path(s, k.cgid);
	if (!live) {
		ended__mark(s, d->pid, true);
		if (d->start_ns && !hmap__upsert(&s->starts, d->pid, &sv))
			*sv = d->start_ns;
	}
	ok = d->calls - d->errors;
	if (d->fd < 0 || !ok)
		return 0;
	memset(&fk, 0, sizeof(fk));
	fk.pid = d->pid;
	fk.fd = d->fd;
	fk.ino = d->ino;
	memset(&fv, 0, sizeof(fv));
	if (CABBPF_SC_IS_OUTPUT(d->sc)) {
		fv.out_bytes = d->bytes;
		fv.out_calls = ok;
	} else {
		fv.in_bytes = d->bytes;
		fv.in_calls = ok;
	}
	fv.dev = d->dev;
	fv.cgid = d->cgid;
	fv.fdkind = d->fdkind;
	memcpy(fv.name, d->name, sizeof(fv.name));
	f = ended__file_entry(s, &fk);
	if (f)
		iostat__add_file(&f->base, &fv);
	return 0;
}

static bool to_fold(struct iostat *s, uint32_t pid)
{
	uint64_t *v = hmap__find(&s->folding, pid);

	return v && *v;
}

static bool keep_stat(void *s, const void *e)
{
	return !to_fold(s, ((const struct sent *)e)->k.pid);
}

static bool keep_file(void *s, const void *e)
{
	return !to_fold(s, ((const struct fent *)e)->k.pid);
}

struct pidbytes {
	uint32_t pid;
	uint64_t bytes;
};

static int cmp_pidbytes(const void *a, const void *b)
{
	const struct pidbytes *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The row of command comm's folded processes in (sc, fdkind, cgid): a
 * stats entry, created zeroed. NULL when out of memory. */
static struct sent *fold_row(struct iostat *s, const char *comm, const struct cabbpf_iostat_key *k)
{
	struct cabbpf_iostat_key fk = *k;
	char name[16] = {0};
	struct cmd *c;

	/* Bytes after the NUL are not always zero (the kernel's copies):
	 * keys compare whole. */
	memcpy(name, comm, strnlen(comm, sizeof(name) - 1));
	c = ptab__get(&s->cmds, name, sizeof(name), sizeof(*c), true);
	if (!c)
		return NULL;
	if (!c->id)
		c->id = FOLD_PID | (uint32_t)(s->cmds.n - 1);
	fk.pid = c->id;
	return ptab__get(&s->stats, &fk, sizeof(fk), sizeof(struct sent), true);
}

/*
 * More than o.keep ended processes kept one by one: the half of them with
 * the least I/O become part of their command's row (pid FOLD_PID | index),
 * and their files go (counted). Totals, cgroups, containers and commands
 * keep every call; only the per-process and per-file detail of the
 * smallest goes. Without it a machine starting ~1,800 processes a second
 * grew cabbpf by ~7 KB each (1 GB in 10 minutes) and a 10 s report
 * reached 70 MB of JSON.
 */
static void fold(struct iostat *s)
{
	struct hmap bytes;
	struct pidbytes *pb = NULL;
	struct hmap_ent *he;
	void **gone = NULL;
	struct hmap counted; /* gen << 32 | pid of the processes folded */
	size_t i, n = 0, nfold, ngone = 0, it = 0, procs = 0;
	bool oom = false;

	memset(&bytes, 0, sizeof(bytes));
	memset(&counted, 0, sizeof(counted));
	/* Bytes of each ended pid whose figures are all retired (+1); a pid
	 * with figures still in the kernel (cur) is not folded yet. */
	for (i = 0; i < s->stats.n; i++) {
		const struct sent *e = s->stats.v[i];
		uint64_t *d = hmap__find(&s->dead, e->k.pid), *b;

		/* Ended before the last walk of the kernel maps only: one that
		 * ended since (its ring records read by a drain) may still have
		 * keys there, which the next walk would make rows again. */
		if (e->k.pid & FOLD_PID || !d || !(*d & 1) || (*d >> 1) > s->walked ||
		    hmap__upsert(&bytes, e->k.pid, &b))
			continue;
		if (e->cur.calls)
			*b = UINT64_MAX;
		else if (*b != UINT64_MAX)
			*b += e->base.bytes + (*b ? 0 : 1);
	}
	pb = malloc((hmap__len(&bytes) + 1) * sizeof(*pb));
	if (!pb)
		goto cleanup;
	while (hmap__next(&bytes, &it, &he))
		if (he->val != UINT64_MAX)
			pb[n++] = (struct pidbytes){(uint32_t)he->key, he->val};
	qsort(pb, n, sizeof(*pb), cmp_pidbytes);
	nfold = n / 2;
	hmap__fini(&s->folding);
	for (i = 0; i < nfold; i++) {
		uint64_t *v, start = told_start(s, pb[i].pid);

		if (hmap__upsert(&s->folding, pb[i].pid, &v))
			goto cleanup;
		*v = 1;
		/* its records may not all be in: an exit's, written across a
		 * drain, can come rounds later under emulation */
		if (start && !hmap__upsert(&s->folded, pb[i].pid, &v))
			*v = start;
	}
	if (!nfold ||
	    ptab__split(&s->stats, sizeof(struct cabbpf_iostat_key), keep_stat, s, &gone, &ngone))
		goto cleanup;
	for (i = 0; i < ngone; i++) {
		struct sent *e = gone[i], *r;
		struct cabbpf_iostat_val t;
		uint64_t *v;

		iostat__stat_total(e, &t);
		r = fold_row(s, t.comm, &e->k);
		if (!r) {
			oom = true;
		} else {
			iostat__add_stat(&r->base, &t);
			/* A process (pid and which one under it) counts once,
			 * under its first row's command. */
			if (!hmap__upsert(&counted, (uint64_t)e->gen << 32 | e->k.pid, &v) && !*v) {
				*v = 1;
				((struct cmd *)s->cmds.v[r->k.pid & ~FOLD_PID])->folded++;
				procs++;
			}
		}
		free(e);
	}
	free(gone);
	gone = NULL;
	s->procs_folded += procs;
	if (!ptab__split(&s->files, sizeof(struct cabbpf_iofile_key), keep_file, s, &gone,
			 &ngone)) {
		for (i = 0; i < ngone; i++) {
			iostat__fent_fini(gone[i]);
			free(gone[i]);
		}
		s->files_folded += ngone;
	}
	/* The folded pids leave the ended set. */
	{
		struct hmap nd;

		memset(&nd, 0, sizeof(nd));
		it = 0;
		while (hmap__next(&s->dead, &it, &he)) {
			uint64_t *v;

			if (to_fold(s, (uint32_t)he->key))
				continue;
			if (hmap__upsert(&nd, he->key, &v)) {
				hmap__fini(&nd);
				goto cleanup; /* the old set stays: folded pids have no rows */
			}
			*v = he->val;
		}
		hmap__fini(&s->dead);
		s->dead = nd;
		s->ndead = 0;
		it = 0;
		while (hmap__next(&s->dead, &it, &he))
			s->ndead += he->val & 1;
	}
	if (oom)
		log_warn("--io: out of memory: some ended processes' figures are missing");
	log_debug("--io: %zu ended processes with the least I/O folded into their commands' "
		  "rows (%" PRIu64 " in all)",
		  procs, s->procs_folded);
cleanup:
	hmap__fini(&s->folding);
	hmap__fini(&counted);
	hmap__fini(&bytes);
	free(pb);
	free(gone);
}

void ended__fold_if_over(struct iostat *s)
{
	if (s->ndead > s->o.keep)
		fold(s);
}
