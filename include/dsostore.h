/* SPDX-License-Identifier: MIT */
/*
 * dsostore: debug information of any binary, keyed by its GNU build ID.
 *
 * A ds_context holds the configuration (debug directories, perf's build-id
 * cache, miss TTL, logging).  A ds_store is one machine's set of DSOs (host,
 * guest, container): the lock shard.  A ds_dso is refcounted and owns its
 * debuginfo: when the last reference is put, the DSO and everything it
 * opened are freed.
 *
 * Conventions: functions returning int give 0 (or a positive count) on
 * success and a negative errno on failure; ds_strerror() turns it into text.
 * Constructors return NULL and set errno.  _free() accepts NULL.  Nothing
 * prints unless a log callback is set.
 */
#ifndef DSOSTORE_H
#define DSOSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DS_API
#define DS_API __attribute__((visibility("default")))
#endif

#define DS_VERSION_MAJOR 0
#define DS_VERSION_MINOR 1
#define DS_VERSION_PATCH 0

/* Options structs start with their own size; DS_OPTS() zero-fills one and
 * sets it, so that callers built against an older header keep working. */
#define DS_OPTS(TYPE, NAME, ...)                                        \
	struct TYPE NAME = ({                                           \
		__builtin_memset(&NAME, 0, sizeof(struct TYPE));        \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
	})

/* ---------------------------------------------------------------- errors */

/* Text for a (negative or positive) errno value as this library uses it:
 * -ENODATA "no GNU build ID", -ENOEXEC "not a valid ELF file", -ENOENT
 * "not found", -EBADMSG "contents do not match".  Never NULL, static. */
DS_API const char *ds_strerror(int err);

enum ds_log_level {
	DS_LOG_ERROR = 0,
	DS_LOG_WARN = 1,
	DS_LOG_INFO = 2,
	DS_LOG_DEBUG = 3,
};

/* Receives one complete message, without trailing newline. */
typedef void (*ds_log_fn)(void *user, enum ds_log_level level, const char *msg);

/* ---------------------------------------------------------- terminal text */

/* Names this library hands out (comms, DSO paths, symbols, JIT names,
 * source text, messages quoting them) come from inputs and may hold bytes
 * a terminal acts on.  Print them as text through these: C0 controls but
 * the tab (a newline too) and DEL become "\xNN"; the C1 controls
 * U+0080-U+009F and the bidi controls U+202A-U+202E, U+2066-U+2069 (valid
 * UTF-8) "\uNNNN"; each byte that is not part of valid UTF-8 "\xNN";
 * everything else (other UTF-8 included) is itself.  Not for JSON, XML or
 * other formats with escapes of their own.
 *
 * ds_term_escape(): s[0..len) escaped into out (at most size - 1 bytes and
 * a NUL, as snprintf()); the length of the whole escaped text, which is
 * len exactly when s needs no escaping.  ds_term_write(): the same to f;
 * 0 or -EIO.  ds_term_puts(): a NUL-terminated s (NULL: nothing). */
DS_API size_t ds_term_escape(char *out, size_t size, const char *s, size_t len);
DS_API int ds_term_write(FILE *f, const char *s, size_t len);
DS_API int ds_term_puts(FILE *f, const char *s);

/* -------------------------------------------------------------- build IDs */

#define DS_BUILD_ID_MAX 64 /* bytes: 128 hex digits */

struct ds_build_id {
	uint8_t size; /* 0 means "none" */
	uint8_t data[DS_BUILD_ID_MAX];
};

/* Parse hex (case-insensitive, even length, 2..128 digits, nothing else).
 * -EINVAL on anything else; *out is untouched then. */
DS_API int ds_build_id_parse(const char *hex, struct ds_build_id *out);

/* Lowercase hex into buf, NUL-terminated.  Returns the length written
 * (2 * size) or -ENOSPC if len < 2 * size + 1, -EINVAL if size is 0. */
DS_API int ds_build_id_format(const struct ds_build_id *bid, char *buf, size_t len);

/* True when both are set and equal. */
DS_API bool ds_build_id_equal(const struct ds_build_id *a, const struct ds_build_id *b);

/* Read the GNU build-ID note (NT_GNU_BUILD_ID, owner "GNU") of an ELF file:
 * program headers first, then section headers; 32 and 64 bit, either byte
 * order.  -ENODATA: valid ELF without one; -ENOEXEC: not ELF or malformed
 * (truncated); -EISDIR; other errno from open/read.  The memory form does
 * not modify or keep buf. */
DS_API int ds_build_id_read_file(const char *path, struct ds_build_id *out);
DS_API int ds_build_id_read_fd(int fd, struct ds_build_id *out);
DS_API int ds_build_id_read_mem(const void *buf, size_t len, struct ds_build_id *out);

/* Where the section called name is in the ELF file fd: its bytes as they
 * are in the file (compressed ones compressed), [*offset, *offset + *size).
 * -ENOENT: no such section, or one without file bytes (SHT_NOBITS);
 * -ENOEXEC: not ELF, or section headers past the file's end. */
DS_API int ds_elf_section_range(int fd, const char *name, uint64_t *offset, uint64_t *size);

/* --------------------------------------------------------------- context */

struct ds_context;
struct ds_dirindex;

struct ds_context_opts {
	size_t sz;
	/* NULL-terminated list of debug directories (default: /usr/lib/debug). */
	const char *const *debug_dirs;
	/* Root of perf's build-id cache.  NULL: $PERF_BUILDID_DIR, else
	 * $HOME/.debug.  "" disables it. */
	const char *perf_buildid_dir;
	/* How long a miss is remembered before a DSO is searched again.
	 * 0: default (600 s, like the elfutils client's cache_miss_s);
	 * negative: misses are not remembered. */
	int miss_ttl_s;
	ds_log_fn log_fn;
	void *log_user;
	enum ds_log_level log_level; /* messages above this are dropped */

	/* debuginfod.  Each NULL or 0 means: as the elfutils client reads it
	 * from the environment (DEBUGINFOD_URLS, _CACHE_PATH, _TIMEOUT,
	 * _MAXTIME, _MAXSIZE, _RETRY_LIMIT, _HEADERS_FILE), else its default. */
	const char *urls; /* space-separated servers, http(s):// or file://; "" none */
	const char *cache_path;
	int timeout_s; /* a server must send 100 KiB within this (90); < 0 none */
	int connect_timeout_s; /* connecting to a server (10; elfutils: none) */
	int maxtime_s; /* a whole download (none); < 0 none */
	int64_t maxsize; /* bytes of one file (none); < 0 none */
	int retry_limit; /* retries of a transient failure per server (2); < 0 none */
	unsigned int max_transfers; /* in flight at once (64) */
	unsigned int max_per_server; /* connections to one server (32) */
	const char *headers_file;

	/* Saved symbol indexes (README, "Saved indexes"): > 0 on, < 0 off
	 * (none read, none written), 0 as $DSOSTORE_SYMINDEX says (off if
	 * "0", else on). */
	int symindex;
	/* Where those of local debuginfo go.  NULL: $DSOSTORE_SYMINDEX_PATH,
	 * else $XDG_CACHE_HOME/dsostore/index, else ~/.cache/dsostore/index.
	 * Those of debuginfo fetched from debuginfod go in its cache entry. */
	const char *symindex_path;

	/* The kernel's files, for another machine's kernel or a test's: the
	 * directory holding its proc/kallsyms, proc/modules,
	 * sys/kernel/notes and sys/module/ (NULL: $DSOSTORE_KERNEL_ROOT,
	 * else "/"), and a kallsyms file read instead of that root's (as
	 * perf's --kallsyms).  Either one: nothing of it is cached. */
	const char *kernel_root;
	const char *kallsyms;

	/* Cancellation: when *cancel becomes non-zero (a host's signal
	 * handler sets it: a volatile sig_atomic_t-sized int, nothing else
	 * to do there), what the context does stops at its next check and
	 * fails with -ECANCELED, its temporary files removed: a fetch or
	 * batch (transfers dropped, nothing of them cached), a saved index
	 * being written.  The library installs no signal handler.  NULL:
	 * never. */
	const volatile int *cancel;

	/* Bytes of one source file fetched (DS_ARTIFACT_SOURCE): a download
	 * is stopped, and nothing cached, as soon as its Content-Length or
	 * what arrived passes it (-EFBIG).  0: $DSOSTORE_SOURCE_MAXSIZE,
	 * else 64 MiB; < 0: none (maxsize still applies). */
	int64_t source_maxsize;

	/* A directory index (ds_dirindex_new(), below) searched for a build
	 * ID's debuginfo or executable after the .build-id directories and
	 * before perf's cache: ds_find() and every store of the context.
	 * Borrowed: it must outlive the context.  NULL: none. */
	struct ds_dirindex *dirindex;

	/* IMA verification (elfutils >= 0.192's): urls (and DEBUGINFOD_URLS)
	 * may hold "ima:enforcing" and "ima:ignore" words, each setting the
	 * policy of the servers after it (ignore at first); other "ima:"
	 * words are skipped with a warning.  A file from an enforcing server
	 * is refused (-EKEYREJECTED, not cached) unless the
	 * X-DEBUGINFOD-IMASIGNATURE it came with (IMA digital signature v2,
	 * as evmctl ima_sign makes it; sha1 or sha256) verifies with a
	 * certificate or public key (DER or PEM, files *.der, *.pem, *.crt,
	 * *.cer, *.cert) of these colon-separated directories; an enforcing
	 * server is not asked for sections (they cannot be verified): the
	 * section is cut from the debuginfo (or executable) fetched, and
	 * verified, instead.  NULL: $DEBUGINFOD_IMA_CERT_PATH. */
	const char *ima_cert_path;
};

DS_API struct ds_context *ds_context_new(const struct ds_context_opts *opts);
DS_API void ds_context_free(struct ds_context *ctx);

enum ds_artifact {
	DS_ARTIFACT_DEBUGINFO = 0, /* an ELF file with .debug_info */
	DS_ARTIFACT_EXECUTABLE = 1, /* the binary with its code */
	DS_ARTIFACT_SOURCE = 2, /* a source file, by its absolute path */
	DS_ARTIFACT_SECTION = 3, /* one section's bytes, by its name */
};

/* Where a local search for an artifact found it, or looked. */
enum ds_source {
	DS_SOURCE_NONE = 0,
	DS_SOURCE_SELF, /* the binary itself */
	DS_SOURCE_BUILD_ID_DIR, /* <debugdir>/.build-id/xx/rest[.debug] */
	DS_SOURCE_DEBUGLINK, /* .gnu_debuglink, CRC checked */
	DS_SOURCE_PERF_CACHE, /* perf's ~/.debug build-id cache */
	DS_SOURCE_DEBUGINFOD_CACHE, /* the debuginfod client cache */
	DS_SOURCE_DEBUGINFOD, /* downloaded now */
	DS_SOURCE_DIRINDEX, /* a file of ds_context_opts.dirindex */
};

DS_API const char *ds_source_name(enum ds_source src);

/* Find an artifact for a build ID on this machine.  hint_path, when not
 * NULL, is the binary the build ID came from (used for "itself" and for
 * .gnu_debuglink).  Every candidate's build ID is checked.  On success
 * *path_out is a malloc()ed path (free() it) and *src_out (may be NULL)
 * says where it came from.  -ENOENT when nothing matched; then, if errbuf
 * is given, it lists every place looked at and why each was refused. */
DS_API int ds_find(struct ds_context *ctx, const struct ds_build_id *bid,
		   const char *hint_path, enum ds_artifact what, char **path_out,
		   enum ds_source *src_out, char *errbuf, size_t errlen);

/* ------------------------------------------------- directories by build ID */

/* The ELF files under some directories, by build ID, as a debuginfod
 * server indexes its -F directories: every regular file (symlinks are not
 * followed) is read once per change of its (device, inode, size, mtime),
 * files that are not ELF or have no build ID included, so that a rescan
 * reads only what changed.  A file is a DEBUGINFO if it has a .debug_info
 * with bytes, an EXECUTABLE if it has code (an SHF_EXECINSTR section with
 * bytes, or without section headers an executable PT_LOAD with bytes);
 * one file may be both.  Safe from many threads: lookups go on while a
 * scan runs, and see the new index when it is complete. */
struct ds_dirindex;

struct ds_dirindex_opts {
	size_t sz;
	ds_log_fn log_fn; /* what could not be read, at DS_LOG_DEBUG; scans at INFO */
	void *log_user;
	enum ds_log_level log_level;
};

/* dirs: NULL-terminated, copied.  Nothing is read until the first scan.
 * NULL with errno ENOMEM or EINVAL. */
DS_API struct ds_dirindex *ds_dirindex_new(const char *const *dirs,
					   const struct ds_dirindex_opts *opts);
DS_API void ds_dirindex_free(struct ds_dirindex *ix);
/* Walk the directories again.  Returns how many files were read this
 * time (new or changed), or a negative errno when a directory could not
 * be opened at all (the others are still indexed).  One scan at a time:
 * a second caller waits for the first's. */
