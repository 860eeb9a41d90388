/* SPDX-License-Identifier: MIT */
/*
 * Directories indexed by build ID (ds_dirindex_*), what `dsostore serve`
 * answers its -F directories from.
 *
 * A scan walks every directory (symlinks never followed, directories
 * opened relative to their parent's descriptor with O_NOFOLLOW, so that
 * a rename during the walk cannot lead it outside), keeps each regular
 * file whose (dev, ino, size, mtime) the previous table has under the same
 * path without opening it, and reads the others: their ELF header, section
 * headers, section names and notes, through libelf.  The new table is
 * built off to the side and swapped in under the write lock; a lookup
 * holds the read lock only while it copies a path out, so it never waits
 * for a file to be read.
 *
 * A table is immutable once built: an array of files, and two open-
 * addressed hashes of indexes into it, by build ID (one slot per distinct
 * ID, its files chained through same_next) and by path (for the next
 * scan).
 */
#define _GNU_SOURCE
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Directories deeper than this below a scanned one are not entered: a
 * bind mount of a directory inside itself has no other end. */
#define DIRINDEX_MAX_DEPTH 64

#define NO_FILE UINT32_MAX

struct dfile {
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct ds_build_id bid; /* size 0: none, or not ELF */
	bool elf, has_debuginfo, has_code;
	uint32_t same_next; /* the next file of this build ID, or NO_FILE */
};

struct table {
	struct dfile *files;
	size_t n, cap;
	uint32_t *by_bid, *by_path; /* slots: a file's index, NO_FILE empty */
	size_t mask; /* slots - 1 */
	uint64_t elf_files, build_ids;
};

struct ds_dirindex {
	char **dirs;
	struct ds_log log;
	pthread_mutex_t scan_lock; /* one scan at a time */
	pthread_rwlock_t lock; /* cur and stats */
	struct table *cur;
	struct ds_dirindex_stats stats;
};

/* What one scan carries down the walk. */
struct walk {
	struct ds_dirindex *ix;
	const struct table *old; /* the scanner's own: only it swaps tables */
	struct table *new;
	uint64_t read, bytes;
	bool nomem;
};

static void table_free(struct table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->files[i].path);
	free(t->files);
	free(t->by_bid);
	free(t->by_path);
	free(t);
}

static uint64_t path_hash(const char *path)
{
	return ds__hash_bytes(path, strlen(path));
}

/* The slot of bid in t->by_bid: its own, or the empty one it would take. */
static size_t bid_slot(const struct table *t, const struct ds_build_id *bid)
{
	size_t i = ds__hash_bid(bid) & t->mask;

	while (t->by_bid[i] != NO_FILE && !ds_build_id_equal(&t->files[t->by_bid[i]].bid, bid))
		i = (i + 1) & t->mask;
	return i;
}

static size_t path_slot(const struct table *t, const char *path)
{
	size_t i = path_hash(path) & t->mask;

	while (t->by_path[i] != NO_FILE && strcmp(t->files[t->by_path[i]].path, path))
		i = (i + 1) & t->mask;
	return i;
}

/* The hashes over t->files, at most half full.  -ENOMEM. */
static int table_index(struct table *t)
{
	size_t slots = 16;

	if (t->n >= NO_FILE / 2)
		return -ENOMEM;
	while (slots < 2 * t->n)
		slots *= 2;
	t->by_bid = malloc(slots * sizeof(*t->by_bid));
	t->by_path = malloc(slots * sizeof(*t->by_path));
	if (!t->by_bid || !t->by_path)
		return -ENOMEM;
	memset(t->by_bid, 0xff, slots * sizeof(*t->by_bid));
	memset(t->by_path, 0xff, slots * sizeof(*t->by_path));
	t->mask = slots - 1;
	/* Backwards, each file put before the ones already chained: a chain
	 * lists its files in the table's order. */
	for (size_t k = t->n; k-- > 0;) {
		struct dfile *f = &t->files[k];
		size_t s;

		t->by_path[path_slot(t, f->path)] = (uint32_t)k;
		f->same_next = NO_FILE;
		if (!f->bid.size)
			continue;
		t->elf_files++;
		s = bid_slot(t, &f->bid);
		if (t->by_bid[s] == NO_FILE)
			t->build_ids++;
		else
			f->same_next = t->by_bid[s];
		t->by_bid[s] = (uint32_t)k;
	}
	return 0;
}

static const struct dfile *table_file(const struct table *t, const char *path)
{
	uint32_t k;

	if (!t || !t->n)
		return NULL;
	k = t->by_path[path_slot(t, path)];
	return k == NO_FILE ? NULL : &t->files[k];
}

