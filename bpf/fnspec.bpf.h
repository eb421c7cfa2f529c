/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the probes of bpf/trace.bpf.c read for the functions that rules
 * name (--size, --args, --retval): their specs, the registers, user
 * strings, and the events that carry them (CABBPF_EV_SIZE's value,
 * CABBPF_EV_VALUE's pieces; include/cabbpf_event.h). Included once, by
 * trace.bpf.c, after pipeline.bpf.h, whose claims the events take.
 */
#ifndef CABBPF_FNSPEC_BPF_H
#define CABBPF_FNSPEC_BPF_H

/* --size, --args, --retval: sized_on and vals_on are set before load
 * when such a rule exists; without one the verifier drops that code and
 * the hot path is what it was. The spec of a function with rules, by fid
 * (filled after load); strbuf is where a string argument is read. */
const volatile __u32 sized_on = 0;
const volatile __u32 vals_on = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct cabbpf_fnspec);
} fnspecs SEC(".maps");

struct strbuf {
	char b[CABBPF_STRLEN_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct strbuf);
} strbufs SEC(".maps");

/* Argument register r (0..5) of the call at ctx. Each register read at
 * its fixed offset: a computed offset into the context is refused by the
 * verifier. */
static __always_inline __u64 arg_reg(struct pt_regs *ctx, __u32 r)
{
	volatile __u64 a0, a1, a2, a3, a4, a5;

	a0 = ctx->di;
	a1 = ctx->si;
	a2 = ctx->dx;
	a3 = ctx->cx;
	a4 = ctx->r8;
	a5 = ctx->r9;
	return r == 0 ? a0 : r == 1 ? a1 : r == 2 ? a2 : r == 3 ? a3 : r == 4 ? a4 : a5;
}

/* The size of the designated function at its entry, by its spec. */
static __noinline __u64 read_size(struct pt_regs *ctx, const struct cabbpf_fnspec *sp)
{
	struct strbuf *buf;
	__u32 zero = 0;
	__u64 v;
	long n;

	if (!sp || !sp->sized)
		return CABBPF_SIZE_UNREADABLE;
	v = arg_reg(ctx, sp->arg);
	if (!sp->strlen)
		return v;
	buf = bpf_map_lookup_elem(&strbufs, &zero);
	if (!buf || !v)
		return CABBPF_SIZE_UNREADABLE;
	n = bpf_probe_read_user_str(buf->b, sizeof(buf->b), (const void *)v);
	/* 0: an empty string, as 6.1 and 6.12 count it (measured: their
	 * strncpy_from_user_nofault leaves the NUL out of an empty one);
	 * 6.18 says 1 */
	return n > 0 ? (__u64)(n - 1) : n == 0 ? 0 : CABBPF_SIZE_UNREADABLE;
}

/* One CABBPF_EV_VALUE event of fid: meta, then its two words, in z (a
 * slot the caller claimed) or, z NULL, in a slot claimed here. A full
 * ring drops it like any event (CABBPF_STAT_DROPS): the analyzers then
 * show that value as not read. */
static __always_inline void put_value(struct tstate *st, struct cabbpf_event *z, __u32 tid,
				      __u32 tgid, __u32 fid, __u32 meta, __u64 w1, __u64 w2)
{
	if (!z)
		z = pipeline_claim(st, CABBPF_STAT_DROPS);
	if (!z)
		return;
	z->tid = tid;
	z->pid = tgid;
	z->kind = CABBPF_EV_VALUE;
	z->fid = fid;
	z->seq = st->seq++;
	z->ts = w1;
	z->sp = w2;
	z->epoch = meta;
	z->pad = 0;
	pipeline_submit(z, st);
}

/* The 16 bytes of part `part` of the string in buf (n bytes read, its NUL
 * included), as one event (in z when not NULL); whether it was the last.
 * Written out per part, not a loop (see pipeline_claim: kernels before
 * 6.3 refuse some loops). */
