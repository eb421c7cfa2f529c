// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite of cabbpf record / report / dump (user/record/) on the
 * real kernel with the targets of tests/targets/ at -O0 and -O2:
 *   - round trip: the live report of a recording run (text and JSON) is
 *     byte-identical to `cabbpf report` of its recording; each analyzer
 *     alone (-a X) gives exactly the live run's keys; counts exact against
 *     tests/expected/targets.txt;
 *   - dump: exact event counts per function, kind and thread;
 *   - pprof from a recording read back by `go tool pprof -traces`: exact
 *     calls per calling context;
 *   - the target unharmed (same stdout, stderr, exit status untraced);
 *   - two threads calling flat out: nothing lost, counts exact;
 *   - truncated, corrupt and foreign files: a clear error with the byte
 *     position, exit 1, no crash; the recording's path checked before
 *     tracing, never written through a symlink.
 * Needs root, BPF and go (scripts/install-deps.sh): nothing skips.
 */
#include <check.h>
#include <ctype.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "tests/harness.h"

#define OPT(i) ((i) ? 2 : 0)

static char *tmp_path(const char *name)
{
	static char buf[8][PATH_MAX];
	static int k;
	char *b = buf[k++ & 7];

	snprintf(b, PATH_MAX, "%s/%d-%s", h_tmp, (int)getpid(), name);
	unlink(b);
	return b;
}

/* Run cabbpf with args (NULL-terminated; no --json added) to completion
 * into *r. */
static void run(struct h_run *r, char *const *args)
{
	ck_assert_int_eq(h_start(r, args, 1, 0), 0);
	h_finish(r);
}

static void assert_status(const struct h_run *r, int want)
{
	ck_assert_msg(r->status == want, "cabbpf exited %d, not %d; stderr:\n%s", r->status, want,
		      r->err);
}

/* `cabbpf record -o rec [pre...] -- target...` to completion. */
static void record(struct h_run *r, const char *rec, char *const *pre, char *const *target)
{
	char *args[H_MAX_ARGS];
	size_t n = 0, i;

	args[n++] = "record";
	args[n++] = "-o";
	args[n++] = (char *)rec;
	for (i = 0; pre && pre[i]; i++)
		args[n++] = pre[i];
	args[n++] = "--";
	for (i = 0; target[i]; i++)
		args[n++] = target[i];
	args[n] = NULL;
	run(r, args);
	assert_status(r, 0);
	ck_assert_msg(strstr(r->err, "recorded "), "no recording line:\n%s", r->err);
}

/* ---------------------------------------------------------- round trip -- */

static const struct rt_case {
	const char *name;
	const char *args[4]; /* the target's arguments */
	const char *run;     /* its line in tests/expected/targets.txt */
	const char *facts[10];
} rt_cases[] = {
	{"recurse", {"20"}, "recurse 20",
	 {"calls fib", "calls main", "edge main -> fib", "edge fib -> fib", "edge <root> -> main",
	  "edges"}},
	{"threads", {"4", "1000"}, "threads 4 1000",
	 {"calls work", "calls worker", "edge worker -> work", "edge <root> -> worker"}},
	{"demo", {NULL}, "demo",
	 {"calls next_random", "calls pick_word", "calls parse_token", "calls lookup", "calls insert",
	  "edge count_words -> lookup", "edge merge_tables -> lookup", "edge count_words -> insert"}},
};

/* root's outputs: [first (option, path) if first, "-o" on stdout, "--json"
 * json], each written. */
static void assert_outputs(json_object *root, const char *first, const char *path,
			   const char *json)
{
	json_object *outs = h_get(root, "outputs");
	const char *want[3][2] = {{first, path}, {"-o", "-"}, {"--json", json}};
	size_t i, k = 0;

	ck_assert_ptr_nonnull(outs);
	for (i = first ? 0 : 1; i < 3; i++, k++) {
		json_object *o = json_object_array_get_idx(outs, k);

		ck_assert_str_eq(json_object_get_string(h_get(o, "option")), want[i][0]);
		ck_assert_str_eq(json_object_get_string(h_get(o, "path")), want[i][1]);
		ck_assert(json_object_get_boolean(h_get(o, "written")));
	}
	ck_assert_int_eq(json_object_array_length(outs), k);
}

/* The elements of arr (functions[]) without est_incl_ns, each asserted
 * at least its est_self_ns first. */
static void without_est_incl(json_object *arr)
{
	size_t k;

	for (k = 0; k < json_object_array_length(arr); k++) {
		json_object *f = json_object_array_get_idx(arr, k);

		if (h_get(f, "est_incl_ns"))
			ck_assert_int_ge(h_num(f, "est_incl_ns"), h_num(f, "est_self_ns"));
		json_object_object_del(f, "est_incl_ns");
	}
}

/* text with each line's words joined by one space, and the second word
 * left out of the lines whose first is a number (the count table's
 * INCL_MS). Malloc'd. */
static char *without_col2(const char *text)
{
	char *out = malloc(strlen(text) + 1), *o = out;
	const char *p = text;

	ck_assert_ptr_nonnull(out);
	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		int word = 0;
		bool numeric = false;

		while (p < end) {
			const char *w;

			while (p < end && *p == ' ')
				p++;
			if (p == end)
				break;
			w = p;
			while (p < end && *p != ' ')
				p++;
			if (word == 0)
				numeric = *w >= '0' && *w <= '9';
			if (!(numeric && word == 1)) {
				if (o > out && o[-1] != '\n')
					*o++ = ' ';
				memcpy(o, w, (size_t)(p - w));
				o += p - w;
			}
			word++;
		}
		if (eol) {
			*o++ = '\n';
			p = eol + 1;
		}
	}
	*o = 0;
	return out;
}

