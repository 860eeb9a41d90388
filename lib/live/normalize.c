// SPDX-License-Identifier: MIT
/*
 * normalize: absolute addresses of a live process turned into (DSO, build
 * ID, file offset, ELF virtual address), what a profiling agent sends to
 * wherever it symbolizes; and the loadable segments that turn a file
 * offset into a virtual address, for the store too (a DSO known by its
 * debuginfo alone keeps its executable's).
 *
 * Maps come from the PROCMAP_QUERY ioctl on /proc/PID/maps (Linux 6.11+:
 * one VMA per call, no text to parse, the build ID read by the kernel),
 * else from the maps text.  A mapped file is opened through
 * /proc/PID/map_files/START-END (the very file mapped: deleted, replaced,
 * memfd), else /proc/PID/root/PATH (the process's mount namespace) when
 * its device and inode are those mapped; a file that cannot be opened is
 * read from the process's memory (its ELF headers are mapped), as is the
 * vDSO, which has no file.
 */
#define _GNU_SOURCE
#include "live.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <inttypes.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------------ parsers */

/* Hex digits at *p (at most 16: a 64-bit value); false if none or more. */
static bool hex_field(const char **p, const char *end, uint64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;
	unsigned n = 0;

	for (; q < end && isxdigit((unsigned char)*q); q++, n++) {
		if (n == 16)
			return false;
		v = v << 4 | (uint64_t)(isdigit((unsigned char)*q) ? *q - '0'
								: (tolower((unsigned char)*q) - 'a' + 10));
	}
	if (!n)
		return false;
	*p = q;
	*out = v;
	return true;
}

static bool dec_field(const char **p, const char *end, uint64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;

	if (q == end || !isdigit((unsigned char)*q))
		return false;
	for (; q < end && isdigit((unsigned char)*q); q++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*q - '0');
	}
	*p = q;
	*out = v;
	return true;
}

static bool one_char(const char **p, const char *end, char c)
{
	if (*p == end || **p != c)
		return false;
	(*p)++;
	return true;
}

static bool blanks(const char **p, const char *end)
{
	const char *q = *p;

	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (q == *p)
		return false;
	*p = q;
	return true;
}

static bool maps_line(const char *p, const char *end, struct ds__vma *v)
{
	uint64_t maj, min;

	memset(v, 0, sizeof(*v));
	if (!hex_field(&p, end, &v->start) || !one_char(&p, end, '-') ||
	    !hex_field(&p, end, &v->end) || v->end <= v->start || !blanks(&p, end))
		return false;
	if (end - p < 4)
		return false;
	for (int i = 0; i < 4; i++) {
		static const char want[] = "rwx";

		if (i < 3 && p[i] == want[i])
			v->prot |= 1u << i;
		else if (i == 3 && p[i] == 's')
			v->prot |= DS__VMA_SHARED;
		else if (p[i] != '-' && !(i == 3 && p[i] == 'p'))
			return false;
	}
	p += 4;
	if (!blanks(&p, end) || !hex_field(&p, end, &v->pgoff) || !blanks(&p, end) ||
	    !hex_field(&p, end, &maj) || !one_char(&p, end, ':') || !hex_field(&p, end, &min) ||
	    maj > UINT32_MAX || min > UINT32_MAX || !blanks(&p, end) ||
	    !dec_field(&p, end, &v->ino))
		return false;
	v->maj = (uint32_t)maj;
	v->min = (uint32_t)min;
	if (p < end && !blanks(&p, end))
		return false;
	v->name = p;
	v->name_len = (size_t)(end - p);
	return true;
}

int ds__procmaps_parse(const char *buf, size_t len, int (*fn)(void *arg, const struct ds__vma *v),
		       void *arg, size_t *bad)
{
	const char *p = buf, *end = buf + len;
	int n = 0;

	if (bad)
		*bad = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		struct ds__vma v;

		if (le > p && maps_line(p, le, &v)) {
			int rc = fn(arg, &v);

			if (rc < 0)
				return rc;
			if (n < INT_MAX)
				n++;
		} else if (le > p && bad) {
			(*bad)++;
		}
		p = nl ? nl + 1 : end;
	}
	return n;
}

static int cmp_perfsym(const void *a, const void *b)
{
	const struct ds__perfmap_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Same start: the later line (its name further in the copy) last. */
	return x->name < y->name ? -1 : x->name > y->name;
}

