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
#include "util/values.h"

/* The --help section an option is listed under, in --help's order. */
enum xp_opt_section {
	XP_SEC_COMMON = 0,
	XP_SEC_CLIENT,
	XP_SEC_SOCKET,   /* socket tests, fireperf's flags */
	XP_SEC_XDP_CONN, /* the XDP connection engine */
	XP_SEC_RFC2544,  /* --rfc2544 and its settings */
	XP_SEC_SEARCH,   /* --search and its settings */
	XP_SEC_SERVER,
	XP_SEC_PROBE,    /* --probe */
	XP_SEC_OTG,      /* --otg, --config: the Open Traffic Generator API */
	XP_SEC_N,
};

/* Groups the cross-option rules ask about: "was any option of this group given?" */
enum xp_opt_group {
	XP_G_SOCKET = 0,      /* a socket-test flag: selects --engine socket */
	XP_G_XDP_CONN,        /* an XDP connection engine option: selects --engine xdp */
	XP_G_RATE,            /* paces the traffic (-b, --cps, --burst) */
	XP_G_RFC2544,         /* a setting of the RFC 2544 suite: needs --rfc2544 */
	XP_G_SEARCH,          /* a setting of the connection searches: needs --search */
	XP_G_N,
};
#define XP_OPT_SOCKET      (1u << XP_G_SOCKET)
#define XP_OPT_XDP_CONN    (1u << XP_G_XDP_CONN)
#define XP_OPT_RATE        (1u << XP_G_RATE)
#define XP_OPT_RFC2544     (1u << XP_G_RFC2544)
#define XP_OPT_SEARCH      (1u << XP_G_SEARCH)

/*
 * Where an option takes effect: the one place that says which options go
 * with which role, test and engine. validate.c refuses an option given
 * outside it (naming the option, what selected the role, test or engine, and
 * what to do instead), and tests/unit/test_cli_table.c walks every pair.
 */
#define XP_IN_CLIENT  (1u << XP_ROLE_CLIENT)
#define XP_IN_SERVER  (1u << XP_ROLE_SERVER)
#define XP_IN_BOTH    (XP_IN_CLIENT | XP_IN_SERVER)
#define XP_IN_PROBE   (1u << XP_ROLE_PROBE)
#define XP_IN_OTG     (1u << XP_ROLE_OTG)
#define XP_IN_CONFIG  (1u << XP_ROLE_CONFIG)
/* Client test kinds: a stream, -x (connection rate), -k (held connections). */
enum xp_kind { XP_KIND_STREAM = 0, XP_KIND_CONNECT, XP_KIND_HOLD, XP_KIND_N };
#define XP_K(k)       (1u << (k))
#define XP_K_STREAM   XP_K(XP_KIND_STREAM)
#define XP_K_CONN     (XP_K(XP_KIND_CONNECT) | XP_K(XP_KIND_HOLD))
#define XP_K_ANY      (XP_K_STREAM | XP_K_CONN)
/* Client engines, a bit each (the table names none: .needs). */
#define XP_E(e)       (1u << (e))
#define XP_E_ANY      ((1u << XP_ENGINE_COUNT) - 1)

/*
 * A simple option is a typed row (XP_NUM): an integer in lo..hi, named what
 * in messages, stored at off in struct xp_opts in the field's own type, which
 * the table reads from the field itself; XP_NUM_DEF gives its default too. A
 * new integer option is then its field (cli/opts.h) and its row (options.c);
 * handlers are for the rest.
 */
enum xp_opt_store { XP_ST_NONE = 0, XP_ST_USHORT, XP_ST_UINT, XP_ST_ULONG, XP_ST_DOUBLE };
struct xp_opt_num {
	enum xp_opt_store store;
	size_t off;
	unsigned long lo, hi;
	const char *what;
	bool has_def;          /* def is its default (xp_opts_default); else 0 */
	double def;
};
#define XP_NUM(field, lo_, hi_, what_)                                                                    \
	.num = { _Generic(((struct xp_opts *)0)->field, unsigned short: XP_ST_USHORT, unsigned: XP_ST_UINT, \
			  unsigned long: XP_ST_ULONG, double: XP_ST_DOUBLE),                               \
		 offsetof(struct xp_opts, field), (lo_), (hi_), (what_) }
