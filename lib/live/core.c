/* SPDX-License-Identifier: MIT */
/*
 * core: a core file's notes and memory, read by our own bounded reader (a
 * core is untrusted input: it may be truncated, cut by a size limit, or
 * made up), and the modules it maps, as eu-unstrip -n --core lists them.
 * Unwinding is libdwfl's (lib/live/stack.c); what it needs of files comes from
 * the store, found here.
 *
 * Formats (Linux's fs/binfmt_elf.c): NT_FILE is {count, page_size} then
 * count {start, end, page offset} then count NUL-terminated names, every
 * field a long of the core's class.  NT_PRSTATUS starts with elf_siginfo
 * (3 ints), cursig (short), two longs of signal masks, then pid.  The
 * first NT_PRSTATUS is the thread that dumped (the one with the signal);
 * NT_SIGINFO, one per core, is its siginfo_t.
 */
#define _GNU_SOURCE /* qsort_r */
#include "live.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif
#ifndef NT_SIGINFO
#define NT_SIGINFO 0x53494749
#endif

#define CORE_MAX_PHDRS 1048576 /* the kernel writes one per mapping (PN_XNUM beyond 65535) */
#define CORE_MAX_NOTES (64u << 20) /* bytes of PT_NOTE segments altogether */
#define CORE_MAX_MODULES 65536
#define CORE_MAX_THREADS 65536
#define MEM_MAX_PHDRS 256 /* of an ELF image in memory */
#define MEM_MAX_NOTE 8192 /* bytes of a module's PT_NOTE read from memory */

struct core_seg {
	uint64_t vaddr, memsz, offset, filesz;
	uint64_t reach; /* the highest vaddr + filesz of this one and those before it */
};

struct ds_core {
	int fd; /* -1: the memory form */
	const uint8_t *mem;
	uint64_t size;
	bool is64, swap;
	uint16_t machine;
	struct core_seg *loads;
	size_t nloads;
	uint8_t *notes; /* the PT_NOTE segments' bytes */
	size_t notes_len;

	struct ds_core_module *mods;
	size_t nmods;
	int32_t *tids;
	int *cursig;
	size_t nthreads;
	int32_t pid;
	int signo, si_code;
	uint64_t fault_addr;
	bool has_fault_addr, has_siginfo;
	char fname[17], psargs[81];
	bool has_psinfo;
	uint64_t vdso; /* AT_SYSINFO_EHDR */
	uint64_t missing; /* bytes of PT_LOADs beyond the end of the file */

	/* Strings the modules point at (paths, found files, reasons). */
	char **strs;
	size_t nstrs, strs_cap;
};

static uint16_t g16(const struct ds_core *c, const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return c->swap ? __builtin_bswap16(v) : v;
}

static uint32_t g32(const struct ds_core *c, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return c->swap ? __builtin_bswap32(v) : v;
}

static uint64_t g64(const struct ds_core *c, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return c->swap ? __builtin_bswap64(v) : v;
}

/* A long of the core's class. */
static uint64_t glong(const struct ds_core *c, const uint8_t *p)
{
	return c->is64 ? g64(c, p) : g32(c, p);
}

/* Bytes [off, off + len) of the file; short when it ends first. */
static size_t file_read(const struct ds_core *c, uint64_t off, void *buf, size_t len)
{
	if (off >= c->size)
		return 0;
	if (len > c->size - off)
		len = c->size - off;
	if (c->mem) {
		memcpy(buf, c->mem + off, len);
		return len;
	}
	return ds__pread_upto(c->fd, buf, len, off);
}

/* The PT_LOAD whose bytes in the file hold addr.  c->loads is sorted by
 * vaddr (read_headers()): a binary search for the last one starting at or
 * below addr, then back while one before may still reach it (only in a
 * made-up core with overlapping segments).  A core has one PT_LOAD per
 * mapping, tens of thousands of them: a read of its memory must not walk
 * them all. */
