#include "loader/server_prog.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/server.skel.h"
#include "loader/libbpf_log.h"
#include "loader/server_hwts.h"
#include "loader/percpu.h"
#include "loader/server_tc.h"
#include "util/random.h"
#include "net/netdev.h"
#include "net/route.h"

#define XP_MAX_LINKS 16
/* Addresses of one interface the program answers for: its share of
 * local_addr. Beyond that, frames to the others are not answered. */
#define XP_MAX_IF_ADDRS (XP_MAX_LOCAL_ADDRS / XP_MAX_LINKS)

struct rx_link {
	int ifindex;
	int fd;   /* bpf_link fd: closing it (or dying) detaches */
	int refs;
	const char *mode;
	struct server_hwts_bpf *hw; /* the device-bound variant attached here, or NULL */
	char hw_why[160];           /* why not, when hw is NULL */
};

struct slot {
	int used;
	uint16_t lo, hi;
	struct xp_peer_key *peers; /* its slot_peers entries, npeers of them */
	unsigned npeers;
};

struct server_prog {
	struct server_bpf *skel;
	struct bpf_program *prog;
	struct rx_link links[XP_MAX_LINKS];
	struct slot slots[XP_MAX_SLOTS];
	bool want_hwts; /* server_prog_set_hwts */
	bool frags;     /* loaded with BPF_F_XDP_HAS_FRAGS (load_skel) */
	struct server_tc *tc; /* the TC program, on the same maps (XP_SLOT_TC slots) */
};

/*
 * Open and load the counter program into rp->skel; frags: with
 * BPF_F_XDP_HAS_FRAGS (multi-buffer XDP, kernel 5.18 or later). Why always
 * where the kernel takes it: a driver refuses a program without it in
 * native mode above the MTU whose frames fit one page (veth: 3518), and
 * would leave a jumbo-frame test to generic (skb) mode; a program with it
 * attaches natively at any MTU, and on a device whose frames fit one
 * buffer it runs the same code on the same frames (bpf/server.bpf.c's
 * xp_frame_len is the one difference: a helper call). 0 or -errno.
 */
static int load_skel(struct server_prog *rp, uint16_t ctrl_port, bool reply_redirect, bool frags, char *err,
		     size_t errlen)
{
	rp->skel = server_bpf__open();
	if (!rp->skel) {
		int e = errno;
		snprintf(err, errlen, "cannot open the XDP counter program: %s", strerror(e));
		return -e;
	}
	struct xp_server_config *cfg = &rp->skel->rodata->config;
	cfg->ctrl_port = ctrl_port;
	cfg->reply_redirect = reply_redirect;
	/* SYN cookies are only as good as the secret behind them. */
	if (xp_random_fill(cfg->cookie_key, sizeof(cfg->cookie_key), false)) {
		snprintf(err, errlen, "cannot read random bytes for the SYN cookie key: %s", strerror(errno));
		server_bpf__destroy(rp->skel);
		return -EIO;
	}
	if (frags)
		bpf_program__set_flags(rp->skel->progs.xdp_server,
				       bpf_program__flags(rp->skel->progs.xdp_server) | BPF_F_XDP_HAS_FRAGS);
	int r = server_bpf__load(rp->skel);
	if (r) {
		snprintf(err, errlen, "cannot load the XDP counter program: %s%s", strerror(-r),
			 r == -EPERM ? " (run as root or with CAP_BPF and CAP_NET_ADMIN)" : "");
		server_bpf__destroy(rp->skel);
		return r;
	}
	rp->frags = frags;
	return 0;
}

