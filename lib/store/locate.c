/* SPDX-License-Identifier: MIT */
/*
 * Local sources of debuginfo and executables for a build ID, in order:
 *   1. the binary itself (when it carries .debug_info, or code for an
 *      executable);
 *   2. <debugdir>/.build-id/xx/rest.debug (or xx/rest for the executable);
 *   3. .gnu_debuglink of the binary, CRC32 checked, looked up in the
 *      binary's directory, its .debug/ subdirectory and <debugdir>/<dir>/
 *      (gdb's order);
 *   4. the context's directory index (ds_context_opts.dirindex: dsostore
 *      serve's -F directories), its best file;
 *   5. perf's build-id cache: <root>/.build-id/xx/rest -> ../../<path>/<hex>
 *      holding "debug" and "elf" (older perf linked straight to the file).
 * Every candidate's build ID is read and compared before it is accepted: a
 * stale file at the right name must not be used.
 *
 * Split DWARF's files have no build ID: the places a skeleton's .dwo may
 * be are at the end (ds__dwo_candidates()); whoever tries them checks the
 * dwo id.
 */
#define _GNU_SOURCE
#include "store.h"

#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct search {
	const struct ds_build_id *bid;
	enum ds_artifact what;
	struct ds_found *found;
	struct ds_strbuf *why;
	struct ds_context *ctx;
};

static bool try_path(struct search *s, const char *path, enum ds_source src)
{
	const char *reason = "";

	if (ds__open_candidate(path, s->bid, s->what, s->found, &reason) == 0) {
		s->found->source = src;
		ds_debug(s->ctx, "found %s (%s)", path, ds_source_name(src));
		return true;
	}
	ds_debug(s->ctx, "%s: %s", path, reason);
	ds__strbuf_addf(s->why, "\n  %s (%s): %s", path, ds_source_name(src), reason);
	return false;
}

static bool try_build_id_dirs(struct search *s, const char *hex)
{
	const char *suffix = s->what == DS_ARTIFACT_DEBUGINFO ? ".debug" : "";
	char path[PATH_MAX];

	if (strlen(hex) < 4)
		return false; /* no "rest" after the two-digit directory */
	for (char **dir = s->ctx->debug_dirs; *dir; dir++) {
		if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s%s", *dir, hex, hex + 2,
			     suffix) >= (int)sizeof(path))
			continue;
		if (try_path(s, path, DS_SOURCE_BUILD_ID_DIR))
			return true;
	}
	return false;
}

static bool try_dirindex(struct search *s)
{
	char *path = NULL;
	bool ok;

	if (!s->ctx->dirindex || ds_dirindex_find(s->ctx->dirindex, s->bid, s->what, &path))
		return false;
	ok = try_path(s, path, DS_SOURCE_DIRINDEX);
	free(path);
	return ok;
}

/* The CRC is checked before the build ID: it is what debuglink promises. */
static bool try_debuglink_file(struct search *s, const char *path, uint32_t want_crc)
{
	uint32_t crc;
	int fd = ds__elf_open_fd(path);

	if (fd < 0) {
		ds__strbuf_addf(s->why, "\n  %s (debuglink): %s", path,
				fd == -ENOENT ? "absent" : ds_strerror(fd));
		return false;
	}
	if (ds__file_crc32(fd, &crc) != 0 || crc != want_crc) {
		close(fd);
		ds_debug(s->ctx, "%s: debuglink CRC mismatch", path);
		ds__strbuf_addf(s->why, "\n  %s (debuglink): CRC mismatch", path);
		return false;
	}
	close(fd);
	return try_path(s, path, DS_SOURCE_DEBUGLINK);
}

