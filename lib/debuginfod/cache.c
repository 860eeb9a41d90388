/* SPDX-License-Identifier: MIT */
/*
 * The on-disk cache, laid out as the elfutils debuginfod client (0.188)
 * lays it out, so that each client finds what the other downloaded:
 *
 *   <root>/<hex>/debuginfo | executable | section-<name> | source<escaped>
 *   <root>/<hex>/hdr-<any of those>   (the download's headers, 0.193's)
 *   <root>/cache_clean_interval_s, max_unused_age_s, cache_miss_s
 *
 * where a source path has "/" written as "##" and "#" as "#_".  A miss is
 * an empty file at the entry's name, honoured for cache_miss_s seconds.
 *
 * Unlike elfutils, a download goes to a temporary file in the entry's
 * directory that is fsync()ed, made 0400 and renamed into place, and the
 * entry directory is flock()ed while one process downloads, so that several
 * processes sharing a cache download each file once (elfutils 0.188 has no
 * lock: 8 processes asking for one build ID made 4 downloads).
 *
 * A cache is shared with other processes, and may be shared with other
 * users.  What it holds is checked as a download is (an ELF with the
 * requested build ID, whole: lookup_check()), opened without following
 * symlinks, and the root and entry directories must be ours or root's
 * and writable by nobody else (dir_trusted()): in a directory another
 * user can write, a file we checked can be swapped after we checked it.
 *
 * perf's build-id cache (~/.debug), which has a layout of its own, is
 * written by lib/perf/perf_buildid_cache.c, with a few pieces of this
 * file (directories, temporary names, copying) exported for it.
 */
#define _GNU_SOURCE
#include "debuginfod.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CLEAN_INTERVAL_DEFAULT 86400
#define MAX_UNUSED_AGE_DEFAULT 604800
#define CACHE_MISS_DEFAULT 600

static int64_t read_control(int rootfd, const char *name, int64_t dflt)
{
	char buf[32], *end;
	long long v;
	ssize_t n;
	int fd;

	fd = openat(rootfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return dflt;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	buf[n] = 0;
	v = strtoll(buf, &end, 10);
	return end == buf || v < 0 ? dflt : v;
}

/* elfutils' resolution: $DEBUGINFOD_CACHE_PATH, else ~/.debuginfod_client_cache
 * if it exists, else $XDG_CACHE_HOME/debuginfod_client, else
 * ~/.cache/debuginfod_client. */
static char *default_root(void)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH");
	const char *home = getenv("HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	struct stat st;
	char *path = NULL;

	if (env && *env)
		return strdup(env);
	if (!home || !*home)
		home = "/";
	if (asprintf(&path, "%s/.debuginfod_client_cache", home) < 0)
		return NULL;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return path;
	free(path);
	if (xdg && *xdg) {
		if (asprintf(&path, "%s/debuginfod_client", xdg) < 0)
			return NULL;
	} else if (asprintf(&path, "%s/.cache/debuginfod_client", home) < 0) {
		return NULL;
	}
	return path;
}

int ds__cache_init(struct ds_cache *c, const char *opt_path, const struct ds_log *log)
{
	int fd;

	memset(c, 0, sizeof(*c));
	c->log = log;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->checked_lock, NULL);
	c->euid = geteuid();
	c->root = opt_path && *opt_path ? strdup(opt_path) : default_root();
	c->miss_s = CACHE_MISS_DEFAULT;
	c->max_unused_age_s = MAX_UNUSED_AGE_DEFAULT;
	c->clean_interval_s = CLEAN_INTERVAL_DEFAULT;
	if (!c->root)
		return -ENOMEM;
	fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		c->miss_s = read_control(fd, "cache_miss_s", CACHE_MISS_DEFAULT);
		c->max_unused_age_s = read_control(fd, "max_unused_age_s", MAX_UNUSED_AGE_DEFAULT);
		c->clean_interval_s =
			read_control(fd, "cache_clean_interval_s", CLEAN_INTERVAL_DEFAULT);
		close(fd);
	}
	return 0;
}

void ds__cache_release(struct ds_cache *c)
{
	if (c->rootfd > 0)
		close(c->rootfd);
	c->rootfd = 0;
	free(c->root);
	c->root = NULL;
	free(c->symindex_root);
	c->symindex_root = NULL;
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->checked_lock);
}

/*
 * May we trust what a directory of the cache holds?  Only if nobody but
 * us (or root) can change it: owned by us or by root, and writable by
 * neither group nor others — OpenSSH's rule for ~/.ssh.  In a directory
 * another user can write, a file we verified can be renamed over after
 * the check (seen: fetch then returned the other user's file).
 */
const char *ds__cache_untrusted(const struct ds_cache *c, const struct stat *st, char *buf,
				size_t len)
{
	if (st->st_uid != c->euid && st->st_uid != 0)
		snprintf(buf, len, "owned by uid %u, not by you (uid %u) or root",
			 (unsigned)st->st_uid, (unsigned)c->euid);
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		snprintf(buf, len, "writable by %s (mode %04o)",
			 st->st_mode & S_IWOTH ? "everyone" : "its group",
			 (unsigned)(st->st_mode & 07777));
	else
		return NULL;
	return buf;
}

static int dir_trusted_as(struct ds_cache *c, int fd, const char *path, const char *hex,
			  const char *env)
{
	struct stat st;
	char why[96];

	if (fstat(fd, &st) != 0)
		return -errno;
	if (!ds__cache_untrusted(c, &st, why, sizeof(why)))
		return 0;
	if (st.st_mode & (S_IWGRP | S_IWOTH) && (st.st_uid == c->euid || st.st_uid == 0))
		ds__logf(c->log, DS_LOG_ERROR,
			 "cache %s%s%s: %s: not used, as another user could replace what it "
			 "holds; chmod go-w it, or use a cache of your own (%s)",
			 path, hex ? "/" : "", hex ? hex : "", why, env);
	else
		ds__logf(c->log, DS_LOG_ERROR,
			 "cache %s%s%s: %s: not used, as its owner could replace what it "
			 "holds; use a cache of your own (%s)",
			 path, hex ? "/" : "", hex ? hex : "", why, env);
	return -EACCES;
}

