/*
 * --plot DIR: the suite's figures as gnuplot plots (SVG and PNG) and a
 * one-page Markdown summary that shows them beside the tables and the
 * settings. Data files and the gnuplot script are written to DIR and kept
 * (so a plot can be redrawn); gnuplot runs as a child, no shell.
 *
 *   throughput.{svg,png}  NDR (and PDR) frames/s against the frame size
 *   loss.{svg,png}        frame loss rate against the offered load, per size
 *   latency.{svg,png}     latency percentiles against the frame size (only
 *                         when the measurement core measured them)
 *   latency_dist.{svg,png} the latency distribution at the throughput rate:
 *                         every frame of the latency trials, per size
 *   summary.md            settings, tables, the plots
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "rfc2544/rfc2544.h"

extern char **environ;

static FILE *open_in(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
	return f;
}

static int run_gnuplot(const char *dir, char *err, size_t errlen)
{
	char script[512];
	snprintf(script, sizeof(script), "%s/plots.gp", dir);
	char *argv[] = { "gnuplot", script, NULL };
	pid_t pid;
	int r = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	if (r) {
		snprintf(err, errlen, "cannot run gnuplot: %s (install gnuplot-nox; scripts/deps.sh does)", strerror(r));
		return -1;
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(err, errlen, "gnuplot failed on %s (exit %d)", script, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -1;
	}
	return 0;
}

/* One plot in both formats: the terminal lines and the plot command. */
static void both(FILE *gp, const char *name, const char *body)
{
	fprintf(gp, "set terminal svg size 800,500 dynamic background '#ffffff'\nset output '%s.svg'\n%s\n", name, body);
	fprintf(gp, "set terminal pngcairo size 800,500\nset output '%s.png'\n%s\n", name, body);
}

/*
 * One block of latency_dist.dat: a size's merged histogram of its latency
 * trials in one direction (h; --bidir: A->B and B->A each have one) as a
 * cumulative distribution, one row per non-empty bucket (its upper edge in
 * us, the percent of frames at or below it, the percent in it). A title
 * line first, for gnuplot's columnheader. False if empty.
 */
static bool dist_block(FILE *d, const struct xp_rfc_size *z, const struct xp_lat_hist *h, const char *dir, double pps)
{
	char lb[16];
	uint64_t total = 0, cum = 0;
	for (unsigned b = 0; b < sizeof(h->b) / sizeof(h->b[0]); b++)
		total += h->b[b];
	if (!total)
		return false;
	if (xp_rfc_named(z))
		fprintf(d, "\"%s (mean %.0f bytes)%s at %.0f fps\" cum_pct bucket_pct\n", xp_rfc_label(z, lb), xp_rfc_mean(z),
			dir, pps);
	else
		fprintf(d, "\"%u bytes%s at %.0f fps\" cum_pct bucket_pct\n", z->len, dir, pps);
	for (unsigned b = 0; b < sizeof(h->b) / sizeof(h->b[0]); b++) {
		if (!h->b[b])
			continue;
		cum += h->b[b];
		double hi_us = xp_lat_bucket_hi_ns(b) / 1e3;
		fprintf(d, "%.4f %.6f %.6f\n", hi_us, 100.0 * (double)cum / (double)total,
			100.0 * (double)h->b[b] / (double)total);
	}
	fprintf(d, "\n\n");
	return true;
}