static __always_inline bool put_str_part(struct tstate *st, struct cabbpf_event *z, __u32 tid,
					 __u32 tgid, __u32 fid, __u32 meta,
					 const struct strbuf *buf, long n, __u32 part)
{
	__u64 w1, w2;
	long len = n - 1 - (long)part * 16; /* string bytes from this part on */
	bool last = len <= 16;

	if (len < 0)
		len = 0;
	if (len > 16)
		len = 16;
	__builtin_memcpy(&w1, buf->b + part * 16, 8);
	__builtin_memcpy(&w2, buf->b + part * 16 + 8, 8);
	meta |= CABBPF_VAL_META(0, 0, 0, part) | (__u32)len << CABBPF_VAL_LEN_SHIFT;
	if (last)
		meta |= CABBPF_VAL_LAST;
	put_value(st, z, tid, tgid, fid, meta, w1, w2);
	return last;
}

/* A value to write: whose, which item, what it reads, the register's v. */
struct vitem {
	__u32 tid, tgid, fid;
	__u32 item, type, reg;
	__u64 v;
};

/* One value (it), in one event or a string's pieces. The first piece goes
 * into first when it is not NULL (a slot the caller claimed: every path
 * fills it, or the loader would wait for it for ever). Three arguments: a
 * BPF function takes five at most. */
static __noinline void put_item(struct tstate *st, struct cabbpf_event *first,
				const struct vitem *it)
{
	__u32 tid = it->tid, tgid = it->tgid, fid = it->fid, type = it->type;
	__u32 meta = CABBPF_VAL_META(it->item & 7, type & 3, it->reg & 7, 0), zero = 0;
	struct strbuf *buf = NULL;
	__u64 v = it->v;
	long n = -1;

	if (type == CABBPF_VT_INT32) /* shown as an int; the register whole */
		meta = CABBPF_VAL_META(it->item & 7, CABBPF_VT_INT, it->reg & 7, 0) | CABBPF_VAL_I32;
	if (type == CABBPF_VT_INT || type == CABBPF_VT_INT32) {
		put_value(st, first, tid, tgid, fid, meta | CABBPF_VAL_LAST, 0, v);
		return;
	}
	if (v)
		buf = bpf_map_lookup_elem(&strbufs, &zero);
	if (buf)
		n = bpf_probe_read_user_str(buf->b,
					    type == CABBPF_VT_STRLEN ? sizeof(buf->b)
								     : CABBPF_VAL_STR_MAX,
					    (const void *)v);
	if (n == 0)
		n = 1; /* an empty string, as 6.1 and 6.12 count it (read_size) */
	if (!buf || n < 0) {
		/* a NULL pointer, a page not in memory: the pointer itself */
		put_value(st, first, tid, tgid, fid,
			  meta | CABBPF_VAL_LAST | CABBPF_VAL_UNREADABLE, 0, v);
		return;
	}
	if (type == CABBPF_VT_STRLEN) {
		put_value(st, first, tid, tgid, fid, meta | CABBPF_VAL_LAST, 0, (__u64)(n - 1));
		return;
	}
	if (n >= CABBPF_VAL_STR_MAX)
		meta |= CABBPF_VAL_TRUNC;
	_Static_assert(CABBPF_VAL_PARTS == 4, "the parts below are written out");
	if (put_str_part(st, first, tid, tgid, fid, meta, buf, n, 0))
		return;
	if (put_str_part(st, NULL, tid, tgid, fid, meta, buf, n, 1))
		return;
	if (put_str_part(st, NULL, tid, tgid, fid, meta, buf, n, 2))
		return;
	put_str_part(st, NULL, tid, tgid, fid, meta, buf, n, 3);
}

/* The --args items of the function whose entry event was just written,
 * as the next events of the thread. */
static __always_inline void put_args(struct pt_regs *ctx, struct tstate *st, __u32 tid,
				     __u32 tgid, __u32 fid, const struct cabbpf_fnspec *sp)
{
	struct vitem it = {.tid = tid, .tgid = tgid, .fid = fid};
	__u32 n = sp->nvals;

	_Static_assert(CABBPF_VAL_ARGS_MAX == 6, "the items below are written out");
#define PUT_ARG(i)                                  \
	if (n > (i)) {                              \
		it.item = (i);                      \
		it.type = sp->type[i];              \
		it.reg = sp->reg[i];                \
		it.v = arg_reg(ctx, sp->reg[i]);    \
		put_item(st, NULL, &it);            \
	}
	PUT_ARG(0)
	PUT_ARG(1)
	PUT_ARG(2)
	PUT_ARG(3)
	PUT_ARG(4)
	PUT_ARG(5)
#undef PUT_ARG
}

#endif /* CABBPF_FNSPEC_BPF_H */
