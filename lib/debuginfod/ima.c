/* SPDX-License-Identifier: MIT */
/*
 * IMA signature checks (see ima.h), through OpenSSL's libcrypto as elfutils
 * does them (debuginfod-client.c, ENABLE_IMA_VERIFICATION: keys by the
 * last 4 bytes of their SKID, EVP_PKEY_verify of the file's digest).  The
 * parser of the header is separate from the crypto, and fuzzed
 * (fuzz/fuzz_imasig.c).
 *
 * Where dsostore is stricter than elfutils (same verdict for every
 * signature evmctl makes): a header with a non-hex character, an odd
 * number of digits or a size field that is not the signature's length is
 * malformed, not decoded into garbage; the digest is of the whole file we
 * received, and an X-DEBUGINFOD-SIZE that is not its size refuses it
 * (elfutils digests X-DEBUGINFOD-SIZE bytes, and refuses a file without
 * that header, which a signature cannot need).
 */
#define _GNU_SOURCE
#include "ima.h"
#include "debuginfod.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dlfcn.h>
#include <pthread.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/*
 * libcrypto is loaded when a server is first "ima:enforcing", not at
 * program start, as libcurl is (transfer.c): linked, its 3400 relocations
 * cost every start of the CLI ~10 M cycles in the dynamic loader (ld.so's
 * LD_DEBUG=statistics: 0.6 M without it), and almost no run verifies a
 * signature.  The names below are libcrypto's (OpenSSL 3's soname),
 * routed through pointers of the headers' own types filled by dlsym().
 */
#define CRYPTO_FNS(X)                                                                              \
	X(ASN1_STRING_get0_data) X(ASN1_STRING_length) X(BIO_free) X(BIO_new_mem_buf)             \
	X(EVP_Digest) X(EVP_DigestFinal_ex) X(EVP_DigestInit_ex) X(EVP_DigestUpdate)               \
	X(EVP_MD_CTX_free) X(EVP_MD_CTX_new) X(EVP_PKEY_CTX_free) X(EVP_PKEY_CTX_new)              \
	X(EVP_PKEY_CTX_set_signature_md) X(EVP_PKEY_free) X(EVP_PKEY_verify)                       \
	X(EVP_PKEY_verify_init) X(EVP_get_digestbyname) X(EVP_sha1) X(PEM_read_bio_PUBKEY)         \
	X(PEM_read_bio_X509) X(X509_PUBKEY_free) X(X509_PUBKEY_get0_param) X(X509_PUBKEY_set)      \
	X(X509_free) X(X509_get0_pubkey) X(X509_get0_subject_key_id) X(X509_get_pubkey) X(d2i_X509)

#define CRYPTO_PTR(n) __typeof__(&n) n;
static struct {
	CRYPTO_FNS(CRYPTO_PTR)
} cr;
#undef CRYPTO_PTR
static bool cr_loaded;

