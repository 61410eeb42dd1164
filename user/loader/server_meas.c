/*
 * The server loader's side of the measurement core: its program's maps
 * through the shared implementation of loader/meas_maps.c. Declared in
 * loader/server_prog.h.
 */
#include "loader/server_prog.h"

#include "bpf/server.skel.h"
#include "loader/meas_maps.h"

static struct xp_meas_maps maps_of(struct server_prog *rp)
{
	struct server_bpf *s = server_prog_skel(rp);

	return (struct xp_meas_maps){ .slot_meas = s->maps.slot_meas, .stream_acct = s->maps.stream_acct,
				      .ibins = s->maps.ibins, .meas_stats = s->maps.meas_stats,
				      .nslots = XP_MAX_SLOTS, .stream_flow = s->maps.stream_flow,
				      .flow_acct = s->maps.flow_acct, .nflow_entries = XP_FLOW_ENTRIES };
}

int server_prog_meas_start(struct server_prog *rp, int slot, const struct xp_slot_meas *m)
{
	struct xp_meas_maps mm = maps_of(rp);

	return xp_meas_maps_start(&mm, slot, m);
}

int server_prog_meas_start_flows(struct server_prog *rp, int slot, const struct xp_slot_meas *m,
				 const __u32 *stream_entry)
{
	struct xp_meas_maps mm = maps_of(rp);

	return xp_meas_maps_start_flows(&mm, slot, m, stream_entry);
}

int server_prog_read_flow(struct server_prog *rp, unsigned entry, struct xp_flow_acct *sum)
{
	struct xp_meas_maps mm = maps_of(rp);

	return xp_meas_maps_read_flow(&mm, entry, sum);
}

int server_prog_read_meas_stats(struct server_prog *rp, int slot, struct xp_meas_stats *sum)
{
	struct xp_meas_maps mm = maps_of(rp);

	return xp_meas_maps_read_stats(&mm, slot, sum);
}

int server_prog_meas_close(struct server_prog *rp, int slot, uint64_t upto)
{
	struct xp_meas_maps mm = maps_of(rp);

	return xp_meas_maps_close(&mm, slot, upto);
}

int server_prog_read_ibin(struct server_prog *rp, int slot, uint64_t i, struct xp_lat_hist *h)
{
	struct xp_meas_maps mm = maps_of(rp);

	return xp_meas_maps_read_ibin(&mm, slot, i, h);
}

int server_prog_read_streams(struct server_prog *rp, int slot, struct xp_stream_figs *out, unsigned max)
{
	struct xp_meas_maps mm = maps_of(rp);

	return xp_meas_maps_read_streams(&mm, slot, out, max);
}