static bool same_stat(const struct dfile *f, const struct stat *st)
{
	return f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
	       f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Read what the index keeps of one file.  ELF_C_READ, not a map: libelf
 * then pread()s the headers, the section names and the notes only, and a
 * file truncated while it is read gives a short read, not SIGBUS. */
static void read_file(struct walk *w, int dfd, const char *name, struct dfile *f)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct ds_elf_info info;
	struct stat st;
	Elf *elf;

	if (fd < 0) {
		ds__logf(&w->ix->log, DS_LOG_DEBUG, "dirindex: %s: %s", f->path, strerror(errno));
		return;
	}
	/* The file opened, not the name stat()ed before: what is recorded
	 * must be what was read. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	w->read++;
	w->bytes += (uint64_t)st.st_size;
	ds__elf_init();
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		f->elf = true;
		if (ds__elf_build_id(elf, &f->bid) != 0)
			memset(&f->bid, 0, sizeof(f->bid));
		if (ds__elf_inspect(elf, &info) == 0) {
			f->has_debuginfo = info.has_debug_info;
			f->has_code = info.has_code;
		}
	}
	if (!f->elf)
		ds__logf(&w->ix->log, DS_LOG_DEBUG, "dirindex: %s: not ELF", f->path);
	else if (!f->bid.size)
		ds__logf(&w->ix->log, DS_LOG_DEBUG, "dirindex: %s: no build ID", f->path);
	elf_end(elf);
	close(fd);
}

/* One regular file at path (name in dfd), stat()ed as st. */
static void add_file(struct walk *w, int dfd, const char *name, const char *path,
		     const struct stat *st)
{
	const struct dfile *old = table_file(w->old, path);
	struct table *t = w->new;
	struct dfile *files = ds__grow(t->files, &t->cap, t->n, sizeof(*t->files));
	struct dfile *f;

	if (!files) {
		w->nomem = true;
		return;
	}
	t->files = files;
	f = &files[t->n];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path) {
		w->nomem = true;
		return;
	}
	if (old && same_stat(old, st)) {
		char *copy = f->path;

		*f = *old;
		f->path = copy;
	} else {
		read_file(w, dfd, name, f);
	}
	t->n++;
}

/* The entries of the directory open as dfd (taken: closed here), whose
 * path is path[0..len) in a PATH_MAX buffer. */
static void walk_dir(struct walk *w, int dfd, char *path, size_t len, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d) {
		ds__logf(&w->ix->log, DS_LOG_DEBUG, "dirindex: %.*s: %s", (int)len, path,
			 strerror(errno));
		close(dfd);
		return;
	}
	while (!w->nomem && (de = readdir(d))) {
		const char *name = de->d_name;
		size_t nlen = strlen(name);
		size_t sub = len && path[len - 1] == '/' ? len : len + 1;
		struct stat st;

		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (sub + nlen >= PATH_MAX) {
			ds__logf(&w->ix->log, DS_LOG_DEBUG, "dirindex: %.*s/%s: path too long",
				 (int)len, path, name);
			continue;
		}
		path[len] = '/';
		memcpy(path + sub, name, nlen + 1);
		if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			ds__logf(&w->ix->log, DS_LOG_DEBUG, "dirindex: %s: %s", path,
				 strerror(errno));
		} else if (S_ISREG(st.st_mode)) {
			add_file(w, dirfd(d), name, path, &st);
		} else if (S_ISDIR(st.st_mode) && depth >= DIRINDEX_MAX_DEPTH) {
			ds__logf(&w->ix->log, DS_LOG_DEBUG,
				 "dirindex: %s: more than %d directories deep, not entered", path,
				 DIRINDEX_MAX_DEPTH);
		} else if (S_ISDIR(st.st_mode)) {
			/* O_NOFOLLOW: a directory replaced by a symlink since
			 * fstatat() is not entered either. */
			int sfd = openat(dirfd(d), name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sfd < 0)
				ds__logf(&w->ix->log, DS_LOG_DEBUG, "dirindex: %s: %s", path,
					 strerror(errno));
			else
				walk_dir(w, sfd, path, sub + nlen, depth + 1);
		}
		path[len] = 0;
	}
	closedir(d);
}

static int walk_top(struct walk *w, const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);
	/* The directory named is followed if it is a symlink (its owner
	 * chose it); nothing under it is. */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0) {
		int err = -errno;

		ds__logf(&w->ix->log, DS_LOG_WARN, "dirindex: cannot scan %s: %s", dir,
			 strerror(-err));
		return err;
	}
	if (len >= PATH_MAX) {
		close(dfd);
		return -ENAMETOOLONG;
	}
	memcpy(path, dir, len + 1);
	walk_dir(w, dfd, path, len, 0);
	return 0;
}

