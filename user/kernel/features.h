/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What this kernel offers cabbpf, found by asking it, never by its version
 * (bpftrace --info, bpftool feature probe): the names its own BTF lists
 * (helpers in enum bpf_func_id, map types, attach types, kfuncs, the
 * structs the guard reads), the lockdown mode, BTF itself. From that,
 * features__choose picks the path each part of cabbpf takes (a table of
 * feature sets to paths, unit-tested in tests/test_features.c); a part
 * whose best path the kernel still refuses at load falls back on its own
 * (the loaders: user/trace/trace.c, user/iomode/iotrace.c).
 *
 * A required feature missing refuses the run up front with the list of
 * what is missing (features__refuse); an optional one missing is said once
 * on stderr by the mode it costs (features__say) and in the JSON
 * (features__json: "kernel").
 */
#ifndef USER_KERNEL_FEATURES_H
#define USER_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stdint.h>

struct json;

enum kfeature {
	KF_BTF,		     /* /sys/kernel/btf/vmlinux: CO-RE, typed tracepoints */
	KF_TP_BTF,	     /* BTF-typed raw tracepoints (exec, exit, switch, sys_exit) */
	KF_TASK_STORAGE,     /* task storage maps for tracing programs: thread states */
	KF_CURRENT_TASK_BTF, /* bpf_get_current_task_btf */
	KF_ATTACH_COOKIE,    /* bpf_get_attach_cookie: each probe's function id */
	KF_MMAPABLE,	     /* BPF_F_MMAPABLE arrays: the rings, read with no syscall */
	KF_TASK_ITER,	     /* iter/task programs: the guard's letting go */
	KF_BPF_LOOP,	     /* bpf_loop: the guard's walk of pending returns */
	KF_SEND_SIGNAL,	     /* bpf_send_signal_thread: the guard, --lossless */
	KF_TASK_PT_REGS,     /* bpf_task_pt_regs: signal stacks (the guard) */
	KF_RETURN_INSTANCES, /* task->utask->return_instances: the guard's list */
	KF_RINGBUF,	     /* BPF ring buffers: --io's ended processes */
	KF_KERNEL_READS,     /* kernel memory readable: lockdown is not "confidentiality" */
	KF_UPROBE_MULTI,     /* multi-uprobe links */
	KF_UPROBE_SESSION,   /* uprobe session programs */
	KF_RDONLY_CAST,	     /* the bpf_rdonly_cast kfunc */
	KF_XOL_AREA,	     /* mm->uprobes_state.xol_area->vaddr: the trampoline */
	KF__N
};

/* What a feature is for, and what its absence costs. */
struct kfeature_info {
	const char *name;    /* as in --features and the JSON */
	const char *since;   /* the first mainline kernel with it: for people, not tests */
	const char *use;     /* what cabbpf uses it for */
	const char *without; /* optional: what happens without it; NULL: required */
	const char *what;    /* optional: its name in a sentence ("multi-uprobe links") */
};

/* The table, indexed by enum kfeature. */
extern const struct kfeature_info features__info[KF__N];

struct kernel_features {
	char release[65];     /* uname -r */
	char lockdown[16];    /* none, integrity, confidentiality; "" unknown */
	bool has[KF__N];
	bool probed;	      /* features__probe ran */
};

/* The paths chosen for a feature set (features__choose). */
struct kernel_paths {
	bool multi_links;  /* multi-uprobe links; else one perf link per site */
	bool session;	   /* whole-container return probes armed per process */
	bool io_casts;	   /* --io's fd lookups by direct loads; else probe reads */
	bool slot_reads;   /* entries read their return-address slot (xol_area) */
	bool budget;	   /* --budget (its groups swap link sets: multi links) */
	bool kernel_reads; /* kernel memory readable (not lockdown=confidentiality) */
	/* required features missing: the run is refused */
	uint32_t nmissing;
	enum kfeature missing[KF__N];
};

/*
 * Probe the running kernel into *kf: uname, lockdown, and the kernel's BTF
 * (one parse). Test hook: CABBPF_TEST_KERNEL_LACKS=a,b,...
 * (feature names) acts as a kernel without them, so the fallbacks and the
 * messages can be tested on any kernel. Returns 0, or -errno when the BTF
 * cannot be read (kf still says what was found: has[KF_BTF] false). Any
 * thread; touches nothing global.
 */
int features__probe(struct kernel_features *kf);

/* The features of this kernel, probed at the first call and kept. NULL
 * only if out of memory. The main thread. */
const struct kernel_features *features__get(void);

/* The paths for feature set kf (pure: no I/O). */
void features__choose(const struct kernel_features *kf, struct kernel_paths *p);

/* What cabbpf will use a run for, to say only the losses that touch it. */
enum features_use {
	FU_CALLS = 1 << 0,  /* function tracing (-p, --) */
	FU_WHOLE = 1 << 1,  /* whole-container tracing */
	FU_IO = 1 << 2,	    /* I/O system calls (--io, or the io analyzer) */
	FU_BUDGET = 1 << 3, /* --budget */
	FU_GUARD = 1 << 4,  /* the ptrace guard */
};

/*
 * Refuse a run the kernel cannot carry: log (error) every required
 * feature missing for uses, with what it is for, and return -EOPNOTSUPP;
 * 0 when all are there. The main thread.
 */
int features__refuse(const struct kernel_features *kf, unsigned uses);

/* Say, once per process and feature, each optional feature missing that
 * uses touch, and what cabbpf does instead (warning on stderr). The main
 * thread. */
void features__say(const struct kernel_features *kf, unsigned uses);

/* Write kf as the JSON object "kernel" (the caller wrote the key):
 * release, btf, lockdown, features {name: bool}, missing [{feature,
 * since, without}]. Returns 0 or the writer's error. */
int features__json(struct json *w, const struct kernel_features *kf);

/* cabbpf --features: the table on stdout (and, with json_path, the JSON
 * {"kernel": ...} there). Returns 0 or -errno (logged). */
int features__report(const char *json_path);

#endif /* USER_KERNEL_FEATURES_H */