/* Loop index: case i / 2 at -O(i % 2 ? 2 : 0). The recording run analyzes
 * live too (-a all, --json): its text report (after the target's own
 * output on stdout) and its JSON are exactly those of the report of its
 * recording. */
START_TEST(round_trip)
{
	const struct rt_case *c = &rt_cases[_i / 2];
	char *rec = tmp_path("rt.cbr"), *live = tmp_path("rt-live.json"),
	     *off = tmp_path("rt-off.json"), *one = tmp_path("rt-one.json");
	/* demo makes ~303,000 events: rings of 64 MiB per CPU (1,048,576)
	 * hold them all, however late cabbpf drains (tests/harness.h) */
	char *pre[] = {"--ring-size", "64", "-a", "count,callgraph,io,cct,latency", "--json", live,
		       NULL};
	char *target[6] = {(char *)h_target(c->name, OPT(_i % 2))};
	char *rep[] = {"report", rec, "--json", off, NULL};
	static const char *const analyzers[] = {"count", "callgraph", "io", "cct", "latency"};
	char *ltext, *otext, *ljs, *ojs;
	json_object *lj, *oj, *aj;
	struct h_run r, o, a;
	size_t i, nl, no;

	for (i = 0; c->args[i]; i++)
		target[i + 1] = (char *)c->args[i];
	record(&r, rec, pre, target);
	run(&o, rep);
	assert_status(&o, 0);
	/* Text: the report is the tail of the recording run's stdout. */
	nl = strlen(r.out);
	no = strlen(o.out);
	ck_assert_msg(no > 200 && nl >= no && !strcmp(r.out + nl - no, o.out),
		      "text reports differ:\nlive:\n%s\nreport:\n%s", r.out, o.out);
	/* JSON: identical, but for the files each run wrote (outputs: the
	 * live run's recording and its JSON; the report's JSON). */
	lj = h_parse_json(live);
	oj = h_parse_json(off);
	ck_assert(lj && oj);
	assert_outputs(lj, "--record", rec, live);
	assert_outputs(oj, NULL, NULL, off);
	json_object_object_del(lj, "outputs");
	json_object_object_del(oj, "outputs");
	ljs = strdup(json_object_to_json_string_ext(lj, JSON_C_TO_STRING_PRETTY));
	ojs = strdup(json_object_to_json_string_ext(oj, JSON_C_TO_STRING_PRETTY));
	ck_assert_msg(strlen(ljs) > 100 && !strcmp(ljs, ojs), "JSON reports differ");
	h_assert_no_loss(oj);
	for (i = 0; c->facts[i]; i++)
		h_check(oj, c->run, c->facts[i]);
	/* Each analyzer alone: every key of its report is the live one. */
	for (i = 0; i < 5; i++) {
		char *args[] = {"report", rec, "-a", (char *)analyzers[i], "--json", one, NULL};

		run(&a, args);
		assert_status(&a, 0);
		aj = h_parse_json(one);
		ck_assert_ptr_nonnull(aj);
		ck_assert_msg(h_get(aj, i == 0 ? "functions" : analyzers[i]), "-a %s: no section",
			      analyzers[i]);
		json_object_object_del(aj, "outputs"); /* its own files */
		json_object_object_foreach(aj, key, val)
		{
			json_object *lv = h_get(lj, key), *lcopy = NULL;

			/* The per-function counts' sampled totals are the
			 * call tree's when it runs too (sec_count__text_tree:
			 * carried up, none below a callee's), their own sums
			 * alone: the rest of each row is the live one's, and
			 * a total alone is at least its self. */
			if (i == 0 && !strcmp(key, "functions")) {
				ck_assert_int_eq(json_object_deep_copy(lv, &lcopy, NULL), 0);
				without_est_incl(val);
				without_est_incl(lcopy);
				lv = lcopy;
			}
			ck_assert_msg(json_object_equal(val, lv),
				      "-a %s: key %s differs from the live run's", analyzers[i], key);
			json_object_put(lcopy);
		}
		/* and its text section is in the live text */
		otext = strstr(a.out, "\n\n");
		ck_assert_ptr_nonnull(otext);
		ltext = strstr(a.out, "returns:");
		ck_assert_ptr_nonnull(ltext);
		*ltext = 0;
		if (i == 0) { /* (the totals: see above) */
			char *x = without_col2(otext + 2), *y = without_col2(o.out);

			ck_assert_msg(strstr(y, x), "-a count: text section not the live one's");
			free(x);
			free(y);
		} else
			ck_assert_msg(strstr(o.out, otext + 2),
				      "-a %s: text section not the live one's", analyzers[i]);
		json_object_put(aj);
		h_free(&a);
	}
	json_object_put(lj);
	json_object_put(oj);
	free(ljs);
	free(ojs);
	h_free(&r);
	h_free(&o);
}
END_TEST

/* The isp analyzer from a recording: --cost and --plots act on the
 * analysis; --size was the recording's (its size events are in the
 * chunks). The profiles are the live run's, key for key. */
