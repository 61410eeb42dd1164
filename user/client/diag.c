/* Readings for the unanswered-SYN diagnosis, and the connection-test mark (see diag.h). */
#include "client/diag.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int xp_diag_watch_start(struct xp_diag_watch *w, const char *netns, int ifindex, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->netns = netns && netns[0] ? netns : NULL;
	w->ifindex = ifindex;
	w->have_rx = xp_link_rx_drops(ifindex, &w->rx0) == 0;
	if (!w->netns)
		return 0;
	int r = xp_devstate_read(w->netns, &w->d0, err, errlen);
	if (r)
		return r;
	w->have_dev = true;
	w->ct_peak = w->d0.ct_count;
	return 0;
}

void xp_diag_watch_sample(struct xp_diag_watch *w)
{
	struct xp_devstate s;
	char err[256];
	if (w->have_dev && !xp_devstate_read(w->netns, &s, err, sizeof(err)) && s.ct_count > w->ct_peak)
		w->ct_peak = s.ct_count;
}

void xp_diag_watch_end(struct xp_diag_watch *w, struct xp_diag_input *in)
{
	char err[256];
	memset(in, 0, sizeof(*in));
	if (w->have_rx && !xp_link_rx_drops(w->ifindex, &w->rx1) && w->rx1 >= w->rx0)
		in->client_rx_drops = w->rx1 - w->rx0;
	if (w->have_dev && !xp_devstate_read(w->netns, &w->d1, err, sizeof(err))) {
		struct xp_device_figs *d = &in->dev;
		d->have = true;
		d->ct_count = w->d1.ct_count;
		d->ct_max = w->d1.ct_max;
		d->ct_peak = w->d1.ct_count > w->ct_peak ? w->d1.ct_count : w->ct_peak;
		d->ct_drops = w->d1.ct_drops - w->d0.ct_drops;
		d->if_drops = w->d1.if_drops - w->d0.if_drops;
	}
}

#define MARK_DIR "/run/xdpperf"

static void mark_path(const char *host, char *buf, size_t len)
{
	/* The host as given, with '/' (not in a host or address) made harmless. */
	char h[128];
	snprintf(h, sizeof(h), "%s", host);
	for (char *p = h; *p; p++)
		if (*p == '/')
			*p = '_';
	snprintf(buf, len, MARK_DIR "/conn-test-%s", h);
}

void xp_conn_test_mark(const char *host)
{
	char p[200];
	mkdir(MARK_DIR, 0755);
	mark_path(host, p, sizeof(p));
	/* Only its time matters; failing to write it loses a hint, nothing else. */
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
}

double xp_conn_test_age(const char *host)
{
	char p[200];
	struct stat st;
	mark_path(host, p, sizeof(p));
	if (stat(p, &st))
		return -1;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	double age = (double)(now.tv_sec - st.st_mtim.tv_sec) + (now.tv_nsec - st.st_mtim.tv_nsec) / 1e9;
	return age < 0 ? 0 : age;
}