int server_prog_open(struct server_prog **out, uint16_t ctrl_port, bool reply_redirect, char *err, size_t errlen)
{
	struct server_prog *rp = calloc(1, sizeof(*rp));
	if (!rp)
		return -ENOMEM;
	libbpf_set_print(xp_libbpf_print);
	/* Multi-buffer where the kernel has it; else as before (a kernel
	 * before 5.18 refuses the flag: EINVAL). */
	int r = load_skel(rp, ctrl_port, reply_redirect, true, err, errlen);
	if (r && r != -EPERM && r != -EIO)
		r = load_skel(rp, ctrl_port, reply_redirect, false, err, errlen);
	if (r) {
		free(rp);
		return r;
	}
	rp->prog = bpf_object__next_program(rp->skel->obj, NULL);
	r = server_tc_open(&rp->tc, rp->skel, ctrl_port, err, errlen);
	if (r) {
		server_bpf__destroy(rp->skel);
		free(rp);
		return r;
	}
	*out = rp;
	return 0;
}

void server_prog_close(struct server_prog *rp)
{
	if (!rp)
		return;
	for (int i = 0; i < XP_MAX_LINKS; i++)
		if (rp->links[i].refs) {
			close(rp->links[i].fd);
			xp_hwts_destroy(rp->links[i].hw);
		}
	for (int i = 0; i < XP_MAX_SLOTS; i++)
		free(rp->slots[i].peers);
	server_tc_close(rp->tc); /* before the maps it shares go */
	server_bpf__destroy(rp->skel);
	free(rp);
}

/* An address as the program's map keys hold it. */
static void key_addr(const struct xp_addr *a, __u32 *family, __u32 addr[4])
{
	memset(addr, 0, 16);
	if (a->family == AF_INET6) {
		*family = XP_FAMILY_V6;
		memcpy(addr, &a->v6, 16);
	} else {
		*family = XP_FAMILY_V4;
		memcpy(addr, &a->v4, 4);
	}
}

/*
 * Make local_addr hold ifindex's current unicast addresses (none with
 * clear): the new ones are added before the gone ones are removed, so an
 * address that stays is never missing while a test runs.
 */
static int sync_local_addrs(struct server_prog *rp, int ifindex, bool clear)
{
	struct bpf_map *m = rp->skel->maps.local_addr;
	struct xp_addr a[XP_MAX_IF_ADDRS];
	struct xp_local_key want[XP_MAX_IF_ADDRS], gone[XP_MAX_LOCAL_ADDRS], k, next;
	int n = clear ? 0 : xp_netdev_addrs(ifindex, 0, a, XP_MAX_IF_ADDRS), nwant = 0, ngone = 0;
	__u32 val = XP_LOCAL_UNICAST;

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (!xp_addr_is_unicast(&a[i]))
			continue; /* loopback: never answered anyway */
		struct xp_local_key *w = &want[nwant++];
		memset(w, 0, sizeof(*w));
		w->ifindex = (__u32)ifindex;
		key_addr(&a[i], &w->family, w->addr);
		int r = bpf_map__update_elem(m, w, sizeof(*w), &val, sizeof(val), 0);
		if (r)
			return r;
	}
	/* Collect first, delete after: deleting while walking a hash map
	 * can restart the walk. */
	void *prev = NULL;
	while (ngone < XP_MAX_LOCAL_ADDRS && !bpf_map__get_next_key(m, prev, &next, sizeof(next))) {
		k = next;
		prev = &k;
		if ((int)k.ifindex != ifindex)
			continue;
		bool keep = false;
		for (int i = 0; i < nwant && !keep; i++)
			keep = !memcmp(&want[i], &k, sizeof(k));
		if (!keep)
			gone[ngone++] = k;
	}
	for (int i = 0; i < ngone; i++)
		bpf_map__delete_elem(m, &gone[i], sizeof(gone[i]), 0);
	return 0;
}

