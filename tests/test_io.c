// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit suite for issue 4's pure logic: container ids from cgroup paths,
 * container and cgroup resolution on a fake cgroup tree in a temp dir, the
 * 3-word I/O record, the "io" analyzer's charging of I/O to live
 * activations (inclusive, self, recursion, outside), and the --cgroup path
 * checks. No root or BPF needed.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzers/io.h"
#include "pipeline/record.h"
#include "pipeline/runner.h"
#include "cabbpf_event.h"
#include "user/proc/container.h"
#include "user/proc/ctnames.h"
#include "common/syscalls.h"
#include "user/iomode/iotrace.h"
#include "user/proc/cgroup.h"

#define ID_A "3f2a9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b"
#define ID_D "3f2a11111111111111111111111111111111111111111111111111111111111d"
#define ID_B "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0"
#define ID_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define ID_E "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

START_TEST(test_container_id_from_path)
{
	char id[CONTAINER_ID_LEN + 1];
	const char *rt = NULL;

	ck_assert(container__id_from_path("/system.slice/docker-" ID_A ".scope", id, &rt));
	ck_assert_str_eq(id, ID_A);
	ck_assert_str_eq(rt, "docker");
	ck_assert(container__id_from_path("/docker/" ID_B, id, &rt));
	ck_assert_str_eq(id, ID_B);
	ck_assert_str_eq(rt, "docker");
	ck_assert(container__id_from_path(
		"/kubepods.slice/kubepods-burstable.slice/pod1.slice/cri-containerd-" ID_C ".scope",
		id, &rt));
	ck_assert_str_eq(id, ID_C);
	ck_assert_str_eq(rt, "containerd");
	ck_assert(container__id_from_path("/kubepods/burstable/pod1234/" ID_C, id, &rt));
	ck_assert_str_eq(rt, "containerd");
	ck_assert(container__id_from_path("/machine.slice/crio-" ID_E ".scope", id, &rt));
	ck_assert_str_eq(rt, "crio");
	/* podman puts the payload in a child: the outer directory names it. */
	ck_assert(container__id_from_path("/machine.slice/libpod-" ID_E ".scope/container", id,
					  &rt));
	ck_assert_str_eq(id, ID_E);
	ck_assert_str_eq(rt, "podman");
	ck_assert(container__id_from_path("/sys/fs/cgroup/unified/x/docker-" ID_A ".scope", id,
					  NULL));
	/* Not containers. */
	ck_assert(!container__id_from_path("/", id, &rt));
	ck_assert(!container__id_from_path("/user.slice/user-0.slice/session-1.scope", id, &rt));
	ck_assert(!container__id_from_path("/docker-3f2a.scope", id, &rt));
	ck_assert(!container__id_from_path("/docker/" "3F2A9C0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A6B7C8D"
					   "9E0F1A2B3C4D5E6F7A8B",
					   id, &rt));
	ck_assert(!container__id_from_path("/libpod-conmon-x.scope", id, &rt));
}
END_TEST

static char tree[256];