START_TEST(isp_round_trip)
{
	char *rec = tmp_path("isp.cbr"), *live = tmp_path("isp-live.json"),
	     *off = tmp_path("isp-off.json"), *plots = tmp_path("isp-plots");
	char *pre[] = {"-a", "isp", "--cost", "calls", "--size", "work:arg0", "--json", live, NULL};
	char *target[] = {(char *)h_target("isp", 2), NULL};
	char *rep[] = {"report", rec,  "-a",	"isp",	     "--cost", "calls",
		       "--json", off,  "--plots", plots, NULL};
	char svg[PATH_MAX + 16];
	json_object *lj, *oj;
	struct h_run r, o;
	struct stat sb;

	record(&r, rec, pre, target);
	run(&o, rep);
	assert_status(&o, 0);
	lj = h_parse_json(live);
	oj = h_parse_json(off);
	ck_assert(lj && oj);
	ck_assert_ptr_nonnull(h_get(oj, "isp"));
	ck_assert_msg(json_object_equal(h_get(lj, "isp"), h_get(oj, "isp")),
		      "isp profiles differ from the live run's");
	ck_assert(json_object_equal(h_get(lj, "isp_info"), h_get(oj, "isp_info")));
	/* the argument-sized routine: 6 activations, sizes from arg0 */
	ck_assert_str_eq(json_object_get_string(h_get(h_find(h_get(oj, "isp"), "name", "work",
							     NULL, NULL),
						      "size_source")),
			 "arg");
	snprintf(svg, sizeof(svg), "%s/quad.svg", plots);
	ck_assert_msg(stat(svg, &sb) == 0 && sb.st_size > 1000, "no plot %s", svg);
	json_object_put(lj);
	json_object_put(oj);
	h_free(&r);
	h_free(&o);
}
END_TEST

/* ---------------------------------------------------------------- dump -- */

/* Lines of out whose kind (4th field) is kind and whose 5th field is fn
 * (NULL: any); per thread into tids[] / counts[] (up to 8 threads). */
static long count_lines(const char *out, const char *kind, const char *fn, long *tids,
			long *counts, int *nt)
{
	const char *p = out;
	long total = 0, tid;
	char k[32], f[256];
	int t;

	if (nt)
		*nt = 0;
	while (p && *p) {
		if (*p != '#' && sscanf(p, "%ld %*s %*s %31s %255s", &tid, k, f) == 3 &&
		    !strcmp(k, kind) && (!fn || !strcmp(f, fn))) {
			total++;
			for (t = 0; nt && t < *nt && tids[t] != tid; t++)
				;
			if (nt && t == *nt && t < 8) {
				tids[t] = tid;
				counts[t] = 0;
				(*nt)++;
			}
			if (nt && t < 8)
				counts[t]++;
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return total;
}

/* cabbpf dump: every call and return, exactly; per thread for threads;
 * calls + returns = the report's events. */
START_TEST(dump_exact)
{
	char *rec = tmp_path("dump.cbr"), *js = tmp_path("dump.json");
	char *t1[] = {(char *)h_target("recurse", OPT(_i)), "20", NULL};
	char *t2[] = {(char *)h_target("threads", OPT(_i)), "4", "1000", NULL};
	char *dump[] = {"dump", rec, NULL}, *rep[] = {"report", rec, "-q", "--json", js, NULL};
	long tids[8], counts[8], sorted[4] = {0}, calls, rets;
	struct h_run r, d, o;
	json_object *j;
	int nt, i, k;

	record(&r, rec, NULL, t1);
	run(&d, dump);
	assert_status(&d, 0);
	ck_assert_int_eq(count_lines(d.out, "call", "fib", NULL, NULL, NULL),
			 h_expected("recurse 20", "calls fib"));
	ck_assert_int_eq(count_lines(d.out, "return", "fib", NULL, NULL, NULL),
			 h_expected("recurse 20", "calls fib"));
	ck_assert_int_eq(count_lines(d.out, "call", "main", NULL, NULL, NULL), 1);
	ck_assert_int_eq(count_lines(d.out, "return", "main", NULL, NULL, NULL), 1);
	calls = count_lines(d.out, "call", NULL, NULL, NULL, NULL);
	rets = count_lines(d.out, "return", NULL, NULL, NULL, NULL);
	ck_assert_int_eq(calls, h_expected("recurse 20", "entries"));
	run(&o, rep);
	assert_status(&o, 0);
	j = h_parse_json(js);
	ck_assert_int_eq(calls + rets, h_num(j, "events"));
	/* the dynamic loader's reads, as the io analyzer saw them */
	ck_assert_int_eq(count_lines(d.out, "io", NULL, NULL, NULL, NULL),
			 h_num(h_get(j, "io"), "events"));
	json_object_put(j);
	h_free(&r);
	h_free(&d);
	h_free(&o);

	record(&r, rec, NULL, t2);
	run(&d, dump);
	assert_status(&d, 0);
	ck_assert_int_eq(count_lines(d.out, "call", "work", tids, counts, &nt),
			 h_expected("threads 4 1000", "calls work"));
	ck_assert_int_eq(nt, 4);
	/* thread i makes 1000 * (i + 1) calls: the four counts, in order */
	for (i = 0; i < 4; i++) {
		for (k = i; k > 0 && sorted[k - 1] > counts[i]; k--)
			sorted[k] = sorted[k - 1];
		sorted[k] = counts[i];
	}
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(sorted[i], 1000 * (i + 1));
	ck_assert_int_eq(count_lines(d.out, "return", "work", NULL, NULL, NULL), 10000);
	h_free(&r);
	h_free(&d);
}
END_TEST

/* ----------------------------------------------------------- pprof -- */

/* The recording's calling contexts through --pprof, read by Go's pprof
 * with -traces: each context's calls exact (ctx's tree: main;a;c;d N,
 * main;b;c;d 2N, ...); with -raw: the functions' source files and lines
 * and the mapping (binary, build id) came through the recording (its
 * SOURCE block), and every sample value adds up to the live run's. */
START_TEST(pprof_traces_from_recording)
{
	char *rec = tmp_path("ctx.cbr"), *pb = tmp_path("ctx.pb.gz"), *live = tmp_path("live.pb.gz");
	char *target[] = {(char *)h_target("ctx", OPT(_i)), "20", "1", NULL};
	char *pre[] = {"-a", "cct", "--pprof", live, NULL};
	char *rep[] = {"report", rec, "-q", "--pprof", pb, NULL};
	static const struct {
		const char *stack; /* leaf first, as pprof -traces prints */
		long calls;
	} want[] = {{"main", 1},	{"a main", 20},	      {"c a main", 20}, {"d c a main", 20},
		    {"b main", 20}, {"c b main", 40},	      {"d c b main", 40}, {"nap main", 1}};
	char cmd[PATH_MAX + 256], line[512], stack[512], fn[128];
	long calls = -1, seen[8] = {0};
	struct h_run r, o;
	size_t i;
	FILE *p;

	record(&r, rec, pre, target);
	run(&o, rep);
	assert_status(&o, 0);
	snprintf(cmd, sizeof(cmd),
		 "HOME=%s GOCACHE=%s/gocache go tool pprof -traces -sample_index=calls %s 2>&1",
		 h_tmp, h_tmp, pb);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	/* A trace: "-----------+---" then "      20   d" and "           c" ... */
	stack[0] = 0;
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "-----------+", 12) || !strncmp(line, "---", 3)) {
			for (i = 0; calls >= 0 && i < 8; i++)
				if (!strcmp(stack, want[i].stack))
					seen[i] += calls;
			stack[0] = 0;
			calls = -1;
			continue;
		}
		if (sscanf(line, " %ld %127s", &calls, fn) == 2 && calls >= 0 && !stack[0])
			snprintf(stack, sizeof(stack), "%s", fn);
		else if (stack[0] && sscanf(line, " %127s", fn) == 1)
			snprintf(stack + strlen(stack), sizeof(stack) - strlen(stack), " %s", fn);
	}
	ck_assert_int_eq(pclose(p), 0);
	for (i = 0; i < 8; i++)
		ck_assert_msg(seen[i] == want[i].calls, "pprof -traces: %s %ld calls, want %ld",
			      want[i].stack, seen[i], want[i].calls);
	{
		static const char *const fns[] = {"main", "a", "b", "c", "d", "nap"};
		static const char *const defs[] = {"int main(",	    "TRACED void a(",
						   "TRACED void b(", "TRACED void c(",
						   "TRACED void d(", "TRACED void nap("};
		struct h_pprof off, on;
		char real[PATH_MAX], tail[64], wbuf[1024], *map;
		const char *w;

		h_pprof_read(&off, pb);
		h_pprof_read(&on, live);
		for (i = 0; i < 6; i++) {
			w = h_pprof_where(&off, fns[i]);
			snprintf(tail, sizeof(tail), "/tests/targets/ctx.c:%d",
				 h_line_of("tests/targets/ctx.c", defs[i]));
			ck_assert_msg(w && strlen(w) > strlen(tail) &&
					      !strcmp(w + strlen(w) - strlen(tail), tail),
				      "%s at %s, want ...%s", fns[i], w ? w : "(none)", tail);
			/* h_pprof_where's buffer is static: the recording's
			 * answer copied before the live one is asked for */
			snprintf(wbuf, sizeof(wbuf), "%s", w);
			w = h_pprof_where(&on, fns[i]);
			ck_assert_str_eq(wbuf, w ? w : "(none)");
		}
		ck_assert_ptr_nonnull(realpath(target[0], real));
		map = (char *)h_pprof_mapping(&off, real);
		ck_assert_msg(map && strstr(map, h_build_id(real)), "mapping of %s:\n%s", real,
			      off.raw);
		ck_assert_int_eq(off.samples, on.samples);
		for (i = 0; i < 3; i++)
			ck_assert_int_eq(off.sum[i], on.sum[i]);
		ck_assert_int_eq(off.wall_lt_cpu, 0);
		h_pprof_free(&off);
		h_pprof_free(&on);
	}
	h_free(&r);
	h_free(&o);
}
END_TEST

