// SPDX-License-Identifier: BSD-2-Clause
/* Where the dynamic loader put each IFUNC's choice (see ifunc.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/log.h"
#include "user/elf/ifunc.h"
#include "user/elf/image.h"

#ifndef R_X86_64_IRELATIVE
#define R_X86_64_IRELATIVE 37
#endif

/* One IRELATIVE relocation: the slot (link-time address) and the
 * resolver's address (its addend). */
struct irel {
	uint64_t slot, resolver;
};

/* The IRELATIVE relocations of the file at path into *out (malloc'd).
 * Returns their number, or -errno. */
static int read_irels(const char *path, struct irel **out)
{
	struct irel *v = NULL;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	int fd = -1, err;

	*out = NULL;
	err = image__open_elf(path, &fd, &elf);
	if (err)
		return err;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d = NULL;
		GElf_Shdr sh;
		size_t k;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		while ((d = elf_getdata(scn, d))) {
			for (k = 0; k < d->d_size / sh.sh_entsize; k++) {
				GElf_Rela r;

				if (!gelf_getrela(d, (int)k, &r) ||
				    GELF_R_TYPE(r.r_info) != R_X86_64_IRELATIVE)
					continue;
				if (n == cap) {
					size_t nc = cap ? cap * 2 : 64;
					struct irel *nv = realloc(v, nc * sizeof(*nv));

					if (!nv) {
						err = -ENOMEM;
						goto cleanup;
					}
					v = nv;
					cap = nc;
				}
				v[n].slot = r.r_offset;
				v[n++].resolver = (uint64_t)r.r_addend;
			}
		}
	}
	*out = v;
	v = NULL;
	err = (int)n;
cleanup:
	free(v);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return err;
}

/* Where process pid maps the file with device dev and inode ino: its load
 * bias (the start of the mapping of file offset 0), and the path the
 * process sees (into seen, may be NULL). Returns 0 or -ENOENT. */
static int find_bias(pid_t pid, dev_t dev, ino_t ino, uint64_t *bias, char *seen, size_t len)
{
	char maps[64], line[PATH_MAX + 128];
	FILE *f;
	int err = -ENOENT;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off, inode;
		unsigned maj, mnr;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &lo, &hi, &off, &maj, &mnr,
			   &inode, &pos) < 6)
			continue;
		if (off || inode != (unsigned long long)ino || makedev(maj, mnr) != dev)
			continue;
		*bias = lo;
		if (seen) {
			line[strcspn(line, "\n")] = 0;
			snprintf(seen, len, "%s", pos ? line + pos : "");
		}
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

/* The value of GLIBC_TUNABLES in process pid's initial environment, into
 * buf ("" when unset). Returns 0 or -errno (unreadable). */
static int tunables_of(pid_t pid, char *buf, size_t len)
{
	static const char key[] = "GLIBC_TUNABLES=";
	char path[64], *env = NULL;
	size_t n = 0, cap = 0, i;
	ssize_t r;
	int fd;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (n + 4096 > cap) {
			char *ne = realloc(env, cap + 65536);

			if (!ne) {
				free(env);
				close(fd);
				return -ENOMEM;
			}
			env = ne;
			cap += 65536;
		}
		r = read(fd, env + n, cap - n - 1);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!env)
		return 0;
	env[n] = 0;
	for (i = 0; i < n; i += strlen(env + i) + 1)
		if (!strncmp(env + i, key, sizeof(key) - 1)) {
			snprintf(buf, len, "%s", env + i + sizeof(key) - 1);
			break;
		}
	free(env);
	return 0;
}

/* Index of the sized entry of st at vaddr, or -1. */
static long sym_at(const struct symtab *st, uint64_t vaddr)
{
	size_t lo = 0, hi = st->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].vaddr < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->nsyms && st->syms[lo].vaddr == vaddr ? (long)lo : -1;
}

/* Reads, in process pid where the file is loaded at bias, the slot of
 * every IRELATIVE relocation whose resolver is an IFUNC entry of st not
 * resolved yet; sets impl[]. Returns how many it set. */
