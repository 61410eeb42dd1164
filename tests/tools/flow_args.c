/* What the flow tools share; see flow_args.h. */
#include "flow_args.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "bpf/lib/stamp.h"
#include "util/addr.h"

int flow_arg_parse(const char *s, struct xp_flow_hdr *h)
{
	unsigned a = 0, b = 0, d = 0;
	const char *slash = strchr(s, '/');
	int n;

	if (slash && (sscanf(slash + 1, "%u%n", &d, &n) != 1 || slash[1 + n] || d > XP_DSCP_MAX))
		return -1;
	h->dscp = (uint8_t)d;
	if (s[0] == 'u' && (s[1] == 0 || s[1] == '/')) {
		h->nvlan = 0;
	} else if (sscanf(s, "q:%u%n", &a, &n) == 1 && (s[n] == 0 || s[n] == '/')) {
		h->nvlan = 1;
		h->vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .vid = (uint16_t)a };
	} else if (sscanf(s, "ad:%u:%u%n", &a, &b, &n) == 2 && (s[n] == 0 || s[n] == '/')) {
		h->nvlan = 2;
		h->vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021AD, .vid = (uint16_t)a };
		h->vlan[1] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .vid = (uint16_t)b };
	} else {
		return -1;
	}
	return a > XP_VID_MAX || b > XP_VID_MAX ? -1 : 0;
}

int flow_arg_hdr(struct xp_flow_hdr *h, const char *ifname, const uint8_t dmac[6], const char *src, const char *dst,
		 const char *flow)
{
	struct ifreq ifr = { 0 };

	if (xp_addr_parse(src, &h->src) || xp_addr_parse(dst, &h->dst) || flow_arg_parse(flow, h))
		return -1;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
		return -2;
	}
	close(fd);
	memcpy(h->dst_mac, dmac, 6);
	memcpy(h->src_mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

uint64_t flow_arg_now_ticks(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec) >> XP_STAMP_TICK_SHIFT;
}
