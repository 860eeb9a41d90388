/* dsostore report: the top symbols of a perf.data by their share of the
 * sampled period, the table perf report --stdio prints, with the sampled
 * DSOs' debuginfo found by build ID (locally, then from debuginfod, all at
 * once) before the first address is looked up. */
#define _GNU_SOURCE
#include "cli.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

static const char report_help[] =
	"usage: dsostore report [OPTIONS] [PERF.DATA]\n"
	"The symbols of a recording by their share of the sampled period (Overhead: the\n"
	"sum of an entry's sample periods over the event's total), as perf report\n"
	"--stdio prints them; one table per event.  Default file: perf.data.  The\n"
	"sampled DSOs' debuginfo is found first, all at once: on this machine, then\n"
	"from the servers of $DEBUGINFOD_URLS.  Kernel samples are named from\n"
	"/proc/kallsyms when the recording's kernel build ID is the running kernel's.\n"
	"  -i, --input FILE        the recording\n"
	"  -s, --sort KEYS         dso,sym (default), sym,srcline, comm,dso,sym (perf's\n"
	"                          default), or another list of comm (the thread's\n"
	"                          name), dso, sym and srcline (FILE:LINE, the file's\n"
	"                          base name)\n"
	"  --children, --no-children   a Children column (each row's share of the\n"
	"                          samples whose callchain passes through it) and rows\n"
	"                          for callers without samples; the default when the\n"
	"                          recording has callchains (perf record -g), as perf\n"
	"  -n, --show-nr-samples   a column with the number of samples\n"
	"  --top N                 only the first N rows of each table\n"
	"  --inline                under each row, each inline chain its samples are\n"
	"                          in: its share, then one line per frame, innermost\n"
	"                          first (\"FUNC (inlined) FILE:LINE\"), the last one the\n"
	"                          row's function with the line of the call\n"
	"  --json                  one JSON object instead of the tables\n"
	"  --no-fetch              no debuginfod: local debuginfo only\n"
	"  --progress, --no-progress   a progress bar of the fetch on stderr (default:\n"
	"                          on a terminal or with $DEBUGINFOD_PROGRESS)\n"
	"  --stdio                 accepted, for perf's command lines (the only output)\n" CLI_COMMON_HELP;

enum key { KEY_DSO, KEY_SYM, KEY_SRCLINE, KEY_COMM, NKEYS };

static const char *const key_names[] = { "dso", "sym", "srcline", "comm" };

struct opts {
	const char *path;
	enum key keys[NKEYS];
	int nkeys;
	bool by_comm; /* comm is a key: samples are told apart by thread name */
	int children; /* perf's --children: 1, --no-children: 0, -1: when callchains */
	bool show_nr, inlines, json, no_fetch, progress;
	size_t top; /* 0: all */
	int verbose;
};

/* One frame of an inline chain. */
struct cframe {
	char *function, *file;
	unsigned line;
};

/* The frames of an address in inlined code, innermost first; the last is
 * the function that holds them, with the line of the outermost call. */
struct chain {
	size_t n;
	struct cframe *f;
	char *key; /* the frames as one string: what makes two chains one */
};

/* What one address of a DSO is; shared by the sites at that address. */
struct loc {
	char *sym; /* the function (outermost frame); NULL: none known */
	uint64_t sym_start; /* its start, as a virtual address of the ELF */
	uint64_t vaddr; /* the address looked up, as a virtual address */
	char *srcline; /* perf's srcline: "file:line", "sym+off", "dso[addr]" */
	struct chain *chain; /* NULL: not in inlined code */
};

/* The samples of one event at one address: what the recording adds up. */
struct site {
	unsigned attr;
	char level; /* perf's: 'k' kernel, '.' user, 'g', 'u' guest, 'H' other */
	size_t dso; /* index into the session's DSOs; SIZE_MAX: no map */
	uint64_t ip; /* as perf shows it: file offset; kernel, no map: address */
	uint64_t samples, period;
	const char *dso_name; /* perf's short name; NULL: no map ("[unknown]") */
	const struct loc *loc;
	const char *comm; /* the thread's name (the session's string); NULL: none */
	int32_t pid; /* for perf's ":PID" when there is no name */
	/* A callchain entry's site (children mode): perf shows an unnamed
	 * one at its raw address, not its file offset, so it is its own row. */
	bool caller;
	uint64_t raw_ip;
	size_t entry; /* its row in entries_of() */
};

/* A sample in children mode: its own site, and its callers' sites as
 * [cc, cc + ncc) of report.cc_sites. */
struct csample {
	size_t self, cc, ncc;
	uint64_t period;
	unsigned attr;
};

struct event_total {
	uint64_t samples, period;
};

struct cref {
	const struct chain *c;
	uint64_t samples, period;
};

struct entry {
	const struct site *s; /* the first of its sites: what the row shows */
	uint64_t samples, period;
	uint64_t children; /* children mode: the periods of samples it is in */
	struct cref *chains;
	size_t nchains;
};

struct kallsyms {
	struct ksym {
		uint64_t addr;
		char *name; /* in names */
		char type;
	} *v;
	size_t n;
	char *names; /* every name, one allocation (some 200,000 of them) */
};

struct report {
	const struct opts *o;
	const struct ds_perf_dso *dsos;
	size_t ndsos;
	char **short_names; /* per DSO */
	struct site *sites;
	size_t nsites, cap;
	size_t *slots; /* hash of sites: index + 1, 0 empty */
	size_t nslots;
	struct event_total *ev;
	size_t nev;
	struct loc **locs;
	size_t nlocs, loccap;
	struct loc unknown; /* no map */
	struct kallsyms ksyms;
	bool ksyms_tried, ksyms_ok;
	/* This boot's kernel text minus the recorded one (KASLR), from perf's
	 * reference symbol; modules are not relocated, so when it is not 0
	 * their samples stay unnamed rather than misnamed. */
	uint64_t kdelta;
	const struct ds_perf_info *info;
	struct ds_context *ctx;
	bool any_callchain;
	bool children_on; /* the table has perf's Children column */
	struct csample *csamples;
	size_t ncs, cscap;
	size_t *cc_sites;
	size_t ncc, cccap;
	/* The vDSO's image, where perf would find one (see vdso_dso()). */
	bool vdso_tried;
	int vdso_fd;
	struct ds_store *vdso_store;
	struct ds_dso *vdso;
	struct ds_sym_batch *sym; /* every DSO's batch, one after the other */
};

static _Noreturn void oom(void)
{
	cli_error("out of memory");
	exit(2);
}

static void *xrealloc(void *p, size_t n, size_t size)
{
	void *q = n ? reallocarray(p, n, size) : p;

	if (n && !q)
		oom();
	return q;
}

