// SPDX-License-Identifier: BSD-2-Clause
/*
 * user/trace/guardian: the channel between cabbpf and the guard's tracer
 * process. A real process is started (guardian__start forks); a test
 * tracer in it answers as the guard's does and writes what it received
 * into memory shared with the test.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/trace/guardian.h"

/* What the test tracer saw, shared with the test. */
struct saw {
	int sets, set_fds_ok, links, sites, nudges;
	int64_t set_val;
	char path[256];
	size_t noffs;
	uint64_t offs_sum;
	int cabbpf_readable; /* its pidfd read as ended before any message */
	int protos;	     /* messages refused (-EPROTO) */
};

static struct saw *saw;

/* The test tracer: SEIZED with arg's value, then each message handled as
 * the guard does (an ACK for a SET); a NUDGE ends it with BYE (or, when
 * saw->nudges is preset to -1, without a word). */
static void tracer(void *arg, const struct guardian_end *e)
{
	struct guardian_msg *m = malloc(sizeof(*m));
	int op;
	size_t i;

	struct pollfd p = {e->cabbpf, POLLIN, 0};

	saw->cabbpf_readable = poll(&p, 1, 0) == 1;
	guardian__send(e->sock, GUARDIAN_SEIZED, (int64_t)(intptr_t)arg);
	if ((intptr_t)arg)
		_exit(0);
	while (m && (op = guardian__recv(e->sock, m, true)) != 0) {
		if (op == -EPROTO) {
			saw->protos++;
			continue;
		}
		if (op == GUARDIAN_SET) {
			struct stat sb;

			saw->sets++;
			saw->set_val = m->val;
			saw->set_fds_ok = 1;
			for (i = 0; i < m->nfds; i++)
				saw->set_fds_ok &= fstat(m->fds[i], &sb) == 0;
			saw->set_fds_ok &= m->nfds == 7;
			guardian__send(e->sock, GUARDIAN_ACK, 0);
		} else if (op == GUARDIAN_LINKS) {
			saw->links += (int)m->nfds;
		} else if (op == GUARDIAN_SITES) {
			const uint64_t *offs;
			const char *path;
			size_t n;

			if (!guardian__parse_sites(m, &path, &offs, &n)) {
				saw->sites++;
				snprintf(saw->path, sizeof(saw->path), "%s", path);
				saw->noffs += n;
				for (i = 0; i < n; i++)
					saw->offs_sum += offs[i];
			}
		} else if (op == GUARDIAN_NUDGE) {
			if (saw->nudges < 0)
				_exit(0);
			saw->nudges++;
			guardian__send(e->sock, GUARDIAN_BYE, 0);
			_exit(0);
		}
		for (i = 0; i < m->nfds; i++)
			close(m->fds[i]);
	}
	_exit(0);
}

