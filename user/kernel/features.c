// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "user/kernel/features.h"
#include "common/json.h"
#include "common/log.h"
#include "common/outfile.h"

/* Which uses need a required feature (an optional one: 0). */
#define ALL_TRACING (FU_CALLS | FU_WHOLE)

static const unsigned required_by[KF__N] = {
	[KF_BTF] = ALL_TRACING | FU_IO,
	[KF_TP_BTF] = ALL_TRACING | FU_IO,
	[KF_TASK_STORAGE] = ALL_TRACING | FU_IO,
	[KF_CURRENT_TASK_BTF] = ALL_TRACING | FU_IO,
	[KF_ATTACH_COOKIE] = ALL_TRACING,
	[KF_MMAPABLE] = ALL_TRACING | FU_IO,
	[KF_TASK_ITER] = FU_GUARD | FU_IO,
	[KF_BPF_LOOP] = FU_GUARD,
	[KF_SEND_SIGNAL] = FU_GUARD,
	[KF_TASK_PT_REGS] = FU_GUARD,
	[KF_RETURN_INSTANCES] = FU_GUARD,
	[KF_RINGBUF] = FU_IO,
	[KF_KERNEL_READS] = ALL_TRACING | FU_IO,
};

const struct kfeature_info features__info[KF__N] = {
	[KF_BTF] = {"btf", "5.4", "kernel type information (/sys/kernel/btf/vmlinux): CO-RE "
				  "field offsets, typed tracepoints",
		    NULL},
	[KF_TP_BTF] = {"tp_btf", "5.5", "typed raw tracepoints: execve, thread exits, scheduler "
					"switches, system call exits",
		       NULL},
	[KF_TASK_STORAGE] = {"task_storage", "5.11",
			     "per-thread state (sequence numbers) in task storage", NULL},
	[KF_CURRENT_TASK_BTF] = {"current_task_btf", "5.11",
				 "bpf_get_current_task_btf: the traced thread's task", NULL},
	[KF_ATTACH_COOKIE] = {"attach_cookie", "5.15",
			      "bpf_get_attach_cookie: which function a probe hit", NULL},
	[KF_MMAPABLE] = {"mmapable_maps", "5.5",
			 "memory-mapped arrays: the per-CPU rings, read with no system call", NULL},
	[KF_TASK_ITER] = {"task_iter", "5.8",
			  "task iterators: the guard's pending returns at letting go, --io's "
			  "flushes",
			  NULL},
	[KF_BPF_LOOP] = {"bpf_loop", "5.17", "bpf_loop: the guard's walk of pending returns",
			 NULL},
	[KF_SEND_SIGNAL] = {"send_signal_thread", "5.5",
			    "bpf_send_signal_thread: the guard's stops, --lossless", NULL},
	[KF_TASK_PT_REGS] = {"task_pt_regs", "5.15",
			     "bpf_task_pt_regs: a signal handler's stack (the guard)", NULL},
	[KF_RETURN_INSTANCES] = {"return_instances", "3.5",
				 "the kernel's pending return probes of a thread "
				 "(task->utask->return_instances): the guard",
				 NULL},
	[KF_RINGBUF] = {"ringbuf", "5.8", "BPF ring buffers: --io's counts of ended processes",
			NULL},
	[KF_KERNEL_READS] = {"kernel_reads", "-",
			     "reading kernel memory from BPF (refused in lockdown mode "
			     "'confidentiality')",
			     NULL},
	[KF_UPROBE_MULTI] = {"uprobe_multi", "6.6",
			     "multi-uprobe links: one link for all of a file's probes",
			     "one perf link per probe site instead, and the kernel removes them one "
			     "at a time, ~0.1 s each: detaching N probes from a running target takes "
			     "~N/10 s (from one that ended, a process of their own does it), "
			     "--sample's windows wait for it, and --budget is refused",
			     "multi-uprobe links"},
	[KF_UPROBE_SESSION] = {"uprobe_session", "6.13",
			       "uprobe session programs: whole-container tracing arms return "
			       "probes per process",
			       "whole-container tracing (--container, --cgroup alone) counts calls "
			       "with entry probes only (no times, no call tree); one process "
			       "(-p PID, -- COMMAND) is traced in full",
			       "uprobe session programs"},
	[KF_RDONLY_CAST] = {"rdonly_cast", "6.2",
			    "the bpf_rdonly_cast kfunc: I/O calls' files read by direct loads",
			    "I/O calls' files are read with bpf_probe_read_kernel (a helper call "
			    "each, a few tens of ns per I/O call)",
			    "the bpf_rdonly_cast kfunc"},
	[KF_XOL_AREA] = {"xol_area", "3.5",
			 "the return probes' trampoline (mm->uprobes_state.xol_area->vaddr): "
			 "entries tell a tail call from a call made after a longjmp, a rethrow "
			 "or a context switch left a frame at the same stack slot",
			 "a frame that a longjmp, a rethrow or a context switch left at the "
			 "next call's stack slot is told from a tail caller by the "
			 "stack-pointer rules alone: with no guard (--no-guard, or a longjmp "
			 "the guard cannot see), that call may be given the dead frame as "
			 "its caller",
			 "the return-address slot's reading"},
};

