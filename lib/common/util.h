/* SPDX-License-Identifier: MIT */
/*
 * The bottom layer's header (lib/common/): a growing string, error text,
 * logging, array growth, bounded reads, hashing and the clock, a caller's
 * options struct read by size, perf's config files.  It uses nothing of
 * the library but the public header's types, so every layer may use it.
 */
#ifndef DS_UTIL_H
#define DS_UTIL_H

#include "dsostore.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Where a context's messages go: the caller's callback and threshold. */
struct ds_log {
	ds_log_fn fn;
	void *user;
	enum ds_log_level level; /* messages above this are dropped */
};

/* Format and hand one message to lg (NULL or no callback: dropped). */
void ds__logf(const struct ds_log *lg, enum ds_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A growing string for messages ("where we looked"); never fails loudly:
 * on allocation failure it keeps what it had. */
struct ds_strbuf {
	char *buf;
	size_t len, cap;
};
void ds__strbuf_addf(struct ds_strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ds__strbuf_release(struct ds_strbuf *sb);

/* Room for element n of an array v of *cap elements of elem bytes:
 * doubled (from 16) when full.  The array, or NULL (v is kept) on failure. */
void *ds__grow(void *v, size_t *cap, size_t n, size_t elem);
/* Makes the whole pages of [p, p + len) ready to write with one call
 * (MADV_POPULATE_WRITE) rather than a fault each as they are first
 * written, which a paravirtualized machine makes dear; a hint only. */
void ds__populate(void *p, size_t len);

/* A file named by something we do not control (a core's NT_FILE, a
 * process's maps or root, perf.data, a server, a build-ID lookup), opened
 * for reading only once it is known to be a regular file: opened with
 * O_NONBLOCK (and O_NOCTTY), so that a FIFO or a device does not block in
 * open(), then fstat()ed, and O_NONBLOCK cleared before any library gets
 * the descriptor.  The fd (O_CLOEXEC); -errno of open/fstat; -EISDIR a
 * directory; -ENOEXEC anything else that is not a regular file (FIFO,
 * socket, device). */
int ds__open_regular(const char *path);

/* All len bytes of buf written to fd (EINTR retried): 0, or -errno (-EIO
 * for a write that took nothing). */
int ds__write_all(int fd, const void *buf, size_t len);

/* The whole of a file with no size to go by (/proc files), read to its
 * end into a buffer of hint bytes that doubles, NUL-terminated (*len
 * without it; *out malloc()ed), opened by ds__open_regular().  0; -EFBIG
 * for max bytes or more; -ENOMEM; -errno of open/read. */
int ds__read_whole(const char *path, size_t hint, size_t max, char **out, size_t *len);
/* Bytes [off, off + len) of fd, fewer where it ends or a read fails
 * (EINTR retried): how many. */
size_t ds__pread_upto(int fd, void *buf, size_t len, uint64_t off);

/* The checksum of a saved index's blobs: XXH3-64 of the bytes, its low 32
 * bits.  (zlib's CRC-32 ran at ~1.4 GB/s and was half of the instructions
 * of a one-address lookup from a saved index; XXH3 is ten times faster.) */
uint32_t ds__blob_sum(const void *data, size_t size);
/* The same sum of bytes given in pieces: new (NULL: no memory), add each
 * in order, end (frees it) gives what ds__blob_sum() of them joined
 * would. */
struct ds__sum;
struct ds__sum *ds__sum_new(void);
void ds__sum_add(struct ds__sum *s, const void *data, size_t size);
uint32_t ds__sum_end(struct ds__sum *s);

/* A blob's sum that a reader can check piece by piece: sums[k] is
 * ds__blob_sum() of the k-th DS__SUM_CHUNK bytes (the last chunk may be
 * shorter), and the blob's sum is ds__blob_sum() of that array.  A saved
 * index keeps the array beside each blob, so one lookup checks (and
 * faults in) only the chunks it reads.  sums: NULL, or room for
 * ds__chunks_of(size).  No bytes: 0. */
#define DS__SUM_CHUNK_SHIFT 16
#define DS__SUM_CHUNK ((size_t)1 << DS__SUM_CHUNK_SHIFT)
static inline uint64_t ds__chunks_of(uint64_t size)
{
	return (size + DS__SUM_CHUNK - 1) >> DS__SUM_CHUNK_SHIFT;
}
uint32_t ds__chunked_sum(const void *data, size_t size, uint32_t *sums);

/* How many bytes of s[0..len) from the start ds_term_escape() would
 * leave as they are before the first it would not (len: all of them). */
size_t ds__term_plain(const char *s, size_t len);
/* A 64-bit finalizer (murmur3's): good low bits from any input. */
uint64_t ds__mix64(uint64_t h);
/* FNV-1a of n bytes, mixed. */
uint64_t ds__hash_bytes(const void *p, size_t n);
/* A build ID's hash (its own first bytes, mixed; FNV for short ones). */
uint64_t ds__hash_bid(const struct ds_build_id *bid);
/* CLOCK_MONOTONIC in ns. */
int64_t ds__now_ns(void);

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Read a field of a caller's options struct only if the caller's struct
 * is large enough to have it (libbpf's OPTS_GET). */
#define DS_OPT(opts, field, dflt)                                                       \
	(((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field)) \
		 ? (opts)->field                                                        \
		 : (dflt))

/* An optional error buffer of a public call (err, errlen), made usable:
 * the caller's, else the one byte of dummy; emptied. */
static inline void ds__errbuf_init(char **err, size_t *errlen, char *dummy)
{
	if (!*err || !*errlen) {
		*err = dummy;
		*errlen = 1;
	}
	(*err)[0] = 0;
}

/* ---- perf's config files (perfconfig.c) */

/* The value of "section.name" in perfconfig text (the last one): 1, 0 not
 * set, -ENAMETOOLONG longer than outlen - 1 (cut). */
int ds__perfconfig_get(const char *text, size_t len, const char *name, char *out, size_t outlen);
/* The same from the files perf reads, in its order. */
int ds__perfconfig(const char *name, char *out, size_t outlen);

#endif
