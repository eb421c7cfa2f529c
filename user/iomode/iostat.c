// SPDX-License-Identifier: BSD-2-Clause
/* The model is described in iostat.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/hmap.h"
#include "common/json.h"
#include "common/outfile.h"
#include "common/vec.h"
#include "user/proc/container.h"
#include "common/syscalls.h"
#include "user/iomode/iotrace.h"
#include "user/iomode/iostat.h"
#include "user/proc/procfs.h"
#include "common/log.h"

#define DEFAULT_TOP 20
/* __u64 is unsigned long long, uint64_t unsigned long: print through this. */
#define U(x) ((uint64_t)(x))
#define JSON_MAX_FILES 1000
#define JSON_MAX_PROCS 1000
#define H_STR2(x) #x
#define H_STR(x) H_STR2(x)

/* One key of "iostats": the kernel's latest cumulative value (cur) plus
 * what was retired when its process exited (base). */
struct sent {
	struct cabbpf_iostat_key k; /* k.pad: 0, or nonzero once set aside (stat_entry) */
	struct cabbpf_iostat_val cur, base;
	uint32_t gen; /* which process under k.pid (pid reuse): s->gen's then */
	bool set;     /* gen is set */
};

/* One key of "iofiles". */
struct fent {
	struct cabbpf_iofile_key k;
	struct cabbpf_iofile_val cur, base;
	char *name; /* path, socket peer, or NULL when it could not be resolved */
	bool tried; /* resolution attempted (only while the process lived) */
};

/* A pointer table keyed by a 64-bit hash with linear probing on the hash
 * value itself; entries start with their key (klen bytes). Entries are never
 * removed, so probing stays valid. */
struct ptab {
	struct hmap m;
	void **v;
	size_t n, cap;
};

struct iostat {
	struct iostat_opts o;
	struct ptab stats, files;
	struct hmap cgpath; /* cgid -> char * (path) or 1 (unknown) */
	struct hmap prev;   /* pid -> previous interval's in+out bytes */
	struct hmap alive;  /* pid -> 1 dead / 2 alive, per collect */
	size_t vsize_s, vsize_f;
	void *vals;         /* ncpus values of the larger map */
	struct ring_buffer *done; /* "iodone", or NULL */
	uint64_t collects;
	/* Ended processes kept one by one, at most o.keep (fold()). */
	struct hmap dead;    /* pid -> 2 * round + 1 ended (figures all retired) / 2 alive */
	size_t ndead;	     /* pids ended in dead */
	struct hmap gen;     /* pid -> processes seen under it before the current */
	uint64_t round;	     /* drains and collects so far */
	uint64_t walked;     /* round of the last complete walk of the kernel maps */
	uint16_t asides;     /* entries set aside, for their keys' pad */
	struct hmap folding; /* fold(): pid -> 1 to fold */
	struct ptab cmds;    /* struct cmd, by comm: ids of the folded rows */
	uint64_t procs_folded, files_folded;
};

/* Ended processes folded into their command's row: a stats entry whose key
 * has pid FOLD_PID | the command's index in cmds (pids stay below 2^22). */
#define FOLD_PID 0x80000000u
#define DEFAULT_KEEP 10000

struct cmd {
	char comm[16];
	uint32_t id;	 /* FOLD_PID | index */
	uint64_t folded; /* processes folded under it */
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = mix(h ^ b[i]);
	return h;
}

/* Find the entry with key key; create it (esize bytes, zeroed, key copied)
 * when create. Returns NULL if absent or out of memory. */
/* Add entry e (its key: its first klen bytes; not in t yet). Returns 0 or
 * -ENOMEM (t unchanged). */
static int ptab_put(struct ptab *t, void *e, size_t klen)
{
	uint64_t h = hash_bytes(e, klen), *v;
	void **nv;

	while (hmap__find(&t->m, h))
		h++;
	nv = vec__grow(t->v, &t->cap, t->n + 1, sizeof(*nv), 256);
	if (!nv)
		return -ENOMEM;
	t->v = nv;
	if (hmap__upsert(&t->m, h, &v))
		return -ENOMEM;
	*v = (uint64_t)(uintptr_t)e;
	t->v[t->n++] = e;
	return 0;
}

static void *ptab_get(struct ptab *t, const void *key, size_t klen, size_t esize, bool create)
{
	uint64_t h = hash_bytes(key, klen);
	uint64_t *v;
	void *e;

	for (;; h++) {
		v = hmap__find(&t->m, h);
		if (!v)
			break;
		if (!memcmp((void *)(uintptr_t)*v, key, klen))
			return (void *)(uintptr_t)*v;
	}
	if (!create)
		return NULL;
	e = calloc(1, esize);
	if (!e)
		return NULL;
	memcpy(e, key, klen);
	if (ptab_put(t, e, klen)) {
		free(e);
		return NULL;
	}
	return e;
}

/* Split t: the entries keep() says no to go, in order, to *out (an array
 * of *nout the caller frees, with the entries), the others stay. Returns
 * 0, or -ENOMEM with t unchanged. */
static int ptab_split(struct ptab *t, size_t klen, bool (*keep)(struct iostat *s, const void *e),
		      struct iostat *s, void ***out, size_t *nout)
{
	struct ptab nt;
	void **gone = malloc((t->n + 1) * sizeof(*gone));
	size_t i, n = 0;

	memset(&nt, 0, sizeof(nt));
	if (!gone)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		if (!keep(s, t->v[i]))
			gone[n++] = t->v[i];
		else if (ptab_put(&nt, t->v[i], klen)) {
			free(nt.v);
			hmap__fini(&nt.m);
			free(gone);
			return -ENOMEM;
		}
	}
	free(t->v);
	hmap__fini(&t->m);
	*t = nt;
	*out = gone;
	*nout = n;
	return 0;
}

static void ptab_fini(struct ptab *t, void (*fr)(void *))
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (fr)
			fr(t->v[i]);
		free(t->v[i]);
	}
	free(t->v);
	hmap__fini(&t->m);
}

static void fent_fini(void *e)
{
	free(((struct fent *)e)->name);
}

static int on_done(void *ctx, void *data, size_t size);

/* pid's figures are all retired (it ended), or it is alive again (a pid
 * reused). */
static void mark_dead(struct iostat *s, uint32_t pid, bool dead)
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
static void new_process(struct iostat *s, uint32_t pid)
{
	uint64_t *g;

	if (!hmap__upsert(&s->gen, pid, &g))
		(*g)++;
}