/* The enumerator names that say a feature is there (each in its enum). */
static const struct {
	const char *name;
	enum kfeature f;
} enumerators[] = {
	{"BPF_TRACE_RAW_TP", KF_TP_BTF},
	{"BPF_MAP_TYPE_TASK_STORAGE", KF_TASK_STORAGE},
	{"BPF_FUNC_task_storage_get", KF_TASK_STORAGE},
	{"BPF_FUNC_get_current_task_btf", KF_CURRENT_TASK_BTF},
	{"BPF_FUNC_get_attach_cookie", KF_ATTACH_COOKIE},
	{"BPF_F_MMAPABLE", KF_MMAPABLE},
	{"BPF_TRACE_ITER", KF_TASK_ITER},
	{"BPF_FUNC_loop", KF_BPF_LOOP},
	{"BPF_FUNC_send_signal_thread", KF_SEND_SIGNAL},
	{"BPF_FUNC_task_pt_regs", KF_TASK_PT_REGS},
	{"BPF_MAP_TYPE_RINGBUF", KF_RINGBUF},
	{"BPF_TRACE_UPROBE_MULTI", KF_UPROBE_MULTI},
	{"BPF_TRACE_UPROBE_SESSION", KF_UPROBE_SESSION},
};
#define NENUMERATORS (sizeof(enumerators) / sizeof(enumerators[0]))

/* Whether struct sname of btf has a member mname. */
static bool has_member(const struct btf *btf, const char *sname, const char *mname)
{
	int id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	const struct btf_type *t;
	const struct btf_member *m;
	unsigned i;

	if (id < 0)
		return false;
	t = btf__type_by_id(btf, (__u32)id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), mname))
			return true;
	return false;
}

/* Every enumerator of btf's enums against the table: found[i] for entry i. */
static void scan_enums(const struct btf *btf, bool *found)
{
	__u32 n = btf__type_cnt(btf), id;
	unsigned i, k;

	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (!btf_is_enum(t))
			continue;
		const struct btf_enum *e = btf_enum(t);

		for (i = 0; i < btf_vlen(t); i++, e++) {
			const char *nm = btf__name_by_offset(btf, e->name_off);

			if (!nm || nm[0] != 'B')
				continue;
			for (k = 0; k < NENUMERATORS; k++)
				if (!found[k] && !strcmp(nm, enumerators[k].name))
					found[k] = true;
		}
	}
}

/* The word in brackets of /sys/kernel/security/lockdown ("none
 * [integrity] confidentiality"), or "" when it cannot be read. */
static void read_lockdown(char *out, size_t len)
{
	char buf[128], *a, *b;
	FILE *f = fopen("/sys/kernel/security/lockdown", "re");

	out[0] = 0;
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f) && (a = strchr(buf, '[')) && (b = strchr(a, ']'))) {
		*b = 0;
		snprintf(out, len, "%s", a + 1);
	}
	fclose(f);
}

/* CABBPF_TEST_KERNEL_LACKS=name,name: as if those were absent. Returns
 * -EINVAL (logged) for a name that is no feature's. */
static int apply_test_lacks(struct kernel_features *kf)
{
	const char *env = getenv("CABBPF_TEST_KERNEL_LACKS");
	char buf[512], *tok, *save = NULL;
	unsigned f;

	if (!env || !*env)
		return 0;
	snprintf(buf, sizeof(buf), "%s", env);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (f = 0; f < KF__N; f++)
			if (!strcmp(tok, features__info[f].name))
				break;
		if (f == KF__N) {
			log_err("CABBPF_TEST_KERNEL_LACKS: no feature '%s'", tok);
			return -EINVAL;
		}
		kf->has[f] = false;
	}
	return 0;
}