int ds__perfmap_parse(const char *buf, size_t len, struct ds__perfmap *out, size_t *bad)
{
	const char *p = buf, *end = buf + len;
	size_t cap = 0, n = 0, nb = 0, w = 0, lines = 0;
	struct ds__perfmap_sym *syms = NULL;
	char *names;

	memset(out, 0, sizeof(*out));
	if (bad)
		*bad = 0;
	if (len > DS__PERFMAP_MAX_BYTES)
		return -EFBIG;
	names = malloc(len + 1);
	if (!names)
		return -ENOMEM;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p;
		uint64_t start, size;

		if (++lines > DS__PERFMAP_MAX_LINES) {
			free(syms);
			free(names);
			return -EFBIG;
		}
		/* (A "0x" prefix is written by some JITs.) */
		if (le - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
			q += 2;
		if (hex_field(&q, le, &start) && blanks(&q, le)) {
			if (le - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
				q += 2;
		} else {
			q = NULL;
		}
		if (q && hex_field(&q, le, &size) && blanks(&q, le) && q < le && size &&
		    start + size > start) {
			const char *ne = le;

			if (ne > q && ne[-1] == '\r')
				ne--;
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 64;
				void *t = realloc(syms, nc * sizeof(*syms));

				if (!t) {
					free(syms);
					free(names);
					return -ENOMEM;
				}
				syms = t;
				cap = nc;
			}
			memcpy(names + w, q, (size_t)(ne - q));
			syms[n++] = (struct ds__perfmap_sym){ start, size, names + w };
			w += (size_t)(ne - q);
			names[w++] = 0;
		} else if (le > p) {
			nb++;
		}
		p = nl ? nl + 1 : end;
	}
	if (n)
		qsort(syms, n, sizeof(*syms), cmp_perfsym);
	/* Same start: keep the last written. */
	{
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			if (k && syms[k - 1].start == syms[i].start)
				k--;
			syms[k++] = syms[i];
		}
		n = k;
	}
	if (bad)
		*bad = nb;
	out->n = n;
	out->syms = syms;
	out->names = names;
	return 0;
}

const struct ds__perfmap_sym *ds__perfmap_find(const struct ds__perfmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The closest start at or below; an earlier, longer one may cover
	 * addr when that one ends before it: look back a little. */
	for (size_t i = lo, k = 0; i > 0 && k < 16; i--, k++) {
		const struct ds__perfmap_sym *s = &m->syms[i - 1];

		if (addr - s->start < s->size)
			return s;
	}
	return NULL;
}

void ds__perfmap_release(struct ds__perfmap *m)
{
	free(m->syms);
	free(m->names);
	memset(m, 0, sizeof(*m));
}

/* --------------------------------------------------------- normalizer */

#define MAPS_MAX_BYTES (64u << 20) /* /proc/PID/maps text read at most */
#define MAPS_MAX (1u << 20) /* mappings kept at most */
#define VDSO_MAX (1u << 20) /* bytes of a vDSO image */
#define ELF_HEAD_MAX (64u << 10) /* bytes read of a mapped file's first page(s) */

/* PROCMAP_QUERY (linux/fs.h of 6.11): defined here, for older headers. */
struct ds_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define DS_PROCMAP_QUERY _IOWR('f', 17, struct ds_procmap_query)
#define DS_PROCMAP_COVERING_OR_NEXT_VMA 0x10

enum { K_FILE = 0, K_ANON, K_VDSO };

/* A mapped file, resolved the first time an address falls in it. */
struct nfile {
	struct nfile *next;
	uint32_t maj, min;
	uint64_t ino;
	enum ds_norm_reason reason; /* OK, NO_BUILD_ID, ERROR */
	int error;
	struct ds_dso *dso;
	struct ds_build_id bid;
	struct ds__loadmap *lm;
};

struct nmap {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
	unsigned int prot;
	int kind;
	char *name;
	struct nfile *file; /* K_FILE, once resolved */
	struct ds_build_id kbid; /* what PROCMAP_QUERY read */
};

struct snapshot {
	struct nmap *v;
	size_t n, cap;
};

struct ds_normalizer {
	struct ds_store *store;
	int pid;
	bool no_query, no_perf_map, query_failed;
	bool same_root; /* the process's root is ours */
	bool stale;
	int mem_fd;
	char proc[32]; /* "/proc/PID" */
	struct snapshot cur, old; /* old: the paths of the last call's answers */
	size_t last; /* index of the mapping hit last */
	struct nfile *files;
	/* The perf map. */
	bool pm_tried;
	struct ds__perfmap pm;
	struct timespec pm_mtime;
	off_t pm_size;
	char *pm_path;
	/* ds_normalizer_symbolize()'s per-DSO batch, kept warm (pidsym.c). */
	struct ds_sym_batch *scratch;
};