static char *xstrdup(const char *s)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		oom();
	return d;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* ------------------------------------------------------- sample walk */

static char level_of(uint16_t cpumode)
{
	switch (cpumode) {
	case 1:
		return 'k';
	case 2:
		return '.';
	case 4:
		return 'g';
	case 5:
		return 'u';
	default:
		return 'H';
	}
}

static size_t site_hash(unsigned attr, size_t dso, uint64_t ip, char level, const char *comm)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ull ^ (uintptr_t)comm;

	h ^= ((uint64_t)dso * 0xff51afd7ed558ccdull) ^ ((uint64_t)attr << 32) ^ (uint8_t)level;
	h ^= h >> 29;
	return (size_t)(h * 0xc4ceb9fe1a85ec53ull);
}

static void sites_rehash(struct report *r)
{
	size_t n = r->nslots ? 2 * r->nslots : 1024;

	free(r->slots);
	r->slots = calloc(n, sizeof(*r->slots));
	if (!r->slots)
		oom();
	r->nslots = n;
	for (size_t i = 0; i < r->nsites; i++) {
		const struct site *s = &r->sites[i];
		size_t h = site_hash(s->attr, s->dso, s->ip, s->level, s->comm) & (n - 1);

		while (r->slots[h])
			h = (h + 1) & (n - 1);
		r->slots[h] = i + 1;
	}
}

/* A site per (event, DSO, address, level), and per thread name when the
 * table is sorted by it (the session's names are shared strings: one
 * pointer per name change). */
static struct site *site_findnew(struct report *r, unsigned attr, size_t dso, uint64_t ip,
				 char level, const char *comm, int32_t pid, bool caller,
				 uint64_t raw_ip)
{
	size_t h;

	if (2 * (r->nsites + 1) > r->nslots)
		sites_rehash(r);
	h = site_hash(attr, dso, ip, level, comm) & (r->nslots - 1);
	for (; r->slots[h]; h = (h + 1) & (r->nslots - 1)) {
		struct site *s = &r->sites[r->slots[h] - 1];

		if (s->attr == attr && s->dso == dso && s->ip == ip && s->level == level &&
		    s->comm == comm && (comm || s->pid == pid) && s->caller == caller &&
		    (!caller || s->raw_ip == raw_ip))
			return s;
	}
	if (r->nsites == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->sites = xrealloc(r->sites, r->cap, sizeof(*r->sites));
	}
	r->sites[r->nsites] = (struct site){ .attr = attr,
					     .dso = dso,
					     .ip = ip,
					     .level = level,
					     .comm = comm,
					     .pid = pid,
					     .caller = caller,
					     .raw_ip = raw_ip };
	r->slots[h] = ++r->nsites;
	return &r->sites[r->nsites - 1];
}

static int on_sample(void *user, const struct ds_perf_sample *smp)
{
	struct report *r = user;
	bool mapped = smp->dso < r->ndsos;
	bool by_comm = r->o->by_comm;
	const char *comm = by_comm ? smp->comm : NULL;
	int32_t pid = by_comm && !smp->comm ? smp->pid : 0;
	struct site *s = site_findnew(r, smp->attr, mapped ? smp->dso : SIZE_MAX,
				      mapped ? smp->dso_offset : smp->ip, level_of(smp->cpumode),
				      comm, pid, false, 0);
	size_t self = (size_t)(s - r->sites);

	s->samples++;
	s->period += smp->period;
	if (smp->nr_callchain)
		r->any_callchain = true;
	if (r->o->children) {
		struct csample *cs;

		if (r->ncs == r->cscap) {
			r->cscap = r->cscap ? 2 * r->cscap : 1024;
			r->csamples = xrealloc(r->csamples, r->cscap, sizeof(*r->csamples));
		}
		cs = &r->csamples[r->ncs++];
		*cs = (struct csample){ .self = self, .cc = r->ncc, .period = smp->period,
					.attr = smp->attr };
		/* A caller's level: its DSO's, kernel or user; with no map,
		 * perf keeps the level of the entry it filled before, walking
		 * from the outermost caller, starting with the sample's. */
		char levels[256], cur = level_of(smp->cpumode);
		size_t nl = smp->nr_callchain < sizeof(levels) ? smp->nr_callchain : sizeof(levels);

		for (size_t i = smp->nr_callchain; i-- > 0;) {
			size_t d = smp->callchain_dso[i];

			if (d < r->ndsos)
				cur = r->dsos[d].kernel ? 'k' : '.';
			if (i < nl)
				levels[i] = cur;
		}
		for (size_t i = 0; i < smp->nr_callchain; i++) {
			size_t d = smp->callchain_dso[i];
			bool in = d < r->ndsos;
			char level = i < nl ? levels[i] : level_of(smp->callchain_cpumode[i]);

			if (r->ncc == r->cccap) {
				r->cccap = r->cccap ? 2 * r->cccap : 4096;
				r->cc_sites = xrealloc(r->cc_sites, r->cccap, sizeof(*r->cc_sites));
			}
			s = site_findnew(r, smp->attr, in ? d : SIZE_MAX,
					 in ? smp->callchain_offset[i] : smp->callchain[i], level, comm,
					 pid, true, smp->callchain[i]);
			r->cc_sites[r->ncc++] = (size_t)(s - r->sites);
		}
		cs->ncc = r->ncc - cs->cc;
	}
	if (smp->attr >= r->nev) {
		size_t n = (size_t)smp->attr + 1;

		r->ev = xrealloc(r->ev, n, sizeof(*r->ev));
		memset(r->ev + r->nev, 0, (n - r->nev) * sizeof(*r->ev));
		r->nev = n;
	}
	r->ev[smp->attr].samples++;
	r->ev[smp->attr].period += smp->period;
	return 0;
}

/* perf's short name of a DSO: the base name of a file, "[kernel.kallsyms]"
 * and the like as they are, a kernel module as "[name]". */
static char *short_name(const struct ds_perf_dso *d)
{
	const char *p = d->path ? d->path : "[unknown]";
	char *s;

	if (p[0] != '/' || p[1] == '/')
		return xstrdup(p);
	if (d->kernel) {
		const char *b = basename_of(p);
		size_t len = strcspn(b, ".");

		if (asprintf(&s, "[%.*s]", (int)len, b) < 0)
			return xstrdup(p);
		for (char *c = s; *c; c++)
			if (*c == '-')
				*c = '_';
		return s;
	}
	return xstrdup(basename_of(p));
}

/* ---------------------------------------------------------- symbols */

static struct loc *loc_new(struct report *r)
{
	struct loc *l = calloc(1, sizeof(*l));

	if (!l)
		oom();
	if (r->nlocs == r->loccap) {
		r->loccap = r->loccap ? 2 * r->loccap : 256;
		r->locs = xrealloc(r->locs, r->loccap, sizeof(*r->locs));
	}
	r->locs[r->nlocs++] = l;
	return l;
}

