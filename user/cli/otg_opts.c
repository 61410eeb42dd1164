/*
 * The Open Traffic Generator front ends' options (issue 27): --otg
 * [ADDR]:PORT (the REST API, otg/http.h) with --otg-token, --otg-cert and
 * --otg-key, and --config FILE (one run, otg/run_file.h). The handlers only
 * convert; the files are read when the role starts, and the listener's
 * rule (not loopback: TLS and a token) is checked here, before anything runs.
 */
#include <stdio.h>
#include <string.h>

#include "cli/otg_opts.h"
#include "util/values.h"

int opt_otg(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->role = XP_ROLE_OTG;
	struct xp_otg_listen l;
	if (xp_otg_listen_parse(arg, &l, err, errlen))
		return -1;
	o->otg.listen.addr = l.addr;
	o->otg.listen.port = l.port;
	return 0;
}

static int file_arg(char *dst, size_t size, const char *opt, const char *arg, char *err, size_t errlen)
{
	if (!*arg)
		return xp_cli_fail(err, errlen, "%s needs a file name", opt);
	if (strlen(arg) >= size)
		return xp_cli_fail(err, errlen, "%s: file name longer than %zu bytes", opt, size - 1);
	snprintf(dst, size, "%s", arg);
	return 0;
}

int opt_otg_token(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return file_arg(o->otg.token, sizeof(o->otg.token), "--otg-token", arg, err, errlen);
}

int opt_otg_cert(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return file_arg(o->otg.cert, sizeof(o->otg.cert), "--otg-cert", arg, err, errlen);
}

int opt_otg_key(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return file_arg(o->otg.key, sizeof(o->otg.key), "--otg-key", arg, err, errlen);
}

int opt_config(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->role = XP_ROLE_CONFIG;
	return file_arg(o->otg.config, sizeof(o->otg.config), "--config", arg, err, errlen);
}

int xp_cli_check_otg(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->role != XP_ROLE_OTG)
		return 0;
	struct xp_otg_listen *l = &o->otg.listen;
	l->token_file = o->otg.token[0] ? o->otg.token : NULL;
	l->cert_file = o->otg.cert[0] ? o->otg.cert : NULL;
	l->key_file = o->otg.key[0] ? o->otg.key : NULL;
	return xp_otg_listen_check(l, err, errlen);
}
