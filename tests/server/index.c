/* The build-ID index of dsserver: every ELF file under the served
 * directories, keyed by its GNU build ID, with what it can serve.  Read
 * directly with libelf: this is a test program and must not depend on the
 * library it tests. */
#define _GNU_SOURCE
#include "dsserver.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct entry {
	char bid[BID_HEX_MAX + 1];
	char *path;
	bool debug_info; /* a .debug_info section with contents */
	bool code;	 /* executable bytes present in the file */
};

static pthread_rwlock_t ix_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct entry *ix;
static size_t ix_n, ix_nbids;
static char **roots;
static int nroots;

/* nftw has no closure argument: the scan in progress lives here, guarded by
 * scan_lock (a rescan may be asked for over HTTP while another runs). */
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *scan;
static size_t scan_n, scan_cap;

int index_set_roots(char *const *dirs, int ndirs)
{
	roots = calloc(ndirs ? ndirs : 1, sizeof(*roots));
	if (!roots)
		return -1;
	for (int i = 0; i < ndirs; i++) {
		roots[i] = realpath(dirs[i], NULL);
		if (!roots[i]) {
			fprintf(stderr, "dsserver: %s: %s\n", dirs[i], strerror(errno));
			return -1;
		}
		nroots = i + 1;
	}
	return 0;
}

static void hex_encode(const unsigned char *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = 0;
}

static bool note_build_id(Elf_Data *data, char *hex)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nh.n_descsz > 0 && nh.n_descsz <= BID_HEX_MAX / 2) {
			hex_encode((const unsigned char *)data->d_buf + desc_off, nh.n_descsz, hex);
			return true;
		}
	}
	return false;
}

/* Files whose section headers were removed still have their PT_NOTE. */
static bool phdr_build_id(Elf *e, char *hex)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (d && note_build_id(d, hex))
			return true;
	}
	return false;
}

static bool phdr_code(Elf *e)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_filesz > 0)
			return true;
	}
	return false;
}

static void classify(Elf *e, struct entry *en)
{
	size_t shstrndx;
	bool have_shdrs = false, have_note = false;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		shstrndx = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		have_shdrs = true;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_NOTE && !have_note) {
			Elf_Data *d = elf_getdata(scn, NULL);

			have_note = d && note_build_id(d, en->bid);
		}
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (name && !strcmp(name, ".debug_info") && sh.sh_size > 0)
			en->debug_info = true;
		if ((sh.sh_flags & SHF_EXECINSTR) && sh.sh_size > 0)
			en->code = true;
	}
	if (!have_note)
		phdr_build_id(e, en->bid);
	if (!have_shdrs)
		en->code = phdr_code(e);
}

static int scan_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct entry en = {0};
	Elf *e;
	int fd;

	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size < (off_t)sizeof(Elf32_Ehdr))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF)
		classify(e, &en);
	elf_end(e);
	close(fd);
	if (!en.bid[0])
		return 0;
	if (scan_n == scan_cap) {
		size_t cap = scan_cap ? 2 * scan_cap : 64;
		struct entry *p = realloc(scan, cap * sizeof(*p));

		if (!p)
			return -1;
		scan = p;
		scan_cap = cap;
	}
	en.path = strdup(path);
	if (!en.path)
		return -1;
	scan[scan_n++] = en;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->bid, y->bid);

	return c ? c : strcmp(x->path, y->path);
}

