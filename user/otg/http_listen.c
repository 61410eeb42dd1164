/*
 * The OTG API's listener as the options give it: its address, and the
 * rule that only loopback may go without TLS and a token (otg/http.h).
 * Also the reading of the token and PEM files, each checked before
 * anything listens.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "otg/http.h"
#include "otg/http_files.h"
#include "util/values.h"

int xp_otg_listen_parse(const char *s, struct xp_otg_listen *l, char *err, size_t errlen)
{
	char host[64] = "";
	const char *p = s;

	memset(l, 0, sizeof(*l));
	if (*s == '[') {
		const char *e = strchr(s, ']');
		if (!e || e[1] != ':' || (size_t)(e - s - 1) >= sizeof(host))
			return xp_cli_fail(err, errlen, "--otg '%s': write an IPv6 address as [ADDR]:PORT", s);
		memcpy(host, s + 1, (size_t)(e - s - 1));
		p = e + 2;
	} else if (strchr(s, ':')) {
		const char *c = strrchr(s, ':');
		if (strchr(s, ':') != c)
			return xp_cli_fail(err, errlen, "--otg '%s': write an IPv6 address as [ADDR]:PORT", s);
		if ((size_t)(c - s) >= sizeof(host))
			return xp_cli_fail(err, errlen, "--otg '%s': not an address", s);
		memcpy(host, s, (size_t)(c - s));
		p = c + 1;
	}
	if (!*host)
		snprintf(host, sizeof(host), "127.0.0.1"); /* localhost unless told otherwise */
	if (xp_addr_parse(host, &l->addr))
		return xp_cli_fail(err, errlen, "--otg '%s': '%s' is not an IPv4 or IPv6 address", s, host);
	unsigned long v;
	char e2[128];
	if (parse_uint(p, 1, 65535, &v, "--otg port", e2, sizeof(e2)))
		return xp_cli_fail(err, errlen, "%s (--otg [ADDR]:PORT)", e2);
	l->port = (unsigned short)v;
	return 0;
}

static bool is_loopback(const struct xp_addr *a)
{
	if (a->family == AF_INET)
		return (ntohl(a->v4.s_addr) >> 24) == 127;
	return a->family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&a->v6);
}

int xp_otg_listen_check(const struct xp_otg_listen *l, char *err, size_t errlen)
{
	if (!l->cert_file != !l->key_file)
		return xp_cli_fail(err, errlen, "--otg-cert and --otg-key go together: the certificate and its private key");
	if (is_loopback(&l->addr))
		return 0;
	char as[INET6_ADDRSTRLEN];
	xp_addr_str(&l->addr, as, sizeof(as));
	if (!l->cert_file || !l->token_file)
		return xp_cli_fail(err, errlen, "--otg on %s (not loopback) needs TLS and a token: add --otg-cert FILE "
				   "--otg-key FILE --otg-token FILE, or listen on 127.0.0.1", as);
	return 0;
}

char *xp_otg_file_read(const char *path, const char *opt, bool secret, size_t max, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		xp_cli_fail(err, errlen, "%s: cannot open %s: %s", opt, path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		xp_cli_fail(err, errlen, "%s %s is not a regular file", opt, path);
		close(fd);
		return NULL;
	}
	/* A secret others can read is no secret: as --auth-key. */
	if (secret && (st.st_mode & (S_IRWXG | S_IRWXO))) {
		xp_cli_fail(err, errlen, "%s %s is accessible by group or others (mode %03o): chmod 600 %s", opt, path,
			    (unsigned)(st.st_mode & 0777), path);
		close(fd);
		return NULL;
	}
	if ((size_t)st.st_size > max) {
		xp_cli_fail(err, errlen, "%s %s is %lld bytes: at most %zu", opt, path, (long long)st.st_size, max);
		close(fd);
		return NULL;
	}
	char *buf = calloc(1, max + 1);
	size_t n = 0;
	while (buf && n < max) {
		ssize_t r = read(fd, buf + n, max - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			xp_cli_fail(err, errlen, "%s: cannot read %s: %s", opt, path, strerror(errno));
			OPENSSL_cleanse(buf, max);
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!buf) {
		xp_cli_fail(err, errlen, "%s: out of memory", opt);
		return NULL;
	}
	while (n > 0 && strchr("\r\n \t", buf[n - 1]))
		buf[--n] = '\0';
	if (!n || strlen(buf) != n) {
		xp_cli_fail(err, errlen, "%s %s is %s", opt, path, n ? "not text (a NUL byte)" : "empty");
		free(buf);
		return NULL;
	}
	return buf;
}

void xp_otg_file_free(char *buf)
{
	if (buf) {
		OPENSSL_cleanse(buf, strlen(buf));
		free(buf);
	}
}

int xp_otg_tls_check(const char *cert_pem, const char *key_pem, char *err, size_t errlen)
{
	BIO *cb = BIO_new_mem_buf(cert_pem, -1), *kb = BIO_new_mem_buf(key_pem, -1);
	X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
	EVP_PKEY *k = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
	int r = 0;
	if (!x)
		r = xp_cli_fail(err, errlen, "--otg-cert: not a PEM certificate (-----BEGIN CERTIFICATE-----)");
	else if (!k)
		r = xp_cli_fail(err, errlen, "--otg-key: not a PEM private key without a passphrase");
	else if (X509_check_private_key(x, k) != 1)
		r = xp_cli_fail(err, errlen, "--otg-key is not the private key of --otg-cert's certificate");
	X509_free(x);
	EVP_PKEY_free(k);
	BIO_free(cb);
	BIO_free(kb);
	return r;
}