static int dir_trusted(struct ds_cache *c, int fd, const char *path, const char *hex)
{
	return dir_trusted_as(c, fd, path, hex, "DEBUGINFOD_CACHE_PATH");
}

/* mkdir -p: 0700 for our cache, like elfutils; 0755 for perf's. */
int ds__cache_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* A control file, written with its default if missing, as elfutils does. */
static void control_value(int rootfd, const char *name, int64_t dflt)
{
	int fd = openat(rootfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);

	if (fd >= 0) {
		dprintf(fd, "%lld\n", (long long)dflt);
		close(fd);
	}
}

/* Creates the root and reads the control files; once per context. */
int ds__cache_open_root(struct ds_cache *c)
{
	int fd, err = 0;

	pthread_mutex_lock(&c->lock);
	if (c->rootfd > 0)
		goto out;
	err = ds__cache_mkdirs(c->root, 0700);
	if (err)
		goto out;
	fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = dir_trusted(c, fd, c->root, NULL);
	if (err) {
		close(fd);
		goto out;
	}
	/* The values were read at init: readers use them without a lock. */
	control_value(fd, "cache_miss_s", CACHE_MISS_DEFAULT);
	control_value(fd, "max_unused_age_s", MAX_UNUSED_AGE_DEFAULT);
	control_value(fd, "cache_clean_interval_s", CLEAN_INTERVAL_DEFAULT);
	c->rootfd = fd;
out:
	pthread_mutex_unlock(&c->lock);
	return err;
}

/* ---- the directory of saved symbol indexes of local debuginfo
 *
 * Indexes of debuginfo fetched from debuginfod live in its cache entry
 * (lib/symbolize/symfile.c); those of local debuginfo (the binary itself,
 * /usr/lib/debug, perf's ~/.debug) here, one file per build ID, under the
 * cache's rules: 0700 directories we own, files opened without following
 * symlinks, and cleaned with the cache (max_unused_age_s, by access time). */

static bool env_off(const char *v)
{
	return v && (!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no") ||
		     !strcasecmp(v, "false"));
}

/* The path, and in *base the length of its part the user named: the
 * directory above what dsostore makes. */
static char *default_symindex_root(size_t *base)
{
	const char *env = getenv("DSOSTORE_SYMINDEX_PATH");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char *path = NULL;
	int n;

	*base = 0;
	if (env && *env)
		return strdup(env);
	if (xdg && *xdg) {
		n = asprintf(&path, "%s/dsostore/index", xdg);
		*base = strlen(xdg);
	} else if (home && *home) {
		n = asprintf(&path, "%s/.cache/dsostore/index", home);
		*base = strlen(home) + strlen("/.cache");
	} else {
		return NULL; /* nowhere: local indexes are not saved */
	}
	return n < 0 ? NULL : path;
}

int ds__cache_symindex_init(struct ds_cache *c, const char *opt_path, int mode)
{
	c->symindex_off = mode < 0 || (mode == 0 && env_off(getenv("DSOSTORE_SYMINDEX")));
	c->symindex_base = 0;
	c->symindex_root =
	    opt_path && *opt_path ? strdup(opt_path) : default_symindex_root(&c->symindex_base);
	if (!c->symindex_root)
		return opt_path && *opt_path ? -ENOMEM : 0;
	if (!c->symindex_base) {
		/* A path given whole: its last component is ours. */
		size_t len = strlen(c->symindex_root);

		while (len > 1 && c->symindex_root[len - 1] == '/')
			c->symindex_root[--len] = 0;
		while (len && c->symindex_root[len - 1] != '/')
			len--;
		c->symindex_base = len > 1 ? len - 1 : len;
	}
	return 0;
}

/*
 * The components after the base are walked with O_NOFOLLOW, each made
 * (with create) and checked: a directory of ours is never reached through
 * a symlink.  In a directory others can write ($XDG_CACHE_HOME in a sticky
 * /tmp), a planted symlink "dsostore" would lead our indexes, and the
 * cleaning of them, into a directory of its owner's choosing, and one to
 * a root-owned directory would pass the trust check.
 */
int ds__cache_symindex_dir(struct ds_cache *c, bool create, int *dirfd_out)
{
	const char *root = c->symindex_root, *p;
	char base[PATH_MAX], part[PATH_MAX];
	int fd, err, walked = 0;

	if (!root)
		return -ENOENT;
	if (c->symindex_base >= sizeof(base))
		return -ENAMETOOLONG;
	if (c->symindex_base == 0)
		snprintf(base, sizeof(base), "%s", root[0] == '/' ? "/" : ".");
	else
		snprintf(base, sizeof(base), "%.*s", (int)c->symindex_base, root);
	if (create) {
		err = ds__cache_mkdirs(base, 0700);
		if (err)
			return err;
	}
	fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (p = root + c->symindex_base;;) {
		size_t n;
		char comp[NAME_MAX + 1];
		int next;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (!n)
			break;
		if (n >= sizeof(comp)) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = 0;
		p += n;
		if (create && mkdirat(fd, comp, 0700) != 0 && errno != EEXIST) {
			err = -errno;
			close(fd);
			return err;
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			struct stat st;
			bool link;

			err = -errno;
			/* (ENOTDIR: O_DIRECTORY's, for a symlink to a file.) */
			link = err == -ELOOP || (err == -ENOTDIR &&
						 fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
						 S_ISLNK(st.st_mode));
			close(fd);
			if (!link)
				return err;
			ds__logf(c->log, DS_LOG_WARN,
				 "index directory %.*s is a symbolic link: not followed, and no "
				 "saved index is used; remove it, or set DSOSTORE_SYMINDEX_PATH",
				 (int)(p - root), root);
			return -ELOOP;
		}
		close(fd);
		fd = next;
		walked++;
		snprintf(part, sizeof(part), "%.*s", (int)(p - root), root);
		err = dir_trusted_as(c, fd, part, NULL, "DSOSTORE_SYMINDEX_PATH");
		if (err) {
			close(fd);
			return err;
		}
	}
	/* (A path of no component of ours: the base is the directory.) */
	if (!walked && (err = dir_trusted_as(c, fd, root, NULL, "DSOSTORE_SYMINDEX_PATH"))) {
		close(fd);
		return err;
	}
	*dirfd_out = fd;
	return 0;
}