static int from_slots(pid_t pid, uint64_t bias, const struct symtab *st, const struct irel *rel,
		      size_t nrel, uint64_t *impl)
{
	char path[64];
	size_t k;
	int fd, got = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (k = 0; k < nrel; k++) {
		long i = sym_at(st, rel[k].resolver);
		uint64_t v;

		if (i < 0 || !st->syms[i].ifunc || impl[i])
			continue;
		if (pread(fd, &v, sizeof(v), (off_t)(bias + rel[k].slot)) != (ssize_t)sizeof(v))
			continue;
		/* An unrelocated slot still holds the resolver (or nothing). */
		if (v < bias || v - bias == rel[k].resolver || sym_at(st, v - bias) < 0)
			continue;
		impl[i] = v - bias;
		got++;
	}
	close(fd);
	return got;
}

/* The loader's own resolution in this process, for IFUNC entries still
 * unknown: seen is the path under which this process loaded the same
 * file. Returns how many it set. */
static int from_dlsym(const char *seen, uint64_t bias, const struct symtab *st, uint64_t *impl)
{
	void *h = dlopen(seen, RTLD_LAZY | RTLD_NOLOAD);
	size_t i, a;
	int got = 0;

	if (!h)
		return 0;
	for (i = 0; i < st->nsyms; i++) {
		const struct sym *s = &st->syms[i];

		if (!s->ifunc || impl[i])
			continue;
		for (a = 0; a <= s->naliases && !impl[i]; a++) {
			void *p = dlsym(h, a ? s->aliases[a - 1] : s->name);
			Dl_info di;

			if (!p || !dladdr(p, &di) || !di.dli_fbase)
				continue;
			if ((uintptr_t)di.dli_fbase != bias) { /* another object: the vDSO */
				impl[i] = IFUNC_OUTSIDE;
				got++;
			} else if ((uintptr_t)p > (uintptr_t)di.dli_fbase &&
			    sym_at(st, (uint64_t)((uintptr_t)p - (uintptr_t)di.dli_fbase)) >= 0 &&
			    (uint64_t)((uintptr_t)p - (uintptr_t)di.dli_fbase) != s->vaddr) {
				impl[i] = (uint64_t)((uintptr_t)p - (uintptr_t)di.dli_fbase);
				got++;
			}
		}
	}
	dlclose(h);
	return got;
}

int ifunc__resolve(pid_t pid, const struct symtab *st, uint64_t *impl)
{
	char mine[4096], theirs[4096], seen[PATH_MAX];
	struct irel *rel = NULL;
	size_t i, want = 0;
	uint64_t bias;
	struct stat sb;
	int nrel, got = 0;
	bool self_ok;

	if (!st || !impl)
		return -EINVAL;
	memset(impl, 0, st->nsyms * sizeof(*impl));
	for (i = 0; i < st->nsyms; i++)
		want += st->syms[i].ifunc;
	if (!want || stat(st->path, &sb))
		return 0;
	nrel = read_irels(st->path, &rel);
	if (nrel == -ENOMEM)
		return nrel;
	if (nrel < 0)
		nrel = 0;
	/* 1. The target's own relocation, when it maps the file. (A
	 * non-PIE executable is not moved: its bias is 0.) */
	if (pid > 0 && !find_bias(pid, sb.st_dev, sb.st_ino, &bias, NULL, 0))
		got += from_slots(pid, st->pie ? bias : 0, st, rel, (size_t)nrel, impl);
	/* cabbpf's, for the same file with the same tunables: slots, then
	 * the loader's symbol resolution. */
	snprintf(mine, sizeof(mine), "%s", getenv("GLIBC_TUNABLES") ? getenv("GLIBC_TUNABLES") : "");
	self_ok = pid <= 0 || (!tunables_of(pid, theirs, sizeof(theirs)) && !strcmp(mine, theirs));
	if ((size_t)got < want && self_ok &&
	    !find_bias(getpid(), sb.st_dev, sb.st_ino, &bias, seen, sizeof(seen))) {
		got += from_slots(getpid(), st->pie ? bias : 0, st, rel, (size_t)nrel, impl);
		if ((size_t)got < want && st->pie)
			got += from_dlsym(seen, bias, st, impl);
	}
	if ((size_t)got < want)
		log_debug("%s: %zu of %zu IFUNC symbols resolved (target pid %d%s)", st->path,
			  (size_t)got, want, (int)pid,
			  self_ok ? "" : "; its GLIBC_TUNABLES differ from cabbpf's");
	free(rel);
	return got;
}