static void entries_free(struct entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

/* Walks every root again and swaps the new index in. */
int index_build(size_t *nfiles, size_t *nbids)
{
	struct entry *old;
	size_t old_n, bids = 0;
	int rc = 0;

	elf_version(EV_CURRENT);
	pthread_mutex_lock(&scan_lock);
	scan = NULL;
	scan_n = scan_cap = 0;
	for (int i = 0; i < nroots && !rc; i++)
		rc = nftw(roots[i], scan_one, 32, FTW_PHYS);
	if (rc) {
		entries_free(scan, scan_n);
		pthread_mutex_unlock(&scan_lock);
		return -1;
	}
	if (scan_n) /* qsort(NULL, 0, ...) is undefined */
		qsort(scan, scan_n, sizeof(*scan), entry_cmp);
	for (size_t i = 0; i < scan_n; i++)
		bids += !i || strcmp(scan[i].bid, scan[i - 1].bid);

	pthread_rwlock_wrlock(&ix_lock);
	old = ix;
	old_n = ix_n;
	ix = scan;
	ix_n = scan_n;
	ix_nbids = bids;
	pthread_rwlock_unlock(&ix_lock);
	pthread_mutex_unlock(&scan_lock);

	entries_free(old, old_n);
	if (nfiles)
		*nfiles = scan_n;
	if (nbids)
		*nbids = bids;
	return 0;
}

void index_counts(size_t *nfiles, size_t *nbids)
{
	pthread_rwlock_rdlock(&ix_lock);
	*nfiles = ix_n;
	*nbids = ix_nbids;
	pthread_rwlock_unlock(&ix_lock);
}

/* Index of the first entry with bid, or ix_n; call with ix_lock held. */
static size_t first_of(const char *bid)
{
	size_t lo = 0, hi = ix_n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix[mid].bid, bid) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix_n && !strcmp(ix[lo].bid, bid) ? lo : ix_n;
}

bool index_known(const char *bid)
{
	bool known;

	pthread_rwlock_rdlock(&ix_lock);
	known = first_of(bid) < ix_n;
	pthread_rwlock_unlock(&ix_lock);
	return known;
}

/* The path of bid's debuginfo or executable (malloc'd), or NULL.  A pure
 * debug file is preferred for debuginfo, a stripped file for executable,
 * then the first path in sort order: answers do not depend on the walk. */
static char *find_path(const char *bid, enum artifact art)
{
	const struct entry *best = NULL;
	char *path = NULL;

	pthread_rwlock_rdlock(&ix_lock);
	for (size_t i = first_of(bid); i < ix_n && !strcmp(ix[i].bid, bid); i++) {
		const struct entry *en = &ix[i];
		bool fits = art == ART_DEBUGINFO ? en->debug_info : en->code;
		bool pure = art == ART_DEBUGINFO ? !en->code : !en->debug_info;

		if (!fits)
			continue;
		if (!best)
			best = en;
		if (pure) {
			best = en;
			break;
		}
	}
	if (best)
		path = strdup(best->path);
	pthread_rwlock_unlock(&ix_lock);
	return path;
}

/* Offset and size of a section with contents in path; -1 if none. */
static int section_range(const char *path, const char *name, uint64_t *off, uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int rc = -1;

	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
			rc = 0;
			break;
		}
	}
out:
	elf_end(e);
	close(fd);
	return rc;
}

int index_find(const char *bid, enum artifact art, const char *section, struct served *out)
{
	static const enum artifact order[] = {ART_DEBUGINFO, ART_EXECUTABLE};

	out->off = 0;
	out->size = UINT64_MAX;
	if (art != ART_SECTION) {
		out->path = find_path(bid, art);
		return out->path ? 0 : -1;
	}
	for (size_t i = 0; i < 2; i++) {
		out->path = find_path(bid, order[i]);
		if (out->path && !section_range(out->path, section, &out->off, &out->size))
			return 0;
		free(out->path);
		out->path = NULL;
	}
	return -1;
}

char *index_resolve_under_roots(const char *path)
{
	char *real = realpath(path, NULL);
	struct stat st;

	if (!real || stat(real, &st) || !S_ISREG(st.st_mode))
		goto refuse;
	for (int i = 0; i < nroots; i++) {
		size_t n = strlen(roots[i]);

		if (!strncmp(real, roots[i], n) && (real[n] == '/' || roots[i][n - 1] == '/'))
			return real;
	}
refuse:
	free(real);
	return NULL;
}

void index_free(void)
{
	pthread_rwlock_wrlock(&ix_lock);
	entries_free(ix, ix_n);
	ix = NULL;
	ix_n = ix_nbids = 0;
	pthread_rwlock_unlock(&ix_lock);
	for (int i = 0; i < nroots; i++)
		free(roots[i]);
	free(roots);
	roots = NULL;
	nroots = 0;
}
