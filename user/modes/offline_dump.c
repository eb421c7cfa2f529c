// SPDX-License-Identifier: BSD-2-Clause
/*
 * cabbpf dump FILE: a recording's events, one a line, as `uftrace dump`
 * prints a trace: in the order the analyzers received them (chunk by
 * chunk, each chunk one thread's consecutive events), with the thread id,
 * the thread's sequence number (its program order), the time, the kind
 * and the function or the I/O call.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "cabbpf_event.h"
#include "common/log.h"
#include "common/callvals.h"
#include "common/syscalls.h"
#include "pipeline/record.h"
#include "user/record/recfmt.h"
#include "user/modes/offline.h"

static const char *kind_name(uint32_t kind)
{
	static const char *const names[] = {"?",    "call",  "return", "io",    "guard",
					    "exec", "sched", "size",   "sample", "value",
					    "fork", "forked"};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

/* A CABBPF_EV_VALUE record: which value of which function, and its
 * piece: "arg0 of f: 42", "str(arg1) of f, bytes 16-31: \"...\"". */
static void dump_value(FILE *out, const struct recfmt_funcs *fn, const struct rec *rc)
{
	struct callvals cv;
	char lb[24], v[CABBPF_VAL_STR_MAX * 4 + 16];
	unsigned i = CABBPF_VAL_ITEM(rc->epoch), part = CABBPF_VAL_PART(rc->epoch);

	callvals__clear(&cv);
	/* the piece alone, as the first of its value: its bytes at 0 */
	callvals__put(&cv, (rc->epoch & ~(3u << 8)) | CABBPF_VAL_LAST, rc->ts, rc->sp);
	fprintf(out, "%s of ", callvals__label(&cv, i, lb));
	if (rc->fid < fn->n)
		fprintf(out, "%s", fn->names[rc->fid]);
	else
		fprintf(out, "fid#%" PRIu32, rc->fid);
	if (CABBPF_VAL_TYPE(rc->epoch) == CABBPF_VT_STR)
		fprintf(out, ", bytes %u-%u%s", part * 16, part * 16 + 15,
			rc->epoch & CABBPF_VAL_LAST ? " (last)" : "");
	fprintf(out, ": %s", callvals__format(&cv, i, v, sizeof(v)));
}

