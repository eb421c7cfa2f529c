// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "user/kernel/bpfload.h"
#include "user/trace/progress.h"
#include "progress.skel.h"

struct progress {
	struct progress_bpf *skel;
	struct bpf_link **links; /* one per CPU */
	int ncpus;
};

int progress__open(pid_t pid, struct progress **out)
{
	struct perf_event_attr attr;
	struct bpfload_log lg;
	struct progress *p;
	int cpu, err = 0;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		err = p->ncpus ? p->ncpus : -EINVAL;
		goto cleanup;
	}
	p->links = calloc((size_t)p->ncpus, sizeof(*p->links));
	p->skel = progress_bpf__open();
	if (!p->links || !p->skel) {
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
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = PROGRESS_TICK_NS;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	for (cpu = 0; cpu < p->ncpus; cpu++) {
		int fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
				      PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno == ENODEV || errno == ENOENT)
				continue; /* a possible CPU that is not online */
			err = -errno;
			goto cleanup;
		}
		p->links[cpu] = bpf_program__attach_perf_event(p->skel->progs.on_tick, fd);
		if (!p->links[cpu]) {
			err = -errno;
			close(fd);
			goto cleanup;
		}
	}
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
	int i;

	if (!p)
		return;
	for (i = 0; p->links && i < p->ncpus; i++)
		bpf_link__destroy(p->links[i]); /* closes its perf event fd too */
	free(p->links);
	progress_bpf__destroy(p->skel);
	free(p);
}
