/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a system call of bpf/iotrace.bpf.c moved and on what: the bytes
 * of the vector calls, and an fd's file (its kind, device, inode, name)
 * and the task's cgroup. Included once, by iotrace.bpf.c, at the point
 * where these helpers stood: they use its maps and read-only settings.
 */
#ifndef CABBPF_IOTRACE_FD_BPF_H
#define CABBPF_IOTRACE_FD_BPF_H

#define MAX_IOV 16

/* Sum of the first cnt (at most MAX_IOV) iovec lengths at uiov. Reading
 * user memory after the call is fine: the array is the caller's. */
static __always_inline __u64 iov_bytes(const struct iovec *uiov, __u64 cnt)
{
	__u64 sum = 0;
	int i;

	for (i = 0; i < MAX_IOV; i++) {
		struct iovec v;

		if ((__u64)i >= cnt)
			break;
		if (bpf_probe_read_user(&v, sizeof(v), &uiov[i]))
			break;
		sum += v.iov_len;
	}
	return sum;
}

/* Bytes moved by recvmmsg/sendmmsg: the kernel wrote each message's length
 * into msg_len; ret is the number of messages (the first MAX_IOV count). */
static __always_inline __u64 mmsg_bytes(const struct mmsghdr *vec, long n)
{
	__u64 sum = 0;
	int i;

	for (i = 0; i < MAX_IOV; i++) {
		unsigned int len;

		if (i >= n)
			break;
		if (bpf_probe_read_user(&len, sizeof(len), &vec[i].msg_len))
			break;
		sum += len;
	}
	return sum;
}

struct fdinfo {
	__u64 ino;
	__u64 dev;
	struct file *file; /* NULL when unknown */
	__u32 kind;
};

/* Loads through a pointer the verifier cannot type (read from an array)
 * become fault-safe direct loads once cast to its BTF type: no helper call
 * per field. The verifier turns the cast itself into a register move. A
 * kfunc of Linux 6.2: the loader sets have_rdonly_cast when the kernel's
 * BTF has it (user/kernel/features.h), and without it the same fields are
 * read with bpf_probe_read_kernel (a helper call each, ~20-40 ns). Weak,
 * so that an object whose casts are dead code loads where it is absent. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
const volatile __u32 have_rdonly_cast = 1;

/* The struct file behind fd of task, as a number (0 when none). */
static __always_inline __u64 fd_file(struct task_struct *task, int fd)
{
	struct files_struct *files;
	struct fdtable *fdt;
	struct file **arr;
	struct fown_struct *slotp;
	struct file *f = NULL;

	if (fd < 0)
		return 0;
	files = task->files;
	if (!files)
		return 0;
	fdt = files->fdt;
	if (!fdt || (unsigned int)fd >= fdt->max_fds)
		return 0;
	arr = fdt->fd;
	if (!arr)
		return 0;
	if (have_rdonly_cast) {
		/* The slot, typed as a struct whose first member is a struct
		 * file *, so the load is a direct, fault-safe one. */
		slotp = bpf_rdonly_cast(&arr[fd], bpf_core_type_id_kernel(struct fown_struct));
		f = slotp->file;
	} else if (bpf_probe_read_kernel(&f, sizeof(f), &arr[fd])) {
		return 0;
	}
	return (__u64)f;
}

/* What a struct file (fp, a number) says of itself; fp is not 0. */
struct ffacts {
	__u64 ino;
	__u64 dev;
	__u32 mode;  /* the inode's i_mode; 0: no inode */
	__u32 rdev;  /* the inode's i_rdev */
	__u32 fmode; /* the file's f_mode */
};

static __always_inline void file_facts(__u64 fp, struct ffacts *ff)
{
	struct inode *ino;

	ff->ino = ff->dev = 0;
	ff->mode = ff->rdev = ff->fmode = 0;
	if (have_rdonly_cast) {
		struct file *f = bpf_rdonly_cast((void *)fp, bpf_core_type_id_kernel(struct file));

		ff->fmode = f->f_mode;
		ino = f->f_inode;
		if (!ino)
			return;
		ff->mode = ino->i_mode;
		ff->ino = ino->i_ino;
		ff->dev = ino->i_sb->s_dev;
		ff->rdev = ino->i_rdev;
		return;
	}
	ff->fmode = BPF_CORE_READ((struct file *)fp, f_mode);
	ino = BPF_CORE_READ((struct file *)fp, f_inode);
	if (!ino)
		return;
	ff->mode = BPF_CORE_READ(ino, i_mode);
	ff->ino = BPF_CORE_READ(ino, i_ino);
	ff->dev = BPF_CORE_READ(ino, i_sb, s_dev);
	ff->rdev = BPF_CORE_READ(ino, i_rdev);
}

/* The inode number of the struct file fp (0: none). */
static __always_inline __u64 file_ino(__u64 fp)
{
	struct inode *ino;

	if (!fp)
		return 0;
	if (have_rdonly_cast) {
		struct file *f = bpf_rdonly_cast((void *)fp, bpf_core_type_id_kernel(struct file));

		ino = f->f_inode;
		return ino ? ino->i_ino : 0;
	}
	return BPF_CORE_READ((struct file *)fp, f_inode, i_ino);
}

/* Copy the name of the struct file fp (its dentry's) into buf. */
static __always_inline void file_name(__u64 fp, char *buf, __u32 size)
{
	const unsigned char *nm = BPF_CORE_READ((struct file *)fp, f_path.dentry, d_name.name);

	if (nm)
		bpf_probe_read_kernel_str(buf, size, nm);
}

/* bpf_get_current_cgroup_id() without the helper call: the task's cgroup v2
 * id, through fault-safe direct loads. */
static __always_inline __u64 task_cgid(struct task_struct *task)
{
	struct css_set *cs = task->cgroups;
	struct cgroup *cg = cs ? cs->dfl_cgrp : NULL;
	struct kernfs_node *kn = cg ? cg->kn : NULL;

	return kn ? kn->id : 0;
}

/* What fd refers to in the current task: task->files->fdt->fd[fd]'s inode
 * (direct, fault-safe loads where the kernel has bpf_rdonly_cast). */
static __always_inline void fd_info(struct task_struct *task, int fd, struct fdinfo *fi)
{
	__u64 fp = fd_file(task, fd);
	struct ffacts ff;

	fi->kind = CABBPF_FD_OTHER;
	fi->ino = 0;
	fi->dev = 0;
	fi->file = NULL;
	if (!fp)
		return;
	file_facts(fp, &ff);
	if (!ff.mode)
		return;
	fi->file = (struct file *)fp;
	fi->ino = ff.ino;
	fi->dev = ff.dev;
	switch (ff.mode & 00170000) {
	case 0100000: /* S_IFREG */
		fi->kind = CABBPF_FD_FILE;
		break;
	case 0010000: /* S_IFIFO */
		fi->kind = CABBPF_FD_PIPE;
		break;
	case 0140000: /* S_IFSOCK */
		fi->kind = CABBPF_FD_SOCKET;
		break;
	case 0020000: { /* S_IFCHR: ttys are majors 4, 5 (tty, console, ptmx) and 136-143 (pts) */
		__u32 major = ff.rdev >> 20;

		if (major == 4 || major == 5 || (major >= 136 && major <= 143))
			fi->kind = CABBPF_FD_TTY;
		break;
	}
	default:
		break;
	}
}

#endif /* CABBPF_IOTRACE_FD_BPF_H */
