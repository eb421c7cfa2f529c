/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --io's user-space state, shared by its files (not a public API):
 *   iostat.c       reading the kernel maps, retiring ended processes' keys;
 *   ended.c        ended processes: the ring of their last counts, pid
 *                  reuse, folding the least busy into their command's row;
 *   iostat_keys.c  a key's figures summed, its cgroup's names (the leaf
 *                  both of the above call: neither calls the other back);
 *   iostat_groups.c  groups (process, command, cgroup, container), files,
 *                  the -i line: iostat_groups.h, which the report reads
 *                  (user/report/io_report.c).
 * Main thread only.
 */
#ifndef USER_IOMODE_IOSTAT_INT_H
#define USER_IOMODE_IOSTAT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "cabbpf_event.h"
#include "common/hmap.h"
#include "user/iomode/iostat.h"
#include "user/iomode/ptab.h"
#include "user/proc/container.h"

#define DEFAULT_TOP 20

/* One key of "iostats": the kernel's latest cumulative value (cur) plus
 * what was retired when its process exited (base). */
struct sent {
	struct cabbpf_iostat_key k; /* k.pad: 0, or nonzero once set aside (ended__entry) */
	struct cabbpf_iostat_val cur, base;
	uint32_t gen; /* which process under k.pid (pid reuse): s->gen's then */
	bool set;     /* gen is set */
};

/* One key of "iofiles". */
struct fent {
	struct cabbpf_iofile_key k; /* k.fd: negative once set aside (ended__file_entry) */
	struct cabbpf_iofile_val cur, base;
	char *name;   /* path, socket peer, or NULL when it could not be resolved */
	int32_t fd;   /* the process's fd (k.fd's, before any setting aside) */
	uint32_t gen; /* which process under k.pid, as struct sent's */
	bool set;     /* gen and fd are set */
	bool tried;   /* resolution attempted (only while the process lived) */
};

struct iostat {
	struct iostat_opts o;
	struct ptab stats, files;
	struct hmap cgpath;  /* cgid -> char * (path) or 1 (unknown) */
	struct hmap prev;    /* pid -> previous interval's in+out bytes */
	uint64_t prev_total; /* in+out bytes of every process at the last -i print */
	struct hmap alive;   /* pid -> 1 dead / 2 alive, per collect */
	size_t vsize_s, vsize_f;
	void *vals;		  /* ncpus values of the larger map */
	struct ring_buffer *done; /* "iodone", or NULL */
	uint64_t collects;
	/* Ended processes kept one by one, at most o.keep (fold()). */
	struct hmap dead;    /* pid -> 2 * round + 1 ended (figures all retired) / 2 alive */
	size_t ndead;	     /* pids ended in dead */
	struct hmap gen;     /* pid -> processes seen under it before the current */
	struct hmap starts;  /* pid -> start (ns) of the process that ended under it,
				as its last records said (0: not told) */
	uint64_t round;	     /* drains and collects so far */
	uint64_t walked;     /* round of the last complete walk of the kernel maps */
	uint16_t asides;     /* entries set aside, for their keys' pad */
	uint32_t fasides;    /* file entries set aside, for their keys' fd */
	struct hmap folding; /* fold(): pid -> 1 to fold */
	/* pid -> the start (ns) of the process folded under it, when its
	 * records told it: a late record of that process joins its command's
	 * row, it is not a process again */
	struct hmap folded;
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

/* Sum v into d (counters, histograms; d's command name if it has none). */
void iostat__add_stat(struct cabbpf_iostat_val *d, const struct cabbpf_iostat_val *v);
void iostat__add_file(struct cabbpf_iofile_val *d, const struct cabbpf_iofile_val *v);
/* An entry's figures: retired plus current. */
void iostat__stat_total(const struct sent *e, struct cabbpf_iostat_val *t);
void iostat__file_total(const struct fent *e, struct cabbpf_iofile_val *t);
/* Frees a struct fent's name (ptab__fini's fr). */
void iostat__fent_fini(void *e);
/* The cgroup path of cgid (cached, owned by s), or NULL. */
const char *iostat__cg_path(struct iostat *s, uint64_t cgid);
/* The container of cgroup cgid, from its path or the kernel's names;
 * false when none. */
bool iostat__cg_container(struct iostat *s, uint64_t cgid, const char *path,
			  char cid[CONTAINER_ID_LEN + 1], const char **rt);

/* ended.c. The ring's callback (libbpf's ring_buffer_sample_fn; ctx: s). */
int ended__on_record(void *ctx, void *data, size_t size);
/* pid's figures are all retired (it ended), or it is alive again. */
void ended__mark(struct iostat *s, uint32_t pid, bool dead);

/* pid is marked ended (dv its s->dead value) and /proc shows a process
 * under it: is that the one that ended, still finishing its exit (its last
 * thread sent its records at sched_process_exit; /proc shows it running
 * until it is a zombie, under emulation for longer than a collection)? By
 * the start time its records carried against /proc's; when they carried
 * none, by the rounds since (as ended__on_record judges). */
bool ended__still_ending(struct iostat *s, uint32_t pid, uint64_t dv);
/* A new process under pid: its figures get rows of their own. */
void ended__new_process(struct iostat *s, uint32_t pid);
/* The entry of kernel key k for the current process under k->pid (created
 * when absent); NULL when out of memory. */
struct sent *ended__entry(struct iostat *s, const struct cabbpf_iostat_key *k);
/* The same for a key of "iofiles": a file of an earlier process under that
 * pid, on the same fd and inode (libc's fd 3 on one library), stays its own
 * row. */
struct fent *ended__file_entry(struct iostat *s, const struct cabbpf_iofile_key *k);
/* Fold the least busy ended processes when more than o.keep are kept. */
void ended__fold_if_over(struct iostat *s);

#endif /* USER_IOMODE_IOSTAT_INT_H */