static const struct core_seg *load_at(const struct ds_core *c, uint64_t a)
{
	size_t lo = 0, hi = c->nloads;

	while (lo < hi) { /* the first segment starting above a */
		size_t mid = lo + (hi - lo) / 2;

		if (c->loads[mid].vaddr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0 && c->loads[lo].reach > a) {
		const struct core_seg *s = &c->loads[lo];

		if (a - s->vaddr < s->filesz)
			return s;
	}
	return NULL;
}

DS_API size_t ds_core_read(const struct ds_core *c, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	if (!c || !buf)
		return 0;
	while (done < len) {
		const struct core_seg *s = NULL;
		uint64_t a = addr + done, in, n;
		size_t got;

		if (a < addr)
			break; /* wrapped */
		s = load_at(c, a);
		if (!s)
			break;
		in = a - s->vaddr;
		n = s->filesz - in;
		if (n > len - done)
			n = len - done;
		got = file_read(c, s->offset + in, (uint8_t *)buf + done, (size_t)n);
		done += got;
		if (got < n)
			break; /* the file ends: a truncated core */
	}
	return done;
}

static const char *keep(struct ds_core *c, const char *s, size_t len)
{
	char **v, *d;

	if (!s)
		return NULL;
	d = strndup(s, len);
	if (!d)
		return NULL;
	v = ds__grow(c->strs, &c->strs_cap, c->nstrs, sizeof(*v));
	if (!v) {
		free(d);
		return NULL;
	}
	c->strs = v;
	c->strs[c->nstrs++] = d;
	return d;
}

/* ------------------------------------------------------------ headers */

static int cmp_seg(const void *a, const void *b)
{
	const struct core_seg *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int read_headers(struct ds_core *c, char *err, size_t errlen)
{
	uint8_t eh[64], ph[56];
	uint64_t phoff, phnum, phentsize, shoff;
	size_t ehsize;

	if (file_read(c, 0, eh, 16) < 16 || memcmp(eh, ELFMAG, SELFMAG)) {
		snprintf(err, errlen, "not an ELF file");
		return -ENOEXEC;
	}
	if (eh[EI_CLASS] != ELFCLASS64 && eh[EI_CLASS] != ELFCLASS32) {
		snprintf(err, errlen, "ELF class %u", eh[EI_CLASS]);
		return -EBADMSG;
	}
	if (eh[EI_DATA] != ELFDATA2LSB && eh[EI_DATA] != ELFDATA2MSB) {
		snprintf(err, errlen, "ELF data encoding %u", eh[EI_DATA]);
		return -EBADMSG;
	}
	c->is64 = eh[EI_CLASS] == ELFCLASS64;
	c->swap = (eh[EI_DATA] == ELFDATA2LSB) != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	ehsize = c->is64 ? 64 : 52;
	if (file_read(c, 0, eh, ehsize) < ehsize) {
		snprintf(err, errlen, "truncated ELF header");
		return -EBADMSG;
	}
	if (g16(c, eh + 16) != ET_CORE) {
		snprintf(err, errlen, "an ELF file, but not a core (e_type %u)", g16(c, eh + 16));
		return -ENOEXEC;
	}
	c->machine = g16(c, eh + 18);
	if (c->is64) {
		phoff = g64(c, eh + 32);
		shoff = g64(c, eh + 40);
		phentsize = g16(c, eh + 54);
		phnum = g16(c, eh + 56);
	} else {
		phoff = g32(c, eh + 28);
		shoff = g32(c, eh + 32);
		phentsize = g16(c, eh + 42);
		phnum = g16(c, eh + 44);
	}
	if (phnum == PN_XNUM) {
		/* More than 65534 mappings: the count is section 0's sh_info. */
		uint8_t sh[64];
		size_t shsz = c->is64 ? 64 : 40;

		if (file_read(c, shoff, sh, shsz) < shsz) {
			snprintf(err, errlen, "PN_XNUM without section header 0 (at %#llx)",
				 (unsigned long long)shoff);
			return -EBADMSG;
		}
		phnum = g32(c, sh + (c->is64 ? 44 : 28));
	}
	if (phentsize != (c->is64 ? 56u : 32u) || !phnum || phnum > CORE_MAX_PHDRS) {
		snprintf(err, errlen, "bad program headers: %llu of %llu bytes",
			 (unsigned long long)phnum, (unsigned long long)phentsize);
		return -EBADMSG;
	}
	if (phoff > c->size || phnum * phentsize > c->size - phoff) {
		snprintf(err, errlen,
			 "program headers (%llu at %#llx) beyond the end of the file (%llu bytes): "
			 "truncated core",
			 (unsigned long long)phnum, (unsigned long long)phoff,
			 (unsigned long long)c->size);
		return -EBADMSG;
	}
	c->loads = calloc(phnum, sizeof(*c->loads));
	if (!c->loads)
		return -ENOMEM;
	for (uint64_t i = 0; i < phnum; i++) {
		uint64_t off = phoff + i * phentsize, type, poff, vaddr, filesz, memsz;

		if (file_read(c, off, ph, phentsize) < phentsize) {
			snprintf(err, errlen, "program header %llu unreadable", (unsigned long long)i);
			return -EBADMSG;
		}
		type = g32(c, ph);
		if (c->is64) {
			poff = g64(c, ph + 8);
			vaddr = g64(c, ph + 16);
			filesz = g64(c, ph + 32);
			memsz = g64(c, ph + 40);
		} else {
			poff = g32(c, ph + 4);
			vaddr = g32(c, ph + 8);
			filesz = g32(c, ph + 16);
			memsz = g32(c, ph + 20);
		}
		if (type == PT_LOAD) {
			/* A segment cut by the end of the file (a truncated core,
			 * RLIMIT_CORE) is kept as far as it goes: file_read()
			 * stops there. */
			if (filesz > memsz)
				filesz = memsz;
			if (poff > c->size)
				c->missing += filesz;
			else if (filesz > c->size - poff)
				c->missing += filesz - (c->size - poff);
			if (vaddr + memsz < vaddr) {
				snprintf(err, errlen, "PT_LOAD %llu wraps around the address space",
					 (unsigned long long)i);
				return -EBADMSG;
			}
			c->loads[c->nloads++] = (struct core_seg){ vaddr, memsz, poff, filesz, 0 };
		} else if (type == PT_NOTE && filesz) {
			uint8_t *v;

			if (poff > c->size || filesz > c->size - poff) {
				snprintf(err, errlen,
					 "PT_NOTE at %#llx (%llu bytes) beyond the end of the file "
					 "(%llu bytes): truncated core",
					 (unsigned long long)poff, (unsigned long long)filesz,
					 (unsigned long long)c->size);
				return -EBADMSG;
			}
			if (filesz > CORE_MAX_NOTES - c->notes_len) {
				snprintf(err, errlen, "PT_NOTE segments over %u MiB", CORE_MAX_NOTES >> 20);
				return -EBADMSG;
			}
			v = realloc(c->notes, c->notes_len + filesz + 1);
			if (!v)
				return -ENOMEM;
			c->notes = v;
			if (file_read(c, poff, v + c->notes_len, filesz) < filesz) {
				snprintf(err, errlen, "PT_NOTE at %#llx unreadable", (unsigned long long)poff);
				return -EIO;
			}
			c->notes_len += filesz;
		}
	}
	if (!c->notes_len) {
		snprintf(err, errlen, "no PT_NOTE segment: no threads, no file mappings");
		return -EBADMSG;
	}
	/* The kernel writes them in address order; a made-up core may not. */
	qsort(c->loads, c->nloads, sizeof(*c->loads), cmp_seg);
	for (size_t i = 0; i < c->nloads; i++) {
		uint64_t end = c->loads[i].vaddr + c->loads[i].filesz;

		c->loads[i].reach = i && c->loads[i - 1].reach > end ? c->loads[i - 1].reach : end;
	}
	return 0;
}

/* -------------------------------------------------------------- notes */

struct nt_file {
	uint64_t start, end, pgoff;
	const char *name;
	size_t name_len;
};

static int parse_nt_file(struct ds_core *c, const uint8_t *d, size_t len, struct nt_file **out,
			 size_t *nout, char *err, size_t errlen)
{
	size_t l = c->is64 ? 8 : 4, pos;
	uint64_t count, page;
	struct nt_file *v;
	const char *name;

	if (len < 2 * l) {
		snprintf(err, errlen, "NT_FILE of %zu bytes", len);
		return -EBADMSG;
	}
	count = glong(c, d);
	page = glong(c, d + l);
	if (count > (len - 2 * l) / (3 * l) || count > CORE_MAX_MODULES * 16) {
		snprintf(err, errlen, "NT_FILE says %llu files in %zu bytes",
			 (unsigned long long)count, len);
		return -EBADMSG;
	}
	if (!page || (page & (page - 1)) || page > (1u << 30)) {
		snprintf(err, errlen, "NT_FILE page size %llu", (unsigned long long)page);
		return -EBADMSG;
	}
	v = calloc(count ? count : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	pos = 2 * l + count * 3 * l;
	for (uint64_t i = 0; i < count; i++) {
		const uint8_t *e = d + 2 * l + i * 3 * l;
		const uint8_t *nul;

		v[i].start = glong(c, e);
		v[i].end = glong(c, e + l);
		v[i].pgoff = glong(c, e + 2 * l);
		if (v[i].end <= v[i].start || v[i].pgoff > UINT64_MAX / page) {
			snprintf(err, errlen, "NT_FILE entry %llu: %#llx-%#llx at page %llu",
				 (unsigned long long)i, (unsigned long long)v[i].start,
				 (unsigned long long)v[i].end, (unsigned long long)v[i].pgoff);
			free(v);
			return -EBADMSG;
		}
		v[i].pgoff *= page;
		nul = pos < len ? memchr(d + pos, 0, len - pos) : NULL;
		if (!nul) {
			snprintf(err, errlen, "NT_FILE: name %llu of %llu missing or not terminated",
				 (unsigned long long)i, (unsigned long long)count);
			free(v);
			return -EBADMSG;
		}
		name = (const char *)d + pos;
		v[i].name = name;
		v[i].name_len = (size_t)(nul - (d + pos));
		pos += v[i].name_len + 1;
	}
	*out = v;
	*nout = count;
	return 0;
}

static int parse_notes(struct ds_core *c, struct nt_file **files, size_t *nfiles, char *err,
		       size_t errlen)
{
	size_t pos = 0, l = c->is64 ? 8 : 4, cap = 0;
	bool have_file = false;

	while (pos + 12 <= c->notes_len) {
		const uint8_t *h = c->notes + pos;
		uint32_t namesz = g32(c, h), descsz = g32(c, h + 4), type = g32(c, h + 8);
		size_t nameoff = pos + 12, descoff, next;
		const uint8_t *d;

		/* Core notes are aligned to 4 (fs/binfmt_elf.c), whatever
		 * the class. */
		if (namesz > c->notes_len - nameoff) {
			snprintf(err, errlen, "note at %zu: name of %u bytes past the notes", pos, namesz);
			return -EBADMSG;
		}
		descoff = nameoff + ((namesz + 3u) & ~(size_t)3);
		if (descoff > c->notes_len || descsz > c->notes_len - descoff) {
			snprintf(err, errlen, "note at %zu: %u bytes past the notes", pos, descsz);
			return -EBADMSG;
		}
		next = descoff + ((descsz + 3u) & ~(size_t)3);
		d = c->notes + descoff;
		if (namesz == 5 && !memcmp(h + 12, "CORE", 5)) {
			if (type == NT_PRSTATUS && descsz >= 16 + 2 * l + 4) {
				int32_t tid = (int32_t)g32(c, d + 16 + 2 * l);

				if (c->nthreads == CORE_MAX_THREADS) {
					snprintf(err, errlen, "over %u threads", CORE_MAX_THREADS);
					return -EBADMSG;
				}
				if (c->nthreads == cap) {
					size_t nc = cap ? 2 * cap : 16;
					int32_t *t = realloc(c->tids, nc * sizeof(*t));
					int *s;

					if (!t)
						return -ENOMEM;
					c->tids = t;
					s = realloc(c->cursig, nc * sizeof(*s));
					if (!s)
						return -ENOMEM;
					c->cursig = s;
					cap = nc;
				}
				c->tids[c->nthreads] = tid;
				c->cursig[c->nthreads++] = g16(c, d + 12);
			} else if (type == NT_SIGINFO && descsz >= 12) {
				c->has_siginfo = true;
				c->signo = (int)g32(c, d);
				c->si_code = (int)g32(c, d + 8);
				/* si_addr follows the three ints, long-aligned. */
				if (descsz >= (c->is64 ? 24u : 16u) && c->si_code > 0 &&
				    (c->signo == 11 || c->signo == 7 || c->signo == 4 || c->signo == 8)) {
					c->fault_addr = glong(c, d + (c->is64 ? 16 : 12));
					c->has_fault_addr = true;
				}
			} else if (type == NT_PRPSINFO && c->is64 && descsz >= 136) {
				/* x86_64, aarch64 and most 64-bit: pid at 24,
				 * fname[16] at 40, psargs[80] at 56. */
				memcpy(c->fname, d + 40, 16);
				c->fname[16] = 0;
				memcpy(c->psargs, d + 56, 80);
				c->psargs[80] = 0;
				c->has_psinfo = true;
				if (!c->pid)
					c->pid = (int32_t)g32(c, d + 24);
			} else if (type == NT_AUXV) {
				for (size_t o = 0; o + 2 * l <= descsz; o += 2 * l)
					if (glong(c, d + o) == AT_SYSINFO_EHDR)
						c->vdso = glong(c, d + o + l);
			} else if (type == NT_FILE) {
				int rc;

				if (have_file) {
					snprintf(err, errlen, "two NT_FILE notes");
					return -EBADMSG;
				}
				rc = parse_nt_file(c, d, descsz, files, nfiles, err, errlen);
				if (rc)
					return rc;
				have_file = true;
			}
		}
		if (next <= pos)
			break;
		pos = next;
	}
	if (!c->nthreads) {
		snprintf(err, errlen, "no NT_PRSTATUS note: no threads");
		return -EBADMSG;
	}
	if (!c->has_siginfo)
		c->signo = c->cursig[0];
	/* The process's pid is its main thread's, the thread group's id. */
	if (!c->pid)
		c->pid = c->tids[0];
	return 0;
}

/* ------------------------------------------------ modules from memory */

/* The ELF image at addr in the core's memory: its bias, the end of its
 * PT_LOADs and the build ID of its PT_NOTEs.  false when it is not an ELF
 * header there (or not in the core). */
static bool elf_in_memory(struct ds_core *c, uint64_t addr, struct ds_core_module *m)
{
	uint8_t eh[64], ph[56], *notes;
	uint64_t phoff, first = UINT64_MAX, end = 0;
	unsigned int phnum, phentsize;
	bool is64;
	size_t ehsize;

	if (ds_core_read(c, addr, eh, 16) < 16 || memcmp(eh, ELFMAG, SELFMAG))
		return false;
	is64 = eh[EI_CLASS] == ELFCLASS64;
	if (is64 != c->is64)
		return false;
	ehsize = is64 ? 64 : 52;
	if (ds_core_read(c, addr, eh, ehsize) < ehsize)
		return false;
	phoff = is64 ? g64(c, eh + 32) : g32(c, eh + 28);
	phentsize = g16(c, eh + (is64 ? 54 : 42));
	phnum = g16(c, eh + (is64 ? 56 : 44));
	if (phentsize != (is64 ? 56u : 32u) || phnum > MEM_MAX_PHDRS || phoff > UINT32_MAX)
		return true; /* ELF, but nothing more known */
	notes = malloc(MEM_MAX_NOTE);
	if (!notes)
		return true;
	/* PT_LOADs first: the bias is needed to find the notes. */
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned int i = 0; i < phnum; i++) {
			uint64_t type, vaddr, memsz, filesz;

			if (ds_core_read(c, addr + phoff + (uint64_t)i * phentsize, ph, phentsize) <
			    phentsize)
				break;
			type = g32(c, ph);
			vaddr = is64 ? g64(c, ph + 16) : g32(c, ph + 8);
			filesz = is64 ? g64(c, ph + 32) : g32(c, ph + 16);
			memsz = is64 ? g64(c, ph + 40) : g32(c, ph + 20);
			if (pass == 0 && type == PT_LOAD) {
				if (first == UINT64_MAX)
					first = vaddr & ~(uint64_t)4095;
				if (vaddr + memsz > end && vaddr + memsz >= vaddr)
					end = vaddr + memsz;
			} else if (pass == 1 && type == PT_NOTE && !m->build_id.size) {
				size_t n = filesz < MEM_MAX_NOTE ? (size_t)filesz : MEM_MAX_NOTE;
				uint64_t at = m->bias + vaddr;

				n = ds_core_read(c, at, notes, n);
				for (size_t o = 0; o + 12 <= n;) {
					uint32_t nsz = g32(c, notes + o), dsz = g32(c, notes + o + 4);
					uint32_t t = g32(c, notes + o + 8);
					size_t doff = o + 12 + ((nsz + 3u) & ~3u);

					if (nsz > n || dsz > n || doff > n || dsz > n - doff)
						break;
					if (t == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(notes + o + 12, "GNU", 4) &&
					    dsz && dsz <= DS_BUILD_ID_MAX) {
						m->build_id.size = (uint8_t)dsz;
						memcpy(m->build_id.data, notes + doff, dsz);
						m->build_id_addr = at + doff;
						break;
					}
					o = doff + ((dsz + 3u) & ~3u);
				}
			}
		}
		if (pass == 0) {
			if (first == UINT64_MAX)
				break;
			m->bias = addr - first;
		}
	}
	if (m->vdso && end > first && first != UINT64_MAX)
		m->end = m->bias + end;
	free(notes);
	return true;
}

static int cmp_module(const void *a, const void *b)
{
	const struct ds_core_module *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* NT_FILE entries by name, then by their order in the note. */
static int cmp_entry(const void *a, const void *b, void *arg)
{
	const struct nt_file *f = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	size_t n = f[i].name_len < f[j].name_len ? f[i].name_len : f[j].name_len;
	int d = memcmp(f[i].name, f[j].name, n);

	if (d)
		return d;
	if (f[i].name_len != f[j].name_len)
		return f[i].name_len < f[j].name_len ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* ends[i], for each offset-0 entry i: the end of the file's mapping there
 * and of its later ones (in the note's order) up to its next offset-0 one.
 * The entries sorted by name put each file's together: one pass, not one
 * per entry (a core may name tens of thousands of files). */
static int module_ends(const struct nt_file *f, size_t nf, uint64_t *ends)
{
	size_t *ix = malloc((nf ? nf : 1) * sizeof(*ix));
	size_t open_at = SIZE_MAX;

	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < nf; i++)
		ix[i] = i;
	qsort_r(ix, nf, sizeof(*ix), cmp_entry, (void *)f);
	for (size_t k = 0; k < nf; k++) {
		size_t i = ix[k];

		if (k && (f[i].name_len != f[ix[k - 1]].name_len ||
			  memcmp(f[i].name, f[ix[k - 1]].name, f[i].name_len)))
			open_at = SIZE_MAX; /* another file */
		ends[i] = f[i].end;
		if (f[i].pgoff == 0)
			open_at = i;
		else if (open_at != SIZE_MAX && f[i].end > ends[open_at])
			ends[open_at] = f[i].end;
	}
	free(ix);
	return 0;
}

static int find_modules(struct ds_core *c, const struct nt_file *f, size_t nf)
{
	uint64_t *ends = malloc((nf ? nf : 1) * sizeof(*ends));
	size_t cap = 0;

	if (!ends || module_ends(f, nf, ends)) {
		free(ends);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nf + 1; i++) {
		struct ds_core_module m = { 0 };

		if (i < nf) {
			if (f[i].pgoff != 0)
				continue;
			m.start = f[i].start;
			m.end = ends[i];
			if (!elf_in_memory(c, m.start, &m))
				continue;
			m.path = keep(c, f[i].name, f[i].name_len);
		} else {
			if (!c->vdso)
				continue;
			m.vdso = true;
			m.start = c->vdso;
			m.end = c->vdso + 4096;
			if (!elf_in_memory(c, m.start, &m))
				continue;
			m.path = keep(c, "[vdso]", 6);
		}
		if (!m.path) {
			free(ends);
			return -ENOMEM;
		}
		if (c->nmods == CORE_MAX_MODULES)
			break;
		if (c->nmods == cap) {
			size_t nc = cap ? 2 * cap : 32;
			struct ds_core_module *v = realloc(c->mods, nc * sizeof(*v));

			if (!v) {
				free(ends);
				return -ENOMEM;
			}
			c->mods = v;
			cap = nc;
		}
		c->mods[c->nmods++] = m;
	}
	free(ends);
	if (c->nmods)
		qsort(c->mods, c->nmods, sizeof(*c->mods), cmp_module);
	return 0;
}

/* ---------------------------------------------------------------- API */

static int core_open(struct ds_core *c, struct ds_core **out, char *err, size_t errlen)
{
	struct nt_file *files = NULL;
	size_t nfiles = 0;
	int rc;

	rc = read_headers(c, err, errlen);
	if (!rc)
		rc = parse_notes(c, &files, &nfiles, err, errlen);
	if (!rc)
		rc = find_modules(c, files, nfiles);
	free(files);
	if (rc) {
		if (rc == -ENOMEM && err[0] == 0)
			snprintf(err, errlen, "%s", ds_strerror(rc));
		ds_core_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

DS_API int ds_core_open(const char *path, struct ds_core **out, char *err, size_t errlen)
{
	char dummy[1];
	struct ds_core *c;
	struct stat st;

	ds__errbuf_init(&err, &errlen, dummy);
	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = ds__open_regular(path);
	if (c->fd < 0) {
		int rc = c->fd;

		snprintf(err, errlen, "%s",
			 rc == -ENOEXEC || rc == -EISDIR ? "not a regular file" : strerror(-rc));
		ds_core_close(c);
		return rc == -ENOEXEC || rc == -EISDIR ? -EINVAL : rc;
	}
	if (fstat(c->fd, &st)) {
		int rc = -errno;

		snprintf(err, errlen, "%s", strerror(-rc));
		ds_core_close(c);
		return rc;
	}
	c->size = (uint64_t)st.st_size;
	return core_open(c, out, err, errlen);
}

DS_API int ds_core_open_mem(const void *buf, size_t len, struct ds_core **out, char *err,
			    size_t errlen)
{
	char dummy[1];
	struct ds_core *c;

	ds__errbuf_init(&err, &errlen, dummy);
	if ((!buf && len) || !out)
		return -EINVAL;
	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = -1;
	c->mem = buf ? buf : (const uint8_t *)"";
	c->size = len;
	return core_open(c, out, err, errlen);
}

DS_API void ds_core_close(struct ds_core *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	for (size_t i = 0; i < c->nmods; i++)
		ds_dso_put(c->mods[i].dso);
	for (size_t i = 0; i < c->nstrs; i++)
		free(c->strs[i]);
	free(c->strs);
	free(c->mods);
	free(c->tids);
	free(c->cursig);
	free(c->notes);
	free(c->loads);
	free(c);
}

DS_API void ds_core_info(const struct ds_core *c, struct ds_core_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	out->pid = c->pid;
	out->crash_tid = c->nthreads ? c->tids[0] : 0;
	out->signo = c->signo;
	out->si_code = c->si_code;
	out->fault_addr = c->fault_addr;
	out->has_fault_addr = c->has_fault_addr;
	out->fname = c->has_psinfo ? c->fname : NULL;
	out->psargs = c->has_psinfo ? c->psargs : NULL;
	out->nthreads = c->nthreads;
	out->tids = c->tids;
	out->machine = c->machine;
	out->is64 = c->is64;
	out->missing_bytes = c->missing;
	out->size = c->size;
}

/* NT_PRSTATUS' cursig of thread tid; 0 when none. */
int ds__core_cursig(const struct ds_core *c, int32_t tid)
{
	for (size_t i = 0; i < c->nthreads; i++)
		if (c->tids[i] == tid)
			return c->cursig[i];
	return 0;
}

int ds__core_fd(const struct ds_core *c)
{
	return c->fd;
}

DS_API size_t ds_core_modules(const struct ds_core *c, const struct ds_core_module **out)
{
	*out = c ? c->mods : NULL;
	return c ? c->nmods : 0;
}

/* ------------------------------------------------- files of the store */

DS_API int ds_core_use_file(struct ds_core *c, const char *path)
{
	struct ds_build_id bid;
	int rc;

	if (!c || !path)
		return -EINVAL;
	rc = ds_build_id_read_file(path, &bid);
	if (rc)
		return rc;
	for (size_t i = 0; i < c->nmods; i++) {
		struct ds_core_module *m = &c->mods[i];

		if (m->vdso || !ds_build_id_equal(&m->build_id, &bid))
			continue;
		m->file = keep(c, path, strlen(path));
		if (!m->file)
			return -ENOMEM;
		m->file_state = !strcmp(path, m->path) ? DS_CORE_FILE_AT_PATH : DS_CORE_FILE_FOUND;
		return 0;
	}
	return -ENOENT;
}

/* A path the core names that is there but no regular file (a FIFO, a
 * device...) is never opened (ds__open_regular()); say so, since the
 * file is then looked for elsewhere or missing.  stat() does not block. */
static void warn_not_regular(struct ds_context *ctx, const char *path)
{
	struct stat st;
	const char *kind;

	if (path[0] != '/' || stat(path, &st) != 0 || S_ISREG(st.st_mode))
		return;
	kind = S_ISFIFO(st.st_mode)  ? "a FIFO"
	       : S_ISSOCK(st.st_mode) ? "a socket"
	       : S_ISCHR(st.st_mode)  ? "a character device"
	       : S_ISBLK(st.st_mode)  ? "a block device"
	       : S_ISDIR(st.st_mode)  ? "a directory"
				      : "not a regular file";
	ds_warn(ctx, "%s: %s, not the file that was mapped: not opened", path, kind);
}

DS_API int ds_core_find_files(struct ds_core *c, struct ds_store *store,
			      const struct ds_fetch_opts *opts)
{
	struct ds_context *ctx;
	struct ds_fetch_req *reqs = NULL;
	struct ds_dso **dsos = NULL;
	size_t *of = NULL, nreq = 0, ndsos = 0;
	int rc = 0, left = 0;

	if (!c || !store)
		return -EINVAL;
	ctx = ds__store_context(store);
	reqs = calloc(c->nmods ? c->nmods : 1, sizeof(*reqs));
	dsos = calloc(c->nmods ? c->nmods : 1, sizeof(*dsos));
	of = calloc(c->nmods ? c->nmods : 1, sizeof(*of));
	if (!reqs || !dsos || !of) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c->nmods; i++) {
		struct ds_core_module *m = &c->mods[i];
		struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID, .build_id = m->build_id };
		struct ds_build_id fbid;
		char *found = NULL;

		of[i] = SIZE_MAX;
		if (!m->vdso)
			warn_not_regular(ctx, m->path);
		if (!m->build_id.size || m->vdso)
			continue;
		if (!m->dso) {
			/* A file given for it is where its debuginfo is looked
			 * for first (itself, its debuglink). */
			m->dso = ds_store_findnew(store, m->file ? m->file : m->path, &id);
			if (!m->dso) {
				rc = -errno;
				goto out;
			}
		}
		dsos[ndsos++] = m->dso;
		if (m->file_state == DS_CORE_FILE_AT_PATH || m->file_state == DS_CORE_FILE_FOUND)
			continue;
		/* The file at the path, when it is the one that was mapped. */
		if (m->path[0] == '/' && !ds_build_id_read_file(m->path, &fbid) &&
		    ds_build_id_equal(&fbid, &m->build_id)) {
			m->file_state = DS_CORE_FILE_AT_PATH;
			m->file = m->path;
			continue;
		}
		if (!ds_find(ctx, &m->build_id, NULL, DS_ARTIFACT_EXECUTABLE, &found, NULL, NULL, 0)) {
			m->file_state = DS_CORE_FILE_FOUND;
			m->file = keep(c, found, strlen(found));
			free(found);
			continue;
		}
		reqs[nreq].build_id = m->build_id;
		reqs[nreq].what = DS_ARTIFACT_EXECUTABLE;
		of[i] = nreq++;
	}
	if (ndsos)
		rc = ds__dsos_prefetch_with(dsos, ndsos, true, reqs, nreq, opts);
	if (rc < 0)
		goto out;
	rc = 0;
	for (size_t i = 0; i < c->nmods; i++) {
		struct ds_core_module *m = &c->mods[i];
		const struct ds_debuginfo *di;
		char why[512] = "";

		if (!m->dso)
			continue;
		if (of[i] != SIZE_MAX) {
			struct ds_fetch_req *r = &reqs[of[i]];

			if (!r->err && r->path) {
				m->file_state = DS_CORE_FILE_FOUND;
				m->file = keep(c, r->path, strlen(r->path));
			} else {
				m->file_state = DS_CORE_FILE_MISSING;
				snprintf(why, sizeof(why), "executable: %s; ", ds_strerror(r->err));
			}
		}
		if (!ds_dso_debuginfo(m->dso, &di)) {
			m->debuginfo = keep(c, ds_debuginfo_path(di), strlen(ds_debuginfo_path(di)));
		} else {
			size_t w = strlen(why);

			snprintf(why + w, sizeof(why) - w, "debuginfo: ");
			w = strlen(why);
			ds_dso_error(m->dso, why + w, sizeof(why) - w);
		}
		if (why[0])
			m->why = keep(c, why, strlen(why));
		if (m->file_state == DS_CORE_FILE_MISSING || !m->debuginfo)
			left++;
	}
out:
	for (size_t i = 0; i < nreq; i++)
		free(reqs[i].path);
	free(reqs);
	free(dsos);
	free(of);
	return rc < 0 ? rc : left;
}