/* ---------------------------------------------------------- timeline -- */

/* --timeline, live during a recording and from the recording: the same
 * file byte for byte; structurally valid (h_timeline: complete events,
 * per-thread nesting); every activation there (threads 4 1000: work
 * 1000 * (i + 1) per thread i, worker 4, main 1; recurse 20: fib 21891
 * nested 20 deep); I/O calls as many as the io analyzer saw; and
 * --timeline-limit cuts exactly, saying so. */
START_TEST(timeline_exact)
{
	char *rec = tmp_path("tl.cbr"), *live = tmp_path("tl-live.json"), *off = tmp_path("tl-off.json"),
	     *js = tmp_path("tl-report.json"), *lim = tmp_path("tl-lim.json");
	char *t1[] = {(char *)h_target("threads", OPT(_i)), "4", "1000", NULL};
	char *t2[] = {(char *)h_target("recurse", OPT(_i)), "20", NULL};
	char *pre[] = {"-q", "--timeline", live, NULL};
	char *rep[] = {"report", rec, "-q", "--timeline", off, "--json", js, NULL};
	char *replim[] = {"report", rec, "-q", "--timeline", lim, "--timeline-limit", "100", NULL};
	long long counts[4], tids[4], io, total, k, i, sorted[4] = {0};
	json_object *tl, *j, *ev;
	struct h_run r, o;
	char *a, *b, want[128];

	record(&r, rec, pre, t1);
	run(&o, rep);
	assert_status(&o, 0);
	a = h_slurp(live);
	b = h_slurp(off);
	ck_assert_msg(strlen(a) > 1000 && !strcmp(a, b), "live and recorded timelines differ");
	free(a);
	free(b);
	tl = h_timeline(off);
	j = h_parse_json(js);
	ck_assert_int_eq(h_tl_count(tl, "X", "work", -1), h_expected("threads 4 1000", "calls work"));
	ck_assert_int_eq(h_tl_count(tl, "X", "worker", -1), 4);
	ck_assert_int_eq(h_tl_count(tl, "X", "main", -1), 1);
	ck_assert_int_eq(h_tl_count(tl, "M", "thread_name", -1), 5);
	io = h_tl_count(tl, "i", NULL, -1);
	ck_assert_int_eq(io, h_num(h_get(j, "io"), "events"));
	/* per worker thread: its calls of work */
	ev = h_get(tl, "traceEvents");
	for (i = 0, k = 0; i < (long long)json_object_array_length(ev) && k < 4; i++) {
		json_object *e = json_object_array_get_idx(ev, (size_t)i);

		if (!strcmp(json_object_get_string(h_get(e, "ph")), "X") &&
		    !strcmp(json_object_get_string(h_get(e, "name")), "worker"))
			tids[k++] = json_object_get_int64(h_get(e, "tid"));
	}
	ck_assert_int_eq(k, 4);
	for (i = 0; i < 4; i++)
		counts[i] = h_tl_count(tl, "X", "work", tids[i]);
	for (i = 0; i < 4; i++) {
		for (k = i; k > 0 && sorted[k - 1] > counts[i]; k--)
			sorted[k] = sorted[k - 1];
		sorted[k] = counts[i];
	}
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(sorted[i], 1000 * (i + 1));
	total = 10005 + io;
	ck_assert_int_eq(h_num(h_get(tl, "otherData"), "events"), total);
	ck_assert_int_eq(h_num(h_get(tl, "otherData"), "cut"), 0);
	json_object_put(tl);
	json_object_put(j);
	h_free(&o);

	/* the limit: exactly 100 kept, the rest counted, said on stderr */
	run(&o, replim);
	assert_status(&o, 0);
	snprintf(want, sizeof(want), "100 events written, %lld more cut by --timeline-limit 100",
		 total - 100);
	ck_assert_msg(strstr(o.err, want), "stderr lacks '%s':\n%s", want, o.err);
	tl = h_timeline(lim);
	ck_assert_int_eq(h_tl_count(tl, "X", NULL, -1) + h_tl_count(tl, "i", NULL, -1), 100);
	ck_assert_int_eq(h_num(h_get(tl, "otherData"), "events"), 100);
	ck_assert_int_eq(h_num(h_get(tl, "otherData"), "cut"), total - 100);
	json_object_put(tl);
	h_free(&o);
	h_free(&r);

	/* deep recursion: 21891 fib frames, nested */
	record(&r, rec, pre, t2);
	tl = h_timeline(live);
	ck_assert_int_eq(h_tl_count(tl, "X", "fib", -1), h_expected("recurse 20", "calls fib"));
	ck_assert_int_eq(h_tl_count(tl, "X", "main", -1), 1);
	json_object_put(tl);
	h_free(&r);
}
END_TEST

