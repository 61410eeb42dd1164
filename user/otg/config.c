/*
 * An OTG config checked into a plan (ctl_internal.h): its ports (name,
 * location), its flows read by the flow file's reader (spec/otg_flows.h,
 * which refuses everything it does not support by its JSON path), each
 * flow's tx_rx.port naming configured ports, and one test per sending port:
 * its flows toward its receiving port's agent, run here (a port of this
 * host named without a control port) or by the port's agent. Anything this controller
 * cannot do is refused here, by path, before anything starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#include "otg/ctl_internal.h"
#include "otg/line_rate.h"
#include "spec/otg_flows.h"

/* A test whose flows all have a frame count runs this much longer than its slowest flow needs. */
#define OTG_TAIL_S 0.5
/* Continuous flows: the test runs until a stop, at most the agents' default --max-duration. */
#define OTG_CONTINUOUS_S 3600.0
/* How long the config waits for an agent to accept a connection. */
#define OTG_REACH_MS 2000

int otg_fail(struct xp_otg_err *err, int http, const char *fmt, ...)
{
	va_list ap;
	err->http = http;
	err->kind = http >= 500 ? "internal" : "validation";
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	/* One line: a path may quote a key with a control character. */
	for (char *c = err->msg; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return -1;
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static int port_index(const struct otg_plan *p, const char *name)
{
	for (unsigned i = 0; i < p->nports; i++)
		if (!strcmp(p->ports[i].name, name))
			return (int)i;
	return -1;
}

static int read_ports(struct json_object *a, struct otg_plan *p, struct xp_otg_err *err)
{
	if (!json_object_is_type(a, json_type_array))
		return otg_fail(err, 400, "ports: not an array");
	size_t n = json_object_array_length(a);
	p->ports = calloc(n ? n : 1, sizeof(*p->ports));
	if (!p->ports)
		return otg_fail(err, 500, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(a, i), *v;
		struct otg_port *pt = &p->ports[i];
		char why[200];
		if (!json_object_is_type(o, json_type_object))
			return otg_fail(err, 400, "ports[%zu]: not an object", i);
		json_object_object_foreach(o, key, val) {
			(void)val;
			if (strcmp(key, "name") && strcmp(key, "location"))
				return otg_fail(err, 400, "ports[%zu].%s: not supported (a port has a name and a location)",
						i, key);
		}
		if (!(v = get(o, "name")) || !json_object_is_type(v, json_type_string) || !json_object_get_string_len(v))
			return otg_fail(err, 400, "ports[%zu].name: missing or not a string", i);
		if (json_object_get_string_len(v) >= (int)sizeof(pt->name))
			return otg_fail(err, 400, "ports[%zu].name: longer than %zu bytes", i, sizeof(pt->name) - 1);
		snprintf(pt->name, sizeof(pt->name), "%s", json_object_get_string(v));
		for (size_t k = 0; k < i; k++)
			if (!strcmp(p->ports[k].name, pt->name))
				return otg_fail(err, 400, "ports[%zu].name: \"%s\" is ports[%zu]'s name too", i, pt->name, k);
		if (!(v = get(o, "location")) || !json_object_is_type(v, json_type_string))
			return otg_fail(err, 400, "ports[%zu].location: missing (the agent: HOST[:CONTROL_PORT][;IFACE])", i);
		snprintf(pt->location, sizeof(pt->location), "%s", json_object_get_string(v));
		if (xp_otg_loc_parse(json_object_get_string(v), &pt->loc, why, sizeof(why)))
			return otg_fail(err, 400, "ports[%zu].location: %s", i, why);
		/* A control port named: the agent there sends, even on this host (several senders here). */
		pt->local = !pt->loc.port && xp_otg_host_is_local(pt->loc.host);
		p->nports = (unsigned)i + 1;
	}
	return 0;
}

/* The port a name member names: its index, or -1 with err naming path. */
static int named_port(const struct otg_plan *p, struct json_object *v, const char *path, struct xp_otg_err *err)
{
	if (!v || !json_object_is_type(v, json_type_string))
		return otg_fail(err, 400, "%s: missing or not a string (a port's name)", path);
	int k = port_index(p, json_object_get_string(v));
	if (k < 0)
		return otg_fail(err, 400, "%s: no port %s", path, json_object_get_string(v));
	return k;
}

/* flows[i].tx_rx: a port to send on and one to receive on. */
static int flow_ports(const struct otg_plan *p, struct json_object *f, unsigned i, struct otg_flow *fl,
		      struct xp_otg_err *err)
{
	struct json_object *t = get(f, "tx_rx"), *port, *v;
	char path[96];
	if (!t)
		return otg_fail(err, 400, "flows[%u].tx_rx: missing (tx_rx.port's tx_name and rx_names)", i);
	if ((v = get(t, "choice")) && strcmp(json_object_get_string(v), "port"))
		return otg_fail(err, 400, "flows[%u].tx_rx.choice: %s is not supported (emulated devices): use port", i,
				json_object_get_string(v));
	if (get(t, "device"))
		return otg_fail(err, 400, "flows[%u].tx_rx.device: not supported (emulated devices): use port", i);
	if (!(port = get(t, "port")))
		return otg_fail(err, 400, "flows[%u].tx_rx.port: missing (tx_name and rx_names)", i);
	snprintf(path, sizeof(path), "flows[%u].tx_rx.port.tx_name", i);
	int tx = named_port(p, get(port, "tx_name"), path, err);
	if (tx < 0)
		return -1;
	struct json_object *names = get(port, "rx_names"), *one = get(port, "rx_name");
	int rx;
	if (names) {
		if (!json_object_is_type(names, json_type_array) || json_object_array_length(names) != 1)
			return otg_fail(err, 400, "flows[%u].tx_rx.port.rx_names: give exactly one receiving port (its "
					"agent counts the flow)", i);
		if (one)
			return otg_fail(err, 400, "flows[%u].tx_rx.port.rx_name: give rx_names or rx_name, not both", i);
		snprintf(path, sizeof(path), "flows[%u].tx_rx.port.rx_names[0]", i);
		rx = named_port(p, json_object_array_get_idx(names, 0), path, err);
	} else if (one) {
		snprintf(path, sizeof(path), "flows[%u].tx_rx.port.rx_name", i);
		rx = named_port(p, one, path, err);
	} else {
		return otg_fail(err, 400, "flows[%u].tx_rx.port.rx_names: missing (the port whose agent counts the flow)",
				i);
	}
	if (rx < 0)
		return -1;
	if (rx == tx)
		return otg_fail(err, 400, "%s: %s sends the flow; another port's agent must receive it", path,
				p->ports[tx].name);
	fl->tx = (unsigned)tx;
	fl->rx = (unsigned)rx;
	return 0;
}

/* A test's length: its slowest flow's frame count at its rate (the largest size for a bit rate), or continuous. */
static double group_duration(const struct xp_spec *s)
{
	double d = 0;
	for (unsigned i = 0; i < s->ntraffic; i++) {
		const struct xp_stream *t = &s->traffic[i];
		double pps = xp_rate_to_pps(&t->rate, t->frame_size ? t->frame_size : 1518);
		if (!t->frames || !(pps > 0))
			return OTG_CONTINUOUS_S;
		double need = (double)t->frames / pps;
		d = need > d ? need : d;
	}
	return ceil((d + OTG_TAIL_S) * 10) / 10;
}

/* Does an agent accept connections at host:port? 0, or -1 with why. */
static int reachable(const char *host, unsigned short port, char *why, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *res = NULL;
	char ps[8];
	snprintf(ps, sizeof(ps), "%u", port);
	int e = getaddrinfo(host, ps, &hints, &res);
	if (e) {
		snprintf(why, len, "%s: %s", host, gai_strerror(e));
		return -1;
	}
	int rc = -1, fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, len, "socket: %s", strerror(errno));
	} else if (connect(fd, res->ai_addr, res->ai_addrlen) && errno != EINPROGRESS) {
		snprintf(why, len, "no agent at %s port %u (%s)", host, port, strerror(errno));
	} else {
		struct pollfd pf = { .fd = fd, .events = POLLOUT };
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (poll(&pf, 1, OTG_REACH_MS) != 1)
			snprintf(why, len, "no agent at %s port %u (no answer in %d ms)", host, port, OTG_REACH_MS / 1000);
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr)
			snprintf(why, len, "no agent at %s port %u (%s)", host, port, strerror(soerr ? soerr : errno));
		else
			rc = 0;
	}
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return rc;
}

