// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz harness of the recording reader and of 'cabbpf report' behind it:
 * a real recording (made by cabbpf record) mutated over and over, each
 * mutant read through the whole report path (user/record/recfmt_read.c, the
 * runner, shadow stacks, every analyzer, the text and JSON reports, the
 * views' writers) into /dev/null. Two kinds of mutants, in turn:
 *   - the file as it is on disk: bytes flipped or overwritten, ranges cut
 *     out, duplicated or the file truncated (zstd's checks face these);
 *   - the decompressed blocks mutated the same ways, plus block-aware
 *     edits (lengths, counts, fids, kinds, tids, sequence numbers), then
 *     recompressed: the parser and the analyzers face data a hostile or
 *     buggy writer made, past zstd's checksum.
 * A crash, a sanitizer report (build with `make fuzz`: ASan + UBSan) or a
 * hang is the failure; every mutant must end in a report or a clean
 * error. Usage:
 *   fuzz_record SEED.cbr CPU_SECONDS [RANDOM_SEED]
 * Runs until it has used CPU_SECONDS of CPU time (not wall time: the
 * machine may be shared). Prints the mutants tried, how many were refused
 * and how many reported.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "analyzers/cct.h"
#include "analyzers/timeline.h"
#include "common/json.h"
#include "pipeline/runner.h"
#include "user/report/sections.h"
#include "user/report/perfetto.h"
#include "user/report/pprof.h"
#include "user/report/report.h"
#include "user/report/views.h"
#include "user/record/recfmt.h"
#include "user/modes/offline.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed printed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return NULL;
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		return NULL;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The whole report of the recording in buf[0..len) into /dev/null.
 * Returns 0 (reported) or the first error. */
static int report_of(const char *buf, size_t len, FILE *devnull)
{
	static const char *const sets[] = {"all,timeline", "count", "callgraph", "io", "cct",
					   "timeline"};
	struct recfmt_reader *r = NULL;
	struct runner *rn = NULL;
	struct json *jw = NULL;
	struct recfmt_item it;
	struct runner_opts ro;
	struct view_opts view;
	const struct recfmt_meta *m;
	const struct recfmt_funcs *fn;
	struct summary sm;
	FILE *f = fmemopen((void *)buf, len ? len : 1, "rb");
	int err, ret;

	if (!f)
		return -ENOMEM;
	if (!len) {
		fclose(f);
		f = fopen("/dev/null", "rb");
	}
	err = recfmt__reader_new(f, "mutant", &r);
	for (ret = 1; !err && ret == 1 && (!recfmt__funcs(r));)
		if ((ret = recfmt__next(r, &it)) < 0)
			err = ret;
		else if (ret == 0)
			err = -EINVAL;
	if (err)
		goto cleanup;
	m = recfmt__meta(r);
	fn = recfmt__funcs(r);
	views__init(&view);
	view.cct.cpu_time = m->flags & RECFMT_F_CPU_TIME;
	view.cct.probe_ns = fn->probe_ns;
	view.cct.max_nodes = 4096; /* hostile trees fold early: fast mutants */
	memset(&ro, 0, sizeof(ro));
	ro.fnames = fn->names;
	ro.lnames = fn->lnames;
	ro.nfuncs = fn->n;
	ro.analyzers = sets[below(6)];
	ro.timeline_limit = 1 + below(5000);
	ro.no_returns = m->flags & RECFMT_F_ENTRY_ONLY;
	ro.cct = &view.cct;
	ro.max_pending = 1 << 16;
	if (ro.no_returns)
		ro.analyzers = "count";
	err = runner__new(&ro, NULL, 0, &rn);
	while (!err && (ret = recfmt__next(r, &it)) == 1)
		if (it.type == RECFMT_CHUNK)
			err = runner__feed(rn, it.tid, it.seq, it.recs, it.nrec);
	if (!err && ret < 0)
		err = ret;
	if (err)
		goto cleanup;
	err = runner__join(rn);
	if (err)
		goto cleanup;
	/* the SOURCE block (files, lines, binaries) into the reports and
	 * pprof's mappings, as cabbpf report does */
	if (recfmt__source(r))
		runner__set_src(rn, recfmt__source(r)->src, recfmt__source(r)->bins,
				recfmt__source(r)->nbins);
	offline__summary(m, recfmt__summary(r), &sm);
	runner__set_lost(rn, sm.lost_calls, sm.lost_io, sm.cab.overwritten);
	runner__set_traced(rn, sm.nfuncs);
	report__text(devnull, &sm, rn);
	if (runner__analyzer(rn, "cct")) {
		void *cs = (void *)runner__analyzer(rn, "cct");
		const struct cct_tree *t = cct__merged(cs);

		if (t)
			pprof__write(devnull, t, cct__ctx(cs), view.cct.cpu_time, m->binary, 0);
	}
	if (runner__analyzer(rn, "timeline"))
		perfetto__write(runner__analyzer(rn, "timeline"), devnull, m->pid, m->comm, NULL,
				NULL);
	if (!json__new(devnull, true, &jw)) {
		json__begin_object(jw);
		sections__json(rn, jw);
		json__end_object(jw);
		json__finish(jw);
	}
cleanup:
	json__free(jw);
	runner__free(rn);
	recfmt__reader_free(r);
	fclose(f);
	return err;
}

/* Byte-level edits of buf (len bytes, room for cap): flips, overwrites,
 * a cut, a duplicated range, a truncation. Returns the new length. */
static size_t mutate_bytes(char *buf, size_t len, size_t cap, size_t from)
{
	static const uint32_t interesting[] = {0,	   1,	       2,	   3,   0x7f,
					       0x80,	   0xff,       0xffff,	   0x10000,
					       0x7fffffff, 0xffffffff, RECFMT_MAX_BLOCK + 1};
	size_t k, n = 1 + below(4), a, b;

	if (len <= from)
		return len;
	for (k = 0; k < n; k++) {
		switch (below(6)) {
		case 0: /* bit flip */
			buf[from + below(len - from)] ^= (char)(1u << below(8));
			break;
		case 1: /* byte */
			buf[from + below(len - from)] = (char)rnd();
			break;
		case 2: /* an interesting 32-bit value, aligned (block fields are) */
			a = from + (below(len - from) & ~(size_t)3);
			if (a + 4 <= len)
				memcpy(buf + a, &interesting[below(12)], 4);
			break;
		case 3: /* cut a range out */
			a = from + below(len - from);
			b = a + below(len - a < 64 ? len - a : 64);
			memmove(buf + a, buf + b, len - b);
			len -= b - a;
			break;
		case 4: /* duplicate a range */
			a = from + below(len - from);
			b = a + below(len - a < 256 ? len - a : 256);
			if (len + (b - a) <= cap) {
				memmove(buf + b + (b - a), buf + b, len - b);
				memcpy(buf + b, buf + a, b - a);
				len += b - a;
			}
			break;
		default: /* truncate */
			if (!below(4))
				len = from + below(len - from);
			break;
		}
		if (len <= from)
			break;
	}
	return len;
}

/* Block-aware edits of the decompressed data: walk the blocks, pick one,
 * and change a field that matters (a chunk's tid, seq, nrec, a record's
 * kind or fid; a length; a count). */
static void mutate_blocks(char *p, size_t len)
{
	size_t off = 0, nb = 0, pick, k;
	uint32_t hdr[2];
	size_t at[4096];

	while (off + 8 <= len && nb < 4096) {
		memcpy(hdr, p + off, 8);
		at[nb++] = off;
		if (hdr[1] > len - off - 8)
			break;
		off += 8 + hdr[1];
	}
	if (!nb)
		return;
	pick = at[below(nb)];
	memcpy(hdr, p + pick, 8);
	if (hdr[0] == RECFMT_CHUNK && hdr[1] >= 16 + 24 && pick + 8 + hdr[1] <= len) {
		char *c = p + pick + 8;
		uint32_t nrec = (hdr[1] - 16) / 24, v;
		uint64_t w;

		switch (below(5)) {
		case 0: /* tid */
			v = below(3) ? (uint32_t)below(8) : (uint32_t)rnd();
			memcpy(c, &v, 4);
			break;
		case 1: /* seq */
			w = below(2) ? below(100000) : rnd();
			memcpy(c + 8, &w, 8);
			break;
		default: /* a record's kind, fid or epoch */
			k = below(nrec);
			memcpy(&w, c + 16 + 24 * k, 8);
			w ^= (uint64_t)1 << below(64);
			if (!below(3))
				w = (uint64_t)below(8) << 56 | below(64);
			memcpy(c + 16 + 24 * k, &w, 8);
			break;
		}
		return;
	}
	/* another block: its length or one of its first words */
	k = pick + 4 * (1 + below(hdr[1] / 4 + 1 < 16 ? hdr[1] / 4 + 1 : 16));
	if (k + 4 <= len) {
		uint32_t v = below(2) ? (uint32_t)rnd() : (uint32_t)below(300);

		memcpy(p + k, &v, 4);
	}
}

int main(int argc, char **argv)
{
	size_t len = 0, plain_len, zcap, mlen;
	char *seed, *plain, *buf, *z;
	double secs, t0;
	uint64_t tries = 0, refused = 0, reported = 0, seed_value;
	struct timespec ts;
	FILE *devnull;
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: fuzz_record SEED.cbr SECONDS [RANDOM_SEED]\n");
		return 2;
	}
	seed = slurp(argv[1], &len);
	secs = atof(argv[2]);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	rng_state = argc > 3 ? strtoull(argv[3], NULL, 0) : (uint64_t)ts.tv_nsec | 1;
	seed_value = rng_state;
	devnull = fopen("/dev/null", "w");
	if (!seed || !devnull || len < RECFMT_HEADER_BYTES) {
		fprintf(stderr, "fuzz_record: cannot read %s\n", argv[1]);
		return 2;
	}
	/* The seed must be a whole recording: the harness checks itself. */
	if (report_of(seed, len, devnull)) {
		fprintf(stderr, "fuzz_record: the seed %s is not a valid recording\n", argv[1]);
		return 2;
	}
	plain = malloc(64u << 20);
	plain_len = ZSTD_decompress(plain, 64u << 20, seed + RECFMT_HEADER_BYTES,
				    len - RECFMT_HEADER_BYTES);
	if (ZSTD_isError(plain_len)) {
		fprintf(stderr, "fuzz_record: the seed does not decompress in one go\n");
		return 2;
	}
	zcap = ZSTD_compressBound(2 * plain_len) + RECFMT_HEADER_BYTES;
	buf = malloc(2 * plain_len + 1);
	z = malloc(zcap > 2 * len + 1 ? zcap : 2 * len + 1);
	fprintf(stderr, "fuzz_record: seed %s (%zu bytes, %zu decompressed), random seed 0x%llx\n",
		argv[1], len, plain_len, (unsigned long long)seed_value);
	/* Quiet: each refused mutant says why on stderr. */
	if (!freopen("/dev/null", "w", stderr))
		return 2;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	t0 = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	for (;;) {
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		if ((double)ts.tv_sec + ts.tv_nsec / 1e9 - t0 >= secs)
			break;
		if (tries & 1) { /* on disk */
			memcpy(z, seed, len);
			mlen = mutate_bytes(z, len, 2 * len, below(8) ? RECFMT_HEADER_BYTES : 0);
		} else { /* behind zstd */
			memcpy(buf, plain, plain_len);
			mlen = plain_len;
			if (below(2))
				mutate_blocks(buf, mlen);
			else
				mlen = mutate_bytes(buf, mlen, 2 * plain_len, 0);
			memcpy(z, seed, RECFMT_HEADER_BYTES);
			mlen = ZSTD_compress(z + RECFMT_HEADER_BYTES, zcap - RECFMT_HEADER_BYTES, buf,
					     mlen, 1);
			if (ZSTD_isError(mlen))
				continue;
			mlen += RECFMT_HEADER_BYTES;
		}
		err = report_of(z, mlen, devnull);
		tries++;
		if (err)
			refused++;
		else
			reported++;
	}
	printf("fuzz_record: %llu mutants in %.0f CPU seconds: %llu refused with an error, %llu "
	       "reported\n",
	       (unsigned long long)tries, secs, (unsigned long long)refused,
	       (unsigned long long)reported);
	free(seed);
	free(plain);
	free(buf);
	free(z);
	fclose(devnull);
	return 0;
}
