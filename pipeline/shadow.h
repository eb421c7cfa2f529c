/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-thread shadow stack: turns one thread's entry/return events, in program
 * order, into calls with their callers and into closed frames with their
 * times — also when return events are missing.
 *
 * Returns go missing for three reasons: longjmp/siglongjmp, C++ exceptions
 * (the frames are unwound without returning), and the kernel's limit of 64
 * pending uretprobes per thread (MAX_URETPROBE_DEPTH: a call made while 64
 * returns are pending gets no return probe at all). So frames are matched by
 * stack pointer, never by counting. x86-64, stack grows down:
 *
 *   entry event:  sp = E, the slot holding the return address;
 *   return event: sp = E + 8, the caller's sp after `ret` popped that slot.
 *
 * A frame with entry sp E is live while the thread's sp is below E (a callee
 * always gets a smaller E). The rules:
 *
 * ENTRY (fid, E_new)
 *  1. Pop every frame with E < E_new: the thread's stack is already above
 *     them, so they are gone without a return (longjmp, exception, or a
 *     return the kernel never instrumented). Each is counted "missing".
 *  2. Frames with E == E_new are ambiguous. A tail call (`jmp` to another
 *     probed function) reuses its caller's return-address slot, so the
 *     caller is live with the same E, and the kernel will later deliver both
 *     returns at E + 8, innermost first. But a frame that returned without a
 *     return event, followed by a sibling call from the same caller, also
 *     leaves an equal E. Such a frame is popped (missing) when
 *       a) it was entered with 64 or more returns pending (see nret below):
 *          the kernel never gave it a return probe, so it cannot be a
 *          tail caller that is still waiting for its return; or
 *       b) step 1 popped a frame that did expect a return: the thread
 *          unwound non-locally (longjmp/exception) past this sp, which is
 *          how a setjmp loop re-calls the same function at the same sp;
 *          or
 *       c) an exception is in flight (GUARD THROW seen, no CATCH yet) and
 *          the frame was entered before it was thrown: only landing pads
 *          run until the catch, and one that calls at this slot runs in
 *          the frame's caller (a destructor of the caller's local called
 *          while a traced function that threw, with no traced callee, is
 *          unwound): the frame is dead, counted "unwound".
 *     Otherwise it is kept: the new frame is its tail callee.
 *     The entry's slot word decides first, when the probe read it
 *     (include/cabbpf_event.h, CABBPF_SLOT_*: what the return-address
 *     slot held before the kernel armed this call's return): the
 *     uretprobe trampoline means a live frame whose return is armed owns
 *     the slot, so every frame at it lives (a tail call); any other
 *     address was pushed by a call, so a frame at the slot is dead when
 *     that is not its own return address (a frame keeps a tag of it; a
 *     tail callee inherits its tail caller's), or when its return was
 *     armed (alive, it would have left the trampoline there: the same
 *     call site calling again after a longjmp). Only a frame with no
 *     armed return at its own address (past the depth limit, lost to a
 *     backtrace) is left to a) to c). This is what keeps a frame that a
 *     longjmp, a rethrow or a context switch left at the slot from
 *     becoming the next call's caller.
 *  3. caller = the top frame's fid, or AN_ROOT when the stack is empty.
 *     Push the frame; it expects a return iff fewer than 64 frames on the
 *     stack expect one (emulating the kernel's depth check).
 *
 * RETURN (fid, R)
 *  1. Pop every frame with E < R - 8 (missing).
 *  2. If the top frame has E == R - 8 and the same fid: matched, inclusive
 *     time = return.ts - entry.ts. If the fid differs, a frame of this fid
 *     further down among those with E == R - 8 is matched (those above it
 *     are missing). Otherwise the return is an "orphan" (its entry was not
 *     seen: probes attached mid-call, or a dropped event) and the stack is
 *     left alone.
 *  3. Tail-call check: if the new top frame also has E == R - 8, it must be
 *     a tail caller, whose return the kernel delivers in the same trap, so
 *     the thread's very next event is a return at R. If the next event is
 *     anything else, the frame was not a tail caller (rule 2 of ENTRY kept
 *     a dead frame) and is popped as missing before that event is handled.
 *
 * Times: a missing frame has no inclusive time of its own, but its parent's
 * self time should not include it, so the interval up to the event that
 * popped it is charged to the parent as child time (an upper bound).
 *
 * Known limits (documented, not silent: they show up in "missing"):
 *  - without a slot word (a kernel whose BTF has no xol_area, --entry-only,
 *    recordings before version 8), a tail call made right after a longjmp
 *    that landed in the same frame is taken for a dead frame (rule 2b),
 *    and a frame a context switch left, its return lost, at the slot of
 *    its caller's next call is taken for that call's caller;
 *  - the slot word carries a 15-bit tag of the return address: two call
 *    sites whose tags collide (1 in 32,768) leave a frame whose return is
 *    not armed to rules a) to c);
 *  - the kernel also counts dead-but-uncleaned return instances toward the
 *    64 limit after a longjmp; the emulation counts only live frames;
 *  - past the 64 limit a frame that returned leaves no event, so it is only
 *    noticed dead when a later event's sp is at or above its slot: a probed
 *    function reached from its caller through unprobed functions (whose
 *    frames put its slot lower) is taken for the dead frame's callee;
 *  - a signal handler on a sigaltstack breaks the order of stack pointers
 *    the rules rely on: frames are popped as missing and their returns
 *    become orphans. The kernel's own cleanup of uretprobe instances has
 *    the same blind spot.
 *
 * GUARD events (include/cabbpf_guard.h, user/trace/guard.h) say why returns do
 * not come, so frames are closed for that reason and not as "missing":
 *  - THROW / FORCED: an exception (or pthread_cancel) is being raised, or
 *    raised again (a rethrow after a catch: in flight again, so the catch
 *    further up closes the frame that rethrew, at the catch's own slot);
 *    until the first call or return event after the next CATCH, frames
 *    found dead are counted "unwound";
 *  - JUMP (longjmp, siglongjmp): frames are left without returning; the
 *    first call or return event after it closes those it finds dead as
 *    "unwound", a frame at that event's own slot entered before the jump
 *    included (as a CATCH would: rule 2c), unless the slot word says the
 *    frame lives;
 *  - CATCH at sp C: every frame with E < C is dead (unwound) right now,
 *    and so is one with E == C that the exception in flight (thrown, not
 *    caught yet) unwound: entered before the THROW (the catcher's callee
 *    that threw had its return slot at C too); frames above survive, and
 *    the guard gave them their return probes back, so their returns still
 *    match. Any other frame at C reached the catch site by a tail call
 *    and lives: __cxa_end_catch jumps to _Unwind_DeleteException, a CATCH
 *    site, to destroy the exception it ends, and a catcher may jump to
 *    __cxa_end_catch as its last act; their returns come later;
 *  - BACKTRACE: the guard put back the original return addresses of every
 *    live frame (the program walks its own stack): their returns are not
 *    observable any more ("lost"), unless a later catch re-arms them;
 *  - SWITCH (swapcontext, setcontext, jump_fcontext): the thread leaves
 *    this stack; the guard put back its frames' return addresses. The
 *    frames are parked under the sp the left context resumes with
 *    (swapcontext saves entry sp + 8) and the thread continues with an
 *    empty stack, or with the stack parked under the destination's sp
 *    (SWITCH_TO, read from the ucontext): so a coroutine's calls get the
 *    right callers on every stack. Parked frames count as open; their
 *    returns are lost, and they are closed as "switched".
 *  - ALTSTACK at the top T of a signal's alternate stack, then
 *    ALTSTACK_BASE at its lowest address B: a handler is about to run on
 *    [B, T), and the guard put back the return addresses of the frames
 *    below T (their returns are lost). Those frames are set aside while
 *    the handler runs, so its calls nest under the first frame above T;
 *    the first event outside [B, T) ends the handler: frames still open
 *    on the alternate stack are missing (a siglongjmp out of it), and the
 *    set-aside frames come back, to be closed as "switched" when found
 *    dead. Without the BASE event (lost) they are closed at once.
 *
 * SAMPLING (--sample, --start-disabled): between windows every probe is
 * removed, and each window's events carry its epoch (s->epoch is the epoch
 * of the thread's latest call or return event). The rules above still
 * hold across windows, because they rest on stack pointers, not on seeing
 * every event: a frame entered in an earlier window that is found dead
 * returned while tracing was off, and is closed as "sampled" rather than
 * missing. Rule 2 of ENTRY also pops a frame of an earlier window at the
 * new entry's slot: it is far likelier to have returned while tracing was
 * off than to be a tail caller whose jump came in this window. In a window
 * after the first, a call made while the stack holds no frame of this
 * window gets caller AN_RESUMED ("<resumed>"): a function entered while
 * tracing was off may be live between the stack's top and the call (its
 * entry was never seen), so the real caller is not known; once a frame of
 * the window is on top, callers are exact again. The caller is recovered
 * from the stack pointers when the thread made a call at the same entry
 * slot below a top frame at the same slot (or below an empty stack) while
 * its caller was known: a function entered while tracing was off would
 * sit in between and push the call's slot lower. (A different call path
 * landing on exactly the same two slots would fool it; none is known.) A
 * return that matches no frame in a window after the first had its entry
 * while tracing was off ("orphan_sampled", not "orphan").
 *
 * WINDOW START: the kernel, seen on 6.18 in about one --budget run in a
 * hundred, drops the return of a thread's first call in a window whose
 * probes went in while an earlier window's set of the same sites was still
 * being released (the entry comes, the return never does, the next entry
 * comes at the same slot). Such a frame, found dead in its own window, is
 * counted "window_start", not missing: its call is counted, its times are
 * lost.
 *
 * BUDGET (--budget): some functions are traced all along, others only in
 * windows, so in an epoch between windows ("partial": s->partial has its
 * bit) a function not traced then may be live between the top frame and a
 * call: such a call's caller is AN_RESUMED (or recovered as above), never
 * the top frame, whatever epoch that frame has. Callers are known only in
 * epochs in which every function is traced, as in a sampling window;
 * frames of functions traced all along still match their returns across
 * epochs (by stack pointer and fid).
 *
 * NO RETURN ARMED (whole-container tracing): an entry flagged noret had
 * no return probe armed (its process was not guarded yet: the session
 * probe declined it). Its frame is pushed like one past the kernel's
 * depth limit (ret false: rules 1 and 2a close it when a later event's sp
 * is at or above its slot, so it is the caller of what it calls, as it
 * should be); it is counted "noret" at its entry, and neither missing nor
 * open when it is closed.
 *
 * BEFORE THE START (-p): probes emit nothing until the gate
 * opens (bpf/trace.bpf.c), but a call entered after its return probe went
 * in and before the gate opened has its return probe armed: its return
 * comes without an entry. Such a frame was entered before every frame the
 * thread was seen entering, so it sits below them all: a return that
 * matches nothing and finds the stack empty (after rule 1) is counted
 * "before" (entered before attach), not "orphan". A return on an empty
 * stack whose entry event was dropped counts there too; drops are
 * reported by kind on their own.
 *
 * FORKS (--follow-forks, a whole cgroup): a process forked (or vforked)
 * by a traced thread starts inside that thread's open calls: its stack
 * is a copy of the parent's, and the kernel copies the pending return
 * probes with it. Its shadow stack starts as a copy of the parent's at
 * the fork (shadow__inherit; the runner finds it: pipeline/runner.h),
 * so its calls have the callers its stack has and its returns close
 * those frames by the rules above. An inherited frame is the parent's
 * call, counted in the parent: the child's copy holds only the child's
 * time (its entry time is the fork's). Its return is not counted on
 * (ret false): the guard of a traced parent puts the return addresses a
 * child inherits back at its birth (user/trace/guard.h, guard__forks),
 * so a child's returns through inherited frames come only from a parent
 * no guard holds; when none comes the frame is closed when found dead
 * (ENTRY rules 1 and 2a) or at the end. However it closes it is
 * counted in c.inherited (c.inherited_matched when the child's own
 * return closed it), never as matched, missing or open, so the sum
 * that gives the calls holds in each process. A new thread starts
 * empty.
 *
 * Threads: a struct shadow belongs to one program thread and is used by one
 * analyzer thread at a time.
 */
#ifndef ANALYZERS_SHADOW_H
#define ANALYZERS_SHADOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/analyzer.h"
#include "cabbpf_event.h"
#include "common/hmap.h"

/* MAX_URETPROBE_DEPTH in kernel/events/uprobes.c. */
#define SHADOW_URETPROBE_DEPTH 64

/* struct shadow_frame: analyzers/analyzer.h (plugins read frames). */

/* Frames of a stack the thread switched away from (GUARD SWITCH). */
struct shadow_park {
	uint64_t key; /* the sp the left context resumes with */
	struct shadow_frame *f;
	size_t depth;
};

/* Parked stacks kept per thread; past this the oldest is closed. */
#define SHADOW_MAX_PARKED 4096

struct shadow_counts {
	uint64_t matched;	/* frames closed by their return event */
	uint64_t missing;	/* frames popped without a return event */
	uint64_t unwound;	/* frames unwound by an exception (GUARD THROW..CATCH) */
	uint64_t switched;	/* frames whose return was lost to a stack switch or
				   the program's own backtrace (GUARD SWITCH/BACKTRACE) */
	uint64_t exec;		/* frames of an image that execve replaced */
	uint64_t sampled;	/* frames entered in an earlier sampling window that
				   returned while tracing was off */
	uint64_t orphan;	/* return events that matched no frame */
	uint64_t orphan_sampled; /* such returns in a sampling window after the
				    first: their entry was while tracing was off */
	uint64_t window_start;	 /* frames of a thread's first call in a window
				    whose return never came (WINDOW START) */
	uint64_t before;	/* return events that matched no frame on an empty
				   stack: entered before the trace started (the
				   gate opened; -p), see "BEFORE THE START" */
	uint64_t depth_limited; /* entries made with >= 64 returns pending */
	uint64_t nomem;		/* entries not pushed: out of memory */
	uint64_t noret;		/* entries that armed no return probe (whole-
				   container tracing: the process was not guarded
				   yet); their frames, closed when found dead (rule
				   1) or still live at the end, are counted here
				   only, not as missing or open */
	uint64_t inherited;	/* frames a forked child inherited from its parent
				   (FORKS); however they close, counted here only,
				   not as matched, missing or open */
	uint64_t inherited_matched; /* of those: closed by the child's own return */
	uint64_t switches;	/* off-CPU intervals (CABBPF_EV_SCHED events) */
	uint64_t offcpu_ns;	/* their total length */
	uint64_t samples;	/* CPU-clock samples (CABBPF_EV_CPU_SAMPLE), see SAMPLES */
	uint64_t samples_root;	/* of those: with no frame on the stack */
	uint64_t aft_ns;	/* the probes' aftermath of the frames closed (SAMPLES),
				   ns: what came off the samples' time */
};

/* Where the shadow stack reports calls and closed frames. */
struct shadow_sink {
	void (*on_call)(void *ctx, const struct an_call *c);
	void (*on_return)(void *ctx, const struct an_return *r);
	void *ctx;
};

struct shadow {
	uint32_t tid;
	uint32_t nret;		/* frames on the stack with ret set */
	struct shadow_frame *f; /* f[0] is the outermost frame */
	size_t depth, cap;
	uint64_t chain_sp;    /* != 0: the next event must be a return here */
	bool unwinding;	      /* from a THROW to the first event after its CATCH */
	uint32_t throws;      /* THROW and FORCED events so far */
	bool caught;	      /* a CATCH came: unwinding ends at the next event */
	bool jumped;	      /* the unwinding is a longjmp's (GUARD JUMP) */
	bool exec_closing;    /* shadow__exec is closing the old image's frames */
	uint32_t epoch;	      /* sampling window of the latest call or return */
	uint32_t entry_epoch; /* sampling window of the latest call */
	/* --budget: bitmap of partial epochs (bit e), written by the loader
	 * before the epoch opens, or NULL (none: sampling) */
	const uint8_t *partial;
	struct hmap seen;   /* sampling: (entry slot, top frame's slot) of calls
			       whose caller was known (see SAMPLING above) */
	bool closing_open;  /* shadow__close_open is closing the last frames */
	struct shadow_park *park;
	size_t npark;
	struct hmap active; /* fid -> live frames of fid (recursion) */
	uint64_t off_ns;    /* off-CPU time of the thread so far (shadow__offcpu) */
	/* an_ctx.aft_in/aft_out (naft entries), or NULL: the aftermath each
	 * closed frame reports (SAMPLES) */
	const uint32_t *aft_in, *aft_out;
	uint32_t naft;
	uint32_t gen;	    /* bumped whenever f is replaced (park, unpark) */
	/* GUARD ALTSTACK: the handler's alternate stack [alt_lo, alt_hi) and
	 * the frames set aside below it, alt_f[0] the outermost */
	uint64_t alt_lo, alt_hi;
	struct shadow_frame *alt_f;
	size_t alt_n;
	/* --args, --retval: values of closed frames, kept for the next ones
	 * (a list through their first word) */
	struct callvals *spare_vals;
	struct shadow_counts c;
};

/* Start an empty stack for thread tid. Never fails (memory comes lazily). */
void shadow__init(struct shadow *s, uint32_t tid);
/* Free the stack; NULL is fine. Open frames are simply dropped. */
void shadow__fini(struct shadow *s);

/*
 * Feed one event of s's thread, in program order. Reports to k: on_return
 * for every frame popped (missing first, innermost first), then on_call
 * (entry) or on_return (matched return). Returns 0, or -ENOMEM when an
 * entry's frame could not be pushed (the call is still reported and counted
 * in c.nomem; the stack stays consistent).
 */
/* shadow__entry for an entry that armed no return probe when noret (see
 * NO RETURN ARMED); shadow__entry is noret false. */
int shadow__entry_noret(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts, bool noret,
			const struct shadow_sink *k);
int shadow__entry(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts,
		  const struct shadow_sink *k);
/* shadow__entry_noret with the entry's slot word (CABBPF_SLOT_*, 0 when
 * not known), which rule 2 of ENTRY reads first. */
int shadow__entry_slot(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts, bool noret,
		       uint32_t slot, const struct shadow_sink *k);
void shadow__return(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts,
		    const struct shadow_sink *k);

/* The sampling window of the thread's next call or return event (record
 * epoch; 0 without sampling): set it before feeding that event. */
static inline void shadow__set_epoch(struct shadow *s, uint32_t epoch)
{
	s->epoch = epoch;
}

/*
 * Feed a GUARD event (fid = the event's site and flavour, see
 * include/cabbpf_guard.h; sp its stack pointer), by the rules above.
 * Reports closed frames to k. Returns 0, or -ENOMEM when a stack could not
 * be parked (its frames are then closed as "switched").
 */
int shadow__guard(struct shadow *s, uint32_t fid, uint64_t sp, uint64_t ts,
		  const struct shadow_sink *k);

/* execve replaced the thread's image: close every frame (parked ones
 * too) as "exec", reporting each to k. */
void shadow__exec(struct shadow *s, uint64_t ts, const struct shadow_sink *k);

/*
 * The thread was off its CPU for off_ns (preempted or asleep) and is back:
 * a CABBPF_EV_SCHED event, in program order. Every frame live now was live
 * during the whole interval, so their on-CPU times (an_return.cpu_*) leave
 * it out; O(1): frames keep the thread's running total at entry.
 */
void shadow__offcpu(struct shadow *s, uint64_t off_ns);

/*
 * The designated size of the activation just entered (a CABBPF_EV_SIZE
 * event, right after its entry): set on the top frame when it is fid's,
 * ignored otherwise (its entry was dropped, or the size is unreadable:
 * CABBPF_SIZE_UNREADABLE). Returns whether it was set.
 */
static inline bool shadow__size(struct shadow *s, uint32_t fid, uint64_t size)
{
	struct shadow_frame *f = s->depth ? &s->f[s->depth - 1] : NULL;

	if (!f || f->fid != fid || size == CABBPF_SIZE_UNREADABLE)
		return false;
	f->sized = true;
	f->size = size;
	return true;
}

/*
 * A piece of an argument or return value of fid (a CABBPF_EV_VALUE event:
 * its meta and two words). Arguments come right after their entry, a
 * return value right before its return: either way the top frame's when
 * it is fid's, ignored otherwise (its entry was lost). The frame holds
 * them (shadow_frame.vals, from the thread's spares) until it closes.
 * Returns whether a frame took it; false also without memory (counted
 * in nomem).
 */
bool shadow__value(struct shadow *s, uint32_t fid, uint32_t meta, uint64_t w1, uint64_t w2);

/*
 * SAMPLES (--times sampled): the CPU clock interrupted the thread in user
 * mode (a CABBPF_EV_CPU_SAMPLE event, in program order): the top frame ran
 * that period of the program's own time (its self samples; its callers
 * get it in their inclusive samples when it closes: an_return.samples_*),
 * or, with an empty stack, no traced function did (c.samples_root). O(1).
 * A frame's samples do not depend on how it closed: an unwound or missing
 * frame's are as exact as a matched one's, up to the event that found it
 * dead. Each frame also reports the probes' aftermath in those samples
 * (aft_in, aft_out: an_return.aft_*): its own entry's in its self time,
 * its children's returns' too, and inside its inclusive time every traced
 * call's under it.
 */
static inline void shadow__cpu_sample(struct shadow *s)
{
	s->c.samples++;
	if (s->depth)
		s->f[s->depth - 1].samples++;
	else
		s->c.samples_root++;
}

/*
 * FORKS: the thread is a forked child that starts inside its parent's
 * open calls f[0..n) (f[0] outermost, the parent's stack at the fork):
 * s, which must be empty (no event fed yet), gets a copy of them,
 * inherited, entered at ts (the fork). The copies hold no values (f's
 * stay the parent's). Returns 0, -EINVAL (s not empty) or -ENOMEM
 * (then s keeps the frames it could take, outermost first, and the
 * rest are counted in c.nomem). f stays the caller's.
 */
int shadow__inherit(struct shadow *s, const struct shadow_frame *f, size_t n, uint64_t ts);

/* Of the frames shadow__depth counts, those inherited at a fork (FORKS):
 * counted in c.inherited already. */
size_t shadow__open_inherited(const struct shadow *s);

/* Pop every frame as missing (the thread is gone, e.g. its tid was reused),
 * reporting each to k; parked frames are closed as "switched". */
void shadow__abandon(struct shadow *s, uint64_t ts, const struct shadow_sink *k);

/*
 * The run is over: close the frames still on the stack, innermost first,
 * as "open" (an_return.open, with their times up to ts, the thread's last
 * event). Parked stacks stay parked, and frames set aside for a signal
 * handler stay aside (their frames have no times: their returns were
 * never observable). Touches none of the counters in s->c:
 * read them (and shadow__depth) first. Reports to k.
 */
void shadow__close_open(struct shadow *s, uint64_t ts, const struct shadow_sink *k);

/* Of the frames shadow__depth counts, those that armed no return probe
 * (counted in c.noret at their entry already). */
size_t shadow__open_noret(const struct shadow *s);

/* Frames still on the stack, parked or set aside for a signal handler
 * (counted "open" at the end of a run). */
static inline size_t shadow__depth(const struct shadow *s)
{
	size_t n = s->depth + s->alt_n, i;

	for (i = 0; i < s->npark; i++)
		n += s->park[i].depth;
	return n;
}

/* Top frame's fid, or AN_ROOT when empty. */
static inline uint32_t shadow__top(const struct shadow *s)
{
	return s->depth ? s->f[s->depth - 1].fid : AN_ROOT;
}

#endif /* ANALYZERS_SHADOW_H */
