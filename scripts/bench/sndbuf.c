// Preloaded into trafgen by scripts/bench/trafgen.sh (LD_PRELOAD): gives
// each AF_PACKET socket trafgen opens the send buffer of XP_SNDBUF bytes, and
// says so on stderr ("xp-sndbuf: fd N sndbuf B"), which run_trafgen checks.
//
// Why: trafgen 0.6.8 raises net.core.wmem_default to 4 MiB for itself
// (set_system_socket_memory) before it opens its socket, and so its users on a
// host run it. Inside a network namespace on Linux 6.18 net.core.[rw]mem_* are
// read-only ("Cannot set system socket memory ... Permission denied"), so in
// the lab its socket got the host's 212992 bytes. trafgen's TX ring holds 256
// frames; a socket's skbs stay charged to it until the receiving veth takes
// them, and with 212992 bytes a flush that finds the buffer full gets EAGAIN,
// which trafgen's flush treats as fatal ("Flushing TX_RING failed: Resource
// temporarily unavailable!"): 3 of 30 runs here. With 4 MiB, 256 frames in
// flight cannot fill it. This sets what trafgen itself asks for, on its
// socket instead of the namespace's default; nothing else of trafgen changes.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int socket(int domain, int type, int protocol)
{
	static int (*real_socket)(int, int, int);
	const char *want = getenv("XP_SNDBUF");
	int fd, n, got;
	socklen_t len = sizeof(got);

	if (!real_socket)
		real_socket = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	fd = real_socket(domain, type, protocol);
	if (fd < 0 || domain != AF_PACKET || !want)
		return fd;
	n = atoi(want);
	// SO_SNDBUFFORCE: root may exceed net.core.wmem_max, as trafgen's own
	// sysctl change would let it.
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &n, sizeof(n)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &got, &len) < 0) {
		fprintf(stderr, "xp-sndbuf: fd %d: SO_SNDBUFFORCE %d failed: %s\n", fd, n, strerror(errno));
		return fd;
	}
	fprintf(stderr, "xp-sndbuf: fd %d sndbuf %d\n", fd, got);
	return fd;
}