/* ------------------------------------------------ the target unharmed -- */

START_TEST(target_unharmed)
{
	char *rec = tmp_path("demo.cbr");
	char *target[] = {(char *)h_target("demo", OPT(_i)), NULL};
	struct h_plain p;
	struct h_run r;
	char *err;

	h_plain_run(&p, target);
	record(&r, rec, NULL, target);
	ck_assert_str_eq(r.out, p.out); /* no live report: the target's output only */
	err = h_drop_lines(r.err, "cabbpf: ");
	ck_assert_str_eq(err, p.err);
	ck_assert_ptr_nonnull(strstr(r.err, "exited with status 0"));
	ck_assert_int_eq(WEXITSTATUS(p.status), 0);
	free(err);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* ----------------------------------------------------------- storm -- */

/* Two threads calling leaf() flat out (bench/targets/calls.c), recorded
 * without live analysis: nothing lost, the count exact; the live run of
 * the same workload loses nothing either. */
START_TEST(storm_no_loss)
{
	char *rec = tmp_path("storm.cbr"), *js = tmp_path("storm.json"), *lv = tmp_path("storm-live.json");
	char bin[PATH_MAX];
	char *target[] = {bin, "2", "500000", NULL};
	/* 2,000,000 call events (and some scheduler ones): rings of 256 MiB
	 * per CPU (4,194,304 events) hold them all, however late cabbpf
	 * drains (tests/harness.h); whether it keeps up without is a
	 * throughput figure: bench/record.sh */
	char *pre[] = {"--ring-size", "256", "-f", "leaf", NULL};
	char *rep[] = {"report", rec, "-q", "--json", js, NULL};
	char *live[] = {"-q", "--ring-size", "256", "-f", "leaf",   "--json",
			lv,   "--",	     bin,   "2",  "500000", NULL};
	struct h_run r, o, l;
	json_object *j;

	snprintf(bin, sizeof(bin), "%s/calls-push", h_tmp);
	h_shell("gcc -O2 -g -DENTRY_PUSH -fno-omit-frame-pointer -pthread -o %s bench/targets/calls.c",
		bin);
	record(&r, rec, pre, target);
	run(&o, rep);
	assert_status(&o, 0);
	j = h_parse_json(js);
	ck_assert_ptr_nonnull(j);
	h_assert_no_loss(j);
	ck_assert_int_eq(h_calls(j, "leaf"), 1000000);
	ck_assert_int_eq(h_num(j, "events"), 2000000);
	json_object_put(j);
	run(&l, live);
	assert_status(&l, 0);
	j = h_parse_json(lv);
	h_assert_no_loss(j);
	ck_assert_int_eq(h_calls(j, "leaf"), 1000000);
	json_object_put(j);
	h_free(&r);
	h_free(&o);
	h_free(&l);
}
END_TEST

/* ------------------------------------------------------ bad recordings -- */

START_TEST(bad_recordings_refused)
{
	char *rec = tmp_path("good.cbr"), *bad = tmp_path("bad.cbr"), *txt = tmp_path("notes.txt"),
	     *empty = tmp_path("empty.cbr");
	char *target[] = {(char *)h_target("recurse", 2), "15", NULL};
	char *rep_bad[] = {"report", bad, NULL}, *dump_bad[] = {"dump", bad, NULL};
	char *rep_txt[] = {"report", txt, NULL}, *rep_empty[] = {"report", empty, NULL};
	char *rep_none[] = {"report", tmp_path("none.cbr"), NULL};
	char *two[] = {"report", rec, rec, NULL}, *trace_opt[] = {"report", rec, "-f", "x", NULL};
	struct h_run r;
	struct stat sb;

	record(&r, rec, NULL, target);
	h_free(&r);
	ck_assert_int_eq(stat(rec, &sb), 0);
	/* cut in half, and just before its end */
	h_shell("head -c %lld %s > %s", (long long)sb.st_size / 2, rec, bad);
	h_expect_failure(rep_bad, 0, "truncated recording at byte");
	h_expect_failure(dump_bad, 0, "truncated recording at byte");
	h_shell("head -c %lld %s > %s", (long long)sb.st_size - 1, rec, bad);
	h_expect_failure(rep_bad, 0, "truncated recording at byte");
	/* a byte flipped in the middle of the compressed data */
	h_shell("cp %s %s && printf '\\377' | dd of=%s bs=1 seek=%lld conv=notrunc status=none", rec,
		bad, bad, (long long)sb.st_size / 2);
	h_expect_failure(rep_bad, 0, "corrupt or truncated recording at byte");
	/* the version: one past this cabbpf's (RECFMT_VERSION 12) */
	h_shell("cp %s %s && printf '\\015' | dd of=%s bs=1 seek=8 conv=notrunc status=none", rec,
		bad, bad);
	h_expect_failure(rep_bad, 0, "recording format version 13 (byte 8)");
	h_write(txt, "just some notes\n");
	h_expect_failure(rep_txt, 0, "not a cabbpf recording (byte 0");
	h_write(empty, "");
	h_expect_failure(rep_empty, 0, "not a cabbpf recording");
	h_expect_failure(rep_none, 0, "cannot read");
	h_expect_failure(two, 0, "one too many");
	h_expect_failure(trace_opt, 0, "-f is not an option of cabbpf report");
}
END_TEST

/* The recording's path is checked before anything is traced, and a
 * symlink planted at it (to a 0600 victim, or dangling) is replaced, never
 * followed. */
START_TEST(record_path_safe)
{
	char *link = tmp_path("link.cbr");
	char *target[] = {(char *)h_target("recurse", 2), "10", NULL};
	char *nodir[] = {"record", "-o", "/nonexistent-dir/x.cbr", "--", target[0], "10", NULL};
	char *noo[] = {"record", "--", target[0], "10", NULL};
	char *rec[] = {"record", "-o", link, "--", target[0], "10", NULL};
	char *rep[] = {"report", link, "-q", NULL};
	struct h_run r;

	run(&r, nodir);
	assert_status(&r, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "cannot write the recording /nonexistent-dir/x.cbr"));
	ck_assert_ptr_null(strstr(r.err, H_TRACING)); /* nothing was traced */
	h_free(&r);
	run(&r, noo);
	assert_status(&r, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "give -o FILE"));
	h_free(&r);

	h_assert_writes_safely("record -o", rec, 1, link, NULL);
	run(&r, rep); /* what was written is a whole recording */
	assert_status(&r, 0);
	h_free(&r);
}
END_TEST

