/* SPDX-License-Identifier: MIT */
/* Library-internal declarations shared between modules.  Nothing here is
 * exported; the public API is include/dsostore.h. */
#ifndef DS_INTERNAL_H
#define DS_INTERNAL_H

#include "dsostore.h"
#include "util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Read a field of a caller's options struct only if the caller's struct
 * is large enough to have it (libbpf's OPTS_GET). */
#define DS_OPT(opts, field, dflt)                                                       \
	(((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field)) \
		 ? (opts)->field                                                        \
		 : (dflt))

#define DS_MISS_TTL_DEFAULT 600

/* ---- cache (lib/cache.c) */

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
	/* Saved symbol indexes (lib/symfile.c): switched off, and where those
	 * of local debuginfo go (NULL: nowhere). */
	bool symindex_off;
	char *symindex_root;
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
int ds__cache_commit(struct ds_cache *c, const char *hex, int dirfd, const char *tmpname,
		     const char *name, int fd, time_t mtime);
void ds__cache_abort(int dirfd, const char *tmpname);
int ds__cache_write_miss(int dirfd, const char *name);
int ds__cache_stats(struct ds_cache *c, struct ds_cache_stats *out);
int ds__cache_clean(struct ds_cache *c, bool force);
/* The saved indexes' switch and directory: mode > 0 on, < 0 off, 0 as
 * $DSOSTORE_SYMINDEX says (on unless "0"); opt_path NULL: as
 * $DSOSTORE_SYMINDEX_PATH, else $XDG_CACHE_HOME/dsostore/index, else
 * ~/.cache/dsostore/index. */
int ds__cache_symindex_init(struct ds_cache *c, const char *opt_path, int mode);
/* The directory of saved indexes of local debuginfo, opened (made first,
 * 0700, with create) and checked as the cache's directories are. */
int ds__cache_symindex_dir(struct ds_cache *c, bool create, int *dirfd_out);
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

/* ---- symfile (lib/symfile.c): saved symbol indexes
 *
 * A complete index is saved as one file per build ID (the format is
 * described in symfile.c), next to its debuginfo: in its debuginfod cache
 * entry (<cache>/<hex>/dsostore-index) when the debuginfo came from
 * debuginfod, else in the cache's symindex_root (<root>/<hex>).  Whatever
 * goes wrong costs a rebuild and a debug message, nothing more. */

struct ds_debuginfo;
struct ds_symbols;
struct ds__loadmap;
struct ds__blob;
struct ds__symbols_parts;

/* What the index of a build ID also depends on: the debuginfo file and the
 * binary (its segments, and its symbols when the debuginfo has none),
 * each known by its size and the CRC-32 of its ELF header, program header
 * table and section header table, as the file has them. */
struct ds__symfile_key {
	struct ds_build_id bid;
	uint64_t debug_size, binary_size; /* binary_size 0: no binary of its own */
	uint32_t debug_crc, binary_crc;
};

/* Bump when what symindex.c writes into a blob changes: an index of
 * another blob version is not loaded.  2: the ELF tier names PLT stubs,
 * and split DWARF is read (indexes of split binaries saved before lack
 * its functions and inlines). */
#define DS__SYMFILE_BLOB_VERSION 2

/* The key of an index built from debug (fd, Elf) and binary (may be -1,
 * NULL: none).  0, or a negative errno. */
int ds__symfile_key(struct ds__symfile_key *k, const struct ds_build_id *bid, int debug_fd,
		    struct Elf *debug, int binary_fd, struct Elf *binary);
struct ds__aux_src;
/* The saved index of di for key, mapped: 0 and *out; -ENOENT none;
 * -ENOTSUP switched off; -ESTALE a file of other inputs or another
 * version; -EBADMSG a damaged one (logged, to be overwritten by the next
 * save); other negative errnos.  A damaged CU is built from di's DWARF,
 * with its auxiliary files from aux (ds__symbols_fallback()). */
int ds__symfile_load(struct ds_context *ctx, const struct ds_debuginfo *di,
		     const struct ds__symfile_key *key, const struct ds__aux_src *aux,
		     struct ds_symbols **out);
/* Save S (completed first: every CU) for di, atomically; its path in
 * *path_out when not NULL (malloc()ed).  0, or a negative errno (logged
 * at debug level: a saved index is a cache). */
int ds__symfile_save(struct ds_context *ctx, const struct ds_debuginfo *di,
		     const struct ds__symfile_key *key, struct ds_symbols *S, char **path_out);

/* The container alone, for the loader, its fuzz harness and tests.  Write
 * parts (valid as the loader checks them) for key to fd; 0, -EINVAL for
 * parts the loader would refuse, or a write's negative errno. */
int ds__symfile_write(int fd, const struct ds__symfile_key *key,
		      const struct ds__symbols_parts *parts);
/* Check len bytes at map as a saved index of key (key NULL: whatever
 * inputs it names) and fill *parts, pointing into map, with *cus a
 * malloc()ed array the caller frees.  0; -ESTALE (other inputs, version,
 * byte order) or -EBADMSG (damaged), with why; -ENOMEM. */
int ds__symfile_parse(const void *map, size_t len, const struct ds__symfile_key *key,
		      struct ds__symbols_parts *parts, struct ds__blob **cus, char *why,
		      size_t whylen);

/* ---- fetch (lib/fetch.c) */

struct ds_fetcher;
struct ds_fetch_config {
	char **urls; /* NULL-terminated */
	int timeout_s, connect_timeout_s, maxtime_s, retry_limit;
	int64_t maxsize;
	unsigned int max_transfers, max_per_server;
	char **headers; /* "Name: value", NULL-terminated */
};

/* Reads the environment for what opts leave unset. */
int ds__fetch_config_init(struct ds_fetch_config *cfg, const struct ds_context_opts *opts);
void ds__fetch_config_release(struct ds_fetch_config *cfg);
void ds__fetcher_free(struct ds_fetcher *f);

/* ---- context (lib/context.c) */

struct ds_found;

struct ds_context {
	atomic_int refcnt; /* the caller's handle + one per store */
	char **debug_dirs; /* NULL-terminated, copied */
	char *perf_buildid_dir; /* NULL: disabled */
	char *kallsyms; /* NULL: the kernel root's /proc/kallsyms */
	char *kernel_root; /* NULL: "/" (the running kernel's files) */
	int miss_ttl_s; /* < 0: misses are not remembered */
	struct ds_log log;

	struct ds_cache cache;
	struct ds_fetch_config fetch_cfg;
	pthread_mutex_t fetcher_lock; /* creating the fetcher */
	struct ds_fetcher *_Atomic fetcher; /* started on first use */
	atomic_uint_fast64_t cache_hits; /* answered by the caller's thread */
};

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

/* ---- buildid (lib/buildid.c) */

int ds__elf_build_id(struct Elf *elf, struct ds_build_id *out);

/* ---- elf (lib/elf.c) */

struct ds_elf_info {
	bool has_debug_info; /* .debug_info or .zdebug_info with contents */
	bool has_code; /* an executable PT_LOAD backed by file bytes */
	bool has_debuglink;
	char debuglink[256]; /* the .gnu_debuglink file name */
	uint32_t debuglink_crc;
};

/* Open path read-only for ELF inspection (O_CLOEXEC, regular files only). */
int ds__elf_open_fd(const char *path);
/* Facts about an opened ELF. */
int ds__elf_inspect(struct Elf *elf, struct ds_elf_info *info);
/* A compressed section's header, as readers take it: gABI SHF_COMPRESSED
 * (the header libelf reads; type ELFCOMPRESS_*) or GNU .zdebug_ ("ZLIB",
 * a big-endian size).  src: the compressed bytes (elf_rawdata(), in the
 * map of a mapped file); packed: the section's bytes as the inflate
 * ratio counts them.  false: not compressed, or no header readable. */
struct ds_elf_packed {
	unsigned int type;
	uint64_t size, packed;
	const unsigned char *src;
	size_t src_size;
	const char *how; /* "zlib", "zstd", "zlib-gnu", "unknown" */
};
/* .gnu_debugaltlink: the dwz alt file's name (NUL-terminated, in the
 * section) and build ID.  false: none, or malformed. */
bool ds__elf_altlink(struct Elf *elf, const char **name, struct ds_build_id *bid);
/* The same for the file at path, the name copied into name (len bytes).
 * 0; -ENODATA: none; -ENAMETOOLONG; an open's negative errno. */
int ds__elf_file_altlink(const char *path, char *name, size_t len, struct ds_build_id *bid);
struct Elf_Scn;
bool ds__elf_packed(struct Elf *elf, struct Elf_Scn *scn, const char *name,
		    struct ds_elf_packed *out);
/* A compressed section of packed bytes may claim that many decompressed
 * (the ratio rule of ds__elf_check_compressed()). */
bool ds__elf_inflate_plausible(uint64_t packed, uint64_t claimed);
/* 0 when every compressed DWARF section of elf (SHF_COMPRESSED, or
 * GNU .zdebug_*) claims a size plausible for its compressed bytes; else
 * -EFBIG, with msg naming the first that does not.  Headers only: nothing
 * is decompressed.  Call before dwarf_begin_elf(), which decompresses
 * them all. */
int ds__elf_check_compressed(struct Elf *elf, char *msg, size_t msglen);
/* CRC32 of a whole file the way .gnu_debuglink wants it (zlib's CRC-32). */
int ds__file_crc32(int fd, uint32_t *crc);
/* The end of what an ELF's headers say it holds: its header, program and
 * section header tables, every section with file bytes and (segments)
 * every segment's file bytes, reading at most avail bytes of fd.  0 and
 * *extent; -EAGAIN: *extent bytes are needed to tell; -ENOEXEC with *why:
 * not an ELF, or one that cannot lie in any file. */
int ds__elf_extent(int fd, uint64_t avail, bool segments, uint64_t *extent, const char **why);
/* Bytes past its extent that a whole ELF file may carry (alignment). */
#define DS_ELF_SLACK (64u << 10)
/* A file of size bytes is one whole ELF: its extent lies inside it, and it
 * is not larger than that extent plus DS_ELF_SLACK.  -ENOEXEC and *why. */
int ds__elf_check_whole(int fd, uint64_t size, bool segments, const char **why);
/* What a download or a cache hit of bid must be: for a debuginfo or an
 * executable, an ELF file carrying bid, whole.  NULL if fd (size bytes)
 * is, else why not (in buf). */
const char *ds__elf_artifact_bad(int fd, uint64_t size, const struct ds_build_id *bid,
				 enum ds_artifact what, char *buf, size_t len);
/* libelf's version handshake, done once per process. */
void ds__elf_init(void);

/* ---- locate (lib/locate.c) */

/* A found candidate, opened and verified. */
struct ds_found {
	char *path;
	int fd;
	struct Elf *elf;
	enum ds_source source;
	uint64_t size;
};

/* Search the local sources in order; *found filled on success.  why, when
 * not NULL, collects each place looked at and its verdict. */
int ds__locate(struct ds_context *ctx, const struct ds_build_id *bid, const char *hint_path,
	       enum ds_artifact what, struct ds_found *found, struct ds_strbuf *why);
/* Open one known path and check it is the wanted artifact of bid. */
int ds__open_candidate(const char *path, const struct ds_build_id *bid, enum ds_artifact what,
		       struct ds_found *found, const char **reason);
void ds__found_release(struct ds_found *found);

/* The places a skeleton's .dwo file may be, in order, each passed to
 * try(arg, path) until it returns true: dwo_name itself when absolute,
 * else under comp_dir (when that is absolute); then, by dwo_name and by
 * its last component, in the directories of binary and of debug (either
 * may be NULL), then in each of the context's debug directories.  true:
 * try accepted one. */
bool ds__dwo_candidates(struct ds_context *ctx, const char *dwo_name, const char *comp_dir,
			const char *binary, const char *debug,
			bool (*try)(void *arg, const char *path), void *arg);
/* The places a split binary's .dwp package may be, in order, each passed
 * to try as above: <binary>.dwp, then <debug>.dwp (either may be NULL). */
bool ds__dwp_candidates(const char *binary, const char *debug,
			bool (*try)(void *arg, const char *path), void *arg);
/* Open path as a split DWARF file (a .dwo or .dwp: an ELF file with no
 * build ID to check) into *found; st (may be NULL) gets its fstat().
 * -ENOENT: none; -ENOEXEC: not a regular ELF file; other open errors. */
int ds__open_split(const char *path, struct ds_found *found, struct stat *st);

/* ---- perf sessions (lib/perfsession.c), for the profile room */

struct ds_context *ds__perf_session_context(const struct ds_perf_session *s);
/* ds_perf_session_new() handing each sample to fn as it is replayed,
 * without keeping it (ds_perf_session_samples() then says -ENODATA).
 * The sample's DSO indexes are the session's own then: after the replay
 * rank[] turns one into its index in ds_perf_session_dsos(). */
struct ds_perf_session *ds__perf_session_stream(struct ds_context *ctx,
						const struct ds_perf_data *p,
						const struct ds_perf_session_opts *opts,
						ds_perf_sample_fn fn, void *user, char *err,
						size_t errlen);
const uint32_t *ds__perf_session_rank(const struct ds_perf_session *s);
/* The recording's host name and kernel release (NULL: not recorded). */
void ds__perf_session_host(const struct ds_perf_session *s, const char **hostname,
			   const char **osrelease);

/* The store's context (borrowed: the store holds it). */
struct ds_context *ds__store_context(const struct ds_store *s);

/* ---- perf's config files (lib/perfconfig.c) */

/* The value of "section.name" in perfconfig text (the last one): 1, 0 not
 * set, -ENAMETOOLONG longer than outlen - 1 (cut). */
int ds__perfconfig_get(const char *text, size_t len, const char *name, char *out, size_t outlen);
/* The same from the files perf reads, in its order. */
int ds__perfconfig(const char *name, char *out, size_t outlen);

/* ---- kernel (lib/kernel.c) */

/* The running kernel's build ID, from /sys/kernel/notes (under the
 * context's kernel root). */
bool ds__kernel_build_id(const struct ds_context *ctx, struct ds_build_id *out);
/* The GNU build ID among raw ELF notes; of a notes file (4 KiB read). */
bool ds__notes_build_id(const unsigned char *buf, size_t len, struct ds_build_id *out);
bool ds__notes_file_build_id(const char *path, struct ds_build_id *out);
/* rel ("/proc/kallsyms", "/sys/module") under the context's kernel root. */
void ds__kernel_path(const struct ds_context *ctx, const char *rel, char *buf, size_t len);

/* The running kernel's text symbols, sorted, one per address. */
struct ds__kallsyms;
/* From the cache of this boot's core kernel symbols unless all (modules,
 * BPF programs too: a fresh /proc/kallsyms, which refreshes the cache);
 * ref: a symbol whose address to note (perf's "_text", NULL: none).
 * -EPERM: kptr_restrict hides the addresses. */
int ds__kallsyms_load(struct ds_context *ctx, const char *ref, bool all,
		      struct ds__kallsyms **out);
/* Parse kallsyms text (text[len] NUL; cut up in place, then k's). */
int ds__kallsyms_parse(char *text, size_t len, const char *ref, struct ds__kallsyms **out);
/* The cache file of k's core symbols (malloc()ed) for kernel bid in boot. */
int ds__kallsyms_serialize(const struct ds__kallsyms *k, const struct ds_build_id *bid,
			   const char *boot, const char *ref, void **out, size_t *len_out);
/* Check a cache file's bytes (8-byte aligned): *out points into them
 * (free it before them).  -EBADMSG and *why. */
int ds__kallsyms_check(const void *buf, size_t len, struct ds__kallsyms **out, const char **why);
void ds__kallsyms_free(struct ds__kallsyms *k);
/* The symbol holding addr and its start; NULL: none, or not covered. */
const char *ds__kallsyms_find(const struct ds__kallsyms *k, uint64_t addr, uint64_t *start);
/* The same, and its module's name ("ext4"; NULL: the core kernel). */
const char *ds__kallsyms_find_mod(const struct ds__kallsyms *k, uint64_t addr, uint64_t *start,
				  const char **module);
/* The lowest address of a symbol of module (a full read only). */
bool ds__kallsyms_module_start(const struct ds__kallsyms *k, const char *module, uint64_t *start);
/* ---- kernel addresses (lib/ksym.c) */

/* Where module is loaded now: the kernel root's /proc/modules, else the
 * lowest address of its symbols in k (may be NULL). */
bool ds__kernel_module_start(struct ds_context *ctx, const struct ds__kallsyms *k,
			     const char *module, uint64_t *start);
/* A .ko image as the kernel root's /sys/module/module/sections placed it
 * (modified in place: DWARF relocated, ET_EXEC).  0, -EINVAL. */
int ds__ko_relocate(struct ds_context *ctx, const char *module, unsigned char *img, size_t len);
/* A module's name ("ext4") from a perf DSO path ("[ext4]", a .ko file). */
bool ds__kernel_module_name(const char *path, char *out, size_t len);
/* perf's places for the vmlinux of release (/usr/lib/debug/boot/vmlinux-R
 * and the like, under the kernel root): the first whose build ID is bid. */
bool ds__vmlinux_place(const struct ds_context *ctx, const char *release,
		       const struct ds_build_id *bid, char *path, size_t len);
/* dso if its debuginfo has DWARF and the symbol ref (*link: its link-time
 * address); else dso is put and NULL. */
struct ds_dso *ds__vmlinux_usable(struct ds_context *ctx, struct ds_dso *dso, const char *ref,
				  uint64_t *link);
/* The DWARF answer for module's code at addr (where it is loaded now),
 * valid as ds_kernel_symbolize()'s; false: no DWARF for it. */
bool ds__kernel_module_dwarf(struct ds_kernel *k, const char *module, uint64_t addr,
			     unsigned int flags, struct ds_sym_batch *batch,
			     const struct ds_sym_answer **answer);
/* One /proc/modules line: module's load address, if it is its line. */
bool ds__modules_line(const char *line, size_t len, const char *module, size_t mlen,
		      uint64_t *start);

/* k (the cached core symbols) can answer for addr. */
bool ds__kallsyms_covers(const struct ds__kallsyms *k, uint64_t addr);
bool ds__kallsyms_ref(const struct ds__kallsyms *k, uint64_t *addr);

/* ---- store (lib/store.c, lib/storeaux.c) */

/* ds_store_prefetch() for a given list of DSOs (of one context): local
 * sources, then one debuginfod batch.  Returns how many are left without
 * debuginfo, or a negative error. */
/* dwarf: the dwz alt files and split DWARF the debuginfo names too. */
int ds__dsos_prefetch(struct ds_dso **dsos, size_t n, bool dwarf,
		      const struct ds_fetch_opts *opts);
/* The same with nextra requests of the caller's in the one debuginfod
 * batch (n > 0: the context is the DSOs'); each extra[i] gets its result
 * (path malloc()ed: the caller frees it). */
int ds__dsos_prefetch_with(struct ds_dso **dsos, size_t n, bool dwarf, struct ds_fetch_req *extra,
			   size_t nextra, const struct ds_fetch_opts *opts);

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

/* ---- auxiliary debug files (lib/dwarf.c reads them, lib/storeaux.c owns them)
 *
 * dwz alt files (by build ID), .dwp packages (by file: resolved path and
 * identity) and .dwo files (by dwo id) belong to the store, like a DSO's
 * debuginfo: found once for the whole store (alt files locally, then
 * debuginfod; split DWARF locally only: debuginfod serves no .dwo), opened
 * once, shared by every DSO index that names them, counted once in the
 * budget (bytes_held), freed with their last user.  The index rooms never
 * search or open files: they ask the store through a struct ds__aux_src. */

enum ds__aux_kind { DS__AUX_ALT, DS__AUX_DWP, DS__AUX_DWO };

struct ds__dwarf_aux;
/* The DWARF of an opened auxiliary file (found stays the caller's, open as
 * long as the result, whose sections point into its map): its sections
 * loaded (decompressed) and, by kind, an alt file's units scanned, a
 * package's unit index read and checked, a .dwo checked to hold the split
 * compile unit dwo_id (for_name: the file whose skeleton names it, for the
 * warning when it holds another).  Immutable after, read by any number of
 * threads.  0; -ENODATA: no DWARF in it (or implausible, or a package
 * without a valid index: logged); -ESTALE: a .dwo of another unit (warned);
 * -ENOMEM. */
int ds__dwarf_aux_open(struct ds_context *ctx, enum ds__aux_kind kind, const struct ds_found *found,
		       uint64_t dwo_id, const char *for_name, struct ds__dwarf_aux **out);
void ds__dwarf_aux_close(struct ds__dwarf_aux *A);
/* Memory it holds (decompressed sections, tables; not the file's map). */
uint64_t ds__dwarf_aux_bytes(const struct ds__dwarf_aux *A);
/* A package's units: their dwo ids, sorted, in a malloc()ed *ids.  0 or
 * -ENOMEM. */
int ds__dwarf_dwp_ids(const struct ds__dwarf_aux *A, uint64_t **ids, size_t *n);

/* A skeleton unit: the split unit it needs, by its dwo id, DW_AT_dwo_name
 * (or the GNU one) and DW_AT_comp_dir (NULL: none). */
struct ds__skeleton {
	uint64_t id;
	const char *dwo_name, *comp_dir;
};
/* The skeleton units of debug's DWARF (name: its path, for messages) in a
 * malloc()ed *out that holds their strings too (NULL, 0: none: no DWARF,
 * or none split).  A file whose .debug_abbrev names no dwo attribute is
 * not read further.  0 or -ENOMEM. */
int ds__dwarf_skeletons(struct ds_context *ctx, struct Elf *debug, const char *name,
			struct ds__skeleton **out, size_t *n);

/* What a DWARF asks of the store.  for_name: the debuginfo's path, for
 * messages. */
struct ds__dwp_want {
	const char *binary, *debug; /* paths; binary may be NULL */
	const uint64_t *ids; /* the skeletons' dwo ids */
	size_t nids;
	const char *for_name;
};
struct ds__dwo_want {
	uint64_t id;
	const char *dwo_name, *comp_dir; /* the skeleton's */
	const char *binary, *debug;
	const char *for_name;
};

/* A hold on one of the store's auxiliary files (opaque). */
struct ds__aux;
struct ds__aux_src {
	/* The alt file of bid (name: the .gnu_debugaltlink path, looked at
	 * first, relative to the directory of from, the debug file naming
	 * it, when it is relative), opened. */
	struct ds__aux *(*alt)(void *arg, const struct ds_build_id *bid, const char *name,
			       const char *from);
	/* The first package of w's places (<binary>.dwp, <debug>.dwp) that
	 * holds one of its ids at least (one that holds none is refused with
	 * a warning). */
	struct ds__aux *(*dwp)(void *arg, const struct ds__dwp_want *w);
	/* The .dwo of a skeleton, found where ds__dwo_candidates() says, of
	 * its dwo id (one of another id is refused with a warning). */
	struct ds__aux *(*dwo)(void *arg, const struct ds__dwo_want *w);
	/* Each returns a hold, NULL when there is none (the store said why);
	 * each may block on another thread's search of the same file.  Holds
	 * keep the file's record (where it is); the file itself is only
	 * sure to stay open while pinned: pin gives its DWARF, opened again
	 * if the budget closed it (NULL: it cannot be, the store said why),
	 * unpin ends the pin.  Pins nest; put gives the hold back, the last
	 * one closes the file. */
	const struct ds__dwarf_aux *(*pin)(void *arg, struct ds__aux *h);
	void (*unpin)(void *arg, struct ds__aux *h);
	void (*put)(void *arg, struct ds__aux *h);
	void *arg;
};

/* ---- symindex (lib/symindex.c); its rooms share lib/symindex.h */

struct ds_symbols;
/* dwarf: read the debuginfo's DWARF too; without, the index holds ELF
 * symbols only (the names-only tier).  aux: where the auxiliary files the
 * DWARF names come from (copied; NULL: nowhere: no alt file, no split
 * units), asked by the DWARF, their holds given back when it is let go. */
int ds__symbols_build(struct ds_context *ctx, struct Elf *debug, const char *debug_name,
		      struct Elf *binary, const char *binary_name, bool dwarf,
		      const struct ds__aux_src *aux, struct ds_symbols **out);
/* S holds all its DSO can give: its DWARF was read, or there was none. */
bool ds__symbols_full(const struct ds_symbols *S);
/* Its DWARF was read. */
bool ds__symbols_read_dwarf(const struct ds_symbols *S);
void ds__symbols_free(struct ds_symbols *S);
/* What S holds now; CU builds add to it later. */
uint64_t ds__symbols_bytes(const struct ds_symbols *S);
/* Count S's memory in *bytes, now and as CUs are built (their number in
 * *units); once, before S is published. */
void ds__symbols_account(struct ds_symbols *S, _Atomic uint64_t *bytes, _Atomic uint64_t *units);
/* Free the CUs of S built here (saved ones are the file's) that were not
 * looked up since the last call, to be built again when asked;
 * returns the bytes freed.  Only while no lookup runs on S (the store
 * calls it for a DSO nobody pins, under the eviction protocol). */
uint64_t ds__symbols_trim(struct ds_symbols *S);
/* Take S's memory out of that count (before S is freed or retired). */
void ds__symbols_unaccount(struct ds_symbols *S);

/* A file offset to a virtual address through the PT_LOAD segments;
 * -ERANGE outside every one. */
int ds__symbols_vaddr(const struct ds_symbols *S, uint64_t offset, uint64_t *vaddr);

/* Build, before a batch's lookups, what the sorted virtual addresses
 * vaddrs[0..n) will need (their CUs; every CU when more than a quarter
 * of them, on all cores).  0 or -ENOMEM.  Lookups build what is missing
 * anyway: this is for speed only. */
int ds__symbols_prepare(struct ds_symbols *S, const uint64_t *vaddrs, size_t n);
/* S, an index of DWARF, is complete (every CU built, by a batch or by
 * lookups) and not from a file (or from one found damaged), and this is
 * the first caller told: the moment to save it (lib/symfile.c). */
bool ds__symbols_newly_complete(struct ds_symbols *S);

/* ---- symbolize (lib/symbolize.c) */

/* ds_dso_symbolize_batch() in three steps around the DSO's index (store.c
 * holds the DSO's side).  start: room for n answers, the last call's
 * dropped; 0, -EINVAL (n above INT_MAX) or -ENOMEM (then the batch holds
 * no answers). */
int ds__sym_batch_start(struct ds_sym_batch *b, size_t n);
/* Every answer says err: the DSO has no index. */
void ds__sym_batch_fail(struct ds_sym_batch *b, const uint64_t *addrs, int err);
/* The distinct virtual addresses of addrs, sorted, in *vaddrs (the batch's,
 * valid until lookup); file offsets translated through lm when given (the
 * executable's headers of a DSO known by its debuginfo alone), else
 * through S, those outside every segment answered now.  How many. */
size_t ds__sym_batch_sort(struct ds_sym_batch *b, const struct ds_symbols *S,
			  const struct ds__loadmap *lm, const uint64_t *addrs, unsigned flags,
			  const uint64_t **vaddrs);
/* Looks them up in S and answers every address; how many were found. */
int ds__sym_batch_lookup(struct ds_sym_batch *b, struct ds_symbols *S, unsigned flags);
/* An answer as a ds_sym_result of its own: answer's error, or -ENOMEM. */
int ds__sym_result_from(const struct ds_sym_answer *a, struct ds_sym_result *out);

/* ---- debuginfo (lib/debuginfo.c) */

/* An opened debuginfo.  The struct is embedded in its DSO and lives as long
 * as the DSO; only the open state (fd, elf) comes and goes, under the
 * store's di_lock.  path is atomic because a re-search after eviction may
 * find the file elsewhere while readers still hold the old string, which
 * stays allocated (retired) until the DSO goes. */
struct ds_debuginfo {
	_Atomic(char *) path;
	const struct ds_build_id *bid; /* the DSO's, set once */
	enum ds_source source;
	int fd;
	struct Elf *elf;
	uint64_t size;
	atomic_bool recent; /* CLOCK reference bit, set by the ready path */
	struct ds_retired *retired;
};

struct ds_retired {
	struct ds_retired *next;
	char *path;
};

void ds__debuginfo_init(struct ds_debuginfo *di, const struct ds_build_id *bid);
/* Take over what locate found; the found struct is emptied. */
void ds__debuginfo_adopt(struct ds_debuginfo *di, struct ds_found *found);
bool ds__debuginfo_is_open(const struct ds_debuginfo *di);
/* Close the file; returns the bytes it held.  Path stays. */
uint64_t ds__debuginfo_close(struct ds_debuginfo *di);
/* Open the remembered path again, checking it is still the same build ID. */
int ds__debuginfo_reopen(struct ds_debuginfo *di);
void ds__debuginfo_release(struct ds_debuginfo *di);

/* ---- loadmap (lib/loadmap.c): an ELF file's loadable segments */

/* The PT_LOAD headers of an executable: what turns a file offset (perf's,
 * /proc/PID/maps') into a virtual address.  A debug file's own are no
 * use for it (objcopy --only-keep-debug and eu-strip -f leave p_filesz 0
 * and rewrite p_offset), so a DSO known by its debuginfo alone keeps
 * these of its executable (lib/store.c). */
struct ds__loadmap {
	size_t n;
	struct ds__loadseg {
		uint64_t offset, filesz, vaddr, memsz;
		uint32_t flags; /* PF_* */
	} seg[];
};

/* The PT_LOAD headers of elf (NULL-safe: -ENOEXEC); -ENODATA: none. */
int ds__loadmap_read(struct Elf *elf, struct ds__loadmap **out);
/* offset as a virtual address: 0, or -ERANGE outside every segment's
 * file bytes. */
int ds__loadmap_vaddr(const struct ds__loadmap *lm, uint64_t offset, uint64_t *vaddr);
/* A debug file whose segments say nothing of the file offsets: its code
 * segment (PF_X) has no file bytes. */
bool ds__loadmap_stripped(struct Elf *elf);

/* ---- normalize (lib/normalize.c) */

/* One line of /proc/PID/maps ("START-END PERMS PGOFF MAJ:MIN INODE NAME"),
 * its name borrowed from the text (not NUL-terminated). */
#define DS__VMA_R 1u
#define DS__VMA_W 2u
#define DS__VMA_X 4u
#define DS__VMA_SHARED 8u
struct ds__vma {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
	unsigned int prot; /* DS__VMA_* */
	const char *name;
	size_t name_len;
};
/* Parse maps text (untrusted: any bytes, no NUL needed), calling fn for
 * each well-formed line in order; a malformed line is skipped (and
 * counted in *bad when not NULL).  Returns the lines given to fn, or the
 * first negative value fn returned. */
int ds__procmaps_parse(const char *buf, size_t len, int (*fn)(void *arg, const struct ds__vma *v),
		       void *arg, size_t *bad);

/* A perf map (/tmp/perf-PID.map: "START SIZE NAME" lines, hex, written by
 * JITs), sorted by start, a later line winning over an earlier one of the
 * same start; names copied. */
struct ds__perfmap_sym {
	uint64_t start, size;
	const char *name;
};
struct ds__perfmap {
	size_t n;
	struct ds__perfmap_sym *syms;
	char *names;
};
#define DS__PERFMAP_MAX_BYTES (256u << 20) /* a bigger file is refused */
int ds__perfmap_parse(const char *buf, size_t len, struct ds__perfmap *out, size_t *bad);
/* The symbol holding addr, or NULL. */
const struct ds__perfmap_sym *ds__perfmap_find(const struct ds__perfmap *m, uint64_t addr);
void ds__perfmap_release(struct ds__perfmap *m);
/* Read and parse the perf map at path; 0 or a negative errno. */
int ds__perfmap_load(const char *path, struct ds__perfmap *out);

#endif
