/*
 * Optional authentication of the control channel (--auth-key FILE on both
 * ends), a challenge-response in the manner of iperf3's: the server sends a
 * fresh random nonce on each connection, the client answers with
 * HMAC-SHA256(key, context || nonce || request line), the server compares in
 * constant time. A recorded answer is worthless on another connection (new
 * nonce), and the MAC covers the request's exact bytes, so none of its fields
 * can be changed. It authenticates; it does not encrypt (the counters are not
 * secret). Built on OpenSSL's libcrypto: no crypto of our own.
 *
 * On the wire (one JSON object per line, client first):
 *   {"op":"challenge"}              -> {"op":"challenge","nonce":"<64 hex>"}
 *   {"op":"auth","mac":"<64 hex>"}     (no answer)
 *   {"op":"start",...}              the line the MAC covers, byte for byte
 */
#ifndef XP_AUTH_H
#define XP_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#define XP_AUTH_NONCE_LEN 32
#define XP_AUTH_MAC_LEN 32
#define XP_AUTH_HEX_LEN 64     /* either, in hex */
#define XP_AUTH_KEY_MIN 16     /* bytes of secret, at least */
#define XP_AUTH_KEY_MAX 4096

struct xp_auth_key {
	bool set;
	size_t len;
	unsigned char key[XP_AUTH_KEY_MAX];
};

/*
 * Read the shared secret from path: the file's bytes, trailing newlines and
 * blanks removed. Refused (-1, one-line err) when the file is not a regular
 * file, is readable or writable by group or others, or holds fewer than
 * XP_AUTH_KEY_MIN or more than XP_AUTH_KEY_MAX bytes.
 */
int xp_auth_key_load(const char *path, struct xp_auth_key *k, char *err, size_t errlen);
/* Wipe the key from memory. */
void xp_auth_key_clear(struct xp_auth_key *k);

/* A fresh nonce from the system's CSPRNG, as hex (XP_AUTH_HEX_LEN + 1 bytes). 0 or -1. */
int xp_auth_nonce(char hex[XP_AUTH_HEX_LEN + 1]);

/* The client's answer to nonce_hex for the request line (without its newline), as hex. 0 or -1. */
int xp_auth_mac(const struct xp_auth_key *k, const char *nonce_hex, const char *line, size_t len,
		char hex[XP_AUTH_HEX_LEN + 1]);

/* Whether mac_hex is the right answer; the comparison takes the same time whatever the bytes. */
bool xp_auth_verify(const struct xp_auth_key *k, const char *nonce_hex, const char *line, size_t len,
		    const char *mac_hex);

struct xp_ctrl;
/*
 * Send the request line on c; with a key (k->set), first ask for the
 * challenge and send the MAC over the line exactly as sent (auth_ctrl.c).
 * 0 or -errno; -EPROTO with the reason in err.
 */
int xp_auth_send_line(struct xp_ctrl *c, const struct xp_auth_key *k, const char *line, char *err, size_t errlen);

#endif