/* ------------------------------------------------------------- replay -- */

/* What cabbpf replay must print for a deterministic target: the golden
 * file tests/expected/replay/NAME.txt holds its lines with START_S,
 * DURATION and TID masked (whether a duration is there stays: a leaf's
 * line and a closing brace have one, an opening one and an I/O call's
 * none, an unwound call's none). */
static const char *const vals_rec[] = {
	"--args",   "add:int(arg0),int(arg1)", "--args",   "name_len:str(arg0),strlen(arg0)",
	"--args",   "wide:arg0,arg1,arg2,arg3,arg4,arg5", "--retval", "add:int",
	"--retval", "name_len", "--retval", "greet:str", "--retval", "wide",
	"--retval", "big", NULL};

static const struct rp_case {
	const char *name;
	const char *target; /* h_target's name; cxx: h_cxx_target's */
	bool cxx;
	const char *targs[3];
	const char *rargs[14]; /* NULL-ended: room for one more than the longest */
	const char *const *recargs; /* cabbpf record's options, or NULL */
} rp_cases[] = {
	/* -F main: not the dynamic loader's reads before main, which are the
	 * machine's libraries' */
	{"recurse", "recurse", false, {"4"}, {"-F", "main"}, NULL},
	/* -N 'std::*': at -O0, libstdc++'s inline helpers are functions of
	 * the program, called (and traced) */
	{"exc-basic", "exc", true, {"basic", "2"}, {"-F", "main", "-N", "tally", "-N", "std::*"}, NULL},
	{"exc-rethrow",
	 "exc",
	 true,
	 {"rethrow", "1"},
	 {"-F", "main", "-N", "tally", "-N", "std::*"},
	 NULL},
	{"io-filter", "iotarget", false, {NULL}, {"-F", "vector_io", "-F", "msg_io", "-F", "dgram_io"},
	 NULL},
	{"io-depth",
	 "iotarget",
	 false,
	 {NULL},
	 {"--depth", "2", "-N", "pipe_io", "-N", "sock_io", "-N", "write_file", "-N", "read_file",
	  "-F", "main"},
	 NULL},
	/* --args, --retval (tests/targets/vals.c): every kind of value, a
	 * string cut, strings not readable */
	{"vals",
	 "vals",
	 false,
	 {"3"},
	 {"-F", "main"},
	 vals_rec},
};