int features__probe(struct kernel_features *kf)
{
	bool found[NENUMERATORS] = {0};
	struct utsname u;
	struct btf *btf;
	unsigned k;
	int err = 0;

	memset(kf, 0, sizeof(*kf));
	kf->probed = true;
	if (!uname(&u))
		snprintf(kf->release, sizeof(kf->release), "%s", u.release);
	read_lockdown(kf->lockdown, sizeof(kf->lockdown));
	kf->has[KF_KERNEL_READS] = strcmp(kf->lockdown, "confidentiality") != 0;
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		err = -errno ? -errno : -ENOENT;
		goto cleanup;
	}
	kf->has[KF_BTF] = true;
	scan_enums(btf, found);
	/* A feature named by several enumerators needs them all. */
	for (k = 0; k < NENUMERATORS; k++)
		kf->has[enumerators[k].f] = true;
	for (k = 0; k < NENUMERATORS; k++)
		if (!found[k])
			kf->has[enumerators[k].f] = false;
	kf->has[KF_TASK_ITER] &= btf__find_by_name_kind(btf, "bpf_iter__task", BTF_KIND_STRUCT) > 0;
	kf->has[KF_RETURN_INSTANCES] = has_member(btf, "task_struct", "utask") &&
				       has_member(btf, "uprobe_task", "return_instances") &&
				       has_member(btf, "return_instance", "stack") &&
				       has_member(btf, "return_instance", "orig_ret_vaddr");
	/* kfuncs are found as libbpf finds a __ksym: a FUNC of that name */
	kf->has[KF_RDONLY_CAST] = btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) > 0;
	/* (mm_struct's uprobes_state is in an anonymous struct of it) */
	kf->has[KF_XOL_AREA] = has_member(btf, "uprobes_state", "xol_area") &&
			       has_member(btf, "xol_area", "vaddr");
	kf->has[KF_UPROBE_SESSION] &=
		btf__find_by_name_kind(btf, "bpf_session_is_return", BTF_KIND_FUNC) > 0;
	btf__free(btf);
cleanup:
	if (apply_test_lacks(kf))
		return -EINVAL;
	return err;
}

const struct kernel_features *features__get(void)
{
	static struct kernel_features kf;

	if (!kf.probed) {
		int err = features__probe(&kf);

		if (err && kf.has[KF_BTF])
			log_debug("probing the kernel's features: %s", strerror(-err));
	}
	return &kf;
}

void features__choose(const struct kernel_features *kf, struct kernel_paths *p)
{
	unsigned f;

	memset(p, 0, sizeof(*p));
	p->multi_links = kf->has[KF_UPROBE_MULTI];
	/* a session link is a multi-uprobe link of another attach type */
	p->session = kf->has[KF_UPROBE_SESSION] && kf->has[KF_UPROBE_MULTI];
	p->io_casts = kf->has[KF_RDONLY_CAST];
	p->slot_reads = kf->has[KF_XOL_AREA];
	p->budget = p->multi_links;
	p->kernel_reads = kf->has[KF_KERNEL_READS];
	for (f = 0; f < KF__N; f++)
		if (!features__info[f].without && !kf->has[f])
			p->missing[p->nmissing++] = (enum kfeature)f;
}

int features__refuse(const struct kernel_features *kf, unsigned uses)
{
	unsigned f, n = 0;

	for (f = 0; f < KF__N; f++)
		if ((required_by[f] & uses) && !kf->has[f])
			n++;
	if (!n)
		return 0;
	log_err("this kernel (%s) lacks %u feature%s cabbpf needs here:", kf->release, n,
		n > 1 ? "s" : "");
	for (f = 0; f < KF__N; f++)
		if ((required_by[f] & uses) && !kf->has[f])
			fprintf(stderr, "  %-20s %s (Linux %s)\n", features__info[f].name,
				features__info[f].use, features__info[f].since);
	fprintf(stderr, "  (cabbpf runs on Linux 6.1 and later with BTF; 'cabbpf --features' "
			"lists what this kernel has)\n");
	return -EOPNOTSUPP;
}