static void chain_free(struct chain *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->f[i].function);
		free(c->f[i].file);
	}
	free(c->f);
	free(c->key);
	free(c);
}

static struct chain *chain_of(const struct ds_sym_answer *res)
{
	struct chain *c;
	char *key = NULL;
	size_t klen = 0;
	FILE *f;

	if (res->nframes < 2)
		return NULL;
	c = calloc(1, sizeof(*c));
	f = open_memstream(&key, &klen);
	if (!c || !f)
		oom();
	c->n = res->nframes;
	c->f = xrealloc(NULL, c->n, sizeof(*c->f));
	for (size_t i = 0; i < c->n; i++) {
		const struct ds_frame *fr = &res->frames[i];

		c->f[i] = (struct cframe){ .function = xstrdup(fr->function ? fr->function : "??"),
					   .file = xstrdup(fr->file),
					   .line = fr->line };
		fprintf(f, "%s\t%s\t%u\n", c->f[i].function, fr->file ? fr->file : "??", fr->line);
	}
	if (fclose(f))
		oom();
	c->key = key;
	return c;
}

/* perf's srcline (util/srcline.c): the base name of the innermost frame's
 * file and its line; without one, "SYM+OFFSET" (decimal) or "DSO[ADDR]". */
static char *srcline_of(const char *file, unsigned line, const char *sym, uint64_t sym_off,
			const char *dso_name, uint64_t vaddr)
{
	char *s;
	int n;

	if (file && line)
		n = asprintf(&s, "%s:%u", basename_of(file), line);
	else if (sym)
		n = asprintf(&s, "%s+%" PRIu64, sym, sym_off);
	else
		n = asprintf(&s, "%s[%" PRIx64 "]", dso_name, vaddr);
	if (n < 0)
		oom();
	return s;
}

/* The row's symbol is the outermost frame, the function whose code holds
 * the address, named after its ELF symbol as perf names it
 * (DS_SYM_ELF_NAMES); with DWARF read (srcline, --inline), where no ELF
 * symbol holds the address, the DWARF's name. */
static void loc_from_answer(struct loc *l, const struct ds_sym_answer *res, const char *dso_name)
{
	const struct ds_frame *in = res->nframes ? &res->frames[0] : NULL;
	const struct ds_frame *out = res->nframes ? &res->frames[res->nframes - 1] : NULL;

	l->vaddr = res->addr;
	if (out && out->function) {
		l->sym = xstrdup(out->function);
		l->sym_start = out->function_start;
	}
	l->srcline = srcline_of(in ? in->file : NULL, in ? in->line : 0, l->sym,
				l->vaddr - l->sym_start, dso_name, l->vaddr);
	l->chain = chain_of(res);
}

#define SYM_FLAGS (DS_SYM_FILE_OFFSET | DS_SYM_DEMANGLE | DS_SYM_INLINES | DS_SYM_ELF_NAMES)

static bool has_key(const struct opts *o, enum key k);

/* Only srcline and the inline chains come from DWARF; without them a row
 * is named from ELF symbols, as perf names it, and the DWARF of libc,
 * ld.so and the rest is never read (most of a small report's time). */
static unsigned sym_flags(const struct opts *o)
{
	return has_key(o, KEY_SRCLINE) || o->inlines ? SYM_FLAGS : SYM_FLAGS | DS_SYM_NO_LINES;
}

/* The vDSO is no file: perf names its samples only when it has its image,
 * and so do we.  With a build ID, the copy perf record put in perf's cache
 * (~/.debug/.build-id/xx/rest/vdso; not with -N); without one (pipe mode,
 * -z), the running kernel's, when the recording's host and release are
 * this machine's: this process's own vDSO, copied into a memfd. */
static bool same_host_and_release(const struct ds_perf_info *info);

static const char *vdso_image(struct report *r, const struct ds_perf_dso *d, char *path,
			      size_t len)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Ehdr) *eh = (const void *)img;
	const char *home = getenv("HOME");
	size_t size;
	char hex[2 * DS_BUILD_ID_MAX + 1];

	if (d->build_id.size) {
		struct stat st;

		if (!home || ds_build_id_format(&d->build_id, hex, sizeof(hex)) < 0)
			return NULL;
		snprintf(path, len, "%s/.debug/.build-id/%.2s/%s/vdso", home, hex, hex + 2);
		return stat(path, &st) == 0 ? path : NULL;
	}
	if (!img || !same_host_and_release(r->info) || memcmp(img, ELFMAG, SELFMAG))
		return NULL;
	/* The image: up to the section headers (the kernel maps them too). */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (1u << 20))
		return NULL;
	r->vdso_fd = memfd_create("vdso", MFD_CLOEXEC);
	if (r->vdso_fd < 0 || write(r->vdso_fd, img, size) != (ssize_t)size)
		return NULL;
	snprintf(path, len, "/proc/self/fd/%d", r->vdso_fd);
	return path;
}

static struct ds_dso *vdso_dso(struct report *r, const struct ds_perf_dso *d)
{
	char buf[PATH_MAX];
	const char *path;

	if (r->vdso_tried)
		return r->vdso;
	r->vdso_tried = true;
	path = vdso_image(r, d, buf, sizeof(buf));
	if (!path)
		return NULL;
	r->vdso_store = ds_store_new(r->ctx, "vdso", NULL);
	r->vdso = r->vdso_store ? ds_store_findnew(r->vdso_store, path, NULL) : NULL;
	return r->vdso;
}

/* The sites of one user-space DSO, sorted by ip: each distinct address
 * symbolized once, in one batch. */
static void resolve_dso(struct report *r, size_t di, struct site **v, size_t n)
{
	const struct ds_perf_dso *d = &r->dsos[di];
	struct ds_dso *dso = d->dso;
	uint64_t *addrs = xrealloc(NULL, n, sizeof(*addrs));
	const struct ds_sym_answer *res = NULL;
	size_t nu = 0, nres = 0;
	int rc = -ENOENT;

	for (size_t i = 0; i < n; i++)
		if (!nu || addrs[nu - 1] != v[i]->ip)
			addrs[nu++] = v[i]->ip;
	if (!strcmp(d->path, "[vdso]"))
		dso = vdso_dso(r, d);
	if (dso && !r->sym && !(r->sym = ds_sym_batch_new()))
		oom();
	if (dso) {
		rc = ds_dso_symbolize_batch(dso, addrs, nu, sym_flags(r->o), r->sym);
		res = ds_sym_batch_answers(r->sym, &nres);
	}
	if (rc < 0 && dso && r->o->verbose) {
		char why[512] = "";

		ds_dso_error(dso, why, sizeof(why));
		cli_error("%s: no symbols: %s%s%s", d->path, ds_strerror(rc), why[0] ? ": " : "",
			  why);
	}
	for (size_t i = 0, u = 0; u < nu; u++) {
		struct loc *l = loc_new(r);

		/* No DSO: nothing known, at the address as given. */
		struct ds_sym_answer none = { .addr = addrs[u] };

		loc_from_answer(l, u < nres ? &res[u] : &none, r->short_names[di]);
		for (; i < n && v[i]->ip == addrs[u]; i++)
			v[i]->loc = l;
	}
	free(addrs);
}