static const char *const reason_names[] = {
	[DS_NORM_OK] = "ok",
	[DS_NORM_UNMAPPED] = "unmapped",
	[DS_NORM_ANON] = "anonymous",
	[DS_NORM_JIT] = "jit",
	[DS_NORM_NO_BUILD_ID] = "no build ID",
	[DS_NORM_KERNEL] = "kernel",
	[DS_NORM_ERROR] = "error",
};

DS_API const char *ds_norm_reason_name(enum ds_norm_reason r)
{
	return (unsigned)r < sizeof(reason_names) / sizeof(reason_names[0]) ? reason_names[r]
									     : "?";
}

static void snapshot_release(struct snapshot *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int map_kind(const struct ds__vma *v)
{
	if (v->name_len == 6 && !memcmp(v->name, "[vdso]", 6))
		return K_VDSO;
	if (v->ino && v->name_len && v->name[0] == '/')
		return K_FILE;
	return K_ANON;
}

static int snapshot_add(void *arg, const struct ds__vma *v)
{
	struct snapshot *s = arg;
	struct nmap *m;

	if (s->n == MAPS_MAX)
		return -E2BIG;
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 256;
		void *t = realloc(s->v, nc * sizeof(*s->v));

		if (!t)
			return -ENOMEM;
		s->v = t;
		s->cap = nc;
	}
	m = &s->v[s->n];
	*m = (struct nmap){ .start = v->start, .end = v->end, .pgoff = v->pgoff, .ino = v->ino,
			    .maj = v->maj, .min = v->min, .prot = v->prot, .kind = map_kind(v) };
	m->name = strndup(v->name, v->name_len);
	if (!m->name)
		return -ENOMEM;
	s->n++;
	return 0;
}

/* The maps through PROCMAP_QUERY: one VMA per call, the next one after
 * the end of the last.  -ENOTTY where the kernel has no such ioctl. */
static int read_maps_query(struct ds_normalizer *n, struct snapshot *s)
{
	char path[64], name[PATH_MAX + 32];
	uint64_t addr = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/maps", n->proc);
	fd = ds__open_regular(path);
	if (fd < 0)
		return fd;
	for (;;) {
		unsigned char bid[DS_BUILD_ID_MAX];
		struct ds_procmap_query q = {
			.size = sizeof(q),
			.query_flags = DS_PROCMAP_COVERING_OR_NEXT_VMA,
			.query_addr = addr,
			.vma_name_size = sizeof(name),
			.vma_name_addr = (uint64_t)(uintptr_t)name,
			.build_id_size = sizeof(bid),
			.build_id_addr = (uint64_t)(uintptr_t)bid,
		};
		struct ds__vma v;

		if (ioctl(fd, DS_PROCMAP_QUERY, &q) != 0) {
			err = errno == ENOENT ? 0 : -errno; /* ENOENT: no VMA after addr */
			break;
		}
		if (q.vma_end <= q.vma_start || q.vma_end <= addr)
			break; /* (never, but no loop forever on it) */
		v = (struct ds__vma){ .start = q.vma_start, .end = q.vma_end,
				      .pgoff = q.vma_offset, .ino = q.inode,
				      .maj = q.dev_major, .min = q.dev_minor };
		v.prot = (q.vma_flags & 1 ? DS__VMA_R : 0) | (q.vma_flags & 2 ? DS__VMA_W : 0) |
			 (q.vma_flags & 4 ? DS__VMA_X : 0) | (q.vma_flags & 8 ? DS__VMA_SHARED : 0);
		v.name = name;
		v.name_len = q.vma_name_size ? strnlen(name, q.vma_name_size) : 0;
		err = snapshot_add(s, &v);
		if (err)
			break;
		if (q.build_id_size && q.build_id_size <= DS_BUILD_ID_MAX) {
			s->v[s->n - 1].kbid.size = (uint8_t)q.build_id_size;
			memcpy(s->v[s->n - 1].kbid.data, bid, q.build_id_size);
		}
		addr = q.vma_end;
	}
	close(fd);
	return err;
}

