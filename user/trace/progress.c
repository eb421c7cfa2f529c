// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "user/kernel/bpfload.h"
#include "user/trace/cpuclock.h"
#include "user/trace/progress.h"
#include "progress.skel.h"

struct progress {
	struct progress_bpf *skel;
	struct cpuclock *clock;
	int ncpus;
};

int progress__open(pid_t pid, struct progress **out)
{
	struct bpfload_log lg;
	struct progress *p;
	int err = 0;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		err = p->ncpus ? p->ncpus : -EINVAL;
		goto cleanup;
	}
	p->skel = progress_bpf__open();
	if (!p->skel) {
		err = -ENOMEM;
		goto cleanup;
	}
	p->skel->rodata->target_tgid = (__u32)pid;
	bpfload__begin(&lg);
	err = progress_bpf__load(p->skel);
	bpfload__end(&lg);
	if (err)
		bpfload__explain(&lg, "the progress counter's BPF object", err);
	bpfload__free(&lg);
	if (err)
		goto cleanup;
	err = cpuclock__attach(p->skel->progs.on_tick, PROGRESS_TICK_NS, false, &p->clock);
	if (err)
		goto cleanup;
	*out = p;
	return 0;
cleanup:
	log_warn("sampling: no CPU clock to measure the target's progress (%s): windows are "
		 "measured in wall time",
		 strerror(-err));
	progress__free(p);
	return err;
}

uint64_t progress__ticks(const struct progress *p)
{
	uint64_t *vals, sum = 0;
	__u32 k = 0;
	int i;

	if (!p)
		return 0;
	vals = calloc((size_t)p->ncpus, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.ticks), &k, vals))
		for (i = 0; i < p->ncpus; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

void progress__free(struct progress *p)
{
	if (!p)
		return;
	cpuclock__free(p->clock);
	progress_bpf__destroy(p->skel);
	free(p);
}
