/* Control-channel authentication: key file, nonce, HMAC-SHA256 (OpenSSL). See auth.h. */
#include "proto/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

/* Domain separation: a MAC made for this protocol means nothing elsewhere. */
static const char context[] = "xdpperf control auth v1";

int xp_auth_key_load(const char *path, struct xp_auth_key *k, char *err, size_t errlen)
{
	memset(k, 0, sizeof(*k));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open the --auth-key file %s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "--auth-key %s is not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen, "--auth-key %s is accessible by group or others (mode %03o): chmod 600 %s", path,
			 (unsigned)(st.st_mode & 0777), path);
		close(fd);
		return -1;
	}
	/* One byte more than allowed, to tell "too long" from "just fits". */
	size_t n = 0;
	unsigned char buf[XP_AUTH_KEY_MAX + 1];
	for (;;) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "cannot read the --auth-key file %s: %s", path, strerror(errno));
			close(fd);
			OPENSSL_cleanse(buf, sizeof(buf));
			return -1;
		}
		if (r == 0 || (n += (size_t)r) == sizeof(buf))
			break;
	}
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	if (n < XP_AUTH_KEY_MIN || n > XP_AUTH_KEY_MAX) {
		snprintf(err, errlen, "--auth-key %s holds %zu%s bytes; it needs %d to %d (e.g. head -c 32 /dev/urandom | base64 > %s)",
			 path, n, n > XP_AUTH_KEY_MAX ? " or more" : "", XP_AUTH_KEY_MIN, XP_AUTH_KEY_MAX, path);
		OPENSSL_cleanse(buf, sizeof(buf));
		return -1;
	}
	memcpy(k->key, buf, n);
	k->len = n;
	k->set = true;
	OPENSSL_cleanse(buf, sizeof(buf));
	return 0;
}

void xp_auth_key_clear(struct xp_auth_key *k)
{
	OPENSSL_cleanse(k, sizeof(*k));
}

static void to_hex(const unsigned char *b, size_t n, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = digits[b[i] >> 4];
		hex[2 * i + 1] = digits[b[i] & 15];
	}
	hex[2 * n] = '\0';
}

/* Exactly 2 * n hex digits into n bytes. 0 or -1. */
static int from_hex(const char *hex, unsigned char *b, size_t n)
{
	long len = 0;
	if (!hex || strlen(hex) != 2 * n)
		return -1;
	unsigned char *p = OPENSSL_hexstr2buf(hex, &len);
	if (!p || (size_t)len != n) {
		OPENSSL_free(p);
		return -1;
	}
	memcpy(b, p, n);
	OPENSSL_free(p);
	return 0;
}

int xp_auth_nonce(char hex[XP_AUTH_HEX_LEN + 1])
{
	unsigned char n[XP_AUTH_NONCE_LEN];
	if (RAND_bytes(n, sizeof(n)) != 1)
		return -1;
	to_hex(n, sizeof(n), hex);
	return 0;
}

/* HMAC-SHA256(key, context || nonce || line). 0 or -1. */
static int mac_raw(const struct xp_auth_key *k, const unsigned char nonce[XP_AUTH_NONCE_LEN], const char *line,
		   size_t len, unsigned char out[XP_AUTH_MAC_LEN])
{
	if (!k->set)
		return -1;
	EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *h = m ? EVP_MAC_CTX_new(m) : NULL;
	OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0), OSSL_PARAM_END };
	size_t outlen = 0;
	int ok = h && EVP_MAC_init(h, k->key, k->len, params) &&
		 EVP_MAC_update(h, (const unsigned char *)context, sizeof(context)) &&
		 EVP_MAC_update(h, nonce, XP_AUTH_NONCE_LEN) && EVP_MAC_update(h, (const unsigned char *)line, len) &&
		 EVP_MAC_final(h, out, &outlen, XP_AUTH_MAC_LEN) && outlen == XP_AUTH_MAC_LEN;
	EVP_MAC_CTX_free(h);
	EVP_MAC_free(m);
	return ok ? 0 : -1;
}

int xp_auth_mac(const struct xp_auth_key *k, const char *nonce_hex, const char *line, size_t len,
		char hex[XP_AUTH_HEX_LEN + 1])
{
	unsigned char nonce[XP_AUTH_NONCE_LEN], mac[XP_AUTH_MAC_LEN];
	if (from_hex(nonce_hex, nonce, sizeof(nonce)) || mac_raw(k, nonce, line, len, mac))
		return -1;
	to_hex(mac, sizeof(mac), hex);
	return 0;
}

bool xp_auth_verify(const struct xp_auth_key *k, const char *nonce_hex, const char *line, size_t len,
		    const char *mac_hex)
{
	unsigned char nonce[XP_AUTH_NONCE_LEN], want[XP_AUTH_MAC_LEN], got[XP_AUTH_MAC_LEN];
	if (from_hex(nonce_hex, nonce, sizeof(nonce)) || from_hex(mac_hex, got, sizeof(got)) ||
	    mac_raw(k, nonce, line, len, want))
		return false;
	return CRYPTO_memcmp(want, got, sizeof(want)) == 0;
}
