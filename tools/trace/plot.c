// SPDX-License-Identifier: MIT
/*
 * The PNG of compare: gnuplot (gnuplot-nox) reads the replays' curve files
 * ("ops live_kb mem_kb rss_kb kmem_kb unusable9" a line).  No gnuplot: a
 * note, and no plot.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

static bool have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096], exe[4200];

	snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/bin:/bin");
	for (char *save, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(exe, sizeof(exe), "%s/gnuplot", d);
		if (!access(exe, X_OK))
			return true;
	}
	return false;
}

/* Titles and labels go between double quotes: theirs are dropped. */
static void quoted(FILE *g, const char *s)
{
	fputc('"', g);
	for (; *s; s++)
		if (*s != '"' && *s != '\\')
			fputc(*s, g);
	fputc('"', g);
}

int plot_curves(const char *png, const char *title, const char *ylabel, int n,
		char *const labels[], char *const files[], int col)
{
	if (!have_gnuplot()) {
		fprintf(stderr, "%s: no plot: gnuplot is not installed (apt-get install gnuplot-nox)\n", prog);
		return -1;
	}
	FILE *g = popen("gnuplot", "w");
	if (!g)
		return -1;
	fprintf(g, "set terminal pngcairo size 1000,560 noenhanced\n");
	fprintf(g, "set output ");
	quoted(g, png);
	fprintf(g, "\nset title ");
	quoted(g, title);
	fprintf(g, "\nset xlabel \"operations\"\nset ylabel ");
	quoted(g, ylabel);
	fprintf(g, "\nset key left top\nset grid\nset format x \"%%.0s%%c\"\n");
	if (col == 6)
		fprintf(g, "set yrange [0:1]\n");
	fprintf(g, "plot ");
	for (int i = 0; i < n; i++) {
		fprintf(g, "%s", i ? ", " : "");
		quoted(g, files[i]);
		if (col == 6)
			fprintf(g, " using 1:($6 < 0 ? NaN : $6)");
		else
			fprintf(g, " using 1:($%d/1024)", col);
		fprintf(g, " with lines lw 2 title ");
		quoted(g, labels[i]);
	}
	if (n) {
		/* The live bytes: the floor every allocator is measured against. */
		if (col != 6) {
			fprintf(g, ", ");
			quoted(g, files[0]);
			fprintf(g, " using 1:($2/1024) with lines lw 1 dt 2 lc rgb \"black\" title \"live bytes\"");
		}
	}
	fprintf(g, "\n");
	int st = pclose(g);
	if (st) {
		fprintf(stderr, "%s: gnuplot failed (status %d): no plot %s\n", prog, st, png);
		return -1;
	}
	return 0;
}