DS_API int ds_dirindex_scan(struct ds_dirindex *ix);
/* The file holding what of bid: *path_out malloc()ed.  Of several, the
 * one most fit: for DEBUGINFO a file without code (a separate debug
 * file) before one with; for EXECUTABLE one without .debug_info first;
 * then the newest.  -ENOENT none; -EINVAL what is SOURCE or SECTION. */
DS_API int ds_dirindex_find(struct ds_dirindex *ix, const struct ds_build_id *bid,
			    enum ds_artifact what, char **path_out);
/* ds_dirindex_find(), and the file opened (read-only, close-on-exec) into
 * *fd_out: a server sends it without reading its build ID again.
 * -ESTALE (nothing opened) when the file at the path is not the one the
 * scan read: another device, inode, size or mtime, or no regular file. */
DS_API int ds_dirindex_open(struct ds_dirindex *ix, const struct ds_build_id *bid,
			    enum ds_artifact what, char **path_out, int *fd_out);

struct ds_dirindex_stats {
	uint64_t files; /* regular files seen by the last scan */
	uint64_t elf_files; /* of those, ELF with a build ID */
	uint64_t build_ids; /* distinct build IDs */
	uint64_t scans; /* completed */
	uint64_t files_read; /* opened and read, over every scan */
	uint64_t bytes_read; /* their sizes */
	double last_scan_s; /* how long the last scan took */
};

DS_API void ds_dirindex_stats(struct ds_dirindex *ix, struct ds_dirindex_stats *out);
/* debuginfod's /metadata over the index (ds_metadata_*, below): each file
 * whose path is value (key "file") or matches the pattern value (key
 * "glob", fnmatch(3) with FNM_PATHNAME), with a build ID, added to m once
 * per type it has, "executable" then "debuginfo" (this index's types:
 * code, .debug_info).  At most max_results results and max_ms
 * milliseconds (0: no bound); past either, m->complete is false.
 * -EINVAL: another key, or value empty or over 4096 bytes. */
struct ds_metadata;
DS_API int ds_dirindex_metadata(struct ds_dirindex *ix, const char *key, const char *value,
				struct ds_metadata *m, size_t max_results, unsigned int max_ms);

/* ------------------------------------------------------------ source files */

/* A source path as debuginfod compares them: "." and ".." segments and
 * repeated slashes taken out lexically (RFC 3986's remove_dot_segments;
 * a ".." at the root stays at the root).  Writes at most len bytes
 * including the NUL; -ENAMETOOLONG if it does not fit, -EINVAL if path
 * is not absolute. */
DS_API int ds_source_canon(const char *path, char *out, size_t len);

/* The source files the DWARF of an ELF file names (its line tables' file
 * names, relative ones under their CU's DW_AT_comp_dir, canonical as
 * above; "<built-in>" and names that stay relative are left out), sorted
 * and unique: what a debuginfod server may serve as /source/ of its build
 * ID.  *names is one malloc()ed block (free() it); *n of them.  -ENODATA:
 * no DWARF; -ENOEXEC: not ELF. */
DS_API int ds_source_names(const char *debuginfo_path, char ***names, size_t *n);

/* ------------------------------------------------------------- debuginfod */

/* Fetching from debuginfod servers into the cache the elfutils client uses
 * (<cache>/<build-id>/debuginfo, executable, section-NAME, source##PATH):
 * a file either client downloaded is found by the other.  One request per
 * (build ID, artifact) however many threads, stores and batches ask; all
 * servers are asked at once and the first good answer wins; a debuginfo or
 * executable is only cached when it carries the requested build ID.  A
 * section is cut from a cached debuginfo (else executable) before any
 * server is asked, and from the whole file fetched when no server may be
 * asked for it (ima:enforcing) or can give it (503), as elfutils does.
 *
 * Errors: -ENOENT no server has it (remembered as a miss, like elfutils,
 * for cache_miss_s); -ENOSYS no server configured and not cached;
 * -ETIMEDOUT, -ECONNREFUSED, -EHOSTUNREACH, -ECONNRESET, -EIO (server
 * error) after retries, never cached as a miss; -EFBIG over maxsize;
 * -EBADMSG a server sent a file of another build ID; -EKEYREJECTED an
 * "ima:enforcing" server sent it without a valid IMA signature (see
 * ds_context_opts.ima_cert_path); -EPROTO a bad redirect; -ECANCELED the
 * caller cancelled. */

struct ds_fetch_progress {
	size_t total, done, failed;
	uint64_t bytes; /* downloaded so far for this call */
	double elapsed_s;
};

/* Return non-zero to cancel: nothing of what was not finished is cached. */
typedef int (*ds_fetch_progress_fn)(void *user, const struct ds_fetch_progress *p);

struct ds_fetch_req {
	struct ds_build_id build_id;
	enum ds_artifact what;
	const char *arg; /* source path or section name; else NULL */
	/* Results. */
	int err;
	char *path; /* malloc()ed, the caller frees it (NULL: see ds_fetch_body) */
	enum ds_source source; /* DEBUGINFOD_CACHE or DEBUGINFOD */
	uint64_t bytes; /* downloaded for this request (0 from the cache) */
};

/* How a download of ds_fetch_start() ended, for ds_fetch_opts.done_body
 * (valid during that call only).  A verified file small enough to have
 * been held in memory whole (DS_FETCH_BODY_MAX bytes or fewer, and not
 * from an ima:enforcing server, whose signature is checked on the file) is
 * handed over from there as soon as it is checked: data and size, and
 * req->path NULL.  Its file goes into the cache after (written, fsync()ed,
 * renamed), so a server that sends it on does not wait for the disk; a
 * caller that wants the file itself sets done instead.  Otherwise data is
 * NULL and the file is at req->path. */
#define DS_FETCH_BODY_MAX (64u << 10)
struct ds_fetch_body {
	const void *data;
	size_t size;
	/* The x-debuginfod-* headers the server sent ("Name: value\n" lines,
	 * as ds_fetch_headers() gives them); NULL: none. */
	const char *headers;
	time_t mtime; /* the server's Last-Modified; 0: it gave none */
};

struct ds_fetch_opts {
	size_t sz;
	ds_fetch_progress_fn progress; /* called from the caller's thread */
	void *user;
	/* Called as each request completes: by ds_fetch_batch() from the
	 * caller's thread; by ds_fetch_start() from one of the library's. */
	void (*done)(void *user, struct ds_fetch_req *req);
	unsigned int progress_ms; /* between progress calls (100) */
	/* Extra request headers ("Name: value", NULL-terminated) for the
	 * downloads this call starts, after DEBUGINFOD_HEADERS_FILE's: a
	 * federating server's X-Forwarded-For and User-Agent.  A request that
	 * joins one already in flight sends nothing of its own.  A header
	 * with a CR or LF, or without "Name:", fails the call with -EINVAL
	 * before anything is asked. */
	const char *const *headers;
	/* ds_fetch_start() only, instead of done: also told how the download
	 * ended (struct ds_fetch_body; NULL when none did: a failure, or the
	 * file another process put in the cache meanwhile), and given a small
	 * file from memory before it is in the cache. */
	void (*done_body)(void *user, struct ds_fetch_req *req, const struct ds_fetch_body *body);
};

/* The x-debuginfod-* headers the cached artifact came with, as the elfutils
 * client (0.193) keeps them beside it (<cache>/<build-id>/hdr-<entry>:
 * "Name: value" lines, as the server sent them), read without a request,
 * from whichever client wrote them: X-DEBUGINFOD-FILE, -ARCHIVE, -SIZE,
 * -IMASIGNATURE...  *out malloc()ed.  -ENOENT: the artifact is not cached,
 * or came without such headers (a file:// server, an older client). */
DS_API int ds_fetch_headers(struct ds_context *ctx, const struct ds_build_id *bid,
			    enum ds_artifact what, const char *arg, char **out);

/* Fetch one artifact (cache first).  *path_out is malloc()ed. */
DS_API int ds_fetch(struct ds_context *ctx, const struct ds_build_id *bid, enum ds_artifact what,
		    const char *arg, char **path_out, const struct ds_fetch_opts *opts);

/* Fetch many at once; blocks until every request has its result.  Returns
 * the number of requests that failed, or -ECANCELED. */
DS_API int ds_fetch_batch(struct ds_context *ctx, struct ds_fetch_req *reqs, size_t n,
			  const struct ds_fetch_opts *opts);

/* Start one fetch and do not wait for it, for a caller with an event loop
 * of its own (a server: `dsostore serve` answers its misses so, with no
 * thread of its own waiting on each).  The cache is looked at first, on
 * the caller's thread.  Returns 0 when *req has its result already (found
 * in the cache, or failed: req->err); no callback is then called.
 * Returns 1 when a download is under way (or joined: one per key however
 * many ask): opts->done(opts->user, req), or opts->done_body, is called
 * once, when it ends, from a thread of the library's, perhaps before
 * ds_fetch_start() has returned; *req (and opts->user) must live until
 * then.  The callback is called with no lock of the library's held (it may
 * start another fetch) and should not block (nor free ctx): other
 * downloads' answers wait behind it.  Headers as ds_fetch_opts.headers;
 * progress is not called.  ds_context_free() answers the ones still under
 * way with -ECANCELED.
 * -EINVAL: no ctx, req or callback, or bad headers; -EOPNOTSUPP: a section
 * (ds_fetch() may need its whole file first, and waits for it). */
DS_API int ds_fetch_start(struct ds_context *ctx, struct ds_fetch_req *req,
			  const struct ds_fetch_opts *opts);

struct ds_fetch_stats {
	uint64_t requests; /* HTTP(S)/file transfers started */
	uint64_t downloads; /* files written into the cache */
	uint64_t bytes; /* body bytes received */
	uint64_t cache_hits;
	uint64_t joined; /* requests that waited for one already in flight */
	uint64_t retries;
	uint64_t rejected; /* wrong build ID, over maxsize, bad redirect */
};

DS_API void ds_fetch_stats(struct ds_context *ctx, struct ds_fetch_stats *out);

/* The cache directory in use (borrowed, valid with ctx). */
DS_API const char *ds_cache_path(struct ds_context *ctx);

/* ------------------------------------------------------------- metadata */

/* What servers know of a file name: GET /metadata?key=KEY&value=VALUE,
 * the query of elfutils 0.192's debuginfod_find_metadata() and
 * debuginfod's /metadata.  KEY "file" is an exact path (as the server
 * indexed it, its realpath), "glob" a shell pattern (fnmatch(3) with
 * FNM_PATHNAME: "*" stops at "/"); a server may know other keys.  Each
 * server answers {"results":[{"type":...,"buildid":...,"file":...,
 * "archive":...}, ...], "complete":BOOL}; a result is one (file, build ID,
 * type) that the server indexes, a file both executable and debuginfo
 * being two results.  docs/debuginfod.md. */
struct ds_metadata_entry {
	/* The fields every server sends (NULL when this one did not, or not
	 * as a string): "executable" or "debuginfo"; lowercase hex; the path;
	 * the archive holding it (NULL: none). */
	const char *type, *buildid, *file, *archive;
	/* The whole object as one line of JSON, every field the server sent
	 * (the fields above and any others), strings re-escaped. */
	const char *json;
};

/* The results of one query, merged: each server's in the order of the
 * URL list, a result another server already gave (the same JSON) given
 * once.  complete is false when any server said so, failed, or sent
 * something that is not such an answer. */
struct ds_metadata {
	struct ds_metadata_entry *entries;
	size_t n;
	bool complete;
	unsigned int servers; /* asked */
	unsigned int answered; /* of those, with an answer parsed */
};

struct ds_metadata_opts {
	size_t sz;
	/* Extra request headers, as ds_fetch_opts.headers (a federating
	 * server's X-Forwarded-For and User-Agent). */
	const char *const *headers;
	/* Bytes of one server's answer (its body as decoded): a longer one
	 * is that server failed.  0: 64 MiB. */
	uint64_t maxsize;
};

/* An empty result set (complete, no entries); NULL: no memory. */
DS_API struct ds_metadata *ds_metadata_new(void);
DS_API void ds_metadata_free(struct ds_metadata *m);
/* Ask every server of ctx at once (DEBUGINFOD_URLS; file:// ones cannot
 * answer and count as failed), with the fetcher's timeouts, retries,
 * headers and size rules, and merge the answers into m.  KEY: letters
 * only, VALUE: 1 to 4096 bytes, else -EINVAL.  0 when at least one server
 * answered; -ENOSYS no servers; else the most telling failure (-EPROTO: a
 * server refused the query, as debuginfod does an unknown key), m->complete
 * then false.  -ECANCELED: ds_context_opts.cancel. */
DS_API int ds_metadata_query(struct ds_context *ctx, const char *key, const char *value,
			     struct ds_metadata *m, const struct ds_metadata_opts *opts);
/* One server's answer, buf[0..len) (no NUL needed), merged into m as
 * ds_metadata_query() does: 0, -EBADMSG when it is not such an answer, or
 * has over 2^20 results, one of over 64 KiB, or nesting past 16 levels
 * (then m is as it was, and not complete), -ENOMEM. */
