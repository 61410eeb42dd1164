/*
 * The option table itself (user/cli/options.c): --help lists every table
 * option and names no other, names and samples are consistent, every option
 * parses by each of its names, and every option in every context (role,
 * engine, test kind) is taken or refused with a message naming that context.
 * The invocations and their usage errors are in test_cli.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "engine/engine.h"
#include "tests/unit/cli_parse.h"

/* --help, as xp_usage writes it, in a string the caller frees. */
static char *help_text(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	xp_usage(f);
	fclose(f);
	return text;
}

/* Every table option has its own line in --help, named as getopt knows it. */
static void test_help_lists_every_option(void **state)
{
	char *help = help_text();
	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];
		char line[64];
		if (op->letter && op->name)
			snprintf(line, sizeof(line), "\n  -%c, --%s%s", op->letter, op->name, op->arg ? " " : "");
		else if (op->letter)
			snprintf(line, sizeof(line), "\n  -%c ", op->letter);
		else
			snprintf(line, sizeof(line), "\n      --%s%s", op->name, op->arg ? " " : "");
		if (!strstr(help, line))
			fail_msg("--help has no line for option %s", line + 1);
		if (op->arg && !strstr(help, op->arg))
			fail_msg("--help lacks the value name %s", op->arg);
	}
	assert_null(strchr(help, '%')); /* every %u got its number */
	free(help);
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* And the other way: every -X or --name that --help mentions is in the table. */
static void test_help_mentions_only_table_options(void **state)
{
	char *help = help_text();
	for (const char *p = help; *p; p++) {
		if (*p != '-' || (p > help && !strchr(" (/\n", p[-1])))
			continue;
		if (p[1] == '-') {
			char name[32];
			size_t n = 0;
			while (is_name_char(p[2 + n]) && n + 1 < sizeof(name))
				name[n] = p[2 + n], n++;
			name[n] = '\0';
			if (!xp_option_find(name))
				fail_msg("--help mentions --%s, which is no option", name);
			p += 1 + n;
		} else if (p[1] && p[1] != ' ') {
			bool found = false;
			for (size_t i = 0; i < xp_noptions; i++)
				found |= xp_options[i].letter == p[1];
			if (!found)
				fail_msg("--help mentions -%c, which is no option", p[1]);
		}
	}
	free(help);
}

/* Long names and letters are unique; options with a value have a sample, flags none. */
static void test_table_consistent(void **state)
{
	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];
		assert_true(op->name || op->letter);
		if (!op->parse && (op->num.store == XP_ST_NONE || !op->arg || !op->num.what))
			fail_msg("option %s: no handler, and no typed row with a value and its name", op->name);
		assert_non_null(op->help);
		if (!op->arg != !op->sample)
			fail_msg("option %s: a value name needs a sample value and a flag none", op->name);
		for (size_t j = i + 1; j < xp_noptions; j++) {
			if (op->name && xp_options[j].name)
				assert_string_not_equal(op->name, xp_options[j].name);
			if (op->letter)
				assert_int_not_equal(op->letter, xp_options[j].letter);
		}
	}
}

/*
 * The table names no engine: an option either takes effect with every engine
 * or needs a capability (engine/engine.h), and which engines have it and why
 * the others have not is theirs to say. So a new engine changes no row. Each
 * engine gives reasons only for what it lacks, and a capability some option
 * needs is one the engines do not all share alike (else the row would not need it).
 */