/* s's lines, each "D | ..." or "  | ..." (its duration there or not) for
 * "START_S DURATION TID | ...", an I/O call's fd masked ("read(N file)":
 * which fds a target gets depends on what its parent left open), and the
 * address of a string not read ("(unread 0xADDR)": where mmap put the
 * page); other lines as they are. Caller frees. */
/* Whether p starts an I/O call's "(FD KIND)", not a call's arguments. */
static bool is_io(const char *p)
{
	if (!isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p++ != ' ' || !islower((unsigned char)*p))
		return false;
	while (islower((unsigned char)*p))
		p++;
	return *p == ')';
}

static char *mask_replay(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n + 1), *o = out;
	const char *line = s;

	ck_assert_ptr_nonnull(out);
	while (*line) {
		const char *nl = strchr(line, '\n'), *bar = strstr(line, " | ");
		size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);

		if (line[0] != '#' && bar && bar < line + len && bar - line == 32) {
			/* "%12.6f %11s %7u": the duration is columns 13..23 */
			bool dur = strncmp(line + 13, "           ", 11) != 0;

			const char *q = bar, *paren = memchr(bar, '(', len - (size_t)(bar - line));

			o += sprintf(o, "%s", dur ? "D" : " ");
			if (paren && is_io(paren + 1) && strstr(paren, ") = ") &&
			    strstr(paren, ") = ") < line + len) {
				/* an I/O call: its fd */
				memcpy(o, q, (size_t)(paren + 1 - q));
				o += paren + 1 - q;
				*o++ = 'N';
				for (q = paren + 1; *q >= '0' && *q <= '9'; q++)
					;
			}
			memcpy(o, q, len - (size_t)(q - line));
			o += len - (size_t)(q - line);
		} else {
			memcpy(o, line, len);
			o += len;
		}
		line += len;
	}
	*o = 0;
	for (o = out; (o = strstr(o, "(unread 0x")) != NULL;) {
		char *e = o += strlen("(unread 0x");

		while (isxdigit((unsigned char)*e))
			e++;
		ck_assert_int_ge(e - o, 4); /* a page's address: 0x1000 and up */
		memcpy(o, "ADDR", 4);
		memmove(o + 4, e, strlen(e) + 1);
	}
	return out;
}

/* Loop index: case i / 2 at -O(i % 2 ? 2 : 0) (C++: g++). The flow as the
 * golden file has it; the same at -O0 and -O2. */
START_TEST(replay_golden)
{
	const struct rp_case *c = &rp_cases[_i / 2];
	char *rec = tmp_path("rp.cbr"), golden[PATH_MAX];
	char *target[5] = {(char *)(c->cxx ? h_cxx_target(c->target, _i % 2)
					   : h_target(c->target, OPT(_i % 2)))};
	char *args[H_MAX_ARGS] = {"replay", rec};
	char *want, *got;
	struct h_run r;
	size_t i, n = 2;

	for (i = 0; c->targs[i]; i++)
		target[i + 1] = (char *)c->targs[i];
	for (i = 0; c->rargs[i]; i++)
		args[n++] = (char *)c->rargs[i];
	args[n] = NULL;
	record(&r, rec, (char *const *)c->recargs, target);
	h_free(&r);
	run(&r, args);
	assert_status(&r, 0);
	ck_assert_msg(strstr(r.err, "replayed "), "no summary line:\n%s", r.err);
	got = mask_replay(r.out);
	snprintf(golden, sizeof(golden), "tests/expected/replay/%s.txt", c->name);
	if (getenv("CABBPF_WRITE_GOLDEN")) { /* to make one: then read it */
		FILE *f = fopen(golden, "w");

		ck_assert_ptr_nonnull(f);
		fputs(got, f);
		fclose(f);
	}
	want = h_slurp(golden);
	ck_assert_msg(want, "no golden file %s", golden);
	ck_assert_msg(!strcmp(want, got), "%s at -O%d differs from %s:\n%s", c->name,
		      OPT(_i % 2), golden, got);
	free(want);
	free(got);
	h_free(&r);
	unlink(rec);
}
END_TEST

/* The filters, counted on a target of known calls (threads 2 5: worker
 * once a thread, work 5 and 10 times, then one write to stderr): -N hides
 * a function and what it calls, --depth 1 the levels below, --tid picks a
 * thread (work's lines: its count), --slower-than 1s leaves nothing,
 * --time-range past the end nothing; -o writes the same flow to a file. */
