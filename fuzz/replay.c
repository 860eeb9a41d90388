/* SPDX-License-Identifier: MIT */
/*
 * Fuzzing without a fuzzing engine, for make check (zstd's approach): runs
 * every file of a corpus through LLVMFuzzerTestOneInput(), then N
 * deterministic mutations of each.  The mutations know ELF: besides bit
 * flips, byte sets, copies and truncations (often at a structure boundary)
 * they set header, program header, section header and note fields to
 * hostile values (0, 1, all ones, the file length +-1, 2^31, ...), swap the
 * class or byte order, and switch on extended section/segment numbering.
 *
 *   replay [-n MUTATIONS] [-s SEED] [-m INDEX] PATH...
 *
 * PATH is a file or a directory of files.  Mutation i of a file depends
 * only on (SEED, the file's name, i), so "-m i FILE" replays exactly that
 * one.  On a crash the input is written to $FUZZ_CRASH_DIR (default: the
 * current directory) as crash-<file>-m<i>, and its name printed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional: the target's own summary of what it saw. */
void fuzz_summary(void) __attribute__((weak));
/* Present when a sanitizer runtime is linked in. */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

#define REPLAY_MAX_INPUT (64u << 20)

/* -------------------------------------------------------- crash capture */

static const uint8_t *cur_data;
static size_t cur_len;
static char cur_name[512];

/* Async-signal-safe: open/write/close only. */
static void save_current_input(void)
{
	const char *dir = getenv("FUZZ_CRASH_DIR");
	char path[1024];
	int fd, n;

	if (!cur_data)
		return;
	n = snprintf(path, sizeof(path), "%s/crash-%s", dir && *dir ? dir : ".", cur_name);
	if (n <= 0 || (size_t)n >= sizeof(path))
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (write(fd, cur_data, cur_len) == (ssize_t)cur_len) {
		static const char msg[] = "\nreplay: crashing input saved as ";

		if (write(2, msg, sizeof(msg) - 1) > 0 && write(2, path, (size_t)n) > 0)
			(void)!write(2, "\n", 1);
	}
	close(fd);
}

static void on_fatal_signal(int sig)
{
	save_current_input();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_crash_capture(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

	/* abort() from the target's own checks is never a sanitizer's. */
	signal(SIGABRT, on_fatal_signal);
	if (__sanitizer_set_death_callback) {
		/* The sanitizer owns the fault signals and reports them
		 * better; it calls us before exiting. */
		__sanitizer_set_death_callback(save_current_input);
		return;
	}
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_fatal_signal);
}

/* ------------------------------------------------------------- random */

struct rng {
	uint64_t s;
};