/* The entry of kernel key k for the current process under k->pid; NULL
 * when out of memory. An entry of an earlier process under that pid is set
 * aside: its key's pad becomes nonzero, so no kernel key finds it again,
 * and it stays its own rows. */
static struct sent *stat_entry(struct iostat *s, const struct cabbpf_iostat_key *k)
{
	uint64_t *gp = hmap__find(&s->gen, k->pid);
	uint32_t g = gp ? (uint32_t)*gp : 0;
	struct sent *e = ptab_get(&s->stats, k, sizeof(*k), sizeof(*e), true);

	if (e && e->set && e->gen != g) {
		s->asides = (uint16_t)(s->asides % 0xfffe + 1);
		e->k.pad = s->asides;
		e = ptab_get(&s->stats, k, sizeof(*k), sizeof(*e), true);
	}
	if (e && !e->set) {
		e->gen = g;
		e->set = true;
	}
	return e;
}

int iostat__new(const struct iostat_opts *o, struct iostat **out)
{
	struct iostat *s;

	*out = NULL;
	if (!o || !o->ncpus)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	if (!s->o.top)
		s->o.top = DEFAULT_TOP;
	if (!s->o.keep)
		s->o.keep = DEFAULT_KEEP;
	/* Per-CPU values are 8-byte aligned, one per possible CPU. */
	s->vsize_s = (sizeof(struct cabbpf_iostat_val) + 7) & ~(size_t)7;
	s->vsize_f = (sizeof(struct cabbpf_iofile_val) + 7) & ~(size_t)7;
	s->vals = calloc(o->ncpus, s->vsize_s > s->vsize_f ? s->vsize_s : s->vsize_f);
	if (!s->vals) {
		free(s);
		return -ENOMEM;
	}
	if (o->done_fd >= 0) {
		s->done = ring_buffer__new(o->done_fd, on_done, s, NULL);
		if (!s->done) {
			int err = -errno ? -errno : -ENOMEM;

			free(s->vals);
			free(s);
			return err;
		}
	}
	*out = s;
	return 0;
}

void iostat__free(struct iostat *s)
{
	struct hmap_ent *e;
	size_t it = 0;

	if (!s)
		return;
	ptab_fini(&s->stats, NULL);
	ptab_fini(&s->files, fent_fini);
	ptab_fini(&s->cmds, NULL);
	hmap__fini(&s->dead);
	hmap__fini(&s->gen);
	hmap__fini(&s->folding);
	while (hmap__next(&s->cgpath, &it, &e))
		if (e->val > 1)
			free((void *)(uintptr_t)e->val);
	hmap__fini(&s->cgpath);
	hmap__fini(&s->prev);
	hmap__fini(&s->alive);
	ring_buffer__free(s->done);
	free(s->vals);
	free(s);
}

static bool pid_alive(struct iostat *s, uint32_t pid)
{
	uint64_t *v;
	/* A zombie has done all its I/O: gone (its figures retire now, and
	 * it is not taken for a new process under an ended one's pid). */
	bool alive = (kill((pid_t)pid, 0) == 0 || errno == EPERM) && !procfs__gone((pid_t)pid);

	if (hmap__upsert(&s->alive, pid, &v))
		return alive;
	if (!*v)
		*v = alive ? 2 : 1;
	return *v == 2;
}

static void add_stat(struct cabbpf_iostat_val *d, const struct cabbpf_iostat_val *v)
{
	unsigned b;

	d->calls += v->calls;
	d->errors += v->errors;
	d->bytes += v->bytes;
	d->req += v->req;
	d->short_calls += v->short_calls;
	for (b = 0; b < CABBPF_HIST_BUCKETS; b++) {
		d->hist_req[b] += v->hist_req[b];
		d->hist_ret[b] += v->hist_ret[b];
	}
	if (!d->comm[0] && v->comm[0])
		memcpy(d->comm, v->comm, sizeof(d->comm));
}

static void add_file(struct cabbpf_iofile_val *d, const struct cabbpf_iofile_val *v)
{
	d->in_bytes += v->in_bytes;
	d->out_bytes += v->out_bytes;
	d->in_calls += v->in_calls;
	d->out_calls += v->out_calls;
	if (v->in_calls || v->out_calls) {
		d->dev = v->dev;
		d->cgid = v->cgid;
		d->fdkind = v->fdkind;
	}
	if (!d->name[0] && v->name[0])
		memcpy(d->name, v->name, sizeof(d->name));
}

static void stat_total(const struct sent *e, struct cabbpf_iostat_val *t)
{
	memset(t, 0, sizeof(*t));
	add_stat(t, &e->base);
	add_stat(t, &e->cur);
}

static void file_total(const struct fent *e, struct cabbpf_iofile_val *t)
{
	memset(t, 0, sizeof(*t));
	add_file(t, &e->base);
	add_file(t, &e->cur);
}

static const char *cg_path(struct iostat *s, uint64_t cgid);

/* One slot of an ended process (ring "iodone"): straight into its
 * retired figures, as a collection retires a dead process's keys. Its
 * files keep the kernel's dentry name: the process is gone, /proc has no
 * fd to resolve. Returns 0 (libbpf's callback contract: go on). */
static int on_done(void *ctx, void *data, size_t size)
{
	const struct cabbpf_iodone *d = data;
	struct iostat *s = ctx;
	struct cabbpf_iostat_key k;
	struct cabbpf_iostat_val v;
	struct cabbpf_iofile_key fk;
	struct cabbpf_iofile_val fv;
	struct sent *e;
	struct fent *f;
	uint64_t *dv;
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
	/* Ended two rounds (100 ms) before already: this is another process
	 * under the same pid. The records of one exit are written within
	 * microseconds, but a drain can fall between two of them: the next
	 * round still takes the rest for the same process. */
	dv = hmap__find(&s->dead, d->pid);
	if (dv && (*dv & 1) && (*dv >> 1) + 1 < s->round) {
		new_process(s, d->pid);
		*dv = 2 * s->round + 1;
		s->ndead++;
	}
	e = stat_entry(s, &k);
	if (!e) {
		log_warn("--io: out of memory: a process's figures are incomplete");
		return 0;
	}
	add_stat(&e->base, &v);
	cg_path(s, k.cgid);
	mark_dead(s, d->pid, true);
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
	f = ptab_get(&s->files, &fk, sizeof(fk), sizeof(*f), true);
	if (f)
		add_file(&f->base, &fv);
	return 0;
}