static size_t count_text(const char *s, const char *needle)
{
	size_t n = 0;

	for (; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

START_TEST(replay_filters)
{
	char *rec = tmp_path("rpf.cbr"), *out = tmp_path("rpf.txt");
	char *target[] = {(char *)h_target("threads", OPT(_i)), "2", "5", NULL};
	char *all[] = {"replay", rec, NULL}, *noworks[] = {"replay", rec, "-N", "work", NULL};
	char *top[] = {"replay", rec, "--depth", "1", NULL};
	char *slow[] = {"replay", rec, "--slower-than", "1s", NULL};
	char *late[] = {"replay", rec, "--time-range", "1000s,", NULL};
	char *file[] = {"replay", rec, "-o", out, NULL};
	char tid[32], *one[] = {"replay", rec, "--tid", tid, NULL};
	const char *line;
	char *text;
	struct h_run r;
	size_t works;

	record(&r, rec, NULL, target);
	h_free(&r);
	run(&r, all);
	assert_status(&r, 0);
	ck_assert_uint_eq(count_text(r.out, "| main();\n"), 1);
	ck_assert_uint_eq(count_text(r.out, "| worker() {\n"), 2);
	ck_assert_uint_eq(count_text(r.out, "|   work();\n"), 15);
	ck_assert_uint_eq(count_text(r.out, "| } /* worker */\n"), 2);
	ck_assert_uint_eq(count_text(r.out, "|   write(2 "), 2); /* each its stderr line */
	/* the thread of the 10 calls: its tid, from its first work line */
	line = strstr(r.out, "|   work();\n");
	ck_assert_ptr_nonnull(line);
	h_free(&r);
	run(&r, noworks);
	assert_status(&r, 0);
	ck_assert_uint_eq(count_text(r.out, "work("), 0);
	ck_assert_uint_eq(count_text(r.out, "| worker() {\n"), 2);
	ck_assert_uint_eq(count_text(r.out, "|   write(2 "), 2);
	h_free(&r);
	run(&r, top);
	assert_status(&r, 0);
	ck_assert_uint_eq(count_text(r.out, "work("), 0);
	ck_assert_uint_eq(count_text(r.out, "| worker() {\n"), 2);
	ck_assert_uint_eq(count_text(r.out, "| main();\n"), 1);
	h_free(&r);
	run(&r, slow);
	assert_status(&r, 0);
	ck_assert_uint_eq(count_text(r.out, "\n"), 1); /* the heading alone */
	ck_assert_msg(strstr(r.err, "replayed 18 calls (0 shown)"), "%s", r.err);
	h_free(&r);
	run(&r, late);
	assert_status(&r, 0);
	ck_assert_uint_eq(count_text(r.out, "\n"), 1);
	h_free(&r);
	/* each worker thread's work lines alone */
	works = 0;
	run(&r, all);
	for (line = r.out; (line = strstr(line, "|   work();\n")); line++) {
		const char *start = line;
		unsigned t;

		while (start > r.out && start[-1] != '\n')
			start--;
		ck_assert_int_eq(sscanf(start + 24, "%u", &t), 1);
		snprintf(tid, sizeof(tid), "%u", t);
		break;
	}
	h_free(&r);
	run(&r, one);
	assert_status(&r, 0);
	works = count_text(r.out, "|   work();\n");
	ck_assert_msg(works == 5 || works == 10, "--tid %s: %zu work lines", tid, works);
	ck_assert_uint_eq(count_text(r.out, "| worker() {\n"), 1);
	ck_assert_uint_eq(count_text(r.out, "main"), 0);
	h_free(&r);
	run(&r, file);
	assert_status(&r, 0);
	ck_assert_str_eq(r.out, "");
	text = h_slurp(out);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(count_text(text, "|   work();\n"), 15);
	free(text);
	h_free(&r);
	unlink(rec);
	unlink(out);
}
END_TEST

/* cabbpf replay REC > /dev/null: its peak RSS in KiB (its exit status 0). */
static long replay_maxrss(const char *rec)
{
	struct rusage ru;
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(h_cabbpf, h_cabbpf, "replay", rec, (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(wait4(pid, &st, 0, &ru), pid);
	ck_assert_msg(WIFEXITED(st) && !WEXITSTATUS(st), "replay of %s: status %d", rec, st);
	return ru.ru_maxrss;
}

/* It streams: a recording of 11 times the events (fib(25): 485,572 call
 * and return events, against fib(20): 43,784) replays in the same memory,
 * within 4 MiB (what the reader's and the runner's buffers may vary by). */
START_TEST(replay_bounded_memory)
{
	char *small = tmp_path("rps.cbr"), *big = tmp_path("rpb.cbr");
	char *ts[] = {(char *)h_target("recurse", 2), "20", NULL};
	char *tb[] = {(char *)h_target("recurse", 2), "25", NULL};
	char *pre[] = {"--lossless", NULL};
	struct h_run r;
	long ms, mb;

	record(&r, small, pre, ts);
	h_free(&r);
	record(&r, big, pre, tb);
	h_free(&r);
	ms = replay_maxrss(small);
	mb = replay_maxrss(big);
	ck_assert_msg(mb <= ms + 4096, "replay peak RSS %ld KiB for fib(25), %ld for fib(20)", mb,
		      ms);
	unlink(small);
	unlink(big);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("record_integration");
	TCase *tc = tcase_create("record");
	/* The kernel matrix's cases (tests/vm: make vmtest runs them on each
	 * kernel), also run here with the rest. */
	TCase *matrix = tcase_create("matrix");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, round_trip, 2, 6);
	tcase_add_loop_test(tc, dump_exact, 0, 2);
	tcase_add_loop_test(tc, pprof_traces_from_recording, 0, 2);
	tcase_add_loop_test(tc, target_unharmed, 0, 2);
	tcase_add_loop_test(tc, timeline_exact, 0, 2);
	tcase_add_test(tc, isp_round_trip);
	tcase_add_test(tc, storm_no_loss);
	tcase_add_test(tc, bad_recordings_refused);
	tcase_add_test(tc, record_path_safe);
	tcase_add_loop_test(tc, replay_golden, 0, 2 * (int)(sizeof(rp_cases) / sizeof(rp_cases[0])));
	tcase_add_loop_test(tc, replay_filters, 0, 2);
	tcase_add_test(tc, replay_bounded_memory);
	tcase_set_timeout(matrix, 300);
	tcase_add_loop_test(matrix, round_trip, 0, 2);
	suite_add_tcase(s, matrix);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (h_integration_setup("record_integration", NULL))
		return 1;
	return h_run_suite(suite());
}