/* The running kernel's build ID, from its ELF notes in /sys/kernel/notes. */
static bool running_kernel_build_id(struct ds_build_id *out)
{
	unsigned char buf[4096];
	FILE *f = fopen("/sys/kernel/notes", "rb");
	size_t len, off = 0;

	if (!f)
		return false;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (off + 12 <= len) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3u) & ~3u);
		if (namesz > len || descsz > len || desc_off + descsz > len)
			break;
		if (type == 3 && namesz == 4 && !memcmp(buf + name_off, "GNU", 4) && descsz &&
		    descsz <= DS_BUILD_ID_MAX) {
			out->size = (uint8_t)descsz;
			memcpy(out->data, buf + desc_off, descsz);
			return true;
		}
		off = desc_off + ((descsz + 3u) & ~3u);
	}
	return false;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static size_t leading_underscores(const char *s)
{
	return strspn(s, "_");
}

/* Of two symbols at one address, the one perf keeps (choose_best_symbol()
 * in util/symbol.c): global over weak... as kallsyms types say. */
static bool ksym_better(const struct ksym *a, const struct ksym *b)
{
	bool wa = toupper(a->type) == 'W', wb = toupper(b->type) == 'W';
	bool ga = a->type == 'T', gb = b->type == 'T';
	size_t ua = leading_underscores(a->name), ub = leading_underscores(b->name);

	if (wa != wb)
		return wb;
	if (ga != gb)
		return ga;
	if (ua != ub)
		return ua < ub;
	return strlen(a->name) >= strlen(b->name);
}

/* The text symbols of /proc/kallsyms, sorted, one per address. */
/* ref: a symbol whose address to note in *ref_addr (before aliases at
 * one address are dropped: _text shares startup_64's). */
static bool load_kallsyms(struct kallsyms *k, const char *ref, uint64_t *ref_addr,
			  bool *ref_found)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	size_t cap = 0, nz = 0, nlen = 0, ncap = 0;

	if (!f)
		return false;
	/* "ADDR TYPE NAME[\t[MODULE]]" */
	while (fgets(line, sizeof(line), f)) {
		char *p, *name;
		uint64_t addr = strtoull(line, &p, 16);
		char type;

		if (p == line || p[0] != ' ' || !p[1] || p[2] != ' ')
			continue;
		type = p[1];
		if (toupper(type) != 'T' && toupper(type) != 'W')
			continue;
		name = p + 3;
		name[strcspn(name, " \t\n")] = 0;
		if (!*name)
			continue;
		if (ref && !*ref_found && !strcmp(name, ref)) {
			*ref_addr = addr;
			*ref_found = true;
		}
		if (k->n == cap) {
			cap = cap ? 2 * cap : 65536;
			k->v = xrealloc(k->v, cap, sizeof(*k->v));
		}
		{
			size_t len = strlen(name) + 1;

			while (nlen + len > ncap) {
				ncap = ncap ? 2 * ncap : 1 << 22;
				k->names = xrealloc(k->names, ncap, 1);
			}
			memcpy(k->names + nlen, name, len);
			/* an offset until the arena stops moving */
			k->v[k->n++] = (struct ksym){ .addr = addr,
						      .name = (char *)(uintptr_t)nlen,
						      .type = type };
			nlen += len;
		}
		nz += addr != 0;
	}
	fclose(f);
	for (size_t i = 0; i < k->n; i++)
		k->v[i].name = k->names + (uintptr_t)k->v[i].name;
	if (!nz) /* kptr_restrict: every address reads 0 */
		return false;
	qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
	/* qsort is not stable; ties are broken by perf's rule. */
	size_t w = 0;

	for (size_t i = 0; i < k->n; i++) {
		if (w && k->v[w - 1].addr == k->v[i].addr) {
			if (ksym_better(&k->v[i], &k->v[w - 1]))
				k->v[w - 1] = k->v[i];
			continue;
		}
		k->v[w++] = k->v[i];
	}
	k->n = w;
	return true;
}

static const struct ksym *ksym_at(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &k->v[lo - 1] : NULL;
}

/* Kernel symbols only when the recording was made on the kernel running
 * now (its build ID in the recording equals /sys/kernel/notes'; without
 * one, as in pipe mode and with -z, the recording's host name and kernel
 * release are this machine's): else the addresses of /proc/kallsyms say
 * nothing about the recorded ones. */
static bool same_host_and_release(const struct ds_perf_info *info)
{
	struct utsname u;

	return info && info->hostname && info->osrelease && uname(&u) == 0 &&
	       !strcmp(u.nodename, info->hostname) && !strcmp(u.release, info->osrelease);
}

static bool kernel_symbols(struct report *r)
{
	struct ds_build_id running;
	const struct ds_perf_dso *kd = NULL;
	uint64_t ref_now = 0;
	bool ref_found = false;

	if (r->ksyms_tried)
		return r->ksyms_ok;
	r->ksyms_tried = true;
	for (size_t i = 0; i < r->ndsos && !kd; i++)
		if (r->dsos[i].kernel && r->dsos[i].path && r->dsos[i].machine &&
		    !strcmp(r->dsos[i].path, "[kernel.kallsyms]") && !strcmp(r->dsos[i].machine, "host"))
			kd = &r->dsos[i];
	if (kd && !kd->build_id.size && same_host_and_release(r->info))
		; /* nothing better to go by: perf does the same */
	else if (!kd || !running_kernel_build_id(&running) ||
		 !ds_build_id_equal(&kd->build_id, &running)) {
		if (r->o->verbose)
			cli_error("kernel samples unnamed: the recording's kernel build ID is not "
				  "the running kernel's");
		return false;
	}
	r->ksyms_ok = load_kallsyms(&r->ksyms, kd ? kd->ref_symbol : NULL, &ref_now, &ref_found);
	if (!r->ksyms_ok && r->o->verbose)
		cli_error("kernel samples unnamed: /proc/kallsyms gives no addresses");
	/* The same kernel, maybe another boot: where perf's reference symbol
	 * is now says how far KASLR moved it. */
	if (ref_found)
		r->kdelta = ref_now - kd->ref_address;
	return r->ksyms_ok;
}