static int read_maps_text(struct ds_normalizer *n, struct snapshot *s)
{
	char path[64], *buf;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/maps", n->proc);
	err = ds__read_whole(path, 1 << 16, MAPS_MAX_BYTES, &buf, &len);
	if (err)
		return err;
	err = ds__procmaps_parse(buf, len, snapshot_add, s, NULL);
	free(buf);
	return err < 0 ? err : 0;
}

static int cmp_map(const void *a, const void *b)
{
	const struct nmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Read the maps into cur (the old cur freed, or kept in old). */
static int refresh(struct ds_normalizer *n, bool keep_old)
{
	struct snapshot s = { 0 };
	int err = -ENOTTY;

	if (!n->no_query && !n->query_failed) {
		err = read_maps_query(n, &s);
		if (err == -ENOTTY || err == -EINVAL || err == -EOPNOTSUPP) {
			n->query_failed = true;
			snapshot_release(&s);
		}
	}
	if (n->no_query || n->query_failed)
		err = read_maps_text(n, &s);
	if (err) {
		snapshot_release(&s);
		return err == -ENOENT ? -ESRCH : err;
	}
	if (s.n) /* (qsort's base may not be NULL) */
		qsort(s.v, s.n, sizeof(*s.v), cmp_map);
	if (keep_old) {
		snapshot_release(&n->old);
		n->old = n->cur;
	} else {
		snapshot_release(&n->cur);
	}
	n->cur = s;
	n->last = 0;
	n->stale = false;
	return 0;
}

static void files_release(struct ds_normalizer *n)
{
	while (n->files) {
		struct nfile *f = n->files;

		n->files = f->next;
		ds_dso_put(f->dso);
		free(f->lm);
		free(f);
	}
	for (size_t i = 0; i < n->cur.n; i++)
		n->cur.v[i].file = NULL;
	for (size_t i = 0; i < n->old.n; i++)
		n->old.v[i].file = NULL;
}

DS_API struct ds_normalizer *ds_normalizer_new(struct ds_store *store, int pid,
					       const struct ds_normalizer_opts *opts)
{
	struct ds_normalizer *n;
	struct stat a, b;
	char path[64];
	int err;

	if (!store || pid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		errno = ENOMEM;
		return NULL;
	}
	n->store = store;
	n->pid = pid;
	n->mem_fd = -1;
	n->no_query = DS_OPT(opts, no_procmap_query, false);
	n->no_perf_map = DS_OPT(opts, no_perf_map, false);
	snprintf(n->proc, sizeof(n->proc), "/proc/%d", pid);
	snprintf(path, sizeof(path), "%s/root", n->proc);
	n->same_root = stat(path, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev &&
		       a.st_ino == b.st_ino;
	/* Another mount namespace has other files at the same paths. */
	snprintf(path, sizeof(path), "%s/ns/mnt", n->proc);
	if (n->same_root && stat(path, &a) == 0 && stat("/proc/self/ns/mnt", &b) == 0 &&
	    a.st_ino != b.st_ino)
		n->same_root = false;
	err = refresh(n, false);
	if (err) {
		ds_normalizer_free(n);
		errno = -err;
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/mem", n->proc);
	n->mem_fd = open(path, O_RDONLY | O_CLOEXEC); /* (-1: no file read from memory) */
	return n;
}

struct ds_store *ds__normalizer_store(const struct ds_normalizer *n)
{
	return n->store;
}

struct ds_sym_batch *ds__normalizer_scratch(struct ds_normalizer *n)
{
	if (!n->scratch)
		n->scratch = ds_sym_batch_new();
	return n->scratch;
}

DS_API void ds_normalizer_free(struct ds_normalizer *n)
{
	if (!n)
		return;
	files_release(n);
	snapshot_release(&n->cur);
	snapshot_release(&n->old);
	ds__perfmap_release(&n->pm);
	free(n->pm_path);
	ds_sym_batch_free(n->scratch);
	if (n->mem_fd >= 0)
		close(n->mem_fd);
	free(n);
}

DS_API void ds_normalizer_invalidate(struct ds_normalizer *n, unsigned int what)
{
	if (!n)
		return;
	n->stale = true;
	if (what & DS_NORM_EXEC) {
		files_release(n);
		ds__perfmap_release(&n->pm);
		n->pm_tried = false;
	}
}

DS_API void ds_norm_release(struct ds_norm_addr *out, size_t count)
{
	for (size_t i = 0; out && i < count; i++) {
		ds_dso_put(out[i].dso);
		out[i].dso = NULL;
	}
}

/* ---- files */

static bool same_file(int fd, const struct nmap *m)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_ino == m->ino && major(st.st_dev) == m->maj &&
	       minor(st.st_dev) == m->min;
}

/* Bytes of the process at addr; how many were read (0 on failure). */
static size_t read_mem(struct ds_normalizer *n, uint64_t addr, void *buf, size_t len)
{
	if (n->mem_fd < 0 || addr > (uint64_t)INT64_MAX - len)
		return 0;
	return ds__pread_upto(n->mem_fd, buf, len, addr);
}

/* A file's headers from the process's memory: its mapping of file
 * offset 0 holds the ELF header, the program headers and (in practice)
 * the build-ID note. */
static void file_from_memory(struct ds_normalizer *n, const struct nmap *m, struct nfile *f)
{
	const struct nmap *base = NULL;
	unsigned char *buf;
	size_t len = 0;
	Elf *elf;

	for (size_t i = 0; i < n->cur.n && !base; i++) {
		const struct nmap *c = &n->cur.v[i];

		if (c->ino == m->ino && c->maj == m->maj && c->min == m->min && !c->pgoff)
			base = c;
	}
	if (!base || !(buf = malloc(ELF_HEAD_MAX)))
		return;
	len = read_mem(n, base->start,
		       buf, base->end - base->start < ELF_HEAD_MAX ? base->end - base->start
								   : ELF_HEAD_MAX);
	elf = len ? elf_memory((char *)buf, len) : NULL;
	if (elf) {
		if (!f->bid.size)
			ds__elf_build_id(elf, &f->bid);
		ds__loadmap_read(elf, &f->lm);
		elf_end(elf);
	}
	free(buf);
}

static void file_resolve(struct ds_normalizer *n, const struct nmap *m, struct nfile *f)
{
	char mf[96], *rp = NULL;
	const char *dso_path = NULL;
	size_t nl = strlen(m->name);
	bool deleted = nl > 10 && !strcmp(m->name + nl - 10, " (deleted)");
	int fd, rfd = -1;

	f->bid = m->kbid;
	snprintf(mf, sizeof(mf), "%s/map_files/%" PRIx64 "-%" PRIx64, n->proc, m->start, m->end);
	/* A mapping may be of a device or a FIFO's inode: only regular
	 * files are opened (ds__open_regular()). */
	fd = ds__open_regular(mf);
	if (fd >= 0 && !same_file(fd, m)) {
		close(fd);
		fd = -1;
	}
	/* The path in the process's mount namespace, when it is still the
	 * file mapped: a path that outlives this process, for the store. */
	if (!deleted) {
		if (n->same_root)
			rp = strdup(m->name);
		else if (asprintf(&rp, "%s/root%s", n->proc, m->name) < 0)
			rp = NULL;
		rfd = rp ? ds__open_regular(rp) : -1;
		if (rfd >= 0 && same_file(rfd, m))
			dso_path = rp;
		if (rfd >= 0 && (fd >= 0 || !dso_path)) {
			close(rfd);
			rfd = -1;
		}
		if (fd < 0)
			fd = rfd;
	}
	if (!dso_path && fd >= 0)
		dso_path = mf; /* deleted or replaced: only the process has it */
	if (fd >= 0) {
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

		if (elf && !f->bid.size)
			ds__elf_build_id(elf, &f->bid);
		if (elf)
			ds__loadmap_read(elf, &f->lm);
		if (elf)
			elf_end(elf);
		close(fd);
	}
	if (!f->lm || !f->bid.size)
		file_from_memory(n, m, f);
	if (f->bid.size) {
		struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID, .build_id = f->bid };

		f->dso = ds_store_findnew(n->store, dso_path, &id);
		f->reason = f->dso ? DS_NORM_OK : DS_NORM_ERROR;
		f->error = f->dso ? 0 : -errno;
	} else {
		f->dso = dso_path ? ds_store_findnew(n->store, dso_path, NULL) : NULL;
		f->reason = DS_NORM_NO_BUILD_ID;
	}
	free(rp);
}

/* ---- the vDSO: no file; its image, from the process, into a memfd the
 * store can open by path (/proc/self/fd/N).  One per distinct image for
 * the life of this process: the DSO may outlive any normalizer. */

#define VDSO_IMAGES 8
static struct {
	struct ds_build_id bid;
	int fd;
} vdso_images[VDSO_IMAGES];
static size_t vdso_nimages;
static pthread_mutex_t vdso_lock = PTHREAD_MUTEX_INITIALIZER;

static int vdso_fd(const struct ds_build_id *bid, const void *img, size_t len)
{
	int fd = -1;

	pthread_mutex_lock(&vdso_lock);
	for (size_t i = 0; i < vdso_nimages && fd < 0; i++)
		if (ds_build_id_equal(&vdso_images[i].bid, bid))
			fd = vdso_images[i].fd;
	if (fd < 0 && vdso_nimages < VDSO_IMAGES) {
		fd = memfd_create("vdso", MFD_CLOEXEC);
		if (fd >= 0 && write(fd, img, len) != (ssize_t)len) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0)
			vdso_images[vdso_nimages++] = (typeof(vdso_images[0])){ *bid, fd };
	}
	pthread_mutex_unlock(&vdso_lock);
	return fd;
}