int server_prog_attach(struct server_prog *rp, int ifindex, enum xp_xdp_mode mode, const char **mode_used,
		  char *err, size_t errlen)
{
	struct rx_link *free_l = NULL;
	for (int i = 0; i < XP_MAX_LINKS; i++) {
		struct rx_link *l = &rp->links[i];
		if (l->refs && l->ifindex == ifindex) {
			l->refs++;
			*mode_used = l->mode;
			return 0;
		}
		if (!l->refs && !free_l)
			free_l = l;
	}
	if (!free_l) {
		snprintf(err, errlen, "too many interfaces in use (max %d)", XP_MAX_LINKS);
		return -ENOSPC;
	}
	int r = sync_local_addrs(rp, ifindex, false);
	if (r) {
		snprintf(err, errlen, "cannot give the XDP program the addresses of ifindex %d: %s", ifindex,
			 strerror(-r));
		return r;
	}
	/* XP_MEAS_HWTS needs the device-bound variant (the kernel lets no
	 * other program read the NIC's timestamp). Where it cannot be had (no
	 * such driver, refused, or a mode a device-bound program cannot take),
	 * the main program goes on, and frames are timed by the kernel's clock:
	 * the slot's meas_stats.hw_timed says which. */
	struct server_hwts_bpf *hw = NULL;
	char why[sizeof(free_l->hw_why)] = "NIC timestamps not asked for (server_prog_set_hwts)";
	int fd = -ENOENT;
	if (rp->want_hwts && !xp_hwts_driver_has(ifindex)) {
		snprintf(why, sizeof(why), "the driver has no XDP RX timestamp (xdp-rx-metadata-features)");
	} else if (rp->want_hwts) {
		hw = xp_hwts_load(rp->skel, ifindex, why, sizeof(why));
		if (hw && (fd = xp_xdp_attach(xp_hwts_prog_fd(hw), ifindex, mode)) < 0) {
			/* e.g. generic (skb) mode, which takes no device-bound program */
			snprintf(why, sizeof(why), "the kernel would not attach the device-bound program in %s mode: %s",
				 mode == XP_XDP_SKB ? "skb" : "this", strerror(-fd));
			xp_hwts_destroy(hw);
			hw = NULL;
		}
	}
	if (!hw)
		fd = xp_xdp_attach(bpf_program__fd(rp->prog), ifindex, mode);
	if (fd < 0) {
		sync_local_addrs(rp, ifindex, true);
		snprintf(err, errlen, "cannot attach XDP to ifindex %d: %s%s", ifindex, strerror(-fd),
			 (fd == -EBUSY || fd == -EEXIST) ? " (another XDP program is attached there)" : "");
		return fd;
	}
	free_l->ifindex = ifindex;
	free_l->fd = fd;
	free_l->refs = 1;
	free_l->hw = hw;
	snprintf(free_l->hw_why, sizeof(free_l->hw_why), "%s", hw ? "" : why);
	free_l->mode = xp_xdp_mode_name(ifindex);
	*mode_used = free_l->mode;
	return 0;
}

int server_prog_attach_tc(struct server_prog *rp, int ifindex, const char **how, char *err, size_t errlen)
{
	return server_tc_attach(rp->tc, ifindex, how, err, errlen);
}

void server_prog_detach_tc(struct server_prog *rp, int ifindex)
{
	server_tc_detach(rp->tc, ifindex);
}

struct server_tc_bpf *server_prog_tc_skel(struct server_prog *rp)
{
	return server_tc_skel(rp->tc);
}

void server_prog_detach(struct server_prog *rp, int ifindex)
{
	for (int i = 0; i < XP_MAX_LINKS; i++) {
		struct rx_link *l = &rp->links[i];
		if (l->refs && l->ifindex == ifindex) {
			if (--l->refs == 0) {
				close(l->fd);
				xp_hwts_destroy(l->hw);
				l->hw = NULL;
				sync_local_addrs(rp, ifindex, true);
			}
			return;
		}
	}
}

/*
 * A client address a slot may be bound to: one host's, as a packet's
 * source. Loopback is allowed (a client on this host, where the operator
 * lets tests use lo; the responder still answers no loopback source); a
 * multicast, broadcast (limited, or a subnet's: the route says) or
 * unspecified one is refused. 0 or -EINVAL with err naming it.
 */