static void resolve_kernel(struct report *r, size_t di, struct site **v, size_t n)
{
	const char *machine = r->dsos[di].machine;
	bool named = machine && !strcmp(machine, "host") && kernel_symbols(r);
	bool vmlinux = !strcmp(r->dsos[di].path, "[kernel.kallsyms]");

	if (named && !vmlinux && r->kdelta)
		named = false; /* a module: where it is now is another question */
	for (size_t i = 0; i < n; i++) {
		struct loc *l;

		if (i && v[i]->ip == v[i - 1]->ip) {
			v[i]->loc = v[i - 1]->loc;
			continue;
		}
		l = loc_new(r);
		l->vaddr = v[i]->ip;
		if (named) {
			/* Looked up where it is in this boot; shown as recorded. */
			uint64_t delta = vmlinux ? r->kdelta : 0;
			const struct ksym *ks = ksym_at(&r->ksyms, v[i]->ip + delta);

			if (ks) {
				l->sym = xstrdup(ks->name);
				l->sym_start = ks->addr - delta;
			}
		}
		l->srcline = srcline_of(NULL, 0, l->sym, l->vaddr - l->sym_start,
					r->short_names[di], l->vaddr);
		v[i]->loc = l;
	}
}

static int site_by_dso(const void *a, const void *b)
{
	const struct site *x = *(struct site *const *)a, *y = *(struct site *const *)b;

	if (x->dso != y->dso)
		return x->dso < y->dso ? -1 : 1;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

static void resolve(struct report *r)
{
	struct site **v;

	/* No samples: nothing to sort (and qsort must not get NULL, even
	 * with 0 elements: C11 7.22.5 says its pointer is valid). */
	if (!r->nsites)
		return;
	v = xrealloc(NULL, r->nsites, sizeof(*v));
	for (size_t i = 0; i < r->nsites; i++)
		v[i] = &r->sites[i];
	qsort(v, r->nsites, sizeof(*v), site_by_dso);
	r->unknown.srcline = xstrdup("??:0"); /* perf's SRCLINE_UNKNOWN */
	for (size_t i = 0, j; i < r->nsites; i = j) {
		size_t di = v[i]->dso;

		for (j = i; j < r->nsites && v[j]->dso == di; j++)
			v[j]->dso_name = di == SIZE_MAX ? NULL : r->short_names[di];
		if (di == SIZE_MAX) {
			for (size_t k = i; k < j; k++)
				v[k]->loc = &r->unknown;
		} else if (r->dsos[di].kernel) {
			resolve_kernel(r, di, v + i, j - i);
		} else {
			resolve_dso(r, di, v + i, j - i);
		}
	}
	free(v);
}

/* ------------------------------------------------------------ entries */

static int str_cmp_null_last(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;
	return strcmp(a, b);
}

/* Whether two sites are one row, as perf's se_cmp of each sort key; the
 * order is perf's too (ascending names, then addresses), used for ties. */
/* The address perf shows for a site without a symbol: its file offset, or
 * a caller's raw address. */
static uint64_t shown_ip(const struct site *s)
{
	return s->caller ? s->raw_ip : s->ip;
}

/* perf's comm column: the thread's name, ":PID" when it has none. */
static const char *comm_name(const struct site *s, char buf[static 16])
{
	if (s->comm)
		return s->comm;
	snprintf(buf, 16, ":%d", s->pid);
	return buf;
}

static int comm_cmp(const struct site *a, const struct site *b)
{
	char x[16], y[16];

	return strcmp(comm_name(a, x), comm_name(b, y));
}

static int identity_cmp(const struct site *a, const struct site *b, enum key k)
{
	int c;

	switch (k) {
	case KEY_COMM:
		return comm_cmp(a, b);
	case NKEYS:
		break;
	case KEY_DSO:
		return str_cmp_null_last(a->dso_name, b->dso_name);
	case KEY_SYM:
		if (!a->loc->sym != !b->loc->sym)
			return a->loc->sym ? -1 : 1;
		c = str_cmp_null_last(a->dso_name, b->dso_name);
		if (c)
			return c;
		if (!a->loc->sym)
			return shown_ip(a) < shown_ip(b) ? -1 : shown_ip(a) > shown_ip(b);
		if (a->loc->sym_start != b->loc->sym_start)
			return a->loc->sym_start < b->loc->sym_start ? -1 : 1;
		return strcmp(a->loc->sym, b->loc->sym);
	case KEY_SRCLINE:
		return strcmp(a->loc->srcline, b->loc->srcline);
	}
	return 0;
}

static int site_identity(const void *x, const void *y, void *arg)
{
	const struct site *a = *(struct site *const *)x, *b = *(struct site *const *)y;
	const struct opts *o = arg;

	for (int i = 0; i < o->nkeys; i++) {
		int c = identity_cmp(a, b, o->keys[i]);

		if (c)
			return c;
	}
	return 0;
}

/* perf's output order (hists__output_resort()): the period, descending,
 * then each key's se_sort (se_cmp when it has none): DSO and symbol names
 * ascending, entries with a name before those without. */
static int entry_order(const void *x, const void *y, void *arg)
{
	const struct entry *a = x, *b = y;
	const struct report *r = arg;
	const struct opts *o = r->o;

	/* --children: perf sorts by the children's share, then the self one. */
	if (r->children_on && a->children != b->children)
		return a->children > b->children ? -1 : 1;
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	for (int i = 0; i < o->nkeys; i++) {
		int c = 0;

		switch (o->keys[i]) {
		case KEY_COMM:
			c = comm_cmp(a->s, b->s);
			break;
		case NKEYS:
			break;
		case KEY_DSO:
			c = str_cmp_null_last(a->s->dso_name, b->s->dso_name);
			break;
		case KEY_SYM:
			c = str_cmp_null_last(a->s->loc->sym, b->s->loc->sym);
			break;
		case KEY_SRCLINE:
			c = strcmp(a->s->loc->srcline, b->s->loc->srcline);
			break;
		}
		if (c)
			return c;
	}
	return site_identity(&a->s, &b->s, (void *)o);
}

static int cref_by_key(const void *x, const void *y)
{
	const struct cref *a = x, *b = y;

	return strcmp(a->c->key, b->c->key);
}

static int cref_by_period(const void *x, const void *y)
{
	const struct cref *a = x, *b = y;

	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	return strcmp(a->c->key, b->c->key);
}

static void entry_chains(struct entry *e, struct site **v, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (!v[i]->loc->chain)
			continue;
		if (!e->chains)
			e->chains = xrealloc(NULL, n, sizeof(*e->chains));
		e->chains[m++] = (struct cref){ v[i]->loc->chain, v[i]->samples, v[i]->period };
	}
	if (!m)
		return;
	qsort(e->chains, m, sizeof(*e->chains), cref_by_key);
	e->nchains = 0;
	for (size_t i = 0; i < m; i++) {
		struct cref *last = e->nchains ? &e->chains[e->nchains - 1] : NULL;

		if (last && !strcmp(last->c->key, e->chains[i].c->key)) {
			last->samples += e->chains[i].samples;
			last->period += e->chains[i].period;
		} else {
			e->chains[e->nchains++] = e->chains[i];
		}
	}
	qsort(e->chains, e->nchains, sizeof(*e->chains), cref_by_period);
}

