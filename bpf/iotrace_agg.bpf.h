/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The system-wide mode of bpf/iotrace.bpf.c (agg_mode == 1, cabbpf --io):
 * a call's counts into its thread's cache of accumulators (the "slots"),
 * flushed into the per-process and per-file maps, or sent through the
 * ring when the process ends; the names of a cgroup noted once. Included
 * once, by iotrace.bpf.c, at the point where this code stood: it uses its
 * maps, its struct iocall and struct fdinfo.
 */
#ifndef CABBPF_IOTRACE_AGG_BPF_H
#define CABBPF_IOTRACE_AGG_BPF_H

/* struct kernfs_node before Linux 6.15 (CO-RE flavour: the name's
 * ___ suffix is ignored when matching the kernel's type). */
struct kernfs_node___parent {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));

/* Record the names of task's cgroup cgid once (see cgnames). */
static __always_inline void note_cgroup(struct task_struct *task, __u64 cgid)
{
	struct kernfs_node *kn, *up;
	struct cabbpf_cgname *n;
	__u32 zk = 0;

	if (bpf_map_lookup_elem(&cgnames, &cgid))
		return;
	n = bpf_map_lookup_elem(&cgname_buf, &zk);
	if (!n)
		return;
	kn = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn);
	/* A task moved since its slot was filled is in another cgroup now:
	 * its names would be another's. */
	if (!kn || BPF_CORE_READ(kn, id) != cgid)
		return;
	n->leaf[0] = 0;
	n->parent[0] = 0;
	bpf_probe_read_kernel_str(n->leaf, sizeof(n->leaf), BPF_CORE_READ(kn, name));
	/* __parent since Linux 6.15, parent before */
	if (bpf_core_field_exists(kn->__parent))
		up = BPF_CORE_READ(kn, __parent);
	else
		up = BPF_CORE_READ((struct kernfs_node___parent *)kn, parent);
	if (up)
		bpf_probe_read_kernel_str(n->parent, sizeof(n->parent), BPF_CORE_READ(up, name));
	bpf_map_update_elem(&cgnames, &cgid, n, BPF_NOEXIST);
}

/* A slot's counters back to zero (its key fields stay). */
static __always_inline void slot_empty(struct slot *sl)
{
	int b;

	sl->born = 0;
	sl->calls = sl->errors = sl->short_calls = 0;
	sl->bytes = sl->req = 0;
	for (b = 0; b < CABBPF_HIST_BUCKETS; b++) {
		sl->hist_req[b] = 0;
		sl->hist_ret[b] = 0;
	}
}

/* A slot through the ring "iodone" whole, and emptied (see struct
 * cabbpf_iodone): live 0 for a process whose last thread is ending (a
 * short-lived process then takes no key: a machine starting ~1,800
 * processes a second filled the 16,384 per-process keys between two reads
 * and thousands of calls were lost), CABBPF_IODONE_LIVE for one whose map
 * key could not be created. Returns false when the ring is full (counted;
 * the slot is left as it was). */
static __noinline bool send_slot(struct task_struct *task, __u32 tgid, struct slot *sl, __u32 live)
{
	struct cabbpf_iodone *d;
	int b;

	if (!sl->born)
		return true;
	d = bpf_ringbuf_reserve(&iodone, sizeof(*d), 0);
	if (!d) {
		count(live ? CABBPF_IOSTAT_LIVE_RING_FULL : CABBPF_IOSTAT_EXIT_RING_FULL);
		return false;
	}
	d->pid = tgid;
	d->fd = sl->fd;
	d->sc = sl->sc;
	d->fdkind = sl->fdkind;
	d->flags = live ? CABBPF_IODONE_LIVE : 0;
	d->calls = sl->calls;
	d->cgid = sl->cgid;
	d->ino = sl->ino;
	d->dev = sl->dev;
	d->start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	d->bytes = sl->bytes;
	d->req = sl->req;
	d->errors = sl->errors;
	d->short_calls = sl->short_calls;
	for (b = 0; b < CABBPF_HIST_BUCKETS; b++) {
		d->hist_req[b] = sl->hist_req[b];
		d->hist_ret[b] = sl->hist_ret[b];
	}
	/* Ring memory is not zeroed: user space compares names whole. */
	__builtin_memset(d->comm, 0, sizeof(d->comm));
	bpf_probe_read_kernel_str(d->comm, sizeof(d->comm), task->comm);
	__builtin_memcpy(d->name, sl->name, sizeof(d->name));
	/* No wakeup: the loader reads the ring every tick (50 ms). */
	bpf_ringbuf_submit(d, BPF_RB_NO_WAKEUP);
	count_n(CABBPF_IOSTAT_CALLS, sl->calls);
	count(live ? CABBPF_IOSTAT_LIVE_SENT : CABBPF_IOSTAT_EXIT_SENT);
	note_cgroup(task, sl->cgid);
	slot_empty(sl);
	return true;
}

