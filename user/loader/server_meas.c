/*
 * The server loader's side of the measurement core: its program's maps
 * through the shared implementation of loader/meas_maps.c. Declared in
 * loader/server_prog.h.
 */
#include "loader/server_prog.h"

#include "bpf/server.skel.h"
#include "loader/meas_maps.h"

#include <bpf/libbpf.h>
#include <errno.h>

static struct xp_meas_maps maps_of(struct server_prog *rp)
{
	struct server_bpf *s = server_prog_skel(rp);

	return (struct xp_meas_maps){ .slot_meas = s->maps.slot_meas, .stream_acct = s->maps.stream_acct,
				      .ibins = s->maps.ibins, .meas_stats = s->maps.meas_stats,
				      .nslots = XP_MAX_SLOTS, .stream_flow = s->maps.stream_flow,
				      .flow_acct = s->maps.flow_acct, .nflow_entries = XP_FLOW_ENTRIES,
				      .flow_key = s->maps.flow_key };
}

/* The slot's key fields (xp_slot_cfg.key_mask), the rest of its configuration as it is. */
static int set_key_mask(struct server_prog *rp, int slot, __u32 mask)
{
	struct server_bpf *s = server_prog_skel(rp);
	struct xp_slot_cfg cfg;
	__u32 key = (__u32)slot;
	int r;

	if (slot < 0 || slot >= XP_MAX_SLOTS)
		return -EINVAL;
	r = bpf_map__lookup_elem(s->maps.slot_cfg, &key, sizeof(key), &cfg, sizeof(cfg), 0);
	if (r)
		return r;
	cfg.key_mask = mask;
	return bpf_map__update_elem(s->maps.slot_cfg, &key, sizeof(key), &cfg, sizeof(cfg), 0);
}

int server_prog_flow_keys(struct server_prog *rp, int slot, __u32 mask, const struct xp_flow_key *keys,
			  const __u32 *entries, unsigned n)
{
	struct xp_meas_maps mm = maps_of(rp);
	int r;

	if ((mask & ~(XP_KEY_FIELDS | XP_KEY_ON)) || (n && !(mask & XP_KEY_ON)))
		return -EINVAL;
	/* Off while the keys change: a frame meanwhile is the slot's, in no flow. */
	r = set_key_mask(rp, slot, 0);
	if (!r)
		r = xp_meas_keys_start(&mm, slot, keys, entries, n);
	if (!r && n)
		r = set_key_mask(rp, slot, mask);
	return r;
}

int server_prog_flow_keys_clear(struct server_prog *rp, int slot)
{
	struct xp_meas_maps mm = maps_of(rp);
	int r = set_key_mask(rp, slot, 0);

	/* The keys go even when the slot's configuration is gone already (slot_free zeroed it). */
	int k = xp_meas_keys_clear(&mm, slot);
	return r ? r : k;
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
