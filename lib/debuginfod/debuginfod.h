/* SPDX-License-Identifier: MIT */
/* The debuginfod layer's offer to the layers above: the context, the
 * debuginfod client cache and the fetcher. */
#ifndef DS_DEBUGINFOD_H
#define DS_DEBUGINFOD_H

#include "elfinfo.h"

#define DS_MISS_TTL_DEFAULT 600

/* ---- cache (cache.c) */

/* A cache file that passed the hit checks (see cache.c). */
struct ds_cache_checked {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t ctime_s, ctime_ns;
};
#define DS_CACHE_CHECKED 512

struct ds_cache {
	pthread_mutex_t lock; /* opening the root */
	const struct ds_log *log; /* the context's */
	uid_t euid; /* who may own what we trust (besides root) */
	atomic_bool root_trusted; /* checked once by a lookup */
	pthread_mutex_t checked_lock;
	struct ds_cache_checked checked[DS_CACHE_CHECKED];
	char *root;
	atomic_int rootfd; /* 0 until opened; reopened if the cache is removed */
	int64_t miss_s, max_unused_age_s, clean_interval_s;
	/* Saved symbol indexes (symfile.c): switched off, and where those
	 * of local debuginfo go (NULL: nowhere). */
	bool symindex_off;
	char *symindex_root;
	/* Its first symindex_base bytes are the directory the user named
	 * (followed as the path says); the components after it are ours,
	 * never followed through a symlink. */
	size_t symindex_base;
};

int ds__cache_init(struct ds_cache *c, const char *opt_path, const struct ds_log *log);
void ds__cache_release(struct ds_cache *c);
int ds__cache_open_root(struct ds_cache *c);
/* The entry's file name for an artifact in *out; -EINVAL for an arg that
 * would lead elsewhere ("." or ".." components, a relative source path,
 * a "/" in a section name), -ENAMETOOLONG when it cannot be a file
 * name. */
int ds__cache_entry_name(enum ds_artifact what, const char *arg, char **out);
int ds__cache_lookup(struct ds_cache *c, const struct ds_build_id *bid, const char *hex,
		     enum ds_artifact what, const char *name, char **path_out);
int ds__cache_entry_open(struct ds_cache *c, const char *hex, bool lock, int *dirfd_out);
void ds__cache_entry_prune(struct ds_cache *c, const char *hex);
int ds__cache_tmp_open(int dirfd, const char *name, char *tmpname, size_t len);
/* Bytes in the temporary files of name in the entry (a download of
 * another process, ours or elfutils', on its way). */
uint64_t ds__cache_tmp_bytes(struct ds_cache *c, const char *hex, const char *name);
/* checked: fd passed fetch.c's verify() (ds__elf_artifact_bad() for what
 * name is): remembered, so that a lookup of it does not check it again. */
int ds__cache_commit(struct ds_cache *c, const char *hex, int dirfd, const char *tmpname,
		     const char *name, int fd, time_t mtime, bool checked);
void ds__cache_abort(int dirfd, const char *tmpname);
int ds__cache_write_range(struct ds_cache *c, const char *hex, const char *name, int from,
			  uint64_t off, uint64_t len);
int ds__cache_write_miss(int dirfd, const char *name);
/* hdr-<name> of the entry (elfutils 0.193's header cache, see cache.c):
 * written from a download's x-debuginfod-* block (NULL or "": an old one
 * removed), best effort; read into *out (malloc()ed, NUL-terminated),
 * -ENOENT when there is none; with check, only beside the artifact name
 * as ds__cache_lookup() checked it, else -EAGAIN (then look it up). */
void ds__cache_write_hdr(struct ds_cache *c, const char *hex, const char *name, const char *hdrs);
int ds__cache_read_hdr(struct ds_cache *c, const char *hex, const char *name, bool check,
		       char **out);
/* The bytes of the regular file name in dirfd (not followed if a
 * symlink), at most max of them: malloc()ed, NUL-terminated, *len bytes;
 * NULL: none, empty, not regular, bigger, or no memory. */
char *ds__cache_read_small(int dirfd, const char *name, size_t max, size_t *len);
int ds__cache_stats(struct ds_cache *c, struct ds_cache_stats *out);
int ds__cache_clean(struct ds_cache *c, bool force);
/* The saved indexes' switch and directory: mode > 0 on, < 0 off, 0 as
 * $DSOSTORE_SYMINDEX says (on unless "0"); opt_path NULL: as
 * $DSOSTORE_SYMINDEX_PATH, else $XDG_CACHE_HOME/dsostore/index, else
 * ~/.cache/dsostore/index. */
int ds__cache_symindex_init(struct ds_cache *c, const char *opt_path, int mode);
/* The directory of saved indexes of local debuginfo, opened (made first,
 * 0700, with create) and checked as the cache's directories are: each
 * component after the user's (the "dsostore" and "index" of
 * $XDG_CACHE_HOME/dsostore/index, the last one of $DSOSTORE_SYMINDEX_PATH)
 * opened without following a symlink and trusted.  -ELOOP: one is a
 * symlink; -EACCES: one is not trusted (both logged). */