DS_API int ds_metadata_parse(struct ds_metadata *m, const char *buf, size_t len);
/* One result added, as a server gives it (type and buildid required;
 * archive NULL: none), unless m has it already: 0, -EINVAL, -ENOMEM. */
DS_API int ds_metadata_add(struct ds_metadata *m, const char *type, const char *buildid,
			   const char *file, const char *archive);
/* m as a server answers: {"results":[...],"complete":BOOL}, one line,
 * NUL-terminated, malloc()ed; NULL: no memory. */
DS_API char *ds_metadata_json(const struct ds_metadata *m, size_t *len_out);

struct ds_cache_stats {
	uint64_t build_ids, files, bytes, misses;
};

DS_API int ds_cache_stats(struct ds_context *ctx, struct ds_cache_stats *out);

/* Remove what the elfutils client would: files not accessed for
 * max_unused_age_s, misses older than cache_miss_s, then empty build-ID
 * directories; and saved symbol indexes not used for max_unused_age_s
 * (those in cache entries with them, those of local debuginfo in their
 * own directory).  force: now, whatever cache_clean_interval_s says.
 * Returns the number of files removed. */
DS_API int ds_cache_clean(struct ds_context *ctx, bool force);

/* -------------------------------------------------------------- perf.data */

/* A perf.data file (perf record's), read whole: the header, the attrs, the
 * feature sections (build-ID table, hostname, OS release, arch, perf
 * version, command line) and every record of the data section.  File mode
 * ("PERFILE2") and pipe mode (perf record -o -), either byte order (a file
 * from the other endianness is swapped, not rejected), compressed records
 * (perf record -z, zstd) decompressed.  Malformed input: -EBADMSG, with err
 * saying what and at which file offset; nothing beyond the file is read
 * and no size field is trusted for an allocation.  -EPROTONOSUPPORT: a
 * compression other than zstd.  ds_perf_data_open() maps a file of 4 MiB
 * or more (as perf does; it must not shrink while open), and reads a
 * smaller one. */
struct ds_perf_data;
struct ds_store_opts;
struct ds_dso;

struct ds_perf_build_id {
	struct ds_build_id build_id;
	int32_t pid; /* -1: the host's kernel and DSOs; else a guest machine's */
	uint16_t cpumode; /* PERF_RECORD_MISC_CPUMODE: 1 kernel, 2 user, ... */
	const char *filename; /* borrowed: valid until ds_perf_data_close() */
};

DS_API int ds_perf_data_open(const char *path, struct ds_perf_data **out, char *err,
			     size_t errlen);
DS_API int ds_perf_data_open_mem(const void *buf, size_t len, struct ds_perf_data **out,
				 char *err, size_t errlen);
DS_API void ds_perf_data_close(struct ds_perf_data *p);
/* The build-ID table (the HEADER_BUILD_ID feature, or in pipe mode the
 * build-ID records of the stream), in file order; *out borrowed.  Returns
 * the count, or -ENOENT when the file has none (perf record -z and
 * --buildid-mmap write none: the build IDs are then in MMAP2 events or
 * only in the files; see ds_perf_session). */
DS_API int ds_perf_data_build_ids(const struct ds_perf_data *p,
				  const struct ds_perf_build_id **out);
/* Written on a machine of the other byte order (and swapped on reading). */
DS_API bool ds_perf_data_swapped(const struct ds_perf_data *p);

struct ds_perf_info {
	/* Feature strings; NULL when the file has none.  Borrowed. */
	const char *hostname, *osrelease, *arch, *perf_version, *cmdline;
	bool pipe; /* perf record -o - */
	bool compressed; /* perf record -z */
	unsigned int nr_attrs; /* events recorded (cpu-clock, cycles, ...) */
	uint64_t nr_records; /* records in the data section, decompressed ones included */
	uint64_t nr_samples;
	uint64_t nr_lost; /* samples the kernel dropped (PERF_RECORD_LOST) */
	uint64_t nr_unknown; /* records of a type this reader skips */
};

DS_API void ds_perf_data_info(const struct ds_perf_data *p, struct ds_perf_info *out);
/* The machine of the recording, as perf report --header prints it
 * (features HEADER_NRCPUS, _CPUDESC, _CPUID, _TOTAL_MEM).  The caller
 * sets sz; strings borrowed, NULL when the file has none. */
struct ds_perf_host {
	size_t sz;
	const char *cpudesc, *cpuid;
	bool have_nrcpus, have_total_mem;
	uint32_t nr_cpus_online, nr_cpus_avail;
	uint64_t total_mem_kb;
};

DS_API void ds_perf_data_host(const struct ds_perf_data *p, struct ds_perf_host *out);
/* The name perf gave event number attr ("cpu-clock", "cycles:u"...), from
 * the HEADER_EVENT_DESC feature; NULL when the file does not say. */
DS_API const char *ds_perf_data_event_name(const struct ds_perf_data *p, unsigned int attr);

/* A recording replayed as perf report does: records in time order, each
 * process's maps (MMAP, MMAP2, FORK, exec) and each thread's name (COMM,
 * FORK), every DSO put into the store of its machine (the host, or one per
 * guest as perf's machines), each sample's IP (and callchain) resolved to
 * (DSO, file offset).  A
 * DSO's build ID comes from the build-ID table, else from its MMAP2 event,
 * else from the file at its path on this machine when that is the file
 * that was mapped (same inode when the recording says, see
 * DS_PERF_BID_FILE); such a file without a build ID is put into the store
 * by its path. */
struct ds_perf_session;

struct ds_perf_session_opts {
	size_t sz;
	const struct ds_store_opts *store_opts; /* for each machine's store */
	/* Do not read build IDs from the files on this machine. */
	bool no_local_build_ids;
	/* --call-graph dwarf: user frames unwound at most a sample (perf's
	 * --max-stack, which it unwinds to; at most 65535); 0: 127, perf's
	 * default kernel.perf_event_max_stack. */
	size_t unwind_max;
};

enum ds_perf_bid_source {
	DS_PERF_BID_NONE = 0,
	DS_PERF_BID_TABLE, /* the header's build-ID table */
	DS_PERF_BID_MMAP2, /* an MMAP2 event (perf record --buildid-mmap) */
	DS_PERF_BID_FILE, /* read from the file at its path on this machine */
};

/* One DSO of a recording, in the order perf lists them (host first, then
 * guests; within a machine in order of first appearance). */
struct ds_perf_dso {
	const char *machine; /* "host", or "guest/<pid>"; borrowed */
	const char *path; /* as recorded: a path, "[kernel.kallsyms]", "[vdso]", "//anon"... */
	struct ds_build_id build_id; /* size 0: unknown */
	enum ds_perf_bid_source build_id_source;
	uint16_t cpumode; /* 1 kernel, 2 user, 4 guest kernel, 5 guest user */
	bool kernel; /* the kernel or a kernel module */
	uint64_t samples; /* samples whose IP is in it */
	uint64_t period; /* the sum of their periods */
	uint64_t callchain_hits; /* callchain entries in it (callers of samples) */
	/* The kernel: where perf's reference symbol (ref_symbol, "_text") was
	 * when recorded (its MMAP's pgoff), to relocate addresses into this
	 * boot's /proc/kallsyms (KASLR); else 0 and NULL. */
	uint64_t ref_address;
	const char *ref_symbol;
	/* The store's DSO (borrowed, valid with the session): NULL when there
	 * is neither a build ID to look for nor a file of this machine that is
	 * the one recorded ([anon], [heap], JIT code...). */
	struct ds_dso *dso;
	/* A kernel module: where its map started when recorded (its first
	 * MMAP's start: the module's /proc/modules address then), to find
	 * its addresses where the module is now; else 0. */
	uint64_t map_start;
};

/* A sample, decoded through its attr's sample_type and resolved.  Fields
 * the attr did not record are 0 (pid, tid: -1). */
struct ds_perf_sample {
	uint64_t time, ip, period, addr, id;
	int32_t pid, tid;
	uint32_t cpu;
	uint16_t cpumode;
	unsigned int attr; /* which event (index of the file's attrs) */
	const char *comm; /* the thread's name then (COMM, FORK); NULL: unknown;
			     valid with the session */
	size_t dso; /* index into ds_perf_session_dsos(), or SIZE_MAX: no map */
	uint64_t dso_offset; /* ip as a file offset in the DSO; kernel: the address */
	/* The callchain (PERF_SAMPLE_CALLCHAIN) without the context markers,
	 * leaf first; each entry resolved like ip.  Borrowed for the call. */
	size_t nr_callchain;
	const uint64_t *callchain;
	const size_t *callchain_dso;
	const uint64_t *callchain_offset;
	const uint16_t *callchain_cpumode; /* as the context markers say */
	/* The callchain's last nr_unwound entries are not the recording's:
	 * they come from unwinding the sample's user stack (--call-graph
	 * dwarf recordings). */
	size_t nr_unwound;
};

/* Replay the recording.  err names what went wrong and the offset.  NULL
 * with errno on failure. */
DS_API struct ds_perf_session *ds_perf_session_new(struct ds_context *ctx,
						   const struct ds_perf_data *p,
						   const struct ds_perf_session_opts *opts,
						   char *err, size_t errlen);
DS_API void ds_perf_session_free(struct ds_perf_session *s);
/* The name of host thread tid (of process pid) at the end of the
 * recording: its last COMM, or the one it was created with (perf's
 * thread__comm_str() once a report is made); NULL when unknown.
 * Borrowed, valid with the session. */
DS_API const char *ds_perf_session_thread_name(const struct ds_perf_session *s, int32_t pid,
					       int32_t tid);
/* The DSOs; *out borrowed (valid with the session).  Returns the count. */
DS_API size_t ds_perf_session_dsos(const struct ds_perf_session *s,
				   const struct ds_perf_dso **out);
/* Calls fn for each sample in time order; a non-zero return stops the walk
 * and is returned. */
typedef int (*ds_perf_sample_fn)(void *user, const struct ds_perf_sample *sample);
DS_API int ds_perf_session_samples(const struct ds_perf_session *s, ds_perf_sample_fn fn,
				   void *user);
/* Find the debuginfo of the session's DSOs that have a file and a build ID
 * (those with samples or in callchains, unless all), kernel ones only with
 * DS_PERF_PREFETCH_KERNEL: local sources first, then one parallel
 * debuginfod batch for what is left.  Returns how many are still without
 * debuginfo (ds_dso_debuginfo() / ds_dso_error() say why), or -ECANCELED. */
#define DS_PERF_PREFETCH_ALL (1u << 0)
#define DS_PERF_PREFETCH_KERNEL (1u << 1)
/* Only what names functions needs (perf report's dso,sym): the
 * debuginfo, not the dwz alt files and split DWARF its DWARF names (the
 * store finds those when a line is first asked for). */
#define DS_PERF_PREFETCH_NAMES (1u << 2)
/* The kernel modules too, not the kernel itself (a module's debuginfo is
 * a few hundred KB, a vmlinux's hundreds of MB): what file:line of module
 * samples needs, in the same batch. */
#define DS_PERF_PREFETCH_MODULES (1u << 3)
DS_API int ds_perf_session_prefetch(struct ds_perf_session *s, unsigned int flags,
				    const struct ds_fetch_opts *opts);

/* perf's build-id cache (<root>/<path>/<build-id>/debug, and the link
 * <root>/.build-id/<xx>/<rest> -> ../../<path>/<build-id>; root from the
 * context: $PERF_BUILDID_DIR or ~/.debug): install debug_file as the
 * debuginfo of the DSO at dso_path (absolute, no "." or ".." components;
 * NULL: the entry the link already names, else "[dsostore]/<build-id>")
 * so that perf report, with or without debuginfod support, finds it.  The
 * file's build ID must be bid (-EBADMSG otherwise; nothing is created).
 * Written atomically (temporary file, rename), a hard link when on the
 * same file system; an entry already there with the right build ID is
 * left as it is.  -EINVAL also when the context has perf's cache
 * disabled.  *installed (may be NULL) gets the malloc()ed path of the
 * debug file. */
DS_API int ds_perf_cache_install(struct ds_context *ctx, const char *dso_path,
				 const struct ds_build_id *bid, const char *debug_file,
				 char **installed);

/* The dwz alt file of a debug file installed by ds_perf_cache_install()
 * (installed: the path it gave), where perf's srcline (binutils
 * addr2line, which reads the alt file by its .gnu_debugaltlink name
 * relative to the debug file's directory) and libdw find it: alt_file
 * (its build ID must be the one the link names: -EBADMSG) becomes an entry
 * of its own, <root>/[dsostore]/<alt-build-id>/debug with its link
 * <root>/.build-id/<xx>/<rest>, and the name the debug file records,
 * taken relative to its entry's directory (a leading "/" dropped), a
 * relative symlink to it.  -ENODATA: installed names no alt file;
 * -EPERM: the name leads outside perf's cache (nothing is made there).
 * *placed (may be NULL) gets the malloc()ed path of that link. */
DS_API int ds_perf_cache_install_alt(struct ds_context *ctx, const char *installed,
				     const char *alt_file, char **placed);

