// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recording format (user/record/recfmt_write.c, recfmt_read.c): a recording written and read
 * back field by field; every truncation and every single-byte corruption
 * of a real-size recording refused with a message naming the byte, never a
 * crash; blocks out of order, bad lengths and wrong END totals refused with
 * their own message; the report of a recording through the runner. No
 * privileges needed (the kernel side is in test_record_integration).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "cabbpf_event.h"
#include "pipeline/record.h"
#include "pipeline/runner.h"
#include "analyzers/count.h"
#include "user/record/recfmt.h"
#include "user/modes/offline.h"

static const char *const names[] = {"main", "parse", "ns::lex(int)"};
static const char *const lnames[] = {"main", "parse", "_ZN2ns3lexEi"};
static const char *const bins[] = {NULL, NULL, "/usr/lib/libfoo.so"};
static const uint64_t offs[] = {0x1130, 0x1200, 0x4000};
static const double costs[] = {650.5, 12000.25, 300};
static const uint32_t aft_in[] = {60, 110, 5}, aft_out[] = {2, 10, 48};
static const uint64_t lost_cpu[] = {1, 2, 3, 4, 5, 6};
static const struct an_bin sbins[] = {{"/usr/bin/prog", "e09dba08e909e021"},
				      {"/usr/lib/libfoo.so", NULL}};
static const struct an_src srcs[] = {
	{"/src/prog/main.c", 12, 0, 0x1130, 40, 0x1130},
	{"/src/prog/parse.c", 7, 0, 0x1200, 96, 0x1200},
	{NULL, 0, 1, 0x4000, 8, 0x3000}, /* no DWARF */
};

#define NTHREADS 3
#define PER_THREAD 600 /* calls of parse per thread: several chunks each */

/* The records of thread t: main calls parse PER_THREAD times, each parse
 * calls lex once; then main returns. Returns the count written. */
static uint32_t thread_records(uint32_t t, uint64_t *w)
{
	uint64_t ts = 1000000 * (t + 1), sp = 0x7ffd0000;
	uint32_t n = 0, i;

	rec__encode(w + 3 * n++, CABBPF_EV_ENTRY, 0, ts++, sp);
	for (i = 0; i < PER_THREAD; i++) {
		rec__encode(w + 3 * n++, CABBPF_EV_ENTRY, 1, ts++, sp - 16);
		rec__encode(w + 3 * n++, CABBPF_EV_ENTRY, 2, ts++, sp - 32);
		rec__encode(w + 3 * n++, CABBPF_EV_RETURN, 2, ts++, sp - 24);
		rec__encode(w + 3 * n++, CABBPF_EV_RETURN, 1, ts++, sp - 8);
	}
	rec__encode(w + 3 * n++, CABBPF_EV_RETURN, 0, ts++, sp + 8);
	return n;
}

/* make_recording's, with (format 9) or without each function's
 * aftermath: a recording made as an older format's has none. */
static bool with_aft = true;