static void load_crypto(void)
{
	void *h = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	/* (POSIX's way to a function pointer from dlsym(); h stays open
	 * when a name is missing: harmless.) */
#define CRYPTO_SYM(n)                                     \
	if (!(*(void **)&cr.n = dlsym(h, #n)))            \
		return;
	CRYPTO_FNS(CRYPTO_SYM)
#undef CRYPTO_SYM
	cr_loaded = true;
}

static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;

static bool crypto_load(void)
{
	pthread_once(&crypto_once, load_crypto);
	return cr_loaded;
}

#define ASN1_STRING_get0_data cr.ASN1_STRING_get0_data
#define ASN1_STRING_length cr.ASN1_STRING_length
#define BIO_free cr.BIO_free
#define BIO_new_mem_buf cr.BIO_new_mem_buf
#define EVP_Digest cr.EVP_Digest
#define EVP_DigestFinal_ex cr.EVP_DigestFinal_ex
#define EVP_DigestInit_ex cr.EVP_DigestInit_ex
#define EVP_DigestUpdate cr.EVP_DigestUpdate
#define EVP_MD_CTX_free cr.EVP_MD_CTX_free
#define EVP_MD_CTX_new cr.EVP_MD_CTX_new
#define EVP_PKEY_CTX_free cr.EVP_PKEY_CTX_free
#define EVP_PKEY_CTX_new cr.EVP_PKEY_CTX_new
#define EVP_PKEY_CTX_set_signature_md cr.EVP_PKEY_CTX_set_signature_md
#define EVP_PKEY_free cr.EVP_PKEY_free
#define EVP_PKEY_verify cr.EVP_PKEY_verify
#define EVP_PKEY_verify_init cr.EVP_PKEY_verify_init
#define EVP_get_digestbyname cr.EVP_get_digestbyname
#define EVP_sha1 cr.EVP_sha1
#define PEM_read_bio_PUBKEY cr.PEM_read_bio_PUBKEY
#define PEM_read_bio_X509 cr.PEM_read_bio_X509
#define X509_PUBKEY_free cr.X509_PUBKEY_free
#define X509_PUBKEY_get0_param cr.X509_PUBKEY_get0_param
#define X509_PUBKEY_set cr.X509_PUBKEY_set
#define X509_free cr.X509_free
#define X509_get0_pubkey cr.X509_get0_pubkey
#define X509_get0_subject_key_id cr.X509_get0_subject_key_id
#define X509_get_pubkey cr.X509_get_pubkey
#define d2i_X509 cr.d2i_X509

#define EVM_IMA_XATTR_DIGSIG 0x03
#define DIGSIG_VERSION_2 2
#define HASH_ALGO_SHA1 2
#define HASH_ALGO_SHA256 4
/* A certificate file bigger than this is not one. */
#define CERT_FILE_MAX (256 << 10)

/* ------------------------------------------------------------- parsing */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static const char *trim(const char *s, size_t *len)
{
	while (*len && (*s == ' ' || *s == '\t')) {
		s++;
		(*len)--;
	}
	while (*len && (s[*len - 1] == ' ' || s[*len - 1] == '\t' || s[*len - 1] == '\r'))
		(*len)--;
	return s;
}

int ds__ima_sig_parse(const char *hex, size_t len, struct ds_ima_sig *out, const char **why)
{
	uint8_t bin[DS_IMA_HEX_MAX / 2];
	size_t n, sig_size;

	hex = trim(hex, &len);
	if (!len) {
		*why = "an empty signature";
		return -EBADMSG;
	}
	if (len > DS_IMA_HEX_MAX) {
		*why = "a signature longer than any key makes";
		return -EBADMSG;
	}
	if (len % 2) {
		*why = "an odd number of hex digits";
		return -EBADMSG;
	}
	n = len / 2;
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			*why = "a signature that is not hex";
			return -EBADMSG;
		}
		bin[i] = (uint8_t)(hi << 4 | lo);
	}
	/* type, then struct signature_v2_hdr (packed): version, hash_algo,
	 * keyid (big-endian), sig_size (big-endian), sig[] */
	if (n < 1 + 8 + 1) {
		*why = "a signature shorter than its header";
		return -EBADMSG;
	}
	if (bin[0] != EVM_IMA_XATTR_DIGSIG) {
		*why = "not an IMA digital signature (type 0x03)";
		return -EBADMSG;
	}
	if (bin[1] != DIGSIG_VERSION_2) {
		*why = "not a version 2 signature";
		return -EBADMSG;
	}
	out->hash_algo = bin[2];
	switch (bin[2]) {
	case HASH_ALGO_SHA1:
		out->md = "sha1";
		break;
	case HASH_ALGO_SHA256:
		out->md = "sha256";
		break;
	default:
		*why = "a hash algorithm other than sha1 or sha256";
		return -EBADMSG;
	}
	out->keyid = (uint32_t)bin[3] << 24 | (uint32_t)bin[4] << 16 | (uint32_t)bin[5] << 8 | bin[6];
	sig_size = (size_t)bin[7] << 8 | bin[8];
	if (sig_size != n - 9) {
		*why = "a signature size field that is not its length";
		return -EBADMSG;
	}
	if (sig_size > DS_IMA_SIG_MAX) {
		*why = "a signature longer than any key makes";
		return -EBADMSG;
	}
	out->len = sig_size;
	memcpy(out->sig, bin + 9, sig_size);
	return 0;
}

const char *ds__xhdr_value(const char *hdrs, const char *name, size_t *len)
{
	size_t nlen = strlen(name);

	for (const char *l = hdrs; l && *l;) {
		const char *eol = strchr(l, '\n');
		size_t llen = eol ? (size_t)(eol - l) : strlen(l);

		if (llen > nlen && !strncasecmp(l, name, nlen) && l[nlen] == ':') {
			*len = llen - nlen - 1;
			return trim(l + nlen + 1, len);
		}
		l = eol ? eol + 1 : NULL;
	}
	return NULL;
}

/* ---------------------------------------------------------------- keys */

struct ds_ima_key {
	uint32_t keyid;
	EVP_PKEY *key;
};

struct ds_ima_keys {
	size_t n;
	struct ds_ima_key k[];
};

/* The key ID evmctl writes: the last 4 bytes of the SHA-1 of the public
 * key's bits (the subjectPublicKey of its SubjectPublicKeyInfo), which is
 * what a certificate's SKID holds when made by "hash" (openssl's default). */
static int keyid_of_pkey(EVP_PKEY *pkey, uint32_t *out)
{
	X509_PUBKEY *pk = NULL;
	const unsigned char *bits = NULL;
	unsigned char sha1[SHA_DIGEST_LENGTH];
	int len = 0, ok;

	ok = X509_PUBKEY_set(&pk, pkey) && X509_PUBKEY_get0_param(NULL, &bits, &len, NULL, pk) &&
	     len > 0 && EVP_Digest(bits, (size_t)len, sha1, NULL, EVP_sha1(), NULL);
	X509_PUBKEY_free(pk);
	if (!ok)
		return -EINVAL;
	*out = (uint32_t)sha1[16] << 24 | (uint32_t)sha1[17] << 16 | (uint32_t)sha1[18] << 8 |
	       sha1[19];
	return 0;
}

static int keyid_of_cert(X509 *x, uint32_t *out)
{
	const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(x);

	if (skid && ASN1_STRING_length(skid) >= 4) {
		const unsigned char *d = ASN1_STRING_get0_data(skid) + ASN1_STRING_length(skid) - 4;

		*out = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
		return 0;
	}
	return keyid_of_pkey(X509_get0_pubkey(x), out);
}

/* The key of one file's bytes (DER certificate, PEM certificate, PEM
 * public key), with its ID; NULL: none of those. */
static EVP_PKEY *key_of(const unsigned char *buf, size_t len, uint32_t *keyid, const char **what)
{
	const unsigned char *p = buf;
	EVP_PKEY *key = NULL;
	X509 *x = d2i_X509(NULL, &p, (long)len);
	BIO *bio;

	if (!x && (bio = BIO_new_mem_buf(buf, (int)len))) {
		x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
		if (!x) {
			BIO_free(bio);
			if ((bio = BIO_new_mem_buf(buf, (int)len)))
				key = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
			*what = "public key";
		}
		BIO_free(bio);
	}
	if (x) {
		*what = "certificate";
		key = X509_get_pubkey(x);
		if (key && keyid_of_cert(x, keyid)) {
			EVP_PKEY_free(key);
			key = NULL;
		}
		X509_free(x);
		return key;
	}
	if (key && keyid_of_pkey(key, keyid)) {
		EVP_PKEY_free(key);
		key = NULL;
	}
	return key;
}

static int add_key(struct ds_ima_keys **k, EVP_PKEY *key, uint32_t keyid)
{
	size_t n = *k ? (*k)->n : 0;
	struct ds_ima_keys *nk = realloc(*k, sizeof(**k) + (n + 1) * sizeof((*k)->k[0]));

	if (!nk)
		return -ENOMEM;
	nk->n = n + 1;
	nk->k[n].key = key;
	nk->k[n].keyid = keyid;
	*k = nk;
	return 0;
}

static void load_dir(struct ds_ima_keys **k, const char *dir, const struct ds_log *log)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (dfd < 0)
		return;
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		const char *what = "file";
		unsigned char *buf;
		uint32_t keyid = 0;
		EVP_PKEY *key;
		size_t len = 0;

		if (fnmatch("*.@(der|pem|crt|cer|cert)", de->d_name, FNM_EXTMATCH))
			continue;
		buf = (unsigned char *)ds__cache_read_small(dirfd(d), de->d_name, CERT_FILE_MAX, &len);
		if (!buf)
			continue; /* not a regular file (as elfutils: DT_REG only) */
		key = key_of(buf, len, &keyid, &what);
		free(buf);
		if (!key) {
			ds__logf(log, DS_LOG_WARN, "DEBUGINFOD_IMA_CERT_PATH: %s/%s: no certificate or public key; skipped",
				 dir, de->d_name);
			continue;
		}
		if (add_key(k, key, keyid)) {
			EVP_PKEY_free(key);
			break;
		}
		ds__logf(log, DS_LOG_INFO, "IMA: loaded %s %s/%s, keyid %08x", what, dir, de->d_name,
			 keyid);
	}
	closedir(d);
}