/* A selected entry and what it is probed as (ifunc__redirect). */
struct redir {
	size_t to;   /* index in st->syms of the function probed */
	size_t from; /* index of the entry selected */
};

static int redir_cmp(const void *a, const void *b)
{
	const struct redir *x = a, *y = b;

	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}


/* The name of s a program calls: the one with the fewest leading
 * underscores ("memcpy", not the static binary's "__new_memcpy"). */
static const char *plain_name(const struct sym *s)
{
	const char *best = s->name;
	size_t a;

	for (a = 0; a < s->naliases; a++)
		if (strspn(s->aliases[a], "_") < strspn(best, "_"))
			best = s->aliases[a];
	return best;
}

/* ifunc.h */
int ifunc__redirect(pid_t pid, const struct symtab *st, const char *what, size_t *idx,
		    size_t *n, char ***labels)
{
	struct redir *r = NULL;
	uint64_t *impl = NULL;
	char **lab = NULL, out[512];
	size_t i, j, k, m = 0, nif = 0, nleft = 0, nout = 0, olen = 0;
	int err = 0;

	*labels = NULL;
	out[0] = 0;
	for (i = 0; i < (*n); i++)
		nif += st->syms[idx[i]].ifunc;
	if (!nif)
		return 0;
	impl = calloc(st->nsyms, sizeof(*impl));
	r = calloc((*n), sizeof(*r));
	lab = calloc((*n), sizeof(*lab));
	if (!impl || !r || !lab) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = ifunc__resolve(pid, st, impl);
	if (err < 0)
		goto cleanup;
	err = 0;
	for (i = 0; i < (*n); i++) {
		size_t s = idx[i], to = s;

		if (st->syms[s].ifunc) {
			long at = impl[s] && impl[s] != IFUNC_OUTSIDE ? sym_at(st, impl[s]) : -1;

			if (at < 0) {
				const char *nm = plain_name(&st->syms[s]);

				nout += impl[s] == IFUNC_OUTSIDE;
				if (olen < sizeof(out))
					olen += (size_t)snprintf(out + olen, sizeof(out) - olen,
								 "%s%.*s%s", olen ? ", " : "",
								 (int)strcspn(nm, "@"), nm,
								 impl[s] == IFUNC_OUTSIDE ? " (vDSO)" : "");
				nleft++;
				continue;
			}
			to = (size_t)at;
		}
		r[m].to = to;
		r[m++].from = s;
	}
	if (nleft)
		log_warn("not tracing %zu IFUNC symbol%s of %s (%s): %zu resolve%s to another "
			 "object (the vDSO), the rest to no function of it that a relocated copy "
			 "shows (none was found for a static binary launched with --: attach "
			 "with -p once it runs); a resolver's own calls are not the program's",
			 nleft, nleft == 1 ? "" : "s", what, out, nout, nout == 1 ? "s" : "");
	qsort(r, m, sizeof(*r), redir_cmp);
	for (i = 0, k = 0; i < m; i = j, k++) {
		char buf[1024];
		size_t len = 0;

		buf[0] = 0;
		for (j = i; j < m && r[j].to == r[i].to; j++) {
			const char *nm = plain_name(&st->syms[r[j].from]);

			/* "memcpy@@GLIBC_2.14": the version is noise here */
			if (st->syms[r[j].from].ifunc && len < sizeof(buf))
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%.*s",
							len ? ", " : "", (int)strcspn(nm, "@"),
							nm);
		}
		idx[k] = r[i].to;
		if (len) {
			const struct sym *t = &st->syms[r[i].to];

			if (asprintf(&lab[k], "%s (%s)", buf, t->pretty ? t->pretty : t->name) < 0) {
				lab[k] = NULL;
				err = -ENOMEM;
				goto cleanup;
			}
		}
	}
	(*n) = k;
	*labels = lab;
	lab = NULL;
	if (!(*n))
		err = -ENOENT;
cleanup:
	if (lab)
		for (i = 0; i < (*n); i++)
			free(lab[i]);
	free(lab);
	free(r);
	free(impl);
	return err;
}

