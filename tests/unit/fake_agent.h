/*
 * What the OTG controller's config tests share (test_otg_config.c,
 * test_otg_line_rate.c): a listener on 127.0.0.1 at a free port, the "agent"
 * a config's reachability check connects to (it never answers: the tests
 * stop at the config). agent_up/agent_down are cmocka group setup and
 * teardown; agent_port is the port a config's location names.
 */
#ifndef XDPPERF_TESTS_FAKE_AGENT_H
#define XDPPERF_TESTS_FAKE_AGENT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int agent_fd = -1;
static unsigned short agent_port;

static int agent_up(void **state)
{
	(void)state;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	agent_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (agent_fd < 0 || bind(agent_fd, (struct sockaddr *)&a, sizeof(a)) || listen(agent_fd, 16) ||
	    getsockname(agent_fd, (struct sockaddr *)&a, &l))
		return -1;
	agent_port = ntohs(a.sin_port);
	return 0;
}

static int agent_down(void **state)
{
	(void)state;
	close(agent_fd);
	return 0;
}

#endif