/* The rows of one event, in perf's order. */
/* perf's --children: each row gets the period of every sample whose IP or
 * callchain passes through it, once per sample (recursion counts once). */
static void add_children(struct report *r, unsigned attr, struct entry *e, size_t ne)
{
	size_t *stamp = calloc(ne ? ne : 1, sizeof(*stamp));

	if (!stamp)
		oom();
	for (size_t k = 0; k < r->ncs; k++) {
		const struct csample *cs = &r->csamples[k];
		size_t id = r->sites[cs->self].entry;

		if (cs->attr != attr)
			continue;
		e[id].children += cs->period;
		stamp[id] = k + 1;
		for (size_t i = 0; i < cs->ncc; i++) {
			id = r->sites[r->cc_sites[cs->cc + i]].entry;
			if (stamp[id] != k + 1) {
				stamp[id] = k + 1;
				e[id].children += cs->period;
			}
		}
	}
	free(stamp);
}

static struct entry *entries_of(struct report *r, unsigned attr, size_t *n_out)
{
	struct site **v = xrealloc(NULL, r->nsites, sizeof(*v));
	struct entry *e = xrealloc(NULL, r->nsites, sizeof(*e));
	size_t n = 0, ne = 0;

	for (size_t i = 0; i < r->nsites; i++)
		if (r->sites[i].attr == attr && (r->children_on || !r->sites[i].caller))
			v[n++] = &r->sites[i];
	qsort_r(v, n, sizeof(*v), site_identity, (void *)r->o);
	for (size_t i = 0, j; i < n; i = j) {
		struct entry *cur = &e[ne++];

		*cur = (struct entry){ .s = v[i] };
		for (j = i; j < n && !site_identity(&v[i], &v[j], (void *)r->o); j++) {
			cur->samples += v[j]->samples;
			cur->period += v[j]->period;
			v[j]->entry = ne - 1;
		}
		if (r->o->inlines)
			entry_chains(cur, v + i, j - i);
	}
	if (r->children_on)
		add_children(r, attr, e, ne);
	qsort_r(e, ne, sizeof(*e), entry_order, r);
	free(v);
	*n_out = ne;
	return e;
}

/* ------------------------------------------------------------- output */

static double share(uint64_t period, uint64_t total)
{
	return total ? 100.0 * (double)period / (double)total : 0.0;
}

/* perf's convert_unit(): the sample count in the header, in K, M, G. */
static unsigned long scaled(unsigned long v, char *unit)
{
	*unit = ' ';
	if (v > 1000) {
		v /= 1000;
		*unit = 'K';
	}
	if (v > 1000) {
		v /= 1000;
		*unit = 'M';
	}
	if (v > 1000) {
		v /= 1000;
		*unit = 'G';
	}
	return v;
}

/* The symbol column after "[.] ": the name, or as perf the address
 * ("%#.16llx": 0x and 16 digits). */
static const char *sym_name(const struct site *s, char hex[static 24])
{
	if (s->loc->sym)
		return s->loc->sym;
	snprintf(hex, 24, "%#.16" PRIx64, shown_ip(s));
	return hex;
}

struct widths {
	int col[NKEYS];
};

static struct widths column_widths(const struct opts *o, const struct entry *e, size_t n)
{
	/* "Shared Object", "Symbol", "Source:Line", "Command" */
	static const int header[] = { 13, 6, 11, 7 };
	struct widths w;
	bool unresolved = false;

	for (int k = 0; k < o->nkeys; k++)
		w.col[k] = header[o->keys[k]];
	for (size_t i = 0; i < n; i++) {
		const struct site *s = e[i].s;

		unresolved |= !s->loc->sym;
		for (int k = 0; k < o->nkeys; k++) {
			int len = 0;

			switch (o->keys[k]) {
			case KEY_COMM: {
				char buf[16];

				len = (int)strlen(comm_name(s, buf));
				break;
			}
			case NKEYS:
				break;
			case KEY_DSO:
				len = (int)strlen(s->dso_name ? s->dso_name : "[unknown]");
				break;
			case KEY_SYM: {
				char hex[24];

				len = 4 + (int)strlen(sym_name(s, hex));
				break;
			}
			case KEY_SRCLINE:
				len = (int)strlen(s->loc->srcline);
				break;
			}
			if (len > w.col[k])
				w.col[k] = len;
		}
	}
	/* perf widens the DSO column for an unresolved symbol's address. */
	for (int k = 0; k < o->nkeys; k++)
		if (o->keys[k] == KEY_DSO && unresolved && w.col[k] < 16)
			w.col[k] = 16;
	return w;
}

static void print_chains(const struct entry *e, uint64_t total)
{
	for (size_t i = 0; i < e->nchains; i++) {
		const struct chain *c = e->chains[i].c;

		for (size_t f = 0; f < c->n; f++) {
			const struct cframe *fr = &c->f[f];

			if (!f)
				printf("            %6.2f%%  ", share(e->chains[i].period, total));
			else
				printf("                     ");
			printf("%s%s %s:%u\n", fr->function, f + 1 < c->n ? " (inlined)" : "",
			       fr->file ? basename_of(fr->file) : "??", fr->line);
		}
	}
}

