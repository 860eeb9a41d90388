/* SPDX-License-Identifier: MIT */
/*
 * The writer of perf's build-id cache (~/.debug): ds_perf_cache_install()
 * and the dwz alt file and .dwp beside what it installed.  Apart from the
 * debuginfod client's cache (lib/debuginfod/cache.c), whose layout is
 * elfutils': this one is laid out for perf to read, and belongs with the
 * rest of what speaks perf's formats.  It uses a few of that cache's
 * pieces (directories, temporary names, copying: ds__cache_*), never the
 * other way round.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- perf's build-id cache
 *
 * As perf 6.1 writes it (util/build-id.c, build_id_cache__add()):
 *
 *   <root>/<realpath of the DSO>/<hex>/elf | debug | probes
 *   <root>/.build-id/<hex[0:2]>/<hex[2:]> -> ../../<realpath of the DSO>/<hex>
 *
 * perf report opens <root>/.build-id/xx/rest/debug (dso__build_id_filename),
 * so the path part only has to be one the link names; perf's own
 * "buildid-cache --list" prints it as the DSO's name.  Directories are
 * 0755 like perf's; the debug file is a hard link to the verified source
 * when the file system allows it (perf links too), else a copy, and both
 * it and the link reach their names by rename(), so a reader sees the old
 * state or the new one.
 */

#define PERF_DIR_MODE 0755
#define PERF_ANON_DIR "[dsostore]"

/* "/a//b/c" -> "a/b/c": the entry's place under the root.  "." and ".."
 * would take it elsewhere, ".build-id" is perf's index: -EINVAL. */
/* The next component of a path at p (slashes skipped), *clen bytes long
 * (0: none left). */
static const char *next_comp(const char *p, size_t *clen)
{
	while (*p == '/')
		p++;
	*clen = strcspn(p, "/");
	return p;
}

/* Component c (clen bytes) appended to rel (*n bytes of len). */
static int rel_push(char *rel, size_t *n, size_t len, const char *c, size_t clen)
{
	if (clen > NAME_MAX || *n + !!*n + clen >= len)
		return -ENAMETOOLONG;
	if (*n)
		rel[(*n)++] = '/';
	memcpy(rel + *n, c, clen);
	*n += clen;
	rel[*n] = 0;
	return 0;
}

/* Empty, or perf's index: no place for an entry. */
static bool rel_unfit(const char *rel)
{
	return !rel[0] || !strcmp(rel, ".build-id") || !strncmp(rel, ".build-id/", 10);
}

static int perf_entry_rel(const char *dso_path, char *rel, size_t len)
{
	size_t n = 0, clen;
	int err;

	if (dso_path[0] != '/' || !len)
		return -EINVAL;
	rel[0] = 0;
	for (const char *p = next_comp(dso_path, &clen); clen; p = next_comp(p + clen, &clen)) {
		if (ds__cache_bad_component(p, clen))
			return -EINVAL;
		if ((err = rel_push(rel, &n, len, p, clen)))
			return err;
	}
	return rel_unfit(rel) ? -EINVAL : 0;
}

/* The entry an existing .build-id link names, if it is one perf would
 * have written ("../../<rel>/<hex>", a directory): its <rel>. */
