// SPDX-License-Identifier: BSD-2-Clause
/*
 * demo [NWORDS] — the bundled demo workload: a two-thread word-frequency
 * counter over a generated text. Small, realistic, deterministic.
 *
 *   1. main -> gen_text: generates NWORDS words (default 30000) of a
 *      skewed (roughly Zipf-like) vocabulary of 384 made-up words, with
 *      punctuation and newlines, from a fixed-seed LCG
 *      (gen_text -> next_random, gen_text -> pick_word once per word).
 *   2. main splits the text in two halves at a space and starts two
 *      threads, each running count_words over its half into its own hash
 *      table (count_words -> parse_token / hash_word / lookup / insert).
 *   3. main -> merge_tables merges the second table into the first
 *      (merge_tables -> lookup, merge_tables -> insert).
 *   4. main -> report prints "words=<n> distinct=<d>" and the 10 most
 *      frequent words with their counts on stdout.
 * Exit status 0; usage error 2.
 *
 * Exact counts for the default NWORDS = 30000, identical at -O0 and -O2
 * (measured with -DDEMO_SELFCOUNT, which makes the program count its own
 * calls and print them on stderr -- run that build for other NWORDS -- and
 * confirmed with bpftrace uprobes/uretprobes on both builds):
 *   main 1, gen_text 1, next_random 30000, pick_word 30000,
 *   count_words 2 (one per thread), parse_token 30002, hash_word 30000,
 *   lookup 30384, insert 768, merge_tables 1, report 1;
 *   total 151160 calls, every one returns. Output starts with
 *   "words=30000 distinct=384" and "kaka     1345".
 * Exact edges (caller -> callee: count), default NWORDS:
 *   main -> gen_text 1, main -> merge_tables 1, main -> report 1,
 *   gen_text -> next_random 30000, gen_text -> pick_word 30000,
 *   count_words -> parse_token 30002 (15001 per thread: each half holds
 *   15000 words), count_words -> hash_word 30000 (15000 per thread),
 *   count_words -> lookup 30000 (15000 per thread),
 *   count_words -> insert 768 (384 per thread: each half has all 384
 *   distinct words), merge_tables -> lookup 384; no merge_tables -> insert
 *   edge (0 calls).
 * count_words is started by libc's start_thread, so it has no traced
 * caller. For any NWORDS: next_random = pick_word = hash_word = NWORDS,
 * parse_token = NWORDS + 2.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

#ifdef DEMO_SELFCOUNT
enum {
	C_MAIN,
	C_GEN,
	C_RAND,
	C_PICK,
	C_COUNT,
	C_PARSE,
	C_HASH,
	C_LOOKUP,
	C_INSERT,
	C_MERGE,
	C_REPORT,
	C_N
};
static const char *const cnames[C_N] = {"main",	       "gen_text",     "next_random", "pick_word",
					"count_words", "parse_token",  "hash_word",   "lookup",
					"insert",      "merge_tables", "report"};
static unsigned long counters[C_N];
#define COUNT(c) __atomic_fetch_add(&counters[c], 1, __ATOMIC_RELAXED)
#else
#define COUNT(c) ((void)0)
#endif

#define VOCAB 512
#define TABLE_SIZE 2048 /* power of two, > 2 * VOCAB: probes stay short */
#define WORD_MAX 16
#define TOP 10

struct entry {
	char word[WORD_MAX];
	unsigned long hash;
	long count;
};

struct table {
	struct entry slots[TABLE_SIZE];
	long distinct;
	long words;
};

struct half {
	const char *text;
	size_t len;
	struct table *table;
};

static const char *const syllables[16] = {"ka", "lo", "mi", "nu", "pe", "ra", "so", "ti",
					  "ve", "zu", "ba", "de", "fo", "gi", "ha", "ju"};

TRACED unsigned long next_random(unsigned long *state)
{
	COUNT(C_RAND);
	*state = *state * 6364136223846793005UL + 1442695040888963407UL;
	return *state >> 33;
}

/*
 * Word number (r mod 512)^2 / 512 (384 distinct values): small numbers are
 * far more frequent, as in natural text. Two or three two-letter syllables, so words are unique.
 */
TRACED size_t pick_word(unsigned long r, char *out)
{
	unsigned long idx = r % VOCAB;
	size_t n = 0;

	COUNT(C_PICK);
	idx = idx * idx / VOCAB;
	memcpy(out + n, syllables[idx % 16], 2);
	n += 2;
	memcpy(out + n, syllables[(idx / 16) % 16], 2);
	n += 2;
	if (idx >= 256) {
		memcpy(out + n, syllables[idx / 256], 2);
		n += 2;
	}
	/* Capitalise some words: parse_token must fold case. */
	if (r % 7 == 0)
		out[0] = (char)(out[0] - 'a' + 'A');
	return n;
}

TRACED size_t gen_text(char *buf, long nwords)
{
	unsigned long state = 20090101UL, r;
	size_t len = 0;
	long i;

	COUNT(C_GEN);
	for (i = 0; i < nwords; i++) {
		r = next_random(&state);
		BARRIER();
		len += pick_word(r, buf + len);
		BARRIER();
		if (i % 13 == 12) {
			memcpy(buf + len, ".\n", 2);
			len += 2;
		} else if (r % 5 == 0) {
			memcpy(buf + len, ", ", 2);
			len += 2;
		} else {
			buf[len++] = ' ';
		}
	}
	buf[len] = '\0';
	return len;
}

/*
 * Copies the next word of [p, end) into word, lower-cased. Returns the
 * position after it, or NULL when no word is left.
 */