/* The .dwp package of a split debug file installed by
 * ds_perf_cache_install() (installed: the path it gave), put beside it as
 * <installed>.dwp: where gdb and llvm-symbolizer look for the package of
 * the file they read (<file>.dwp), and dsostore too.  perf 6.1 reads none
 * (its srcline runs binutils' addr2line, which reads no split DWARF; libdw
 * 0.188 reads .dwo files, not packages).  A hard link when on the same
 * file system, else a copy, written atomically; the same file there
 * already is left.  -EBADMSG: dwp_file is not an ELF file; -EINVAL:
 * installed is not such a path.  *placed (may be NULL) gets the
 * malloc()ed path. */
DS_API int ds_perf_cache_install_dwp(struct ds_context *ctx, const char *installed,
				     const char *dwp_file, char **placed);

/* ------------------------------------------------------------------ store */

struct ds_store;
struct ds_dso;
struct ds_debuginfo;

struct ds_store_opts {
	size_t sz;
	/* Bytes of opened debuginfo the store may hold; 0 is unlimited.  Over
	 * it, the debuginfo of DSOs not used recently is closed (CLOCK order,
	 * the usual write-free approximation of LRU) and reopened on demand. */
	uint64_t mem_budget;
	/* Files the store may keep open (each debuginfo, dwz alt file and
	 * .dwp package holds a descriptor; a .dwo's is closed once mapped); 0
	 * is unlimited.  Over it, the same CLOCK order closes what was not
	 * used recently: a long-running profiler otherwise meets
	 * RLIMIT_NOFILE before any memory limit.  A debuginfo that is pinned
	 * stays open, so a budget below the number of DSOs pinned at once is
	 * exceeded by that many. */
	unsigned int fd_budget;
	/* Addresses will be file offsets (perf's, /proc/PID/maps'): the
	 * prefetch of a DSO known by its build ID alone asks debuginfod for
	 * its executable in the same batch as its debuginfo.  A debug file's
	 * program headers say nothing of file offsets; the executable's do,
	 * and the DSO keeps them.  Without this they are looked for (locally,
	 * then debuginfod) at the first file offset asked of such a DSO. */
	bool file_offsets;
	/* DSOs kept alive after their last reference is put, the most
	 * recently used first (a server's, whose next request asks for the
	 * same build IDs: their indexes stay open, within mem_budget); 0 none,
	 * as before: a DSO goes with its last reference.  A lookup of a kept
	 * DSO hands it out again; ds_store_free() frees the kept ones. */
	unsigned int keep_dsos;
};

/* A store for one machine ("host", a guest or container name; copied).
 * The store holds a reference on ctx; ds_context_free() may come first. */
DS_API struct ds_store *ds_store_new(struct ds_context *ctx, const char *machine,
				     const struct ds_store_opts *opts);
/* Drops the caller's handle, after the indexes being saved are written
 * (ds_store_flush()).  DSOs still referenced stay valid; the store's
 * memory goes with the last of them. */
DS_API void ds_store_free(struct ds_store *store);
/* A batch that completes a DSO's symbol index (every compilation unit
 * built) returns before the index is saved: a thread of the store writes
 * it meanwhile (README, "Saved indexes").  This waits until every index
 * completed so far is saved (or failed to be: a saved index is a cache),
 * for a host about to hand the cache to another process, or to exit
 * without ds_store_free(). */
DS_API void ds_store_flush(struct ds_store *store);
DS_API const char *ds_store_machine(const struct ds_store *store);

/* What identifies a DSO besides its path (perf's struct dso_id).  Set the
 * flag of each part you know; a partial id matches what it can. */
#define DS_DSO_ID_BUILD_ID (1u << 0)
#define DS_DSO_ID_INODE (1u << 1) /* maj, min, ino */
#define DS_DSO_ID_INO_GENERATION (1u << 2)

struct ds_dso_id {
	unsigned int flags;
	struct ds_build_id build_id;
	uint32_t maj, min;
	uint64_t ino;
	uint64_t ino_generation;
};

/* The DSO for (path, id), created if there is none; a new reference.
 * Matching, as perf's dsos__findnew_id: a known build ID finds the DSO with
 * that build ID whatever its path; otherwise a DSO with the same path and no
 * conflicting id part; otherwise one with the same inode.  A match learns
 * the id parts it lacked, so it never gets a twin.  Two DSOs at one path
 * differ when their build IDs (or inodes) differ.  path may be NULL when
 * only the build ID is known.  NULL with errno on failure (EINVAL: neither
 * path nor build ID). */
DS_API struct ds_dso *ds_store_findnew(struct ds_store *store, const char *path,
				       const struct ds_dso_id *id);
/* The same match without creating: a new reference, or NULL (errno
 * ENOENT) when none. */
DS_API struct ds_dso *ds_store_find(struct ds_store *store, const char *path,
				    const struct ds_dso_id *id);
DS_API struct ds_dso *ds_store_find_build_id(struct ds_store *store,
					     const struct ds_build_id *bid);

DS_API struct ds_dso *ds_dso_get(struct ds_dso *dso);
/* Drop a reference (NULL is fine); the last one frees the DSO and its
 * debuginfo. */
DS_API void ds_dso_put(struct ds_dso *dso);

/* The path given at creation (NULL if none); valid while referenced. */
DS_API const char *ds_dso_path(const struct ds_dso *dso);
/* A snapshot of the DSO's id (it improves as it is learned). */
DS_API void ds_dso_id(struct ds_dso *dso, struct ds_dso_id *out);

/* The per-symbol call.  First caller searches (the binary, build-id dirs,
 * debuglink, perf's cache, then debuginfod); concurrent callers wait for that one search;
 * once found, a call is one atomic load.  *out is borrowed: valid while you
 * hold the DSO reference.  -ENOENT when none was found (remembered for the
 * miss TTL: no new search until then; ds_dso_error() says where it
 * looked), -ENODATA when the DSO has no build ID and none could be read. */
DS_API int ds_dso_debuginfo(struct ds_dso *dso, const struct ds_debuginfo **out);

/* Find the debuginfo of every DSO of the store that has not been searched
 * yet: local sources first, then one parallel batch from debuginfod; then
 * a second round for the dwz alt files that debuginfo names: those not
 * found locally, fetched in one more batch (each once); and the split
 * DWARF it needs, on this machine (ds_dso_split_files()).  Returns how
 * many DSOs are left without debuginfo, or -ECANCELED. */
DS_API int ds_store_prefetch(struct ds_store *store, const struct ds_fetch_opts *opts);

/* The reason of the last failure of ds_dso_debuginfo() as text, copied into
 * buf.  Returns the error code (0 if none). */
DS_API int ds_dso_error(struct ds_dso *dso, char *buf, size_t len);

/* The dwz alt file (.gnu_debugaltlink) the DSO's debuginfo names, as the
 * store has it: its build ID in *bid, and (when path is not NULL) the
 * malloc()ed path where the store found it.  The store searches each alt
 * file once (the same places as debuginfo, then debuginfod), the first
 * asker doing it, and remembers the outcome; ds_store_prefetch() fetches
 * them in its second round.  0; -ENODATA: the debuginfo names none (or
 * the DSO has no debuginfo); -ENOENT: not found (*bid still set);
 * -ENOMEM. */
DS_API int ds_dso_alt_file(struct ds_dso *dso, struct ds_build_id *bid, char **path);

/* Split DWARF (-gsplit-dwarf): the split units the DSO's debuginfo needs,
 * one per skeleton unit, and where the store finds them: the .dwp
 * package (<binary>.dwp, else <debuginfo>.dwp, one holding some of the
 * units), else each unit's .dwo file (by its DW_AT_dwo_name: as named
 * when absolute, else under its DW_AT_comp_dir; beside the binary and
 * beside its debuginfo; in the debug directories), of the unit's dwo id.
 * Looked for on this machine only (debuginfod serves no .dwo or .dwp),
 * each file once per store (ds_store_prefetch() does it for every DSO);
 * nothing is kept open. */
struct ds_split_files {
	uint64_t units; /* skeleton units: split units the debuginfo needs */
	uint64_t in_dwp; /* found in the package */
	uint64_t in_dwo; /* found in .dwo files */
	uint64_t missing; /* found nowhere (or only in files of other units) */
	char *dwp; /* the package's path (malloc()ed: free() it); NULL: none */
};
/* 0 and *out; -ENODATA: the debuginfo has no skeleton unit (or the DSO no
 * debuginfo); -ENOMEM. */
DS_API int ds_dso_split_files(struct ds_dso *dso, struct ds_split_files *out);

/* Keep the DSO's debuginfo open: only needed on a store with a memory
 * budget, around use of ds_debuginfo_fd()/ds_debuginfo_elf(), which an
 * eviction could otherwise close.  Pins nest. */
DS_API int ds_dso_pin(struct ds_dso *dso);
DS_API void ds_dso_unpin(struct ds_dso *dso);

/* Accessors of a debuginfo returned by ds_dso_debuginfo().  Path and build
 * ID stay valid as long as the DSO; fd and Elf handle are the open file the
 * DSO holds (a cache cleaned under it cannot take it away); see
 * ds_dso_pin() for stores with a budget.  Do not close them. */
DS_API const char *ds_debuginfo_path(const struct ds_debuginfo *di);
DS_API const struct ds_build_id *ds_debuginfo_build_id(const struct ds_debuginfo *di);
DS_API enum ds_source ds_debuginfo_source(const struct ds_debuginfo *di);
DS_API int ds_debuginfo_fd(const struct ds_debuginfo *di);
struct Elf; /* libelf's Elf */
DS_API struct Elf *ds_debuginfo_elf(const struct ds_debuginfo *di);

/* ------------------------------------------------------------- symbolize */

/* Flags of ds_dso_symbolize(). */
#define DS_SYM_INLINES (1u << 0) /* one frame per inlined call, innermost first */
/* Names demangled (C++, Rust legacy and v0) by libiberty, the demangler
 * of binutils, spelled as addr2line -C and c++filt print them; D names, which
 * binutils' default style does not demangle, stay as they are. */
#define DS_SYM_DEMANGLE (1u << 1)
#define DS_SYM_FILE_OFFSET (1u << 2) /* addr is a file offset (perf, /proc/PID/maps) */
/* Name frames as binutils addr2line does, for output that must match it:
 * an innermost function whose DWARF name is not a linkage name (C++ with
 * only DW_AT_name) takes the name of the ELF symbol holding the address;
 * where no DWARF function is, the nearest ELF symbol below the address in
 * its section names it whatever its size, with its STT_FILE as the file.
 * Without this flag (nor DS_SYM_ELF_NAMES), as llvm-symbolizer 14, only
 * an ELF symbol that holds the address names it there ([start, start +
 * size), one of size 0 up to the next symbol: past a function's end is
 * "??"), and the file there is the STT_FILE's for a local symbol only
 * (none where that is empty). */
#define DS_SYM_BINUTILS (1u << 3)
/* Name the function holding the address (the frame that is not inlined)
 * as perf report does: after the ELF symbol that holds it, among aliases
 * the one perf chooses (with a size, not weak, global, fewer leading
 * underscores, longer name), so "foo.constprop.0" and "__fstat64" rather
 * than the DWARF's "foo" and "__GI___fstat64".  Without an ELF symbol
 * there, the DWARF name stays. */
#define DS_SYM_ELF_NAMES (1u << 4)
/* Names only: the function holding the address from ELF symbols
 * (.symtab, MiniDebugInfo, .dynsym; without .symtab, a Go binary's
 * functions from its .gopclntab too), as DS_SYM_ELF_NAMES (perf) or else
 * binutils choose it; no file:line, no inline frames (DS_SYM_INLINES is
 * ignored).  The DWARF is not read: a DSO asked only this builds an index
 * of its ELF symbols alone, a fraction of the cost; a later query without
 * the flag builds the full one once.  An address no ELF symbol holds gets
 * no frame (nframes 0), even where DWARF knows a function there: perf
 * report names samples from ELF symbols only and shows those as
 * addresses, and reading the whole DWARF to name them would cost what
 * the flag exists to save.  The answer does not depend on which index
 * the DSO happens to hold. */
#define DS_SYM_NO_LINES (1u << 5)
/* With DS_SYM_DEMANGLE: names spelled as llvm-symbolizer 14 prints them
 * where the difference is one of spelling ("operator<<<int>", "'lambda'(int)",
 * "f() (.cold)", Rust legacy names with their "::h<hash>"); see
 * docs/oracles.md for what is not followed. */
#define DS_SYM_LLVM_NAMES (1u << 6)
/* With DS_SYM_DEMANGLE: names without their parameters, as perf report
 * and perf script print them ("bitmap_set_bit", not
 * "bitmap_set_bit(bitmap_head*, int)": libiberty's DMGL_NO_OPTS). */
