// SPDX-License-Identifier: BSD-2-Clause
/* --io's reading of the kernel maps (the model: iostat.h; the files that
 * share its state: iostat_int.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "user/iomode/iostat_int.h"
#include "user/proc/procfs.h"

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
		s->done = ring_buffer__new(o->done_fd, ended__on_record, s, NULL);
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
	ptab__fini(&s->stats, NULL);
	ptab__fini(&s->files, iostat__fent_fini);
	ptab__fini(&s->cmds, NULL);
	hmap__fini(&s->dead);
	hmap__fini(&s->starts);
	hmap__fini(&s->folded);
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
	/* One read of /proc/PID/stat: gone, or a zombie, which has done all
	 * its I/O (its figures retire now, and it is not taken for a new
	 * process under an ended one's pid). */
	bool alive = !procfs__gone((pid_t)pid);

	if (hmap__upsert(&s->alive, pid, &v))
		return alive;
	if (!*v)
		*v = alive ? 2 : 1;
	return *v == 2;
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

			if (sscanf(line,
				   " %*u: %32[0-9A-Fa-f]:%x %32[0-9A-Fa-f]:%x %*x %*s %*s %*s %*u "
				   "%*u %lu",
				   lh, &lp, rh, &rp, &inode) != 5 ||
			    inode != ino)
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

	/* Ended, and now alive: the same process still in do_exit (under
	 * emulation long enough for reads of the maps to fall in between: its
	 * keys made a 41st iotarget when two rounds were taken for the same),
	 * or another under the same pid. */
	if (alive && dv && (*dv & 1)) {
		if (ended__still_ending(s, k->pid, *dv))
			alive = false;
		else
			ended__new_process(s, k->pid);
	}
	memset(&sum, 0, sizeof(sum));
	for (c = 0; c < s->o.ncpus; c++)
		iostat__add_stat(&sum, (const void *)((const char *)vals + c * vsize));
	e = ended__entry(s, k);
	if (!e) {
		log_warn("--io: out of memory: a process's figures are incomplete");
		return false;
	}
	e->cur = sum;
	if (!e->base.comm[0])
		memcpy(e->base.comm, sum.comm, sizeof(sum.comm));
	/* Name its cgroup now, while it may still exist (cached). */
	iostat__cg_path(s, k->cgid);
	if (alive) {
		ended__mark(s, k->pid, false);
		return false;
	}
	/* Exited: keep its figures here, free its kernel key. */
	iostat__add_stat(&e->base, &e->cur);
	memset(&e->cur, 0, sizeof(e->cur));
	ended__mark(s, k->pid, true);
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
		iostat__add_file(&sum, (const void *)((const char *)vals + c * vsize));
	alive = pid_alive(s, k->pid);
	e = ended__file_entry(s, k);
	if (!e)
		return false;
	e->cur = sum;
	if (alive && !e->tried) {
		e->name = resolve_fd(k, sum.fdkind);
		e->tried = true;
	}
	if (alive)
		return false;
	iostat__add_file(&e->base, &e->cur);
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
	ended__fold_if_over(s);
	s->collects++;
	return err;
}

int iostat__drain(struct iostat *s)
{
	int n = 0;

	s->round++;
	if (s->done)
		n = ring_buffer__consume(s->done);
	ended__fold_if_over(s);
	return n < 0 ? n : 0;
}