static void test_rows_name_no_engine(void **state)
{
	bool needed[XP_CAP_N] = { false };
	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];
		if (op->needs) {
			assert_true(op->needs >= 1 && op->needs <= XP_CAP_N);
			needed[op->needs - 1] = true;
		} else if (op->engines != XP_E_ANY) {
			fail_msg("option %s names its engines (%#x): say what it needs of them, .needs = XP_NEEDS(XP_CAP_*)",
				 op->name ? op->name : "", op->engines);
		}
	}
	for (int c = 0; c < XP_CAP_N; c++) {
		int have = 0, engines = 0;
		for (int e = 0; e < XP_ENGINE_COUNT; e++) {
			const struct xp_engine_ops *ops = xp_engine_ops_of((enum xp_engine_id)e);
			if (e == XP_ENGINE_AUTO || !ops)
				continue;
			engines++;
			assert_non_null(ops->title); /* the messages name it */
			bool has = ops->caps & XP_CAP_BIT(c);
			have += has;
			if (has && ops->lacks[c])
				fail_msg("engine %s has capability %d and says why it lacks it: '%s'", ops->name, c,
					 ops->lacks[c]);
		}
		if (!needed[c])
			fail_msg("capability %d: no option needs it", c);
		if (have == 0 || have == engines)
			fail_msg("capability %d: %s engine has it, so no option needs it", c, have ? "every" : "no");
	}
}

/* One option (by long name, or by letter if long is false) with its sample. */
static int read_one(const struct xp_option *op, bool long_form, struct xp_opts *o, char *err, size_t errlen)
{
	char name[64];
	char *argv[] = { "xdpperf", name, (char *)op->sample, NULL };
	if (long_form)
		snprintf(name, sizeof(name), "--%s", op->name);
	else
		snprintf(name, sizeof(name), "-%c", op->letter);
	struct xp_given g;
	FILE *saved = stdout;
	stdout = fopen("/dev/null", "w"); /* --help and --version print */
	int r = xp_cli_read(op->sample ? 3 : 2, argv, o, &g, err, errlen);
	fclose(stdout);
	stdout = saved;
	return r;
}

/* The field a typed row stores into, as a number. */
static double num_field(const struct xp_option *op, const struct xp_opts *o)
{
	const char *f = (const char *)o + op->num.off;
	switch (op->num.store) {
	case XP_ST_USHORT:
		return *(const unsigned short *)f;
	case XP_ST_UINT:
		return *(const unsigned *)f;
	case XP_ST_ULONG:
		return (double)*(const unsigned long *)f;
	case XP_ST_DOUBLE:
		return *(const double *)f;
	default:
		fail_msg("option %s: no store", op->name);
	}
	return -1;
}

/* Typed rows: the default is in the field and in range; both ends of the range are taken and stored in the
 * field; one past either end is refused with a message that names what the value is. */
static void test_typed_rows(void **state)
{
	int rows = 0;
	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];
		if (op->parse)
			continue;
		rows++;
		static struct xp_opts d;
		xp_opts_default(&d);
		if (op->num.has_def &&
		    (num_field(op, &d) != op->num.def || op->num.def < op->num.lo || op->num.def > op->num.hi))
			fail_msg("--%s: default %g not stored, or out of %lu..%lu", op->name, op->num.def, op->num.lo,
				 op->num.hi);
		unsigned long ends[2] = { op->num.lo, op->num.hi };
		for (int e = 0; e < 2; e++) {
			static struct xp_opts o;
			char arg[32], err[256] = "";
			xp_opts_default(&o);
			snprintf(arg, sizeof(arg), "%lu", ends[e]);
			if (xp_opt_num(op, &o, arg, err, sizeof(err)))
				fail_msg("--%s %s refused: %s", op->name, arg, err);
			assert_true(num_field(op, &o) == (double)ends[e]);
			unsigned long past = e ? op->num.hi + 1 : op->num.lo - 1;
			if (!e && !op->num.lo)
				continue; /* nothing below 0 to try: a sign is refused by the parser itself */
			snprintf(arg, sizeof(arg), "%lu", past);
			if (!xp_opt_num(op, &o, arg, err, sizeof(err)))
				fail_msg("--%s %s taken, out of %lu..%lu", op->name, arg, op->num.lo, op->num.hi);
			if (!strstr(err, op->num.what))
				fail_msg("--%s %s: the message should name '%s': '%s'", op->name, arg, op->num.what, err);
		}
	}
	printf("%d typed rows\n", rows);
	assert_true(rows > 0);
}

