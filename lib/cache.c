/* SPDX-License-Identifier: MIT */
/*
 * The on-disk cache, laid out as the elfutils debuginfod client (0.188)
 * lays it out, so that each client finds what the other downloaded:
 *
 *   <root>/<hex>/debuginfo | executable | section-<name> | source<escaped>
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
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int ds__cache_init(struct ds_cache *c, const char *opt_path)
{
	int fd;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
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
	pthread_mutex_destroy(&c->lock);
}

/* mkdir -p, 0700 like elfutils. */
static int mkdirs(const char *path)
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
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) != 0 && errno != EEXIST)
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
	err = mkdirs(c->root);
	if (err)
		goto out;
	fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
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

char *ds__cache_entry_name(enum ds_artifact what, const char *arg)
{
	char *name, *q;

	switch (what) {
	case DS_ARTIFACT_DEBUGINFO:
		return strdup("debuginfo");
	case DS_ARTIFACT_EXECUTABLE:
		return strdup("executable");
	case DS_ARTIFACT_SECTION:
		if (!arg || !*arg || strchr(arg, '/') || strlen(arg) > 200)
			return NULL;
		return asprintf(&name, "section-%s", arg) < 0 ? NULL : name;
	case DS_ARTIFACT_SOURCE:
		if (!arg || arg[0] != '/' || strlen(arg) > 1000)
			return NULL;
		name = malloc(strlen("source") + 2 * strlen(arg) + 1);
		if (!name)
			return NULL;
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
		return name;
	}
	return NULL;
}

/* 0 and *path_out: a cached file; -ENOENT: a miss still honoured;
 * -ENODATA: nothing (an expired miss is removed). */
int ds__cache_lookup(struct ds_cache *c, const char *hex, const char *name, char **path_out)
{
	struct stat st;
	char *path;

	if (asprintf(&path, "%s/%s/%s", c->root, hex, name) < 0)
		return -ENOMEM;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		free(path);
		return -ENODATA;
	}
	if (st.st_size == 0) {
		bool fresh = time(NULL) - st.st_mtime <= c->miss_s;

		if (!fresh)
			unlink(path);
		free(path);
		return fresh ? -ENOENT : -ENODATA;
	}
	*path_out = path;
	return 0;
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
	if (lock && flock(fd, LOCK_EX | LOCK_NB) != 0) {
		err = -errno;
		close(fd);
		return err == -EAGAIN ? -EWOULDBLOCK : err;
	}
	*dirfd_out = fd;
	return 0;
}

/* A temporary file beside the entry: <name>.<6 random characters>, as elfutils names its
 * own (so its cleaner and ours treat leftovers alike). */
int ds__cache_tmp_open(int dirfd, const char *name, char *tmpname, size_t len)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	struct timespec ts;

	for (int attempt = 0; attempt < 100; attempt++) {
		char suffix[7];
		uint64_t r;
		int fd;

		clock_gettime(CLOCK_REALTIME, &ts);
		r = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)getpid() << 20 ^
		    (uint64_t)attempt * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)&ts;
		for (int i = 0; i < 6; i++, r /= 36)
			suffix[i] = letters[r % 36];
		suffix[6] = 0;
		if (snprintf(tmpname, len, "%s.%s", name, suffix) >= (int)len)
			return -ENAMETOOLONG;
		fd = openat(dirfd, tmpname, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int ds__cache_commit(int dirfd, const char *tmpname, const char *name, int fd, time_t mtime)
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
	err = ds__cache_commit(dirfd, tmp, name, fd, 0);
	close(fd);
	return err;
}

struct clean_counts {
	uint64_t build_ids, files, bytes, misses, removed;
};

/* A download that died: "<entry>.<6 random characters>" still 0600 (both clients make
 * the file they commit 0400).  The name alone would not do: a section
 * such as ".symtab" ends in six characters after a dot too. */
static bool is_tmp_file(const char *name, const struct stat *st)
{
	const char *dot = strrchr(name, '.');

	return dot && dot != name && strlen(dot + 1) == 6 && (st->st_mode & 0777) == 0600;
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

		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (st.st_size == 0) {
			remove = now - st.st_mtime > c->miss_s;
			n->misses += !remove;
		} else if (is_tmp_file(de->d_name, &st)) {
			remove = now - st.st_mtime > 3600; /* a download that died */
		} else {
			remove = now - st.st_atime > c->max_unused_age_s;
			if (!remove) {
				n->files++;
				n->bytes += (uint64_t)st.st_size;
			}
		}
		if (clean && remove && unlinkat(dirfd, de->d_name, 0) == 0)
			n->removed++;
		else if (!clean && remove && st.st_size) {
			n->files++;
			n->bytes += (uint64_t)st.st_size;
		}
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
	utimensat(c->rootfd, "cache_clean_interval_s", NULL, 0);
	return (int)(n.removed > INT32_MAX ? INT32_MAX : n.removed);
}