/* Move a slot's counters into the hash maps and empty it (its key stays).
 * task is the slot's thread (not necessarily current). A key that cannot
 * be created sends the slot through the ring instead; only when the ring
 * is full too are its calls lost (counted). */
static __noinline void flush_slot(struct task_struct *task, __u32 tgid, struct slot *sl)
{
	struct cabbpf_iostat_key k = {};
	struct cabbpf_iostat_val *v;
	struct cabbpf_iofile_key fk = {};
	struct cabbpf_iofile_val *fv = NULL;
	__u32 zk = 0, ok;
	void *zero;
	int b;

	if (!sl->born)
		return;
	k.pid = tgid;
	k.sc = sl->sc;
	k.fdkind = sl->fdkind;
	k.cgid = sl->cgid;
	v = bpf_map_lookup_elem(&iostats, &k);
	if (!v) {
		zero = bpf_map_lookup_elem(&zero_stat, &zk);
		if (zero)
			if (!bpf_map_update_elem(&iostats, &k, zero, BPF_NOEXIST))
				count(CABBPF_IOSTAT_STATS_NEW);
		v = bpf_map_lookup_elem(&iostats, &k);
		note_cgroup(task, sl->cgid);
	}
	ok = sl->calls - sl->errors;
	if (sl->fd >= 0 && ok) {
		fk.pid = tgid;
		fk.fd = sl->fd;
		fk.ino = sl->ino;
		fv = bpf_map_lookup_elem(&iofiles, &fk);
		if (!fv) {
			struct cabbpf_iofile_val *nv = new_fval();

			if (nv) {
				__builtin_memcpy(nv->name, sl->name, sizeof(nv->name));
				if (!bpf_map_update_elem(&iofiles, &fk, nv, BPF_NOEXIST))
					count(CABBPF_IOSTAT_FILES_NEW);
			}
			fv = bpf_map_lookup_elem(&iofiles, &fk);
		}
	}
	/* Nothing added to either key yet: the ring takes the whole slot. */
	if ((!v || (sl->fd >= 0 && ok && !fv)) && send_slot(task, tgid, sl, CABBPF_IODONE_LIVE))
		return;
	count_n(CABBPF_IOSTAT_CALLS, sl->calls);
	if (v) {
		if (!v->calls)
			bpf_probe_read_kernel_str(v->comm, sizeof(v->comm), task->comm);
		v->calls += sl->calls;
		v->errors += sl->errors;
		v->bytes += sl->bytes;
		v->req += sl->req;
		v->short_calls += sl->short_calls;
		for (b = 0; b < CABBPF_HIST_BUCKETS; b++) {
			v->hist_req[b] += sl->hist_req[b];
			v->hist_ret[b] += sl->hist_ret[b];
		}
	} else {
		count_n(CABBPF_IOSTAT_STATS_FULL, sl->calls);
	}
	if (sl->fd >= 0 && ok) {
		if (fv) {
			fv->dev = sl->dev;
			fv->cgid = sl->cgid;
			fv->fdkind = sl->fdkind;
			if (CABBPF_SC_IS_OUTPUT(sl->sc)) {
				fv->out_bytes += sl->bytes;
				fv->out_calls += ok;
			} else {
				fv->in_bytes += sl->bytes;
				fv->in_calls += ok;
			}
		} else {
			count_n(CABBPF_IOSTAT_FILES_FULL, ok);
		}
	}
	slot_empty(sl);
}

/* Scratch for one call as a slot (send_call()): too big for the BPF stack.
 * The sys_exit program is not preempted on its CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slot);
} call_slot SEC(".maps");

/* One call whose map keys could not be created, through the ring as a
 * slot of one call (CABBPF_IODONE_LIVE). Returns false when it could not
 * be sent (counted). */