/* Each table option, by each of its names, takes its sample value and changes the options. */
static void test_every_option_parses(void **state)
{
	static struct xp_opts defaults;
	xp_opts_default(&defaults);
	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];
		bool prints = op->parse == xp_option_find("help")->parse || op->parse == xp_option_find("version")->parse;
		for (int form = 0; form < 2; form++) {
			static struct xp_opts o;
			char err[256] = "";
			if (form ? !op->name : !op->letter)
				continue;
			int r = read_one(op, form, &o, err, sizeof(err));
			if (r != (prints ? 1 : 0))
				fail_msg("option %s%s %s: result %d, message '%s'", form ? "--" : "-",
					 form ? op->name : (char[]){ op->letter, 0 }, op->sample ? op->sample : "", r, err);
			if (!prints && !memcmp(&o, &defaults, sizeof(o)))
				fail_msg("option %s %s changed nothing", op->name ? op->name : "", op->sample ? op->sample : "");
		}
	}
}

/* Every engine name the --engine message offers is accepted. */
static void test_engine_names(void **state)
{
	enum xp_engine_id k;
	char err[256];
	assert_int_equal(parse_engine("warp", &k, err, sizeof(err)), -1);
	char *list = strstr(err, "available: ");
	assert_non_null(list);
	list += strlen("available: ");
	list[strcspn(list, ")")] = '\0';
	int n = 0;
	for (char *t = strtok(list, ", "); t; t = strtok(NULL, ", "), n++)
		assert_int_equal(parse_engine(t, &k, NULL, 0), 0);
	assert_int_equal(n, XP_ENGINE_COUNT); /* every engine of spec/engine_names.c */
}


/* ---- every option in every context: the table's roles, kinds and engines ---- */

struct ctx {
	enum xp_role role;
	enum xp_engine_id engine; /* client: --engine, or AUTO for none given */
	enum xp_kind kind;        /* client */
};

/* The engine that runs: without --engine, -x/-k and fireperf's flags pick the
 * socket engine, the XDP connection engine's options that engine. */
static enum xp_engine_id ctx_engine(const struct ctx *c, const struct xp_option *op)
{
	if (c->role != XP_ROLE_CLIENT || c->engine != XP_ENGINE_AUTO)
		return c->engine;
	if (op->groups & XP_OPT_XDP_CONN)
		return XP_ENGINE_XDP;
	if ((op->groups & XP_OPT_SOCKET) || c->kind != XP_KIND_STREAM)
		return XP_ENGINE_SOCKET;
	return XP_ENGINE_AUTO;
}

static void ctx_name(const struct ctx *c, char *buf, size_t len)
{
	static const char *const kinds[] = { "", " -x", " -k" };
	if (c->role == XP_ROLE_SERVER)
		snprintf(buf, len, "-s");
	else if (c->role == XP_ROLE_PROBE)
		snprintf(buf, len, "--probe");
	else if (c->role == XP_ROLE_OTG)
		snprintf(buf, len, "--otg");
	else if (c->role == XP_ROLE_CONFIG)
		snprintf(buf, len, "--config");
	else if (c->engine == XP_ENGINE_AUTO)
		snprintf(buf, len, "-c%s", kinds[c->kind]);
	else
		snprintf(buf, len, "-c --engine %s%s", xp_engine_name(c->engine), kinds[c->kind]);
}

/*
 * The command line for option op in context c: the base of the context, what
 * op needs besides (so that where the table says it applies, nothing else
 * stands in the way), then op with its sample value.
 */
