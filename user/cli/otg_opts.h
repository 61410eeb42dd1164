/* --otg, --config and their options (cli/otg_opts.c): the table's handlers, and the rule validate.c runs. */
#ifndef XP_CLI_OTG_OPTS_H
#define XP_CLI_OTG_OPTS_H

#include <stddef.h>

#include "cli/opts.h"

struct xp_given;

/* The handlers of the table's rows (cli/options.c), as cli/handlers.h's. */
int opt_otg(struct xp_opts *o, const char *arg, char *err, size_t errlen);
int opt_otg_token(struct xp_opts *o, const char *arg, char *err, size_t errlen);
int opt_otg_cert(struct xp_opts *o, const char *arg, char *err, size_t errlen);
int opt_otg_key(struct xp_opts *o, const char *arg, char *err, size_t errlen);
int opt_config(struct xp_opts *o, const char *arg, char *err, size_t errlen);

/* The rules of the OTG front ends' options (a rule of validate.c's): 0, or -1 with err. */
int xp_cli_check_otg(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen);

#endif
