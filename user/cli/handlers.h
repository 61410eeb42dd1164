/*
 * The option handlers of the table in cli/options.c, defined in
 * cli/handlers.c: each converts one option's value into struct xp_opts and
 * nothing more (the rules between options are cli/validate.c's).
 */
#ifndef XDPPERF_CLI_HANDLERS_H
#define XDPPERF_CLI_HANDLERS_H

#include <stddef.h>

#include "cli/opts.h"

#define XP_OPT_HANDLER(fn) int fn(struct xp_opts *o, const char *arg, char *err, size_t errlen)

XP_OPT_HANDLER(opt_udp);
/* Issue 26's flows (cli/flow_opts.c). */
XP_OPT_HANDLER(opt_flows);
XP_OPT_HANDLER(opt_vlan);
XP_OPT_HANDLER(opt_dscp);
XP_OPT_HANDLER(opt_ttl);
XP_OPT_HANDLER(opt_src);
XP_OPT_HANDLER(opt_dst);
XP_OPT_HANDLER(opt_json);
XP_OPT_HANDLER(opt_json_stream);
XP_OPT_HANDLER(opt_one_off);
XP_OPT_HANDLER(opt_close);
XP_OPT_HANDLER(opt_keepalive);
XP_OPT_HANDLER(opt_zero);
XP_OPT_HANDLER(opt_compare);
XP_OPT_HANDLER(opt_fin);
XP_OPT_HANDLER(opt_rtt);
XP_OPT_HANDLER(opt_no_stamps);
XP_OPT_HANDLER(opt_require_rate);
XP_OPT_HANDLER(opt_keepalive_interval);
XP_OPT_HANDLER(opt_server);
XP_OPT_HANDLER(opt_probe);
XP_OPT_HANDLER(opt_client);
XP_OPT_HANDLER(opt_dev);
XP_OPT_HANDLER(opt_port);
XP_OPT_HANDLER(opt_cport);
XP_OPT_HANDLER(opt_time);
XP_OPT_HANDLER(opt_interval);
XP_OPT_HANDLER(opt_length);
XP_OPT_HANDLER(opt_bitrate);
XP_OPT_HANDLER(opt_ipv4);
XP_OPT_HANDLER(opt_ipv6);
XP_OPT_HANDLER(opt_dst_mac);
XP_OPT_HANDLER(opt_engine);
XP_OPT_HANDLER(opt_syn_engine);
XP_OPT_HANDLER(opt_xdp_mode);
XP_OPT_HANDLER(opt_bind);
XP_OPT_HANDLER(opt_peer);
XP_OPT_HANDLER(opt_max_loss);
XP_OPT_HANDLER(opt_stall);
XP_OPT_HANDLER(opt_clock);
XP_OPT_HANDLER(opt_rx_timestamp);
XP_OPT_HANDLER(opt_rfc2544);
XP_OPT_HANDLER(opt_bidir);
XP_OPT_HANDLER(opt_estimate);
XP_OPT_HANDLER(opt_sizes);
XP_OPT_HANDLER(opt_tests);
XP_OPT_HANDLER(opt_trial);
XP_OPT_HANDLER(opt_loss_tolerance);
XP_OPT_HANDLER(opt_line_rate);
XP_OPT_HANDLER(opt_plot);
XP_OPT_HANDLER(opt_device_netns);
XP_OPT_HANDLER(opt_debug);
XP_OPT_HANDLER(opt_help);
XP_OPT_HANDLER(opt_version);
XP_OPT_HANDLER(opt_allow_lo);
XP_OPT_HANDLER(opt_auth_key);
XP_OPT_HANDLER(opt_metrics);
XP_OPT_HANDLER(opt_max_duration);
XP_OPT_HANDLER(opt_test_ports);
XP_OPT_HANDLER(opt_allow);
XP_OPT_HANDLER(opt_allow_bind);
XP_OPT_HANDLER(opt_bind_control);
XP_OPT_HANDLER(opt_search);
XP_OPT_HANDLER(opt_search_trial);
XP_OPT_HANDLER(opt_search_res);
XP_OPT_HANDLER(opt_search_settle);

#endif /* XDPPERF_CLI_HANDLERS_H */
