/* The OTG API's token and PEM files (otg/http_listen.c), for otg/http.c. */
#ifndef XP_OTG_HTTP_FILES_H
#define XP_OTG_HTTP_FILES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The text of a file given to option opt (named in messages), trailing
 * blanks cut: a regular file of at most max bytes, not empty, no NUL byte;
 * a secret one (the token, the key) readable by its owner only, as
 * --auth-key. NULL with a one-line err.
 */
char *xp_otg_file_read(const char *path, const char *opt, bool secret, size_t max, char *err, size_t errlen);
/* Wipes and frees what xp_otg_file_read returned (NULL is fine). */
void xp_otg_file_free(char *buf);
/* The PEM certificate and key load and belong together (OpenSSL): 0, or -1 with a one-line err. */
int xp_otg_tls_check(const char *cert_pem, const char *key_pem, char *err, size_t errlen);

#endif
