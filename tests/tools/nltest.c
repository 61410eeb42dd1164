/* Tiny driver for user/net/route.c and user/net/netdev.c, used by
 * tests/e2e/10_netlink.sh; built by make (build/tests/tools/nltest). Prints
 * results as key=value lines; rc is 0 or -errno. Exit status is 0 if the call
 * itself succeeded, 1 if it returned an error, 2 on usage errors.
 *
 *   nltest route DST                 nltest src DST
 *   nltest neigh IFINDEX ADDR        nltest nexthop DST TIMEOUT_MS
 *   nltest kick ntf|udp IFINDEX ADDR TIMEOUT_MS   (trigger, then poll neigh)
 *   nltest link NAME                 nltest linkidx IFINDEX
 *   nltest addrs IFINDEX 0|4|6       nltest ifindex ADDR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "util/addr.h"
#include "net/netdev.h"
#include "net/route.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void print_mac(const char *key, const uint8_t m[6])
{
	printf("%s=%02x:%02x:%02x:%02x:%02x:%02x\n", key, m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void print_addr(const char *key, const struct xp_addr *a)
{
	char buf[INET6_ADDRSTRLEN];

	printf("%s=%s\n", key, xp_addr_str(a, buf, sizeof(buf)));
}

static int rc(int r)
{
	printf("rc=%d\n", r);
	if (r < 0)
		printf("errstr=%s\n", strerror(-r));
	return r < 0 ? 1 : 0;
}

static void parse_or_die(const char *s, struct xp_addr *a)
{
	if (xp_addr_parse(s, a) < 0) {
		fprintf(stderr, "bad address: %s\n", s);
		exit(2);
	}
}

static void print_route(const struct xp_route *rt)
{
	printf("oif=%d\n", rt->oif);
	print_addr("gateway", &rt->gateway);
	print_addr("prefsrc", &rt->prefsrc);
}

static void print_link(const struct xp_netdev *l)
{
	printf("ifindex=%d\nname=%s\n", l->ifindex, l->name);
	print_mac("mac", l->mac);
	printf("mtu=%u\nrx_queues=%u\ntx_queues=%u\nup=%d\ncarrier=%d\n", l->mtu, l->rx_queues,
	       l->tx_queues, l->up, l->carrier);
}

int main(int argc, char **argv)
{
	struct xp_addr a, b;
	struct xp_route rt;
	struct xp_netdev l;
	uint8_t mac[6];
	int r;

	if (argc < 3)
		goto usage;
	if (!strcmp(argv[1], "route") && argc == 3) {
		parse_or_die(argv[2], &a);
		r = xp_route_get(&a, &rt);
		if (!r)
			print_route(&rt);
		return rc(r);
	}
	if (!strcmp(argv[1], "src") && argc == 3) {
		parse_or_die(argv[2], &a);
		r = xp_source_addr(&a, &b);
		if (!r)
			print_addr("src", &b);
		return rc(r);
	}
	if (!strcmp(argv[1], "neigh") && argc == 4) {
		parse_or_die(argv[3], &a);
		r = xp_neigh_get(atoi(argv[2]), &a, mac);
		if (!r)
			print_mac("mac", mac);
		return rc(r);
	}
	if (!strcmp(argv[1], "nexthop") && argc == 4) {
		char err[256] = "";
		long long t0;

		parse_or_die(argv[2], &a);
		t0 = now_ms();
		r = xp_nexthop_mac(&a, atoi(argv[3]), &rt, mac, err, sizeof(err));
		printf("elapsed_ms=%lld\n", now_ms() - t0);
		print_route(&rt);
		if (!r)
			print_mac("mac", mac);
		else
			printf("err=%s\n", err);
		return rc(r);
	}
	if (!strcmp(argv[1], "kick") && argc == 6) {
		int ifindex = atoi(argv[3]), timeout = atoi(argv[5]);
		long long deadline;

		parse_or_die(argv[4], &a);
		if (!strcmp(argv[2], "ntf"))
			r = xp_neigh_kick(ifindex, &a);
		else if (!strcmp(argv[2], "udp"))
			r = xp_neigh_kick_udp(ifindex, &a);
		else
			goto usage;
		printf("kick_rc=%d\n", r);
		if (r)
			return rc(r);
		deadline = now_ms() + timeout;
		do {
			r = xp_neigh_get(ifindex, &a, mac);
			if (r != -ENOENT)
				break;
			nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
		} while (now_ms() < deadline);
		if (!r)
			print_mac("mac", mac);
		return rc(r);
	}
	if (!strcmp(argv[1], "link") && argc == 3) {
		r = xp_netdev_by_name(argv[2], &l);
		if (!r)
			print_link(&l);
		return rc(r);
	}
	if (!strcmp(argv[1], "linkidx") && argc == 3) {
		r = xp_netdev_by_index(atoi(argv[2]), &l);
		if (!r)
			print_link(&l);
		return rc(r);
	}
	if (!strcmp(argv[1], "addrs") && argc == 4) {
		struct xp_addr out[16];
		int fam = atoi(argv[3]);

		fam = fam == 4 ? AF_INET : fam == 6 ? AF_INET6 : 0;
		r = xp_netdev_addrs(atoi(argv[2]), fam, out, 16);
		if (r >= 0) {
			printf("count=%d\n", r);
			for (int i = 0; i < r; i++) {
				char key[16];

				snprintf(key, sizeof(key), "addr%d", i);
				print_addr(key, &out[i]);
			}
		}
		return rc(r < 0 ? r : 0);
	}
	if (!strcmp(argv[1], "ifindex") && argc == 3) {
		parse_or_die(argv[2], &a);
		r = xp_ifindex_of_addr(&a);
		if (r >= 0)
			printf("ifindex=%d\n", r);
		return rc(r < 0 ? r : 0);
	}
usage:
	fprintf(stderr, "usage: see the header of tests/tools/nltest.c\n");
	return 2;
}