TRACED const char *parse_token(const char *p, const char *end, char *word)
{
	size_t n = 0;

	COUNT(C_PARSE);
	while (p < end && !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		p++;
	if (p == end)
		return NULL;
	while (p < end && n < WORD_MAX - 1 &&
	       ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
		word[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
		p++;
	}
	word[n] = '\0';
	return p;
}

/* FNV-1a. */
TRACED unsigned long hash_word(const char *w)
{
	unsigned long h = 1469598103934665603UL;

	COUNT(C_HASH);
	for (; *w; w++) {
		h ^= (unsigned char)*w;
		h *= 1099511628211UL;
	}
	return h;
}

/* Linear probing; returns the entry for w, or NULL. */
TRACED struct entry *lookup(struct table *t, const char *w, unsigned long h)
{
	size_t i = h & (TABLE_SIZE - 1);

	COUNT(C_LOOKUP);
	while (t->slots[i].count) {
		if (t->slots[i].hash == h && !strcmp(t->slots[i].word, w))
			return &t->slots[i];
		i = (i + 1) & (TABLE_SIZE - 1);
	}
	return NULL;
}

/* Adds w (not yet present) with count 0; the table never fills (VOCAB). */
TRACED struct entry *insert(struct table *t, const char *w, unsigned long h)
{
	size_t i = h & (TABLE_SIZE - 1);

	COUNT(C_INSERT);
	while (t->slots[i].count)
		i = (i + 1) & (TABLE_SIZE - 1);
	snprintf(t->slots[i].word, WORD_MAX, "%s", w);
	t->slots[i].hash = h;
	t->distinct++;
	return &t->slots[i];
}

TRACED void *count_words(void *arg)
{
	struct half *half = arg;
	const char *p = half->text, *end = half->text + half->len;
	char word[WORD_MAX];
	struct entry *e;
	unsigned long h;

	COUNT(C_COUNT);
	while ((p = parse_token(p, end, word))) {
		BARRIER();
		h = hash_word(word);
		BARRIER();
		e = lookup(half->table, word, h);
		BARRIER();
		if (!e) {
			e = insert(half->table, word, h);
			BARRIER();
		}
		e->count++;
		half->table->words++;
	}
	BARRIER();
	return NULL;
}

TRACED void merge_tables(struct table *dst, const struct table *src)
{
	const struct entry *s;
	struct entry *e;
	size_t i;

	COUNT(C_MERGE);
	for (i = 0; i < TABLE_SIZE; i++) {
		s = &src->slots[i];
		if (!s->count)
			continue;
		e = lookup(dst, s->word, s->hash);
		BARRIER();
		if (!e) {
			e = insert(dst, s->word, s->hash);
			BARRIER();
		}
		e->count += s->count;
	}
	dst->words += src->words;
}

/* always_inline: a helper, not a traced function, at -O0 as at -O2. */
static inline __attribute__((always_inline)) bool ranks_before(const struct entry *a,
							       const struct entry *b)
{
	return a->count != b->count ? a->count > b->count : strcmp(a->word, b->word) < 0;
}

/* Prints the totals and the TOP most frequent words (ties: alphabetical). */
TRACED void report(const struct table *t)
{
	const struct entry *best[TOP];
	size_t i, n = 0, k;

	COUNT(C_REPORT);
	for (i = 0; i < TABLE_SIZE; i++) {
		const struct entry *e = &t->slots[i];

		if (!e->count)
			continue;
		for (k = n; k > 0 && ranks_before(e, best[k - 1]); k--)
			if (k < TOP)
				best[k] = best[k - 1];
		if (k < TOP) {
			best[k] = e;
			if (n < TOP)
				n++;
		}
	}
	printf("words=%ld distinct=%ld\n", t->words, t->distinct);
	for (i = 0; i < n; i++)
		printf("%-8s %ld\n", best[i]->word, best[i]->count);
}

int main(int argc, char **argv)
{
	struct table *tables = NULL;
	struct half halves[2];
	pthread_t threads[2];
	long nwords = 30000;
	size_t len, mid;
	char *text = NULL, *end;
	int i, rc = 1;

	COUNT(C_MAIN);
	if (argc > 2 || (argc == 2 &&
			 ((nwords = strtol(argv[1], &end, 10)) < 1 || *end || nwords > 10000000))) {
		fprintf(stderr, "usage: demo [NWORDS (1..10000000)]\n");
		return 2;
	}
	/* At most 6 letters and 2 separators per word. */
	text = malloc((size_t)nwords * 8 + 1);
	tables = calloc(2, sizeof(*tables));
	if (!text || !tables) {
		perror("demo");
		goto cleanup;
	}
	len = gen_text(text, nwords);
	BARRIER();

	/* Split at a space so no word is cut in two. */
	mid = len / 2;
	while (mid < len && text[mid] != ' ' && text[mid] != '\n')
		mid++;
	halves[0] = (struct half){text, mid, &tables[0]};
	halves[1] = (struct half){text + mid, len - mid, &tables[1]};
	for (i = 0; i < 2; i++) {
		if (pthread_create(&threads[i], NULL, count_words, &halves[i])) {
			perror("pthread_create");
			goto cleanup;
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);

#ifdef DEMO_SELFCOUNT
	fprintf(stderr, "half 1: %ld words %ld distinct, half 2: %ld words %ld distinct\n",
		tables[0].words, tables[0].distinct, tables[1].words, tables[1].distinct);
#endif
	merge_tables(&tables[0], &tables[1]);
	BARRIER();
	report(&tables[0]);
	BARRIER();
	rc = 0;
#ifdef DEMO_SELFCOUNT
	for (i = 0; i < C_N; i++)
		fprintf(stderr, "%s %lu\n", cnames[i], counters[i]);
#endif
cleanup:
	free(text);
	free(tables);
	return rc;
}