static void ctx_line(const struct ctx *c, const struct xp_option *op, char *buf, size_t len)
{
	static const char *const kinds[] = { "", " -x", " -k" };
	bool is6 = op->letter == '6';
	const char *name = op->name;
	char opt[80], extra[64] = "";

	if (c->role == XP_ROLE_SERVER) {
		snprintf(buf, len, "xdpperf -s");
	} else if (c->role == XP_ROLE_PROBE) {
		snprintf(buf, len, "xdpperf --probe");
	} else if (c->role == XP_ROLE_OTG) {
		snprintf(buf, len, "xdpperf --otg 127.0.0.1:8443");
	} else if (c->role == XP_ROLE_CONFIG) {
		snprintf(buf, len, "xdpperf --config hello.json");
	} else {
		snprintf(buf, len, "xdpperf -c %s", is6 ? "2001:2:0:2::2" : "198.19.1.2");
		if (c->engine != XP_ENGINE_AUTO)
			snprintf(buf + strlen(buf), len - strlen(buf), " --engine %s", xp_engine_name(c->engine));
		snprintf(buf + strlen(buf), len - strlen(buf), "%s", kinds[c->kind]);
	}
	enum xp_engine_id e = ctx_engine(c, op);
	/* Only where op applies: elsewhere the message must be about op alone. */
	if (!xp_option_applies(op, c->role, c->kind, e))
		;
	else if (op->groups & XP_OPT_RFC2544) /* the suite's settings go with --rfc2544 */
		snprintf(extra, sizeof(extra), " --rfc2544");
	else if (op->groups & XP_OPT_SEARCH) /* the searches' settings go with --search */
		snprintf(extra, sizeof(extra), " --search");
	else if (name && (!strcmp(name, "burst") || !strcmp(name, "require-rate")))
		snprintf(extra, sizeof(extra), " %s", e == XP_ENGINE_XDP ? "--cps 1000" : "-b 1Mpps");
	else if (name && !strcmp(name, "parallel") && c->role == XP_ROLE_CLIENT && e == XP_ENGINE_XDP &&
		 c->kind == XP_KIND_CONNECT)
		snprintf(extra, sizeof(extra), " --peer kernel");
	else if (name && !strcmp(name, "line-rate") && c->role == XP_ROLE_CLIENT) /* the suite's top (or a flow file's %) */
		snprintf(extra, sizeof(extra), " --rfc2544");
	else if (name && !strcmp(name, "flow-top")) /* the rows of a per-flow table: a test with a flow */
		snprintf(extra, sizeof(extra), " --dscp 46");
	else if (name && !strcmp(name, "port") && c->role == XP_ROLE_SERVER)
		snprintf(extra, sizeof(extra), " -P 4");
	else if (name && !strcmp(name, "otg-cert")) /* the certificate and its key go together */
		snprintf(extra, sizeof(extra), " --otg-key k.pem");
	else if (name && !strcmp(name, "otg-key"))
		snprintf(extra, sizeof(extra), " --otg-cert c.pem");
	if (name)
		snprintf(opt, sizeof(opt), " --%s%s%s", name, op->sample ? " " : "", op->sample ? op->sample : "");
	else
		snprintf(opt, sizeof(opt), " -%c", op->letter);
	snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", extra, opt);
}

/* What the message must name besides the option: the context's engine, test kind or role. */
static bool names_context(const char *err, const struct ctx *c)
{
	char eng[32];
	/* An option of the OTG front ends, elsewhere: the role it goes with and the one given. */
	if (strstr(err, "(the OTG API), not ") && c->role != XP_ROLE_OTG && c->role != XP_ROLE_CONFIG)
		return strstr(err, c->role == XP_ROLE_SERVER ? "not -s" : c->role == XP_ROLE_PROBE ? "not --probe" : "not -c");
	if (c->role == XP_ROLE_SERVER)
		return strstr(err, "client option") != NULL;
	if (c->role == XP_ROLE_PROBE)
		return strstr(err, "--probe takes only") != NULL;
	if (c->role == XP_ROLE_OTG)
		return strstr(err, "--otg takes only") != NULL;
	if (c->role == XP_ROLE_CONFIG)
		return strstr(err, "--config takes only") != NULL;
	if (strstr(err, "server option"))
		return true;
	snprintf(eng, sizeof(eng), "--engine %s", xp_engine_name(c->engine));
	if (c->engine == XP_ENGINE_AUTO ? strstr(err, "default engine") || strstr(err, "selected by")
					: strstr(err, eng) != NULL)
		return true;
	return c->kind == XP_KIND_STREAM ? strstr(err, "add -x") || strstr(err, "add -k") || strstr(err, "stream")
					 : strstr(err, c->kind == XP_KIND_CONNECT ? "-x" : "-k") != NULL;
}