#define DS_SYM_NO_PARAMS (1u << 7)
/* Files as elfutils (eu-stack) gives them, and gdb: names joined as
 * dwarf_linesrc() joins them, a relative name under its directory, that
 * directory not under DW_AT_comp_dir ("./nptl/pthread_create.c",
 * "../sysdeps/unix/sysv/linux/pause.c" in glibc; without the flag, as
 * binutils and LLVM do, a relative directory under comp_dir:
 * "./nptl/./nptl/pthread_create.c", "./posix/../sysdeps/..."); where no
 * DWARF function is, only an ELF symbol that holds the address names it
 * ([start, start + size), one of size 0 up to the next symbol: past a
 * function's end is "??"), and no STT_FILE names a file. */
#define DS_SYM_ELFUTILS (1u << 8)

struct ds_frame {
	const char *function; /* NULL: unknown ("??") */
	uint64_t function_start; /* where the function (or inlined piece) starts */
	const char *file; /* NULL: unknown; as the DWARF gives it, usually absolute */
	unsigned int line; /* 0: unknown */
	unsigned int column; /* 0: unknown */
	unsigned int discriminator;
	bool inlined; /* this frame was inlined into the next one */
	/* function, file: printable ASCII other than '"' and '\\' only,
	 * which ds_term_escape() and a JSON string both leave as they are,
	 * so output code may copy them (false: not known to be; escape
	 * them). */
	bool function_plain, file_plain;
	/* strlen() of function and file (0 where NULL): output code that
	 * writes a million frames need not measure each string again. */
	unsigned int function_len, file_len;
};

/* Where one address is, innermost frame first.  Strings belong to the
 * result: valid until ds_sym_result_release(). */
struct ds_sym_result {
	uint64_t addr; /* the virtual address looked up */
	size_t nframes; /* 0: nothing known about the address */
	struct ds_frame *frames;
	bool from_symtab; /* the name came from ELF symbols, not DWARF */
	char *_strings; /* private */
};

/* Symbolize addr (a virtual address of the ELF, or with DS_SYM_FILE_OFFSET
 * a file offset) in the DSO.  Names come from DWARF (functions, inlined
 * instances, the line table) of the DSO's debuginfo, then from .symtab,
 * .gnu_debugdata (MiniDebugInfo) and .dynsym.  The first call builds an
 * index (counted in the store's memory budget, freed with the DSO); later
 * calls are binary searches, safe from many threads.  0 (nframes 0 when
 * nothing is known there); -ERANGE: a file offset outside every loadable
 * segment; -ENOENT or -ENODATA: no symbols at all.  A one-address
 * ds_dso_symbolize_batch(): for many addresses, that is the faster call. */
DS_API int ds_dso_symbolize(struct ds_dso *dso, uint64_t addr, unsigned int flags,
			    struct ds_sym_result *out);
DS_API void ds_sym_result_release(struct ds_sym_result *res);

/* What became of one address of a batch. */
enum ds_sym_status {
	DS_SYM_FOUND = 0, /* at least one frame */
	DS_SYM_NOT_FOUND, /* no symbol, no line: nothing known at the address */
	DS_SYM_OUTSIDE, /* a file offset outside every loadable segment (-ERANGE) */
	DS_SYM_NO_SYMBOLS, /* no debuginfo or symbols for the DSO (-ENOENT, -ENODATA) */
	DS_SYM_ERROR, /* another failure, in error (-ENOMEM, ...) */
};

/* Why an answer is what it is: what a user can act on when an address
 * is not named (ds_sym_reason_name() gives the text). */
enum ds_sym_reason {
	/* Named from the DSO's debuginfo (or the kernel's symbols). */
	DS_SYM_REASON_NONE = 0,
	/* The symbols were read: none holds the address, no line does. */
	DS_SYM_REASON_NO_SYMBOL,
	/* The DSO's debuginfo was not found, or not fetched:
	 * debuginfo_error says why (-ENOENT: found nowhere, ds_dso_error()
	 * names every place looked at, and "no servers (DEBUGINFOD_URLS)"
	 * when none was asked; -ECONNREFUSED, -ETIMEDOUT, -EIO...: a download
	 * failed; -EBADMSG: a file that failed verification); -ENODATA: no
	 * build ID to look for and no file to read one from.  Any frames
	 * are the binary's own ELF symbols (status DS_SYM_FOUND, from_symtab),
	 * and DS_SYM_NOT_FOUND means not in those either. */
	DS_SYM_REASON_NO_DEBUGINFO,
	/* A file offset outside every loadable segment (DS_SYM_OUTSIDE). */
	DS_SYM_REASON_OUTSIDE,
	/* ds_symbolize_pid(): the address is in no mapping of the process
	 * (DS_SYM_OUTSIDE); in anonymous memory no perf map names; in a file
	 * without a build ID that could not be read; a kernel address
	 * (DS_SYM_NOT_FOUND, error 0); named by the process's perf map (JIT
	 * code: DS_SYM_FOUND, one frame with the map's name, no file). */
	DS_SYM_REASON_UNMAPPED,
	DS_SYM_REASON_ANON,
	DS_SYM_REASON_NO_BUILD_ID,
	DS_SYM_REASON_KERNEL,
	DS_SYM_REASON_JIT,
	/* Another failure, in error (-ENOMEM, -ESRCH: the process is gone). */
	DS_SYM_REASON_ERROR,
};

/* "found", "no symbol at this address", "no debuginfo", "outside every
 * loadable segment", "in no mapping of the process", "anonymous memory",
 * "no build ID", "a kernel address", "JIT code", "error"; static. */
DS_API const char *ds_sym_reason_name(enum ds_sym_reason r);

/* The answer for one address of a batch. */
struct ds_sym_answer {
	/* The virtual address looked up (a file offset translated); the
	 * address as given when it could not be (DS_SYM_OUTSIDE, _NO_SYMBOLS,
	 * and _ERROR before the lookup). */
	uint64_t addr;
	const struct ds_frame *frames; /* nframes of them, innermost first */
	uint32_t nframes; /* 0 unless DS_SYM_FOUND */
	enum ds_sym_status status;
	int error; /* 0 (found or not), else the negative errno of status */
	bool from_symtab; /* the name came from ELF symbols, not DWARF */
	/* Appended in 0.1 (answers live in the batch: no caller allocates
	 * them, see docs/symbolization.md, "Reasons"): */
	enum ds_sym_reason reason;
	int debuginfo_error; /* DS_SYM_REASON_NO_DEBUGINFO: why (see there); else 0 */
	/* ds_symbolize_pid(): the mapping's name as the process sees it
	 * ("/usr/lib/x.so", "[vdso]"); NULL when unmapped, and from
	 * ds_dso_symbolize_batch().  Borrowed from the batch. */
	const char *module;
};

/* The answers of a batch and the memory behind them (frames, strings, the
 * sort, a cache of demangled names), reused from call to call: a warm
 * batch allocates nothing per address, and a name is demangled once while
 * the batch lives (within bounds).  Not shared by threads: one per thread. */
struct ds_sym_batch;

/* NULL with errno ENOMEM; free accepts NULL. */
DS_API struct ds_sym_batch *ds_sym_batch_new(void);
DS_API void ds_sym_batch_free(struct ds_sym_batch *batch);

/* Symbolize addrs[0..n) in the DSO (as ds_dso_symbolize() does each; file
 * offsets with DS_SYM_FILE_OFFSET), answered in batch, replacing what it
 * held.  The addresses are looked up in sorted order, each distinct one
 * once (repeats share their frames), and answered in input order.
 * Returns how many were found (DS_SYM_FOUND), or a negative error: -EINVAL
 * (bad arguments; n above INT_MAX) or -ENOMEM with no answers at all, or
 * the DSO's own (-ENOENT or -ENODATA: no symbols; other errors of finding
 * its debuginfo or building its index), with every answer saying it. */
DS_API int ds_dso_symbolize_batch(struct ds_dso *dso, const uint64_t *addrs, size_t n,
				  unsigned int flags, struct ds_sym_batch *batch);
/* The answers of the batch's last call, *n of them (0 before any, or after
 * a call that failed with no answers), answer i for addrs[i].  Borrowed
 * from the batch, frames and strings too: valid until its next call or
 * ds_sym_batch_free(), whatever becomes of the DSO.  After a
 * ds_dso_symbolize_batch(), each frame's function and file (where not
 * NULL) is followed, past its NUL, by at least DS_SYM_STRING_SLACK bytes
 * that may be read (what they hold is unspecified): output code may copy
 * a name in fixed pieces of that size, without a call that measures. */
#define DS_SYM_STRING_SLACK 32
DS_API const struct ds_sym_answer *ds_sym_batch_answers(const struct ds_sym_batch *batch,
							size_t *n);

/* One line of a symbolization request, as "dsostore symbolize" reads them:
 * "ADDR", "BUILD-ID ADDR" or "PATH ADDR" (ADDR hex, 0x optional; spaces or
 * tabs between).  Returns DS_SYM_LINE_ADDR, _BUILD_ID or _PATH and fills
 * what the line has (key: the build ID or path, NUL-terminated, at most
 * keylen - 1 bytes); DS_SYM_LINE_EMPTY for a blank line; -EINVAL for
 * anything else (no address, not hex, trailing words, a key too long). */
enum {
	DS_SYM_LINE_EMPTY = 0,
	DS_SYM_LINE_ADDR = 1,
	DS_SYM_LINE_BUILD_ID = 2,
	DS_SYM_LINE_PATH = 3,
};
DS_API int ds_sym_parse_line(const char *line, size_t len, char *key, size_t keylen,
			     struct ds_build_id *bid, uint64_t *addr);

struct ds_store_stats {
	uint64_t dsos; /* live DSOs */
	uint64_t debuginfos_open;
	uint64_t bytes_held; /* size of the opened debuginfo files, their indexes and auxiliary files */
	uint64_t searches; /* local searches started */
	uint64_t hits; /* searches that found debuginfo */
	uint64_t misses; /* searches that found none */
	uint64_t evictions; /* debuginfos closed for the budget */
	uint64_t reopens; /* evicted debuginfos opened again */
	/* Symbol indexes built.  (The struct is plain, not sized: fields
	 * are appended, and in 0.x a caller rebuilds against the new header.) */
	uint64_t symtab_builds; /* from ELF symbols alone, no DWARF read */
	uint64_t dwarf_builds; /* that read the DWARF (its CUs built as asked) */
	uint64_t units_built; /* DWARF compilation units built (of any DSO) */
	uint64_t symindex_loads; /* indexes mapped from a saved file (no DWARF read) */
	uint64_t symindex_saves; /* complete indexes written to a saved file */
	uint64_t trims; /* times cold CUs of an index were freed for the budget */
	/* Auxiliary debug files the store owns: dwz alt files (by build
	 * ID), .dwp packages (by file) and .dwo files (by dwo id) of split
	 * DWARF.  Each is found once, opened once for every DSO index that
	 * reads it, counted once in bytes_held, closed with its last reader;
	 * with a budget, one no build reads at the moment may be closed, and
	 * is opened again where it was when read. */
	uint64_t aux_open; /* auxiliary files open now */
	uint64_t aux_bytes; /* their file sizes and decompressed sections (in bytes_held) */
	uint64_t aux_searches; /* searches (one per alt file or .dwo, unless a miss expired) */
	uint64_t aux_opens; /* times one was opened (again after its last reader, or a close) */
	uint64_t aux_closes; /* times one was closed for the budget while an index held it */
	uint64_t aux_reopens; /* of aux_opens: opened again after such a close */
	uint64_t dwp_opens; /* of aux_opens: .dwp packages */
	uint64_t dwo_opens; /* of aux_opens: .dwo files */
	uint64_t dwo_searches; /* of aux_searches: .dwo files */
	uint64_t files_open; /* descriptors held now (what fd_budget bounds) */
	/* keep_dsos (ds_store_opts): DSOs no caller holds that the store
	 * keeps now (counted in dsos too), and lookups that found one. */
	uint64_t kept;
	uint64_t kept_hits;
};

DS_API void ds_store_stats(struct ds_store *store, struct ds_store_stats *out);

/* Build the whole symbol index of dso (every compilation unit, on all
 * cores) and save it, as a complete index is saved anyway (README, "Saved
 * indexes"), so that the next process maps it instead of reading DWARF.
 * *path_out (may be NULL): where, malloc()ed.  0; -ENODATA no DWARF to
 * index (no debuginfo, names only); -ENOTSUP saved indexes are switched
 * off; -ENOENT nowhere to save it (no cache directory, or the dwz alt file
 * the DWARF needs is missing); or the file system's error. */
DS_API int ds_dso_save_index(struct ds_dso *dso, char **path_out);

/* ------------------------------------------------------------- normalize */

/* A live process's absolute addresses turned into what a profiler sends
 * wherever it symbolizes: (DSO, build ID, file offset) and the ELF virtual
 * address (what addr2line takes).  One normalizer per process: it reads
 * the process's maps once (the PROCMAP_QUERY ioctl on Linux 6.11+, else
 * /proc/PID/maps) and again only when an address is in none of them, or
 * after ds_normalizer_invalidate().  A mapped file is opened through
 * /proc/PID/map_files (the very file mapped: deleted, replaced, a memfd),
 * else /proc/PID/root/PATH (the process's mount namespace) when its device
 * and inode are those mapped, else its ELF headers are read from the
 * process's memory; the vDSO's image is read from the process.  Reading
 * another user's process needs ptrace rights (PTRACE_MODE_READ); opening
 * map_files, CAP_SYS_ADMIN (else the other ways are taken).  JIT code in
 * anonymous memory is named from the process's perf map
 * (/tmp/perf-PID.map in its mount namespace, under its own pid there).
 * Not shared by threads: one per thread, or a lock around it. */