/* splitmix64: tiny, and every seed is a good one. */
static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static uint64_t hash_name(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

/* ------------------------------------------------------- ELF accessors */

struct img {
	uint8_t *b;
	size_t len, cap;
	bool is64, msb;
};

struct field {
	size_t off, size;
};

#define FLD(T, f)                                                                                  \
	{                                                                                          \
		offsetof(T, f), sizeof(((T *)0)->f)                                                \
	}

static uint64_t get(const struct img *m, size_t off, size_t size)
{
	uint64_t v = 0;

	if (off > m->len || size > m->len - off)
		return 0;
	for (size_t i = 0; i < size; i++)
		v |= (uint64_t)m->b[off + i] << (8 * (m->msb ? size - 1 - i : i));
	return v;
}

static void put(struct img *m, size_t off, size_t size, uint64_t v)
{
	if (off > m->len || size > m->len - off)
		return;
	for (size_t i = 0; i < size; i++)
		m->b[off + i] = (uint8_t)(v >> (8 * (m->msb ? size - 1 - i : i)));
}

static void sync_ident(struct img *m)
{
	m->is64 = m->len > EI_CLASS && m->b[EI_CLASS] == ELFCLASS64;
	m->msb = m->len > EI_DATA && m->b[EI_DATA] == ELFDATA2MSB;
}

static struct field ehdr_field(const struct img *m, int which)
{
	static const struct field f64[] = {
	    FLD(Elf64_Ehdr, e_phoff),	  FLD(Elf64_Ehdr, e_shoff),    FLD(Elf64_Ehdr, e_phnum),
	    FLD(Elf64_Ehdr, e_shnum),	  FLD(Elf64_Ehdr, e_shstrndx), FLD(Elf64_Ehdr, e_phentsize),
	    FLD(Elf64_Ehdr, e_shentsize), FLD(Elf64_Ehdr, e_ehsize),   FLD(Elf64_Ehdr, e_type),
	};
	static const struct field f32[] = {
	    FLD(Elf32_Ehdr, e_phoff),	  FLD(Elf32_Ehdr, e_shoff),    FLD(Elf32_Ehdr, e_phnum),
	    FLD(Elf32_Ehdr, e_shnum),	  FLD(Elf32_Ehdr, e_shstrndx), FLD(Elf32_Ehdr, e_phentsize),
	    FLD(Elf32_Ehdr, e_shentsize), FLD(Elf32_Ehdr, e_ehsize),   FLD(Elf32_Ehdr, e_type),
	};
	return m->is64 ? f64[which] : f32[which];
}

enum { E_PHOFF, E_SHOFF, E_PHNUM, E_SHNUM, E_SHSTRNDX, E_PHENTSIZE, E_SHENTSIZE, E_NFIELDS = 9 };

static uint64_t ehdr_get(const struct img *m, int which)
{
	struct field f = ehdr_field(m, which);

	return get(m, f.off, f.size);
}

static struct field phdr_field(const struct img *m, int which)
{
	static const struct field f64[] = {
	    FLD(Elf64_Phdr, p_type),  FLD(Elf64_Phdr, p_offset), FLD(Elf64_Phdr, p_filesz),
	    FLD(Elf64_Phdr, p_align), FLD(Elf64_Phdr, p_memsz),	 FLD(Elf64_Phdr, p_vaddr),
	};
	static const struct field f32[] = {
	    FLD(Elf32_Phdr, p_type),  FLD(Elf32_Phdr, p_offset), FLD(Elf32_Phdr, p_filesz),
	    FLD(Elf32_Phdr, p_align), FLD(Elf32_Phdr, p_memsz),	 FLD(Elf32_Phdr, p_vaddr),
	};
	return m->is64 ? f64[which] : f32[which];
}

static struct field shdr_field(const struct img *m, int which)
{
	static const struct field f64[] = {
	    FLD(Elf64_Shdr, sh_type),	   FLD(Elf64_Shdr, sh_offset), FLD(Elf64_Shdr, sh_size),
	    FLD(Elf64_Shdr, sh_addralign), FLD(Elf64_Shdr, sh_flags),  FLD(Elf64_Shdr, sh_name),
	    FLD(Elf64_Shdr, sh_link),	   FLD(Elf64_Shdr, sh_info),   FLD(Elf64_Shdr, sh_entsize),
	};
	static const struct field f32[] = {
	    FLD(Elf32_Shdr, sh_type),	   FLD(Elf32_Shdr, sh_offset), FLD(Elf32_Shdr, sh_size),
	    FLD(Elf32_Shdr, sh_addralign), FLD(Elf32_Shdr, sh_flags),  FLD(Elf32_Shdr, sh_name),
	    FLD(Elf32_Shdr, sh_link),	   FLD(Elf32_Shdr, sh_info),   FLD(Elf32_Shdr, sh_entsize),
	};
	return m->is64 ? f64[which] : f32[which];
}

/* File offset of program header i (or section header i). */
static size_t phdr_at(const struct img *m, uint64_t i)
{
	return (size_t)(ehdr_get(m, E_PHOFF) + i * ehdr_get(m, E_PHENTSIZE));
}

static size_t shdr_at(const struct img *m, uint64_t i)
{
	return (size_t)(ehdr_get(m, E_SHOFF) + i * ehdr_get(m, E_SHENTSIZE));
}

/* ----------------------------------------------------------- mutations */

/* A value that tends to break size and offset arithmetic. */
static uint64_t hostile(struct rng *r, const struct img *m, size_t size, uint64_t cur)
{
	uint64_t ones = size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
	uint64_t v;

	switch (below(r, 14)) {
	case 0:
		v = 0;
		break;
	case 1:
		v = 1 + below(r, 16);
		break;
	case 2:
		v = ones;
		break;
	case 3:
		v = ones >> 1;
		break;
	case 4:
		v = (ones >> 1) + 1;
		break;
	case 5:
		v = m->len;
		break;
	case 6:
		v = m->len - 1;
		break;
	case 7:
		v = m->len + 1 + below(r, 8);
		break;
	case 8:
		v = below(r, m->len + 1);
		break;
	case 9:
		v = cur + 1 + below(r, 8);
		break;
	case 10:
		v = cur - 1 - below(r, 8);
		break;
	case 11:
		v = ones - below(r, 64);
		break;
	case 12:
		v = 0xfff0 + below(r, 16);
		break;
	default:
		v = rnd(r);
		break;
	}
	return v & ones;
}

static void set_hostile(struct rng *r, struct img *m, struct field f, size_t base)
{
	put(m, base + f.off, f.size, hostile(r, m, f.size, get(m, base + f.off, f.size)));
}

static void mut_ehdr(struct rng *r, struct img *m)
{
	set_hostile(r, m, ehdr_field(m, (int)below(r, E_NFIELDS)), 0);
}

/* Prefer PT_NOTE entries: that is where the build ID is looked for. */
static void mut_phdr(struct rng *r, struct img *m)
{
	uint64_t n = ehdr_get(m, E_PHNUM), i = below(r, n ? n : 1);
	int which = (int)below(r, 6);

	for (uint64_t k = 0; k < n && k < 64 && below(r, 2); k++)
		if (get(m, phdr_at(m, k), 4) == PT_NOTE)
			i = k;
	if (which == 0 && below(r, 2)) /* make any segment a note segment */
		put(m, phdr_at(m, i), 4, PT_NOTE);
	else
		set_hostile(r, m, phdr_field(m, which), phdr_at(m, i));
}

static void mut_shdr(struct rng *r, struct img *m)
{
	static const uint32_t types[] = {SHT_NOTE, SHT_NOBITS, SHT_NULL, SHT_STRTAB, SHT_GROUP};
	uint64_t n = ehdr_get(m, E_SHNUM), i = below(r, n ? n : 1);
	int which = (int)below(r, 9);
	struct field f;

	for (uint64_t k = 0; k < n && k < 64 && below(r, 2); k++)
		if (get(m, shdr_at(m, k), 4) == SHT_NOTE)
			i = k;
	f = shdr_field(m, which);
	if (which == 0 && below(r, 2))
		put(m, shdr_at(m, i) + f.off, f.size, types[below(r, 5)]);
	else if (which == 4 && below(r, 2)) /* claims compressed contents */
		put(m, shdr_at(m, i) + f.off, f.size,
		    get(m, shdr_at(m, i) + f.off, f.size) | SHF_COMPRESSED);
	else
		set_hostile(r, m, f, shdr_at(m, i));
}

/* Hit a note header: one whose name is "GNU" if there is any. */
static void mut_note(struct rng *r, struct img *m)
{
	size_t hits[32], n = 0, at;

	for (size_t p = 12; p + 4 <= m->len && n < 32; p += 4)
		if (!memcmp(m->b + p, "GNU", 4) && get(m, p - 12, 4) == 4)
			hits[n++] = p - 12;
	at = n ? hits[below(r, n)] : below(r, m->len) & ~(size_t)3;
	put(m, at + 4 * below(r, 3), 4, hostile(r, m, 4, get(m, at + 4, 4)));
}

/* Cut at a structure boundary (or anywhere). */
static void mut_truncate(struct rng *r, struct img *m)
{
	uint64_t cut;

	switch (below(r, 4)) {
	case 0:
		cut = phdr_at(m, below(r, ehdr_get(m, E_PHNUM) + 1)) + below(r, 3);
		break;
	case 1:
		cut = shdr_at(m, below(r, ehdr_get(m, E_SHNUM) + 1)) - below(r, 3);
		break;
	case 2:
		cut = below(r, 65);
		break;
	default:
		cut = below(r, m->len + 1);
		break;
	}
	if (cut < m->len)
		m->len = (size_t)cut;
}

static void mut_ident(struct rng *r, struct img *m)
{
	size_t at = below(r, 3) == 0 ? EI_VERSION : below(r, 2) ? EI_CLASS : EI_DATA;

	if (at < m->len)
		m->b[at] = at == EI_VERSION ? (uint8_t)rnd(r) : (uint8_t)(3 - m->b[at]);
	sync_ident(m);
}

/* Extended numbering: counts and the string index live in section 0. */
static void mut_extnum(struct rng *r, struct img *m)
{
	struct field num = ehdr_field(m, below(r, 2) ? E_PHNUM : E_SHNUM);
	struct field f = shdr_field(m, (int)(2 + below(r, 6))); /* size, info, link, ... */

	put(m, num.off, num.size, below(r, 2) ? 0 : 0xffff);
	if (below(r, 2))
		put(m, ehdr_field(m, E_SHSTRNDX).off, 2, SHN_XINDEX);
	set_hostile(r, m, f, shdr_at(m, 0));
}

static void mut_bytes(struct rng *r, struct img *m)
{
	static const uint8_t vals[] = {0, 1, 3, 4, 8, 0x7f, 0x80, 0xfe, 0xff};
	size_t len, src, dst;

	if (!m->len)
		return;
	switch (below(r, 3)) {
	case 0:
		m->b[below(r, m->len)] ^= (uint8_t)(1u << below(r, 8));
		break;
	case 1:
		m->b[below(r, m->len)] = vals[below(r, sizeof(vals))];
		break;
	default: /* copy a chunk over another: moves tables onto notes */
		len = 1 + below(r, 64);
		if (len > m->len)
			len = m->len;
		src = below(r, m->len - len + 1);
		dst = below(r, m->len - len + 1);
		memmove(m->b + dst, m->b + src, len);
		break;
	}
}

static void mutate(struct rng *r, struct img *m)
{
	static void (*const ops[])(struct rng *, struct img *) = {
	    mut_ehdr, mut_phdr,	    mut_phdr,  mut_shdr,   mut_shdr,  mut_note,
	    mut_note, mut_truncate, mut_ident, mut_extnum, mut_bytes, mut_bytes,
	};
	int rounds = 1 + (int)below(r, 3);

	for (int i = 0; i < rounds; i++) {
		sync_ident(m);
		ops[below(r, sizeof(ops) / sizeof(ops[0]))](r, m);
	}
}

/* -------------------------------------------------------------- driver */

struct opts {
	unsigned long mutations, seed;
	long only; /* -1: all mutations */
};

static uint8_t *read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf = NULL;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > REPLAY_MAX_INPUT)
		goto out;
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (buf && read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	*len = (size_t)st.st_size;
out:
	if (fd >= 0)
		close(fd);
	return buf;
}