static bool try_debuglink(struct search *s, const char *binary, const struct ds_elf_info *info)
{
	char real[PATH_MAX], path[PATH_MAX], dir[PATH_MAX], *slash;

	if (!info->has_debuglink)
		return false;
	if (!realpath(binary, real))
		snprintf(real, sizeof(real), "%s", binary);
	snprintf(dir, sizeof(dir), "%s", real);
	slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = 0; /* the root directory */
	else if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");

	if (snprintf(path, sizeof(path), "%s/%s", dir, info->debuglink) < (int)sizeof(path) &&
	    strcmp(path, real) != 0 && try_debuglink_file(s, path, info->debuglink_crc))
		return true;
	if (snprintf(path, sizeof(path), "%s/.debug/%s", dir, info->debuglink) <
		    (int)sizeof(path) &&
	    try_debuglink_file(s, path, info->debuglink_crc))
		return true;
	for (char **ddir = s->ctx->debug_dirs; *ddir; ddir++) {
		if (snprintf(path, sizeof(path), "%s%s/%s", *ddir, dir, info->debuglink) <
			    (int)sizeof(path) &&
		    try_debuglink_file(s, path, info->debuglink_crc))
			return true;
	}
	return false;
}

static bool try_perf_cache(struct search *s, const char *hex)
{
	const char *root = s->ctx->perf_buildid_dir;
	char link[PATH_MAX], path[PATH_MAX];
	struct stat st;

	if (!root || strlen(hex) < 4)
		return false;
	if (snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s", root, hex, hex + 2) >=
	    (int)sizeof(link))
		return false;
	if (stat(link, &st) != 0) {
		ds__strbuf_addf(s->why, "\n  %s (perf-cache): absent", link);
		return false;
	}
	if (!S_ISDIR(st.st_mode)) /* perf before 4.4 linked to the file */
		return try_path(s, link, DS_SOURCE_PERF_CACHE);
	if (s->what == DS_ARTIFACT_DEBUGINFO &&
	    snprintf(path, sizeof(path), "%s/debug", link) < (int)sizeof(path) &&
	    try_path(s, path, DS_SOURCE_PERF_CACHE))
		return true;
	return snprintf(path, sizeof(path), "%s/elf", link) < (int)sizeof(path) &&
	       try_path(s, path, DS_SOURCE_PERF_CACHE);
}

/* The binary the build ID came from, when the caller knows it: the first
 * candidate, and where .gnu_debuglink is read. */
static bool try_self(struct search *s, const char *binary, struct ds_elf_info *info)
{
	const char *reason = "";
	struct ds_found self = { .fd = -1 };
	int fd;
	Elf *elf;

	memset(info, 0, sizeof(*info));
	if (ds__open_candidate(binary, s->bid, s->what, &self, &reason) == 0) {
		self.source = DS_SOURCE_SELF;
		*s->found = self;
		ds__elf_inspect(self.elf, info);
		return true;
	}
	ds__strbuf_addf(s->why, "\n  %s (self): %s", binary, reason);
	/* Refused as the artifact, it may still name its debuglink. */
	fd = ds__elf_open_fd(binary);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		struct ds_build_id got;

		if (ds__elf_build_id(elf, &got) == 0 && ds_build_id_equal(&got, s->bid))
			ds__elf_inspect(elf, info);
		elf_end(elf);
	}
	close(fd);
	return false;
}

int ds__locate(struct ds_context *ctx, const struct ds_build_id *bid, const char *hint_path,
	       enum ds_artifact what, struct ds_found *found, struct ds_strbuf *why)
{
	struct search s = { .bid = bid, .what = what, .found = found, .why = why, .ctx = ctx };
	struct ds_elf_info self_info = { 0 };
	char hex[2 * DS_BUILD_ID_MAX + 1];

	memset(found, 0, sizeof(*found));
	found->fd = -1;
	if (ds_build_id_format(bid, hex, sizeof(hex)) < 0)
		return -EINVAL;
	if (hint_path && try_self(&s, hint_path, &self_info))
		return 0;
	if (try_build_id_dirs(&s, hex))
		return 0;
	if (what == DS_ARTIFACT_DEBUGINFO && hint_path && try_debuglink(&s, hint_path, &self_info))
		return 0;
	if (try_dirindex(&s))
		return 0;
	if (try_perf_cache(&s, hex))
		return 0;
	return -ENOENT;
}