struct ds_normalizer;

enum ds_norm_reason {
	DS_NORM_OK = 0, /* dso, build_id, file_offset, vaddr */
	DS_NORM_UNMAPPED, /* in no mapping of the process (also after a re-read) */
	DS_NORM_ANON, /* anonymous memory no perf map names ([heap], [anon:...]) */
	DS_NORM_JIT, /* anonymous, named by the process's perf map: jit_name */
	DS_NORM_NO_BUILD_ID, /* a file without a GNU build ID; dso by path when it could be opened */
	DS_NORM_KERNEL, /* a kernel address (the upper half, [vsyscall]) */
	DS_NORM_ERROR, /* error says (-ESRCH: the process is gone, -EACCES...) */
};

/* The text of a reason ("ok", "unmapped", "anonymous", "jit", "no build
 * ID", "kernel", "error"); static. */
DS_API const char *ds_norm_reason_name(enum ds_norm_reason r);

struct ds_norm_addr {
	uint64_t addr; /* as given */
	enum ds_norm_reason reason;
	int error; /* DS_NORM_ERROR: a negative errno */
	/* A reference of the caller's (ds_norm_release() puts them), NULL
	 * unless DS_NORM_OK (or NO_BUILD_ID of a file that was opened). */
	struct ds_dso *dso;
	struct ds_build_id build_id; /* size 0 unless DS_NORM_OK */
	uint64_t file_offset; /* in the mapped file (its pgoff added) */
	/* The ELF virtual address: file_offset through the file's program
	 * headers; vaddr_known false when they could not be read, or hold
	 * no such offset (file_offset still holds). */
	uint64_t vaddr;
	bool vaddr_known;
	/* The mapping's name as the process sees it ("/usr/lib/x.so",
	 * "[vdso]", "/memfd:x (deleted)"); NULL when unmapped.  Borrowed, and
	 * jit_name too: valid until the next ds_normalize() or
	 * ds_normalizer_free(). */
	const char *path;
	const char *jit_name; /* DS_NORM_JIT: the perf map's name */
	uint64_t jit_start; /* DS_NORM_JIT: where that code starts */
	uint64_t map_start, map_end; /* the mapping; 0 when unmapped */
};

struct ds_normalizer_opts {
	size_t sz;
	/* Read /proc/PID/maps' text even where PROCMAP_QUERY exists. */
	bool no_procmap_query;
	/* Do not look at the process's perf map (JIT code stays DS_NORM_ANON). */
	bool no_perf_map;
};

/* A normalizer of process pid whose DSOs go into store (borrowed: the
 * store handle must outlive the normalizer; the DSOs handed out keep the
 * store's memory as any DSO does).  NULL with errno: ESRCH no such
 * process, EACCES not allowed to read it, ENOMEM. */
DS_API struct ds_normalizer *ds_normalizer_new(struct ds_store *store, int pid,
					       const struct ds_normalizer_opts *opts);
DS_API void ds_normalizer_free(struct ds_normalizer *n);

/* What the caller knows changed: the maps are read again at the next call
 * (DS_NORM_MAPPED: it mapped or unmapped), and the files opened forgotten
 * (DS_NORM_EXEC: it exec'd; the perf map is read again too). */
#define DS_NORM_MAPPED (1u << 0)
#define DS_NORM_EXEC (1u << 1)
DS_API void ds_normalizer_invalidate(struct ds_normalizer *n, unsigned int what);

/* Normalize addrs[0..count) into out[0..count), in order.  Returns how
 * many are DS_NORM_OK, or -EINVAL (bad arguments), -ESRCH (the process is
 * gone: every answer DS_NORM_ERROR), -ENOMEM.  Every out[i] is filled
 * even then; put their DSOs with ds_norm_release(). */
DS_API int ds_normalize(struct ds_normalizer *n, const uint64_t *addrs, size_t count,
			struct ds_norm_addr *out);
/* Put the DSO references of out[0..count) (and set them NULL). */
DS_API void ds_norm_release(struct ds_norm_addr *out, size_t count);

/* A live process's absolute addresses symbolized in one call (blazesym's
 * Symbolizer::symbolize(Source::Process(pid), Input::AbsAddr)): addrs
 * normalized (a normalizer of pid made for the call, as above), grouped
 * by DSO, every DSO's debuginfo found at once (ds_store_prefetch(): local,
 * then one parallel debuginfod batch), each DSO's addresses looked up in
 * one ds_dso_symbolize_batch() (flags as there; by file offset, so
 * DS_SYM_FILE_OFFSET is implied), and answered in batch in input order:
 * answer i for addrs[i], its addr the ELF virtual address looked up (the
 * address as given where there is no file), its module the mapping's
 * name, its reason what a user can act on: DS_SYM_REASON_UNMAPPED for an
 * address in no mapping, _NO_DEBUGINFO with where the search failed, ...
 * (enum ds_sym_reason).  Returns how many were found; -EINVAL (bad
 * arguments) or -ENOMEM with no answers; -ESRCH (no such process, or
 * gone), -EACCES (not allowed to read it) or -ENOMEM with every answer (or
 * those it struck) saying it.  The DSOs are the store's: one no caller holds goes with its index when the call returns,
 * so a caller that calls again and again on one process uses the next. */
DS_API int ds_symbolize_pid(struct ds_store *store, int32_t pid, const uint64_t *addrs,
			    size_t n, unsigned int flags, struct ds_sym_batch *batch);
/* The same with a normalizer the caller keeps (ds_normalizer_new()): the
 * process's maps read once, its files and their DSOs (indexes included)
 * held from call to call.  Returns as ds_symbolize_pid(). */
DS_API int ds_normalizer_symbolize(struct ds_normalizer *n, const uint64_t *addrs, size_t count,
				   unsigned int flags, struct ds_sym_batch *batch);

/* Frames a profiler or crash handler sent from another machine: (build
 * ID, address) pairs, what a symbolization backend answers. */
struct ds_sym_ref {
	uint32_t module; /* index into the call's build IDs */
	uint32_t flags; /* DS_SYM_REF_* */
	uint64_t addr; /* an ELF virtual address, or a file offset */
};
#define DS_SYM_REF_OFFSET (1u << 0) /* addr is a file offset */
/* addr is a return address: the call before it is looked up (addr - 1),
 * as unwinders name a caller's frame; the answer's addr stays addr. */
#define DS_SYM_REF_RETURN (1u << 1)

/* Symbolize refs[0..n) of the DSOs of ids[0..nids) (found or made in
 * the store), answered in batch in input order.  The debuginfo of every
 * id not yet searched is looked for in one ds_store_prefetch() (local,
 * cache, debuginfod, all at once) before the first address is answered;
 * then each DSO's addresses are one ds_dso_symbolize_batch().  flags as
 * there (DS_SYM_FILE_OFFSET is per ref instead).  A ref whose module is
 * out of range is answered DS_SYM_ERROR (-EINVAL).  Returns how many were
 * found, or a negative error with no answers (-EINVAL, -ENOMEM).  The
 * DSOs are the store's: one no caller holds is kept as keep_dsos says
 * (ds_store_opts), else it goes with its index when the call returns. */
DS_API int ds_symbolize_build_ids(struct ds_store *store, const struct ds_build_id *ids,
				  size_t nids, const struct ds_sym_ref *refs, size_t n,
				  unsigned int flags, struct ds_sym_batch *batch);

/* --------------------------------------------------------------- profile */

/* A recording's samples with every address named: what report, annotate,
 * folded stacks, flame graphs and pprof are made of.  Each distinct
 * (DSO, address) among the samples and their callchains is one location,
 * named once: user-space DSOs in one symbolizer batch each, the kernel and
 * its modules from /proc/kallsyms (read only when there are kernel
 * samples, and only when the recording's kernel is the running one), the
 * vDSO from its image.  Function names are the ELF symbols, as perf names
 * them (DS_SYM_ELF_NAMES), demangled without their parameters as perf
 * prints them (DS_SYM_NO_PARAMS); the inline frames' names too. */
struct ds_profile;

/* file:line and inline frames for every location: the DWARF is read. */
#define DS_PROFILE_LINES (1u << 0)
/* The callers of each sample (its callchain) become locations too. */
#define DS_PROFILE_CALLCHAINS (1u << 1)
/* Names as the linker wrote them (no demangling). */
#define DS_PROFILE_MANGLED (1u << 2)

struct ds_profile_sample;
typedef int (*ds_profile_stack_fn)(void *user, const struct ds_profile_sample *s);

struct ds_profile_opts {
	size_t sz;
	unsigned int flags; /* DS_PROFILE_* */
	/* Called with a message for each DSO that could not be read and why
	 * kernel samples are unnamed (DS_LOG_INFO), and for what an option
	 * asked for and did not get, as a vmlinux of another kernel
	 * (DS_LOG_WARN); NULL: silent. */
	ds_log_fn warn;
	void *warn_user;
	/* The recorded kernel's vmlinux (perf's -k): its DWARF gives kernel
	 * samples file:line and inline frames, its symbols their names.  NULL:
	 * perf's places for the recorded release, else (DS_PROFILE_LINES) the
	 * kernel's build ID through the store.  A module's DWARF: where it is
	 * loaded now (lib/live/ksym.c). */
	const char *vmlinux;
	/* Each sample as the profile is made, handed over instead of kept:
	 * for a reader that adds the samples up its own way (folded stacks)
	 * and needs none of the profile's stacks, whose memory is most of a
	 * profile's.  Called with a stack of that one sample (count 1, its
	 * period; locs, ips and cpumodes valid during the call), whose
	 * locations' indexes are final but not yet named (ds_profile_open():
	 * until ds_profile_resolve()).  The profile then has no stacks
	 * (ds_profile_samples() is empty), only their locations.  Nonzero
	 * (a negative errno) stops the replay: the profile is not made,
	 * errno that error.  NULL: the stacks are kept. */
	ds_profile_stack_fn stack;
	void *stack_user;
};

/* One location.  Strings and frames belong to the profile. */
struct ds_profile_loc {
	size_t dso; /* index into ds_perf_session_dsos(); SIZE_MAX: no map */
	/* As the session resolved it: the file offset in the DSO; the kernel,
	 * and no map: the address. */
	uint64_t ip;
	/* The address as a virtual address of the DSO's ELF (what addr2line
	 * takes); 0 when unknown (no map, no file). */
	uint64_t vaddr;
	/* The function: the outermost frame, named after its ELF symbol;
	 * NULL: unknown.  function_start is a virtual address. */
	const char *function;
	uint64_t function_start;
	/* With DS_PROFILE_LINES: the frames, innermost first, the last being
	 * function's own with the line of the outermost call (nframes 1: not
	 * in inlined code); 0 where nothing is known.  Without: 0. */
	size_t nframes;
	const struct ds_frame *frames;
};

/* The samples of one stack: every sample of one event, thread, thread
 * name and callchain is one entry, their count and periods summed.  locs[0]
 * is where the samples were taken, then (with DS_PROFILE_CALLCHAINS) the
 * callers, outward: the callchain without its first entry where that is
 * the sampled address itself, as the kernel writes it.  ips[i] is the raw
 * address of locs[i] and cpumodes[i] its context
 * (PERF_RECORD_MISC_CPUMODE_MASK values; [0] the sample's). */
struct ds_profile_sample {
	uint64_t count, period;
	int32_t pid, tid;
	unsigned int attr; /* which event */
	const char *comm; /* the thread's name then; NULL: unknown */
	bool callchain; /* the samples had a callchain (of the address alone, maybe) */
	/* Its first entry was the sampled address, left out of locs (perf's
	 * callchains of cpu-clock and frame pointers always begin so). */
	bool leaf_in_callchain;
	/* The last nunwound entries of the callchain came from unwinding the
	 * user stack (--call-graph dwarf), not from the recording. */
	uint16_t nunwound;
	size_t nlocs;
	const uint32_t *locs; /* indexes of ds_profile_locs() */
	const uint64_t *ips;
	const uint16_t *cpumodes;
};

/* Read every sample of the session and name every location.  The
 * session must outlive the profile; prefetch its debuginfo first to have
 * it all fetched in one batch.  NULL with errno (ENOMEM) on failure; a
 * DSO that cannot be read leaves its locations unnamed, it is no
 * failure. */
DS_API struct ds_profile *ds_profile_new(struct ds_perf_session *s,
					 const struct ds_profile_opts *opts);
/* A recording replayed straight into a profile: the session keeps no
 * sample (the profile's stacks are all that is left of them), so a long
 * recording takes a fraction of the memory.  Then, in this order: the
 * session (borrowed, freed with the profile) for its DSOs and to prefetch
 * their debuginfo, and ds_profile_resolve() to name the locations (before
 * it, every function is NULL).  NULL with errno, err saying what was
 * wrong with the recording. */