static void check_pair(const struct ctx *c, const struct xp_option *op, int *refused, int *taken)
{
	char line[256], err[512], label[32], cn[48];
	static struct xp_opts o;

	ctx_line(c, op, line, sizeof(line));
	ctx_name(c, cn, sizeof(cn));
	int r = parse(line, &o, err, sizeof(err));
	enum xp_engine_id e = ctx_engine(c, op);
	/* An engine that does not run this kind refuses first (test_engine_kinds). */
	bool applies = xp_option_applies(op, c->role, c->kind, e) &&
		       (c->role != XP_ROLE_CLIENT || (xp_engine_kinds(e) & XP_K(c->kind)));
	xp_option_label(op, label, sizeof(label));
	if (applies) {
		if (r != 0)
			fail_msg("'%s': %s applies to %s by the table, but parsing gave %d: %s", line, label, cn, r, err);
		(*taken)++;
		return;
	}
	if (r != 2)
		fail_msg("'%s': %s does not apply to %s by the table, but parsing gave %d", line, label, cn, r);
	if (!strstr(err, label) || strchr(err, '\n') || !names_context(err, c))
		fail_msg("'%s': the message should name %s and what it conflicts with (%s): '%s'", line, label, cn, err);
	(*refused)++;
}

/*
 * Every option of the table in every context (server; client with each
 * engine and each test kind that engine runs): where the table says it does
 * not apply, a usage error that names the option and the conflict; where it
 * does, the line parses.
 */
static void test_every_option_in_every_context(void **state)
{
	int refused = 0, taken = 0;

	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];
		const char *n = op->name ? op->name : "";
		/* The role and the context itself (-s, -c, --engine, -x, -k), and the printers. */
		if (!strcmp(n, "server") || !strcmp(n, "client") || !strcmp(n, "probe") || !strcmp(n, "engine") ||
		    !strcmp(n, "otg") || !strcmp(n, "config") ||
		    !strcmp(n, "help") || !strcmp(n, "version"))
			continue;
		check_pair(&(struct ctx){ .role = XP_ROLE_SERVER }, op, &refused, &taken);
		check_pair(&(struct ctx){ .role = XP_ROLE_PROBE }, op, &refused, &taken);
		check_pair(&(struct ctx){ .role = XP_ROLE_OTG }, op, &refused, &taken);
		check_pair(&(struct ctx){ .role = XP_ROLE_CONFIG }, op, &refused, &taken);
		for (int e = 0; e < XP_ENGINE_COUNT; e++) {
			for (int k = 0; k < XP_KIND_N; k++) {
				struct ctx c = { XP_ROLE_CLIENT, (enum xp_engine_id)e, (enum xp_kind)k };
				/* Not a test that engine runs (test_engine_kinds); without --engine, -x/-k pick one. */
				if (e != XP_ENGINE_AUTO && !(xp_engine_kinds(c.engine) & XP_K(c.kind)))
					continue;
				if ((!strcmp(n, "close") || !strcmp(n, "keepalive")) && k != XP_KIND_STREAM)
					continue; /* -x/-k in a -x/-k context: the kind itself */
				check_pair(&c, op, &refused, &taken);
			}
		}
	}
	print_message("%d pairs refused, %d taken\n", refused, taken);
	assert_true(refused > 100 && taken > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_lists_every_option),
		cmocka_unit_test(test_help_mentions_only_table_options),
		cmocka_unit_test(test_table_consistent),
		cmocka_unit_test(test_rows_name_no_engine),
		cmocka_unit_test(test_every_option_parses),
		cmocka_unit_test(test_typed_rows),
		cmocka_unit_test(test_engine_names),
		cmocka_unit_test(test_every_option_in_every_context),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
