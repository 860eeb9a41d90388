/* dsostore report: the top symbols of a perf.data by their share of the
 * sampled period, the table perf report --stdio prints, with the sampled
 * DSOs' debuginfo found by build ID (locally, then from debuginfod, all at
 * once) before the first address is looked up. */
#define _GNU_SOURCE
#include "callgraph.h"
#include "cli.h"
#include "folded.h"

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
	"  -g, --call-graph [MODE,THRESHOLD,LIMIT,ORDER,VALUE]   under each row, its\n"
	"                          call graph as perf draws it (recordings with -g):\n"
	"                          graph (default), fractal, flat, folded or none;\n"
	"                          a threshold in percent (0.5), a limit of entries\n"
	"                          per level, caller or callee order (default: caller\n"
	"                          with --children, else callee), percent, period or\n"
	"                          count; bare -g: graph,0.5,caller\n"
	"  -G, --inverted          caller order\n"
	"  --percent-limit N       only rows of at least N% (their Children share with\n"
	"                          --children); the graphs' threshold too\n"
	"  --inline                under each row, each inline chain its samples are\n"
	"                          in: its share, then one line per frame, innermost\n"
	"                          first (\"FUNC (inlined) FILE:LINE\"), the last one the\n"
	"                          row's function with the line of the call\n"
	"  --json                  one JSON object instead of the tables\n"
	"  --pprof FILE            write pprof's profile.proto (gzipped; \"-\": stdout)\n"
	"                          instead of the tables: go tool pprof, Pyroscope...\n"
	"  --no-fetch              no debuginfod: local debuginfo only\n"
	"  --progress, --no-progress   a progress bar of the fetch on stderr (default:\n"
	"                          on a terminal or with $DEBUGINFOD_PROGRESS)\n"
	"  --stdio                 accepted, for perf's command lines (the only output)\n"
	"  --folded                collapsed stacks instead, as perf script |\n"
	"                          stackcollapse-perf.pl: to -o FILE or stdout, by\n"
	FOLDED_OPTS_HELP CLI_COMMON_HELP;

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
	struct cg_opts graph; /* -g */
	bool inverted; /* -G */
	float percent_limit; /* perf's is a float, and so is the row's share it is compared with */
};

/* One frame of an inline chain. */
struct cframe {
	const char *function, *file; /* the profile's */
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
	char *srcline; /* perf's srcline: "file:line", "sym+off", "dso[addr]" */
	uint32_t srcline_id; /* the same string, the same number (names_id()) */
	struct chain *chain; /* NULL: not in inlined code */
};

/* Strings by their text, each a number: what rows are told apart by
 * (thread names, DSO names, srclines) compared as numbers.  The strings
 * are not copied: they outlive the report. */
struct names {
	struct nslot {
		const char *s;
		uint64_t hash;
		uint32_t id;
	} *v;
	size_t n, cap; /* cap: a power of two, or 0 */
};