static int check_client_addr(const struct xp_addr *a, char *err, size_t errlen)
{
	char s[INET6_ADDRSTRLEN];
	unsigned char type;
	bool loopback = a->family == AF_INET ? (ntohl(a->v4.s_addr) >> 24) == 127
					     : a->family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&a->v6);

	xp_addr_str(a, s, sizeof(s));
	if (!loopback && !xp_addr_is_unicast(a)) {
		snprintf(err, errlen,
			 "client address %s is not one host's unicast address; --bind takes the client's own addresses", s);
		return -EINVAL;
	}
	if (!xp_route_type(a, &type) &&
	    (type == RTN_BROADCAST || type == RTN_MULTICAST || type == RTN_ANYCAST)) {
		snprintf(err, errlen, "client address %s is a %s address on this server, not one host's; "
			 "--bind takes the client's own addresses", s,
			 type == RTN_BROADCAST ? "broadcast" : type == RTN_MULTICAST ? "multicast" : "anycast");
		return -EINVAL;
	}
	return 0;
}

/* cfg's self4 and self6: the interface's first unicast IPv4 address and
 * its first unicast IPv6 one, a global one before a link-local one (the
 * program's no-lookup path for frames sent to them; every other address of
 * the interface is in local_addr). None found: 0, all frames looked up. */
static void self_addrs(int ifindex, struct xp_slot_cfg *cfg)
{
	struct xp_addr a[XP_MAX_IF_ADDRS];
	int n = xp_netdev_addrs(ifindex, 0, a, XP_MAX_IF_ADDRS);
	bool have6 = false, ll6 = false;

	for (int i = 0; i < n; i++) {
		if (!xp_addr_is_unicast(&a[i]))
			continue;
		if (a[i].family == AF_INET && !cfg->self4) {
			memcpy(&cfg->self4, &a[i].v4, 4);
		} else if (a[i].family == AF_INET6 && (!have6 || ll6)) {
			bool ll = IN6_IS_ADDR_LINKLOCAL(&a[i].v6);
			if (have6 && ll)
				continue;
			memcpy(cfg->self6, &a[i].v6, 16);
			have6 = true;
			ll6 = ll;
		}
	}
}

static void set_ports(struct server_prog *rp, uint16_t lo, uint16_t hi, __u32 val)
{
	for (__u32 p = lo; p <= hi; p++)
		bpf_map__update_elem(rp->skel->maps.port_slot, &p, sizeof(p), &val, sizeof(val), 0);
}

static void drop_peers(struct server_prog *rp, struct slot *s)
{
	for (unsigned i = 0; i < s->npeers; i++)
		bpf_map__delete_elem(rp->skel->maps.slot_peers, &s->peers[i], sizeof(s->peers[i]), 0);
	free(s->peers);
	s->peers = NULL;
	s->npeers = 0;
}

/* The slot's slot_peers entries: the bind addresses other than the client's
 * own (which slot_cfg holds), each once. 0 or -errno with err set. */
static int add_peers(struct server_prog *rp, int slot, const struct xp_addr *client,
		     const struct xp_addr *bind, unsigned nbind, char *err, size_t errlen)
{
	struct slot *s = &rp->slots[slot];
	__u32 one = 1;

	s->peers = nbind ? calloc(nbind, sizeof(*s->peers)) : NULL;
	if (nbind && !s->peers)
		return -ENOMEM;
	for (unsigned i = 0; i < nbind; i++) {
		if (xp_addr_eq(&bind[i], client))
			continue;
		struct xp_peer_key *k = &s->peers[s->npeers];
		memset(k, 0, sizeof(*k));
		k->slot = (__u32)slot;
		key_addr(&bind[i], &k->family, k->addr);
		/* BPF_NOEXIST: a duplicate is already in, skip it. */
		int r = bpf_map__update_elem(rp->skel->maps.slot_peers, k, sizeof(*k), &one, sizeof(one), BPF_NOEXIST);
		if (r == -EEXIST)
			continue;
		if (r) {
			snprintf(err, errlen, "cannot configure the XDP program's client addresses: %s", strerror(-r));
			return r;
		}
		s->npeers++;
	}
	return 0;
}