static void vdso_resolve(struct ds_normalizer *n, const struct nmap *m, struct nfile *f)
{
	size_t len = m->end - m->start < VDSO_MAX ? m->end - m->start : VDSO_MAX;
	unsigned char *img = malloc(len);
	char path[64];
	Elf *elf;
	int fd;

	f->reason = DS_NORM_NO_BUILD_ID;
	if (!img)
		return;
	len = read_mem(n, m->start, img, len);
	elf = len ? elf_memory((char *)img, len) : NULL;
	if (elf) {
		ds__elf_build_id(elf, &f->bid);
		ds__loadmap_read(elf, &f->lm);
		elf_end(elf);
	}
	if (f->bid.size) {
		struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID, .build_id = f->bid };

		fd = vdso_fd(&f->bid, img, len);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		f->dso = ds_store_findnew(n->store, fd >= 0 ? path : NULL, &id);
		f->reason = f->dso ? DS_NORM_OK : DS_NORM_ERROR;
		f->error = f->dso ? 0 : -errno;
	}
	free(img);
}

/* The file of a mapping (the vDSO: key 0:0 inode 0), resolved the first
 * time an address falls in it, and shared by its other mappings. */
static struct nfile *file_of(struct ds_normalizer *n, struct nmap *m)
{
	bool vdso = m->kind == K_VDSO;
	uint64_t ino = vdso ? 0 : m->ino;
	uint32_t maj = vdso ? 0 : m->maj, min = vdso ? 0 : m->min;
	struct nfile *f;

