/* One ICMP (ICMPv6) echo request and its reply; see net/ping.h. */
#include "net/ping.h"

#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame/csum.h"

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int xp_ping(const struct xp_addr *dst, int timeout_ms)
{
	bool v6 = dst->family == AF_INET6;
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_RAW | SOCK_CLOEXEC, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	if (fd < 0)
		return -errno;
	/* Identify our reply among others' by id and sequence (the kernel does not filter raw sockets). */
	uint16_t id = (uint16_t)(getpid() ^ now_ms()), seq = 1;
	uint8_t req[16] = { 0 };
	if (v6) {
		struct icmp6_hdr *h = (struct icmp6_hdr *)req;
		h->icmp6_type = ICMP6_ECHO_REQUEST;
		h->icmp6_id = htons(id);
		h->icmp6_seq = htons(seq); /* the kernel fills in the ICMPv6 checksum */
	} else {
		struct icmphdr *h = (struct icmphdr *)req;
		h->type = ICMP_ECHO;
		h->un.echo.id = htons(id);
		h->un.echo.sequence = htons(seq);
		h->checksum = csum_fold(csum_partial(req, sizeof(req), 0));
	}
	struct sockaddr_storage ss;
	size_t sl = xp_addr_to_sockaddr(dst, 0, &ss);
	if (sendto(fd, req, sizeof(req), 0, (struct sockaddr *)&ss, (socklen_t)sl) < 0) {
		int e = errno;
		close(fd);
		/* No route or an ICMP error already cached: no answer, not a failure to probe. */
		return e == ENETUNREACH || e == EHOSTUNREACH ? 0 : -e;
	}
	long long deadline = now_ms() + timeout_ms;
	int r = 0;
	for (;;) {
		long long left = deadline - now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		uint8_t buf[1500];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n <= 0)
			continue;
		struct xp_addr src;
		if (xp_addr_from_sockaddr((struct sockaddr *)&from, &src, NULL) || !xp_addr_eq(&src, dst))
			continue;
		if (v6) {
			const struct icmp6_hdr *h = (const struct icmp6_hdr *)buf;
			if (n >= (ssize_t)sizeof(*h) && h->icmp6_type == ICMP6_ECHO_REPLY && ntohs(h->icmp6_id) == id &&
			    ntohs(h->icmp6_seq) == seq) {
				r = 1;
				break;
			}
		} else {
			/* IPv4 raw sockets deliver the IP header too. */
			size_t ihl = (size_t)(buf[0] & 0x0f) * 4;
			const struct icmphdr *h = (const struct icmphdr *)(buf + ihl);
			if ((size_t)n >= ihl + sizeof(*h) && h->type == ICMP_ECHOREPLY && ntohs(h->un.echo.id) == id &&
			    ntohs(h->un.echo.sequence) == seq) {
				r = 1;
				break;
			}
		}
	}
	close(fd);
	return r;
}
