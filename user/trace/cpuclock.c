// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>

#include "user/trace/cpuclock.h"

struct cpuclock {
	struct bpf_link **links; /* one per possible CPU (NULL: not online) */
	int ncpus;
};

int cpuclock__attach(struct bpf_program *prog, uint64_t period_ns, bool kernel,
		     struct cpuclock **out)
{
	struct perf_event_attr attr;
	struct cpuclock *c;
	int cpu, n = 0, err = 0;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0) {
		err = c->ncpus ? c->ncpus : -EINVAL;
		goto cleanup;
	}
	c->links = calloc((size_t)c->ncpus, sizeof(*c->links));
	if (!c->links) {
		err = -ENOMEM;
		goto cleanup;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = period_ns;
	/* A probe's trap is kernel mode: with user mode only, its ticks never
	 * reach the program (the hrtimer drops them), so what it sees is the
	 * target's own execution; with kernel mode, the program sorts them. */
	attr.exclude_kernel = !kernel;
	attr.exclude_hv = 1;
	for (cpu = 0; cpu < c->ncpus; cpu++) {
		int fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
				      PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno == ENODEV || errno == ENOENT)
				continue; /* a possible CPU that is not online */
			err = -errno;
			goto cleanup;
		}
		c->links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!c->links[cpu]) {
			err = -errno;
			close(fd);
			goto cleanup;
		}
		n++;
	}
	if (!n) {
		err = -ENODEV;
		goto cleanup;
	}
	*out = c;
	return 0;
cleanup:
	cpuclock__free(c);
	return err;
}

void cpuclock__free(struct cpuclock *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; c->links && i < c->ncpus; i++)
		bpf_link__destroy(c->links[i]); /* closes its perf event fd too */
	free(c->links);
	free(c);
}