/* The root we hold was removed: forget it (once, whoever sees it first)
 * and make it again. */
static int reopen_root(struct ds_cache *c, int stale)
{
	pthread_mutex_lock(&c->lock);
	if (c->rootfd == stale) {
		close(stale);
		c->rootfd = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return ds__cache_open_root(c);
}

/* "." or "..": a path component that leads elsewhere. */
bool ds__cache_bad_component(const char *c, size_t n)
{
	return (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.');
}

/*
 * A source path as debuginfod takes it: absolute, naming a file, and no
 * "." or ".." component.  Those would be resolved away by curl (it
 * removes dot segments after escaping, which leaves "." alone: the server
 * saw "GET /tmp/x" for "/../../../../tmp/x"), by a file:// server's file
 * system, or by the server: a request for another path.  Empty components
 * ("a//b.c") lead nowhere else and are kept: DWARF has them (a comp_dir
 * ending in "/"), and debuginfod and its client serve and cache them.
 */
static bool source_path_ok(const char *p)
{
	if (p[0] != '/')
		return false;
	for (p++;; p++) {
		size_t n = strcspn(p, "/");

		if (ds__cache_bad_component(p, n))
			return false;
		p += n;
		if (!*p)
			return n > 0; /* "/a/": a directory */
	}
}

int ds__cache_entry_name(enum ds_artifact what, const char *arg, char **out)
{
	char *name, *q;

	*out = NULL;
	switch (what) {
	case DS_ARTIFACT_DEBUGINFO:
		name = strdup("debuginfo");
		break;
	case DS_ARTIFACT_EXECUTABLE:
		name = strdup("executable");
		break;
	case DS_ARTIFACT_SECTION:
		/* One URL component, and one file name in the entry. */
		if (!arg || !*arg || strchr(arg, '/') || ds__cache_bad_component(arg, strlen(arg)))
			return -EINVAL;
		if (strlen(arg) > 200)
			return -ENAMETOOLONG;
		if (asprintf(&name, "section-%s", arg) < 0)
			name = NULL;
		break;
	case DS_ARTIFACT_SOURCE:
		if (!arg || !source_path_ok(arg))
			return -EINVAL;
		if (strlen(arg) > 1000)
			return -ENAMETOOLONG;
		name = malloc(strlen("source") + 2 * strlen(arg) + 1);
		if (!name)
			return -ENOMEM;
		q = stpcpy(name, "source");
		for (const char *p = arg; *p; p++) {
			if (*p == '/')
				q = stpcpy(q, "##");
			else if (*p == '#')
				q = stpcpy(q, "#_");
			else
				*q++ = *p;
		}
		*q = 0;
		break;
	default:
		return -EINVAL;
	}
	if (!name)
		return -ENOMEM;
	/* The entry is one file name, and so is its temporary (".<6 characters>" more):
	 * a deep source path may not fit (elfutils 0.192 hashes long names;
	 * 0.188 fails as we do, but later and less clearly). */
	if (strlen(name) + 7 > NAME_MAX) {
		free(name);
		return -ENAMETOOLONG;
	}
	*out = name;
	return 0;
}

/*
 * elfutils 0.192 names a source or section entry otherwise (PR32218:
 * debuginfod-client.c's path_escape()): "<type>-HHHHHHHH-<tail>", where
 * HHHHHHHH is the djb2 hash (h = 33 * h + c from 5381, over the path's
 * chars as signed chars, in an unsigned long, its low 32 bits in hex) of
 * the whole path or section name, and <tail> the name with every char but
 * [A-Za-z0-9._-] made '#', cut from the front so that hash, '-' and tail
 * fill at most NAME_MAX / 2 - 1 = 126 chars.  So
 * "section-0212c825-.debug_info" and "source-4f0c1a2b-#usr#include#stdio.h"
 * where 0.188 and dsostore write "section-.debug_info" and
 * "source##usr##include##stdio.h".  dsostore writes its own names (0.188's,
 * which gdb and perf on Debian 12 read) and links the file under 0.192's
 * too, and finds a file under either: the cache is shared both ways with
 * both (tests/cli/debuginfod_interop_0192.sh).
 */
#define ESCAPE_0192_MAX (NAME_MAX / 2)

/* The 0.192 name of the entry whose own name is name (what we write),
 * in out (NAME_MAX + 1 bytes); false: none other (debuginfo,
 * executable). */
static bool name_0192(const char *name, char *out)
{
	char arg[PATH_MAX], d[ESCAPE_0192_MAX];
	const char *type, *q;
	unsigned long h = 5381;
	size_t n = 0, dlen;
	ptrdiff_t w;

	if (!strncmp(name, "section-", 8)) {
		type = "section";
		q = name + 8;
		n = strlen(q);
		if (n >= sizeof(arg))
			return false;
		memcpy(arg, q, n + 1);
	} else if (!strncmp(name, "source#", 7)) {
		type = "source"; /* "##" is '/', "#_" is '#' (ds__cache_entry_name()) */
		for (q = name + 6; *q && n + 1 < sizeof(arg); q++) {
			if (q[0] == '#' && (q[1] == '#' || q[1] == '_')) {
				arg[n++] = q[1] == '#' ? '/' : '#';
				q++;
			} else {
				arg[n++] = *q;
			}
		}
		if (*q)
			return false;
		arg[n] = 0;
	} else {
		return false;
	}
	for (const char *c = arg; *c; c++)
		h = ((h << 5) + h) + (unsigned long)(long)(signed char)*c;
	dlen = n + 10 < sizeof(d) ? n + 10 : sizeof(d);
	d[dlen - 1] = 0;
	w = (ptrdiff_t)dlen - 2;
	for (ptrdiff_t i = (ptrdiff_t)n - 1; i >= 0 && w >= 0; i--) {
		char c = arg[i];

		d[w--] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
				 c == '.' || c == '-' || c == '_'
			 ? c
			 : '#';
	}
	snprintf(d, 9, "%08x", (unsigned int)h);
	d[8] = '-';
	return snprintf(out, NAME_MAX + 1, "%s-%s", type, d) <= NAME_MAX;
}

/*
 * Files already checked, so that a hit on them costs a few system calls,
 * not an ELF parse: a file is known by (dev, ino) and is unchanged while
 * its size and ctime are (a write, a chmod, a rename or a new link all
 * move the ctime).  A slot holds the last file that hashed to it.
 */
static uint64_t checked_slot(const struct stat *st)
{
	return ((uint64_t)st->st_dev * 0x9e3779b97f4a7c15ULL ^ (uint64_t)st->st_ino) %
	       DS_CACHE_CHECKED;
}

static bool same_file(const struct ds_cache_checked *k, const struct stat *st)
{
	return k->ino == st->st_ino && k->dev == st->st_dev && k->size == st->st_size &&
	       k->ctime_s == st->st_ctim.tv_sec && k->ctime_ns == st->st_ctim.tv_nsec;
}

static bool was_checked(struct ds_cache *c, const struct stat *st)
{
	bool hit;

	pthread_mutex_lock(&c->checked_lock);
	hit = same_file(&c->checked[checked_slot(st)], st);
	pthread_mutex_unlock(&c->checked_lock);
	return hit;
}

static void remember_checked(struct ds_cache *c, const struct stat *st)
{
	struct ds_cache_checked *k = &c->checked[checked_slot(st)];

	pthread_mutex_lock(&c->checked_lock);
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->size = st->st_size;
	k->ctime_s = st->st_ctim.tv_sec;
	k->ctime_ns = st->st_ctim.tv_nsec;
	pthread_mutex_unlock(&c->checked_lock);
}

/* 0 and *path_out: a cached file, checked; -ENOENT: a miss still honoured;
 * -ENODATA: nothing (an expired miss, or a bad entry, is removed);
 * -EACCES: the cache or the entry is not safe to use (logged). */
int ds__cache_lookup(struct ds_cache *c, const struct ds_build_id *bid, const char *hex,
		     enum ds_artifact what, const char *name, char **path_out)
{
	int rootfd = -1, dirfd = -1, fd = -1, err = -ENODATA;
	const char *bad = NULL;
	char why[160], alt[NAME_MAX + 1];
	struct stat st;

	/* The root is checked once per process: a hit is a few system
	 * calls (it was one stat() before the checks). */
	if (!atomic_load_explicit(&c->root_trusted, memory_order_acquire)) {
		rootfd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0)
			goto out; /* no cache yet */
		if ((err = dir_trusted(c, rootfd, c->root, NULL)))
			goto out;
		atomic_store_explicit(&c->root_trusted, true, memory_order_release);
		err = -ENODATA;
		dirfd = openat(rootfd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		char dir[PATH_MAX];

		if (snprintf(dir, sizeof(dir), "%s/%s", c->root, hex) >= (int)sizeof(dir))
			goto out;
		dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (dirfd < 0)
		goto out;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	/* Not ours: elfutils 0.192's name of it, if it has another. */
	if (fd < 0 && errno == ENOENT && name_0192(name, alt)) {
		fd = openat(dirfd, alt, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 || errno == ELOOP)
			name = alt;
	}
	if (fd < 0 && errno != ELOOP)
		goto out;
	/* Entries are only trusted once something is found in them: a
	 * directory alone is harmless, and so is an empty one. */
	if ((err = dir_trusted(c, dirfd, c->root, hex)))
		goto out;
	err = -ENODATA;
	if (fd < 0)
		bad = "a symbolic link";
	else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		bad = "not a regular file";
	else if (st.st_size == 0) {
		bool fresh = time(NULL) - st.st_mtime <= c->miss_s;

		if (!fresh)
			unlinkat(dirfd, name, 0);
		err = fresh ? -ENOENT : -ENODATA;
		goto out;
	} else if (!was_checked(c, &st)) {
		/* What a download must be (fetch.c's verify()). */
		bad = ds__elf_artifact_bad(fd, (uint64_t)st.st_size, bid, what, why, sizeof(why));
		if (!bad)
			remember_checked(c, &st);
	}
	if (bad) {
		ds__logf(c->log, DS_LOG_WARN, "cache %s/%s/%s: %s; removed, to be fetched again",
			 c->root, hex, name, bad);
		unlinkat(dirfd, name, 0);
		goto out;
	}
	if (asprintf(path_out, "%s/%s/%s", c->root, hex, name) < 0)
		err = -ENOMEM;
	else
		err = 0;
out:
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	if (rootfd >= 0)
		close(rootfd);
	return err;
}

/* The entry directory, created and opened; with exclusive, flock()ed
 * (LOCK_NB: -EWOULDBLOCK when another process holds it). */
int ds__cache_entry_open(struct ds_cache *c, const char *hex, bool lock, int *dirfd_out)
{
	int fd, err;

	err = ds__cache_open_root(c);
	if (err)
		return err;
	/* Twice: a concurrent clean may remove the empty directory between
	 * our mkdir and open, and the whole cache may have been removed
	 * (rm -rf) since the root was opened: then open it again. */
	for (int attempt = 0;; attempt++) {
		int rootfd = c->rootfd;

		if (mkdirat(rootfd, hex, 0700) == 0 || errno == EEXIST) {
			fd = openat(rootfd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				break;
		}
		if (errno != ENOENT || attempt)
			return -errno;
		err = reopen_root(c, rootfd);
		if (err)
			return err;
	}
	err = dir_trusted(c, fd, c->root, hex);
	if (err) {
		close(fd);
		return err;
	}
	if (lock && flock(fd, LOCK_EX | LOCK_NB) != 0) {
		err = -errno;
		close(fd);
		return err == -EAGAIN ? -EWOULDBLOCK : err;
	}
	*dirfd_out = fd;
	return 0;
}

/* Remove the entry directory if it is empty (a failed fetch leaves
 * nothing behind); harmless when it is not. */
void ds__cache_entry_prune(struct ds_cache *c, const char *hex)
{
	int rootfd = c->rootfd;

	if (rootfd > 0)
		unlinkat(rootfd, hex, AT_REMOVEDIR);
}

static _Atomic uint64_t tmp_seq; /* temporary names made by this process */

/* A temporary name beside the entry: <name>.<6 random characters>, as
 * elfutils names its own (so its cleaner and ours treat leftovers alike). */
int ds__cache_tmp_name(const char *name, int attempt, char *tmpname, size_t len)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	struct timespec ts;
	char suffix[7];
	uint64_t r;

	/* (No getpid(): a system call per name.  Two processes that pick
	 * the same name in the same nanosecond: O_EXCL, and the next attempt.) */
	clock_gettime(CLOCK_REALTIME, &ts);
	r = (uint64_t)ts.tv_nsec * 2654435761u ^
	    (atomic_fetch_add(&tmp_seq, 1) + (uint64_t)attempt) * 0x9e3779b97f4a7c15ULL ^
	    (uint64_t)(uintptr_t)&ts;
	for (int i = 0; i < 6; i++, r /= 36)
		suffix[i] = letters[r % 36];
	suffix[6] = 0;
	if (snprintf(tmpname, len, "%s.%s", name, suffix) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int ds__cache_tmp_open_mode(int dirfd, const char *name, mode_t mode, char *tmpname, size_t len)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		int fd, err = ds__cache_tmp_name(name, attempt, tmpname, len);

		if (err)
			return err;
		fd = openat(dirfd, tmpname, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    mode);
		/* Held while the file is open, dropped by the kernel when the
		 * writer dies: what tells a clean that a temporary file is
		 * still being written (tmp_orphaned()).  A new file: nobody
		 * else can hold it yet but a clean in its grace window, and
		 * that one leaves it. */
		if (fd >= 0)
			flock(fd, LOCK_EX | LOCK_NB);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int ds__cache_tmp_open(int dirfd, const char *name, char *tmpname, size_t len)
{
	return ds__cache_tmp_open_mode(dirfd, name, 0600, tmpname, len);
}

static int commit_at(int dirfd, const char *tmpname, const char *name, int fd, time_t mtime)
{
	if (mtime > 0) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_NOW }, { .tv_sec = mtime } };

		futimens(fd, ts);
	}
	if (fsync(fd) != 0 || fchmod(fd, 0400) != 0 || renameat(dirfd, tmpname, dirfd, name) != 0) {
		int err = -errno;

		unlinkat(dirfd, tmpname, 0);
		return err;
	}
	return 0;
}

/* Is <root>/<hex>/<name> the file fd?  *a: fd's stat. */
static bool committed(struct ds_cache *c, const char *hex, const char *name, int fd,
		      struct stat *a)
{
	char path[PATH_MAX];
	struct stat b;

	if (snprintf(path, sizeof(path), "%s/%s/%s", c->root, hex, name) >= (int)sizeof(path))
		return false;
	return fstat(fd, a) == 0 && lstat(path, &b) == 0 && a->st_dev == b.st_dev &&
	       a->st_ino == b.st_ino;
}

/* len bytes of from at off to to (at its position); len UINT64_MAX: up to
 * the end of from.  -EIO if from ends before len bytes. */
static int copy_range(int from, uint64_t off, uint64_t len, int to)
{
	char buf[65536];
	loff_t pos = (loff_t)off;
	int err;

	while (len) {
		size_t want = len > (1u << 30) ? (1u << 30) : (size_t)len;
		ssize_t n = copy_file_range(from, &pos, to, NULL, want, 0);

		if (n == 0)
			return len == UINT64_MAX ? 0 : -EIO;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EXDEV && errno != ENOSYS && errno != EINVAL &&
			    errno != EOPNOTSUPP)
				return -errno;
			break; /* no copy_file_range between these: read and write */
		}
		if (len != UINT64_MAX)
			len -= (uint64_t)n;
	}
	while (len) {
		ssize_t n = pread(from, buf, len < sizeof(buf) ? (size_t)len : sizeof(buf), pos);

		if (n == 0)
			return len == UINT64_MAX ? 0 : -EIO;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		pos += n;
		if (len != UINT64_MAX)
			len -= (uint64_t)n;
		if ((err = ds__write_all(to, buf, (size_t)n)))
			return err;
	}
	return 0;
}