/* host as a numeric address (the first getaddrinfo gives). 0 or -1. */
static int numeric_host(const char *host, char *out, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	if (getaddrinfo(host, NULL, &hints, &res) || !res)
		return -1;
	int rc = getnameinfo(res->ai_addr, res->ai_addrlen, out, (socklen_t)len, NULL, 0, NI_NUMERICHOST) ? -1 : 0;
	freeaddrinfo(res);
	return rc;
}

static unsigned short agent_port(const struct otg_port *pt, const struct xp_otg_opts *o)
{
	return pt->loc.port ? pt->loc.port : o->control_port > 0 ? (unsigned short)o->control_port : XP_SPEC_CONTROL_PORT;
}

/* The flows' tests: one per sending port, toward its one receiving port. */
static int make_groups(struct otg_plan *p, const struct xp_spec *all, const struct xp_otg_opts *o,
		       struct xp_otg_err *err)
{
	p->groups = calloc(p->nports, sizeof(*p->groups));
	if (!p->groups)
		return otg_fail(err, 500, "out of memory");
	for (unsigned i = 0; i < p->nflows; i++) {
		struct otg_flow *fl = &p->flows[i];
		unsigned g;
		for (g = 0; g < p->ngroups && p->groups[g].tx != fl->tx; g++)
			;
		if (g == p->ngroups) {
			const struct otg_port *tx = &p->ports[fl->tx], *rx = &p->ports[fl->rx];
			/* The controller runs one test itself; another port on this host names its agent's control port. */
			for (unsigned k = 0; tx->local && k < p->ngroups; k++)
				if (!p->groups[k].remote)
					return otg_fail(err, 400, "flows[%u].tx_rx.port.tx_name: %s is a second sending port of "
							"this host (%s sends already): give its location an agent's control "
							"port (HOST:PORT), and that agent sends it", i, tx->name,
							p->ports[p->groups[k].tx].name);
			struct xp_spec *s = malloc(sizeof(*s));
			if (!s)
				return otg_fail(err, 500, "out of memory");
			xp_spec_default(s);
			/* An agent that sends takes an address, not a name (it resolves none): resolved here. */
			if (numeric_host(rx->loc.host, s->host, sizeof(s->host))) {
				free(s);
				return otg_fail(err, 400, "ports[%d].location: %s: no address for this name",
						port_index(p, rx->name), rx->loc.host);
			}
			s->control_port = agent_port(rx, o);
			snprintf(s->dev, sizeof(s->dev), "%s", tx->loc.iface);
			if (o->auth_key)
				snprintf(s->auth_key, sizeof(s->auth_key), "%s", o->auth_key);
			s->ntraffic = 0;
			p->groups[g] = (struct otg_group){ .tx = fl->tx, .rx = fl->rx, .remote = !tx->local, .spec = s };
			p->ngroups++;
		}
		struct otg_group *gr = &p->groups[g];
		if (gr->rx != fl->rx)
			return otg_fail(err, 400, "flows[%u].tx_rx.port.rx_names: %s's flows go to %s already: one receiving "
					"port per sending port", i, p->ports[fl->tx].name, p->ports[gr->rx].name);
		fl->group = g;
		fl->slot = gr->spec->ntraffic;
		gr->spec->traffic[gr->spec->ntraffic++] = all->traffic[i];
	}
	for (unsigned g = 0; g < p->ngroups; g++) {
		struct otg_group *gr = &p->groups[g];
		const struct otg_port *rx = &p->ports[gr->rx];
		char why[400];
		/* The agent tells one test's flows apart by their stamps, and one test from another by its stamps too. */
		for (unsigned i = 0; i < p->nflows; i++) {
			const struct otg_flow *fl = &p->flows[i];
			if (fl->rx != gr->rx || !all->traffic[i].no_stamps)
				continue;
			bool shared = gr->spec->ntraffic > 1;
			for (unsigned k = 0; k < p->ngroups; k++)
				shared |= k != g && p->groups[k].rx == gr->rx;
			if (shared)
				return otg_fail(err, 400, "flows[%u].metrics.enable: %s receives other flows too, and a flow is "
						"counted apart from them by its stamp: set metrics.enable to true", i, rx->name);
		}
		gr->spec->duration = group_duration(gr->spec);
		if (xp_spec_validate(gr->spec, why, sizeof(why)))
			return otg_fail(err, 400, "flows from %s to %s: %s", p->ports[gr->tx].name, rx->name, why);
	}
	return 0;
}