DS_API int ds_dirindex_scan(struct ds_dirindex *ix)
{
	struct walk w = { .ix = ix };
	int64_t t0 = ds__now_ns();
	struct table *old;
	int err = 0;

	if (!ix)
		return -EINVAL;
	pthread_mutex_lock(&ix->scan_lock);
	w.old = ix->cur; /* only a scan, under scan_lock, changes it */
	w.new = calloc(1, sizeof(*w.new));
	if (!w.new) {
		pthread_mutex_unlock(&ix->scan_lock);
		return -ENOMEM;
	}
	for (char **dir = ix->dirs; *dir && !w.nomem; dir++) {
		int e = walk_top(&w, *dir);

		if (e && !err)
			err = e;
	}
	if (w.nomem || table_index(w.new) != 0) {
		ds__logf(&ix->log, DS_LOG_ERROR, "dirindex: out of memory, index not updated");
		table_free(w.new);
		pthread_mutex_unlock(&ix->scan_lock);
		return -ENOMEM;
	}
	pthread_rwlock_wrlock(&ix->lock);
	old = ix->cur;
	ix->cur = w.new;
	ix->stats.files = w.new->n;
	ix->stats.elf_files = w.new->elf_files;
	ix->stats.build_ids = w.new->build_ids;
	ix->stats.scans++;
	ix->stats.files_read += w.read;
	ix->stats.bytes_read += w.bytes;
	ix->stats.last_scan_s = (double)(ds__now_ns() - t0) / 1e9;
	pthread_rwlock_unlock(&ix->lock);
	table_free(old);
	ds__logf(&ix->log, DS_LOG_INFO,
		 "dirindex: %zu files, %llu with a build ID (%llu distinct); %llu read, in %.3f s",
		 w.new->n, (unsigned long long)w.new->elf_files,
		 (unsigned long long)w.new->build_ids, (unsigned long long)w.read,
		 (double)(ds__now_ns() - t0) / 1e9);
	pthread_mutex_unlock(&ix->scan_lock);
	if (err)
		return err;
	return w.read > INT_MAX ? INT_MAX : (int)w.read;
}

/* a fits the artifact better than b (both carry it). */
static bool better(const struct dfile *a, const struct dfile *b, enum ds_artifact what)
{
	bool a_alone = what == DS_ARTIFACT_DEBUGINFO ? !a->has_code : !a->has_debuginfo;
	bool b_alone = what == DS_ARTIFACT_DEBUGINFO ? !b->has_code : !b->has_debuginfo;

	if (a_alone != b_alone)
		return a_alone;
	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec > b->mtime.tv_sec;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec > b->mtime.tv_nsec;
	return strcmp(a->path, b->path) < 0; /* the same answer every time */
}

/* The best file of bid for what, its path copied out and, with st, what
 * the scan saw of it. */
static int find(struct ds_dirindex *ix, const struct ds_build_id *bid, enum ds_artifact what,
		char **path_out, struct dfile *seen)
{
	const struct dfile *best = NULL;
	const struct table *t;
	int err = -ENOENT;

	if (!ix || !bid || !path_out || !bid->size || bid->size > DS_BUILD_ID_MAX ||
	    (what != DS_ARTIFACT_DEBUGINFO && what != DS_ARTIFACT_EXECUTABLE))
		return -EINVAL;
	*path_out = NULL;
	pthread_rwlock_rdlock(&ix->lock);
	t = ix->cur;
	if (t && t->n) {
		for (uint32_t k = t->by_bid[bid_slot(t, bid)]; k != NO_FILE;
		     k = t->files[k].same_next) {
			const struct dfile *f = &t->files[k];
			bool has = what == DS_ARTIFACT_DEBUGINFO ? f->has_debuginfo : f->has_code;

			if (has && (!best || better(f, best, what)))
				best = f;
		}
	}
	if (best) {
		*path_out = strdup(best->path);
		err = *path_out ? 0 : -ENOMEM;
		if (seen)
			*seen = *best;
	}
	pthread_rwlock_unlock(&ix->lock);
	return err;
}

DS_API int ds_dirindex_find(struct ds_dirindex *ix, const struct ds_build_id *bid,
			    enum ds_artifact what, char **path_out)
{
	return find(ix, bid, what, path_out, NULL);
}

DS_API int ds_dirindex_open(struct ds_dirindex *ix, const struct ds_build_id *bid,
			    enum ds_artifact what, char **path_out, int *fd_out)
{
	struct dfile seen;
	struct stat st;
	int err, fd;