int ds__cache_copy_fd(int from, int to)
{
	return copy_range(from, 0, UINT64_MAX, to);
}

/* The bytes [off, off + len) of from (len UINT64_MAX: to its end) in a
 * new temporary file of name in the entry (made if need be): 0 with
 * *dirfd_out and *fd_out open and tmp named, for the caller to commit. */
static int copy_to_tmp(struct ds_cache *c, const char *hex, const char *name, int from,
		       uint64_t off, uint64_t len, char tmp[NAME_MAX + 1], int *dirfd_out,
		       int *fd_out)
{
	int dirfd, fd, err;

	err = ds__cache_entry_open(c, hex, false, &dirfd);
	if (err)
		return err;
	fd = ds__cache_tmp_open(dirfd, name, tmp, NAME_MAX + 1);
	if (fd < 0) {
		close(dirfd);
		return fd;
	}
	err = copy_range(from, off, len, fd);
	if (err) {
		unlinkat(dirfd, tmp, 0);
		close(fd);
		close(dirfd);
		return err;
	}
	*dirfd_out = dirfd;
	*fd_out = fd;
	return 0;
}

/* fd again, under a new temporary name in a new entry directory, then
 * renamed into place; *out: the new file, open. */
static int recommit(struct ds_cache *c, const char *hex, const char *name, int fd, time_t mtime,
		    int *out)
{
	char tmp[NAME_MAX + 1];
	int dirfd, nfd, err;

	err = copy_to_tmp(c, hex, name, fd, 0, UINT64_MAX, tmp, &dirfd, &nfd);
	if (err)
		return err;
	err = commit_at(dirfd, tmp, name, nfd, mtime);
	close(dirfd);
	if (err)
		close(nfd);
	else
		*out = nfd;
	return err;
}