static bool to_fold(struct iostat *s, uint32_t pid)
{
	uint64_t *v = hmap__find(&s->folding, pid);

	return v && *v;
}

static bool keep_stat(struct iostat *s, const void *e)
{
	return !to_fold(s, ((const struct sent *)e)->k.pid);
}

static bool keep_file(struct iostat *s, const void *e)
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
	c = ptab_get(&s->cmds, name, sizeof(name), sizeof(*c), true);
	if (!c)
		return NULL;
	if (!c->id)
		c->id = FOLD_PID | (uint32_t)(s->cmds.n - 1);
	fk.pid = c->id;
	return ptab_get(&s->stats, &fk, sizeof(fk), sizeof(struct sent), true);
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
		uint64_t *v;

		if (hmap__upsert(&s->folding, pb[i].pid, &v))
			goto cleanup;
		*v = 1;
	}
	if (!nfold ||
	    ptab_split(&s->stats, sizeof(struct cabbpf_iostat_key), keep_stat, s, &gone, &ngone))
		goto cleanup;
	for (i = 0; i < ngone; i++) {
		struct sent *e = gone[i], *r;
		struct cabbpf_iostat_val t;
		uint64_t *v;

		stat_total(e, &t);
		r = fold_row(s, t.comm, &e->k);
		if (!r) {
			oom = true;
		} else {
			add_stat(&r->base, &t);
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
	if (!ptab_split(&s->files, sizeof(struct cabbpf_iofile_key), keep_file, s, &gone, &ngone)) {
		for (i = 0; i < ngone; i++) {
			fent_fini(gone[i]);
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

int iostat__drain(struct iostat *s)
{
	int n = 0;

	s->round++;
	if (s->done)
		n = ring_buffer__consume(s->done);
	if (s->ndead > s->o.keep)
		fold(s);
	return n < 0 ? n : 0;
}

/* "1.2.3.4:80" from /proc/net/tcp's little-endian hex words. */
static void fmt_addr(const char *hex, unsigned port, char *out, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (strlen(hex) == 8) {
		struct in_addr a;

		a.s_addr = (uint32_t)strtoul(hex, NULL, 16);
		inet_ntop(AF_INET, &a, ip, sizeof(ip));
		snprintf(out, len, "%s:%u", ip, port);
	} else if (strlen(hex) == 32) {
		struct in6_addr a;
		uint32_t w[4];
		char part[9];
		int i;

		for (i = 0; i < 4; i++) {
			memcpy(part, hex + 8 * i, 8);
			part[8] = 0;
			w[i] = (uint32_t)strtoul(part, NULL, 16);
		}
		memcpy(&a, w, sizeof(a));
		inet_ntop(AF_INET6, &a, ip, sizeof(ip));
		snprintf(out, len, "[%s]:%u", ip, port);
	} else {
		snprintf(out, len, "?");
	}
}

/* Describe socket inode ino of pid: "tcp 10.0.0.1:5000 -> 10.0.0.2:80",
 * "unix /run/x.sock", or NULL when not found. Caller frees. */
static char *sock_peer(uint32_t pid, uint64_t ino)
{
	static const char *const inet[] = {"tcp", "tcp6", "udp", "udp6"};
	char path[64], line[512], res[256];
	unsigned i;

	for (i = 0; i < 4; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%u/net/%s", pid, inet[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char lh[33], rh[33], la[80], ra[80];
			unsigned lp, rp;
			unsigned long inode;

			if (sscanf(line, " %*u: %32[0-9A-Fa-f]:%x %32[0-9A-Fa-f]:%x %*x %*s %*s %*s %*u %*u %lu",
				   lh, &lp, rh, &rp, &inode) != 5 || inode != ino)
				continue;
			fmt_addr(lh, lp, la, sizeof(la));
			fmt_addr(rh, rp, ra, sizeof(ra));
			snprintf(res, sizeof(res), "%s %s -> %s", inet[i], la, ra);
			fclose(f);
			return strdup(res);
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%u/net/unix", pid);
	{
		FILE *f = fopen(path, "r");

		if (!f)
			return NULL;
		while (fgets(line, sizeof(line), f)) {
			char sp[200] = "";
			unsigned long inode;
			int n = sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %199s", &inode, sp);

			if (n < 1 || inode != ino)
				continue;
			snprintf(res, sizeof(res), "unix %s", n == 2 ? sp : "(unnamed)");
			fclose(f);
			return strdup(res);
		}
		fclose(f);
	}
	return NULL;
}

/* Path or socket peer behind (pid, fd) if it is still the same inode. The
 * link's text is the path inside the process's own mount namespace (a
 * container's view). */
static char *resolve_fd(const struct cabbpf_iofile_key *k, unsigned kind)
{
	char path[64], link[PATH_MAX];
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", k->pid, k->fd);
	if (stat(path, &st) || (uint64_t)st.st_ino != k->ino)
		return NULL;
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return NULL;
	link[n] = 0;
	if (kind == CABBPF_FD_SOCKET) {
		char *peer = sock_peer(k->pid, k->ino);

		if (peer)
			return peer;
	}
	return strdup(link);
}

/* Walk one map: key buffer kb of ksize bytes. fn is called with each key
 * and its ncpus values; it returns true to delete the key afterwards. */
static int walk_map(struct iostat *s, int fd, size_t ksize, size_t vsize,
		    bool (*fn)(struct iostat *s, const void *key, const void *vals, size_t vsize))
{
	unsigned char key[32], next[32];
	unsigned char *del = NULL;
	size_t ndel = 0, cdel = 0, i;
	bool first = true;
	int err = 0;

	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, ksize);
		if (bpf_map_lookup_elem(fd, key, s->vals))
			continue; /* deleted meanwhile */
		if (fn(s, key, s->vals, vsize)) {
			if (ndel == cdel) {
				size_t nc = cdel ? cdel * 2 : 64;
				unsigned char *nd = realloc(del, nc * ksize);

				if (!nd) {
					err = -ENOMEM;
					break;
				}
				del = nd;
				cdel = nc;
			}
			memcpy(del + ndel * ksize, key, ksize);
			ndel++;
		}
	}
	/* After the walk: deleting the current key would restart it. */
	for (i = 0; i < ndel; i++)
		bpf_map_delete_elem(fd, del + i * ksize);
	free(del);
	return err;
}

static bool on_stat(struct iostat *s, const void *key, const void *vals, size_t vsize)
{
	const struct cabbpf_iostat_key *k = key;
	struct cabbpf_iostat_val sum;
	struct sent *e;
	unsigned c;

	uint64_t *dv = hmap__find(&s->dead, k->pid);
	bool alive = pid_alive(s, k->pid);

	/* Ended, and now alive: another process under the same pid. */
	if (alive && dv && (*dv & 1))
		new_process(s, k->pid);
	memset(&sum, 0, sizeof(sum));
	for (c = 0; c < s->o.ncpus; c++)
		add_stat(&sum, (const void *)((const char *)vals + c * vsize));
	e = stat_entry(s, k);
	if (!e) {
		log_warn("--io: out of memory: a process's figures are incomplete");
		return false;
	}
	e->cur = sum;
	if (!e->base.comm[0])
		memcpy(e->base.comm, sum.comm, sizeof(sum.comm));
	/* Name its cgroup now, while it may still exist (cached). */
	cg_path(s, k->cgid);
	if (alive) {
		mark_dead(s, k->pid, false);
		return false;
	}
	/* Exited: keep its figures here, free its kernel key. */
	add_stat(&e->base, &e->cur);
	memset(&e->cur, 0, sizeof(e->cur));
	mark_dead(s, k->pid, true);
	return true;
}

static bool on_file(struct iostat *s, const void *key, const void *vals, size_t vsize)
{
	const struct cabbpf_iofile_key *k = key;
	struct cabbpf_iofile_val sum;
	struct fent *e;
	unsigned c;
	bool alive;

	memset(&sum, 0, sizeof(sum));
	for (c = 0; c < s->o.ncpus; c++)
		add_file(&sum, (const void *)((const char *)vals + c * vsize));
	e = ptab_get(&s->files, k, sizeof(*k), sizeof(*e), true);
	if (!e)
		return false;
	e->cur = sum;
	alive = pid_alive(s, k->pid);
	if (alive && !e->tried) {
		e->name = resolve_fd(k, sum.fdkind);
		e->tried = true;
	}
	if (alive)
		return false;
	add_file(&e->base, &e->cur);
	memset(&e->cur, 0, sizeof(e->cur));
	return true;
}

int iostat__collect(struct iostat *s)
{
	int err;

	hmap__fini(&s->alive); /* liveness is per collect */
	err = iostat__drain(s);
	if (!err)
		err = walk_map(s, s->o.stats_fd, sizeof(struct cabbpf_iostat_key), s->vsize_s,
			       on_stat);
	if (!err)
		err = walk_map(s, s->o.files_fd, sizeof(struct cabbpf_iofile_key), s->vsize_f,
			       on_file);
	if (!err)
		s->walked = s->round;
	if (s->ndead > s->o.keep)
		fold(s);
	s->collects++;
	return err;
}

/* ------------------------------------------------------------- views -- */

/* A group of stat keys: a process (pid + cgroup), a cgroup, a container, or
 * everything; per (syscall, fd kind) totals inside. */
struct group {
	uint32_t pid;
	uint64_t cgid;
	char comm[16];
	char container[CONTAINER_ID_LEN + 1];
	const char *runtime;
	/* Sparse: a process uses a few of the 156 (syscall, fd kind) cells,
	 * and a dense table of 1 KiB values took ~170 KiB per group: a 10 s
	 * --io of a machine starting 1,800 processes a second reached 1 GiB. */
	uint8_t at[CABBPF_SC__MAX][CABBPF_FD__MAX]; /* index in cells + 1; 0: none */
	uint8_t ncells;
	struct cabbpf_iostat_val *cells; /* owned */
	uint64_t nproc;			 /* BY_COMMAND: processes (folded ones included) */
	uint64_t in_bytes, out_bytes, in_calls, out_calls, errors, in_short, in_ok;
};

static const struct cabbpf_iostat_val zero_val;

/* Cell (sc, fdkind) of g: its figures, or zeros when it has none. */
static const struct cabbpf_iostat_val *group_sc(const struct group *g, unsigned sc, unsigned k)
{
	return g->at[sc][k] ? &g->cells[g->at[sc][k] - 1] : &zero_val;
}

static void group_add(struct group *g, const struct cabbpf_iostat_key *k,
		      const struct cabbpf_iostat_val *v)
{
	uint8_t *at;

	if (k->sc >= CABBPF_SC__MAX || k->fdkind >= CABBPF_FD__MAX)
		return;
	at = &g->at[k->sc][k->fdkind];
	if (!*at) {
		struct cabbpf_iostat_val *c = realloc(g->cells, (g->ncells + 1u) * sizeof(*c));

		if (!c) {
			log_warn("--io: out of memory: a report's figures are incomplete");
			return;
		}
		g->cells = c;
		memset(&c[g->ncells], 0, sizeof(*c));
		*at = ++g->ncells;
	}
	add_stat(&g->cells[*at - 1], v);
	if (CABBPF_SC_IS_OUTPUT(k->sc)) {
		g->out_bytes += v->bytes;
		g->out_calls += v->calls;
	} else {
		g->in_bytes += v->bytes;
		g->in_calls += v->calls;
		g->in_short += v->short_calls;
		g->in_ok += v->calls - v->errors;
	}
	g->errors += v->errors;
	if (!g->comm[0])
		memcpy(g->comm, v->comm, sizeof(g->comm));
}

/* The cgroup path of cgid (cached), or NULL. */
static const char *cg_path(struct iostat *s, uint64_t cgid)
{
	char buf[PATH_MAX];
	uint64_t *v;

	if (!s->o.cgroot)
		return NULL;
	if (hmap__upsert(&s->cgpath, cgid, &v))
		return NULL;
	if (!*v) {
		*v = 1;
		if (!cgroup__path_of(s->o.cgroot, cgid, buf, sizeof(buf))) {
			char *p = strdup(buf);

			if (p)
				*v = (uint64_t)(uintptr_t)p;
		}
	}
	return *v > 1 ? (const char *)(uintptr_t)*v : NULL;
}

/* The container of cgroup cgid: from its path (NULL once the cgroup is
 * gone), else from the names the kernel noted when its first key was made
 * (a container that ended before the tree could be walked). */
static bool cg_container(struct iostat *s, uint64_t cgid, const char *path,
			 char cid[CONTAINER_ID_LEN + 1], const char **rt)
{
	struct cabbpf_cgname n;
	char p[2 * CABBPF_CGNAME_LEN + 4];

	if (path)
		return container__id_from_path(path, cid, rt);
	if (s->o.cgnames_fd < 0 || bpf_map_lookup_elem(s->o.cgnames_fd, &cgid, &n))
		return false;
	n.leaf[sizeof(n.leaf) - 1] = 0;
	n.parent[sizeof(n.parent) - 1] = 0;
	snprintf(p, sizeof(p), "/%s/%s", n.parent, n.leaf);
	return container__id_from_path(p, cid, rt);
}

enum gby { BY_PROC, BY_CGROUP, BY_CONTAINER, BY_COMMAND };

struct gkey {
	uint32_t pid;
	uint32_t pad; /* BY_PROC: struct sent's gen */
	uint64_t cgid;
	char container[CONTAINER_ID_LEN + 1];
	char comm[16];
};

/* (command, pid, which process under it) seen, to count a command's
 * processes once each. */
struct seen {
	char comm[16];
	uint32_t pid;
	uint32_t pad; /* struct sent's gen */
};

/* Group every stat key by by; returns an array (caller frees each element
 * through free(groups[i]) and the array) of *n groups. */
static struct group **groups(struct iostat *s, enum gby by, size_t *n)
{
	struct ptab t;
	struct group **out = NULL;
	size_t i;

	struct ptab seen;

	memset(&t, 0, sizeof(t));
	memset(&seen, 0, sizeof(seen));
	*n = 0;
	for (i = 0; i < s->stats.n; i++) {
		const struct sent *e = s->stats.v[i];
		bool folded = e->k.pid & FOLD_PID;
		struct cabbpf_iostat_val tot;
		struct gkey gk;
		struct group *g;
		const char *path = NULL, *rt = NULL;
		char cid[CONTAINER_ID_LEN + 1] = "";

		memset(&gk, 0, sizeof(gk));
		stat_total(e, &tot);
		path = cg_path(s, e->k.cgid);
		if (!cg_container(s, e->k.cgid, path, cid, &rt))
			cid[0] = 0;
		if (by == BY_PROC) {
			if (folded)
				continue; /* counted in its command's row only */
			gk.pid = e->k.pid;
			gk.pad = e->gen; /* two processes under one pid: two rows */
			gk.cgid = e->k.cgid;
		} else if (by == BY_CGROUP) {
			gk.cgid = e->k.cgid;
		} else if (by == BY_COMMAND) {
			memcpy(gk.comm, tot.comm, strnlen(tot.comm, sizeof(gk.comm) - 1));
		} else {
			if (!cid[0])
				continue;
			memcpy(gk.container, cid, sizeof(cid));
		}
		/* ptab entries start with their key: the group follows it. */
		g = ptab_get(&t, &gk, sizeof(gk), sizeof(gk) + sizeof(struct group), true);
		if (!g)
			continue;
		g = (struct group *)((char *)g + sizeof(gk));
		g->pid = gk.pid;
		g->cgid = by == BY_CONTAINER ? 0 : gk.cgid;
		memcpy(g->container, cid, sizeof(cid));
		g->runtime = rt;
		group_add(g, &e->k, &tot);
		if (by == BY_COMMAND) {
			struct seen sk;
			struct seen *se;

			/* A folded row stands for its command's folded processes. */
			memset(&sk, 0, sizeof(sk));
			memcpy(sk.comm, gk.comm, sizeof(sk.comm));
			sk.pid = folded ? FOLD_PID : e->k.pid;
			sk.pad = folded ? 0 : e->gen;
			se = ptab_get(&seen, &sk, sizeof(sk), sizeof(sk) + 1, true);
			if (se && !((char *)se)[sizeof(sk)]) {
				((char *)se)[sizeof(sk)] = 1;
				g->nproc += folded ? ((struct cmd *)s->cmds.v[e->k.pid & ~FOLD_PID])
							     ->folded
						   : 1;
			}
		}
	}
	ptab_fini(&seen, NULL);
	out = calloc(t.n + 1, sizeof(*out));
	if (out) {
		for (i = 0; i < t.n; i++) {
			out[i] = (struct group *)((char *)t.v[i] + sizeof(struct gkey));
		}
		*n = t.n;
	}
	/* The entries are now owned through out[]: free only the index. */
	free(t.v);
	hmap__fini(&t.m);
	return out;
}

static void groups_free(struct group **g, size_t n)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < n; i++) {
		free(g[i]->cells);
		free((char *)g[i] - sizeof(struct gkey));
	}
	free(g);
}

/* A group of group_all's; NULL is fine. */
static void group_free(struct group *g)
{
	if (g)
		free(g->cells);
	free(g);
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = *(const struct group *const *)a, *y = *(const struct group *const *)b;

	if (x->in_bytes != y->in_bytes)
		return x->in_bytes > y->in_bytes ? -1 : 1;
	if (x->out_bytes != y->out_bytes)
		return x->out_bytes > y->out_bytes ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->cgid != y->cgid)
		return x->cgid < y->cgid ? -1 : 1;
	return strncmp(x->comm, y->comm, sizeof(x->comm));
}