	if (!fd_out)
		return -EINVAL;
	*fd_out = -1;
	if ((err = find(ix, bid, what, path_out, &seen)))
		return err;
	fd = open(*path_out, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		err = -errno;
	} else if (fstat(fd, &st)) {
		err = -errno;
	} else if (!S_ISREG(st.st_mode) || st.st_dev != seen.dev || st.st_ino != seen.ino ||
		   st.st_size != seen.size || st.st_mtim.tv_sec != seen.mtime.tv_sec ||
		   st.st_mtim.tv_nsec != seen.mtime.tv_nsec) {
		/* (the key a rescan compares: what the scan read is gone) */
		err = -ESTALE;
	} else {
		*fd_out = fd;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	free(*path_out);
	*path_out = NULL;
	return err;
}

DS_API void ds_dirindex_stats(struct ds_dirindex *ix, struct ds_dirindex_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!ix)
		return;
	pthread_rwlock_rdlock(&ix->lock);
	*out = ix->stats;
	pthread_rwlock_unlock(&ix->lock);
}

DS_API struct ds_dirindex *ds_dirindex_new(const char *const *dirs,
					   const struct ds_dirindex_opts *opts)
{
	struct ds_dirindex *ix;
	size_t n = 0;

	if (!dirs) {
		errno = EINVAL;
		return NULL;
	}
	for (; dirs[n]; n++) {
		if (!dirs[n][0]) {
			errno = EINVAL;
			return NULL;
		}
	}
	ix = calloc(1, sizeof(*ix));
	if (!ix || !(ix->dirs = calloc(n + 1, sizeof(*ix->dirs))))
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (!(ix->dirs[i] = strdup(dirs[i])))
			goto nomem;
	ix->log.fn = DS_OPT(opts, log_fn, NULL);
	ix->log.user = DS_OPT(opts, log_user, NULL);
	ix->log.level = DS_OPT(opts, log_level, DS_LOG_ERROR);
	pthread_mutex_init(&ix->scan_lock, NULL);
	pthread_rwlock_init(&ix->lock, NULL);
	return ix;
nomem:
	if (ix && ix->dirs)
		for (size_t i = 0; i < n; i++)
			free(ix->dirs[i]);
	if (ix)
		free(ix->dirs);
	free(ix);
	errno = ENOMEM;
	return NULL;
}

DS_API void ds_dirindex_free(struct ds_dirindex *ix)
{
	if (!ix)
		return;
	table_free(ix->cur);
	for (char **dir = ix->dirs; *dir; dir++)
		free(*dir);
	free(ix->dirs);
	pthread_rwlock_destroy(&ix->lock);
	pthread_mutex_destroy(&ix->scan_lock);
	free(ix);
}

/* One file's results (it has a build ID): false when max_results is
 * reached (m is then incomplete). */
static bool meta_add(const struct dfile *f, struct ds_metadata *m, size_t max_results, int *err)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];

	if (!f->bid.size || (!f->has_code && !f->has_debuginfo))
		return true;
	if (max_results && m->n + 2 > max_results) {
		m->complete = false;
		return false;
	}
	ds_build_id_format(&f->bid, hex, sizeof(hex));
	/* (-EINVAL: a path that is not UTF-8 cannot be a JSON string) */
	if ((f->has_code && (*err = ds_metadata_add(m, "executable", hex, f->path, NULL)) == -ENOMEM) ||
	    (f->has_debuginfo &&
	     (*err = ds_metadata_add(m, "debuginfo", hex, f->path, NULL)) == -ENOMEM))
		return false;
	*err = 0;
	return true;
}

DS_API int ds_dirindex_metadata(struct ds_dirindex *ix, const char *key, const char *value,
				struct ds_metadata *m, size_t max_results, unsigned int max_ms)
{
	bool glob = key && !strcmp(key, "glob");
	int64_t until = max_ms ? ds__now_ns() + (int64_t)max_ms * 1000000 : INT64_MAX;
	const struct table *t;
	size_t vlen = value ? strlen(value) : 0;
	int err = 0;

	if (!ix || !m || !key || (!glob && strcmp(key, "file")) || !vlen || vlen > 4096)
		return -EINVAL;
	pthread_rwlock_rdlock(&ix->lock);
	t = ix->cur;
	if (!glob) {
		const struct dfile *f = table_file(t, value);

		if (f)
			meta_add(f, m, max_results, &err);
	} else {
		for (size_t k = 0; t && k < t->n; k++) {
			const struct dfile *f = &t->files[k];

			/* The clock every 256 files: a match costs at most
			 * len(pattern) x len(path) steps. */
			if (!(k & 255) && k && ds__now_ns() > until) {
				m->complete = false;
				break;
			}
			if (f->bid.size && ds__metadata_glob(value, f->path) &&
			    !meta_add(f, m, max_results, &err))
				break;
		}
	}
	pthread_rwlock_unlock(&ix->lock);
	return err;
}
