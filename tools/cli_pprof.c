/* dsostore report --pprof: a recording as pprof's profile.proto (the format
 * go tool pprof, Pyroscope, Parca and Grafana read), gzipped, encoded by
 * protobuf-c from proto/profile.proto.
 *
 * What goes where (docs/pprof.md says it for readers of the file):
 *  - sample_type: two values per event that has samples, the number of
 *    samples ("samples"/"count") and the sum of their periods (the event's
 *    name; "nanoseconds" for cpu-clock and task-clock, else "count");
 *  - one Sample per stack of the profile (event, thread, name and
 *    callchain: ds_profile_samples()), leaf first, labelled pid, tid and
 *    thread (the thread's name);
 *  - one Location per location of the profile, its lines innermost first
 *    as both the profile and the format order them;
 *  - one Mapping per DSO with locations, with its build ID in hex. */
#define _GNU_SOURCE
#include "cli.h"
#include "profile.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Short names for protoc-c's (perftools.profiles.X is Perftools__Profiles__X). */
typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* The string table: strings borrowed from the profile, the session and the
 * recording (all outlive the encoding), and a few of our own (owned). */
struct strtab {
	char **v;
	size_t n, cap;
	uint32_t *slots; /* index + 1; 0: empty */
	size_t nslots;
	char **owned;
	size_t nowned;
};

struct fkey {
	int64_t name, file;
};

struct func {
	pb_function pb;
	struct fkey k;
};

struct pprof {
	const struct ds_profile *prof;
	const struct ds_perf_dso *dsos;
	size_t ndsos;
	struct strtab st;
	struct func *funcs;
	size_t nfuncs, funccap;
	uint32_t *fslots; /* index + 1 */
	size_t nfslots;
	bool failed; /* out of memory */
};

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static void *grow(struct pprof *pp, void *v, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *nv;

	if (need <= *cap)
		return v;
	while (ncap < need)
		ncap *= 2;
	nv = reallocarray(v, ncap, size);
	if (!nv) {
		pp->failed = true;
		return NULL;
	}
	*cap = ncap;
	return nv;
}

/* The two hash tables (strings, functions) hold index + 1 of their items,
 * 0 for empty, by linear probing; a table is made again at twice its size
 * before it is half full.  hash(pp, i, mask): item i's first slot. */
static bool rehash(struct pprof *pp, uint32_t **slots, size_t *nslots, size_t nitems,
		   size_t (*hash)(const struct pprof *pp, size_t i, size_t mask))
{
	size_t n = *nslots ? *nslots * 2 : 1024;
	uint32_t *v = calloc(n, sizeof(*v));

	if (!v) {
		pp->failed = true;
		return false;
	}
	for (size_t i = 0; i < nitems; i++) {
		size_t h = hash(pp, i, n - 1);

		while (v[h])
			h = (h + 1) & (n - 1);
		v[h] = (uint32_t)(i + 1);
	}
	free(*slots);
	*slots = v;
	*nslots = n;
	return true;
}

static size_t str_hash(const struct pprof *pp, size_t i, size_t mask)
{
	const char *s = pp->st.v[i];

	return hash_bytes(s, strlen(s)) & mask;
}

/* The index of s (NULL: ""), interned; s must outlive the encoding.  0 on
 * failure (pp->failed), which is "" and harmless until the end. */
static int64_t str_id(struct pprof *pp, const char *s)
{
	struct strtab *st = &pp->st;
	size_t len, h;
	char **v;

	if (!s || !*s || pp->failed)
		return 0;
	if ((st->n + 1) * 2 > st->nslots && !rehash(pp, &st->slots, &st->nslots, st->n, str_hash))
		return 0;
	len = strlen(s);
	for (h = hash_bytes(s, len) & (st->nslots - 1); st->slots[h];
	     h = (h + 1) & (st->nslots - 1)) {
		const char *t = st->v[st->slots[h] - 1];

		if (!strcmp(t, s))
			return st->slots[h] - 1;
	}
	if (st->n >= UINT32_MAX - 1) {
		pp->failed = true;
		return 0;
	}
	if (!(v = grow(pp, st->v, &st->cap, st->n + 1, sizeof(*v))))
		return 0;
	st->v = v;
	st->v[st->n] = (char *)s; /* packing only reads it */
	st->slots[h] = (uint32_t)(st->n + 1);
	return (int64_t)st->n++;
}