static void run_one(const uint8_t *data, size_t len)
{
	cur_data = data;
	cur_len = len;
	LLVMFuzzerTestOneInput(data, len);
	cur_data = NULL;
}

static unsigned long replay_file(const char *path, const struct opts *o)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct img m;
	size_t len;
	uint8_t *orig = read_file(path, &len);
	unsigned long runs = 0;

	if (!orig) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		exit(2);
	}
	m.b = malloc(len ? len : 1);
	snprintf(cur_name, sizeof(cur_name), "%s", base);
	if (o->only < 0) {
		run_one(orig, len);
		runs++;
	}
	for (unsigned long i = 0; i < o->mutations; i++) {
		struct rng r = {o->seed ^ hash_name(base) ^ (i * 0xd1342543de82ef95ull)};

		if (o->only >= 0 && (unsigned long)o->only != i)
			continue;
		memcpy(m.b, orig, len);
		m.len = len;
		mutate(&r, &m);
		snprintf(cur_name, sizeof(cur_name), "%s-m%lu", base, i);
		run_one(m.b, m.len);
		runs++;
	}
	free(m.b);
	free(orig);
	return runs;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of a directory, sorted so that runs are repeatable. */
static unsigned long replay_dir(const char *dir, const struct opts *o, unsigned long *files)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	unsigned long runs = 0;

	if (!d) {
		perror(dir);
		exit(2);
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap &&
		    !(names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names))))
			exit(2);
		if (asprintf(&names[n++], "%s/%s", dir, e->d_name) < 0)
			exit(2);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			runs += replay_file(names[i], o);
			++*files;
		}
		free(names[i]);
	}
	free(names);
	return runs;
}