	if (m->file)
		return m->file;
	for (f = n->files; f; f = f->next)
		if (f->ino == ino && f->maj == maj && f->min == min)
			break;
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f)
			return NULL;
		f->maj = maj;
		f->min = min;
		f->ino = ino;
		if (vdso)
			vdso_resolve(n, m, f);
		else
			file_resolve(n, m, f);
		f->next = n->files;
		n->files = f;
	}
	m->file = f;
	return f;
}

/* ---- JIT perf maps */

/* The process's pid in its own pid namespace (the last of NSpid). */
static int ns_pid(struct ds_normalizer *n)
{
	char path[64], *buf, *p;
	size_t len;
	long v = n->pid;

	snprintf(path, sizeof(path), "%s/status", n->proc);
	if (ds__read_whole(path, 4096, 1 << 20, &buf, &len))
		return n->pid;
	for (p = buf; p < buf + len;) {
		char *nl = memchr(p, '\n', (size_t)(buf + len - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(buf + len - p);

		if (ll > 6 && !memcmp(p, "NSpid:", 6)) {
			char *q = p + 6, *e = p + ll;

			while (q < e) {
				char *end;
				long x;

				while (q < e && (*q == ' ' || *q == '\t'))
					q++;
				if (q == e || !isdigit((unsigned char)*q))
					break;
				errno = 0;
				x = strtol(q, &end, 10);
				if (errno || end > e || x <= 0 || x > INT_MAX)
					break;
				v = x;
				q = end;
			}
			break;
		}
		p = nl ? nl + 1 : buf + len;
	}
	free(buf);
	return (int)v;
}

/*
 * Whose perf map we take.  /tmp is anyone's: another user can write
 * /tmp/perf-PID.map for a process of yours that writes none (or before
 * it does), and its names (any bytes) would be shown as your functions.
 * perf report took a map only when it was owned by its user or root
 * (older perf's tools/perf/util/symbol.c, dso__load(): "if
 * (!symbol_conf.force && st.st_uid && (st.st_uid != geteuid()))" ...
 * "not owned by current user or root, ignoring it"; perf 6 reads any map,
 * but keeps that rule for perf.data, util/data.c's open_file_read()).
 * That rule is ours, plus, for a live process, its own user (owner, the
 * uid that owns /proc/PID): the map describes its own memory, which that
 * user can change anyway.  Beyond perf: a map group or others may write is
 * refused (they could rewrite it), as is a symlink (O_NOFOLLOW: the owner
 * checked is the file's), and a map past a bound (live.h) before it is
 * read.  Every check is made on the opened file: the file read is the one
 * checked.
 */
int ds__perfmap_load(const char *path, uid_t owner, struct ds__perfmap *out, struct stat *st,
		     char *why, size_t whylen)
{
	uid_t me = geteuid();
	char *buf = NULL;
	size_t len = 0;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	memset(st, 0, sizeof(*st));
	if (whylen)
		why[0] = 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ELOOP) {
			snprintf(why, whylen, "a symbolic link");
			if (lstat(path, st) != 0)
				memset(st, 0, sizeof(*st));
		} else if (rc != -ENOENT) {
			snprintf(why, whylen, "%s", ds_strerror(rc));
		}
		return rc;
	}
	rc = -EACCES;
	if (fstat(fd, st) != 0) {
		rc = -errno;
		snprintf(why, whylen, "%s", ds_strerror(rc));
	} else if (!S_ISREG(st->st_mode)) {
		snprintf(why, whylen, "not a regular file");
	} else if (st->st_uid != me && st->st_uid != 0 && st->st_uid != owner) {
		if (owner != (uid_t)-1 && owner != me && owner != 0)
			snprintf(why, whylen,
				 "owned by uid %u, not by you (uid %u), root or the process's "
				 "user (uid %u)",
				 (unsigned)st->st_uid, (unsigned)me, (unsigned)owner);
		else
			snprintf(why, whylen, "owned by uid %u, not by you (uid %u) or root",
				 (unsigned)st->st_uid, (unsigned)me);
	} else if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, whylen, "writable by %s (mode %04o)",
			 st->st_mode & S_IWOTH ? "everyone" : "its group",
			 (unsigned)(st->st_mode & 07777));
	} else if ((uint64_t)st->st_size > DS__PERFMAP_MAX_BYTES) {
		snprintf(why, whylen, "%lld bytes, more than the %u MiB read at most",
			 (long long)st->st_size, DS__PERFMAP_MAX_BYTES >> 20);
		rc = -EFBIG;
	} else {
		len = (size_t)st->st_size;
		buf = malloc(len ? len : 1);
		rc = buf ? 0 : -ENOMEM;
	}
	if (!rc) {
		/* (What a JIT appends after the fstat() waits for the next
		 * load: the caller sees the size change.) */
		len = ds__pread_upto(fd, buf, len, 0);
		rc = ds__perfmap_parse(buf, len, out, NULL);
		if (rc == -EFBIG)
			snprintf(why, whylen, "more than %u lines", DS__PERFMAP_MAX_LINES);
	}
	free(buf);
	close(fd);
	return rc;
}

