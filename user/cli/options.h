/*
 * The option table and the steps of parsing, for cli.c, validate.c, help.c
 * and the unit tests. Everything else uses cli/opts.h.
 *
 * Parsing is two steps: xp_cli_read converts each option's value into
 * struct xp_opts (one handler per option, no cross-option rules), then
 * xp_cli_check applies the rules between options, one function per group.
 */
#ifndef XP_OPTIONS_H
#define XP_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/opts.h"
#include "cli/values.h"

/* The --help section an option is listed under, in --help's order. */
enum xp_opt_section {
	XP_SEC_COMMON = 0,
	XP_SEC_CLIENT,
	XP_SEC_SOCKET,   /* socket tests, fireperf's flags */
	XP_SEC_XDP_CONN, /* the XDP connection engine */
	XP_SEC_SERVER,
	XP_SEC_PROBE,    /* --probe */
	XP_SEC_N,
};

/* Groups the cross-option rules ask about: "was any option of this group given?" */
enum xp_opt_group {
	XP_G_CLIENT_ONLY = 0, /* refused with -s */
	XP_G_SOCKET,          /* a socket-test flag: selects --engine socket (or xdp) */
	XP_G_XDP_CONN,        /* only for the XDP connection engine */
	XP_G_N,
};
#define XP_OPT_CLIENT_ONLY (1u << XP_G_CLIENT_ONLY)
#define XP_OPT_SOCKET      (1u << XP_G_SOCKET)
#define XP_OPT_XDP_CONN    (1u << XP_G_XDP_CONN)

/*
 * A handler converts the option's value (NULL for a flag) into o.
 * Returns 0, -1 with a one-line message in err, or 1 when it printed
 * something and the program should exit 0 (--help, --version).
 */
typedef int xp_opt_handler(struct xp_opts *o, const char *arg, char *err, size_t errlen);

struct xp_option {
	const char *name;      /* long name; NULL for a short-only option (-4, -6) */
	char letter;           /* short name; 0 for a long-only option */
	const char *arg;       /* the value's name in --help; NULL for a flag */
	enum xp_opt_section section;
	unsigned groups;       /* XP_OPT_* */
	xp_opt_handler *parse;
	/* --help text: '\n' starts a continuation line, each %u takes the next of
	 * help_nums (so defaults come from their constants, not a copy). */
	const char *help;
	unsigned help_nums[2];
	const char *sample;    /* a valid value, for the table-driven unit test */
};

/* Enough for the table; the "seen" bitmask below has one bit per entry. */
#define XP_OPTIONS_MAX 64
extern const struct xp_option xp_options[];
extern const size_t xp_noptions;

/* What xp_cli_read saw, for the rules that depend on which options were given. */
struct xp_given {
	uint64_t seen;                            /* bit i: xp_options[i] given */
	const struct xp_option *last[XP_G_N];     /* the last one given of each group */
};

int xp_cli_read(int argc, char **argv, struct xp_opts *o, struct xp_given *g, char *err, size_t errlen);
/* Returns 0 or 2 (usage error, message in err); may fill in derived defaults. */
int xp_cli_check(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen);

/* The table entry with this long name, NULL if none. */
const struct xp_option *xp_option_find(const char *name);
bool xp_given_has(const struct xp_given *g, const char *name);
/* How messages name an option: "-l" if it has a short name, else "--bytes". */
const char *xp_option_label(const struct xp_option *op, char *buf, size_t len);

/* The engine names of --engine and --syn-engine. */
int parse_engine(const char *s, enum xp_engine_id *id, char *err, size_t errlen);

#endif