static __always_inline bool send_call(struct iocall *c, const struct fdinfo *fi, __u32 tgid,
				      __u64 cgid)
{
	__u64 got = c->ret > 0 ? (__u64)c->ret : 0;
	struct slot *sl;
	__u32 zk = 0;

	sl = bpf_map_lookup_elem(&call_slot, &zk);
	if (!sl)
		return false;
	slot_empty(sl);
	sl->born = 1;
	sl->calls = 1;
	sl->fd = c->fd;
	sl->sc = (__u8)c->sc;
	sl->fdkind = (__u8)fi->kind;
	sl->cgid = cgid;
	sl->ino = fi->ino;
	sl->dev = fi->dev;
	sl->name[0] = 0;
	if (fi->file)
		file_name((__u64)fi->file, sl->name, sizeof(sl->name));
	if (c->flags & CABBPF_IO_ERR) {
		sl->errors = 1;
	} else {
		sl->bytes = got;
		sl->req = c->req;
		if (got < c->req)
			sl->short_calls = 1;
		sl->hist_ret[log2_bucket(got) & (CABBPF_HIST_BUCKETS - 1)] = 1;
	}
	sl->hist_req[log2_bucket(c->req) & (CABBPF_HIST_BUCKETS - 1)] = 1;
	return send_slot(bpf_get_current_task_btf(), tgid, sl, CABBPF_IODONE_LIVE);
}

/* A call straight into the maps (its thread's slots busy or missing). A
 * key that cannot be created sends the call through the ring instead. */
static __always_inline void aggregate(struct iocall *c, const struct fdinfo *fi, __u32 tgid)
{
	struct cabbpf_iostat_key k = {};
	struct cabbpf_iostat_val *v;
	struct cabbpf_iofile_key fk = {};
	struct cabbpf_iofile_val *fv = NULL;
	__u64 cgid = bpf_get_current_cgroup_id();
	__u64 got = c->ret > 0 ? (__u64)c->ret : 0;
	bool file = c->fd >= 0 && !(c->flags & CABBPF_IO_ERR);
	__u32 zk = 0;
	long rc;
	void *zero;

	k.pid = tgid;
	k.sc = (__u8)c->sc;
	k.fdkind = (__u8)fi->kind;
	k.cgid = cgid;
	v = bpf_map_lookup_elem(&iostats, &k);
	if (!v) {
		zero = bpf_map_lookup_elem(&zero_stat, &zk);
		/* -EEXIST: another CPU created it first; fine. */
		if (zero && !bpf_map_update_elem(&iostats, &k, zero, BPF_NOEXIST))
			count(CABBPF_IOSTAT_STATS_NEW);
		v = bpf_map_lookup_elem(&iostats, &k);
		if (v)
			note_cgroup(bpf_get_current_task_btf(), cgid);
	}
	if (file) {
		fk.pid = tgid;
		fk.fd = c->fd;
		fk.ino = fi->ino;
		fv = bpf_map_lookup_elem(&iofiles, &fk);
		if (!fv) {
			struct cabbpf_iofile_val *nv = new_fval();

			if (nv) {
				/* Once per key: the file's name, cheap enough here. */
				if (fi->file)
					file_name((__u64)fi->file, nv->name, sizeof(nv->name));
				rc = bpf_map_update_elem(&iofiles, &fk, nv, BPF_NOEXIST);
				if (!rc)
					count(CABBPF_IOSTAT_FILES_NEW);
			}
			fv = bpf_map_lookup_elem(&iofiles, &fk);
		}
	}
	/* Nothing added to either key yet: the ring takes the call. */
	if ((!v || (file && !fv)) && send_call(c, fi, tgid, cgid))
		return;
	count(CABBPF_IOSTAT_CALLS);
	if (v) {
		/* Per-CPU values: plain adds, no atomics. The name is taken
		 * once per key and CPU, while the process is surely alive. */
		if (!v->calls)
			bpf_get_current_comm(v->comm, sizeof(v->comm));
		v->calls++;
		if (c->flags & CABBPF_IO_ERR) {
			v->errors++;
		} else {
			v->bytes += got;
			v->req += c->req;
			if (got < c->req)
				v->short_calls++;
			v->hist_ret[log2_bucket(got) & (CABBPF_HIST_BUCKETS - 1)]++;
		}
		v->hist_req[log2_bucket(c->req) & (CABBPF_HIST_BUCKETS - 1)]++;
	} else {
		count(CABBPF_IOSTAT_STATS_FULL);
	}
	if (!file)
		return;
	if (!fv) {
		count(CABBPF_IOSTAT_FILES_FULL);
		return;
	}
	/* Per CPU: a CPU's value starts zeroed when another CPU created the
	 * key, so these are set by every CPU that uses it. */
	fv->dev = fi->dev;
	fv->cgid = cgid;
	fv->fdkind = fi->kind;
	if (CABBPF_SC_IS_OUTPUT(c->sc)) {
		fv->out_bytes += got;
		fv->out_calls++;
	} else {
		fv->in_bytes += got;
		fv->in_calls++;
	}
}

