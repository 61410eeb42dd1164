/* Server policy: which clients, durations, ports and sizes a test may have. See policy.h. */
#include "server/policy.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "net/listening.h"

bool xp_policy_peer_allowed(const struct xp_server_cfg *cfg, const struct xp_addr *peer)
{
	if (!cfg->nallow)
		return true;
	for (unsigned i = 0; i < cfg->nallow; i++)
		if (xp_cidr_contains(&cfg->allow[i].net, cfg->allow[i].plen, peer))
			return true;
	return false;
}

/* Where a bind address may come from: --allow networks, --allow-bind networks. */
static bool in_nets(const struct xp_cidr *nets, unsigned n, const struct xp_addr *a)
{
	for (unsigned i = 0; i < n; i++)
		if (xp_cidr_contains(&nets[i].net, nets[i].plen, a))
			return true;
	return false;
}

int xp_policy_check_bind(const struct xp_server_cfg *cfg, const struct xp_test *t, const struct xp_addr *peer,
			 char *err, size_t errlen)
{
	for (unsigned i = 0; i < t->nbind; i++) {
		const struct xp_addr *b = &t->bind[i];
		if (xp_addr_eq(b, peer) || in_nets(cfg->allow, cfg->nallow, b) || in_nets(cfg->allow_bind, cfg->nallow_bind, b))
			continue;
		char bs[64], ps[64];
		xp_addr_str(b, bs, sizeof(bs));
		xp_addr_str(peer, ps, sizeof(ps));
		/* Its frames would be taken as the client's: another host's address is not the client's to name. */
		snprintf(err, errlen,
			 "bind address %s is neither the client's own (%s) nor in an --allow network (the server's "
			 "operator may add --allow-bind CIDR)", bs, ps);
		return -1;
	}
	return 0;
}

void xp_policy_addr_block(const struct xp_addr *a, struct xp_cidr *blk)
{
	blk->net = *a;
	if (a->family == AF_INET) {
		((uint8_t *)&blk->net.v4)[3] = 0;
		blk->plen = 24;
	} else {
		memset(blk->net.v6.s6_addr + 8, 0, 8);
		blk->plen = 64;
	}
}

bool xp_policy_rate_take(struct xp_rate_bucket *b, double now, double burst, double per_s)
{
	if (b->t == 0) {
		b->tokens = burst;
	} else if (now > b->t) {
		b->tokens += (now - b->t) * per_s;
		if (b->tokens > burst)
			b->tokens = burst;
	}
	b->t = now;
	if (b->tokens < 1)
		return false;
	b->tokens -= 1;
	return true;
}

int xp_policy_check_test(const struct xp_server_cfg *cfg, const struct xp_test *t, char *err, size_t errlen)
{
	if (t->duration > cfg->max_duration) {
		snprintf(err, errlen, "duration %g s is longer than this server allows (%g s, --max-duration)", t->duration,
			 cfg->max_duration);
		return -1;
	}
	if (!t->listen)
		return 0;
	unsigned nports = (unsigned)t->port_hi - t->port_lo + 1;
	if (nports > cfg->max_listen_ports) {
		snprintf(err, errlen, "%u ports to listen on; this server listens on at most %u per test (--max-listen-ports)",
			 nports, cfg->max_listen_ports);
		return -1;
	}
	if (t->parallel > cfg->max_parallel) {
		snprintf(err, errlen, "%lu parallel connections; this server accepts at most %lu per test (--max-parallel)",
			 t->parallel, cfg->max_parallel);
		return -1;
	}
	return 0;
}

int xp_ephemeral_range(uint16_t *lo, uint16_t *hi)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
	if (!f)
		return -errno;
	unsigned a, b;
	int n = fscanf(f, "%u %u", &a, &b);
	fclose(f);
	if (n != 2 || a > 65535 || b > 65535 || a > b)
		return -EPROTO;
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

static bool in_own(uint16_t p, const struct xp_port_range *own, unsigned nown)
{
	for (unsigned i = 0; i < nown; i++)
		if (p >= own[i].lo && p <= own[i].hi)
			return true;
	return false;
}

int xp_policy_check_ports(const struct xp_server_cfg *cfg, const struct xp_test *t, const struct xp_port_range *own,
			  unsigned nown, char *err, size_t errlen)
{
	unsigned lo = t->port_lo, hi = t->port_hi;
	if (lo < cfg->test_port_lo || hi > cfg->test_port_hi) {
		unsigned bad = lo < cfg->test_port_lo ? lo : hi;
		snprintf(err, errlen, "port %u is outside the ports this server allows for tests, %u:%u (--test-ports)", bad,
			 cfg->test_port_lo, cfg->test_port_hi);
		return -1;
	}
	if (cfg->control_port >= lo && cfg->control_port <= hi) {
		snprintf(err, errlen, "port range %u:%u includes the server's control port %u", lo, hi, cfg->control_port);
		return -1;
	}
	uint16_t elo, ehi;
	int r = xp_ephemeral_range(&elo, &ehi);
	if (r) {
		/* Not knowing the range must not mean allowing it. */
		snprintf(err, errlen, "cannot read the server's ephemeral port range: %s", strerror(-r));
		return -1;
	}
	if (lo <= ehi && elo <= hi) {
		snprintf(err, errlen,
			 "port %u is in the server's ephemeral port range %u:%u (its own connections use it); pick -p outside it",
			 lo > elo ? lo : elo, elo, ehi);
		return -1;
	}
	static __thread struct xp_portset used; /* 8 KiB: not on the event loop's stack */
	int proto = t->udp ? IPPROTO_UDP : IPPROTO_TCP;
	r = xp_ports_in_use(proto, &used);
	if (r) {
		snprintf(err, errlen, "cannot list the server's sockets (sock_diag): %s", strerror(-r));
		return -1;
	}
	for (unsigned p = lo; p <= hi; p++)
		if (xp_portset_has(&used, (uint16_t)p) && !in_own((uint16_t)p, own, nown)) {
			snprintf(err, errlen, "port %u is in use on the server by another program (a %s); pick another -p range",
				 p, t->udp ? "bound UDP socket" : "TCP listener");
			return -1;
		}
	return 0;
}