int xp_rfc_plot(const struct xp_rfc_run *r, const char *dir, char *err, size_t errlen)
{
	char lb[16];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	bool tp = false, flr = false, lat = false, dist = false;
	FILE *d = open_in(dir, "throughput.dat", err, errlen);
	if (!d)
		return -1;
	/* --bidir: the combined NDR (the two directions' own NDRs summed) and each direction's NDR follow;
	 * ndr_fps is then the lower direction's. */
	fprintf(d, "# bytes ndr_fps pdr_fps ndr_l1_bps max_fps%s\n", r->bidir ? " combined_ndr_fps a_to_b_ndr_fps b_to_a_ndr_fps" : "");
	for (unsigned i = 0; i < r->nsizes; i++) {
		const struct xp_rfc_size *z = &r->sizes[i];
		if (!z->tp_run)
			continue;
		tp = true;
		/* A mix sits at its mean size on the frame-size axis. */
		fprintf(d, "%g %.0f %.0f %.0f %.0f", xp_rfc_mean(z), z->ndr_pps, z->pdr_pps, xp_rfc_l1_bps(z->ndr_pps, xp_rfc_mean(z)),
			z->max_pps);
		if (r->bidir)
			fprintf(d, " %.0f %.0f %.0f", z->dir_ndr[0] + z->dir_ndr[1], z->dir_ndr[0], z->dir_ndr[1]);
		fprintf(d, "\n");
	}
	fclose(d);
	if (!(d = open_in(dir, "loss.dat", err, errlen)))
		return -1;
	for (unsigned i = 0; i < r->nsizes; i++) {
		const struct xp_rfc_size *z = &r->sizes[i];
		if (!z->flr_n)
			continue;
		flr = true;
		fprintf(d, "# %s bytes: offered_fps loss_percent\n", xp_rfc_label(z, lb));
		for (unsigned k = z->flr_n; k-- > 0;)
			fprintf(d, "%.0f %.6f\n", z->flr_offered[k], z->flr_loss[k]);
		fprintf(d, "\n\n");
	}
	fclose(d);
	if (!(d = open_in(dir, "latency.dat", err, errlen)))
		return -1;
	/* --bidir: B->A's figures follow (NaN where it has none: gnuplot leaves the point out). */
	fprintf(d, "# bytes min mean p50 p99 p99.9 max (us)%s\n", r->bidir ? " b_to_a: min mean p50 p99 p99.9 max" : "");
	for (unsigned i = 0; i < r->nsizes; i++) {
		const struct xp_rfc_size *z = &r->sizes[i];
		if (!z->lat.known)
			continue;
		lat = true;
		fprintf(d, "%g %.3f %.3f %.3f %.3f %.3f %.3f", xp_rfc_mean(z), z->lat.min_us, z->lat.mean_us, z->lat.p50_us,
			z->lat.p99_us, z->lat.p999_us, z->lat.max_us);
		const struct xp_rfc_latency *v = &z->lat_rev;
		if (r->bidir && v->known)
			fprintf(d, " %.3f %.3f %.3f %.3f %.3f %.3f", v->min_us, v->mean_us, v->p50_us, v->p99_us, v->p999_us, v->max_us);
		else if (r->bidir)
			fprintf(d, " NaN NaN NaN NaN NaN NaN");
		fprintf(d, "\n");
	}
	fclose(d);
	if (!(d = open_in(dir, "latency_dist.dat", err, errlen)))
		return -1;
	for (unsigned i = 0; i < r->nsizes; i++) {
		const struct xp_rfc_size *z = &r->sizes[i];
		/* --bidir: each direction's distribution at its own rate, B->A's timed on our side. */
		if (z->lat.known && dist_block(d, z, &z->lat_hist, r->bidir ? " A->B" : "", z->lat_pps))
			dist = true;
		if (r->bidir && z->lat_rev.known && dist_block(d, z, &z->lat_rev_hist, " B->A", z->lat_rev_pps))
			dist = true;
	}
	fclose(d);

	FILE *gp = open_in(dir, "plots.gp", err, errlen);
	if (!gp)
		return -1;
	fprintf(gp, "# Made by xdpperf --rfc2544 --plot; run from this directory: gnuplot plots.gp\n");
	fprintf(gp, "cd '%s'\nset grid\nset key top right\n", dir);
	if (tp && r->bidir)
		both(gp, "throughput",
		     "set title 'Throughput, bidirectional (RFC 2544 26.1 and section 14)'\nset xlabel 'frame size (bytes)'\n"
		     "set ylabel 'frames/s'\nset logscale x 2\nset yrange [0:*]\n"
		     "plot 'throughput.dat' using 1:6 with linespoints title 'both directions combined (A->B NDR + B->A NDR)', "
		     "'' using 1:7 with linespoints title 'A->B NDR', '' using 1:8 with linespoints title 'B->A NDR', "
		     "'' using 1:5 with lines dashtype 2 title 'top of the search (the lower direction)'\n"
		     "unset logscale x");
	else if (tp)
		both(gp, "throughput",
		     "set title 'Throughput (RFC 2544 26.1)'\nset xlabel 'frame size (bytes)'\nset ylabel 'frames/s'\n"
		     "set logscale x 2\nset yrange [0:*]\n"
		     "plot 'throughput.dat' using 1:2 with linespoints title 'NDR (zero loss)', "
		     "'' using 1:3 with linespoints title 'PDR', '' using 1:5 with lines dashtype 2 title 'top of the search'\n"
		     "unset logscale x");
	if (flr)
		both(gp, "loss",
		     "set title 'Frame loss rate (RFC 2544 26.3)'\nset xlabel 'offered load (frames/s)'\n"
		     "set ylabel 'frames lost (%)'\nset yrange [0:*]\n"
		     "plot for [i=0:*] 'loss.dat' index i using 1:2 with linespoints title columnheader(1)");
	if (lat && r->bidir)
		both(gp, "latency",
		     "set title 'Latency at the throughput rate, bidirectional (RFC 2544 26.2)'\nset xlabel 'frame size (bytes)'\n"
		     "set ylabel 'microseconds'\nset logscale x 2\n"
		     "plot 'latency.dat' using 1:4 w lp t 'A->B p50', '' using 1:5 w lp t 'A->B p99', '' using 1:7 w lp t 'A->B max', "
		     "'' using 1:10 w lp dt 2 t 'B->A p50', '' using 1:11 w lp dt 2 t 'B->A p99', '' using 1:13 w lp dt 2 t 'B->A max'\n"
		     "unset logscale x");
	else if (lat)
		both(gp, "latency",
		     "set title 'Latency at the throughput rate (RFC 2544 26.2)'\nset xlabel 'frame size (bytes)'\n"
		     "set ylabel 'microseconds'\nset logscale x 2\n"
		     "plot 'latency.dat' using 1:4 w lp t 'p50', '' using 1:5 w lp t 'p99', '' using 1:6 w lp t 'p99.9', "
		     "'' using 1:7 w lp t 'max'\nunset logscale x");
	if (dist) {
		char body[768];
		snprintf(body, sizeof(body), "set title 'Latency distribution at the throughput rate%s'\n"
			 "set xlabel 'one-way latency (microseconds)'\nset ylabel 'frames at or below (%%)'\n"
			 "set logscale x 10\nset yrange [0:100]\nset key bottom right\n"
			 "plot for [i=0:*] 'latency_dist.dat' index i using 1:2 with steps title columnheader(1)\n"
			 "unset logscale x\nset key top right",
			 r->bidir ? ", A->B and B->A (each at its NDR)"
				  : " (RFC 2544 26.2, every frame)");
		both(gp, "latency_dist", body);
	}
	fclose(gp);
	if ((tp || flr || lat || dist) && run_gnuplot(dir, err, errlen))
		return -1;

	FILE *md = open_in(dir, "summary.md", err, errlen);
	if (!md)
		return -1;
	fprintf(md, "# RFC 2544 benchmark%s: %s\n\n```\n",
		r->bidir ? ", bidirectional (RFC 2544 section 14: both directions at once; throughput combined and per direction)" : "",
		r->o->spec->host);
	xp_rfc_report_text(md, r);
	fprintf(md, "```\n\n");
	if (tp)
		fprintf(md, r->bidir ? "![Bidirectional throughput against frame size: both directions combined, and each](throughput.svg)\n\n"
				     : "![Throughput against frame size](throughput.svg)\n\n");
	if (flr)
		fprintf(md, "![Frame loss rate against offered load](loss.svg)\n\n");
	if (lat)
		fprintf(md, "![Latency percentiles against frame size](latency.svg)\n\n");
	else
		fprintf(md, "Latency: not measured (the latency table says why).\n\n");
	if (dist)
		fprintf(md, r->bidir ? "![Latency distribution at the throughput rate, bidirectional: A->B and B->A](latency_dist.svg)\n\n"
				     : "![Latency distribution at the throughput rate](latency_dist.svg)\n\n");
	fprintf(md, "Every trial is in `xdpperf --rfc2544 -J`'s \"trials\"; the plots' data are the `.dat` files here.\n");
	fclose(md);
	return 0;
}
