/* The server's configuration's defaults (server/config.h). */
#include <string.h>

#include "proto/channel.h"
#include "server/config.h"
#include "spec/defaults.h"

void xp_server_cfg_default(struct xp_server_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->control_port = XP_CONTROL_PORT_DEFAULT;
	cfg->xdp_mode = XP_XDP_AUTO;
	cfg->port_lo = XP_DEFAULT_PORT_LO;
	cfg->port_hi = XP_DEFAULT_PORT_HI;
	cfg->max_duration = XP_DEFAULT_MAX_DURATION;
	cfg->test_port_lo = XP_DEFAULT_TEST_PORT_LO;
	cfg->test_port_hi = XP_DEFAULT_TEST_PORT_HI;
	cfg->max_tests = XP_DEFAULT_MAX_TESTS;
	cfg->max_control_per_addr = XP_DEFAULT_MAX_CONTROL_PER_ADDR;
	cfg->max_parallel = XP_DEFAULT_MAX_PARALLEL;
	cfg->max_parallel_total = XP_DEFAULT_MAX_PARALLEL_TOTAL;
	cfg->max_workers = XP_DEFAULT_MAX_WORKERS;
	cfg->max_workers_total = XP_DEFAULT_MAX_WORKERS_TOTAL;
	cfg->max_listen_ports = XP_DEFAULT_MAX_LISTEN_PORTS;
}