int main(int argc, char **argv)
{
	struct opts o = {.mutations = 100, .seed = 1, .only = -1};
	unsigned long runs = 0, files = 0;
	struct stat st;
	int c;

	while ((c = getopt(argc, argv, "n:s:m:h")) != -1) {
		switch (c) {
		case 'n':
			o.mutations = strtoul(optarg, NULL, 0);
			break;
		case 's':
			o.seed = strtoul(optarg, NULL, 0);
			break;
		case 'm':
			o.only = strtol(optarg, NULL, 0);
			if ((unsigned long)o.only >= o.mutations)
				o.mutations = (unsigned long)o.only + 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-n MUTATIONS] [-s SEED] [-m INDEX] PATH...\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "replay: no corpus given\n");
		return 2;
	}
	install_crash_capture();
	for (int i = optind; i < argc; i++) {
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			runs += replay_dir(argv[i], &o, &files);
		} else {
			runs += replay_file(argv[i], &o);
			files++;
		}
	}
	if (!files) {
		fprintf(stderr, "replay: the corpus is empty\n");
		return 1;
	}
	fprintf(stderr, "replay: %lu inputs from %lu files (%lu mutations each, seed %lu)\n", runs,
		files, o.only >= 0 ? 1 : o.mutations, o.seed);
	if (fuzz_summary)
		fuzz_summary();
	return 0;
}
