/* --help, made from the option table so it lists exactly the options there are. */
#include <stdio.h>
#include <string.h>

#include "cli/options.h"

/* Help text starts in this column; continuation lines are indented to it. */
#define HELP_COL 28

static const struct {
	const char *title; /* may run over several lines */
	const char *notes; /* printed after the section's options, or NULL */
} sections[XP_SEC_N] = {
	[XP_SEC_COMMON] = { "Common:" },
	[XP_SEC_CLIENT] = { "Client:" },
	[XP_SEC_SOCKET] = { "Socket tests (fireperf's flags; they select --engine socket):" },
	[XP_SEC_XDP_CONN] = { "XDP connection engine (--engine xdp, with -x or -k): raw SYNs (XDP live frames\n"
			      "or AF_XDP), handshakes completed by XDP programs on both ends, no per-connection\n"
			      "state:" },
	[XP_SEC_RFC2544] = { "RFC 2544 suite (--rfc2544): throughput, latency, frame loss rate, back-to-back:" },
	[XP_SEC_SEARCH] = { "Connection searches (--search, the XDP connection engine; RFC 3511 5.2-5.4,\n"
			    "RFC 9411 7.2-7.3): series of trials, each from a drained device table:" },
	[XP_SEC_SERVER] = { "Server:",
			    "  -P N, --engine socket     also listen on -p's ports at start (like fireperf -s)\n" },
	[XP_SEC_PROBE] = { "Host probe (sends nothing; takes only --dev, -J and -d):" },
	[XP_SEC_OTG] = { "Open Traffic Generator API (docs/otg.md): a port's location is an agent,\n"
			 "HOST[:CONTROL_PORT][;IFACE], where xdpperf -s runs; --control-port,\n"
			 "--auth-key and -d apply to the agents:" },
};

/* "  -c, --client ADDR", "      --cport PORT[:PORT]" or "  -4". */
static void option_names(const struct xp_option *op, char *buf, size_t len)
{
	const char *arg = op->arg ? op->arg : "";
	const char *sp = op->arg ? " " : "";

	if (op->letter && op->name)
		snprintf(buf, len, "  -%c, --%s%s%s", op->letter, op->name, sp, arg);
	else if (op->letter)
		snprintf(buf, len, "  -%c%s%s", op->letter, sp, arg);
	else
		snprintf(buf, len, "      --%s%s%s", op->name, sp, arg);
}

/* The help text with each %u replaced by the next of help_nums. */
static void expand_help(const struct xp_option *op, char *buf, size_t len)
{
	size_t n = 0, num = 0;

	for (const char *p = op->help; *p && n + 1 < len; p++) {
		if (p[0] == '%' && p[1] == 'u' && num < sizeof(op->help_nums) / sizeof(op->help_nums[0])) {
			n += (size_t)snprintf(buf + n, len - n, "%u", op->help_nums[num++]);
			p++;
		} else {
			buf[n++] = *p;
		}
		if (n >= len)
			n = len - 1;
	}
	buf[n] = '\0';
}

static void print_option(FILE *f, const struct xp_option *op)
{
	char names[64], help[512];

	option_names(op, names, sizeof(names));
	expand_help(op, help, sizeof(help));
	/* Names too wide for the column get the help on the next line. */
	if (strlen(names) >= HELP_COL - 1)
		fprintf(f, "%s\n%*s", names, HELP_COL, "");
	else
		fprintf(f, "%-*s", HELP_COL, names);
	for (const char *p = help; *p; p++) {
		fputc(*p, f);
		if (*p == '\n')
			fprintf(f, "%*s", HELP_COL, "");
	}
	fputc('\n', f);
}

void xp_usage(FILE *f)
{
	fputs("Usage: xdpperf -s [options]            run a server\n"
	      "       xdpperf -c ADDR [options]       run a test against the server at ADDR\n"
	      "       xdpperf --probe [--dev IF] [-J] what this host can do\n"
	      "       xdpperf --otg [ADDR]:PORT       serve the OTG REST API\n"
	      "       xdpperf --config FILE.json [-J] run an OTG config's flows once\n", f);
	for (int s = 0; s < XP_SEC_N; s++) {
		fprintf(f, "\n%s\n", sections[s].title);
		for (size_t i = 0; i < xp_noptions; i++) {
			if (xp_options[i].section == (enum xp_opt_section)s)
				print_option(f, &xp_options[i]);
		}
		if (sections[s].notes)
			fputs(sections[s].notes, f);
	}
	fprintf(f, "\nExit status: %d success, %d runtime error (the test could not run or ended early),\n"
		   "%d usage error, %d more lost than --max-loss allows, %d the offered load fell short\n"
		   "of the target (with --require-rate).\n",
		XP_EXIT_OK, XP_EXIT_RUNTIME, XP_EXIT_USAGE, XP_EXIT_LOSS, XP_EXIT_SHORT);
}