static void mkdirs(const char *rel)
{
	char path[1024], *p;

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	for (p = path + strlen(tree) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

static void make_tree(void)
{
	snprintf(tree, sizeof(tree), "/tmp/cabbpf-cgtree.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tree));
	mkdirs("system.slice/docker-" ID_A ".scope");
	mkdirs("system.slice/docker-" ID_D ".scope");
	mkdirs("kubepods/burstable/pod42/" ID_B);
	mkdirs("machine.slice/libpod-" ID_E ".scope/container");
	mkdirs("user.slice/user-0.slice");
}

static void rm_tree(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_container_resolve)
{
	char out[1024], want[1024];

	make_tree();
	ck_assert_int_eq(container__resolve(tree, ID_A, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/system.slice/docker-" ID_A ".scope", tree);
	ck_assert_str_eq(out, want);
	/* A unique prefix. */
	ck_assert_int_eq(container__resolve(tree, "3f2a9c", out, sizeof(out)), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(container__resolve(tree, "b0b0", out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/kubepods/burstable/pod42/" ID_B, tree);
	ck_assert_str_eq(out, want);
	/* The outer directory of a podman container, not its child. */
	ck_assert_int_eq(container__resolve(tree, ID_E, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/machine.slice/libpod-" ID_E ".scope", tree);
	ck_assert_str_eq(out, want);
	/* Errors. */
	ck_assert_int_eq(container__resolve(tree, "3f2a", out, sizeof(out)), -ENOTUNIQ);
	ck_assert_int_eq(container__resolve(tree, "dead", out, sizeof(out)), -ENOENT);
	ck_assert_int_eq(container__resolve(tree, "3f2", out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(container__resolve(tree, "xyz1", out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(container__resolve(tree, "3F2A", out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(container__resolve("/nonexistent-cabbpf", "3f2a", out, sizeof(out)),
			 -ENOENT);
	ck_assert_int_eq(container__resolve(tree, ID_A, out, 10), -ENAMETOOLONG);
	rm_tree();
}
END_TEST

/* Container names from podman's and docker's state files (fake ones). */
START_TEST(test_ctnames_lookup)
{
	char dir[256], path[512], id[CONTAINER_ID_LEN + 1];
	struct ctnames_dirs d;
	const char *rt = NULL;
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/cabbpf-ctnames.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* podman (containers-storage): compact, as written, and two names. */
	snprintf(path, sizeof(path), "%s/containers.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[{\"id\":\"" ID_A "\",\"names\":[\"web\"],\"metadata\":"
		   "\"{\\\"name\\\":\\\"decoy\\\"}\"},\n"
		   " {\"id\": \"" ID_E "\", \"names\": [\"db-1\", \"db.alias\"]}]");
	fclose(f);
	/* docker: <id>/config.v2.json */
	snprintf(path, sizeof(path), "%s/docker", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/docker/" ID_D, dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/docker/" ID_D "/config.v2.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"ID\":\"" ID_D "\",\"Name\":\"/cache\",\"State\":{}}");
	fclose(f);
	snprintf(path, sizeof(path), "%s/containers.json", dir);
	d.podman_json = path;
	{
		char ddir[300];

		snprintf(ddir, sizeof(ddir), "%s/docker", dir);
		d.docker_dir = ddir;
		ck_assert_int_eq(ctnames__lookup(&d, "web", id, &rt), 0);
		ck_assert_str_eq(id, ID_A);
		ck_assert_str_eq(rt, "podman");
		ck_assert_int_eq(ctnames__lookup(&d, "db.alias", id, &rt), 0);
		ck_assert_str_eq(id, ID_E);
		ck_assert_int_eq(ctnames__lookup(&d, "db-1", id, &rt), 0);
		ck_assert_str_eq(id, ID_E);
		ck_assert_int_eq(ctnames__lookup(&d, "cache", id, &rt), 0);
		ck_assert_str_eq(id, ID_D);
		ck_assert_str_eq(rt, "docker");
		/* Not names: a value that is no container's name, a prefix of
		 * one, and what no runtime accepts as a name. */
		ck_assert_int_eq(ctnames__lookup(&d, "decoy", id, &rt), -ENOENT);
		ck_assert_int_eq(ctnames__lookup(&d, "db", id, &rt), -ENOENT);
		ck_assert_int_eq(ctnames__lookup(&d, "a/b", id, &rt), -EINVAL);
		ck_assert_int_eq(ctnames__lookup(&d, "", id, &rt), -EINVAL);
		/* The same name in both runtimes. */
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fprintf(f, "[{\"id\":\"" ID_A "\",\"names\":[\"cache\"]}]");
		fclose(f);
		ck_assert_int_eq(ctnames__lookup(&d, "cache", id, &rt), -ENOTUNIQ);
	}
	/* Missing state files: no container by any name. */
	d.podman_json = "/nonexistent-cabbpf/containers.json";
	d.docker_dir = "/nonexistent-cabbpf";
	ck_assert_int_eq(ctnames__lookup(&d, "web", id, &rt), -ENOENT);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

START_TEST(test_cgroup_path_of)
{
	char out[1024], want[1024];
	struct stat st;

	make_tree();
	snprintf(want, sizeof(want), "%s/user.slice/user-0.slice", tree);
	ck_assert_int_eq(stat(want, &st), 0);
	ck_assert_int_eq(container__cgroup_path(tree, st.st_ino, out, sizeof(out)), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(stat(tree, &st), 0);
	ck_assert_int_eq(container__cgroup_path(tree, st.st_ino, out, sizeof(out)), 0);
	ck_assert_str_eq(out, tree);
	ck_assert_int_eq(container__cgroup_path(tree, 1ULL << 62, out, sizeof(out)), -ENOENT);
	rm_tree();
}
END_TEST

START_TEST(test_rec_io_roundtrip)
{
	struct rec_io a = {
		.sc = CABBPF_SC_MSGSND,
		.fdkind = CABBPF_FD_NONE,
		.flags = CABBPF_IO_ERR,
		.fd = -1,
		.ts = 123456789,
		.req = 4096,
		.ret = 11,
	}, b;
	uint64_t w[REC_WORDS];
	struct rec r;

	rec__encode_io(w, &a);
	ck_assert(w[0] != 0 && w[0] != ~0ULL);
	rec__decode(w, &r);
	ck_assert_uint_eq(r.kind, CABBPF_EV_IO);
	rec__decode_io(w, &b);
	ck_assert_int_eq(b.sc, a.sc);
	ck_assert_int_eq(b.fdkind, a.fdkind);
	ck_assert_int_eq(b.flags, a.flags);
	ck_assert_int_eq(b.fd, -1);
	ck_assert_uint_eq(b.ts, a.ts);
	ck_assert_uint_eq(b.req, 4096);
	ck_assert_uint_eq(b.ret, 11);
	/* Largest values, and the 32-bit clamp of the loader. */
	a.sc = CABBPF_SC__MAX - 1;
	a.fdkind = CABBPF_FD__MAX - 1;
	a.flags = 0;
	a.fd = 0x7fffffff;
	a.req = rec__clamp32(1ULL << 40);
	a.ret = UINT32_MAX - 1;
	rec__encode_io(w, &a);
	ck_assert(w[0] != 0 && w[0] != ~0ULL);
	rec__decode_io(w, &b);
	ck_assert_int_eq(b.sc, CABBPF_SC__MAX - 1);
	ck_assert_int_eq(b.fdkind, CABBPF_FD__MAX - 1);
	ck_assert_int_eq(b.fd, 0x7fffffff);
	ck_assert_uint_eq(b.req, UINT32_MAX);
	ck_assert_uint_eq(b.ret, UINT32_MAX - 1);
	ck_assert_uint_eq(rec__clamp32(5), 5);
}
END_TEST

static const char *const fnames[] = {"main", "a", "b"};

static void put_call(uint64_t *w, uint32_t kind, uint32_t fid, uint64_t sp, uint64_t *ts)
{
	rec__encode(w, kind, fid, (*ts)++, sp);
}

static void put_io(uint64_t *w, uint32_t sc, uint32_t ret, bool failed, uint64_t *ts)
{
	struct rec_io r = {
		.sc = sc,
		.fdkind = CABBPF_FD_FILE,
		.flags = failed ? CABBPF_IO_ERR : 0,
		.fd = 3,
		.ts = (*ts)++,
		.req = 100,
		.ret = ret,
	};

	rec__encode_io(w, &r);
}

/*
 * main { read 100 in a { write 50 in a (recursive) { read 7 } } ;
 *        failed read in main; read 10 in b } ; read 5 outside.
 * Stack pointers go down with depth; returns are at entry sp + 8.
 */
START_TEST(test_io_analyzer_charging)
{
	struct runner_opts o = {.fnames = fnames, .nfuncs = 3, .analyzers = "count,io"};
	uint64_t w[32 * REC_WORDS], ts = 1000;
	struct runner *r = NULL;
	struct io_totals t;
	struct io_sc_totals sc;
	struct runner_stats st;
	const void *a;
	uint32_t n = 0;

#define W (w + (size_t)(n++) * REC_WORDS)
	put_call(W, CABBPF_EV_ENTRY, 0, 0x1000, &ts);
	put_call(W, CABBPF_EV_ENTRY, 1, 0xf00, &ts);
	put_io(W, CABBPF_SC_READ, 100, false, &ts);
	put_call(W, CABBPF_EV_ENTRY, 1, 0xe00, &ts);
	put_io(W, CABBPF_SC_WRITE, 50, false, &ts);
	put_io(W, CABBPF_SC_READV, 7, false, &ts);
	put_call(W, CABBPF_EV_RETURN, 1, 0xe08, &ts);
	put_call(W, CABBPF_EV_RETURN, 1, 0xf08, &ts);
	put_io(W, CABBPF_SC_READ, 0, true, &ts);
	put_call(W, CABBPF_EV_ENTRY, 2, 0xf00, &ts);
	put_io(W, CABBPF_SC_READ, 10, false, &ts);
	put_call(W, CABBPF_EV_RETURN, 2, 0xf08, &ts);
	put_call(W, CABBPF_EV_RETURN, 0, 0x1008, &ts);
	put_io(W, CABBPF_SC_READ, 5, false, &ts);
#undef W
	ck_assert_int_eq(runner__new(&o, NULL, 0, &r), 0);
	ck_assert_int_eq(runner__feed(r, 77, 0, w, n), 0);
	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.records, 8);
	ck_assert_uint_eq(st.io_records, 6);
	ck_assert_uint_eq(st.bad_records, 0);
	ck_assert_uint_eq(st.returns.matched, 4);
	a = runner__analyzer(r, "io");
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(io__events(a), 6);
	io__fn(a, 0, &t); /* main: everything but the outside read */
	ck_assert_uint_eq(t.in_bytes, 117);
	ck_assert_uint_eq(t.in_calls, 4); /* the failed read counts as a call */
	ck_assert_uint_eq(t.out_bytes, 50);
	ck_assert_uint_eq(t.out_calls, 1);
	ck_assert_uint_eq(t.self_in_bytes, 0);
	io__fn(a, 1, &t); /* a: once per I/O despite two live activations */
	ck_assert_uint_eq(t.in_bytes, 107);
	ck_assert_uint_eq(t.in_calls, 2);
	ck_assert_uint_eq(t.out_bytes, 50);
	ck_assert_uint_eq(t.out_calls, 1);
	ck_assert_uint_eq(t.self_in_bytes, 107);
	ck_assert_uint_eq(t.self_out_bytes, 50);
	io__fn(a, 2, &t);
	ck_assert_uint_eq(t.in_bytes, 10);
	ck_assert_uint_eq(t.self_in_bytes, 10);
	io__fn(a, 99, &t);
	ck_assert_uint_eq(t.in_calls, 0);
	io__outside(a, &t);
	ck_assert_uint_eq(t.in_bytes, 5);
	ck_assert_uint_eq(t.in_calls, 1);
	io__sc(a, CABBPF_SC_READ, CABBPF_FD_FILE, &sc);
	ck_assert_uint_eq(sc.calls, 4);
	ck_assert_uint_eq(sc.errors, 1);
	ck_assert_uint_eq(sc.bytes, 115);
	ck_assert_uint_eq(sc.req, 300);
	ck_assert_uint_eq(sc.short_calls, 2); /* 10 and 5 of 100; the failed one is no short read */
	io__thread(a, 77, &t);
	ck_assert_uint_eq(t.in_bytes, 122);
	ck_assert_uint_eq(t.out_bytes, 50);
	runner__free(r);
}
END_TEST

/* Two analyzer threads: instances merge into the same totals. */
START_TEST(test_io_analyzer_merge)
{
	struct runner_opts o = {.fnames = fnames, .nfuncs = 3, .analyzers = "io", .nthreads = 2};
	uint64_t w[4 * REC_WORDS], ts = 1;
	struct runner *r = NULL;
	struct io_totals t;
	uint32_t tid;

	ck_assert_int_eq(runner__new(&o, NULL, 0, &r), 0);
	for (tid = 10; tid < 14; tid++) {
		put_call(w, CABBPF_EV_ENTRY, 1, 0x100, &ts);
		put_io(w + REC_WORDS, CABBPF_SC_RECVFROM, 8, false, &ts);
		put_call(w + 2 * REC_WORDS, CABBPF_EV_RETURN, 1, 0x108, &ts);
		ck_assert_int_eq(runner__feed(r, tid, 0, w, 3), 0);
	}
	ck_assert_int_eq(runner__join(r), 0);
	io__fn(runner__analyzer(r, "io"), 1, &t);
	ck_assert_uint_eq(t.in_bytes, 32);
	ck_assert_uint_eq(t.in_calls, 4);
	io__thread(runner__analyzer(r, "io"), 13, &t);
	ck_assert_uint_eq(t.in_bytes, 8);
	runner__free(r);
}
END_TEST

START_TEST(test_open_cgroup_checks)
{
	char f[] = "/tmp/cabbpf-notdir.XXXXXX";
	int fd = mkstemp(f);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(cgroup__open("/nonexistent/cabbpf"), -ENOENT);
	ck_assert_int_eq(cgroup__open("/tmp"), -EMEDIUMTYPE);
	ck_assert_int_eq(cgroup__open(f), -ENOTDIR);
	unlink(f);
	ck_assert_str_eq(syscalls__name(CABBPF_SC_RECVMMSG), "recvmmsg");
	ck_assert_str_eq(syscalls__name(CABBPF_SC__MAX), "?");
	ck_assert_str_eq(syscalls__fdkind_name(CABBPF_FD_TTY), "tty");
	ck_assert(!CABBPF_SC_IS_OUTPUT(CABBPF_SC_MSGRCV));
	ck_assert(CABBPF_SC_IS_OUTPUT(CABBPF_SC_WRITE));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("io");
	TCase *tc = tcase_create("io");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_container_id_from_path);
	tcase_add_test(tc, test_container_resolve);
	tcase_add_test(tc, test_cgroup_path_of);
	tcase_add_test(tc, test_ctnames_lookup);
	tcase_add_test(tc, test_rec_io_roundtrip);
	tcase_add_test(tc, test_io_analyzer_charging);
	tcase_add_test(tc, test_io_analyzer_merge);
	tcase_add_test(tc, test_open_cgroup_checks);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
