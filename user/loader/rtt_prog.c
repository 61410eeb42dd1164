/*
 * The client's round-trip program's loader (loader/rtt_prog.h): load,
 * attach by bpf_link, and the measurement through loader/meas_maps.c, the
 * code that serves the server's program too.
 */
#include "loader/rtt_prog.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf/lib/stamp.h"
#include "bpf/rtt.skel.h"
#include "loader/meas_maps.h"
#include "loader/percpu.h"

struct rtt_prog {
	struct rtt_bpf *skel;
	struct xp_meas_maps maps;
	int link_fd;
};

/* An address as the program compares it: network order, IPv4 in [0]. */
static void put_addr(const struct xp_addr *a, __u32 out[4])
{
	memset(out, 0, 4 * sizeof(out[0]));
	if (a->family == AF_INET)
		memcpy(out, &a->v4, 4);
	else
		memcpy(out, &a->v6, 16);
}

int rtt_prog_open(const struct rtt_prog_cfg *c, struct rtt_prog **out, char *err, size_t errlen)
{
	if (!c || !out)
		return -EINVAL;
	if ((c->server.family != AF_INET && c->server.family != AF_INET6) || c->client.family != c->server.family) {
		snprintf(err, errlen, "round trip: the server's and the client's addresses must be of one family");
		return -EINVAL;
	}
	if (!c->port_lo || c->port_lo > c->port_hi) {
		snprintf(err, errlen, "round trip: bad test port range %u:%u", c->port_lo, c->port_hi);
		return -EINVAL;
	}
	if (!c->protos || (c->protos & ~(XP_PROTO_TCP | XP_PROTO_UDP))) {
		snprintf(err, errlen, "round trip: the test must be TCP or UDP");
		return -EINVAL;
	}
	struct rtt_prog *rp = calloc(1, sizeof(*rp));
	if (!rp)
		return -ENOMEM;
	rp->link_fd = -1;
	rp->skel = rtt_bpf__open();
	if (!rp->skel) {
		int e = errno;
		snprintf(err, errlen, "cannot open the client's round-trip XDP program: %s", strerror(e));
		free(rp);
		return -e;
	}
	struct xp_rtt_config *ro = &rp->skel->rodata->config;
	ro->family = c->server.family == AF_INET6 ? XP_FAMILY_V6 : XP_FAMILY_V4;
	put_addr(&c->server, ro->server);
	put_addr(&c->client, ro->client);
	ro->protos = c->protos;
	ro->port_lo = c->port_lo;
	ro->port_hi = c->port_hi;
	int r = rtt_bpf__load(rp->skel);
	if (r) {
		snprintf(err, errlen, "cannot load the client's round-trip XDP program: %s", strerror(-r));
		rtt_prog_close(rp);
		return r;
	}
	rp->maps = (struct xp_meas_maps){ .slot_meas = rp->skel->maps.slot_meas,
					  .stream_acct = rp->skel->maps.stream_acct,
					  .ibins = rp->skel->maps.ibins,
					  .meas_stats = rp->skel->maps.meas_stats,
					  .nslots = 1, .stream_flow = rp->skel->maps.stream_flow,
					  .flow_acct = rp->skel->maps.flow_acct,
					  .nflow_entries = XP_STAMP_MAX_STREAMS };
	*out = rp;
	return 0;
}

int rtt_prog_attach(struct rtt_prog *rp, int ifindex, enum xp_xdp_mode mode, const char **mode_used, char *err,
		    size_t errlen)
{
	if (!rp || ifindex <= 0)
		return -EINVAL;
	if (rp->link_fd >= 0) {
		snprintf(err, errlen, "the client's round-trip XDP program is attached already");
		return -EALREADY;
	}
	int r = xp_xdp_attach(bpf_program__fd(rp->skel->progs.xdp_rtt), ifindex, mode);
	if (r < 0) {
		snprintf(err, errlen, "cannot attach the client's round-trip XDP program: %s%s", strerror(-r),
			 (r == -EBUSY || r == -EEXIST) ? " (another XDP program is attached to the interface)" : "");
		return r;
	}
	rp->link_fd = r;
	if (mode_used)
		*mode_used = xp_xdp_mode_name(ifindex);
	return 0;
}

void rtt_prog_close(struct rtt_prog *rp)
{
	if (!rp)
		return;
	if (rp->link_fd >= 0)
		close(rp->link_fd); /* the link's last fd: the kernel detaches */
	rtt_bpf__destroy(rp->skel);
	free(rp);
}

int rtt_prog_meas_start(struct rtt_prog *rp, const struct xp_slot_meas *m)
{
	return rp ? xp_meas_maps_start(&rp->maps, 0, m) : -EINVAL;
}

int rtt_prog_meas_close(struct rtt_prog *rp, uint64_t upto)
{
	return rp ? xp_meas_maps_close(&rp->maps, 0, upto) : -EINVAL;
}

int rtt_prog_read_ibin(struct rtt_prog *rp, uint64_t i, struct xp_lat_hist *h)
{
	return rp ? xp_meas_maps_read_ibin(&rp->maps, 0, i, h) : -EINVAL;
}

int rtt_prog_read_streams(struct rtt_prog *rp, struct xp_stream_figs *out, unsigned max)
{
	return rp ? xp_meas_maps_read_streams(&rp->maps, 0, out, max) : -EINVAL;
}

int rtt_prog_read_meas_stats(struct rtt_prog *rp, struct xp_meas_stats *sum)
{
	return rp ? xp_meas_maps_read_stats(&rp->maps, 0, sum) : -EINVAL;
}

int rtt_prog_read_stats(struct rtt_prog *rp, uint64_t out[XP_RTT_NSTATS])
{
	if (!rp)
		return -EINVAL;
	for (__u32 k = 0; k < XP_RTT_NSTATS; k++) {
		int r = xp_percpu_read(rp->skel->maps.rtt_stats, &k, sizeof(k), sizeof(__u64), &out[k], sizeof(__u64));
		if (r)
			return r;
	}
	return 0;
}

struct rtt_bpf *rtt_prog_skel(struct rtt_prog *rp)
{
	return rp ? rp->skel : NULL;
}