static bool perf_map_load(struct ds_normalizer *n, bool reload)
{
	char *cand[2] = { NULL, NULL };
	struct stat st;
	uid_t owner;
	int npid;

	if (n->no_perf_map)
		return false;
	if (n->pm_tried && !reload)
		return n->pm.n != 0;
	if (n->pm_tried && n->pm_path && lstat(n->pm_path, &st) == 0 && st.st_size == n->pm_size &&
	    st.st_mtim.tv_sec == n->pm_mtime.tv_sec && st.st_mtim.tv_nsec == n->pm_mtime.tv_nsec)
		return n->pm.n != 0;
	n->pm_tried = true;
	npid = ns_pid(n);
	/* (/proc/PID is owned by the process's effective uid.) */
	owner = stat(n->proc, &st) == 0 ? st.st_uid : (uid_t)-1;
	/* In the process's mount namespace under its own pid (a container's
	 * JIT writes its /tmp/perf-<its pid>.map), then the host's /tmp. */
	if (asprintf(&cand[0], "%s/root/tmp/perf-%d.map", n->proc, npid) < 0)
		cand[0] = NULL;
	if (asprintf(&cand[1], "/tmp/perf-%d.map", n->pid) < 0)
		cand[1] = NULL;
	for (int i = 0; i < 2; i++) {
		struct ds__perfmap pm;
		char why[160];
		int rc;

		if (!cand[i])
			continue;
		rc = ds__perfmap_load(cand[i], owner, &pm, &st, why, sizeof(why));
		/* None there, or no way there (another user's /proc/PID/root):
		 * the next place. */
		if (rc && rc != -ELOOP && !st.st_mode)
			continue;
		/* Refused or not, it is the map (the host's /tmp is not
		 * looked at past the namespace's): remembered with its size
		 * and time, so that an unchanged one is not read, nor
		 * warned about, again. */
		ds__perfmap_release(&n->pm);
		if (rc == 0)
			n->pm = pm;
		else
			ds_warn(ds__store_context(n->store), "perf map %s: %s; not used", cand[i],
				why[0] ? why : ds_strerror(rc));
		free(n->pm_path);
		n->pm_path = cand[i];
		cand[i] = NULL;
		n->pm_size = st.st_size;
		n->pm_mtime = st.st_mtim;
		break;
	}
	free(cand[0]);
	free(cand[1]);
	return n->pm.n != 0;
}