/* The samples of one event at one address: what the recording adds up. */
struct site {
	unsigned attr;
	int32_t pid; /* for perf's ":PID" when there is no name */
	size_t dso; /* index into the session's DSOs; SIZE_MAX: no map */
	uint64_t ip; /* as perf shows it: file offset; kernel, no map: address */
	uint64_t samples, period;
	const char *dso_name; /* perf's short name; NULL: no map ("[unknown]") */
	const struct ds_profile_loc *pl; /* the function: pl->function, its start */
	const struct loc *loc; /* srcline and chain: NULL unless the output shows them */
	const char *comm; /* the thread's name (the session's string); NULL: none */
	uint64_t raw_ip;
	uint32_t entry; /* its row in entries_of() */
	char level; /* perf's: 'k' kernel, '.' user, 'g', 'u' guest, 'H' other */
	/* A callchain entry's site (children mode): perf shows an unnamed
	 * one at its raw address, not its file offset, so it is its own row. */
	bool caller;
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

struct report {
	const struct opts *o;
	struct names names;
	uint32_t *dso_name_id; /* per DSO */
	const struct ds_perf_dso *dsos;
	size_t ndsos;
	struct ds_profile *prof;
	struct site *sites;
	size_t nsites, cap;
	size_t *slots; /* hash of sites: index + 1, 0 empty */
	size_t nslots;
	struct event_total *ev;
	size_t nev;
	struct loc *locs; /* per location of the profile; NULL: none needed */
	const struct ds_profile_loc *pl; /* the profile's */
	bool any_callchain;
	bool children_on; /* the table has perf's Children column */
	struct cg_opts graph_opts; /* -g, the order resolved */
	struct callgraph *graph; /* of the table being printed */
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

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ^ (h >> 29);
}

static uint32_t names_id(struct names *t, const char *s)
{
	uint64_t h = str_hash(s);
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct nslot *v = calloc(cap, sizeof(*v));

		if (!v)
			oom();
		for (size_t k = 0; k < t->cap; k++) {
			if (!t->v[k].s)
				continue;
			for (i = t->v[k].hash & (cap - 1); v[i].s; i = (i + 1) & (cap - 1))
				;
			v[i] = t->v[k];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	for (i = h & (t->cap - 1); t->v[i].s; i = (i + 1) & (t->cap - 1))
		if (t->v[i].hash == h && !strcmp(t->v[i].s, s))
			return t->v[i].id;
	t->v[i] = (struct nslot){ .s = s, .hash = h, .id = (uint32_t)t->n++ };
	return t->v[i].id;
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

static void chain_free(struct chain *c)
{
	if (!c)
		return;
	free(c->f);
	free(c->key);
	free(c);
}

/* An inline chain: the location's frames (the profile's strings). */
static struct chain *chain_of(const struct ds_profile_loc *pl)
{
	struct chain *c;
	char *key = NULL;
	size_t klen = 0;
	FILE *f;

	if (pl->nframes < 2)
		return NULL;
	c = calloc(1, sizeof(*c));
	f = open_memstream(&key, &klen);
	if (!c || !f)
		oom();
	c->n = pl->nframes;
	c->f = xrealloc(NULL, c->n, sizeof(*c->f));
	for (size_t i = 0; i < c->n; i++) {
		const struct ds_frame *fr = &pl->frames[i];

		c->f[i] = (struct cframe){ .function = fr->function ? fr->function : "??",
					   .file = fr->file,
					   .line = fr->line };
		fprintf(f, "%s\t%s\t%u\n", c->f[i].function, fr->file ? fr->file : "??", fr->line);
	}
	if (fclose(f))
		oom();
	c->key = key;
	return c;
}

static bool has_key(const struct opts *o, enum key k);

/* The row's symbol is the outermost frame, the function whose code holds
 * the address, named after its ELF symbol as perf names it; srcline and
 * the inline chains only where the output shows them (they are what needs
 * DWARF). */
static void locs_of(struct report *r)
{
	const struct ds_profile_loc *pl;
	size_t n = ds_profile_locs(r->prof, &pl);
	bool srcline = has_key(r->o, KEY_SRCLINE), inlines = r->o->inlines;

	r->pl = pl;
	r->dso_name_id = xrealloc(NULL, r->ndsos ? r->ndsos : 1, sizeof(*r->dso_name_id));
	for (size_t i = 0; i < r->ndsos; i++)
		r->dso_name_id[i] = names_id(&r->names, ds_profile_dso_name(r->prof, i));
	if (!srcline && !inlines)
		return;
	r->locs = xrealloc(NULL, n ? n : 1, sizeof(*r->locs));
	for (size_t i = 0; i < n; i++) {
		struct loc *l = &r->locs[i];
		const struct ds_frame *in = pl[i].nframes ? &pl[i].frames[0] : NULL;
		/* No DSO, or one that could not be read: the address as given. */
		uint64_t vaddr = pl[i].vaddr ? pl[i].vaddr : pl[i].ip;

		*l = (struct loc){ 0 };
		if (pl[i].dso == SIZE_MAX)
			l->srcline = srcline ? xstrdup("??:0") : NULL; /* perf's SRCLINE_UNKNOWN */
		else if (srcline)
			l->srcline = srcline_of(in ? in->file : NULL, in ? in->line : 0, pl[i].function,
						vaddr - pl[i].function_start,
						ds_profile_dso_name(r->prof, pl[i].dso), vaddr);
		if (l->srcline)
			l->srcline_id = names_id(&r->names, l->srcline);
		if (inlines)
			l->chain = chain_of(&pl[i]);
	}
}

/* A caller's level: its DSO's, kernel or user; with no map, perf keeps the
 * level of the entry it filled before, walking from the outermost caller
 * (-g callee: from the sample), starting with the sample's.  Into
 * levels[1..nlocs); returns the level of the callchain's own copy of the
 * sampled address (see stack_site()). */
static char caller_levels(const struct report *r, const struct ds_profile_sample *ps,
			  const struct ds_profile_loc *pl, char *levels)
{
	char cur = level_of(ps->cpumodes[0]), dup = cur;
	/* perf walks in the call graph's order: -g callee from the sample out */
	bool callee = !r->o->graph.order && !r->o->inverted;

	for (size_t j = 0; j < ps->nlocs; j++) {
		size_t i = callee ? j : ps->nlocs - 1 - j, d = pl[ps->locs[i]].dso;

		if (d < r->ndsos)
			cur = r->dsos[d].kernel ? 'k' : '.';
		if (i)
			levels[i] = cur;
		else
			dup = cur;
	}
	return dup;
}

/* The site of element i of stack p (levels: its callers', from
 * caller_levels()), made the first time, found after.  i == nlocs: the
 * callchain's first entry, the sampled address again (the profile leaves
 * it out): perf makes it a caller entry of its own, which shows an
 * unnamed address raw, not as the file offset the sample's row shows. */
static struct site *stack_site(struct report *r, const struct ds_profile_sample *p, size_t i,
			       const char *levels, char dup_level)
{
	const struct ds_profile_loc *l = &r->pl[p->locs[i < p->nlocs ? i : 0]];
	bool by_comm = r->o->by_comm;
	const char *comm = by_comm ? p->comm : NULL;
	int32_t pid = by_comm && !p->comm ? p->pid : 0;
	struct site *s;

	if (!i)
		s = site_findnew(r, p->attr, l->dso, l->ip, level_of(p->cpumodes[0]), comm, pid,
				 false, 0);
	else if (i == p->nlocs)
		s = site_findnew(r, p->attr, l->dso, l->ip, dup_level, comm, pid, true, p->ips[0]);
	else
		s = site_findnew(r, p->attr, l->dso, l->ip, levels[i], comm, pid, true, p->ips[i]);
	s->pl = l;
	s->loc = r->locs ? &r->locs[p->locs[i < p->nlocs ? i : 0]] : NULL;
	return s;
}

/* The sites of every stack of the profile: each sample's own, and in
 * children mode its callers' (found again by add_children(), not kept:
 * a callchain entry would cost a word each). */
static void collect(struct report *r)
{
	const struct ds_profile_sample *ps;
	size_t n = ds_profile_samples(r->prof, &ps);
	char *levels = NULL;
	size_t nlevels = 0;

	for (size_t k = 0; k < n; k++) {
		const struct ds_profile_sample *p = &ps[k];
		struct site *s = stack_site(r, p, 0, NULL, 0);

		s->samples += p->count;
		s->period += p->period;
		if (p->callchain)
			r->any_callchain = true;
		if (r->o->children && p->callchain) {
			char dup;

			if (p->nlocs > nlevels) {
				nlevels = p->nlocs;
				levels = xrealloc(levels, nlevels, 1);
			}
			dup = caller_levels(r, p, r->pl, levels);
			for (size_t i = 1; i < p->nlocs + p->leaf_in_callchain; i++)
				stack_site(r, p, i, levels, dup);
		}
		if (p->attr >= r->nev) {
			size_t ne = (size_t)p->attr + 1;

			r->ev = xrealloc(r->ev, ne, sizeof(*r->ev));
			memset(r->ev + r->nev, 0, (ne - r->nev) * sizeof(*r->ev));
			r->nev = ne;
		}
		r->ev[p->attr].samples += p->count;
		r->ev[p->attr].period += p->period;
	}
	free(levels);
	for (size_t i = 0; i < r->nsites; i++)
		r->sites[i].dso_name = r->sites[i].dso == SIZE_MAX
					       ? NULL
					       : ds_profile_dso_name(r->prof, r->sites[i].dso);
}

/* ------------------------------------------------------------ entries */

static int str_cmp_null_last(const char *a, const char *b)
{
	if (a == b) /* the same string (the profile's names are interned) */
		return 0;
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
		if (!a->pl->function != !b->pl->function)
			return a->pl->function ? -1 : 1;
		c = str_cmp_null_last(a->dso_name, b->dso_name);
		if (c)
			return c;
		if (!a->pl->function)
			return shown_ip(a) < shown_ip(b) ? -1 : shown_ip(a) > shown_ip(b);
		if (a->pl->function_start != b->pl->function_start)
			return a->pl->function_start < b->pl->function_start ? -1 : 1;
		return strcmp(a->pl->function, b->pl->function);
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
			c = str_cmp_null_last(a->s->pl->function, b->s->pl->function);
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
		if (!v[i]->loc || !v[i]->loc->chain)
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
	const struct ds_profile_sample *ps;
	size_t n = ds_profile_samples(r->prof, &ps), nlevels = 0;
	char *levels = NULL;

	if (!stamp)
		oom();
	for (size_t k = 0; k < n; k++) {
		const struct ds_profile_sample *p = &ps[k];

		if (p->attr != attr)
			continue;
		if (p->nlocs > nlevels) {
			nlevels = p->nlocs;
			levels = xrealloc(levels, nlevels, 1);
		}
		char dup = caller_levels(r, p, r->pl, levels);

		for (size_t i = 0; i < p->nlocs + p->leaf_in_callchain; i++) {
			size_t id = stack_site(r, p, i, levels, dup)->entry;

			if (stamp[id] != k + 1) {
				stamp[id] = k + 1;
				e[id].children += p->period;
			}
		}
	}
	free(levels);
	free(stamp);
}

/* What tells a site's row apart: for each sort key the numbers
 * identity_cmp() compares, so that two sites are one row exactly when
 * their keys are equal. */
struct ekey {
	uint64_t v[8];
	size_t n;
};

static void key_of(struct report *r, const struct site *s, struct ekey *k)
{
	const struct opts *o = r->o;
	uint64_t dso = s->dso == SIZE_MAX ? UINT64_MAX : r->dso_name_id[s->dso];

	k->n = 0;
	for (int i = 0; i < o->nkeys; i++) {
		switch (o->keys[i]) {
		case KEY_COMM:
			k->v[k->n++] = s->comm ? names_id(&r->names, s->comm)
					       : (1ull << 63) | (uint32_t)s->pid;
			break;
		case KEY_DSO:
			k->v[k->n++] = dso;
			break;
		case KEY_SYM:
			k->v[k->n++] = dso;
			if (s->pl->function) {
				k->v[k->n++] = s->pl->function_start;
				/* One name, one string: the profile interns them. */
				k->v[k->n++] = (uintptr_t)s->pl->function;
			} else {
				k->v[k->n++] = shown_ip(s);
				k->v[k->n++] = 0;
			}
			break;
		case KEY_SRCLINE:
			k->v[k->n++] = s->loc->srcline_id;
			break;
		case NKEYS:
			break;
		}
	}
}

static uint64_t key_hash(const struct ekey *k)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < k->n; i++) {
		h ^= k->v[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdull;
	}
	return h ^ (h >> 31);
}

/* The rows of one event, in perf's order: sites made rows by hashing
 * their keys, each row's sites gathered (a counting sort by row) for its
 * inline chains. */
static struct entry *entries_of(struct report *r, unsigned attr, size_t *n_out)
{
	struct site **v = xrealloc(NULL, r->nsites ? r->nsites : 1, sizeof(*v));
	struct entry *e = xrealloc(NULL, r->nsites ? r->nsites : 1, sizeof(*e));
	struct ekey *keys = xrealloc(NULL, r->nsites ? r->nsites : 1, sizeof(*keys));
	size_t n = 0, ne = 0, cap = 16;
	uint32_t *slots;

	for (size_t i = 0; i < r->nsites; i++)
		if (r->sites[i].attr == attr && (r->children_on || !r->sites[i].caller))
			v[n++] = &r->sites[i];
	while (cap < 2 * n)
		cap *= 2;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		oom();
	for (size_t i = 0; i < n; i++) {
		struct ekey k;
		size_t h;

		key_of(r, v[i], &k);
		for (h = key_hash(&k) & (cap - 1); slots[h]; h = (h + 1) & (cap - 1)) {
			const struct ekey *o = &keys[slots[h] - 1];

			if (o->n == k.n && !memcmp(o->v, k.v, k.n * sizeof(k.v[0])))
				break;
		}
		if (!slots[h]) {
			keys[ne] = k;
			e[ne] = (struct entry){ .s = v[i] };
			slots[h] = (uint32_t)++ne;
		}
		v[i]->entry = slots[h] - 1;
		e[v[i]->entry].samples += v[i]->samples;
		e[v[i]->entry].period += v[i]->period;
	}
	free(slots);
	free(keys);
	if (r->o->inlines) {
		size_t *at = calloc(ne + 1, sizeof(*at));
		struct site **by = xrealloc(NULL, n ? n : 1, sizeof(*by));

		if (!at)
			oom();
		for (size_t i = 0; i < n; i++)
			at[v[i]->entry + 1]++;
		for (size_t i = 0; i < ne; i++)
			at[i + 1] += at[i];
		for (size_t i = 0; i < n; i++)
			by[at[v[i]->entry]++] = v[i];
		for (size_t i = ne; i-- > 0;)
			at[i + 1] = at[i];
		at[0] = 0;
		for (size_t i = 0; i < ne; i++)
			entry_chains(&e[i], by + at[i], at[i + 1] - at[i]);
		free(by);
		free(at);
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
	if (s->pl->function)
		return s->pl->function;
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

		unresolved |= !s->pl->function;
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

/* --percent-limit: perf compares the row's share as a float. */
static bool row_shown(const struct report *r, const struct entry *e, uint64_t total)
{
	uint64_t period = r->children_on ? e->children : e->period;

	return !r->o->percent_limit || (float)share(period, total) >= r->o->percent_limit;
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

		if (!row_shown(r, &e[i], t->period))
			continue;
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
		if (r->graph)
			callgraph_print(r->graph, s->entry,
					r->children_on ? e[i].children : e[i].period, t->period,
					o->keys[0] == KEY_SYM);
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
		cli_json_string(s->pl->function);
		if (!s->pl->function)
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
	if (r->graph)
		callgraph_json(r->graph, s->entry, total);
	putchar('}');
}

/* ---------------------------------------------------------------- run */

static void report_free(struct report *r)
{
	const struct ds_profile_loc *pl;
	size_t n = ds_profile_locs(r->prof, &pl);

	for (size_t i = 0; r->locs && i < n; i++) {
		free(r->locs[i].srcline);
		chain_free(r->locs[i].chain);
	}
	free(r->locs);
	free(r->names.v);
	free(r->dso_name_id);
	free(r->sites);
	free(r->slots);
	free(r->ev);
}

static void warn_verbose(void *user, enum ds_log_level level, const char *msg)
{
	(void)user;
	(void)level;
	cli_error("%s", msg);
}

/* The call graph's rows (entries_of()'s indexes, before its sort) of a
 * stack: its own, or that of element i of perf's callchain, the sampled
 * address again (i 0) and the callers (the stack's own sites, found). */
struct graph_rows {
	struct report *r;
	unsigned attr;
	const struct ds_profile_sample *ps;
	size_t k; /* whose levels are in levels */
	char *levels, dup;
	size_t nlevels;
};

static size_t graph_row(void *user, size_t k, size_t i, bool own)
{
	struct graph_rows *g = user;
	const struct ds_profile_sample *p = &g->ps[k];

	if (p->attr != g->attr)
		return SIZE_MAX;
	if (own)
		return stack_site(g->r, p, 0, NULL, 0)->entry;
	if (g->k != k) {
		if (p->nlocs > g->nlevels) {
			g->nlevels = p->nlocs;
			g->levels = xrealloc(g->levels, g->nlevels, 1);
		}
		g->dup = caller_levels(g->r, p, g->r->pl, g->levels);
		g->k = k;
	}
	/* The chain's first entry: its own caller entry when the callchain
	 * held the sampled address too (the profile left it out), else the
	 * sample's own row. */
	return stack_site(g->r, p, i ? i : p->leaf_in_callchain ? p->nlocs : 0, g->levels, g->dup)
		->entry;
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
		if (r->graph_opts.mode != CG_NONE && r->any_callchain) {
			struct graph_rows g = { .r = r, .attr = a, .k = SIZE_MAX };

			ds_profile_samples(r->prof, &g.ps);
			r->graph = callgraph_new(r->prof, &r->graph_opts, r->children_on, n,
						 graph_row, &g);
			free(g.levels);
		}
		if (o->json) {
			printf("%s{\"attr\":%u,\"event\":", first ? "" : ",", a);
			cli_json_string(ds_perf_data_event_name(pd, a));
			printf(",\"samples\":%" PRIu64 ",\"event_count\":%" PRIu64 ",\"entries\":[",
			       r->ev[a].samples, r->ev[a].period);
			for (size_t i = 0, any = 0; i < n && (!o->top || i < o->top); i++) {
				if (!row_shown(r, &e[i], r->ev[a].period))
					continue;
				if (any++)
					putchar(',');
				json_entry(r, &e[i], r->ev[a].period);
			}
			printf("]}");
		} else {
			/* perf ends each event's table with a blank line more
			 * when another follows */
			if (!first)
				putchar('\n');
			print_table(r, ds_perf_data_event_name(pd, a), a, e, n);
		}
		first = false;
		callgraph_free(r->graph);
		r->graph = NULL;
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
	struct cli_recording rec;
	struct ds_perf_info info;
	int status = 1;
	/* Only srcline and the inline chains come from DWARF; without them a
	 * row is named from ELF symbols, as perf names it, and the DWARF of
	 * libc, ld.so and the rest is never read. */
	DS_OPTS(ds_profile_opts, po,
		.flags = (has_key(o, KEY_SRCLINE) || o->inlines ? DS_PROFILE_LINES : 0) |
			 (o->children || o->graph.mode != CG_NONE ? DS_PROFILE_CALLCHAINS
								  : 0),
		.warn = o->verbose ? warn_verbose : NULL);

	if (cli_recording_open(&rec, o->path, common, o->no_fetch, &po) ||
	    cli_recording_prefetch(&rec, o->progress, o->verbose))
		goto out;
	ds_perf_data_info(rec.pd, &info);
	r.prof = rec.prof;
	r.dsos = rec.dsos;
	r.ndsos = rec.ndsos;
	locs_of(&r);
	collect(&r);
	/* perf's default: a Children column when the samples have callchains. */
	r.children_on = o->children > 0 || (o->children < 0 && r.any_callchain);
	/* perf's order: caller with children, unless -g says; -G: caller. */
	r.graph_opts = o->graph;
	if (o->inverted || r.graph_opts.order < 0)
		r.graph_opts.order = o->inverted || r.children_on;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	output(&r, &info, rec.pd);
	status = fflush(stdout) ? 1 : 0;
out:
	report_free(&r);
	cli_recording_close(&rec); /* the profile too */
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
	struct opts o = {
		.keys = { KEY_DSO, KEY_SYM }, .nkeys = 2, .children = -1, .graph = CG_OPTS_DEFAULT
	};
	struct folded_opts fo = { 0 };
	int progress = -1;
	const char *pprof = NULL; /* --pprof FILE: tools/pprof.c writes it instead */

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int r = cli_common_option(&common, argc, argv, &i, report_help);

		if (r == 0)
			r = folded_option(&fo, argc, argv, &i, true);
		if (r < 0)
			return r == CLI_HELP ? 0 : 2;
		if (r > 0 || cli_recording_option(argc, argv, &i, &o.path, &o.no_fetch, &progress))
			continue;
		if ((!strcmp(a, "-s") || !strcmp(a, "--sort")) && i + 1 < argc) {
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
		} else if (!strcmp(a, "-g") || !strcmp(a, "--call-graph")) {
			/* perf's argument is optional: the next word, when it is one */
			if (i + 1 < argc && !cg_parse(&o.graph, argv[i + 1], true))
				i++;
			else
				cg_parse(&o.graph, NULL, false);
		} else if (!strncmp(a, "--call-graph=", 13) || (!strncmp(a, "-g", 2) && a[2])) {
			if (cg_parse(&o.graph, a[1] == '-' ? a + 13 : a + 2, false))
				return 2;
		} else if (!strcmp(a, "-G") || !strcmp(a, "--inverted")) {
			o.inverted = true;
		} else if ((!strcmp(a, "--percent-limit") && i + 1 < argc) ||
			   !strncmp(a, "--percent-limit=", 16)) {
			const char *v = a[15] == '=' ? a + 16 : argv[++i];
			char *end;
			float f = strtof(v, &end);

			if (end == v || *end || !(f >= 0)) {
				cli_error("report: --percent-limit needs a percentage, not '%s'",
					  v);
				return 2;
			}
			/* perf: the rows' limit, and the graphs' threshold too */
			o.percent_limit = f;
			o.graph.min_percent = f;
		} else if (!strcmp(a, "--inline")) {
			o.inlines = true;
		} else if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--pprof") && i + 1 < argc) {
			pprof = argv[++i];
		} else if (!strncmp(a, "--pprof=", 8)) {
			pprof = a + 8;
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
	if (fo.on)
		return folded_report(&fo, o.path, &common, o.no_fetch, o.progress);
	if (pprof)
		return pprof_report(pprof, o.path, &common, o.no_fetch, o.progress);
	return run(&o, &common);
}