#define XP_NUM_DEF(field, lo_, hi_, what_, def_)                                                          \
	.num = { _Generic(((struct xp_opts *)0)->field, unsigned short: XP_ST_USHORT, unsigned: XP_ST_UINT, \
			  unsigned long: XP_ST_ULONG, double: XP_ST_DOUBLE),                               \
		 offsetof(struct xp_opts, field), (lo_), (hi_), (what_), true, (def_) }

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
	xp_opt_handler *parse; /* NULL: a typed row, num says how to read it */
	struct xp_opt_num num;
	/* Where it takes effect: roles (XP_IN_*) and, on the client, the test
	 * kinds (XP_K_*) and engines. The table names no engine: an option for
	 * some engines says what it needs of them, XP_NEEDS(XP_CAP_*), and takes
	 * effect with the engines that declare that capability (engine/engine.h),
	 * refused with the others for the reason each gives. Without needs,
	 * engines is XP_E_ANY. Read them through xp_option_engines and
	 * xp_option_instead. */
	unsigned roles, kinds, engines;
	unsigned needs;
	/* What to do instead in a test of another kind, for the message (NULL: nothing to add). */
	const char *instead_kind;
	/* --help text: '\n' starts a continuation line, each %u takes the next of
	 * help_nums (so defaults come from their constants, not a copy). */
	const char *help;
	unsigned help_nums[2];
	const char *sample;    /* a valid value, for the table-driven unit test */
};

/* Enough for the table; the "seen" bitmask below has one bit per entry. */
#define XP_OPTIONS_MAX 128
extern const struct xp_option xp_options[];
extern const size_t xp_noptions;

#define XP_NEEDS(cap) ((cap) + 1u)
/* The engines op applies to, and why not with engine e as that engine says it (NULL: nothing to add). */
unsigned xp_option_engines(const struct xp_option *op);
const char *xp_option_instead(const struct xp_option *op, enum xp_engine_id e);

/* Does option op take effect for this role, test kind and engine? */
bool xp_option_applies(const struct xp_option *op, enum xp_role role, enum xp_kind kind, enum xp_engine_id engine);
/* The test kinds an engine runs (XP_K_*), as its ops declare them (engine/engine.h). */
unsigned xp_engine_kinds(enum xp_engine_id engine);

/* What xp_cli_read saw, for the rules that depend on which options were given. */
struct xp_given {
	unsigned __int128 seen;                   /* bit i: xp_options[i] given */
	const struct xp_option *last[XP_G_N];     /* the last one given of each group */
};

int xp_cli_read(int argc, char **argv, struct xp_opts *o, struct xp_given *g, char *err, size_t errlen);
/* Returns 0 or 2 (usage error, message in err); may fill in derived defaults. */
int xp_cli_check(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen);

/* Reads a typed row's value into o (handlers.c): 0, or -1 with a message in err. */
int xp_opt_num(const struct xp_option *op, struct xp_opts *o, const char *arg, char *err, size_t errlen);
/* Stores v in a typed row's field of o (handlers.c). */
void xp_opt_num_store(const struct xp_option *op, struct xp_opts *o, double v);

/* The table entry with this long name, NULL if none. */
const struct xp_option *xp_option_find(const char *name);
bool xp_given_has(const struct xp_given *g, const char *name);
/* How messages name an option: "-l" if it has a short name, else "--bytes". */
const char *xp_option_label(const struct xp_option *op, char *buf, size_t len);

/* The engine names of --engine and --syn-engine. */
int parse_engine(const char *s, enum xp_engine_id *id, char *err, size_t errlen);

#endif