static int perf_linked_rel(int rootfd, const char *linkpath, const char *hex, char *rel,
			   size_t len)
{
	char target[PATH_MAX];
	size_t hexlen = strlen(hex), tlen;
	struct stat st;
	ssize_t n;

	n = readlinkat(rootfd, linkpath, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = 0;
	tlen = (size_t)n;
	if (tlen < 7 + hexlen || strncmp(target, "../../", 6) != 0 ||
	    target[tlen - hexlen - 1] != '/' || strcmp(target + tlen - hexlen, hex) != 0)
		return -EINVAL;
	target[tlen - hexlen - 1] = 0;
	/* "/<rel>": perf_entry_rel() checks its components. */
	if (perf_entry_rel(target + 5, rel, len) != 0)
		return -EINVAL;
	if (fstatat(rootfd, linkpath, &st, 0) != 0 || !S_ISDIR(st.st_mode))
		return -ENOENT;
	return 0;
}

/* mkdir -p of a relative path below dirfd, every component opened with
 * O_NOFOLLOW: a symlink planted in the cache is not followed. */
static int open_dirs_at(int dirfd, const char *rel, int *out)
{
	int fd = dup(dirfd), err = 0;
	char comp[NAME_MAX + 1];

	if (fd < 0)
		return -errno;
	for (const char *p = rel; *p;) {
		size_t clen = strcspn(p, "/");
		int next;

		if (clen > NAME_MAX) {
			err = -ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, clen);
		comp[clen] = 0;
		p += clen;
		p += *p == '/';
		if (!clen)
			continue;
		if (mkdirat(fd, comp, PERF_DIR_MODE) != 0 && errno != EEXIST) {
			err = -errno;
			break;
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = -errno;
			break;
		}
		close(fd);
		fd = next;
	}
	if (err) {
		close(fd);
		return err;
	}
	*out = fd;
	return 0;
}

/* After a failed install: the directories of rel below dirfd that are
 * empty, deepest first, so that nothing we made is left behind.  rmdir
 * removes only empty ones: what others put there stays. */
static void prune_dirs_at(int dirfd, const char *rel)
{
	char buf[PATH_MAX];
	size_t len = strlen(rel);

	if (len >= sizeof(buf))
		return;
	memcpy(buf, rel, len + 1);
	while (len) {
		char *slash;

		if (unlinkat(dirfd, buf, AT_REMOVEDIR) != 0)
			return;
		slash = strrchr(buf, '/');
		if (!slash)
			return;
		*slash = 0;
		len = (size_t)(slash - buf);
	}
}

/* The entry's "debug" is already a file of this build ID. */
static bool perf_debug_present(int entryfd, const struct ds_build_id *bid)
{
	struct ds_build_id got;
	int fd = openat(entryfd, "debug", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	bool ok;

	if (fd < 0)
		return false;
	ok = ds_build_id_read_fd(fd, &got) == 0 && ds_build_id_equal(&got, bid);
	close(fd);
	return ok;
}

/* A hard link to the very file we verified (through /proc, so that a
 * rename over the source path in between does not matter) under a
 * temporary name; -EXDEV, -EPERM (protected_hardlinks), -ENOENT (no /proc)
 * and the like mean: copy instead. */
static int link_tmp(int srcfd, int entryfd, const char *name, char *tmpname, size_t len)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", srcfd);
	for (int attempt = 0; attempt < 100; attempt++) {
		int err = ds__cache_tmp_name(name, attempt, tmpname, len);

		if (err)
			return err;
		if (linkat(AT_FDCWD, proc, entryfd, tmpname, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* A copy of srcfd under a temporary name, fsync()ed and checked again
 * (the source could change while we copy): its build ID bid, or (bid
 * NULL: a file without one) the source's size. */
static int copy_tmp(int srcfd, int entryfd, const char *name, const struct ds_build_id *bid,
		    char *tmpname, size_t len)
{
	struct ds_build_id got;
	struct stat a, b;
	int fd, err;

	fd = ds__cache_tmp_open_mode(entryfd, name, 0644, tmpname, len);
	if (fd < 0) {
		tmpname[0] = 0;
		return fd;
	}
	err = ds__cache_copy_fd(srcfd, fd);
	if (!err && fsync(fd) != 0)
		err = -errno;
	if (!err && bid && (ds_build_id_read_fd(fd, &got) != 0 || !ds_build_id_equal(&got, bid)))
		err = -EBADMSG;
	if (!err && !bid && (fstat(srcfd, &a) != 0 || fstat(fd, &b) != 0 || a.st_size != b.st_size))
		err = -EBADMSG;
	close(fd);
	if (err) {
		unlinkat(entryfd, tmpname, 0);
		tmpname[0] = 0;
	}
	return err;
}

/* <entry>/<name> made the verified file (bid: see copy_tmp()). */
static int perf_place_file(struct ds_context *ctx, int srcfd, int entryfd, const char *name,
			   const struct ds_build_id *bid)
{
	char tmpname[NAME_MAX + 1];
	int err;

	err = link_tmp(srcfd, entryfd, name, tmpname, sizeof(tmpname));
	if (err) {
		ds_debug(ctx, "perf cache: no hard link (%s), copying", strerror(-err));
		err = copy_tmp(srcfd, entryfd, name, bid, tmpname, sizeof(tmpname));
		if (err)
			return err;
	}
	if (renameat(entryfd, tmpname, entryfd, name) != 0) {
		err = -errno;
		unlinkat(entryfd, tmpname, 0);
		return err;
	}
	/* rename() between two links of one file does nothing, and leaves
	 * the temporary name (another process put the same file there). */
	unlinkat(entryfd, tmpname, 0);
	fsync(entryfd);
	return 0;
}

/* <root>/.build-id/xx/rest -> target, replaced in one rename() unless it
 * already says that; old gets what it said before ("" if nothing). */
static int perf_place_link(int rootfd, const char *hex, const char *target, char *old,
			   size_t oldlen)
{
	char cur[PATH_MAX], xx[3] = { hex[0], hex[1], 0 }, tmpname[NAME_MAX + 1];
	const char *rest = hex + 2;
	int dirfd, err = 0;
	ssize_t n;

	err = open_dirs_at(rootfd, ".build-id", &dirfd);
	if (!err) {
		int xxfd;

		err = open_dirs_at(dirfd, xx, &xxfd);
		close(dirfd);
		dirfd = xxfd;
	}
	if (err)
		return err;
	n = readlinkat(dirfd, rest, cur, sizeof(cur) - 1);
	cur[n >= 0 ? n : 0] = 0;
	snprintf(old, oldlen, "%s", cur);
	if (!strcmp(cur, target))
		goto out;
	for (int attempt = 0;; attempt++) {
		err = attempt < 100 ? ds__cache_tmp_name(rest, attempt, tmpname, sizeof(tmpname))
				    : -EEXIST;
		if (err)
			goto out;
		if (symlinkat(target, dirfd, tmpname) == 0)
			break;
		if (errno != EEXIST) {
			err = -errno;
			goto out;
		}
	}
	if (renameat(dirfd, tmpname, dirfd, rest) != 0) {
		err = -errno;
		unlinkat(dirfd, tmpname, 0);
		goto out;
	}
	fsync(dirfd);
out:
	close(dirfd);
	return err;
}

/* Our entry for the build ID alone, once the link names another: nothing
 * reaches it any more (perf's purge goes through the links). */
static void perf_remove_anon(int rootfd, const char *hex)
{
	int anon, byhex, entry = -1;

	anon = openat(rootfd, PERF_ANON_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (anon < 0)
		return;
	byhex = openat(anon, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (byhex >= 0)
		entry = openat(byhex, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (entry >= 0) {
		unlinkat(entry, "debug", 0);
		close(entry);
		unlinkat(byhex, hex, AT_REMOVEDIR);
	}
	if (byhex >= 0) {
		close(byhex);
		unlinkat(anon, hex, AT_REMOVEDIR);
	}
	close(anon);
}

static int open_perf_root(const char *root, int *out)
{
	int err = ds__cache_mkdirs(root, PERF_DIR_MODE), fd;

	if (err)
		return err;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*out = fd;
	return 0;
}

DS_API int ds_perf_cache_install(struct ds_context *ctx, const char *dso_path,
				 const struct ds_build_id *bid, const char *debug_file,
				 char **installed)
{
	char hex[2 * DS_BUILD_ID_MAX + 1], rel[PATH_MAX], linkpath[32 + sizeof(hex)];
	char entry[PATH_MAX], target[PATH_MAX], old[PATH_MAX], anon[PATH_MAX], *path = NULL;
	int srcfd = -1, rootfd = -1, entryfd = -1, err;
	struct ds_build_id got;
	bool placed = false;
	const char *root;

	/* perf's link is .build-id/xx/rest: two bytes at least. */
	if (!ctx || !bid || bid->size < 2 || !debug_file ||
	    ds_build_id_format(bid, hex, sizeof(hex)) < 0)
		return -EINVAL;
	root = ctx->perf_buildid_dir;
	if (!root)
		return -EINVAL; /* the context has perf's cache disabled */
	if (dso_path) {
		err = perf_entry_rel(dso_path, rel, sizeof(rel));
		if (err)
			return err;
	}

	/* The source first: nothing is created for a wrong file. */
	srcfd = open(debug_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (srcfd < 0)
		return -errno;
	err = ds_build_id_read_fd(srcfd, &got);
	if (err == -ENODATA || (!err && !ds_build_id_equal(&got, bid)))
		err = -EBADMSG;
	if (err) {
		ds_debug(ctx, "perf cache: %s: %s", debug_file, ds_strerror(err));
		goto out;
	}

	err = open_perf_root(root, &rootfd);
	if (err) {
		ds_debug(ctx, "perf cache: %s: %s", root, strerror(-err));
		goto out;
	}
	snprintf(linkpath, sizeof(linkpath), ".build-id/%.2s/%s", hex, hex + 2);
	/* No path given: the entry the link already names (perf's, with its
	 * elf), else one of our own. */
	if (!dso_path && perf_linked_rel(rootfd, linkpath, hex, rel, sizeof(rel)) != 0)
		snprintf(rel, sizeof(rel), "%s/%s", PERF_ANON_DIR, hex);
	if (snprintf(entry, sizeof(entry), "%s/%s", rel, hex) >= (int)sizeof(entry) ||
	    snprintf(target, sizeof(target), "../../%s", entry) >= (int)sizeof(target) ||
	    strlen(root) + strlen(entry) + sizeof("//debug") > PATH_MAX) {
		err = -ENAMETOOLONG;
		goto out;
	}
	if (asprintf(&path, "%s/%s/debug", root, entry) < 0) {
		err = -ENOMEM;
		path = NULL;
		goto out;
	}

	err = open_dirs_at(rootfd, entry, &entryfd);
	if (err) {
		ds_debug(ctx, "perf cache: %s/%s: %s", root, entry, strerror(-err));
		prune_dirs_at(rootfd, entry);
		goto out;
	}
	if (!perf_debug_present(entryfd, bid)) {
		err = perf_place_file(ctx, srcfd, entryfd, "debug", bid);
		if (err) {
			ds_debug(ctx, "perf cache: %s: %s", path, strerror(-err));
			prune_dirs_at(rootfd, entry);
			goto out;
		}
		placed = true;
	}
	err = perf_place_link(rootfd, hex, target, old, sizeof(old));
	if (err) {
		ds_debug(ctx, "perf cache: %s/%s: %s", root, linkpath, strerror(-err));
		/* A debug file perf cannot reach is not left behind. */
		if (placed)
			unlinkat(entryfd, "debug", 0);
		prune_dirs_at(rootfd, entry);
		snprintf(linkpath, sizeof(linkpath), ".build-id/%.2s", hex);
		prune_dirs_at(rootfd, linkpath);
		goto out;
	}
	snprintf(anon, sizeof(anon), "../../%s/%s/%s", PERF_ANON_DIR, hex, hex);
	if (!strcmp(old, anon) && strcmp(target, anon) != 0)
		perf_remove_anon(rootfd, hex);
	ds_info(ctx, "perf cache: %s %s", path, placed ? "installed" : "already there");
	if (installed) {
		*installed = path;
		path = NULL;
	}
out:
	free(path);
	if (entryfd >= 0)
		close(entryfd);
	if (rootfd >= 0)
		close(rootfd);
	close(srcfd);
	return err;
}

/* dir (relative to the root, "a/b") and name joined and resolved
 * lexically into out: "." dropped, ".." taking a component off.  -EPERM
 * when the result would leave the root, be empty, or lie in perf's
 * .build-id index; -ENAMETOOLONG. */
static int perf_rel_join(const char *dir, const char *name, char *out, size_t len)
{
	const char *parts[2] = { dir, name };
	size_t n = 0;

	if (!len)
		return -ENAMETOOLONG;
	out[0] = 0;
	for (int k = 0; k < 2; k++) {
		size_t clen;
		int err;

		for (const char *p = next_comp(parts[k], &clen); clen;
		     p = next_comp(p + clen, &clen)) {
			if (clen == 2 && p[0] == '.' && p[1] == '.') {
				char *slash;

				if (!n)
					return -EPERM;
				slash = strrchr(out, '/');
				n = slash ? (size_t)(slash - out) : 0;
				out[n] = 0;
			} else if (!(clen == 1 && p[0] == '.') &&
				   (err = rel_push(out, &n, len, p, clen))) {
				return err;
			}
		}
	}
	return rel_unfit(out) ? -EPERM : 0;
}

/* A symlink at rel (below rootfd) to target, unless rel is there already
 * as a file of bid (then 0); something else there is left (-EEXIST). */
static int perf_place_alt_link(int rootfd, const char *rel, const char *target,
			       const struct ds_build_id *bid)
{
	char dir[PATH_MAX];
	const char *base = strrchr(rel, '/');
	struct ds_build_id got;
	int dirfd = -1, fd, err;

	snprintf(dir, sizeof(dir), "%.*s", base ? (int)(base - rel) : 0, rel);
	base = base ? base + 1 : rel;
	err = dir[0] ? open_dirs_at(rootfd, dir, &dirfd) : (dirfd = dup(rootfd)) < 0 ? -errno : 0;
	if (err)
		return err;
	fd = openat(dirfd, base, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		err = ds_build_id_read_fd(fd, &got) == 0 && ds_build_id_equal(&got, bid) ? 0
											   : -EEXIST;
		close(fd);
	} else if (symlinkat(target, dirfd, base) != 0) {
		err = -errno;
		if (err == -EEXIST) /* a dangling link: ours to replace */
			err = unlinkat(dirfd, base, 0) == 0 && symlinkat(target, dirfd, base) == 0
				      ? 0
				      : -EEXIST;
	}
	close(dirfd);
	if (err && dir[0])
		prune_dirs_at(rootfd, dir);
	return err;
}

/* The entry (relative to root) of installed, <root>/<entry>/debug as
 * ds_perf_cache_install() gives it, into entry.  -EINVAL: not that. */
static int perf_installed_entry(const char *root, const char *installed, char *entry, size_t len)
{
	size_t rootlen = strlen(root), ilen = strlen(installed);

	if (strncmp(installed, root, rootlen) != 0 || installed[rootlen] != '/' ||
	    ilen < rootlen + 7 || strcmp(installed + ilen - 6, "/debug") != 0 ||
	    snprintf(entry, len, "%.*s", (int)(ilen - rootlen - 7), installed + rootlen + 1) >=
		    (int)len)
		return -EINVAL;
	return 0;
}

DS_API int ds_perf_cache_install_alt(struct ds_context *ctx, const char *installed,
				     const char *alt_file, char **placed)
{
	char name[PATH_MAX], entry_dir[PATH_MAX], rel[PATH_MAX], target[PATH_MAX];
	char *alt_installed = NULL;
	struct ds_build_id bid, got;
	const char *root;
	size_t rootlen, depth = 0, tn = 0;
	int rootfd = -1, err;

	if (placed)
		*placed = NULL;
	if (!ctx || !installed || !alt_file || !(root = ctx->perf_buildid_dir))
		return -EINVAL;
	rootlen = strlen(root);
	if (perf_installed_entry(root, installed, entry_dir, sizeof(entry_dir)))
		return -EINVAL;
	err = ds__elf_file_altlink(installed, name, sizeof(name), &bid);
	if (err)
		return err;
	err = ds_build_id_read_file(alt_file, &got);
	if (err == -ENODATA || (!err && !ds_build_id_equal(&got, &bid)))
		err = -EBADMSG;
	if (err)
		return err;
	/* binutils (perf's srcline runs addr2line on <entry>/debug) reads
	 * <directory of the debug file>/<name>, an absolute name appended
	 * as it is; libdw, a relative name from there too. */
	err = perf_rel_join(entry_dir, name, rel, sizeof(rel));
	if (err) {
		ds_debug(ctx, "perf cache: %s: alt file name %s leads outside %s", installed, name,
			 root);
		return err;
	}
	err = ds_perf_cache_install(ctx, NULL, &bid, alt_file, &alt_installed);
	if (err)
		return err;
	if (strncmp(alt_installed, root, rootlen) != 0 || alt_installed[rootlen] != '/') {
		err = -EINVAL;
		goto out;
	}
	for (const char *p = rel; *p; p++)
		depth += *p == '/';
	for (size_t k = 0; k < depth && tn + 3 < sizeof(target); k++, tn += 3)
		memcpy(target + tn, "../", 3);
	if (snprintf(target + tn, sizeof(target) - tn, "%s", alt_installed + rootlen + 1) >=
	    (int)(sizeof(target) - tn)) {
		err = -ENAMETOOLONG;
		goto out;
	}
	err = open_perf_root(root, &rootfd);
	if (!err)
		err = perf_place_alt_link(rootfd, rel, target, &bid);
	if (err) {
		ds_debug(ctx, "perf cache: %s/%s: %s", root, rel, strerror(-err));
		goto out;
	}
	ds_info(ctx, "perf cache: %s/%s -> %s (the alt file of %s)", root, rel, target, installed);
	if (placed && asprintf(placed, "%s/%s", root, rel) < 0) {
		*placed = NULL;
		err = -ENOMEM;
	}
out:
	if (rootfd >= 0)
		close(rootfd);
	free(alt_installed);
	return err;
}

DS_API int ds_perf_cache_install_dwp(struct ds_context *ctx, const char *installed,
				     const char *dwp_file, char **placed)
{
	char entry[PATH_MAX];
	struct stat src, cur;
	struct ds_found found;
	int srcfd = -1, rootfd = -1, entryfd = -1, err;
	const char *root;

	if (placed)
		*placed = NULL;
	if (!ctx || !installed || !dwp_file || !(root = ctx->perf_buildid_dir) ||
	    perf_installed_entry(root, installed, entry, sizeof(entry)))
		return -EINVAL;
	/* A split DWARF file (an ELF file without a build ID to check). */
	err = ds__open_split(dwp_file, &found, NULL);
	ds__found_release(&found);
	if (err)
		return err == -ENOEXEC ? -EBADMSG : err;
	srcfd = open(dwp_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (srcfd < 0 || fstat(srcfd, &src) != 0) {
		err = -errno;
		goto out;
	}
	err = open_perf_root(root, &rootfd);
	if (!err)
		err = open_dirs_at(rootfd, entry, &entryfd);
	if (err) {
		ds_debug(ctx, "perf cache: %s/%s: %s", root, entry, strerror(-err));
		goto out;
	}
	/* (The same file there already: left as it is.) */
	if (fstatat(entryfd, "debug.dwp", &cur, AT_SYMLINK_NOFOLLOW) == 0 &&
	    cur.st_dev == src.st_dev && cur.st_ino == src.st_ino) {
		ds_info(ctx, "perf cache: %s.dwp already there", installed);
	} else {
		err = perf_place_file(ctx, srcfd, entryfd, "debug.dwp", NULL);
		if (err) {
			ds_debug(ctx, "perf cache: %s.dwp: %s", installed, strerror(-err));
			goto out;
		}
		ds_info(ctx, "perf cache: %s.dwp installed (the package of %s)", installed,
			installed);
	}
	if (placed && asprintf(placed, "%s.dwp", installed) < 0) {
		*placed = NULL;
		err = -ENOMEM;
	}
out:
	if (entryfd >= 0)
		close(entryfd);
	if (rootfd >= 0)
		close(rootfd);
	if (srcfd >= 0)
		close(srcfd);
	return err;
}