/* One record of thread tid, sequence number seq. */
static void dump_record(FILE *out, const struct recfmt_funcs *fn, uint32_t tid, uint64_t seq,
			const uint64_t *w)
{
	struct rec rc;
	struct rec_io io;

	rec__decode(w, &rc);
	if (rc.kind == CABBPF_EV_VALUE) /* w1 holds bytes, not a time */
		fprintf(out, "%7" PRIu32 " %10" PRIu64 " %20s %-6s ", tid, seq, "-",
			kind_name(rc.kind));
	else
		fprintf(out, "%7" PRIu32 " %10" PRIu64 " %" PRIu64 ".%09" PRIu64 " %-6s ", tid,
			seq, rc.ts / 1000000000u, rc.ts % 1000000000u, kind_name(rc.kind));
	switch (rc.kind) {
	case CABBPF_EV_ENTRY:
	case CABBPF_EV_RETURN:
		if (rc.fid < fn->n)
			fprintf(out, "%s", fn->names[rc.fid]);
		else
			fprintf(out, "fid#%" PRIu32 " (not in the function table)", rc.fid);
		if (rc.epoch)
			fprintf(out, " [window %" PRIu32 "]", rc.epoch);
		fprintf(out, " sp=0x%" PRIx64, rc.sp);
		break;
	case CABBPF_EV_IO:
		rec__decode_io(w, &io);
		fprintf(out, "%s fd=%" PRId32 " %s", syscalls__name(io.sc), io.fd,
			syscalls__fdkind_name(io.fdkind));
		if (io.flags & CABBPF_IO_ERR)
			fprintf(out, " error=%" PRIu32 " (%s)", io.ret, strerror((int)io.ret));
		else
			fprintf(out, " bytes=%" PRIu32 " requested=%" PRIu32, io.ret, io.req);
		break;
	case CABBPF_EV_GUARD:
		fprintf(out, "site=%" PRIu32 " sp=0x%" PRIx64, rc.fid, rc.sp);
		break;
	case CABBPF_EV_EXEC: /* fid: the device, kernel encoding; 0 0: ended by another's */
		if (!rc.fid && !rc.sp)
			fprintf(out, "ended by another thread's execve");
		else
			fprintf(out, "dev=%" PRIu32 ":%" PRIu32 " inode=%" PRIu64, rc.fid >> 20,
				rc.fid & 0xfffff, rc.sp);
		break;
	case CABBPF_EV_FORK: /* fid: the child's tid */
		fprintf(out, "child=%" PRIu32, rc.fid);
		break;
	case CABBPF_EV_FORKED: /* fid: the parent's stream; sp: its FORK's seq */
		if (rc.sp == CABBPF_FORK_LOST)
			fprintf(out, "parent=%" PRIu32 " (its fork event lost)", rc.fid);
		else
			fprintf(out, "parent=%" PRIu32 " at seq %" PRIu64, rc.fid, rc.sp);
		break;
	case CABBPF_EV_SCHED:
		fprintf(out, "off_cpu_ns=%" PRIu64, rc.sp);
		break;
	case CABBPF_EV_CPU_SAMPLE: /* --times sampled: a CPU-clock tick (ip 0: in a system
				    * call, 1: in a page fault) */
		if (rc.sp > 1)
			fprintf(out, "ip=0x%" PRIx64, rc.sp);
		else
			fprintf(out, rc.sp ? "in a page fault" : "in a system call");
		break;
	case CABBPF_EV_VALUE: /* --args, --retval: a piece of a value */
		dump_value(out, fn, &rc);
		break;
	case CABBPF_EV_SIZE: /* --size: the input size of the call just entered */
		fprintf(out, "size=%" PRIu64 " of ", rc.sp);
		if (rc.fid < fn->n)
			fprintf(out, "%s", fn->names[rc.fid]);
		else
			fprintf(out, "fid#%" PRIu32, rc.fid);
		break;
	default:
		fprintf(out, "unknown kind %" PRIu32, rc.kind);
	}
	fputc('\n', out);
}

int offline__dump(const struct opts *o, FILE *out)
{
	const struct recfmt_meta *m;
	const struct recfmt_funcs *fn;
	struct recfmt_reader *r = NULL;
	struct recfmt_item it;
	FILE *f = NULL;
	uint32_t i;
	int err, ret;

	err = offline__open(o->input_path, &f, &r);
	if (err)
		goto cleanup;
	m = recfmt__meta(r);
	fn = recfmt__funcs(r);
	fprintf(out, "# %s: pid %" PRId32 " (%s) %s, %" PRIu32 " functions, recorded by %s\n",
		o->input_path, m->pid, m->comm, m->binary, fn->n, m->tool);
	fprintf(out, "#     TID        SEQ TIME_S               KIND   FUNCTION\n");
	while ((ret = recfmt__next(r, &it)) == 1)
		for (i = 0; it.type == RECFMT_CHUNK && i < it.nrec; i++)
			dump_record(out, fn, it.tid, it.seq + i, it.recs + (size_t)i * REC_WORDS);
	if (ret < 0) {
		err = ret;
		goto cleanup;
	}
	if (fflush(out) || ferror(out)) {
		/* A reader that stopped early (| head) is no error to report. */
		err = errno == EPIPE ? -EPIPE : -EIO;
		if (err == -EIO)
			log_err("writing the dump: %s", strerror(errno));
	}
cleanup:
	recfmt__reader_free(r);
	if (f)
		fclose(f);
	return err;
}