/* The file just committed as name, under elfutils 0.192's name too (best
 * effort; a miss 0.192 left there is replaced).  false: name has no other
 * name (nothing was tried). */
static bool link_0192(int dirfd, const char *name)
{
	char alt[NAME_MAX + 1];
	struct stat st;

	if (!name_0192(name, alt))
		return false;
	if (linkat(dirfd, name, dirfd, alt, 0) == 0 || errno != EEXIST)
		return true;
	if (fstatat(dirfd, alt, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size == 0 && unlinkat(dirfd, alt, 0) == 0)
		(void)linkat(dirfd, name, dirfd, alt, 0);
	return true;
}

/*
 * The temporary file becomes the entry's name, and stays reachable there.
 * If the entry (or the whole cache) was removed while we downloaded — rm
 * -rf of the cache, a clean — the rename went into a directory nobody can
 * reach (or failed: the temporary name went with it), and the path we
 * would hand out does not exist.  Then the entry is made again and the
 * bytes copied into it, a few times at most.
 */
int ds__cache_commit(struct ds_cache *c, const char *hex, int dirfd, const char *tmpname,
		     const char *name, int fd, time_t mtime, bool checked)
{
	int err = commit_at(dirfd, tmpname, name, fd, mtime), copy = -1;
	struct stat st;

	for (int attempt = 0;; attempt++) {
		if (err && err != -ENOENT)
			break;
		if (!err && committed(c, hex, name, copy >= 0 ? copy : fd, &st))
			break;
		if (attempt == 3) {
			err = -ENOENT;
			break;
		}
		ds__logf(c->log, DS_LOG_INFO, "cache %s/%s: removed while %s was written; again",
			 c->root, hex, name);
		if (copy >= 0)
			close(copy);
		copy = -1;
		err = recommit(c, hex, name, fd, mtime, &copy);
	}
	/* What the caller verified, remembered as ds__cache_lookup()'s check
	 * remembers it (the file as it is now: the rename moved its ctime),
	 * so that the first hit on a download (the waiting callers', `dsostore
	 * serve`'s headers of it) does not parse its ELF again. */
	if (!err && checked) {
		/* (a link moves the ctime too: then the file is looked at again) */
		if (!link_0192(dirfd, name) || fstat(copy >= 0 ? copy : fd, &st) == 0)
			remember_checked(c, &st);
	} else if (!err) {
		link_0192(dirfd, name);
	}
	if (copy >= 0)
		close(copy);
	return err;
}

/*
 * The bytes [off, off + len) of from (a cached debuginfo or executable)
 * as the entry's file name: a section cut from it, as elfutils' client
 * cuts one (extract_section()).  Written as a download is: a temporary
 * file, fsync()ed, 0400, renamed into place; an older hdr- file of the
 * name goes (it would describe another answer).  The entry directory is
 * not locked: whoever renames last puts the same bytes there.
 */
int ds__cache_write_range(struct ds_cache *c, const char *hex, const char *name, int from,
			  uint64_t off, uint64_t len)
{
	char tmp[NAME_MAX + 1];
	int dirfd, fd, err;

	err = copy_to_tmp(c, hex, name, from, off, len, tmp, &dirfd, &fd);
	if (err)
		return err;
	err = ds__cache_commit(c, hex, dirfd, tmp, name, fd, 0, false);
	close(fd);
	close(dirfd);
	if (!err)
		ds__cache_write_hdr(c, hex, name, NULL);
	return err;
}

/*
 * The header cache of elfutils 0.193 (debuginfod-client.c, "hdr-"): beside
 * <entry>, hdr-<entry> holds the x-debuginfod-* headers its download came
 * with, each line as sent without its CR ("X-DEBUGINFOD-SIZE: 123\n"), the
 * whole followed by one NUL byte; written after the file, best effort;
 * read on a hit (debuginfod_get_headers()).  elfutils makes it 0600
 * (mkstemp); ours are 0400 like every file we commit, so that a clean does
 * not take "hdr-section-.symtab" for a temporary file.  A download without
 * such headers removes an old one: it would describe another file.
 */
#define HDR_MAX (64 << 10) /* transfer.c's bound on a response's headers */

static int hdr_name(const char *name, char *out, size_t len)
{
	return snprintf(out, len, "hdr-%s", name) >= (int)len ? -ENAMETOOLONG : 0;
}

void ds__cache_write_hdr(struct ds_cache *c, const char *hex, const char *name, const char *hdrs)
{
	char dir[PATH_MAX], hname[NAME_MAX + 1], tmp[PATH_MAX];
	size_t len = hdrs ? strlen(hdrs) + 1 : 0; /* with its NUL, as elfutils */
	int dirfd, fd;

	if (snprintf(dir, sizeof(dir), "%s/%s", c->root, hex) >= (int)sizeof(dir) ||
	    hdr_name(name, hname, sizeof(hname)))
		return;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return;
	if (len <= 1 || len > HDR_MAX) {
		unlinkat(dirfd, hname, 0);
		close(dirfd);
		return;
	}
	fd = ds__cache_tmp_open(dirfd, hname, tmp, sizeof(tmp));
	if (fd >= 0) {
		if (ds__write_all(fd, hdrs, len) || fchmod(fd, 0400) ||
		    renameat(dirfd, tmp, dirfd, hname))
			unlinkat(dirfd, tmp, 0);
		close(fd);
	}
	close(dirfd);
}

char *ds__cache_read_small(int dirfd, const char *name, size_t max, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > max || !(buf = malloc((size_t)st.st_size + 1)))
		goto out;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	*len = got;
out:
	close(fd);
	return buf;
}