static void print_table(const struct report *r, const char *event, unsigned attr,
			const struct entry *e, size_t n)
{
	static const char *const header[] = { "Shared Object", "Symbol", "Source:Line",
					      "Command" };
	const struct opts *o = r->o;
	const struct event_total *t = &r->ev[attr];
	struct widths w = column_widths(o, e, n);
	char unit;
	unsigned long ns = scaled((unsigned long)t->samples, &unit);

	/* perf: "%lu%c of event '%s'", the unit a space when there is none */
	if (event)
		printf("# Samples: %lu%c of event '%s'", ns, unit, event);
	else if (r->nev > 1)
		printf("# Samples: %lu%c of event #%u", ns, unit, attr);
	else
		printf("# Samples: %lu%s", ns, unit == ' ' ? "" : (char[]){ unit, 0 });
	printf("\n# Event count (approx.): %" PRIu64 "\n#\n", t->period);
	printf("# %s%s", r->children_on ? "Children      Self" : "Overhead",
	       o->show_nr ? "       Samples" : "");
	for (int k = 0; k < o->nkeys; k++)
		printf("  %-*s", w.col[k], header[o->keys[k]]);
	printf("\n# ........%s%s", r->children_on ? "  ........" : "",
	       o->show_nr ? "  ............" : "");
	for (int k = 0; k < o->nkeys; k++)
		printf("  %.*s", w.col[k],
		       "................................................................"
		       "................................................................"
		       "................................................................"
		       "................................................................");
	printf("\n#\n");
	for (size_t i = 0; i < n && (!o->top || i < o->top); i++) {
		const struct site *s = e[i].s;

		if (r->children_on)
			printf("  %7.2f%%", share(e[i].children, t->period));
		printf("  %7.2f%%", share(e[i].period, t->period));
		if (o->show_nr)
			printf("  %12" PRIu64, e[i].samples);
		for (int k = 0; k < o->nkeys; k++) {
			/* perf pads every column but the last */
			int width = k + 1 < o->nkeys ? w.col[k] : 0;
			char hex[24];

			switch (o->keys[k]) {
			case KEY_COMM: {
				char buf[16];

				printf("  %-*s", width, comm_name(s, buf));
				break;
			}
			case NKEYS:
				break;
			case KEY_DSO:
				printf("  %-*s", width, s->dso_name ? s->dso_name : "[unknown]");
				break;
			case KEY_SYM:
				printf("  [%c] %-*s", s->level, width ? width - 4 : 0, sym_name(s, hex));
				break;
			case KEY_SRCLINE:
				printf("  %-*s", width, s->loc->srcline);
				break;
			}
		}
		putchar('\n');
		if (o->inlines)
			print_chains(&e[i], t->period);
	}
	putchar('\n');
}

static bool has_key(const struct opts *o, enum key k)
{
	for (int i = 0; i < o->nkeys; i++)
		if (o->keys[i] == k)
			return true;
	return false;
}

static void json_entry(const struct report *r, const struct entry *e, uint64_t total)
{
	const struct opts *o = r->o;
	const struct site *s = e->s;

	printf("{\"overhead\":%.6f,\"samples\":%" PRIu64 ",\"period\":%" PRIu64,
	       share(e->period, total), e->samples, e->period);
	if (r->children_on)
		printf(",\"children\":%.6f,\"children_period\":%" PRIu64,
		       share(e->children, total), e->children);
	if (has_key(o, KEY_COMM)) {
		char buf[16];

		printf(",\"comm\":");
		cli_json_string(comm_name(s, buf));
	}
	if (has_key(o, KEY_DSO) || has_key(o, KEY_SYM)) {
		const struct ds_perf_dso *d = s->dso < r->ndsos ? &r->dsos[s->dso] : NULL;
		char hex[2 * DS_BUILD_ID_MAX + 1];

		printf(",\"dso\":");
		cli_json_string(s->dso_name ? s->dso_name : "[unknown]");
		printf(",\"dso_path\":");
		cli_json_string(d ? d->path : NULL);
		printf(",\"build_id\":");
		if (d && d->build_id.size &&
		    ds_build_id_format(&d->build_id, hex, sizeof(hex)) > 0)
			cli_json_string(hex);
		else
			fputs("null", stdout);
	}
	if (has_key(o, KEY_SYM)) {
		printf(",\"level\":\"%c\",\"symbol\":", s->level);
		cli_json_string(s->loc->sym);
		if (!s->loc->sym)
			printf(",\"ip\":\"0x%" PRIx64 "\"", s->ip);
	}
	if (has_key(o, KEY_SRCLINE)) {
		printf(",\"srcline\":");
		cli_json_string(s->loc->srcline);
	}
	if (o->inlines) {
		printf(",\"inlines\":[");
		for (size_t i = 0; i < e->nchains; i++) {
			const struct chain *c = e->chains[i].c;

			printf("%s{\"overhead\":%.6f,\"samples\":%" PRIu64 ",\"period\":%" PRIu64
			       ",\"frames\":[",
			       i ? "," : "", share(e->chains[i].period, total), e->chains[i].samples,
			       e->chains[i].period);
			for (size_t f = 0; f < c->n; f++) {
				printf("%s{\"function\":", f ? "," : "");
				cli_json_string(c->f[f].function);
				printf(",\"file\":");
				cli_json_string(c->f[f].file);
				printf(",\"line\":%u,\"inlined\":%s}", c->f[f].line,
				       f + 1 < c->n ? "true" : "false");
			}
			printf("]}");
		}
		printf("]");
	}
	putchar('}');
}

/* ---------------------------------------------------------------- run */

static void prefetch(struct report *r, struct ds_perf_session *s)
{
	DS_OPTS(ds_fetch_opts, fo, .progress = r->o->progress ? cli_progress : NULL);
	int left = ds_perf_session_prefetch(s, 0, &fo);

	if (left < 0) {
		cli_error("fetching debuginfo: %s", ds_strerror(left));
		return;
	}
	if (!left || !r->o->verbose)
		return;
	for (size_t i = 0; i < r->ndsos; i++) {
		const struct ds_perf_dso *d = &r->dsos[i];
		const struct ds_debuginfo *di;
		char why[512] = "";

		if (!d->dso || !d->samples || d->kernel || !ds_dso_debuginfo(d->dso, &di))
			continue;
		ds_dso_error(d->dso, why, sizeof(why));
		cli_error("%s: no debuginfo%s%s", d->path, why[0] ? ": " : "", why);
	}
}

static void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nlocs; i++) {
		free(r->locs[i]->sym);
		free(r->locs[i]->srcline);
		chain_free(r->locs[i]->chain);
		free(r->locs[i]);
	}
	free(r->locs);
	free(r->unknown.srcline);
	for (size_t i = 0; i < r->ndsos && r->short_names; i++)
		free(r->short_names[i]);
	free(r->short_names);
	free(r->ksyms.names);
	free(r->ksyms.v);
	free(r->sites);
	free(r->slots);
	free(r->ev);
	free(r->csamples);
	free(r->cc_sites);
	ds_dso_put(r->vdso);
	ds_store_free(r->vdso_store);
	ds_sym_batch_free(r->sym);
	if (r->vdso_fd > 0)
		close(r->vdso_fd);
}