int ds__cache_symindex_dir(struct ds_cache *c, bool create, int *dirfd_out);
/* The cache's rule for what it trusts, for a directory or a file (a saved
 * index, mapped: its owner could change or cut it under the mapping):
 * owned by us or root, and writable by neither group nor others.  NULL,
 * or what is wrong with st (in buf, len bytes). */
const char *ds__cache_untrusted(const struct ds_cache *c, const struct stat *st, char *buf,
				size_t len);
/* Pieces of the cache's own that the writer of perf's build-id cache
 * (lib/perf/perf_buildid_cache.c) uses too.  mkdir -p of path with mode;
 * "." or ".." (n bytes at c); a temporary name <name>.<6 random
 * characters> for the attempt'th try; a temporary file of that name made
 * with mode (its fd; the name in tmpname); all of from's bytes appended to
 * to. */
int ds__cache_mkdirs(const char *path, mode_t mode);
bool ds__cache_bad_component(const char *c, size_t n);
int ds__cache_tmp_name(const char *name, int attempt, char *tmpname, size_t len);
int ds__cache_tmp_open_mode(int dirfd, const char *name, mode_t mode, char *tmpname, size_t len);
int ds__cache_copy_fd(int from, int to);

/* ---- fetch (fetch.c) */

struct ds_fetcher;
struct ds_fetch_config {
	char **urls; /* NULL-terminated */
	int timeout_s, connect_timeout_s, maxtime_s, retry_limit;
	int64_t maxsize;
	uint64_t source_maxsize; /* 0: none */
	unsigned int max_transfers, max_per_server;
	char **headers; /* "Name: value", NULL-terminated */
	unsigned char *ima; /* each server's enum ds_ima_policy (ima.h) */
	char *ima_cert_path; /* DEBUGINFOD_IMA_CERT_PATH's directories; NULL: none */
};

/* Reads the environment for what opts leave unset. */
int ds__fetch_config_init(struct ds_fetch_config *cfg, const struct ds_context_opts *opts,
			  const struct ds_log *log);
void ds__fetch_config_release(struct ds_fetch_config *cfg);
void ds__fetcher_free(struct ds_fetcher *f);
/* Extra request headers a caller gives (ds_fetch_opts.headers,
 * ds_metadata_opts.headers): each "Name: value", no CR or LF. */
bool ds__fetch_valid_headers(const char *const *h);

/* ---- metadata (metadata.c) */

/* fnmatch(pattern, s, FNM_PATHNAME) in O(len(pattern) x len(s)): the
 * "glob" key of /metadata (see metadata.c for what is not supported). */
bool ds__metadata_glob(const char *pattern, const char *s);

/* ---- context (context.c) */

struct ds_found;

struct ds_context {
	atomic_int refcnt; /* the caller's handle + one per store */
	char **debug_dirs; /* NULL-terminated, copied */
	char *perf_buildid_dir; /* NULL: disabled */
	struct ds_dirindex *dirindex; /* borrowed (ds_context_opts'); NULL: none */
	char *kallsyms; /* NULL: the kernel root's /proc/kallsyms */
	char *kernel_root; /* NULL: "/" (the running kernel's files) */
	int miss_ttl_s; /* < 0: misses are not remembered */
	struct ds_log log;

	struct ds_cache cache;
	struct ds_fetch_config fetch_cfg;
	pthread_mutex_t fetcher_lock; /* creating the fetcher */
	struct ds_fetcher *_Atomic fetcher; /* started on first use */
	atomic_uint_fast64_t cache_hits; /* answered by the caller's thread */
	const volatile int *cancel; /* ds_context_opts' */
};

/* Whether the host asked to stop (ds_context_opts.cancel). */
static inline bool ds__cancelled(const struct ds_context *ctx)
{
	return ctx && ctx->cancel && *ctx->cancel;
}

/* The context's fetcher, started on first use; NULL with *err set. */
struct ds_fetcher *ds__fetcher(struct ds_context *ctx, int *err);
/* Blocking fetch used by the store: cache, then servers.  *found is
 * opened and verified like a local candidate. */
int ds__fetch_found(struct ds_context *ctx, const struct ds_build_id *bid, struct ds_found *found,
		    struct ds_strbuf *why);
/* The same for a request ds_fetch_batch() has answered: its file opened
 * and checked (found->source: cache or download), or its error. */
int ds__fetch_found_req(struct ds_context *ctx, const struct ds_fetch_req *r,
			struct ds_found *found, struct ds_strbuf *why);

struct ds_context *ds__context_get(struct ds_context *ctx);
void ds__context_put(struct ds_context *ctx);

#define ds__log(ctx, level, ...) ds__logf((ctx) ? &(ctx)->log : NULL, level, __VA_ARGS__)
#define ds_err(ctx, ...) ds__log(ctx, DS_LOG_ERROR, __VA_ARGS__)
#define ds_warn(ctx, ...) ds__log(ctx, DS_LOG_WARN, __VA_ARGS__)
#define ds_info(ctx, ...) ds__log(ctx, DS_LOG_INFO, __VA_ARGS__)
#define ds_debug(ctx, ...) ds__log(ctx, DS_LOG_DEBUG, __VA_ARGS__)

#endif