int ds__cache_read_hdr(struct ds_cache *c, const char *hex, const char *name, bool check,
		       char **out)
{
	char dir[PATH_MAX], hname[NAME_MAX + 1];
	size_t len = 0;
	int dirfd, err;
	struct stat st;
	char *buf;

	*out = NULL;
	if (snprintf(dir, sizeof(dir), "%s/%s", c->root, hex) >= (int)sizeof(dir) ||
	    hdr_name(name, hname, sizeof(hname)))
		return -ENOENT;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return -ENOENT;
	if ((err = dir_trusted(c, dirfd, c->root, hex))) {
		close(dirfd);
		return err;
	}
	/* With check, the artifact beside it must be there as a lookup or a
	 * download checked it (the usual case: its caller just had it), in
	 * the same directory opened once; else -EAGAIN, and the caller looks
	 * it up (a file not checked yet by this process, or replaced since). */
	if (check && !(fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		       st.st_size > 0 && was_checked(c, &st))) {
		close(dirfd);
		return -EAGAIN;
	}
	buf = ds__cache_read_small(dirfd, hname, HDR_MAX, &len);
	close(dirfd);
	/* up to elfutils' NUL, or all of it */
	if (!buf || !buf[0]) {
		free(buf);
		return -ENOENT;
	}
	*out = buf;
	return 0;
}