/* A recording of NTHREADS threads into a malloc'd buffer (*len bytes). */
static char *make_recording(size_t *len)
{
	static uint64_t w[3 * (4 * PER_THREAD + 2)];
	struct recfmt_writer *wr;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	uint32_t t, n, at;
	struct recfmt_meta m = {.pid = 4242,
				.comm = "prog",
				.binary = "/usr/bin/prog",
				.flags = RECFMT_F_CPU_TIME | RECFMT_F_MULTI,
				.ncpus = 2,
				.start_realtime_ns = 1700000000123456789ull,
				.tool = "cabbpf test"};
	struct recfmt_funcs fn = {3,	 names, lnames, bins, offs, costs,
				  with_aft ? aft_in : NULL, with_aft ? aft_out : NULL};
	struct recfmt_source src = {3, srcs, 2, sbins};
	struct recfmt_summary s = {
		.nfuncs = 3,
		.duration_s = 1.25,
		.cpu_s = 0.5,
		.events = NTHREADS * (4 * PER_THREAD + 2),
		.lost = 21,
		.lost_calls = 9,
		.lost_io = 7,
		.lost_guard = 5,
		.lost_sched = 3,
		.ncpus = 2,
		.lost_per_cpu = lost_cpu,
		.cab = {1, 2, 3, 4, 5, 6},
		.stop_reason = "target exited",
		.exited = true,
		.has_guard = true,
		.exit_status = 256,
		.execs = 1,
		.guard = {1, 2, 3, 4, 5, 6, 7, 8, .detach_in_place = 12, .detach_cut_short = 13},
		.tstab_taken = 9,
		.nostate = 10,
		.ring_bytes = 4u << 20,
		.sched_unseen = 11,
		.cpu_sample_ns = 1000000,
		.samples_probe = 14,
		.samples_nostate = 15,
		.samples_lost = 16,
		.samples_kernel = 2,
		.samples_syscall = 17,
		.samples_trap = 18,
		.samples_fault = 19,
		.samples_resume = 20,
		.has_kernel = true,
		.kernel = {.release = "6.1.0-test", .lockdown = "integrity", .probed = true}};

	ck_assert_ptr_nonnull(f);
	s.kernel.has[KF_BTF] = s.kernel.has[KF_TASK_STORAGE] = s.kernel.has[KF_RDONLY_CAST] = true;
	ck_assert_int_eq(recfmt__writer_new(f, 1, &wr), 0);
	ck_assert_int_eq(recfmt__put_meta(wr, &m), 0);
	ck_assert_int_eq(recfmt__put_funcs(wr, &fn), 0);
	/* Interleaved chunks of 100 records, as the runner takes them. */
	for (at = 0; at < 4 * PER_THREAD + 2; at += 100)
		for (t = 0; t < NTHREADS; t++) {
			n = thread_records(t, w);
			ck_assert_int_eq(recfmt__put_chunk(wr, 100 + t, at, w + 3 * at,
							   n - at < 100 ? n - at : 100),
					 0);
		}
	ck_assert_int_eq(recfmt__put_summary(wr, &s), 0);
	ck_assert_int_eq(recfmt__put_source(wr, &src), 0);
	ck_assert_int_eq(recfmt__finish(wr), 0);
	recfmt__writer_free(wr);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

/* Read all of buf[0..len); stderr into err (if not NULL). Returns 0 or
 * the reader's error; *chunks and *records: what was read. */
static int read_all(const char *buf, size_t len, char *err, size_t errlen, uint64_t *records)
{
	struct recfmt_reader *r = NULL;
	struct recfmt_item it;
	FILE *f = fmemopen((void *)buf, len ? len : 1, "rb");
	char tmp[] = "/tmp/cabbpf-rec-err.XXXXXX";
	int fd = mkstemp(tmp), saved, ret;
	ssize_t n;

	ck_assert(f && fd >= 0);
	if (!len) { /* fmemopen refuses size 0: an empty stream */
		fclose(f);
		f = fopen("/dev/null", "rb");
	}
	unlink(tmp);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	*records = 0;
	ret = recfmt__reader_new(f, "rec", &r);
	if (!ret)
		while ((ret = recfmt__next(r, &it)) == 1)
			if (it.type == RECFMT_CHUNK)
				*records += it.nrec;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (err) {
		lseek(fd, 0, SEEK_SET);
		n = read(fd, err, errlen - 1);
		err[n > 0 ? n : 0] = 0;
	}
	close(fd);
	recfmt__reader_free(r);
	fclose(f);
	return ret;
}

START_TEST(round_trip)
{
	size_t len;
	char *buf = make_recording(&len);
	FILE *f = fmemopen(buf, len, "rb");
	struct recfmt_reader *r;
	const struct recfmt_meta *m;
	const struct recfmt_funcs *fn;
	const struct recfmt_summary *s;
	struct recfmt_item it;
	uint64_t seen[NTHREADS] = {0}, w[3 * (4 * PER_THREAD + 2)];
	uint32_t i, t;
	int ret;

	ck_assert_int_eq(recfmt__reader_new(f, "mem", &r), 0);
	ck_assert_uint_eq(recfmt__version(r), RECFMT_VERSION);
	ck_assert_ptr_null(recfmt__meta(r));
	ck_assert_int_eq(recfmt__next(r, &it), 1);
	ck_assert_int_eq(it.type, RECFMT_META);
	m = recfmt__meta(r);
	ck_assert_int_eq(m->pid, 4242);
	ck_assert_str_eq(m->comm, "prog");
	ck_assert_str_eq(m->binary, "/usr/bin/prog");
	ck_assert_uint_eq(m->flags, RECFMT_F_CPU_TIME | RECFMT_F_MULTI);
	ck_assert_uint_eq(m->ncpus, 2);
	ck_assert_uint_eq(m->start_realtime_ns, 1700000000123456789ull);
	ck_assert_str_eq(m->tool, "cabbpf test");
	ck_assert_int_eq(recfmt__next(r, &it), 1);
	ck_assert_int_eq(it.type, RECFMT_FUNCS);
	fn = recfmt__funcs(r);
	ck_assert_uint_eq(fn->n, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_str_eq(fn->names[i], names[i]);
		ck_assert_str_eq(fn->lnames[i], lnames[i]);
		ck_assert_uint_eq(fn->offsets[i], offs[i]);
		ck_assert(fn->probe_ns[i] == costs[i]);
		ck_assert_uint_eq(fn->aft_in[i], aft_in[i]);
		ck_assert_uint_eq(fn->aft_out[i], aft_out[i]);
	}
	ck_assert_ptr_null(fn->binaries[0]);
	ck_assert_str_eq(fn->binaries[2], bins[2]);
	while ((ret = recfmt__next(r, &it)) == 1 && it.type == RECFMT_CHUNK) {
		t = it.tid - 100;
		ck_assert_uint_lt(t, NTHREADS);
		ck_assert_uint_eq(it.seq, seen[t]);
		thread_records(t, w);
		ck_assert_mem_eq(it.recs, w + 3 * it.seq, it.nrec * 24);
		seen[t] += it.nrec;
	}
	for (t = 0; t < NTHREADS; t++)
		ck_assert_uint_eq(seen[t], 4 * PER_THREAD + 2);
	ck_assert_int_eq(ret, 1);
	ck_assert_int_eq(it.type, RECFMT_SUMMARY);
	s = recfmt__summary(r);
	ck_assert(s->duration_s == 1.25 && s->cpu_s == 0.5);
	ck_assert_uint_eq(s->events, NTHREADS * (4 * PER_THREAD + 2));
	ck_assert_uint_eq(s->lost, 21);
	ck_assert_uint_eq(s->lost_calls, 9);
	ck_assert_uint_eq(s->lost_io, 7);
	ck_assert_uint_eq(s->lost_guard, 5);
	ck_assert_uint_eq(s->lost_sched, 3);
	ck_assert_uint_eq(s->ncpus, 2);
	ck_assert_mem_eq(s->lost_per_cpu, lost_cpu, sizeof(lost_cpu));
	ck_assert_uint_eq(s->cab.grown, 6);
	ck_assert_str_eq(s->stop_reason, "target exited");
	ck_assert(s->exited && s->has_guard && !s->exec_other);
	ck_assert_int_eq(s->exit_status, 256);
	ck_assert_uint_eq(s->guard.at_detach, 7);
	ck_assert_uint_eq(s->guard.nsites, 8);
	ck_assert_uint_eq(s->guard.detach_in_place, 12);
	ck_assert_uint_eq(s->guard.detach_cut_short, 13);
	ck_assert(s->has_tstates);
	ck_assert_uint_eq(s->tstab_taken, 9);
	ck_assert_uint_eq(s->nostate, 10);
	ck_assert_uint_eq(s->ring_bytes, 4u << 20);
	ck_assert_uint_eq(s->sched_unseen, 11);
	/* the kernel it was taken on, feature by feature */
	ck_assert(s->has_kernel);
	ck_assert_str_eq(s->kernel.release, "6.1.0-test");
	ck_assert_str_eq(s->kernel.lockdown, "integrity");
	for (unsigned f = 0; f < KF__N; f++)
		ck_assert_msg(s->kernel.has[f] == (f == KF_BTF || f == KF_TASK_STORAGE ||
						   f == KF_RDONLY_CAST),
			      "feature %s", features__info[f].name);
	ck_assert_ptr_null(recfmt__source(r));
	ck_assert_int_eq(recfmt__next(r, &it), 1);
	ck_assert_int_eq(it.type, RECFMT_SOURCE);
	{
		const struct recfmt_source *so = recfmt__source(r);

		ck_assert_ptr_nonnull(so);
		ck_assert_uint_eq(so->n, 3);
		ck_assert_uint_eq(so->nbins, 2);
		ck_assert_str_eq(so->bins[0].path, "/usr/bin/prog");
		ck_assert_str_eq(so->bins[0].build_id, "e09dba08e909e021");
		ck_assert_str_eq(so->bins[1].path, "/usr/lib/libfoo.so");
		ck_assert_ptr_null(so->bins[1].build_id);
		for (i = 0; i < 3; i++) {
			if (srcs[i].file)
				ck_assert_str_eq(so->src[i].file, srcs[i].file);
			else
				ck_assert_ptr_null(so->src[i].file);
			ck_assert_uint_eq(so->src[i].line, srcs[i].line);
			ck_assert_uint_eq(so->src[i].bin, srcs[i].bin);
			ck_assert_uint_eq(so->src[i].vaddr, srcs[i].vaddr);
			ck_assert_uint_eq(so->src[i].size, srcs[i].size);
			ck_assert_uint_eq(so->src[i].foff, srcs[i].foff);
		}
	}
	ck_assert_int_eq(recfmt__next(r, &it), 1);
	ck_assert_int_eq(it.type, RECFMT_END);
	ck_assert_ptr_nonnull(recfmt__source(r));
	ck_assert_int_eq(recfmt__next(r, &it), 0);
	recfmt__reader_free(r);
	fclose(f);
	free(buf);
}
END_TEST

/* Every cut of the file short of its end is an error naming the byte. */
START_TEST(every_truncation_refused)
{
	size_t len, cut;
	char *buf = make_recording(&len), err[1024];
	uint64_t records;

	for (cut = 0; cut < len; cut++) {
		ck_assert_msg(read_all(buf, cut, err, sizeof(err), &records) < 0,
			      "a recording cut at %zu of %zu bytes was read whole", cut, len);
		ck_assert_msg(strstr(err, "byte") || strstr(err, "bytes"),
			      "cut at %zu: no position in '%s'", cut, err);
	}
	ck_assert_int_eq(read_all(buf, len, err, sizeof(err), &records), 0);
	ck_assert_uint_eq(records, NTHREADS * (4 * PER_THREAD + 2));
	free(buf);
}
END_TEST

/* The decompressed data of a recording in buf (malloc'd, *n bytes), or
 * NULL if zstd refuses it. */
static char *plain_of(const char *buf, size_t len, size_t *n)
{
	size_t cap = 1 << 22;
	char *p = malloc(cap);

	*n = ZSTD_decompress(p, cap, buf + RECFMT_HEADER_BYTES, len - RECFMT_HEADER_BYTES);
	if (ZSTD_isError(*n)) {
		free(p);
		return NULL;
	}
	return p;
}

/* Every byte of the file flipped (three patterns): an error naming the
 * byte, never a crash nor a silently different recording (a flip zstd
 * decodes to the very same data, e.g. in an unused entry of an entropy
 * table, is no corruption of the recording: then it must read whole). */
START_TEST(every_byte_corruption_refused)
{
	static const unsigned char flips[] = {0x01, 0x80, 0xff};
	size_t len, i, k, n0, n1, same = 0;
	char *buf = make_recording(&len), err[1024], *p0, *p1;
	uint64_t records;

	p0 = plain_of(buf, len, &n0);
	ck_assert_ptr_nonnull(p0);
	for (i = 0; i < len; i++)
		for (k = 0; k < sizeof(flips); k++) {
			buf[i] ^= flips[k];
			if (read_all(buf, len, err, sizeof(err), &records) == 0) {
				p1 = plain_of(buf, len, &n1);
				ck_assert_msg(i >= RECFMT_HEADER_BYTES && p1 && n1 == n0 &&
						      !memcmp(p0, p1, n0),
					      "byte %zu ^ 0x%x: a different recording read as valid",
					      i, flips[k]);
				ck_assert_uint_eq(records, NTHREADS * (4 * PER_THREAD + 2));
				free(p1);
				same++;
			} else {
				ck_assert_msg(strstr(err, "byte"), "byte %zu: no position in '%s'",
					      i, err);
			}
			buf[i] ^= flips[k];
		}
	/* Nearly every flip is caught; the few zstd decodes alike are few. */
	ck_assert_uint_lt(same, len / 10);
	free(p0);
	free(buf);
}
END_TEST

/* A file whose zstd stream is sound but whose blocks are not (what a
 * buggy or hostile writer makes): the blocks of plain, compressed. */
static char *compress_plain_v(const void *plain, size_t n, size_t *len, uint32_t ver)
{
	size_t cap = ZSTD_compressBound(n) + RECFMT_HEADER_BYTES, z;
	char *buf = malloc(cap);
	uint32_t fl = 0;

	memcpy(buf, RECFMT_MAGIC, 8);
	memcpy(buf + 8, &ver, 4);
	memcpy(buf + 12, &fl, 4);
	z = ZSTD_compress(buf + RECFMT_HEADER_BYTES, cap - RECFMT_HEADER_BYTES, plain, n, 1);
	ck_assert(!ZSTD_isError(z));
	*len = z + RECFMT_HEADER_BYTES;
	return buf;
}

static char *compress_plain(const void *plain, size_t n, size_t *len)
{
	return compress_plain_v(plain, n, len, RECFMT_VERSION);
}

static void expect_plain_error_v(const uint32_t *words, size_t nwords, const char *needle,
				 uint32_t ver)
{
	size_t len;
	char *buf = compress_plain_v(words, nwords * 4, &len, ver), err[1024];
	uint64_t records;

	ck_assert_int_lt(read_all(buf, len, err, sizeof(err), &records), 0);
	ck_assert_msg(strstr(err, needle), "want '%s' in '%s'", needle, err);
	free(buf);
}

static void expect_plain_error(const uint32_t *words, size_t nwords, const char *needle)
{
	size_t len;
	char *buf = compress_plain(words, nwords * 4, &len), err[1024];
	uint64_t records;

	ck_assert_int_lt(read_all(buf, len, err, sizeof(err), &records), 0);
	ck_assert_msg(strstr(err, needle), "want '%s' in '%s'", needle, err);
	free(buf);
}

START_TEST(bad_blocks_refused)
{
	/* A CHUNK first. */
	const uint32_t chunk_first[] = {RECFMT_CHUNK, 16 + 24, 1, 1, 0, 0, 1, 0, 2, 0, 3, 0};
	/* An unknown block type. */
	const uint32_t unknown[] = {77, 0};
	/* A huge length. */
	const uint32_t huge[] = {RECFMT_META, 0x7fffffff};
	/* META with a string longer than its block. */
	const uint32_t long_str[] = {RECFMT_META, 8, 1, 1000};
	/* META, then a FUNCS block claiming 10^9 functions. */
	const uint32_t many_funcs[] = {RECFMT_META, 32, 1, 0, 0, 0, 1, 0, 0, 0,
				       RECFMT_FUNCS, 8, 1000000000, 0};

	expect_plain_error(chunk_first, sizeof(chunk_first) / 4, "where META was expected");
	expect_plain_error(unknown, 2, "unknown block type 77");
	expect_plain_error(huge, 2, "at most");
	expect_plain_error(long_str, 4, "does not fit its block");
	expect_plain_error(many_funcs, sizeof(many_funcs) / 4, "1000000000 functions");
}
END_TEST

/* The END block's totals must match the chunks read. */
START_TEST(end_totals_checked)
{
	const uint32_t plain[] = {RECFMT_META, 32, 1, 0, 0, 0, 1, 0, 0, 0, /* meta: ncpus 1 */
				  RECFMT_FUNCS, 8, 0, 0,
				  RECFMT_CHUNK, 40, 7, 1, 0, 0, 1 | 1u << 24, 0, 5, 0, 6, 0,
				  RECFMT_SUMMARY, 0, RECFMT_END, 16, 1, 0, 2, 0};

	/* META's fields: pid 1, comm "", binary "", flags 0, ncpus 1, start 0,
	 * tool "": 4+4+4+4+4+8+4 = 32 bytes. The SUMMARY is empty: refused
	 * before END is reached. */
	expect_plain_error(plain, sizeof(plain) / 4, "runs past the end of its block");
}
END_TEST

/* SOURCE (version 2): checked against FUNCS and its own bounds; version 1
 * files are still read (no SOURCE: recfmt__source NULL), and a SOURCE
 * block in one is refused. */
START_TEST(source_block_checked)
{
	/* META (ncpus 1), FUNCS of no function; then SOURCE out of place
	 * before the SUMMARY, or END without a SUMMARY */
#define META_FUNCS RECFMT_META, 32, 1, 0, 0, 0, 1, 0, 0, 0, RECFMT_FUNCS, 8, 0, 0
	const uint32_t early[] = {META_FUNCS, RECFMT_SOURCE, 8, 0, 0};
	const uint32_t v1_read[] = {META_FUNCS, RECFMT_END, 16, 0, 0, 0, 0};
	size_t len;
	char *buf;
	uint64_t records;
	char err[1024];

	expect_plain_error(early, sizeof(early) / 4, "a SOURCE block where CHUNK or SUMMARY");
	/* a version 1 file without SUMMARY is refused for that, not its version */
	buf = compress_plain_v(v1_read, sizeof(v1_read), &len, 1);
	ck_assert_int_lt(read_all(buf, len, err, sizeof(err), &records), 0);
	ck_assert_msg(strstr(err, "END block where CHUNK or SUMMARY"), "%s", err);
	free(buf);
	expect_plain_error_v(early, sizeof(early) / 4, "this cabbpf reads versions 1 to",
			     RECFMT_VERSION + 1);
#undef META_FUNCS
}
END_TEST

/* The offset of the first block of type in the plain stream plain[0..n),
 * its header in hdr; asserts there is one. */
static size_t block_at(const char *plain, size_t n, uint32_t type, uint32_t hdr[2])
{
	size_t at;

	hdr[0] = hdr[1] = 0;
	for (at = 0; at + 8 <= n; at += 8 + hdr[1]) {
		memcpy(hdr, plain + at, 8);
		if (hdr[0] == type)
			break;
	}
	ck_assert_uint_eq(hdr[0], type);
	return at;
}

/* The plain stream of an older writer from this one's (n bytes): SUMMARY
 * without its last cut bytes (version 3: without the ring's size, 8;
 * version 2: without the thread-state counts too, 24). Returns a malloc'd
 * copy, its length in *m. */
static char *plain_cut(const char *plain, size_t n, uint32_t cut, size_t *m)
{
	char *o = malloc(n);
	uint32_t hdr[2] = {0, 0};
	size_t at;

	ck_assert_ptr_nonnull(o);
	at = block_at(plain, n, RECFMT_SUMMARY, hdr);
	ck_assert_uint_ge(hdr[1], cut);
	memcpy(o, plain, at + 8 + hdr[1] - cut);
	memcpy(o + at + 8 + hdr[1] - cut, plain + at + 8 + hdr[1], n - at - 8 - hdr[1]);
	hdr[1] -= cut;
	memcpy(o + at + 4, &hdr[1], 4);
	*m = n - cut;
	return o;
}

/* Bytes the versions after v added at the end of SUMMARY: 4 the ring's
 * size, 5 the unseen switch-ins, 6 the guard's two waits at detach, 7 the
 * kernel (a flag, release, lockdown, each feature's name and value: as
 * make_recording writes them). */
static size_t summary_added_after(uint32_t v)
{
	size_t added[] = {0, 0, 0,  16,
			  8, 8, 16, 4 + 4 + strlen("6.1.0-test") + 4 + strlen("integrity") + 4,
			  8, 32, 4 + 8 + 8, 8 + 8, 0};
	size_t n = 0;
	unsigned f;

	for (f = 0; f < KF__N; f++)
		added[7] += 4 + strlen(features__info[f].name) + 4;
	/* 8 changed the entry records, and added the forks to SUMMARY; 9
	 * the sampled times' period and samples left out; 10 the clock's
	 * kernel-mode samples; 11 those in page faults; 12 nothing there
	 * (the FORK and FORKED records) */
	_Static_assert(RECFMT_VERSION == 12, "summary_added_after knows versions up to 12");
	for (v++; v <= RECFMT_VERSION; v++)
		n += added[v];
	return n;
}

/* Versions 3 to 12 (_i: SUMMARY without the ring's size, the unseen
 * switch-ins, the guard's waits at detach, the kernel, the forks, the
 * sampled times, their kernel-mode samples or those in page faults, the
 * fields versions 4 to 11 added at its end; 12: as written) are still read: what they lack is then unknown (0:
 * no ring_bytes in the JSON) or none, the rest as written. */
START_TEST(old_summary_read)
{
	size_t len, n, m, zlen;
	char *buf = (with_aft = _i >= 9, make_recording(&len));
	char *plain = plain_of(buf, len, &n), *old, *z;
	struct recfmt_reader *r = NULL;
	struct recfmt_item it;
	int ret, seen = 0;
	FILE *f;

	ck_assert_ptr_nonnull(plain);
	old = plain_cut(plain, n, summary_added_after((uint32_t)_i), &m);
	z = compress_plain_v(old, m, &zlen, (uint32_t)_i);
	f = fmemopen(z, zlen, "rb");
	ck_assert_int_eq(recfmt__reader_new(f, "old", &r), 0);
	while ((ret = recfmt__next(r, &it)) == 1)
		if (it.type == RECFMT_SUMMARY) {
			const struct recfmt_summary *s = recfmt__summary(r);

			ck_assert(s->has_tstates);
			ck_assert_uint_eq(s->nostate, 10);
			ck_assert_uint_eq(s->ring_bytes, _i >= 4 ? 4u << 20 : 0);
			ck_assert_uint_eq(s->sched_unseen, _i >= 5 ? 11 : 0);
			ck_assert_uint_eq(s->guard.detach_in_place, _i >= 6 ? 12 : 0);
			ck_assert_uint_eq(s->guard.detach_cut_short, _i >= 6 ? 13 : 0);
			ck_assert_uint_eq(s->guard.nsites, 8);
			ck_assert(s->has_kernel == (_i >= 7));
			ck_assert(s->has_forks == (_i >= 8));
			ck_assert_uint_eq(s->cpu_sample_ns, _i >= 9 ? 1000000 : 0);
			ck_assert_uint_eq(s->samples_probe, _i >= 9 ? 14 : 0);
			ck_assert_uint_eq(s->samples_lost, _i >= 9 ? 16 : 0);
			/* as written: a version 10 file says 1 */
			ck_assert_uint_eq(s->samples_kernel, _i >= 10 ? 2 : 0);
			ck_assert_uint_eq(s->samples_syscall, _i >= 10 ? 17 : 0);
			ck_assert_uint_eq(s->samples_trap, _i >= 10 ? 18 : 0);
			ck_assert_uint_eq(s->samples_fault, _i >= 11 ? 19 : 0);
			ck_assert_uint_eq(s->samples_resume, _i >= 11 ? 20 : 0);
			seen++;
		}
	ck_assert_int_eq(ret, 0);
	ck_assert_int_eq(seen, 1);
	ck_assert_uint_eq(recfmt__version(r), (uint32_t)_i);
	recfmt__reader_free(r);
	fclose(f);
	free(z);
	free(old);
	free(plain);
	free(buf);
}
END_TEST

START_TEST(version2_summary_read)
{
	size_t len, n, m, zlen;
	char *buf = (with_aft = false, make_recording(&len)); /* as version 2 */
	char *plain = plain_of(buf, len, &n), *old, *z;
	struct recfmt_reader *r = NULL;
	struct recfmt_item it;
	FILE *f;
	int ret;

	ck_assert_ptr_nonnull(plain);
	old = plain_cut(plain, n, summary_added_after(2), &m);
	z = compress_plain_v(old, m, &zlen, 2);
	f = fmemopen(z, zlen, "rb");
	ck_assert_int_eq(recfmt__reader_new(f, "v2", &r), 0);
	while ((ret = recfmt__next(r, &it)) == 1)
		if (it.type == RECFMT_SUMMARY)
			ck_assert(!recfmt__summary(r)->has_tstates);
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(recfmt__version(r), 2);
	ck_assert_ptr_nonnull(recfmt__source(r));
	recfmt__reader_free(r);
	fclose(f);
	free(z);
	/* as version 3, the shorter SUMMARY is refused */
	z = compress_plain_v(old, m, &zlen, 3);
	{
		char err[1024];
		uint64_t records;

		ck_assert_int_lt(read_all(z, zlen, err, sizeof(err), &records), 0);
		ck_assert_msg(strstr(err, "runs past the end of its block"), "%s", err);
	}
	free(z);
	free(old);
	free(plain);
	free(buf);
}
END_TEST

/* A real recording's SOURCE block corrupted in its counts: the function
 * count must be FUNCS', a function's binary one of the block's. */
START_TEST(source_block_bounds)
{
	size_t len, n, at, k;
	char *buf = (with_aft = false, make_recording(&len)); /* as version 1 below */
	char *plain = plain_of(buf, len, &n), *z, err[1024];
	uint64_t records;
	uint32_t hdr[2] = {0, 0}, v;
	size_t zlen;

	ck_assert_ptr_nonnull(plain);
	at = block_at(plain, n, RECFMT_SOURCE, hdr);
	/* version 1: read whole without its SOURCE block; with it, refused
	 * (a version 1 SUMMARY is a version 2 one: SOURCE is nearer the
	 * start by what versions 3 on added) */
	{
		size_t n2, cut = summary_added_after(2);
		char *p2 = plain_cut(plain, n, cut, &n2), *v1 = malloc(n2);
		size_t m = n2 - 8 - hdr[1], at2 = at - cut;
		struct recfmt_reader *r = NULL;
		struct recfmt_item it;
		FILE *f;
		int ret;

		memcpy(v1, p2, at2);
		memcpy(v1 + at2, p2 + at2 + 8 + hdr[1], n2 - at2 - 8 - hdr[1]);
		z = compress_plain_v(v1, m, &zlen, 1);
		ck_assert_int_eq(read_all(z, zlen, err, sizeof(err), &records), 0);
		ck_assert_uint_eq(records, NTHREADS * (4 * PER_THREAD + 2));
		f = fmemopen(z, zlen, "rb");
		ck_assert_int_eq(recfmt__reader_new(f, "v1", &r), 0);
		while ((ret = recfmt__next(r, &it)) == 1)
			;
		ck_assert_int_eq(ret, 0);
		ck_assert_uint_eq(recfmt__version(r), 1);
		ck_assert_ptr_null(recfmt__source(r));
		recfmt__reader_free(r);
		fclose(f);
		free(z);
		free(v1);
		z = compress_plain_v(p2, n2, &zlen, 1);
		free(p2);
		ck_assert_int_lt(read_all(z, zlen, err, sizeof(err), &records), 0);
		ck_assert_msg(strstr(err, "a SOURCE block where END was expected"), "%s", err);
		free(z);
	}
	/* n = 4 functions */
	v = 4;
	memcpy(plain + at + 8, &v, 4);
	z = compress_plain(plain, n, &zlen);
	ck_assert_int_lt(read_all(z, zlen, err, sizeof(err), &records), 0);
	ck_assert_msg(strstr(err, "SOURCE for 4 functions, FUNCS has 3"), "%s", err);
	free(z);
	v = 3;
	memcpy(plain + at + 8, &v, 4);
	/* the first function's binary: 7 of 2. Past n, nbins and the two
	 * binaries' strings. */
	k = at + 16;
	for (int b = 0; b < 4; b++) {
		uint32_t sl;

		memcpy(&sl, plain + k, 4);
		k += 4 + sl;
	}
	v = 7;
	memcpy(plain + k, &v, 4);
	z = compress_plain(plain, n, &zlen);
	ck_assert_int_lt(read_all(z, zlen, err, sizeof(err), &records), 0);
	ck_assert_msg(strstr(err, "function 0 in binary 7 of 2"), "%s", err);
	free(z);
	free(plain);
	free(buf);
}
END_TEST

/* The report engine on a real recording file: offline__check reads it;
 * and a recording's count analyzer says exactly what the threads did. */
START_TEST(report_through_runner)
{
	size_t len;
	char *buf = make_recording(&len), path[] = "/tmp/cabbpf-rec.XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	struct recfmt_reader *r = NULL;
	struct recfmt_item it;
	struct runner *rn;
	struct runner_stats st;
	struct runner_opts ro = {.fnames = names, .lnames = lnames, .nfuncs = 3, .analyzers = "count"};
	const struct recfmt_funcs *fn;
	int ret;

	ck_assert(fd >= 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
	ck_assert_int_eq(offline__check(path), 0);
	ck_assert_int_eq(offline__open(path, &f, &r), 0);
	fn = recfmt__funcs(r);
	ck_assert_uint_eq(fn->n, 3);
	ck_assert_int_eq(runner__new(&ro, NULL, 0, &rn), 0);
	while ((ret = recfmt__next(r, &it)) == 1)
		if (it.type == RECFMT_CHUNK)
			ck_assert_int_eq(runner__feed(rn, it.tid, it.seq, it.recs, it.nrec), 0);
	ck_assert_int_eq(ret, 0);
	ck_assert_int_eq(runner__join(rn), 0);
	runner__stats(rn, &st);
	ck_assert_uint_eq(st.records, NTHREADS * (4 * PER_THREAD + 2));
	ck_assert_uint_eq(st.threads, NTHREADS);
	ck_assert_uint_eq(st.order_gaps, 0);
	ck_assert_uint_eq(st.returns.matched, NTHREADS * (2 * PER_THREAD + 1));
	runner__free(rn);
	recfmt__reader_free(r);
	fclose(f);
	/* Cut: offline__check says so. */
	ck_assert_int_eq(truncate(path, (off_t)len / 2), 0);
	ck_assert_int_eq(offline__check(path), -EINVAL);
	unlink(path);
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("format");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, every_truncation_refused);
	tcase_add_test(tc, every_byte_corruption_refused);
	tcase_add_test(tc, bad_blocks_refused);
	tcase_add_test(tc, end_totals_checked);
	tcase_add_test(tc, source_block_checked);
	tcase_add_test(tc, source_block_bounds);
	tcase_add_test(tc, version2_summary_read);
	tcase_add_loop_test(tc, old_summary_read, 3, 13);
	tcase_add_test(tc, report_through_runner);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
