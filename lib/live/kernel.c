// SPDX-License-Identifier: MIT
/*
 * The kernel: the running kernel's build ID and its text symbols
 * from /proc/kallsyms.
 *
 * Reading /proc/kallsyms costs the kernel some 50 ms of system time per
 * read of its ~120,000 lines (it formats each symbol as it goes; a
 * read() returns one page), more than everything else a small report
 * does.  So the core kernel's symbols (the lines without a "[module]"
 * tag) are kept in dsostore's cache of derived data, beside the saved
 * indexes, as <kernel-build-id>.kallsyms, valid for one boot (the file
 * holds /proc/sys/kernel/random/boot_id: KASLR moves the kernel at each
 * boot).  Modules, BPF programs and trampolines come and go within a
 * boot: an address beyond the core kernel's symbols is looked up in a
 * fresh read of /proc/kallsyms.
 *
 * The cache file, in this machine's byte order (it never leaves it):
 *   header (struct kc_header), then n uint64_t addresses (ascending),
 *   n uint32_t name offsets, names_len bytes of NUL-terminated names;
 *   sum: ds__blob_sum() of everything after the header.
 */
#define _GNU_SOURCE
#include "live.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define KC_MAGIC "DSKSYMS\1"
#define KC_VERSION 1u

struct kc_header {
	char magic[8];
	uint32_t version, n;
	uint64_t names_len;
	uint64_t core_end; /* the last core symbol's address */
	uint64_t ref_addr; /* where ref was (before aliases were dropped); 0: not found */
	char ref[64]; /* the reference symbol looked for ("_text"), NUL-terminated */
	char boot_id[40]; /* the boot's, NUL-terminated */
	uint8_t bid_size, pad[3];
	uint8_t bid[DS_BUILD_ID_MAX];
	uint32_t sum;
};
/* The arrays after it are read in place from the mapped file. */
_Static_assert(sizeof(struct kc_header) % 8 == 0, "kallsyms cache header alignment");

struct ds__kallsyms {
	const uint64_t *addr;
	const uint32_t *name_off;
	const char *names;
	size_t n;
	uint64_t core_end; /* cached: addresses from here on are not covered */
	uint64_t ref_addr;
	bool ref_found, cached;
	/* What to free: the mapped cache file, or the parsed arrays. */
	void *map;
	size_t map_len;
	uint64_t *own_addr;
	uint32_t *own_off;
	uint32_t *own_mod; /* per symbol, as ent.mod; NULL: no module symbol */
	char *own_names;
};

/* The GNU build ID among ELF notes (/sys/kernel/notes, a module's
 * notes/.note.gnu.build-id: the raw notes, in this machine's order). */
bool ds__notes_build_id(const unsigned char *buf, size_t len, struct ds_build_id *out)
{
	size_t off = 0;

	while (len >= 12 && off <= len - 12) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		if (namesz > len || descsz > len)
			break;
		desc_off = name_off + ((namesz + 3u) & ~(size_t)3);
		if (desc_off > len || descsz > len - desc_off)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name_off, "GNU", 4) &&
		    descsz && descsz <= DS_BUILD_ID_MAX) {
			out->size = (uint8_t)descsz;
			memcpy(out->data, buf + desc_off, descsz);
			return true;
		}
		off = desc_off + ((descsz + 3u) & ~(size_t)3);
	}
	return false;
}

/* The build ID of the notes file at path (at most 4 KiB read). */
bool ds__notes_file_build_id(const char *path, struct ds_build_id *out)
{
	unsigned char buf[4096];
	FILE *f = fopen(path, "rb");
	size_t len;

	if (!f)
		return false;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return ds__notes_build_id(buf, len, out);
}

/* A path of the kernel's files under the context's kernel root
 * (ds_context_opts.kernel_root: "/" normally, a copy for tests). */
void ds__kernel_path(const struct ds_context *ctx, const char *rel, char *buf, size_t len)
{
	const char *root = ctx && ctx->kernel_root ? ctx->kernel_root : "";

	snprintf(buf, len, "%s%s", root, rel);
}

