// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp SCRIPT [ARGS...] — a tiny interpreter for #! scripts: the kernel
 * runs it for a script whose first line is "#!/path/interp-O0"; it calls
 * run_line() once for every line of SCRIPT after the first and prints
 * each line on stdout, then the last line "calls: run_line=N".
 * Exit 0; usage error 2 (no script, or it cannot be read).
 */
#include <stdio.h>
#include <string.h>

static volatile long sink;

__attribute__((noinline)) void run_line(const char *line)
{
	sink += (long)strlen(line);
	fputs(line, stdout);
}

int main(int argc, char **argv)
{
	char line[4096];
	long n = 0;
	FILE *f;

	if (argc < 2 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: interp SCRIPT [ARGS...]\n");
		return 2;
	}
	if (fgets(line, sizeof(line), f)) /* the #! line */
		while (fgets(line, sizeof(line), f)) {
			run_line(line);
			n++;
		}
	fclose(f);
	printf("calls: run_line=%ld\n", n);
	return 0;
}