static void output(struct report *r, const struct ds_perf_info *info,
		   const struct ds_perf_data *pd)
{
	const struct opts *o = r->o;
	bool first = true;

	if (o->json) {
		printf("{\"file\":");
		cli_json_string(o->path);
		printf(",\"sort\":[");
		for (int k = 0; k < o->nkeys; k++)
			printf("%s\"%s\"", k ? "," : "", key_names[o->keys[k]]);
		printf("],\"lost\":%" PRIu64 ",\"events\":[", info->nr_lost);
	} else {
		printf("# dsostore report of %s\n#\n# Total Lost Samples: %" PRIu64 "\n#\n", o->path,
		       info->nr_lost);
	}
	for (unsigned a = 0; a < r->nev; a++) {
		size_t n;
		struct entry *e;

		if (!r->ev[a].samples) /* perf skips an event without samples */
			continue;
		e = entries_of(r, a, &n);
		if (o->json) {
			printf("%s{\"attr\":%u,\"event\":", first ? "" : ",", a);
			cli_json_string(ds_perf_data_event_name(pd, a));
			printf(",\"samples\":%" PRIu64 ",\"event_count\":%" PRIu64 ",\"entries\":[",
			       r->ev[a].samples, r->ev[a].period);
			for (size_t i = 0; i < n && (!o->top || i < o->top); i++) {
				if (i)
					putchar(',');
				json_entry(r, &e[i], r->ev[a].period);
			}
			printf("]}");
		} else {
			print_table(r, ds_perf_data_event_name(pd, a), a, e, n);
		}
		first = false;
		for (size_t i = 0; i < n; i++)
			free(e[i].chains);
		free(e);
	}
	if (o->json)
		printf("]}\n");
	/* perf report's answer (ui__error(), exit status 0): no table. */
	if (first)
		cli_error("The %s data has no samples!", o->path);
}

static int run(const struct opts *o, const struct cli_common *common)
{
	struct report r = { .o = o };
	struct ds_perf_session *s = NULL;
	struct ds_perf_data *pd = NULL;
	struct ds_context *ctx = NULL;
	struct ds_perf_info info;
	char err[256] = "";
	int rc, status = 1;

	rc = ds_perf_data_open(o->path, &pd, err, sizeof(err));
	if (rc) {
		cli_error("%s: %s", o->path, err[0] ? err : ds_strerror(rc));
		return 1;
	}
	ds_perf_data_info(pd, &info);
	r.info = &info;
	/* The context reads the servers from the environment when it is made. */
	if (o->no_fetch && setenv("DEBUGINFOD_URLS", "", 1)) {
		cli_error("cannot set DEBUGINFOD_URLS: %s", ds_strerror(-errno));
		goto out;
	}
	ctx = cli_context(common);
	r.ctx = ctx;
	s = ds_perf_session_new(ctx, pd, NULL, err, sizeof(err));
	if (!s) {
		cli_error("%s: %s", o->path, err[0] ? err : ds_strerror(-errno));
		goto out;
	}
	r.ndsos = ds_perf_session_dsos(s, &r.dsos);
	r.short_names = xrealloc(NULL, r.ndsos ? r.ndsos : 1, sizeof(*r.short_names));
	for (size_t i = 0; i < r.ndsos; i++)
		r.short_names[i] = short_name(&r.dsos[i]);
	rc = ds_perf_session_samples(s, on_sample, &r);
	if (rc) {
		cli_error("%s: reading the samples: %s", o->path, ds_strerror(rc));
		goto out;
	}
	/* perf's default: a Children column when the samples have callchains. */
	r.children_on = o->children > 0 || (o->children < 0 && r.any_callchain);
	prefetch(&r, s);
	resolve(&r);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	output(&r, &info, pd);
	status = fflush(stdout) ? 1 : 0;
out:
	report_free(&r);
	ds_perf_session_free(s);
	ds_context_free(ctx);
	ds_perf_data_close(pd);
	return status;
}

static int parse_sort(struct opts *o, const char *spec)
{
	char *dup = xstrdup(spec), *save = NULL;

	o->nkeys = 0;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k;

		if (!strcmp(t, "symbol"))
			t = "sym";
		for (k = 0; k < NKEYS && strcmp(t, key_names[k]); k++)
			;
		if (k == NKEYS) {
			cli_error("report: unknown sort key '%s' (comm, dso, sym, srcline)", t);
			goto bad;
		}
		for (int i = 0; i < o->nkeys; i++)
			if (o->keys[i] == (enum key)k) {
				cli_error("report: sort key '%s' twice", t);
				goto bad;
			}
		o->keys[o->nkeys++] = (enum key)k;
	}
	free(dup);
	if (!o->nkeys)
		cli_error("report: --sort needs keys (comm, dso, sym, srcline)");
	o->by_comm = has_key(o, KEY_COMM);
	return o->nkeys ? 0 : -1;
bad:
	free(dup);
	return -1;
}

int cmd_report(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct opts o = { .keys = { KEY_DSO, KEY_SYM }, .nkeys = 2, .children = -1 };
	int progress = -1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int r = cli_common_option(&common, argc, argv, &i, report_help);

		if (r < 0)
			return r == CLI_HELP ? 0 : 2;
		if (r > 0)
			continue;
		if ((!strcmp(a, "-i") || !strcmp(a, "--input")) && i + 1 < argc) {
			o.path = argv[++i];
		} else if (!strncmp(a, "--input=", 8)) {
			o.path = a + 8;
		} else if ((!strcmp(a, "-s") || !strcmp(a, "--sort")) && i + 1 < argc) {
			if (parse_sort(&o, argv[++i]))
				return 2;
		} else if (!strncmp(a, "--sort=", 7)) {
			if (parse_sort(&o, a + 7))
				return 2;
		} else if (!strcmp(a, "--children")) {
			o.children = 1;
		} else if (!strcmp(a, "--no-children")) {
			o.children = 0;
		} else if (!strcmp(a, "-n") || !strcmp(a, "--show-nr-samples")) {
			o.show_nr = true;
		} else if ((!strcmp(a, "--top") && i + 1 < argc) || !strncmp(a, "--top=", 6)) {
			const char *v = a[5] == '=' ? a + 6 : argv[++i];
			char *end;
			unsigned long long n;

			errno = 0;
			n = strtoull(v, &end, 10);
			if (errno || end == v || *end || v[0] == '-' || !n) {
				cli_error("report: --top needs a positive number, not '%s'", v);
				return 2;
			}
			o.top = (size_t)n;
		} else if (!strcmp(a, "--inline")) {
			o.inlines = true;
		} else if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--no-fetch")) {
			o.no_fetch = true;
		} else if (!strcmp(a, "--progress")) {
			progress = 1;
		} else if (!strcmp(a, "--no-progress")) {
			progress = 0;
		} else if (!strcmp(a, "--stdio")) {
			/* the only output there is */
		} else if (a[0] == '-' && a[1]) {
			cli_error("report: unknown option or missing argument: %s", a);
			return 2;
		} else if (!o.path) {
			o.path = a;
		} else {
			cli_error("report: one recording at a time (%s and %s)", o.path, a);
			return 2;
		}
	}
	if (!o.path)
		o.path = "perf.data"; /* perf's default */
	o.verbose = common.verbose;
	o.progress = cli_want_progress(progress);
	return run(&o, &common);
}