static int cmp_file(const void *a, const void *b)
{
	struct cabbpf_iofile_val x, y;

	file_total(*(const struct fent *const *)a, &x);
	file_total(*(const struct fent *const *)b, &y);
	if (x.in_bytes != y.in_bytes)
		return x.in_bytes > y.in_bytes ? -1 : 1;
	return x.out_bytes > y.out_bytes ? -1 : x.out_bytes < y.out_bytes;
}

uint64_t iostat__calls(const struct iostat *s)
{
	struct cabbpf_iostat_val t;
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < s->stats.n; i++) {
		stat_total(s->stats.v[i], &t);
		n += t.calls;
	}
	return n;
}

void iostat__print_interval(struct iostat *s, FILE *f, double secs)
{
	struct group **g;
	size_t n = 0, i, shown = 0;
	uint64_t total = 0;

	g = groups(s, BY_PROC, &n);
	if (!g)
		return;
	for (i = 0; i < n; i++) {
		uint64_t *v, now = g[i]->in_bytes + g[i]->out_bytes, d;

		if (hmap__upsert(&s->prev, (uint64_t)g[i]->pid << 32 ^ g[i]->cgid, &v))
			continue;
		d = now - *v;
		*v = now;
		/* Reuse in_short as "bytes this interval" for sorting. */
		g[i]->in_short = d;
		total += d;
	}
	for (i = 0; i < n; i++) /* sort by this interval's bytes */
		g[i]->in_bytes = g[i]->in_short;
	qsort(g, n, sizeof(*g), cmp_group);
	fprintf(f, "--io interval %.1f s: %" PRIu64 " bytes in+out (%.0f B/s)\n", secs, total,
		secs > 0 ? (double)total / secs : 0.0);
	for (i = 0; i < n && shown < 5; i++) {
		if (!g[i]->in_bytes)
			break;
		fprintf(f, "  %7u %-16.16s %12" PRIu64 " bytes\n", g[i]->pid, g[i]->comm,
			g[i]->in_bytes);
		shown++;
	}
	fflush(f);
	groups_free(g, n);
}