void ds__cache_abort(int dirfd, const char *tmpname)
{
	if (tmpname[0])
		unlinkat(dirfd, tmpname, 0);
}

/* An empty file at the name: "no server has it", for cache_miss_s. */
int ds__cache_write_miss(int dirfd, const char *name)
{
	char tmp[PATH_MAX];
	int fd = ds__cache_tmp_open(dirfd, name, tmp, sizeof(tmp));

	int err;

	if (fd < 0)
		return fd;
	err = commit_at(dirfd, tmp, name, fd, 0);
	close(fd);
	return err;
}

struct clean_counts {
	uint64_t build_ids, files, bytes, misses, removed;
};

/* Whether s is the 6 characters ds__cache_tmp_name() adds. */
static bool tmp_suffix(const char *s)
{
	return strlen(s) == 6 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789") == 6;
}

/* Whether name is "<base>.<those 6 characters>", base an entry's name:
 * not one ending in '-' ("section-", "hdr-section-", 0.192's
 * "section-HASH-"), where the dot and six characters are a section's own
 * (".symtab", ".strtab", ".dynsym", ".rodata"). */
static bool tmp_name(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot && dot != name && dot[-1] != '-' && tmp_suffix(dot + 1);
}

/* A download's temporary file: "<entry>.<6 random characters>" still 0600
 * (a file committed is 0400).  The name alone would not do: a section
 * such as ".symtab" ends in six characters after a dot too; nor the mode
 * alone: elfutils 0.192 leaves a section it cut from a cached file
 * (extract_section(), "section-.symtab") 0600, as mkstemp made it, and
 * 0.193 its hdr- files (docs/oracles.md). */
static bool is_tmp_file(const char *name, const struct stat *st)
{
	return tmp_name(name) && (st->st_mode & 0777) == 0600;
}

/* A temporary file older than this is a clean's to remove once nobody
 * holds its flock.  The grace covers the instant between a writer's
 * open() and its flock(), and writers of versions that took no lock. */
#define TMP_GRACE_S 60

/* Whether the temporary file name in dirfd is left by a writer that is
 * gone: no process holds its flock (ds__cache_tmp_open_mode() takes one
 * for as long as the file is open, and the kernel drops it when the
 * writer dies, kill -9 included), and it is older than the grace.  A
 * clean's own lock is held until the file is unlinked: through *lockfd
 * (close it after unlinking), -1 when the answer is no. */
static bool tmp_orphaned(int dirfd, const char *name, const struct stat *st, time_t now,
			 int *lockfd)
{
	int fd;

	*lockfd = -1;
	if (now - st->st_mtime <= TMP_GRACE_S)
		return false;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return false;
	}
	*lockfd = fd;
	return true;
}

uint64_t ds__cache_tmp_bytes(struct ds_cache *c, const char *hex, const char *name)
{
	size_t len = strlen(name);
	uint64_t sum = 0;
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int fd;

	if (c->rootfd <= 0)
		return 0;
	fd = openat(c->rootfd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(dir)))
		if (!strncmp(de->d_name, name, len) && de->d_name[len] == '.' &&
		    fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && is_tmp_file(de->d_name, &st))
			sum += (uint64_t)st.st_size;
	closedir(dir);
	return sum;
}