int otg_plan_make(struct json_object *cfg, const struct xp_otg_opts *o, struct otg_plan *p, struct xp_otg_err *err)
{
	struct json_object *v;
	memset(p, 0, sizeof(*p));
	if (!cfg || !json_object_is_type(cfg, json_type_object))
		return otg_fail(err, 400, "config: not a JSON object (an OTG Config)");
	json_object_object_foreach(cfg, key, val) {
		(void)val;
		if (strcmp(key, "ports") && strcmp(key, "flows"))
			return otg_fail(err, 400, "%s: not supported (a config here has ports and flows)", key);
	}
	if ((v = get(cfg, "ports")) && read_ports(v, p, err))
		goto bad;
	struct json_object *flows = get(cfg, "flows");
	if (!flows || (json_object_is_type(flows, json_type_array) && !json_object_array_length(flows)))
		return 0; /* ports only: nothing to start yet */
	if (!json_object_is_type(flows, json_type_array)) {
		otg_fail(err, 400, "flows: not an array");
		goto bad;
	}
	struct xp_spec *all = malloc(sizeof(*all));
	if (!all) {
		otg_fail(err, 500, "out of memory");
		goto bad;
	}
	xp_spec_default(all);
	char why[480];
	/* The reader's message is "--flows FILE: PATH: why"; the API's is the path on its own. */
	static const char prefix[] = "--flows config: ";
	if (xp_otg_flows_parse(cfg, "config", o->line_bps, all, why, sizeof(why))) {
		const char *m = strncmp(why, prefix, sizeof(prefix) - 1) ? why : why + sizeof(prefix) - 1;
		otg_fail(err, 400, "%s", m);
		free(all);
		goto bad;
	}
	p->nflows = all->ntraffic;
	p->flows = calloc(p->nflows, sizeof(*p->flows));
	if (!p->flows) {
		otg_fail(err, 500, "out of memory");
		free(all);
		goto bad;
	}
	for (unsigned i = 0; i < p->nflows; i++) {
		snprintf(p->flows[i].name, sizeof(p->flows[i].name), "%s", all->traffic[i].name);
		if (!p->flows[i].name[0]) {
			otg_fail(err, 400, "flows[%u].name: missing (metrics name flows by it)", i);
			free(all);
			goto bad;
		}
		if (flow_ports(p, json_object_array_get_idx(flows, i), i, &p->flows[i], err)) {
			free(all);
			goto bad;
		}
	}
	int rc = make_groups(p, all, o, err);
	if (!rc && otg_line_check(p, all, flows, o, why, sizeof(why)))
		rc = otg_fail(err, 400, "%s", why);
	free(all);
	if (rc)
		goto bad;
	/* Last (it takes time): every receiving agent answers, and every sending one. */
	for (unsigned g = 0; g < 2 * p->ngroups; g++) {
		const struct otg_group *gr = &p->groups[g / 2];
		const struct otg_port *pt = &p->ports[g % 2 ? gr->tx : gr->rx];
		char why2[320];
		if (g % 2 && !gr->remote)
			continue;
		if (reachable(pt->loc.host, agent_port(pt, o), why2, sizeof(why2))) {
			otg_fail(err, 400, "ports[%d].location: %s", port_index(p, pt->name), why2);
			goto bad;
		}
	}
	/* An interface names where a port sends: a port that only receives counts where its agent's --dev says. */
	for (unsigned i = 0; i < p->nports; i++) {
		bool sends = false;
		for (unsigned g = 0; g < p->ngroups; g++)
			sends |= p->groups[g].tx == i;
		if (p->ports[i].loc.iface[0] && !sends) {
			otg_fail(err, 400, "ports[%u].location: ';%s' names the interface a port sends on, and %s only receives "
				 "(its agent counts on its own --dev): drop it", i, p->ports[i].loc.iface, p->ports[i].name);
			goto bad;
		}
	}
	return 0;
bad:
	otg_plan_free(p);
	return -1;
}

void otg_plan_free(struct otg_plan *p)
{
	for (unsigned g = 0; g < p->ngroups; g++)
		free(p->groups[g].spec);
	free(p->groups);
	free(p->flows);
	free(p->ports);
	memset(p, 0, sizeof(*p));
}