/* -------------------------------------------------------------- text -- */

/* The resolved name, else the kernel's last path component, else a note. */
static const char *fent_name(const struct fent *e, const struct cabbpf_iofile_val *t, char *buf,
			     size_t len)
{
	if (e->name)
		return e->name;
	if (t->name[0]) {
		snprintf(buf, len, ".../%.*s (closed; last component only)", (int)sizeof(t->name),
			 t->name);
		return buf;
	}
	return "(closed before it could be named)";
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static void text_groups(struct iostat *s, FILE *f, enum gby by)
{
	struct group **g;
	size_t n = 0, i;

	g = groups(s, by, &n);
	if (!g)
		return;
	qsort(g, n, sizeof(*g), cmp_group);
	if (by == BY_PROC) {
		fprintf(f, "processes by input bytes (%zu):\n", n);
		fprintf(f, "%8s %-16s %12s %9s %12s %9s %6s %7s  CGROUP\n", "PID", "COMMAND",
			"IN_BYTES", "IN_CALLS", "OUT_BYTES", "OUT_CALLS", "SHORT%", "ERRORS");
	} else if (by == BY_CGROUP) {
		fprintf(f, "cgroups by input bytes (%zu):\n", n);
		fprintf(f, "%12s %9s %12s %9s %6s  CGROUP\n", "IN_BYTES", "IN_CALLS", "OUT_BYTES",
			"OUT_CALLS", "SHORT%");
	} else if (by == BY_COMMAND) {
		fprintf(f, "commands by input bytes (%zu):\n", n);
		fprintf(f, "%8s %-16s %12s %9s %12s %9s %6s %7s\n", "PROCS", "COMMAND", "IN_BYTES",
			"IN_CALLS", "OUT_BYTES", "OUT_CALLS", "SHORT%", "ERRORS");
	} else {
		if (!n) {
			groups_free(g, n);
			return;
		}
		fprintf(f, "containers by input bytes (%zu):\n", n);
		fprintf(f, "%12s %9s %12s %9s %6s  %-10s CONTAINER\n", "IN_BYTES", "IN_CALLS",
			"OUT_BYTES", "OUT_CALLS", "SHORT%", "RUNTIME");
	}
	for (i = 0; i < n && i < s->o.top; i++) {
		const struct group *x = g[i];
		const char *cp = cg_path(s, x->cgid);

		if (by == BY_PROC)
			fprintf(f, "%8u %-16.16s %12" PRIu64 " %9" PRIu64 " %12" PRIu64 " %9" PRIu64
				   " %5.1f%% %7" PRIu64 "  %s\n",
				x->pid, x->comm, x->in_bytes, x->in_calls, x->out_bytes, x->out_calls,
				100 * ratio(x->in_short, x->in_ok), x->errors, cp ? cp : "?");
		else if (by == BY_COMMAND)
			fprintf(f,
				"%8" PRIu64 " %-16.16s %12" PRIu64 " %9" PRIu64 " %12" PRIu64
				" %9" PRIu64 " %5.1f%% %7" PRIu64 "\n",
				x->nproc, x->comm, x->in_bytes, x->in_calls, x->out_bytes,
				x->out_calls, 100 * ratio(x->in_short, x->in_ok), x->errors);
		else if (by == BY_CGROUP)
			fprintf(f, "%12" PRIu64 " %9" PRIu64 " %12" PRIu64 " %9" PRIu64
				   " %5.1f%%  %s (id %" PRIu64 ")\n",
				x->in_bytes, x->in_calls, x->out_bytes, x->out_calls,
				100 * ratio(x->in_short, x->in_ok), cp ? cp : "?", x->cgid);
		else
			fprintf(f, "%12" PRIu64 " %9" PRIu64 " %12" PRIu64 " %9" PRIu64
				   " %5.1f%%  %-10s %.12s\n",
				x->in_bytes, x->in_calls, x->out_bytes, x->out_calls,
				100 * ratio(x->in_short, x->in_ok), x->runtime ? x->runtime : "?",
				x->container);
	}
	if (n > s->o.top)
		fprintf(f, "  ... %zu more (the JSON report has %s)\n", n - s->o.top,
			by == BY_PROC && n > JSON_MAX_PROCS ? "the first " H_STR(JSON_MAX_PROCS)
							    : "all");
	if (by == BY_PROC && s->procs_folded)
		fprintf(f,
			"  and %" PRIu64 " ended processes with the least I/O, counted in their "
			"commands' rows only\n",
			s->procs_folded);
	fputc('\n', f);
	groups_free(g, n);
}

/* Everything in one group. */
static struct group *group_all(struct iostat *s)
{
	struct group *g = calloc(1, sizeof(*g));
	struct cabbpf_iostat_val t;
	size_t i;

	if (!g)
		return NULL;
	for (i = 0; i < s->stats.n; i++) {
		const struct sent *e = s->stats.v[i];

		stat_total(e, &t);
		group_add(g, &e->k, &t);
	}
	return g;
}

static void text_hist(FILE *f, const char *what, const __u64 *h)
{
	unsigned b, last = 0;

	for (b = 0; b < CABBPF_HIST_BUCKETS; b++)
		if (h[b])
			last = b;
	fprintf(f, "  %s:", what);
	for (b = 0; b <= last; b++) {
		if (!h[b])
			continue;
		if (b == 0)
			fprintf(f, " [0]=%" PRIu64, U(h[b]));
		else
			fprintf(f, " [%llu,%llu)=%" PRIu64, 1ULL << (b - 1),
				b < 63 ? 1ULL << b : 0ULL, U(h[b]));
	}
	fputc('\n', f);
}

int iostat__report_text(struct iostat *s, FILE *f, const struct iostat_run *r)
{
	struct group *all = group_all(s);
	struct cabbpf_iostat_val in;
	struct fent **fv = NULL;
	unsigned sc, k, b;
	char who[64];
	size_t i;

	if (!all)
		return -ENOMEM;

	if (r->pid)
		snprintf(who, sizeof(who), "pid %d", (int)r->pid);
	else
		snprintf(who, sizeof(who), "every process");
	fprintf(f, "cabbpf --io: %s%s%s%s%s, %.3f s, %" PRIu64 " I/O calls (%.0f/s)\n", who,
		r->cgroup ? " in cgroup " : "", r->cgroup ? r->cgroup : "",
		r->container ? ", container " : "", r->container ? r->container : "", r->duration_s,
		all->in_calls + all->out_calls,
		r->duration_s > 0 ? (double)(all->in_calls + all->out_calls) / r->duration_s : 0);
	fprintf(f, "  input %" PRIu64 " bytes in %" PRIu64 " calls (short reads %.1f%%), output %" PRIu64
		   " bytes in %" PRIu64 " calls\n",
		all->in_bytes, all->in_calls, 100 * ratio(all->in_short, all->in_ok), all->out_bytes,
		all->out_calls);
	if (r->counts[CABBPF_IOSTAT_STATS_FULL] || r->counts[CABBPF_IOSTAT_FILES_FULL])
		fprintf(f, "  WARNING: kernel maps full: %" PRIu64 " calls not counted per process, %" PRIu64
			   " not counted per file\n",
			r->counts[CABBPF_IOSTAT_STATS_FULL], r->counts[CABBPF_IOSTAT_FILES_FULL]);
	if (r->counts[CABBPF_IOSTAT_COMPAT])
		fprintf(f, "  note: %" PRIu64 " calls of 32-bit processes not decoded\n",
			r->counts[CABBPF_IOSTAT_COMPAT]);
	fputc('\n', f);
	text_groups(s, f, BY_PROC);
	text_groups(s, f, BY_COMMAND);
	text_groups(s, f, BY_CGROUP);
	text_groups(s, f, BY_CONTAINER);

	fprintf(f, "by system call and fd kind:\n");
	fprintf(f, "%16s %-9s %10s %12s %12s %8s %8s\n", "SYSCALL", "FD_KIND", "CALLS", "BYTES",
		"REQUESTED", "SHORT", "ERRORS");
	memset(&in, 0, sizeof(in));
	for (sc = 0; sc < CABBPF_SC__MAX; sc++)
		for (k = 0; k < CABBPF_FD__MAX; k++) {
			const struct cabbpf_iostat_val *v = group_sc(all, sc, k);

			if (!v->calls)
				continue;
			fprintf(f, "%16s %-9s %10" PRIu64 " %12" PRIu64 " %12" PRIu64 " %8" PRIu64
				   " %8" PRIu64 "\n",
				syscalls__label(sc), syscalls__fdkind_name(k), U(v->calls), U(v->bytes),
				U(v->req), U(v->short_calls), U(v->errors));
			if (!CABBPF_SC_IS_OUTPUT(sc))
				for (b = 0; b < CABBPF_HIST_BUCKETS; b++) {
					in.hist_req[b] += v->hist_req[b];
					in.hist_ret[b] += v->hist_ret[b];
				}
		}
	fprintf(f, "\ninput sizes, log2 buckets [lo,hi) bytes: calls\n");
	text_hist(f, "requested", in.hist_req);
	text_hist(f, "returned ", in.hist_ret);

	fv = malloc((s->files.n + 1) * sizeof(*fv));
	if (fv) {
		for (i = 0; i < s->files.n; i++)
			fv[i] = s->files.v[i];
		qsort(fv, s->files.n, sizeof(*fv), cmp_file);
		fprintf(f, "\ntop files and sockets by input bytes:\n");
		fprintf(f, "%8s %5s %-7s %12s %9s %12s %9s  NAME\n", "PID", "FD", "KIND", "IN_BYTES",
			"IN_CALLS", "OUT_BYTES", "OUT_CALLS");
		for (i = 0; i < s->files.n && i < s->o.top; i++) {
			struct cabbpf_iofile_val t;
			char nbuf[96];

			file_total(fv[i], &t);
			fprintf(f, "%8u %5d %-7s %12" PRIu64 " %9" PRIu64 " %12" PRIu64 " %9" PRIu64
				   "  %s\n",
				fv[i]->k.pid, fv[i]->k.fd, syscalls__fdkind_name(t.fdkind), U(t.in_bytes),
				U(t.in_calls), U(t.out_bytes), U(t.out_calls),
				fent_name(fv[i], &t, nbuf, sizeof(nbuf)));
		}
		free(fv);
	}
	group_free(all);
	return ferror(f) ? -EIO : 0;
}

/* -------------------------------------------------------------- JSON -- */

static void json_totals(struct json *w, const struct group *g)
{
	json__key(w, "in_bytes");
	json__u64(w, g->in_bytes);
	json__key(w, "in_calls");
	json__u64(w, g->in_calls);
	json__key(w, "out_bytes");
	json__u64(w, g->out_bytes);
	json__key(w, "out_calls");
	json__u64(w, g->out_calls);
	json__key(w, "errors");
	json__u64(w, g->errors);
	json__key(w, "short_reads");
	json__u64(w, g->in_short);
	json__key(w, "short_read_ratio");
	json__double(w, ratio(g->in_short, g->in_ok));
}

/* syscalls_cell_fn over a group's table. */
static void group_cell(const void *ctx, unsigned sc, unsigned k, struct syscalls_cell *c)
{
	const struct cabbpf_iostat_val *v = group_sc(ctx, sc, k);

	*c = (struct syscalls_cell){.calls = v->calls,
				    .errors = v->errors,
				    .bytes = v->bytes,
				    .req = v->req,
				    .short_calls = v->short_calls,
				    .hist_req = v->hist_req,
				    .hist_ret = v->hist_ret};
}

static void json_groups(struct iostat *s, struct json *w, enum gby by)
{
	struct group **g;
	size_t n = 0, i;

	g = groups(s, by, &n);
	if (by == BY_PROC) {
		json__key(w, "processes_total");
		json__u64(w, n + s->procs_folded);
		json__key(w, "processes_folded");
		json__u64(w, s->procs_folded);
	}
	json__key(w, by == BY_PROC	? "processes"
		     : by == BY_CGROUP	? "cgroups"
		     : by == BY_COMMAND ? "commands"
					: "containers");
	json__begin_array(w);
	if (g)
		qsort(g, n, sizeof(*g), cmp_group);
	for (i = 0; g && i < n && (by != BY_PROC || i < JSON_MAX_PROCS); i++) {
		const struct group *x = g[i];
		const char *cp = by == BY_CONTAINER ? NULL : cg_path(s, x->cgid);

		json__begin_object(w);
		if (by == BY_PROC) {
			json__key(w, "pid");
			json__u64(w, x->pid);
			json__key(w, "command");
			json__string(w, x->comm);
		}
		if (by == BY_COMMAND) {
			json__key(w, "command");
			json__string(w, x->comm);
			json__key(w, "processes");
			json__u64(w, x->nproc);
			json_totals(w, x);
			syscalls__json_table(w, group_cell, x);
			json__end_object(w);
			continue;
		}
		if (by != BY_CONTAINER) {
			json__key(w, "cgroup_id");
			json__u64(w, x->cgid);
			json__key(w, "cgroup");
			json__string(w, cp);
		}
		json__key(w, by == BY_CONTAINER ? "id" : "container");
		json__string(w, x->container[0] ? x->container : NULL);
		if (by == BY_CONTAINER) {
			json__key(w, "runtime");
			json__string(w, x->runtime);
		}
		json_totals(w, x);
		syscalls__json_table(w, group_cell, x);
		json__end_object(w);
	}
	json__end_array(w);
	groups_free(g, n);
}

static int write_json(struct iostat *s, struct json *w, const struct iostat_run *r)
{
	struct group *all = group_all(s);
	struct fent **fv;
	size_t i;

	fv = malloc((s->files.n + 1) * sizeof(*fv));
	if (!all || !fv) {
		group_free(all);
		free(fv);
		return -ENOMEM;
	}
	json__begin_object(w);
	json__key(w, "version");
	json__u64(w, 1);
	json__key(w, "mode");
	json__string(w, "io");
	json__key(w, "filter");
	json__begin_object(w);
	json__key(w, "pid");
	if (r->pid)
		json__u64(w, (uint64_t)r->pid);
	else
		json__null(w);
	json__key(w, "cgroup");
	json__string(w, r->cgroup);
	json__key(w, "container");
	json__string(w, r->container);
	json__end_object(w);
	json__key(w, "stop_reason");
	json__string(w, r->stop_reason);
	json__key(w, "duration_s");
	json__double(w, r->duration_s);
	json__key(w, "startup_s");
	if (r->startup_s >= 0)
		json__double(w, r->startup_s);
	else
		json__null(w);
	json__key(w, "calls");
	json__u64(w, all->in_calls + all->out_calls);
	json__key(w, "calls_per_s");
	json__double(w, r->duration_s > 0 ? (double)(all->in_calls + all->out_calls) / r->duration_s
					  : 0.0);
	json__key(w, "kernel_calls_seen");
	json__u64(w, r->counts[CABBPF_IOSTAT_CALLS]);
	json__key(w, "lost");
	json__begin_object(w);
	json__key(w, "process_map_full");
	json__u64(w, r->counts[CABBPF_IOSTAT_STATS_FULL]);
	json__key(w, "file_map_full");
	json__u64(w, r->counts[CABBPF_IOSTAT_FILES_FULL]);
	json__key(w, "compat_not_decoded");
	json__u64(w, r->counts[CABBPF_IOSTAT_COMPAT]);
	json__end_object(w);
	json__key(w, "kernel");
	json__begin_object(w);
	json__key(w, "process_keys_created");
	json__u64(w, r->counts[CABBPF_IOSTAT_STATS_NEW]);
	json__key(w, "file_keys_created");
	json__u64(w, r->counts[CABBPF_IOSTAT_FILES_NEW]);
	json__key(w, "exit_records");
	json__u64(w, r->counts[CABBPF_IOSTAT_EXIT_SENT]);
	json__key(w, "exit_ring_full");
	json__u64(w, r->counts[CABBPF_IOSTAT_EXIT_RING_FULL]);
	json__end_object(w);
	json__key(w, "cpu_s");
	json__double(w, r->cpu_s);
	json__key(w, "total");
	json__begin_object(w);
	json_totals(w, all);
	syscalls__json_table(w, group_cell, all);
	json__end_object(w);
	json_groups(s, w, BY_PROC);
	json_groups(s, w, BY_CGROUP);
	json_groups(s, w, BY_CONTAINER);
	json_groups(s, w, BY_COMMAND);
	for (i = 0; i < s->files.n; i++)
		fv[i] = s->files.v[i];
	qsort(fv, s->files.n, sizeof(*fv), cmp_file);
	json__key(w, "files_total");
	json__u64(w, s->files.n + s->files_folded);
	json__key(w, "files");
	json__begin_array(w);
	for (i = 0; i < s->files.n && i < JSON_MAX_FILES; i++) {
		struct cabbpf_iofile_val t;

		file_total(fv[i], &t);
		json__begin_object(w);
		json__key(w, "pid");
		json__u64(w, fv[i]->k.pid);
		json__key(w, "fd");
		json__i64(w, fv[i]->k.fd);
		json__key(w, "inode");
		json__u64(w, fv[i]->k.ino);
		json__key(w, "dev");
		json__u64(w, t.dev);
		json__key(w, "fd_kind");
		json__string(w, syscalls__fdkind_name(t.fdkind));
		json__key(w, "name");
		json__string(w, fv[i]->name);
		json__key(w, "dentry");
		json__string(w, t.name[0] ? t.name : NULL);
		json__key(w, "in_bytes");
		json__u64(w, t.in_bytes);
		json__key(w, "in_calls");
		json__u64(w, t.in_calls);
		json__key(w, "out_bytes");
		json__u64(w, t.out_bytes);
		json__key(w, "out_calls");
		json__u64(w, t.out_calls);
		json__end_object(w);
	}
	json__end_array(w);
	free(fv);
	group_free(all);
	return json__end_object(w);
}

int iostat__report_json(struct iostat *s, const char *path, const struct iostat_run *r)
{
	struct json *w = NULL;
	struct outfile of;
	int err;

	/* A new file renamed over the path: never through a symlink. */
	err = outfile__open(&of, path);
	if (err)
		return err;
	err = json__new(of.f, true, &w);
	if (!err)
		err = write_json(s, w, r);
	if (!err)
		err = json__finish(w);
	json__free(w);
	if (err) {
		outfile__abort(&of);
		return err;
	}
	return outfile__commit(&of);
}