int server_prog_slot_alloc(struct server_prog *rp, uint16_t lo, uint16_t hi, uint32_t protos, uint32_t flags,
			   uint32_t close_mode, int ifindex, const struct xp_addr *client,
			   const struct xp_addr *bind, unsigned nbind, char *err, size_t errlen)
{
	int slot = -1, r;
	/* Reflection sends the stream's own frames back; a responder's or a
	 * socket test's frames have other places to go. */
	if ((flags & XP_SLOT_REFLECT) && (flags & (XP_SLOT_RESPOND | XP_SLOT_PASS))) {
		snprintf(err, errlen, "round trip (reflect) is for stream tests only, not for connection or socket tests");
		return -EINVAL;
	}
	if (nbind > XP_SLOT_MAX_PEERS) {
		snprintf(err, errlen, "at most %d client addresses (--bind) per test", XP_SLOT_MAX_PEERS);
		return -EINVAL;
	}
	if (!client || (client->family != AF_INET && client->family != AF_INET6)) {
		snprintf(err, errlen, "the test has no client address");
		return -EINVAL;
	}
	if ((r = check_client_addr(client, err, errlen)))
		return r;
	for (unsigned i = 0; i < nbind; i++)
		if ((r = check_client_addr(&bind[i], err, errlen)))
			return r;
	for (int i = 0; i < XP_MAX_SLOTS; i++) {
		struct slot *s = &rp->slots[i];
		if (s->used && lo <= s->hi && s->lo <= hi) {
			snprintf(err, errlen, "ports %u:%u overlap %u:%u of a test already running; pick another -p range",
				 lo, hi, s->lo, s->hi);
			return -EBUSY;
		}
		if (!s->used && slot < 0)
			slot = i;
	}
	if (slot < 0) {
		snprintf(err, errlen, "server is running its maximum of %d tests; try again later", XP_MAX_SLOTS);
		return -ENOSPC;
	}
	struct xp_netdev dev;
	if ((r = xp_netdev_by_index(ifindex, &dev))) {
		snprintf(err, errlen, "cannot read interface %d: %s", ifindex, strerror(-r));
		return r;
	}
	/* A slot's frames are those sent to the interface's addresses as they
	 * are now (xp_slot_owns): refreshed at every test start. */
	if ((r = sync_local_addrs(rp, ifindex, false))) {
		snprintf(err, errlen, "cannot give the XDP program the addresses of %s: %s", dev.name, strerror(-r));
		return r;
	}
	__u32 key = (__u32)slot, zero = 0;
	struct xp_slot_cfg cfg = {
		/* A TC slot is not active for the XDP program (see XP_SLOT_TC). */
		.flags = (flags & XP_SLOT_TC) ? flags : flags | XP_SLOT_ACTIVE,
		.protos = protos,
		.close_mode = close_mode,
		.ifindex = (__u32)ifindex,
	};
	/* Loopback's frames are all this host's, to whatever address: the
	 * device says so, never the caller. */
	cfg.flags &= ~XP_SLOT_LOCAL;
	if (dev.loopback)
		cfg.flags |= XP_SLOT_LOCAL;
	key_addr(client, &cfg.peer_family, cfg.peer);
	memcpy(cfg.mac, dev.mac, sizeof(cfg.mac));
	self_addrs(ifindex, &cfg);
	/* Everything of the last test in this slot goes: its counters, the
	 * data length its traffic taught the responder (slot_data_len) and the
	 * steps it issued cookies in (ka_steps: its keepalives are not this
	 * test's, and the search starts at this test's first cookie). */
	r = xp_percpu_zero(rp->skel->maps.counters, &key, sizeof(key), sizeof(struct xp_counters));
	if (!r)
		r = bpf_map__update_elem(rp->skel->maps.slot_data_len, &key, sizeof(key), &zero, sizeof(zero), 0);
	if (!r) {
		static const struct xp_ka_steps noka; /* 16 KiB of zeros: not on the stack */
		r = bpf_map__update_elem(rp->skel->maps.ka_steps, &key, sizeof(key), &noka, sizeof(noka), 0);
	}
	/* No stamp accounting until server_prog_meas_start says so: the last
	 * test's t0 and ival mean nothing to this one. */
	struct xp_slot_meas nomeas = { 0 };
	if (!r)
		r = bpf_map__update_elem(rp->skel->maps.slot_meas, &key, sizeof(key), &nomeas, sizeof(nomeas), 0);
	if (r) {
		snprintf(err, errlen, "cannot configure the XDP program's maps: %s", strerror(-r));
		return r;
	}
	if ((r = add_peers(rp, slot, client, bind, nbind, err, errlen))) {
		drop_peers(rp, &rp->slots[slot]);
		return r;
	}
	cfg.npeers = rp->slots[slot].npeers;
	/* The configuration before the ports: no frame sees half a slot. */
	r = bpf_map__update_elem(rp->skel->maps.slot_cfg, &key, sizeof(key), &cfg, sizeof(cfg), 0);
	if (r) {
		snprintf(err, errlen, "cannot configure the XDP program's maps: %s", strerror(-r));
		drop_peers(rp, &rp->slots[slot]);
		return r;
	}
	set_ports(rp, lo, hi, key + 1);
	rp->slots[slot].used = 1;
	rp->slots[slot].lo = lo;
	rp->slots[slot].hi = hi;
	return slot;
}

