/* xp_opts_parse: getopt over the option table (options.c), then the rules (validate.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "proto/channel.h"
#include "cli/options.h"

void xp_opts_default(struct xp_opts *o)
{
	memset(o, 0, sizeof(*o));
	/* The test's defaults are the specification's, the suites' their own; the
	 * typed rows' defaults (XP_NUM_DEF) are in the table and agree with them. */
	xp_spec_default(&o->spec);
	xp_rfc2544_cfg_default(&o->rfc);
	xp_cs_cfg_default(&o->cs);
	xp_server_cfg_default(&o->srv);

	for (size_t i = 0; i < xp_noptions; i++)
		if (!xp_options[i].parse && xp_options[i].num.has_def)
			xp_opt_num_store(&xp_options[i], o, xp_options[i].num.def);
	o->compare_engine = XP_ENGINE_AUTO;

}

/* getopt's code for a long-only option: above every character, so never a short option. */
#define LONG_ONLY_CODE(i) (256 + (int)(i))

/*
 * getopt_long's arrays, made from the table so they cannot disagree with it.
 * longs needs xp_noptions + 1 entries, shorts 2 * xp_noptions + 2 bytes.
 */
static void build_getopt(struct option *longs, char *shorts)
{
	size_t n = 0;

	*shorts++ = ':'; /* a missing value returns ':', not '?' */
	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];

		if (op->letter) {
			*shorts++ = op->letter;
			if (op->arg)
				*shorts++ = ':';
		}
		if (op->name)
			longs[n++] = (struct option){ op->name, op->arg ? required_argument : no_argument, NULL,
						      op->letter ? op->letter : LONG_ONLY_CODE(i) };
	}
	*shorts = '\0';
	longs[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* The table entry for getopt_long's return value c, NULL for '?' and ':'. */
static const struct xp_option *option_for(int c)
{
	if (c >= LONG_ONLY_CODE(0))
		return (size_t)(c - LONG_ONLY_CODE(0)) < xp_noptions ? &xp_options[c - LONG_ONLY_CODE(0)] : NULL;
	for (size_t i = 0; i < xp_noptions; i++) {
		if (xp_options[i].letter && xp_options[i].letter == c)
			return &xp_options[i];
	}
	return NULL;
}

/* The message for getopt's '?' (unknown option) or ':' (missing value). */
static int getopt_error(int c, char **argv, char *err, size_t errlen)
{
	if (c == ':')
		xp_cli_fail(err, errlen, "option %s needs a value", argv[optind - 1]);
	else if (optopt > 0 && optopt < LONG_ONLY_CODE(0))
		xp_cli_fail(err, errlen, "unknown option -%c (see xdpperf --help)", optopt);
	else /* an unknown long option, or a value given to a long-only flag */
		xp_cli_fail(err, errlen, "unknown option %s (see xdpperf --help)", argv[optind - 1]);
	return 2;
}

static void given_note(struct xp_given *g, const struct xp_option *op)
{
	g->seen |= (unsigned __int128)1 << (op - xp_options);
	for (int grp = 0; grp < XP_G_N; grp++) {
		if (op->groups & (1u << grp))
			g->last[grp] = op;
	}
}

int xp_cli_read(int argc, char **argv, struct xp_opts *o, struct xp_given *g, char *err, size_t errlen)
{
	struct option longs[XP_OPTIONS_MAX + 1];
	char shorts[2 * XP_OPTIONS_MAX + 2];
	int c;

	build_getopt(longs, shorts);
	xp_opts_default(o);
	memset(g, 0, sizeof(*g));
	optind = 0; /* 0, not 1: glibc then also resets its state from a previous parse */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct xp_option *op = option_for(c);
		int r;

		if (!op)
			return getopt_error(c, argv, err, errlen);
		r = op->parse ? op->parse(o, optarg, err, errlen) : xp_opt_num(op, o, optarg, err, errlen);
		if (r)
			return r < 0 ? 2 : 1;
		given_note(g, op);
	}
	if (optind < argc) {
		xp_cli_fail(err, errlen, "unexpected argument '%s' (see xdpperf --help)", argv[optind]);
		return 2;
	}
	return 0;
}

/*
 * The options both roles take, into the server's configuration: their rows
 * store into struct xp_opts for the client, and the rules (validate.c) have
 * settled them (-P or --engine socket: standing listeners).
 */
static void server_cfg_fill(struct xp_opts *o)
{
	struct xp_server_cfg *c = &o->srv;
	const struct xp_spec *s = &o->spec;

	c->control_port = s->control_port;
	memcpy(c->dev, s->dev, sizeof(c->dev)); /* both IF_NAMESIZE, NUL-terminated */
	c->xdp_mode = s->xdp_mode;
	c->standing = s->engine == XP_ENGINE_SOCKET;
	c->port_lo = s->traffic[0].port_lo;
	c->port_hi = s->traffic[0].port_hi;
	c->parallel = s->parallel;
	c->threads = s->threads;
	c->debug = o->debug;
	c->auth_key = s->auth_key[0] ? s->auth_key : NULL;
}

int xp_opts_parse(int argc, char **argv, struct xp_opts *o, char *err, size_t errlen)
{
	struct xp_given g;
	int r = xp_cli_read(argc, argv, o, &g, err, errlen);

	if (r == 1 && o->help)
		xp_usage(stdout);
	if (!r)
		r = xp_cli_check(o, &g, err, errlen);
	if (!r)
		server_cfg_fill(o);
	return r;
}