DS_API int ds_find(struct ds_context *ctx, const struct ds_build_id *bid, const char *hint_path,
		   enum ds_artifact what, char **path_out, enum ds_source *src_out, char *errbuf,
		   size_t errlen)
{
	struct ds_strbuf why = { 0 };
	struct ds_found found;
	int err;

	if (!ctx || !bid || !bid->size || !path_out)
		return -EINVAL;
	if (what != DS_ARTIFACT_DEBUGINFO && what != DS_ARTIFACT_EXECUTABLE)
		return -EINVAL;
	err = ds__locate(ctx, bid, hint_path, what, &found, errbuf ? &why : NULL);
	if (!err) {
		*path_out = found.path;
		found.path = NULL;
		if (src_out)
			*src_out = found.source;
		ds__found_release(&found);
	} else if (errbuf && errlen) {
		snprintf(errbuf, errlen, "looked at:%s", why.buf ? why.buf : " nothing");
	}
	ds__strbuf_release(&why);
	return err;
}

/* ------------------------------------------------ split DWARF's places */

struct places {
	bool (*try)(void *arg, const char *path);
	void *arg;
};

static bool try_join(const struct places *pl, const char *dir, const char *name)
{
	char path[PATH_MAX];
	int n;

	if (!dir || !*dir)
		n = snprintf(path, sizeof(path), "%s", name);
	else
		n = snprintf(path, sizeof(path), "%s%s%s", dir,
			     dir[strlen(dir) - 1] == '/' || name[0] == '/' ? "" : "/", name);
	return n > 0 && n < (int)sizeof(path) && pl->try(pl->arg, path);
}

/* In dir: by the name, and by its last component when that differs. */
static bool try_dir(const struct places *pl, const char *dir, const char *name, const char *base)
{
	return try_join(pl, dir, name) || (base != name && try_join(pl, dir, base));
}

/* The directory of path into buf ("." for a bare name). */
static const char *dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (!path)
		return NULL;
	if (!slash)
		snprintf(buf, len, ".");
	else if (slash == path)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "%.*s", (int)(slash - path), path);
	return buf;
}

bool ds__dwo_candidates(struct ds_context *ctx, const char *dwo_name, const char *comp_dir,
			const char *binary, const char *debug,
			bool (*try)(void *arg, const char *path), void *arg)
{
	struct places pl = { try, arg };
	char bdir[PATH_MAX], ddir[PATH_MAX];
	const char *base, *bd, *dd;

	if (!dwo_name || !*dwo_name)
		return false;
	base = strrchr(dwo_name, '/');
	base = base ? base + 1 : dwo_name;
	if (!*base)
		return false;
	if (dwo_name[0] == '/') {
		if (try(arg, dwo_name))
			return true;
	} else if (comp_dir && comp_dir[0] == '/' && try_join(&pl, comp_dir, dwo_name)) {
		return true;
	}
	bd = dir_of(binary, bdir, sizeof(bdir));
	dd = dir_of(debug, ddir, sizeof(ddir));
	/* (A relative name beside a file is relative to its directory; an
	 * absolute one is looked for there by its last component only.) */
	if (bd && try_dir(&pl, bd, dwo_name[0] == '/' ? base : dwo_name, base))
		return true;
	if (dd && (!bd || strcmp(bd, dd)) &&
	    try_dir(&pl, dd, dwo_name[0] == '/' ? base : dwo_name, base))
		return true;
	for (char **dir = ctx ? ctx->debug_dirs : NULL; dir && *dir; dir++)
		if (try_dir(&pl, *dir, dwo_name, base))
			return true;
	return false;
}

bool ds__dwp_candidates(const char *binary, const char *debug,
			bool (*try)(void *arg, const char *path), void *arg)
{
	const char *bases[2] = { binary, debug };
	char path[PATH_MAX];

	for (int k = 0; k < 2; k++) {
		if (!bases[k] || (k == 1 && binary && !strcmp(binary, debug)) ||
		    snprintf(path, sizeof(path), "%s.dwp", bases[k]) >= (int)sizeof(path))
			continue;
		if (try(arg, path))
			return true;
	}
	return false;
}