struct ds_ima_keys *ds__ima_keys_load(const char *path, const struct ds_log *log)
{
	struct ds_ima_keys *k = NULL;

	if (path && *path && !crypto_load()) {
		ds__logf(log, DS_LOG_ERROR, "cannot load libcrypto.so.3: no IMA signature can be verified");
		return NULL;
	}
	while (path && *path) {
		size_t len = strcspn(path, ":");
		char *dir = len ? strndup(path, len) : NULL;

		if (dir)
			load_dir(&k, dir, log);
		free(dir);
		path += len + (path[len] == ':');
	}
	return k;
}

void ds__ima_keys_free(struct ds_ima_keys *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		EVP_PKEY_free(k->k[i].key);
	free(k);
}

/* ------------------------------------------------------------ verifying */

static int digest_fd(int fd, uint64_t size, const EVP_MD *md, unsigned char *out,
		     unsigned int *outlen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char buf[65536];
	uint64_t off = 0;
	int err = -EIO;

	if (!ctx || !EVP_DigestInit_ex(ctx, md, NULL))
		goto out;
	while (off < size) {
		size_t want = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		ssize_t n = pread(fd, buf, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n))
			goto out;
		off += (uint64_t)n;
	}
	if (EVP_DigestFinal_ex(ctx, out, outlen))
		err = 0;