static void walk_entry(struct ds_cache *c, int dirfd, bool clean, time_t now,
		       struct clean_counts *n)
{
	DIR *dir = fdopendir(dirfd);
	struct dirent *de;
	struct stat st;

	if (!dir) {
		close(dirfd);
		return;
	}
	while ((de = readdir(dir))) {
		bool remove = false;
		int lockfd = -1;

		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (is_tmp_file(de->d_name, &st)) {
			/* A download that died, or was killed; empty if between
			 * its open() and first write (on_body()), so told before
			 * a miss, which is the entry's own name, committed 0400. */
			remove = clean && tmp_orphaned(dirfd, de->d_name, &st, now, &lockfd);
		} else if (st.st_size == 0) {
			remove = now - st.st_mtime > c->miss_s;
			n->misses += !remove;
		} else {
			/* (a hdr- file ages as its artifact does, elfutils' rule,
			 * and is not an artifact to count) */
			bool hdr = !strncmp(de->d_name, "hdr-", 4);

			remove = now - st.st_atime > c->max_unused_age_s;
			if (!remove && !hdr) {
				n->files++;
				n->bytes += (uint64_t)st.st_size;
			}
		}
		if (clean && remove && unlinkat(dirfd, de->d_name, 0) == 0)
			n->removed++;
		else if (!clean && remove && st.st_size && strncmp(de->d_name, "hdr-", 4)) {
			n->files++;
			n->bytes += (uint64_t)st.st_size;
		}
		if (lockfd >= 0)
			close(lockfd);
	}
	closedir(dir);
}

static int walk(struct ds_cache *c, bool clean, struct clean_counts *n)
{
	time_t now = time(NULL);
	struct dirent *de;
	DIR *root;
	int fd, err;

	err = ds__cache_open_root(c);
	if (err)
		return err;
	fd = openat(c->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(root = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(root))) {
		struct ds_build_id bid;
		int efd;

		if (ds_build_id_parse(de->d_name, &bid) != 0)
			continue; /* control files and anything not ours */
		efd = openat(c->rootfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (efd < 0)
			continue;
		/* An entry being downloaded into is left alone. */
		if (clean && flock(efd, LOCK_EX | LOCK_NB) != 0) {
			close(efd);
			continue;
		}
		n->build_ids++;
		walk_entry(c, efd, clean, now, n);
		if (clean && unlinkat(c->rootfd, de->d_name, AT_REMOVEDIR) == 0)
			n->build_ids--;
	}
	closedir(root);
	return 0;
}

int ds__cache_stats(struct ds_cache *c, struct ds_cache_stats *out)
{
	struct clean_counts n = { 0 };
	int err = walk(c, false, &n);

	out->build_ids = n.build_ids;
	out->files = n.files;
	out->bytes = n.bytes;
	out->misses = n.misses;
	return err;
}

/* What follows the build ID in a temporary name of the index directory:
 * ".XXXXXX" or ".kallsyms.XXXXXX". */
static bool symindex_tmp_name(const char *rest)
{
	size_t len = strlen(rest);

	if (len == 16 && !strncmp(rest, ".kallsyms", 9))
		rest += 9, len -= 9;
	return len == 7 && rest[0] == '.' && tmp_suffix(rest + 1);
}

/* The saved indexes of local debuginfo (and kernels' symbols, lib/live/kernel.c),
 * by the entries' rules: a file unused (not mapped) for max_unused_age_s
 * goes, and so does a temporary file of a writer that is gone
 * (tmp_orphaned()).  There the name alone tells a temporary file: the
 * saved names are "<build-id>" and "<build-id>.kallsyms", and a writer
 * killed after its fchmod() to the index's mode leaves one that is no
 * longer 0600.  Names not ours stay. */
static void clean_symindex(struct ds_cache *c, time_t now, struct clean_counts *n)
{
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int fd;

	if (ds__cache_symindex_dir(c, false, &fd) != 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while ((de = readdir(dir))) {
		char hex[2 * DS_BUILD_ID_MAX + 1];
		struct ds_build_id bid;
		size_t len = strcspn(de->d_name, ".");
		bool remove;
		int lockfd = -1;

		if (len >= sizeof(hex))
			continue;
		memcpy(hex, de->d_name, len);
		hex[len] = 0;
		if (ds_build_id_parse(hex, &bid) != 0 ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (symindex_tmp_name(de->d_name + len))
			remove = tmp_orphaned(fd, de->d_name, &st, now, &lockfd);
		else if (!de->d_name[len] || !strcmp(de->d_name + len, ".kallsyms"))
			/* a saved index, or a kernel's symbols (lib/live/kernel.c):
			 * a kernel no longer booted leaves its file unused */
			remove = now - st.st_atime > c->max_unused_age_s;
		else
			continue;
		if (remove && unlinkat(fd, de->d_name, 0) == 0)
			n->removed++;
		if (lockfd >= 0)
			close(lockfd);
	}
	closedir(dir);
}

/* The interval's clock is the mtime of cache_clean_interval_s, as in
 * elfutils; it is touched after each clean. */
int ds__cache_clean(struct ds_cache *c, bool force)
{
	struct clean_counts n = { 0 };
	struct stat st;
	int err;

	err = ds__cache_open_root(c);
	if (err)
		return err;
	if (!force && fstatat(c->rootfd, "cache_clean_interval_s", &st, 0) == 0 &&
	    time(NULL) - st.st_mtime < c->clean_interval_s)
		return 0;
	err = walk(c, true, &n);
	if (err)
		return err;
	clean_symindex(c, time(NULL), &n);
	utimensat(c->rootfd, "cache_clean_interval_s", NULL, 0);
	return (int)(n.removed > INT32_MAX ? INT32_MAX : n.removed);
}