DS_API struct ds_profile *ds_profile_open(struct ds_context *ctx, const struct ds_perf_data *p,
					  const struct ds_perf_session_opts *session_opts,
					  const struct ds_profile_opts *opts, char *err,
					  size_t errlen);
DS_API struct ds_perf_session *ds_profile_session(const struct ds_profile *p);
/* Name every location (done by ds_profile_new()); 0 or -ENOMEM. */
DS_API int ds_profile_resolve(struct ds_profile *p);
DS_API void ds_profile_free(struct ds_profile *p);
/* The stacks, in the order of their first sample, and the locations;
 * *out borrowed. */
DS_API size_t ds_profile_samples(const struct ds_profile *p,
				 const struct ds_profile_sample **out);
DS_API size_t ds_profile_locs(const struct ds_profile *p, const struct ds_profile_loc **out);
/* The times (PERF_SAMPLE_TIME, perf's clock) of the first and the last
 * sample; false (and 0s) when no sample has one. */
DS_API bool ds_profile_times(const struct ds_profile *p, uint64_t *first, uint64_t *last);
/* perf report's --max-stack N: whether perf keeps frame `frame` of stack
 * s's callchain (an index of s->locs; 0: the callchain's copy of the
 * sampled address, which is kept or not like the others; the sample's own
 * row is always there).  perf counts the callchain's entries (not the
 * context markers, not inline frames) from the sample outward, or with
 * caller order (-G, children) from the outermost caller in; the frames of
 * an unwound user stack are counted apart, always from the sample
 * outward, N of them too.  SIZE_MAX: every frame; 0: none. */
DS_API bool ds_profile_frame_kept(const struct ds_profile_sample *s, size_t frame,
				  size_t max_stack, bool caller);
/* perf's short name of a DSO: a file's base name, "[kernel.kallsyms]",
 * "[vdso]" as they are, a kernel module as "[name]"; "[unknown]" for
 * SIZE_MAX.  Valid with the profile. */
DS_API const char *ds_profile_dso_name(const struct ds_profile *p, size_t dso);

/* -------------------------------------------------------------- annotate */

/* A profile's samples by function and source line, what "dsostore
 * annotate" prints.  A sample counts for the function it was taken in
 * (its first location's function, the ELF symbol) and, within that, for
 * the file and line of the location's innermost frame: a sample in code
 * inlined from a header counts for the header's line, under the function
 * it was inlined into (report --inline's attribution).  Each event apart.
 * Samples whose location has no function are left out.  Without
 * DS_PROFILE_LINES every line is unknown.  Borrows the profile's strings:
 * free it before the profile. */
struct ds_annotation;

struct ds_annotate_line {
	const char *file; /* as the DWARF names it (comp_dir joined); NULL: unknown */
	unsigned int line; /* 0: unknown */
	uint64_t samples, period;
};

struct ds_annotate_func {
	unsigned int attr; /* the event */
	size_t dso; /* index into ds_perf_session_dsos(); SIZE_MAX: no map */
	const char *function;
	uint64_t function_start; /* a virtual address of the DSO */
	uint64_t samples, period; /* the sums of its lines' */
	/* Its lines with samples, by file name and line, unknown ones last. */
	size_t nlines;
	const struct ds_annotate_line *lines;
};

/* Count the profile's samples; NULL with errno (ENOMEM, EINVAL). */
DS_API struct ds_annotation *ds_profile_annotate(const struct ds_profile *p);
/* The functions with samples: by event, then the most samples first.
 * Returns the count; *out borrowed from the annotation. */
DS_API size_t ds_annotation_funcs(const struct ds_annotation *a,
				  const struct ds_annotate_func **out);
DS_API void ds_annotation_free(struct ds_annotation *a);

/* The samples of one address of a function. */
struct ds_annotate_addr {
	uint64_t vaddr; /* a virtual address of the DSO's ELF */
	uint64_t samples, period;
};
/* The addresses of funcs[func] (ds_annotation_funcs()) where samples
 * were taken, ascending; an address the session could not place in its
 * ELF (vaddr unknown: no file) is left out.  Returns the count; *out
 * borrowed from the annotation. */
DS_API size_t ds_annotation_addrs(const struct ds_annotation *a, size_t func,
				  const struct ds_annotate_addr **out);

/* ----------------------------------------------------------- disassembly */

/* One function of a DSO instruction by instruction, what perf annotate
 * lists: disassembled in process (capstone; x86-64, i386 and AArch64,
 * AT&T syntax on x86 as objdump and perf print it), each instruction with
 * the line table's file:line of its address (the innermost inline frame,
 * as objdump -l gives it), its branch target, and the samples given for
 * it.  The code bytes are the executable's: the debuginfo's when it has
 * them, else the binary's (the DSO's path on this machine when it is the
 * file of the build ID, else found locally or fetched from debuginfod by
 * build ID, as the store finds executables). */
struct ds_disasm;

/* ds_insn.flags */
#define DS_INSN_JUMP (1u << 0) /* a jump, conditional or not */
#define DS_INSN_CALL (1u << 1)
#define DS_INSN_RET (1u << 2)
#define DS_INSN_TARGET (1u << 3) /* target is known (a direct branch) */
#define DS_INSN_INSIDE (1u << 4) /* its target is an instruction of this function */
#define DS_INSN_LANDING (1u << 5) /* a jump of this function lands here */
/* Bytes the disassembler cannot decode: a VEX or EVEX instruction whole
 * (its length from its encoding; mnemonic "(vex)", "(evex)": capstone 4
 * knows no AVX-512 mask instruction), else one byte ("(bad)"); the
 * operands are the bytes in hex. */
#define DS_INSN_BAD (1u << 6)

struct ds_insn {
	uint64_t addr; /* virtual address */
	uint32_t size;
	unsigned int flags; /* DS_INSN_* */
	const char *mnemonic; /* "mov", "jne", "ret"...  (capstone's spelling) */
	const char *operands; /* "%rsi, %rax"; "" when none */
	uint64_t target; /* DS_INSN_TARGET: where it branches to */
	/* The function holding target and target's offset in it ("puts@plt",
	 * ELF names as perf gives them); NULL: unknown or no target. */
	const char *target_function;
	uint64_t target_offset;
	/* The line table's row for addr: NULL and 0 where none. */
	const char *file;
	unsigned int line;
	uint64_t samples, period; /* of the given addresses */
};

struct ds_disasm_opts {
	size_t sz;
	/* The function's size in bytes; 0: its ELF symbol's (the symbol
	 * starting at start, the one with a size; a symbol of size 0 reaches
	 * to the next symbol or the end of its section, as perf takes it). */
	uint64_t size;
	/* The samples to count per instruction (ascending; samples at an
	 * address inside no instruction's first byte are counted in
	 * ds_disasm_info.samples_elsewhere). */
	const struct ds_annotate_addr *addrs;
	size_t naddrs;
};

/* Disassemble [start, start + size) of the DSO.  0 and *out; -ENOTSUP: no
 * disassembler for the ELF's machine; -ELIBACC: capstone's library (loaded
 * at the first call: libcapstone.so.4) could not be; -ENOENT: no file with the code
 * bytes (a debug file alone, nothing found); -ERANGE: start is in no
 * section with code bytes, or no symbol there to give the size; -EINVAL,
 * -ENOMEM.  The DSO's symbolizer names the lines and targets (its
 * debuginfo found as ds_dso_debuginfo() finds it). */
DS_API int ds_dso_disassemble(struct ds_dso *dso, uint64_t start,
			      const struct ds_disasm_opts *opts, struct ds_disasm **out);
/* The instructions in address order; *out borrowed from d. */
DS_API size_t ds_disasm_insns(const struct ds_disasm *d, const struct ds_insn **out);
struct ds_disasm_info {
	uint64_t start, size;
	const char *code_path; /* the file the bytes were read from */
	const char *arch; /* "x86-64", "i386", "aarch64" */
	uint64_t samples_elsewhere, period_elsewhere;
};
DS_API void ds_disasm_info(const struct ds_disasm *d, struct ds_disasm_info *out);
DS_API void ds_disasm_free(struct ds_disasm *d);

/* ------------------------------------------------------------ call tree */

/* Stacks of a profile aggregated into a call tree keyed by function, the
 * tree perf report draws its call graphs from: a path of frames added
 * walks down from the root, one node per function (a named frame is its
 * (DSO, function), wherever in the function the address is; an unnamed
 * one its (DSO, raw address)), each node counting the samples and period
 * of the paths through it and of those that end at it.  Node 0 is the
 * root: no function, the sum of every path added. */
struct ds_calltree;

/* The paths start at the outermost caller and run toward the sampled
 * function (perf's caller order); without, they start at the sampled
 * function and run outward through its callers (callee order). */
#define DS_CALLTREE_CALLER (1u << 0)

struct ds_calltree_node {
	size_t dso; /* index into ds_perf_session_dsos(); SIZE_MAX: no map */
	const char *function; /* the profile's name; NULL: unnamed (and the root) */
	/* Named: the function's start (function_start of its locations);
	 * unnamed: the address as sampled (ds_profile_sample ips). */
	uint64_t addr;
	uint32_t loc; /* the location that made it first; UINT32_MAX: the root */
	uint32_t parent; /* UINT32_MAX: the root */
	uint64_t count, period; /* of the paths through the node */
	uint64_t self_count, self_period; /* of the paths that end at it */
	uint32_t nchildren;
	/* Heaviest (period) first; ties in descending (dso, addr), the order
	 * perf prints them in. */
	const uint32_t *children;
};

/* An empty tree over the profile's locations (the profile must outlive
 * it).  NULL with errno EINVAL or ENOMEM; free accepts NULL. */
DS_API struct ds_calltree *ds_calltree_new(const struct ds_profile *p, unsigned int flags);
DS_API void ds_calltree_free(struct ds_calltree *t);
/* Add the frames [first, first + n) of the stack s (leaf first, as
 * s->locs), with its count and period.  n 0 adds nothing.  0; -EINVAL
 * (frames outside the stack, locations the profile does not have) or
 * -ENOMEM, the tree unchanged. */
DS_API int ds_calltree_add(struct ds_calltree *t, const struct ds_profile_sample *s,
			   size_t first, size_t n);
/* The nodes, *out[0] the root; borrowed, children included, until the next
 * ds_calltree_add() or ds_calltree_free(). */
DS_API size_t ds_calltree_nodes(struct ds_calltree *t, const struct ds_calltree_node **out);

/* ---------------------------------------------------------- report tables */

/* perf report's tables: the samples of one event of a profile gathered
 * into rows by sort keys (perf's --sort), in perf's order.  Two samples
 * are one row when every key is equal: the DSO's short name; the symbol
 * (the function of that DSO, or an unnamed address); perf's srcline;
 * the thread's name.  With DS_TABLE_CHILDREN, the callers of each sample
 * are rows too, and each row gets perf's Children period: that of every
 * sample whose address or callchain passes through it, once a sample. */
enum ds_sort_key {
	DS_SORT_DSO,
	DS_SORT_SYM,
	DS_SORT_SRCLINE, /* needs a profile made with DS_PROFILE_LINES */
	DS_SORT_COMM,
	/* perf's "pid": the thread (its tid; perf's column "TID:COMM"), by
	 * number */
	DS_SORT_PID,
};

/* perf's --children (the profile made with DS_PROFILE_CALLCHAINS). */
#define DS_TABLE_CHILDREN (1u << 0)
/* Each row's inline chains (perf's --inline): needs DS_PROFILE_LINES. */
#define DS_TABLE_INLINES (1u << 1)
/* The callchains are walked from the sample outward (perf's -g callee,
 * and its default without children): with children, a caller without a
 * map takes the level of the entry perf filled before it, and which
 * entries --max-stack keeps depends on it too. */
#define DS_TABLE_CALLEE (1u << 2)
/* max_stack below is set (perf's --max-stack, 0 included); without it,
 * every entry counts. */
#define DS_TABLE_MAX_STACK (1u << 3)

struct ds_table_opts {
	size_t sz;
	/* NULL: dso then sym (not perf's default, comm,dso,sym: the keys
	 * this had before DS_SORT_COMM) */
	const enum ds_sort_key *keys;
	size_t nkeys; /* at most 8 */
	unsigned int flags; /* DS_TABLE_* */
	/* With DS_TABLE_MAX_STACK, perf's --max-stack: the callchain entries
	 * the Children periods and ds_table_row_of() see
	 * (ds_profile_frame_kept()). */
	size_t max_stack;
	/* perf report's filters (--comm, --pid, --tid, --dsos, --symbols):
	 * when set, a stack for which keep() returns false is in no row (not
	 * its own, not its callers' Children), but still in the event's
	 * totals, so that the rows' shares are of every sample as perf's. */
	bool (*keep)(void *user, const struct ds_profile *p, const struct ds_profile_sample *s);
	void *keep_user;
};

/* The samples of one row at one inline chain (innermost frame first, the
 * last the function holding them; the profile's frames). */