out:
	EVP_MD_CTX_free(ctx);
	return err;
}

int ds__ima_verify(const struct ds_ima_keys *k, const char *hdrs, int fd, uint64_t size, char *why,
		   size_t len)
{
	unsigned char dig[EVP_MAX_MD_SIZE];
	unsigned int diglen = 0;
	struct ds_ima_sig sig;
	const struct ds_ima_key *key = NULL;
	const char *v, *bad = NULL;
	const EVP_MD *md;
	EVP_PKEY_CTX *ctx;
	size_t vlen;
	int ok;

	v = ds__xhdr_value(hdrs, "X-DEBUGINFOD-IMASIGNATURE", &vlen);
	if (!v) {
		snprintf(why, len, "no X-DEBUGINFOD-IMASIGNATURE");
		return -EKEYREJECTED;
	}
	if (ds__ima_sig_parse(v, vlen, &sig, &bad)) {
		snprintf(why, len, "X-DEBUGINFOD-IMASIGNATURE is %s", bad);
		return -EKEYREJECTED;
	}
	if ((v = ds__xhdr_value(hdrs, "X-DEBUGINFOD-SIZE", &vlen))) {
		char num[24];
		char *end;

		snprintf(num, sizeof(num), "%.*s", (int)(vlen < 23 ? vlen : 23), v);
		if (strtoull(num, &end, 10) != size || *end || end == num) {
			snprintf(why, len, "X-DEBUGINFOD-SIZE is not the size of the file (%llu)",
				 (unsigned long long)size);
			return -EKEYREJECTED;
		}
	}
	for (size_t i = 0; k && i < k->n; i++)
		if (k->k[i].keyid == sig.keyid) {
			key = &k->k[i];
			break;
		}
	if (!key) {
		snprintf(why, len, "signed by key %08x, not one of DEBUGINFOD_IMA_CERT_PATH's",
			 sig.keyid);
		return -EKEYREJECTED;
	}
	md = EVP_get_digestbyname(sig.md);
	if (!md || digest_fd(fd, size, md, dig, &diglen)) {
		snprintf(why, len, "the file's %s digest could not be computed", sig.md);
		return -EKEYREJECTED;
	}
	ctx = EVP_PKEY_CTX_new(key->key, NULL);
	ok = ctx && EVP_PKEY_verify_init(ctx) > 0 && EVP_PKEY_CTX_set_signature_md(ctx, md) > 0 &&
	     EVP_PKEY_verify(ctx, sig.sig, sig.len, dig, diglen) == 1;
	EVP_PKEY_CTX_free(ctx);
	if (!ok) {
		snprintf(why, len, "the %s signature by key %08x does not verify", sig.md, sig.keyid);
		return -EKEYREJECTED;
	}
	return 0;
}