void server_prog_slot_free(struct server_prog *rp, int slot)
{
	if (slot < 0 || slot >= XP_MAX_SLOTS || !rp->slots[slot].used)
		return;
	__u32 key = (__u32)slot;
	struct xp_slot_cfg cfg = { 0 };
	/* In the reverse order of alloc: ports, then configuration, then peers. */
	set_ports(rp, rp->slots[slot].lo, rp->slots[slot].hi, 0);
	bpf_map__update_elem(rp->skel->maps.slot_cfg, &key, sizeof(key), &cfg, sizeof(cfg), 0);
	drop_peers(rp, &rp->slots[slot]);
	rp->slots[slot].used = 0;
}

int server_prog_read(struct server_prog *rp, int slot, struct xp_counters *sum)
{
	__u32 key = (__u32)slot;
	return xp_percpu_read(rp->skel->maps.counters, &key, sizeof(key), sizeof(*sum), sum, sizeof(*sum));
}

struct server_bpf *server_prog_skel(struct server_prog *rp)
{
	return rp->skel;
}

int server_prog_read_global(struct server_prog *rp, uint64_t out[XP_G_NSTATS])
{
	for (__u32 k = 0; k < XP_G_NSTATS; k++) {
		int r = xp_percpu_read(rp->skel->maps.gstats, &k, sizeof(k), sizeof(__u64), &out[k], sizeof(__u64));
		if (r)
			return r;
	}
	return 0;
}

void server_prog_set_hwts(struct server_prog *rp, bool on)
{
	rp->want_hwts = on;
}

bool server_prog_hwts_on(struct server_prog *rp, int ifindex, const char **why)
{
	for (int i = 0; i < XP_MAX_LINKS; i++)
		if (rp->links[i].refs && rp->links[i].ifindex == ifindex) {
			if (why)
				*why = rp->links[i].hw_why;
			return rp->links[i].hw != NULL;
		}
	if (why)
		*why = "not attached there";
	return false;
}