/* ---- lookup */

static struct nmap *find_map(struct ds_normalizer *n, uint64_t addr)
{
	struct snapshot *s = &n->cur;
	size_t lo = 0, hi = s->n;

	if (n->last < s->n && addr >= s->v[n->last].start && addr < s->v[n->last].end)
		return &s->v[n->last];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= s->v[lo - 1].end)
		return NULL;
	n->last = lo - 1;
	return &s->v[lo - 1];
}

static void answer(struct ds_normalizer *n, struct nmap *m, uint64_t addr, bool *pm_reloaded,
		   struct ds_norm_addr *o)
{
	const struct ds__perfmap_sym *js;
	struct nfile *f;

	o->path = m->name;
	o->map_start = m->start;
	o->map_end = m->end;
	o->file_offset = addr - m->start + m->pgoff;
	if (m->kind == K_ANON) {
		o->reason = DS_NORM_ANON;
		js = perf_map_load(n, false) ? ds__perfmap_find(&n->pm, addr) : NULL;
		if (!js && !*pm_reloaded && !n->no_perf_map) {
			*pm_reloaded = true; /* (once a call: JITs append) */
			js = perf_map_load(n, true) ? ds__perfmap_find(&n->pm, addr) : NULL;
		}
		if (js) {
			o->reason = DS_NORM_JIT;
			o->jit_name = js->name;
			o->jit_start = js->start;
		}
		return;
	}
	f = file_of(n, m);
	if (!f) {
		o->reason = DS_NORM_ERROR;
		o->error = -ENOMEM;
		return;
	}
	o->reason = f->reason;
	o->error = f->error;
	o->vaddr_known = f->lm && ds__loadmap_vaddr(f->lm, o->file_offset, &o->vaddr) == 0;
	if (!o->vaddr_known)
		o->vaddr = 0;
	if (f->reason == DS_NORM_OK)
		o->build_id = f->bid;
	o->dso = f->dso ? ds_dso_get(f->dso) : NULL;
}

DS_API int ds_normalize(struct ds_normalizer *n, const uint64_t *addrs, size_t count,
			struct ds_norm_addr *out)
{
	bool refreshed = false, pm_reloaded = false;
	int ok = 0, err = 0;

	if (!n || (count && (!addrs || !out)))
		return -EINVAL;
	snapshot_release(&n->old);
	if (n->stale) {
		err = refresh(n, false);
		refreshed = true;
	}
	for (size_t i = 0; i < count; i++) {
		struct ds_norm_addr *o = &out[i];
		uint64_t a = addrs[i];
		struct nmap *m;

		*o = (struct ds_norm_addr){ .addr = a };
		if (a >> 63) {
			o->reason = DS_NORM_KERNEL;
			continue;
		}
		if (err) {
			o->reason = DS_NORM_ERROR;
			o->error = err;
			continue;
		}
		m = find_map(n, a);
		if (!m && !refreshed) {
			/* A miss: the process may have mapped since; once a call. */
			refreshed = true;
			err = refresh(n, true);
			m = err ? NULL : find_map(n, a);
			if (err) {
				o->reason = DS_NORM_ERROR;
				o->error = err;
				continue;
			}
		}
		if (!m) {
			o->reason = DS_NORM_UNMAPPED;
			continue;
		}
		answer(n, m, a, &pm_reloaded, o);
		ok += o->reason == DS_NORM_OK;
	}
	if (err == -ENOMEM || err == -ESRCH)
		return err;
	return ok;
}