/* Which uses an optional feature's absence costs. */
static unsigned costs(enum kfeature f)
{
	switch (f) {
	case KF_UPROBE_MULTI:
		return FU_CALLS | FU_WHOLE | FU_BUDGET;
	case KF_UPROBE_SESSION:
		return FU_WHOLE;
	case KF_RDONLY_CAST:
		return FU_IO;
	case KF_XOL_AREA:
		return FU_CALLS | FU_WHOLE;
	default:
		return 0;
	}
}

void features__say(const struct kernel_features *kf, unsigned uses)
{
	static bool said[KF__N];
	unsigned f;

	for (f = 0; f < KF__N; f++) {
		if (kf->has[f] || !features__info[f].without || said[f] ||
		    !(costs((enum kfeature)f) & uses))
			continue;
		said[f] = true;
		log_info("note: this kernel (%s) lacks %s (Linux %s): %s", kf->release,
			 features__info[f].what, features__info[f].since, features__info[f].without);
	}
}

int features__json(struct json *w, const struct kernel_features *kf)
{
	unsigned f;
	int err = 0;

	err |= json__begin_object(w);
	err |= json__kv_string(w, "release", kf->release);
	err |= json__kv_bool(w, "btf", kf->has[KF_BTF]);
	err |= json__kv_string(w, "lockdown", kf->lockdown[0] ? kf->lockdown : NULL);
	err |= json__key(w, "features");
	err |= json__begin_object(w);
	for (f = 0; f < KF__N; f++)
		err |= json__kv_bool(w, features__info[f].name, kf->has[f]);
	err |= json__end_object(w);
	err |= json__key(w, "missing");
	err |= json__begin_array(w);
	for (f = 0; f < KF__N; f++) {
		if (kf->has[f])
			continue;
		err |= json__begin_object(w);
		err |= json__kv_string(w, "feature", features__info[f].name);
		err |= json__kv_string(w, "since", features__info[f].since);
		err |= json__kv_bool(w, "required", !features__info[f].without);
		err |= json__kv_string(w, "use", features__info[f].use);
		err |= json__kv_string(w, "without", features__info[f].without);
		err |= json__end_object(w);
	}
	err |= json__end_array(w);
	err |= json__end_object(w);
	return err;
}

int features__report(const char *json_path)
{
	const struct kernel_features *kf = features__get();
	struct kernel_paths p;
	struct json *w = NULL;
	struct outfile of;
	unsigned f;
	int err;

	features__choose(kf, &p);
	printf("kernel %s, BTF %s, lockdown %s\n", kf->release, kf->has[KF_BTF] ? "yes" : "NO",
	       kf->lockdown[0] ? kf->lockdown : "unknown (securityfs not mounted)");
	printf("%-20s %-8s %-6s %s\n", "FEATURE", "PRESENT", "SINCE", "USED FOR / WITHOUT IT");
	for (f = 0; f < KF__N; f++) {
		const struct kfeature_info *i = &features__info[f];

		printf("%-20s %-8s %-6s %s\n", i->name, kf->has[f] ? "yes" : "no", i->since, i->use);
		if (!kf->has[f])
			printf("%-36s -> %s\n", "",
			       i->without ? i->without : "REQUIRED: cabbpf cannot trace without it");
	}
	if (p.nmissing)
		printf("cabbpf cannot trace on this kernel: %u required feature%s missing\n",
		       p.nmissing, p.nmissing > 1 ? "s" : "");
	else
		printf("paths: %s; whole-container return probes: %s; I/O file lookups: %s; "
		       "--budget: %s; return-address slots: %s\n",
		       p.multi_links ? "multi-uprobe links" : "one perf link per site",
		       p.session ? "session programs" : "none (entry probes only)",
		       p.io_casts ? "direct loads" : "probe reads",
		       p.budget ? "available" : "unavailable (needs multi-uprobe links)",
		       p.slot_reads ? "read at entries" : "not read (stack-pointer rules alone)");
	if (!json_path)
		return 0;
	err = outfile__open(&of, json_path);
	if (err) {
		log_err("cannot write --json %s: %s", json_path, outfile__strerror(err));
		return err;
	}
	err = json__new(of.f, true, &w);
	err = err ? err : json__begin_object(w);
	err = err ? err : json__key(w, "kernel");
	err = err ? err : features__json(w, kf);
	err = err ? err : json__end_object(w);
	err = err ? err : json__finish(w);
	json__free(w);
	err = outfile__finish(&of, err);
	if (err)
		log_err("writing --json %s: %s", json_path, outfile__strerror(err));
	return err;
}