/* str_id() of a string of our own: kept, and freed with the table. */
static int64_t str_own(struct pprof *pp, char *s)
{
	struct strtab *st = &pp->st;
	char **o;

	if (!s || !(o = reallocarray(st->owned, st->nowned + 1, sizeof(*o)))) {
		free(s);
		pp->failed = true;
		return 0;
	}
	st->owned = o;
	st->owned[st->nowned++] = s;
	return str_id(pp, s);
}

static int64_t str_fmt(struct pprof *pp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int64_t str_fmt(struct pprof *pp, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return str_own(pp, n < 0 ? NULL : s);
}

static size_t fkey_hash(const struct fkey *k, size_t mask)
{
	uint64_t h = (uint64_t)k->name * 0x9e3779b97f4a7c15ull ^ (uint64_t)k->file;

	return (size_t)((h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull >> 17) & mask;
}

static size_t func_hash(const struct pprof *pp, size_t i, size_t mask)
{
	return fkey_hash(&pp->funcs[i].k, mask);
}

/* The id of the function named name in file (NULL: unknown); 0 on
 * failure.  Without the mangled names (the profile has one name per
 * frame), system_name is name; the first line is not known either. */
static uint64_t func_id(struct pprof *pp, const char *name, const char *file)
{
	struct fkey k = { str_id(pp, name ? name : "??"), str_id(pp, file) };
	struct func *f;
	size_t h;

	if (pp->failed || ((pp->nfuncs + 1) * 2 > pp->nfslots &&
			   !rehash(pp, &pp->fslots, &pp->nfslots, pp->nfuncs, func_hash)))
		return 0;
	for (h = fkey_hash(&k, pp->nfslots - 1); pp->fslots[h]; h = (h + 1) & (pp->nfslots - 1)) {
		const struct fkey *o = &pp->funcs[pp->fslots[h] - 1].k;

		if (o->name == k.name && o->file == k.file)
			return pp->fslots[h];
	}
	if (!(f = grow(pp, pp->funcs, &pp->funccap, pp->nfuncs + 1, sizeof(*f))))
		return 0;
	pp->funcs = f;
	f = &pp->funcs[pp->nfuncs];
	perftools__profiles__function__init(&f->pb);
	f->pb.id = pp->nfuncs + 1;
	f->pb.name = f->pb.system_name = k.name;
	f->pb.filename = k.file;
	f->k = k;
	pp->fslots[h] = (uint32_t)(pp->nfuncs + 1);
	return ++pp->nfuncs;
}

/* perf's clocks count nanoseconds: the period of cpu-clock and task-clock
 * (whatever the modifiers, "cpu-clock:u") is a time. */
static const char *event_unit(const char *event)
{
	size_t n = event ? strcspn(event, ":") : 0;

	if ((n == 9 && !strncmp(event, "cpu-clock", 9)) ||
	    (n == 10 && !strncmp(event, "task-clock", 10)))
		return "nanoseconds";
	return "count";
}

struct times {
	uint64_t first, last;
	bool any;
};

static int64_t clamp64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* What the file's mappings say, per DSO of the session. */
struct mapinfo {
	uint64_t id; /* 0: no location in it */
	uint64_t max_ip;
	bool named, lines;
	bool whole; /* at virtual addresses in a mapping of everything */
};

/* Everything the encoding points to; freed in one place. */
struct built {
	pb_profile prof;
	pb_value_type *vt, **vtp, period_type;
	pb_sample *smp, **smpp;
	uint64_t *locids;
	int64_t *values;
	pb_label *labels, **labelp;
	pb_mapping *maps, **mapp;
	pb_location *locs, **locp;
	pb_line *lines, **linep;
	pb_function **funcp;
	int64_t comments[4];
	struct mapinfo *mi;
	int *slot; /* per attr: its first value, or -1 */
};

static void built_free(struct built *b)
{
	free(b->vt);
	free(b->vtp);
	free(b->smp);
	free(b->smpp);
	free(b->locids);
	free(b->values);
	free(b->labels);
	free(b->labelp);
	free(b->maps);
	free(b->mapp);
	free(b->locs);
	free(b->locp);
	free(b->lines);
	free(b->linep);
	free(b->funcp);
	free(b->mi);
	free(b->slot);
}

static void pprof_free(struct pprof *pp)
{
	for (size_t i = 0; i < pp->st.nowned; i++)
		free(pp->st.owned[i]);
	free(pp->st.owned);
	free(pp->st.v);
	free(pp->st.slots);
	free(pp->funcs);
	free(pp->fslots);
}

/* Where a location of DSO mi is in its mapping.  A DSO whose addresses
 * were named has every location at its virtual address in the ELF (what
 * the symbol tables and DWARF use), in a mapping of the whole address
 * space at 0: pprof takes that as "already adjusted" (base 0), so that
 * its own symbolization or disassembly of the file, if asked, looks up
 * the same addresses.  The kernel is at its addresses, too.  Other DSOs
 * (nothing read from them: their virtual addresses are not known) have
 * their locations at their file offsets, in a mapping [0, last + 1) of
 * file offset 0: address x is file offset x, as the format defines it. */
static uint64_t loc_address(const struct ds_profile_loc *l, const struct mapinfo *mi)
{
	return mi && mi->whole && l->vaddr ? l->vaddr : l->ip;
}

/* Like a shared object (pprof's own test: ".so" at the end, or ".so."
 * or ".so_" and a digit). */
static bool like_library(const char *path)
{
	for (const char *p = strstr(path, ".so"); p; p = strstr(p + 1, ".so"))
		if (!p[3] || ((p[3] == '.' || p[3] == '_') && p[4] >= '0' && p[4] <= '9'))
			return true;
	return false;
}

/* pprof takes the first mapping for the program ("File:" of its reports):
 * the executable with the most samples, if any is among the DSOs. */
static size_t main_binary(const struct pprof *pp, const struct built *b)
{
	size_t best = SIZE_MAX;

	for (size_t di = 0; di < pp->ndsos; di++) {
		const struct ds_perf_dso *d = &pp->dsos[di];

		if (!b->mi[di].id || d->kernel || d->path[0] != '/' || like_library(d->path))
			continue;
		if (best == SIZE_MAX || d->samples > pp->dsos[best].samples)
			best = di;
	}
	return best;
}

static void build_mappings(struct pprof *pp, struct built *b, const struct ds_profile_loc *locs,
			   size_t nlocs, size_t *nmaps)
{
	size_t n = 0, first;

	for (size_t i = 0; i < nlocs; i++) {
		const struct ds_profile_loc *l = &locs[i];
		struct mapinfo *mi;

		if (l->dso >= pp->ndsos)
			continue;
		mi = &b->mi[l->dso];
		mi->id = 1; /* numbered below */
		if (l->ip > mi->max_ip)
			mi->max_ip = l->ip;
		if (l->function || l->nframes)
			mi->named = true;
		if (l->nframes)
			mi->lines = true;
	}
	first = main_binary(pp, b);
	if (first != SIZE_MAX)
		b->mi[first].id = ++n;
	for (size_t di = 0; di < pp->ndsos; di++)
		if (b->mi[di].id && di != first)
			b->mi[di].id = ++n;
	*nmaps = n;
	if (!n)
		return;
	b->maps = calloc(n, sizeof(*b->maps));
	b->mapp = calloc(n, sizeof(*b->mapp));
	if (!b->maps || !b->mapp) {
		pp->failed = true;
		return;
	}
	for (size_t di = 0; di < pp->ndsos; di++) {
		const struct ds_perf_dso *d = &pp->dsos[di];
		struct mapinfo *mi = &b->mi[di];
		pb_mapping *m;
		char hex[2 * DS_BUILD_ID_MAX + 1];

		if (!mi->id)
			continue;
		m = &b->maps[mi->id - 1];
		b->mapp[mi->id - 1] = m;
		perftools__profiles__mapping__init(m);
		m->id = mi->id;
		mi->whole = mi->named || d->kernel;
		m->memory_limit = mi->whole ? UINT64_MAX : mi->max_ip + 1;
		m->filename = str_id(pp, d->path);
		if (d->build_id.size && ds_build_id_format(&d->build_id, hex, sizeof(hex)) > 0)
			m->build_id = str_fmt(pp, "%s", hex);
		m->has_functions = mi->named;
		m->has_filenames = m->has_line_numbers = m->has_inline_frames = mi->lines;
	}
}

static void build_locations(struct pprof *pp, struct built *b, const struct ds_profile_loc *locs,
			    size_t nlocs)
{
	size_t nlines = 0, li = 0;

	for (size_t i = 0; i < nlocs; i++)
		nlines += locs[i].nframes ? locs[i].nframes : locs[i].function ? 1 : 0;
	b->locs = calloc(nlocs ? nlocs : 1, sizeof(*b->locs));
	b->locp = calloc(nlocs ? nlocs : 1, sizeof(*b->locp));
	b->lines = calloc(nlines ? nlines : 1, sizeof(*b->lines));
	b->linep = calloc(nlines ? nlines : 1, sizeof(*b->linep));
	if (!b->locs || !b->locp || !b->lines || !b->linep) {
		pp->failed = true;
		return;
	}
	for (size_t i = 0; i < nlocs && !pp->failed; i++) {
		const struct ds_profile_loc *l = &locs[i];
		const struct mapinfo *mi = l->dso < pp->ndsos ? &b->mi[l->dso] : NULL;
		pb_location *loc = &b->locs[i];

		b->locp[i] = loc;
		perftools__profiles__location__init(loc);
		loc->id = i + 1;
		loc->mapping_id = mi ? mi->id : 0;
		loc->address = loc_address(l, mi);
		loc->line = &b->linep[li];
		/* Innermost first; the last frame is the function's own, named
		 * as the profile names the location (its ELF symbol). */
		for (size_t f = 0; f < l->nframes; f++) {
			const struct ds_frame *fr = &l->frames[f];
			const char *name = fr->function;
			pb_line *ln = &b->lines[li];

			if (f + 1 == l->nframes && l->function)
				name = l->function;
			perftools__profiles__line__init(ln);
			ln->function_id = func_id(pp, name, fr->file);
			ln->line = fr->line;
			ln->column = fr->column;
			b->linep[li++] = ln;
		}
		if (!l->nframes && l->function) {
			pb_line *ln = &b->lines[li];

			perftools__profiles__line__init(ln);
			ln->function_id = func_id(pp, l->function, NULL);
			b->linep[li++] = ln;
		}
		loc->n_line = (size_t)(&b->linep[li] - loc->line);
	}
}

/* The labels of one sample: where they go, how many. */
static size_t sample_labels(struct pprof *pp, pb_label *lab, const struct ds_profile_sample *s,
			    const int64_t keys[3])
{
	size_t n = 0;

	if (s->pid >= 0) {
		perftools__profiles__label__init(&lab[n]);
		lab[n].key = keys[0];
		lab[n++].num = s->pid;
	}
	if (s->tid >= 0) {
		perftools__profiles__label__init(&lab[n]);
		lab[n].key = keys[1];
		lab[n++].num = s->tid;
	}
	if (s->comm && *s->comm) {
		perftools__profiles__label__init(&lab[n]);
		lab[n].key = keys[2];
		lab[n++].str = str_id(pp, s->comm);
	}
	return n;
}

static void build_samples(struct pprof *pp, struct built *b, const struct ds_profile_sample *smp,
			  size_t nsmp, size_t nvalues)
{
	size_t nids = 0, li = 0, ii = 0;
	int64_t keys[3] = { str_id(pp, "pid"), str_id(pp, "tid"), str_id(pp, "thread") };

	for (size_t i = 0; i < nsmp; i++)
		nids += smp[i].nlocs;
	b->smp = calloc(nsmp ? nsmp : 1, sizeof(*b->smp));
	b->smpp = calloc(nsmp ? nsmp : 1, sizeof(*b->smpp));
	b->locids = calloc(nids ? nids : 1, sizeof(*b->locids));
	b->values = calloc(nsmp && nvalues ? nsmp * nvalues : 1, sizeof(*b->values));
	b->labels = calloc(nsmp ? nsmp * 3 : 1, sizeof(*b->labels));
	b->labelp = calloc(nsmp ? nsmp * 3 : 1, sizeof(*b->labelp));
	if (!b->smp || !b->smpp || !b->locids || !b->values || !b->labels || !b->labelp) {
		pp->failed = true;
		return;
	}
	for (size_t i = 0; i < nsmp; i++) {
		const struct ds_profile_sample *s = &smp[i];
		pb_sample *o = &b->smp[i];
		int slot = b->slot[s->attr];
		size_t nl;

		b->smpp[i] = o;
		perftools__profiles__sample__init(o);
		o->location_id = &b->locids[ii];
		for (size_t j = 0; j < s->nlocs; j++)
			b->locids[ii++] = (uint64_t)s->locs[j] + 1;
		o->n_location_id = (size_t)(&b->locids[ii] - o->location_id);
		o->value = &b->values[i * nvalues];
		o->n_value = nvalues;
		o->value[slot] = clamp64(s->count);
		o->value[slot + 1] = clamp64(s->period);
		nl = sample_labels(pp, &b->labels[li], s, keys);
		o->label = &b->labelp[li];
		for (size_t j = 0; j < nl; j++)
			b->labelp[li + j] = &b->labels[li + j];
		o->n_label = nl;
		li += nl;
	}
}

/* The sample types: two per event with samples (every event, when none
 * has), in the order of the events.  One event: "samples" and the event's
 * name; more: each "EVENT-samples" and "EVENT", so that pprof's
 * -sample_index can tell them apart.  Returns how many values a sample
 * has. */
static size_t build_types(struct pprof *pp, struct built *b, const struct ds_perf_data *pd,
			  const struct ds_profile_sample *smp, size_t nsmp, unsigned nattrs,
			  uint64_t *first_period, uint64_t *first_count)
{
	size_t nev = 0, nvt;
	bool *has = calloc(nattrs ? nattrs : 1, sizeof(*has));
	uint64_t period = 0, count = 0;
	unsigned first = UINT_MAX;

	b->slot = malloc((nattrs ? nattrs : 1) * sizeof(*b->slot));
	if (!has || !b->slot) {
		free(has);
		pp->failed = true;
		return 0;
	}
	for (size_t i = 0; i < nsmp; i++)
		has[smp[i].attr] = true;
	for (unsigned a = 0; a < nattrs; a++)
		nev += has[a];
	if (!nev) /* no samples: typed after every event still */
		for (unsigned a = 0; a < nattrs; a++, nev++)
			has[a] = true;
	nvt = 2 * nev;
	b->vt = calloc(nvt ? nvt : 1, sizeof(*b->vt));
	b->vtp = calloc(nvt ? nvt : 1, sizeof(*b->vtp));
	if (!b->vt || !b->vtp) {
		free(has);
		pp->failed = true;
		return 0;
	}
	for (unsigned a = 0, v = 0; a < nattrs; a++) {
		const char *name = ds_perf_data_event_name(pd, a);
		int64_t ev;

		b->slot[a] = -1;
		if (!has[a])
			continue;
		if (first == UINT_MAX)
			first = a;
		b->slot[a] = (int)v;
		ev = name ? str_id(pp, name) : str_fmt(pp, "event%u", a);
		perftools__profiles__value_type__init(&b->vt[v]);
		b->vt[v].type =
		    nev == 1 ? str_id(pp, "samples") : str_fmt(pp, "%s-samples", pp->st.v[ev]);
		b->vt[v].unit = str_id(pp, "count");
		perftools__profiles__value_type__init(&b->vt[v + 1]);
		b->vt[v + 1].type = ev;
		b->vt[v + 1].unit = str_id(pp, event_unit(name));
		b->vtp[v] = &b->vt[v];
		b->vtp[v + 1] = &b->vt[v + 1];
		v += 2;
	}
	for (size_t i = 0; i < nsmp; i++)
		if (smp[i].attr == first) {
			period += smp[i].period;
			count += smp[i].count;
		}
	*first_period = period;
	*first_count = count;
	free(has);
	return nvt;
}

/* ProtobufCBuffer appending to a gzip stream. */
struct gzbuf {
	ProtobufCBuffer base; /* first: the buffer protobuf-c calls is this */
	gzFile gz;
	int err; /* the first write's error, negative errno */
};

static void gz_append(ProtobufCBuffer *buf, size_t len, const uint8_t *data)
{
	struct gzbuf *g = (struct gzbuf *)buf;

	while (len && !g->err) {
		unsigned n = len > (1u << 30) ? 1u << 30 : (unsigned)len;

		errno = 0;
		if (gzwrite(g->gz, data, n) != (int)n)
			g->err = errno ? -errno : -EIO;
		data += n;
		len -= n;
	}
}

/* Pack the profile, gzipped, into fd (taken: closed either way).  0 or a
 * negative errno. */
static int write_gz(int fd, const pb_profile *prof)
{
	struct gzbuf g = { .base = { gz_append } };
	int rc;

	g.gz = gzdopen(fd, "wb");
	if (!g.gz) {
		close(fd);
		return -ENOMEM;
	}
	protobuf_c_message_pack_to_buffer(&prof->base, &g.base);
	errno = 0;
	rc = gzclose(g.gz); /* the last block, and close(): errors there too */
	if (g.err)
		return g.err;
	if (rc != Z_OK)
		return errno ? -errno : -EIO;
	return 0;
}

static int encode(struct cli_output *out, const char *data_path, const struct ds_perf_data *pd,
		  struct ds_perf_session *s, const struct ds_profile *p)
{
	struct pprof pp = { .prof = p };
	struct built b = { 0 };
	const struct ds_profile_sample *smp;
	const struct ds_profile_loc *locs;
	size_t nsmp = ds_profile_samples(p, &smp), nlocs = ds_profile_locs(p, &locs);
	size_t nvalues, nmaps = 0, nc = 0;
	uint64_t fperiod = 0, fcount = 0;
	struct ds_perf_info info;
	struct times t = { 0 };
	struct stat sb;
	unsigned nattrs = 0;
	int rc;

	ds_perf_data_info(pd, &info);
	pp.ndsos = ds_perf_session_dsos(s, &pp.dsos);
	for (size_t i = 0; i < nsmp; i++)
		if (smp[i].attr >= nattrs)
			nattrs = smp[i].attr + 1;
	if (info.nr_attrs > nattrs)
		nattrs = info.nr_attrs;
	/* perf.data has samples' times, no wall clock: the profile began about
	 * the samples' span before the file was last written. */
	t.any = ds_profile_times(p, &t.first, &t.last);

	/* string_table[0] is "" (str_id() answers 0 for it without a look). */
	if ((pp.st.v = grow(&pp, NULL, &pp.st.cap, 1, sizeof(*pp.st.v))))
		pp.st.v[pp.st.n++] = "";
	b.mi = calloc(pp.ndsos ? pp.ndsos : 1, sizeof(*b.mi));
	if (!b.mi)
		pp.failed = true;

	perftools__profiles__profile__init(&b.prof);
	if (!pp.failed)
		nvalues = build_types(&pp, &b, pd, smp, nsmp, nattrs, &fperiod, &fcount);
	else
		nvalues = 0;
	if (!pp.failed)
		build_mappings(&pp, &b, locs, nlocs, &nmaps);
	if (!pp.failed)
		build_locations(&pp, &b, locs, nlocs);
	if (!pp.failed)
		build_samples(&pp, &b, smp, nsmp, nvalues);

	b.prof.n_sample_type = nvalues;
	b.prof.sample_type = b.vtp;
	if (nvalues) {
		b.period_type = b.vt[1];
		b.prof.period_type = &b.period_type;
		b.prof.default_sample_type = b.vt[1].type;
		if (fcount)
			b.prof.period = clamp64((fperiod + fcount / 2) / fcount);
	}
	if (t.any) {
		b.prof.duration_nanos = clamp64(t.last - t.first);
		if (!stat(data_path, &sb)) {
			int64_t end = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;

			if (end > b.prof.duration_nanos)
				b.prof.time_nanos = end - b.prof.duration_nanos;
		}
	}
	if (info.cmdline)
		b.comments[nc++] = str_id(&pp, info.cmdline);
	if (info.hostname || info.osrelease)
		b.comments[nc++] =
		    str_fmt(&pp, "host %s, kernel %s", info.hostname ? info.hostname : "?",
			    info.osrelease ? info.osrelease : "?");
	if (info.perf_version)
		b.comments[nc++] = str_fmt(&pp, "perf %s", info.perf_version);
	b.comments[nc++] = str_id(&pp, "written by dsostore report --pprof");
	b.prof.comment = b.comments;
	b.prof.n_comment = nc;

	b.prof.n_sample = nsmp;
	b.prof.sample = b.smpp;
	b.prof.n_mapping = nmaps;
	b.prof.mapping = b.mapp;
	b.prof.n_location = nlocs;
	b.prof.location = b.locp;
	b.funcp = calloc(pp.nfuncs ? pp.nfuncs : 1, sizeof(*b.funcp));
	if (!b.funcp)
		pp.failed = true;
	for (size_t i = 0; i < pp.nfuncs && b.funcp; i++)
		b.funcp[i] = &pp.funcs[i].pb;
	b.prof.n_function = pp.nfuncs;
	b.prof.function = b.funcp;
	b.prof.n_string_table = pp.st.n;
	b.prof.string_table = pp.st.v;

	if (pp.failed) {
		rc = -ENOMEM;
	} else {
		/* gzclose() closes the descriptor it is given: a copy of the
		 * output's, which cli_output_close() closes. */
		int fd = dup(fileno(out->f));

		rc = fd < 0 ? -errno : write_gz(fd, &b.prof);
	}
	if (rc)
		cli_error("%s: %s", out->name, ds_strerror(rc));
	built_free(&b);
	pprof_free(&pp);
	return rc ? 1 : 0;
}

int pprof_report(const char *out, const char *data_path, const char *note,
		 const struct cli_common *common, bool no_fetch, bool progress)
{
	DS_OPTS(ds_profile_opts, po, .flags = DS_PROFILE_LINES | DS_PROFILE_CALLCHAINS);
	struct cli_recording rec;
	struct cli_output o;
	int status;

	status = cli_output_open(&o, "report", "--pprof", out, &data_path, 1, note);
	if (status)
		return status;
	status = 1;
	if (!cli_recording_open(&rec, data_path, common, no_fetch, &po, 0) &&
	    !cli_recording_prefetch(&rec, progress, common->verbose))
		status = encode(&o, data_path, rec.pd, rec.s, rec.prof);
	cli_recording_close(&rec);
	return cli_output_close(&o, !status) || status;
}