struct ds_table_inline {
	uint64_t samples, period;
	size_t nframes;
	const struct ds_frame *frames;
};

/* One row; what it shows is that of its first sample.  Strings belong to
 * the profile or the table. */
struct ds_table_row {
	uint64_t samples, period;
	uint64_t children; /* DS_TABLE_CHILDREN: perf's Children period */
	size_t dso; /* index into ds_perf_session_dsos(); SIZE_MAX: no map */
	const char *dso_name; /* perf's short name; NULL: no map ("[unknown]") */
	/* perf's level: 'k' kernel, '.' user, 'g' and 'u' guest, 'H' other */
	char level;
	const char *function; /* NULL: unnamed */
	uint64_t function_start;
	/* The address perf shows for an unnamed row: the file offset of a
	 * sample, the raw address of a caller. */
	uint64_t ip;
	/* DS_SORT_SRCLINE: perf's srcline ("file:line", "SYM+OFFSET",
	 * "DSO[ADDR]", "??:0"); else NULL. */
	const char *srcline;
	/* DS_SORT_COMM, DS_SORT_PID: the thread's name (at the row's first
	 * sample); NULL: none (perf's ":PID") */
	const char *comm;
	int32_t pid; /* the process: for ":PID" (comm NULL), and with DS_SORT_PID */
	/* DS_TABLE_INLINES: the row's samples in inlined code, by chain,
	 * heaviest first. */
	size_t ninlines;
	const struct ds_table_inline *inlines;
	int32_t tid; /* DS_SORT_PID: the thread; else 0 */
};

struct ds_table;

/* The table of event attr (the profile must outlive it).  NULL with errno
 * EINVAL (keys) or ENOMEM. */
DS_API struct ds_table *ds_table_new(const struct ds_profile *p, unsigned int attr,
				     const struct ds_table_opts *opts);
DS_API void ds_table_free(struct ds_table *t);
/* The rows in perf's order (hists__output_resort(): the Children period
 * with children, then the period, descending; then by key); borrowed. */
DS_API size_t ds_table_rows(const struct ds_table *t, const struct ds_table_row **out);
/* The event's samples and period (every sample of it counted once). */
DS_API void ds_table_total(const struct ds_table *t, uint64_t *samples, uint64_t *period);
/* The row (index of ds_table_rows()) that stack `stack` of the profile
 * counts for: own, the sample's own row; else that of element `frame` of
 * perf's callchain (frame 0 the callchain's copy of the sampled address,
 * then the stack's callers; the rows exist with DS_TABLE_CHILDREN).
 * SIZE_MAX: another event's stack, or a frame it does not have. */
DS_API size_t ds_table_row_of(struct ds_table *t, size_t stack, size_t frame, bool own);

/* ---- The kernel
 *
 * Kernel addresses (this boot's, as /proc/kallsyms has them) to names and,
 * when the vmlinux's DWARF is found, file:line and inline frames.  Names
 * from kallsyms (of the context's kernel root, or its kallsyms file: see
 * ds_context_opts), perf's pick among aliases; a module's symbols with the
 * module.  The vmlinux: opts->vmlinux, else perf's places for the running
 * kernel's (/usr/lib/debug/boot/vmlinux-RELEASE ...; its build ID must be
 * /sys/kernel/notes'; RELEASE: uname's, or the kernel root's
 * proc/sys/kernel/osrelease), else by that build ID through the store (debug
 * directories, perf's cache, debuginfod); looked up at the address minus
 * the KASLR offset (_text in kallsyms minus _text in the vmlinux).  A
 * module's: by the build ID of /sys/module/M/notes (below
 * /usr/lib/debug/lib/modules/RELEASE, else through the store), its
 * sections placed where /sys/module/M/sections says (the .ko is relocated
 * in memory).  Every path is under the context's kernel root. */
struct ds_kernel;

struct ds_kernel_opts {
	size_t sz;
	const char *vmlinux; /* a vmlinux with DWARF (perf's -k); NULL: searched */
};

/* Reads nothing yet.  The store must outlive it.  NULL with errno. */
DS_API struct ds_kernel *ds_kernel_new(struct ds_store *store, const struct ds_kernel_opts *opts);
DS_API void ds_kernel_free(struct ds_kernel *k);
/* The kernel's build ID (from the kernel root's sys/kernel/notes):
 * 0, -ENODATA. */
DS_API int ds_kernel_build_id(struct ds_kernel *k, struct ds_build_id *out);
/* addr's answer (DS_SYM_FOUND with frames, or DS_SYM_NOT_FOUND: below
 * every symbol), valid until the next call or a reuse of batch (which
 * holds DWARF answers' strings), and its module as perf names it
 * ("[kernel.kallsyms]", "[ext4]"), valid as long.  flags: DS_SYM_INLINES
 * and the naming flags as for a DSO.  0; -EPERM: kallsyms shows no
 * addresses (kptr_restrict); -errno reading it. */
DS_API int ds_kernel_symbolize(struct ds_kernel *k, uint64_t addr, unsigned int flags,
			       struct ds_sym_batch *batch, const struct ds_sym_answer **answer,
			       const char **module);

/* ----------------------------------------------------------------- stack */

/* A core file (what the kernel, gcore or systemd-coredump wrote), read by
 * our own bounded reader: the ELF header, the program headers, the
 * PT_NOTE segments (NT_PRSTATUS, NT_SIGINFO, NT_PRPSINFO, NT_AUXV,
 * NT_FILE) and, on demand, the memory of its PT_LOAD segments.  Nothing
 * beyond the file is read, no size field is trusted for an allocation; a
 * malformed core gets -EBADMSG with err saying what and where, a truncated
 * one (memory segments beyond its end) is read as far as it goes. */
struct ds_core;

/* Whether a module's file was found, and how. */
enum ds_core_file {
	DS_CORE_FILE_NONE = 0, /* not looked for yet, or no build ID to look for */
	DS_CORE_FILE_AT_PATH, /* the file at its path has the module's build ID */
	DS_CORE_FILE_FOUND, /* that one is missing or another: found elsewhere */
	DS_CORE_FILE_MISSING, /* not found anywhere (the path's file may differ) */
};

/* One module of the core, as eu-unstrip -n --core lists them: each file
 * NT_FILE maps from its offset 0 whose first page in the core's memory is
 * an ELF header, and the vDSO (NT_AUXV's AT_SYSINFO_EHDR).  Strings
 * borrowed: valid until ds_core_close(). */
struct ds_core_module {
	uint64_t start; /* where its first mapping begins */
	uint64_t end; /* the end of the last mapping of the file (vDSO: of its PT_LOADs) */
	uint64_t bias; /* load bias: start minus its first PT_LOAD's page */
	struct ds_build_id build_id; /* from its note in the core's memory; size 0: none */
	uint64_t build_id_addr; /* where those bytes are in memory */
	const char *path; /* as NT_FILE names it; "[vdso]" */
	bool vdso;
	/* After ds_core_find_files(): */
	enum ds_core_file file_state;
	const char *file; /* a file with its build ID (its code); NULL: none */
	const char *debuginfo; /* its debuginfo; NULL: none */
	const char *why; /* when either is missing: what was refused or failed */
	struct ds_dso *dso; /* the store's DSO, borrowed; NULL without build ID */
};

/* What the core says about the process and its crash. */
struct ds_core_info {
	int32_t pid;
	int32_t crash_tid; /* the thread that took the signal (the first NT_PRSTATUS) */
	int signo; /* NT_SIGINFO's, else that NT_PRSTATUS; 0: none */
	int si_code;
	uint64_t fault_addr; /* for SIGSEGV, SIGBUS, SIGILL, SIGFPE from the kernel */
	bool has_fault_addr;
	const char *fname; /* NT_PRPSINFO's command name; NULL: none */
	const char *psargs; /* its arguments (80 bytes at most); NULL: none */
	size_t nthreads; /* NT_PRSTATUS notes */
	const int32_t *tids; /* in note order: crash_tid first */
	uint16_t machine; /* e_machine */
	bool is64;
	/* Bytes of memory the program headers place beyond the end of the
	 * file: a truncated core (RLIMIT_CORE, a full disk, a cut copy);
	 * what lies there reads as absent. */
	uint64_t missing_bytes;
	uint64_t size; /* of the file */
};

/* Open a core file (the memory form copies nothing: buf must outlive the
 * core).  0; -EBADMSG (err says why), -ENOEXEC not an ELF core, or errno
 * from open/read. */
DS_API int ds_core_open(const char *path, struct ds_core **out, char *err, size_t errlen);
DS_API int ds_core_open_mem(const void *buf, size_t len, struct ds_core **out, char *err,
			    size_t errlen);
DS_API void ds_core_close(struct ds_core *core);
DS_API void ds_core_info(const struct ds_core *core, struct ds_core_info *out);
/* The modules in address order; *out borrowed.  Returns the count. */
DS_API size_t ds_core_modules(const struct ds_core *core, const struct ds_core_module **out);
/* Read len bytes of the process's memory at addr from the core.  Returns
 * the number of bytes read (short: the rest is not in the core), 0 none. */
DS_API size_t ds_core_read(const struct ds_core *core, uint64_t addr, void *buf, size_t len);

/* Use the ELF file at path (a copy of the program or a library, --exe) as
 * the file of the module whose build ID is its own: for the unwinder and
 * as the place the store looks for its debuginfo first.  Call it before
 * ds_core_find_files().  0; -ENOENT: no module has its build ID; errors
 * of reading its build ID. */
DS_API int ds_core_use_file(struct ds_core *core, const char *path);

/* Put every module with a build ID into store and find, for each, its
 * file (the one at its path when its build ID is the module's, else the
 * executable by build ID: build-id directories, the debuginfod cache) and
 * its debuginfo (as ds_dso_debuginfo()); what is not found here comes in
 * one parallel debuginfod batch, executables and debuginfo together, with
 * opts' progress.  Returns how many modules with a build ID are left
 * without file or debuginfo, or a negative error (-ECANCELED). */
DS_API int ds_core_find_files(struct ds_core *core, struct ds_store *store,
			      const struct ds_fetch_opts *opts);

/* A frame of an unwound thread: pc as the unwinder gives it, addr the one
 * symbolized (pc - 1 for a return address: a frame that is not the
 * activation of a signal or the innermost), its module and what it names
 * there, inline frames expanded (innermost first). */
struct ds_stack_frame {
	uint64_t pc;
	uint64_t addr;
	bool activation; /* pc is where execution was, not a return address */
	const char *module; /* module's path; NULL: no module there */
	const struct ds_build_id *build_id; /* NULL: none known */
	uint64_t module_addr; /* addr in the module's ELF (addr - bias) */
	const struct ds_frame *frames; /* nframes, innermost first; 0: unknown */
	uint32_t nframes;
	bool from_symtab; /* names from ELF symbols, no DWARF */
};

struct ds_stack_thread {
	int32_t tid;
	int signo; /* this thread's pending signal (NT_PRSTATUS' cursig); 0 */
	bool crashed; /* the thread that took the signal */
	size_t nframes;
	const struct ds_stack_frame *frames; /* outermost last */
	int error; /* 0, or why unwinding stopped early (libdwfl's) */
	const char *error_msg; /* NULL when error is 0 */
};

/* Receives each thread (crashing thread first, then in note order);
 * everything borrowed for the call.  Non-zero stops the walk. */
typedef int (*ds_stack_thread_fn)(void *user, const struct ds_stack_thread *t);

struct ds_stack_opts {
	size_t sz;
	/* ds_dso_symbolize() flags; 0: DS_SYM_INLINES | DS_SYM_DEMANGLE |
	 * DS_SYM_ELFUTILS (eu-stack's answers) */
	unsigned int sym_flags;
	unsigned int max_frames; /* per thread (0: 256) */
	/* When it becomes non-zero (a signal handler's flag), unwinding
	 * stops, a live process is detached, and the call returns
	 * -ECANCELED. */
	const volatile int *cancel;
};

/* Unwind every thread of the core with libdwfl (CFI from .eh_frame and
 * .debug_frame, the core's registers and memory), its files answered from
 * the store as ds_core_find_files() found them (call it first), each
 * frame symbolized by the store's DSO.  Returns the callback's non-zero
 * value, 0, or a negative error (err says libdwfl's words). */
DS_API int ds_core_backtrace(struct ds_core *core, struct ds_store *store,
			     const struct ds_stack_opts *opts, ds_stack_thread_fn fn, void *user,
			     char *err, size_t errlen);

/* The same for a live process: attached with ptrace (every thread
 * stopped) for the unwinding, detached before returning, also when the
 * callback stops the walk.  Its files are those /proc/PID/maps names
 * (through /proc/PID/root), its debuginfo the store's (fetched in one
 * batch first, with opts' progress: ds_fetch_opts).  -EPERM: attaching
 * refused (ptrace_scope, another tracer). */
DS_API int ds_proc_backtrace(int32_t pid, struct ds_store *store,
			     const struct ds_stack_opts *opts, const struct ds_fetch_opts *fopts,
			     ds_stack_thread_fn fn, void *user, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* DSOSTORE_H */
