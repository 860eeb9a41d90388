/* SPDX-License-Identifier: MIT */
/*
 * IMA signatures of downloads (ima.c), as the elfutils client (>= 0.192,
 * when built with IMA verification) checks them: a server sends
 * X-DEBUGINFOD-IMASIGNATURE, the hex of an IMA digital signature v2 of the
 * file (what `evmctl ima_sign` writes: type 0x03, version 2, hash algo,
 * 4-byte key ID, signature size, signature over the file's digest), and a
 * server under "ima:enforcing" in DEBUGINFOD_URLS has its files refused
 * unless that signature verifies with a certificate of
 * DEBUGINFOD_IMA_CERT_PATH.  Also the x-debuginfod-* header block a
 * download carries, which the cache keeps beside the file (cache.c,
 * "hdr-" files, elfutils 0.193's layout).
 */
#ifndef DS_DEBUGINFOD_IMA_H
#define DS_DEBUGINFOD_IMA_H

#include <stddef.h>
#include <stdint.h>

struct ds_log;

/* A server's policy, as the "ima:" words before it in DEBUGINFOD_URLS set
 * it (elfutils' default: ignore). */
enum ds_ima_policy { DS_IMA_IGNORE = 0, DS_IMA_ENFORCING = 1 };

/* The signature bytes of one RSA-8192 signature: more than any real one. */
#define DS_IMA_SIG_MAX 1024
/* Hex digits of a whole header value: type byte, v2 header, signature. */
#define DS_IMA_HEX_MAX (2 * (1 + 9 + DS_IMA_SIG_MAX))

struct ds_ima_sig {
	uint8_t hash_algo; /* the kernel's enum hash_algo (HASH_ALGO_SHA256: 4) */
	const char *md; /* its OpenSSL name: "sha1" or "sha256" */
	uint32_t keyid; /* the last 4 bytes of the key's SHA-1 (its SKID) */
	size_t len;
	uint8_t sig[DS_IMA_SIG_MAX];
};

/* The header value (len characters, hex, blanks around it allowed) as an
 * IMA signature v2: 0, or -EBADMSG with *why.  Only sha1 and sha256, as
 * elfutils 0.192. */
int ds__ima_sig_parse(const char *hex, size_t len, struct ds_ima_sig *out, const char **why);

/* The value of header name (case-insensitive) in a block of "Name: value\n"
 * lines, blanks around it trimmed; NULL when absent. */
const char *ds__xhdr_value(const char *hdrs, const char *name, size_t *len);

/* The public keys of DEBUGINFOD_IMA_CERT_PATH (colon-separated
 * directories; in each, the regular files named *.der, *.pem, *.crt,
 * *.cer, *.cert: a DER or PEM certificate, or a PEM public key).  NULL
 * for none (then every signature is refused).  Each load is logged at
 * info, a file that is none of those at warn. */
struct ds_ima_keys;
struct ds_ima_keys *ds__ima_keys_load(const char *path, const struct ds_log *log);
void ds__ima_keys_free(struct ds_ima_keys *k);

/* Whether the file fd (size bytes) carries a valid signature in hdrs (the
 * download's x-debuginfod-* headers): 0, or -EKEYREJECTED with why (len
 * bytes) saying what is wrong (no signature, malformed, unknown key, a
 * size that is not the file's, does not verify). */
int ds__ima_verify(const struct ds_ima_keys *k, const char *hdrs, int fd, uint64_t size, char *why,
		   size_t len);

#endif