bool ds__kernel_build_id(const struct ds_context *ctx, struct ds_build_id *out)
{
	char path[PATH_MAX];

	ds__kernel_path(ctx, "/sys/kernel/notes", path, sizeof(path));
	return ds__notes_file_build_id(path, out);
}

static bool boot_id(char out[40])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, out, 39);
	close(fd);
	if (n <= 0)
		return false;
	out[n] = 0;
	out[strcspn(out, "\n")] = 0;
	return out[0] != 0;
}

/* ------------------------------------------------------------ parsing */

struct ent {
	uint64_t addr;
	uint32_t line; /* its place in the text */
	uint32_t off; /* of its name in the text */
	uint32_t mod; /* offset of its module's name ("[mod]" without the
		       * brackets) in the text; 0: none */
	bool tagged; /* "[module]" and the like: not the core kernel */
};

static int ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * The text symbols of kallsyms text ("ADDR TYPE NAME[\t[MODULE]]" lines),
 * text[len] being NUL: names are cut out in place (text is modified and
 * becomes k's), one pass, no per-line library calls.  Of the symbols at
 * one address perf keeps the last one in the file (perf 6.1:
 * symbols__fixup_end() gives each one before it the length 0, and
 * choose_best_symbol() prefers a symbol with a length to all its other
 * rules), e.g. __pi_memcpy after memcpy; so do we.
 */
int ds__kallsyms_parse(char *text, size_t len, const char *ref, struct ds__kallsyms **out)
{
	struct ds__kallsyms *k;
	struct ent *v = NULL;
	size_t n = 0, cap = 0, nz = 0, w = 0, nmod = 0;
	char *p = text, *end = text + len;

	*out = NULL;
	if (len > UINT32_MAX)
		return -EFBIG;
	if (!(k = calloc(1, sizeof(*k))))
		return -ENOMEM;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *line_end = nl ? nl : end, *name, *c;
		uint64_t addr = 0;
		int val, digits = 0;
		char type;

		for (c = p; c < line_end && digits <= 16 && (val = hexval(*c)) >= 0; c++, digits++)
			addr = addr << 4 | (uint64_t)val;
		if (!digits || digits > 16 || line_end - c < 4 || c[0] != ' ' || c[2] != ' ')
			goto next;
		type = c[1];
		if (type != 'T' && type != 't' && type != 'W' && type != 'w')
			goto next;
		name = c + 3;
		for (c = name; c < line_end && *c != '\t' && *c != ' '; c++)
			;
		if (c == name)
			goto next;
		if (n == cap) {
			struct ent *nv = ds__grow(v, &cap, n, sizeof(*nv));

			if (!nv) {
				free(v);
				free(k);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n] = (struct ent){ .addr = addr,
				     .line = (uint32_t)n,
				     .off = (uint32_t)(name - text),
				     .tagged = c < line_end };
		if (c < line_end) {
			/* "\t[module]": its name kept, cut out in place too. */
			char *m = c + 1, *close;

			while (m < line_end && (*m == ' ' || *m == '\t'))
				m++;
			close = m < line_end && *m == '[' ? memchr(m, ']', (size_t)(line_end - m)) : NULL;
			if (close && close > m + 1) {
				*close = 0;
				v[n].mod = (uint32_t)(m + 1 - text);
				nmod++;
			}
		}
		*c = 0;
		if (ref && !k->ref_found && !strcmp(name, ref)) {
			k->ref_addr = addr;
			k->ref_found = true;
		}
		n++;
		nz += addr != 0;
next:
		p = line_end + 1;
	}
	if (!nz) { /* kptr_restrict: every address reads 0 */
		free(v);
		free(k);
		return -EPERM;
	}
	qsort(v, n, sizeof(*v), ent_cmp);
	for (size_t i = 0; i < n; i++) {
		if (w && v[w - 1].addr == v[i].addr)
			w--;
		v[w++] = v[i];
	}
	k->own_addr = malloc(w * sizeof(*k->own_addr));
	k->own_off = malloc(w * sizeof(*k->own_off));
	if (nmod)
		k->own_mod = malloc(w * sizeof(*k->own_mod));
	if (!k->own_addr || !k->own_off || (nmod && !k->own_mod)) {
		free(v);
		ds__kallsyms_free(k);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w; i++) {
		k->own_addr[i] = v[i].addr;
		k->own_off[i] = v[i].off;
		if (k->own_mod)
			k->own_mod[i] = v[i].mod;
		if (!v[i].tagged && v[i].addr > k->core_end)
			k->core_end = v[i].addr;
	}
	free(v);
	k->addr = k->own_addr;
	k->name_off = k->own_off;
	k->names = text;
	k->own_names = text;
	k->n = w;
	*out = k;
	return 0;
}

void ds__kallsyms_free(struct ds__kallsyms *k)
{
	if (!k)
		return;
	if (k->map)
		munmap(k->map, k->map_len);
	free(k->own_addr);
	free(k->own_off);
	free(k->own_mod);
	free(k->own_names);
	free(k);
}

/* The index of the symbol holding addr, plus one; 0: none. */
static size_t find(const struct ds__kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;

	if (k->cached && addr >= k->core_end)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->addr[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *ds__kallsyms_find(const struct ds__kallsyms *k, uint64_t addr, uint64_t *start)
{
	return ds__kallsyms_find_mod(k, addr, start, NULL);
}

const char *ds__kallsyms_find_mod(const struct ds__kallsyms *k, uint64_t addr, uint64_t *start,
				  const char **module)
{
	size_t i = find(k, addr);

	if (module)
		*module = i && k->own_mod && k->own_mod[i - 1] ? k->names + k->own_mod[i - 1] : NULL;
	if (!i)
		return NULL;
	*start = k->addr[i - 1];
	return k->names + k->name_off[i - 1];
}

bool ds__kallsyms_module_start(const struct ds__kallsyms *k, const char *module, uint64_t *start)
{
	for (size_t i = 0; k->own_mod && i < k->n; i++)
		if (k->own_mod[i] && !strcmp(k->names + k->own_mod[i], module)) {
			*start = k->addr[i]; /* ascending: the first is the lowest */
			return true;
		}
	return false;
}

bool ds__kallsyms_covers(const struct ds__kallsyms *k, uint64_t addr)
{
	return !k->cached || addr < k->core_end;
}

bool ds__kallsyms_ref(const struct ds__kallsyms *k, uint64_t *addr)
{
	*addr = k->ref_addr;
	return k->ref_found;
}

/* ------------------------------------------------------------- cache */

/* Check a cache file's bytes as ds__kallsyms_serialize() writes them. */
static int check(const void *buf, size_t len, struct ds__kallsyms *k, const char **why)
{
	const struct kc_header *h = buf;
	const unsigned char *body = (const unsigned char *)buf + sizeof(*h);
	size_t n, names_at, names_len, need;

#define BAD(msg)                   \
	do {                       \
		*why = msg;        \
		return -EBADMSG;   \
	} while (0)
	if (len < sizeof(*h) || memcmp(h->magic, KC_MAGIC, 8))
		BAD("no magic");
	if (h->version != KC_VERSION)
		BAD("another version");
	n = h->n;
	if (!n || h->names_len == 0 || h->names_len > len)
		BAD("implausible counts");
	if (n > len / 12)
		BAD("wrong size");
	names_len = (size_t)h->names_len;
	names_at = sizeof(*h) + n * (sizeof(uint64_t) + sizeof(uint32_t));
	need = names_at + names_len;
	if (need != len)
		BAD("wrong size");
	if (memchr(h->ref, 0, sizeof(h->ref)) == NULL || memchr(h->boot_id, 0, sizeof(h->boot_id)) == NULL ||
	    h->bid_size > DS_BUILD_ID_MAX)
		BAD("bad header strings");
	if (ds__blob_sum(body, len - sizeof(*h)) != h->sum)
		BAD("checksum mismatch");
	k->addr = (const uint64_t *)(const void *)body;
	k->name_off = (const uint32_t *)(const void *)(body + n * sizeof(uint64_t));
	k->names = (const char *)buf + names_at;
	if (k->names[names_len - 1])
		BAD("names not terminated");
	for (size_t i = 0; i < n; i++) {
		if (k->name_off[i] >= names_len)
			BAD("name outside the names");
		if (i && k->addr[i] <= k->addr[i - 1])
			BAD("addresses out of order");
	}
	if (h->core_end != k->addr[n - 1])
		BAD("wrong end");
	k->n = n;
	k->core_end = h->core_end;
	k->ref_addr = h->ref_addr;
	k->ref_found = h->ref_addr != 0;
	k->cached = true;
	return 0;
#undef BAD
}

int ds__kallsyms_check(const void *buf, size_t len, struct ds__kallsyms **out, const char **why)
{
	struct ds__kallsyms *k = calloc(1, sizeof(*k));
	int err;

	*out = NULL;
	if (!k)
		return -ENOMEM;
	err = check(buf, len, k, why);
	if (err)
		free(k);
	else
		*out = k;
	return err;
}

static int cache_dir(struct ds_context *ctx, bool create, int *dirfd)
{
	if (ctx->cache.symindex_off)
		return -ENOTSUP;
	return ds__cache_symindex_dir(&ctx->cache, create, dirfd);
}

/* The cached core symbols of this boot of the kernel bid, or NULL. */
static struct ds__kallsyms *cache_load(struct ds_context *ctx, const struct ds_build_id *bid,
				       const char *boot, const char *ref, const char *name)
{
	struct ds__kallsyms *k = NULL;
	const struct kc_header *h;
	const char *why = "";
	char untrusted[96];
	struct stat st;
	void *map;
	int dirfd, fd;

	if (cache_dir(ctx, false, &dirfd))
		return NULL;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	close(dirfd);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(*h) ||
	    st.st_size > (64 << 20)) {
		close(fd);
		return NULL;
	}
	/* Mapped, as a saved index is: trusted by the same rule (symfile.c). */
	if (ds__cache_untrusted(&ctx->cache, &st, untrusted, sizeof(untrusted))) {
		ds_warn(ctx, "kallsyms cache %s: %s: not used; read again", name, untrusted);
		close(fd);
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	h = map;
	if (ds__kallsyms_check(map, (size_t)st.st_size, &k, &why)) {
		if (k == NULL && why[0])
			ds_warn(ctx, "kallsyms cache %s: %s; read again", name, why);
		goto fail;
	}
	k->map = map;
	k->map_len = (size_t)st.st_size;
	/* Another boot, another kernel, another reference symbol: not ours
	 * (the file is replaced after the next read). */
	if (strcmp(h->boot_id, boot) || h->bid_size != bid->size ||
	    memcmp(h->bid, bid->data, bid->size) || strcmp(h->ref, ref ? ref : ""))
		goto fail;
	return k;
fail:
	if (k)
		k->map = NULL; /* unmapped here */
	ds__kallsyms_free(k);
	munmap(map, (size_t)st.st_size);
	return NULL;
}

int ds__kallsyms_serialize(const struct ds__kallsyms *k, const struct ds_build_id *bid,
			   const char *boot, const char *ref, void **out, size_t *len_out)
{
	struct kc_header h;
	size_t n = 0, names_len = 0, len;
	unsigned char *buf, *names;

	*out = NULL;
	if (!k->n || !k->core_end || (ref && strlen(ref) >= sizeof(h.ref)) ||
	    strlen(boot) >= sizeof(h.boot_id) || bid->size > DS_BUILD_ID_MAX)
		return -EINVAL;
	for (size_t i = 0; i < k->n && k->addr[i] <= k->core_end; i++) {
		n++;
		names_len += strlen(k->names + k->name_off[i]) + 1;
	}
	if (names_len > UINT32_MAX)
		return -EFBIG;
	len = sizeof(h) + n * (sizeof(uint64_t) + sizeof(uint32_t)) + names_len;
	if (!(buf = malloc(len)))
		return -ENOMEM;
	memset(&h, 0, sizeof(h)); /* padding too: the file is read back whole */
	memcpy(h.magic, KC_MAGIC, 8);
	h.version = KC_VERSION;
	h.n = (uint32_t)n;
	h.names_len = names_len;
	h.core_end = k->addr[n - 1];
	h.ref_addr = k->ref_found ? k->ref_addr : 0;
	snprintf(h.ref, sizeof(h.ref), "%s", ref ? ref : "");
	snprintf(h.boot_id, sizeof(h.boot_id), "%s", boot);
	h.bid_size = bid->size;
	memcpy(h.bid, bid->data, bid->size);
	names = buf + sizeof(h) + n * (sizeof(uint64_t) + sizeof(uint32_t));
	names_len = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = k->names + k->name_off[i];
		size_t l = strlen(s) + 1;
		uint32_t off = (uint32_t)names_len;

		memcpy(buf + sizeof(h) + i * sizeof(uint64_t), &k->addr[i], sizeof(uint64_t));
		memcpy(buf + sizeof(h) + n * sizeof(uint64_t) + i * sizeof(off), &off, sizeof(off));
		memcpy(names + names_len, s, l);
		names_len += l;
	}
	h.sum = ds__blob_sum(buf + sizeof(h), len - sizeof(h));
	memcpy(buf, &h, sizeof(h));
	*out = buf;
	*len_out = len;
	return 0;
}

/* Save the core symbols of k (parsed from /proc/kallsyms), atomically. */
static void cache_save(struct ds_context *ctx, const struct ds__kallsyms *k,
		       const struct ds_build_id *bid, const char *boot, const char *ref,
		       const char *name)
{
	char tmp[NAME_MAX + 1] = "";
	int dirfd = -1, fd = -1, err;
	void *buf;
	size_t len;

	err = ds__kallsyms_serialize(k, bid, boot, ref, &buf, &len);
	if (!err && (err = cache_dir(ctx, true, &dirfd)) == 0 &&
	    (fd = ds__cache_tmp_open(dirfd, name, tmp, sizeof(tmp))) < 0) {
		err = fd;
		tmp[0] = 0;
	}
	if (!err)
		err = ds__write_all(fd, buf, len);
	if (!err && renameat(dirfd, tmp, dirfd, name) != 0)
		err = -errno;
	if (!err)
		tmp[0] = 0;
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0) {
		ds__cache_abort(dirfd, tmp);
		close(dirfd);
	}
	if (err)
		ds_debug(ctx, "kallsyms cache %s: not saved: %s", name, ds_strerror(err));
	free(buf);
}

int ds__kallsyms_load(struct ds_context *ctx, const char *ref, bool all,
		      struct ds__kallsyms **out)
{
	struct ds_build_id bid;
	char boot[40], name[2 * DS_BUILD_ID_MAX + 16], hex[2 * DS_BUILD_ID_MAX + 1];
	char path[PATH_MAX];
	/* Another kernel's files (a kallsyms file, a kernel root): their
	 * symbols are not this boot's, nothing cached. */
	bool real = !ctx->kallsyms && !ctx->kernel_root;
	bool cacheable = real && ds__kernel_build_id(ctx, &bid) && boot_id(boot) &&
			 ds_build_id_format(&bid, hex, sizeof(hex)) > 0;
	size_t len;
	char *text;
	int err;

	*out = NULL;
	if (cacheable)
		snprintf(name, sizeof(name), "%s.kallsyms", hex);
	if (cacheable && !all && (*out = cache_load(ctx, &bid, boot, ref, name))) {
		ds_debug(ctx, "kallsyms: %zu core symbols from the cache", (*out)->n);
		return 0;
	}
	if (ctx->kallsyms)
		snprintf(path, sizeof(path), "%s", ctx->kallsyms);
	else
		ds__kernel_path(ctx, "/proc/kallsyms", path, sizeof(path));
	/* 8 MiB to start (a kernel's is about 12), at most 256 MiB: a file
	 * named as kallsyms may be anything. */
	if ((err = ds__read_whole(path, 1u << 23, 1u << 28, &text, &len)))
		return err;
	err = ds__kallsyms_parse(text, len, ref, out);
	if (err) {
		free(text);
		return err;
	}
	if (cacheable)
		cache_save(ctx, *out, &bid, boot, ref, name);
	return 0;
}
