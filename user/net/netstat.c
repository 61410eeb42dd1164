/* /proc/net/netstat: a line of names, then a line of values, per prefix. */
#include "net/netstat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xp_netstat_value(const char *text, const char *prefix, const char *name, uint64_t *value)
{
	size_t plen = strlen(prefix);
	const char *p = text;

	while (p && *p) {
		const char *names = p, *nl = strchr(p, '\n');
		if (!nl)
			return -ENOENT;
		const char *values = nl + 1;
		if (strncmp(names, prefix, plen) || names[plen] != ':' || strncmp(values, prefix, plen)) {
			p = values;
			continue;
		}
		/* Walk both lines field by field. */
		const char *n = names + plen + 1, *v = values + plen + 1;
		const char *nend = nl, *vend = strchr(values, '\n');
		if (!vend)
			vend = values + strlen(values);
		while (n < nend && v < vend) {
			while (*n == ' ')
				n++;
			while (*v == ' ')
				v++;
			size_t nlen = strcspn(n, " \n");
			if (nlen == strlen(name) && !strncmp(n, name, nlen)) {
				char *end;
				unsigned long long x = strtoull(v, &end, 10);
				if (end == v)
					return -ENOENT;
				*value = x;
				return 0;
			}
			n += nlen;
			v += strcspn(v, " \n");
		}
		return -ENOENT;
	}
	return -ENOENT;
}

int xp_tcpext_read(struct xp_tcpext *t)
{
	FILE *f = fopen("/proc/net/netstat", "re");
	if (!f)
		return -errno;
	char buf[16384];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (xp_netstat_value(buf, "TcpExt", "ListenOverflows", &t->listen_overflows) ||
	    xp_netstat_value(buf, "TcpExt", "ListenDrops", &t->listen_drops) ||
	    xp_netstat_value(buf, "TcpExt", "EmbryonicRsts", &t->embryonic_rsts))
		return -ENOENT;
	return 0;
}