static __always_inline void flush_all(struct task_struct *task, __u32 tgid, struct tio *t)
{
	int i;

	for (i = 0; i < NSLOTS; i++)
		flush_slot(task, tgid, &t->s[i]);
}

static __always_inline bool tio_lock(struct tio *t)
{
	return __sync_val_compare_and_swap(&t->lock, 0, 1) == 0;
}

static __always_inline void tio_unlock(struct tio *t)
{
	/* Release: every slot update is before this store (x86-64: TSO). */
	__asm__ __volatile__("" ::: "memory");
	t->lock = 0;
}

/* The slot for this call: a hit, or a victim flushed and refilled. */
static __always_inline struct slot *slot_for(struct task_struct *task, __u32 tgid, struct tio *t,
					     const struct iocall *c, __u64 cgid)
{
	__u64 file = fd_file(task, c->fd);
	/* A freed file's memory may come back as another file: the inode
	 * number tells them apart. */
	__u64 ino = file_ino(file);
	struct slot *sl;
	struct fdinfo fi;
	int i;

	sl = &t->s[t->mru & (NSLOTS - 1)];
	if (sl->used && sl->sc == c->sc && sl->fd == c->fd && sl->file == file && sl->ino == ino &&
	    sl->cgid == cgid)
		return sl;
	for (i = 0; i < NSLOTS; i++) {
		sl = &t->s[i];
		if (sl->used && sl->sc == c->sc && sl->fd == c->fd && sl->file == file &&
		    sl->ino == ino && sl->cgid == cgid) {
			t->mru = i;
			return sl;
		}
	}
	i = t->next++ & (NSLOTS - 1);
	t->mru = i;
	sl = &t->s[i];
	flush_slot(task, tgid, sl);
	if (c->fd >= 0) {
		fd_info(task, c->fd, &fi);
	} else {
		fi.kind = CABBPF_FD_NONE;
		fi.ino = 0;
		fi.dev = 0;
		fi.file = NULL;
	}
	sl->sc = (__u8)c->sc;
	sl->fd = c->fd;
	sl->file = file;
	sl->ino = ino;
	sl->dev = fi.dev;
	sl->fdkind = (__u8)fi.kind;
	sl->cgid = cgid;
	sl->name[0] = 0;
	sl->last_req = 0;
	sl->bq = 0;
	sl->last_ret = 0;
	sl->bret = 0;
	if (fi.file)
		file_name((__u64)fi.file, sl->name, sizeof(sl->name));
	sl->used = 1;
	return sl;
}

/* System-wide mode: account one call, through the thread's slots. */
static __always_inline void aggregate_fast(struct task_struct *task, struct iocall *c, __u32 tgid)
{
	struct tio *t = bpf_task_storage_get(&tios, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 got = c->ret > 0 ? (__u64)c->ret : 0;
	__u64 cgid = task_cgid(task);
	struct fdinfo fi;
	struct slot *sl;

	if (!t || !tio_lock(t)) {
		/* No storage, or a flusher holds it: straight to the maps. */
		if (c->fd >= 0) {
			fd_info(task, c->fd, &fi);
		} else {
			fi.kind = CABBPF_FD_NONE;
			fi.ino = 0;
			fi.dev = 0;
			fi.file = NULL;
		}
		aggregate(c, &fi, tgid);
		return;
	}
	sl = slot_for(task, tgid, t, c, cgid);
	sl->born = 1;
	sl->calls++;
	if (c->req != sl->last_req) {
		sl->last_req = (__u32)c->req;
		sl->bq = (__u8)log2_bucket(c->req);
	}
	if (c->flags & CABBPF_IO_ERR) {
		sl->errors++;
	} else {
		sl->bytes += got;
		sl->req += c->req;
		if (got < c->req)
			sl->short_calls++;
		if (got != sl->last_ret) {
			sl->last_ret = got;
			sl->bret = log2_bucket(got);
		}
		sl->hist_ret[sl->bret & (CABBPF_HIST_BUCKETS - 1)]++;
	}
	sl->hist_req[sl->bq & (CABBPF_HIST_BUCKETS - 1)]++;
	if (sl->calls >= FLUSH_CALLS)
		flush_slot(task, tgid, sl);
	tio_unlock(t);
}

#endif /* CABBPF_IOTRACE_AGG_BPF_H */