static void setup(void)
{
	saw = mmap(NULL, sizeof(*saw), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(saw, MAP_FAILED);
	memset(saw, 0, sizeof(*saw));
}

static void teardown(void)
{
	munmap(saw, sizeof(*saw));
}

/* A set of seven descriptors reaches the tracer (its own copies, open),
 * answered before give_set returns; links and sites (more offsets than
 * one message holds) arrive whole; a nudge ends it, with its goodbye. */
START_TEST(set_links_sites_then_bye)
{
	struct guardian *gd = NULL;
	struct guardian_set s;
	uint64_t *offs = calloc(10000, sizeof(*offs)), sum = 0;
	int fds[7], links[3], i;

	ck_assert_ptr_nonnull(offs);
	for (i = 0; i < 7; i++)
		ck_assert_int_ge(fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC), 0);
	for (i = 0; i < 3; i++)
		links[i] = fds[i];
	s = (struct guardian_set){fds[0], fds[1], fds[2], fds[3], fds[4], fds[5], fds[6], 4096};
	ck_assert_int_eq(guardian__start(tracer, (void *)0, &gd), 0);
	ck_assert_int_eq(guardian__seized(gd), 0);
	ck_assert_int_eq(guardian__give_set(gd, &s), 0);
	ck_assert_int_eq(saw->sets, 1);
	ck_assert_int_eq(saw->set_fds_ok, 1);
	ck_assert_int_eq(saw->set_val, 4096);
	ck_assert_int_eq(guardian__give_links(gd, links, 3), 0);
	for (i = 0; i < 10000; i++) {
		offs[i] = (uint64_t)i * 16;
		sum += offs[i];
	}
	ck_assert_int_eq(guardian__give_sites(gd, "/usr/lib/x86_64-linux-gnu/libc.so.6", offs,
					      10000),
			 0);
	guardian__nudge(gd);
	ck_assert(guardian__end(gd));
	ck_assert_int_eq(saw->links, 3);
	ck_assert_int_eq(saw->sites, 3); /* 4096 offsets a message */
	ck_assert_str_eq(saw->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	ck_assert_uint_eq(saw->noffs, 10000);
	ck_assert_uint_eq(saw->offs_sum, sum);
	ck_assert_int_eq(saw->nudges, 1);
	ck_assert_int_eq(saw->protos, 0);
	ck_assert_int_eq(saw->cabbpf_readable, 0); /* cabbpf (this test) lives */
	for (i = 0; i < 7; i++)
		close(fds[i]);
	free(offs);
}
END_TEST

/* A tracer that cannot seize says so (its -errno comes back); one that
 * dies without a goodbye is told apart from a clean end. */
START_TEST(seize_error_and_death_told)
{
	struct guardian *gd = NULL;

	ck_assert_int_eq(guardian__start(tracer, (void *)(intptr_t)-EPERM, &gd), 0);
	ck_assert_int_eq(guardian__seized(gd), -EPERM);
	ck_assert(!guardian__end(gd));
	saw->nudges = -1;
	ck_assert_int_eq(guardian__start(tracer, (void *)0, &gd), 0);
	ck_assert_int_eq(guardian__seized(gd), 0);
	guardian__nudge(gd);
	ck_assert(!guardian__end(gd));
	/* NULL everywhere on cabbpf's side */
	ck_assert_int_eq(guardian__seized(NULL), 0);
	ck_assert_int_eq(guardian__give_links(NULL, NULL, 0), 0);
	guardian__nudge(NULL);
	ck_assert(guardian__end(NULL));
}
END_TEST

/* A message that is not one the channel sends (short, or cut) is refused
 * whole; a sites message whose path is not terminated is refused. */
START_TEST(bad_messages_refused)
{
	struct guardian_msg *m = malloc(sizeof(*m));
	const char junk[5] = "abcd";
	const char *path;
	const uint64_t *offs;
	size_t n;
	int sv[2];

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	ck_assert_int_eq(guardian__recv(sv[1], m, false), -EAGAIN);
	ck_assert_int_eq(write(sv[0], junk, sizeof(junk)), (ssize_t)sizeof(junk));
	ck_assert_int_eq(guardian__recv(sv[1], m, true), -EPROTO);
	ck_assert_int_eq(guardian__send(sv[0], GUARDIAN_NUDGE, 5), 0);
	ck_assert_int_eq(guardian__recv(sv[1], m, true), GUARDIAN_NUDGE);
	ck_assert_int_eq(m->val, 5);
	ck_assert_uint_eq(m->nfds, 0);
	memset(m, 0, sizeof(*m));
	m->op = GUARDIAN_SITES;
	m->val = 8;
	m->len = 16;
	memcpy(m->data, "abcdefghijklmnop", 16);
	ck_assert_int_eq(guardian__parse_sites(m, &path, &offs, &n), -EPROTO); /* no NUL */
	memset(m->data + 3, 0, 5);
	m->val = 4; /* offsets not aligned */
	ck_assert_int_eq(guardian__parse_sites(m, &path, &offs, &n), -EPROTO);
	m->val = 8;
	ck_assert_int_eq(guardian__parse_sites(m, &path, &offs, &n), 0);
	ck_assert_str_eq(path, "abc");
	ck_assert_uint_eq(n, 1);
	close(sv[0]);
	ck_assert_int_eq(guardian__recv(sv[1], m, true), 0); /* its end */
	close(sv[1]);
	free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("guardian");
	TCase *tc = tcase_create("guardian");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, set_links_sites_then_bye);
	tcase_add_test(tc, seize_error_and_death_told);
	tcase_add_test(tc, bad_messages_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
