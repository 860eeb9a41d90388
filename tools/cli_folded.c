/* Collapsed stacks of a recording, as stackcollapse-perf.pl makes them of
 * `perf script`'s output with its default options, and the set of stacks
 * that report --folded writes and flamegraph draws.
 *
 * The rules (stackcollapse-perf.pl's, applied to what perf script would
 * print for the same recording; docs/flamegraphs.md says more):
 *  - a stack is the sample's callchain as perf script prints it, outermost
 *    caller first, under a root frame that is the thread's name (spaces
 *    made '_'; ":TID" when it has none, as perf names such a thread);
 *  - a frame is its function's name as perf names it (ELF symbol,
 *    demangled as perf 6.1 does it: libiberty with no options, so no
 *    parameters and no return type: the profile's names), without
 *    offset, tidied: ';' becomes ':', everything from
 *    the first '(' on goes (parameters; not "(anonymous namespace)", and
 *    not in a Go method name such as "net/http.(*Client).Do"), quotes go;
 *    for a thread whose name starts with "java", a leading 'L' goes from
 *    a name with a '/';
 *  - an address without a function is "[DSO]" (the DSO's base name), or
 *    "[unknown]" outside any map;
 *  - no inline frames: perf 6.1's perf script prints none in callchains;
 *  - one event: the first sample's unless --event names one;
 *  - the count is the number of samples, or (--count period) the sum of
 *    their periods, which is what stackcollapse-perf.pl adds up when perf
 *    script prints the period field, as its default output does. */
#define _GNU_SOURCE
#include "cli_folded.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ options */

static int parse_annotate(struct folded_opts *o, const char *list)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == 6 && !strncmp(p, "kernel", 6)) {
			o->ann_kernel = true;
		} else if (n == 3 && !strncmp(p, "dso", 3)) {
			o->ann_dso = true;
		} else {
			cli_error("--annotate: '%.*s' is neither kernel nor dso", (int)n, p);
			return CLI_BAD;
		}
		p += n + (p[n] == ',');
	}
	return 1;
}

const struct cli_opt folded_opts_stacks[] = {
	{ FOLDED_O_COUNT, 0, "count", "samples|period",
	  "what a stack's count adds up (default: samples)", 0 },
	{ FOLDED_O_COMM_PID, 0, "comm-pid", NULL, "the root frame is COMM-PID, not COMM", 0 },
	{ FOLDED_O_COMM_TID, 0, "comm-tid", NULL, "the root frame is COMM-PID/TID, not COMM", 0 },
	{ FOLDED_O_ANNOTATE, 0, "annotate", "LIST",
	  "kernel: \"_[k]\" after kernel functions; dso: every frame as DSO`FUNCTION "
	  "(comma-separated, both allowed)",
	  0 },
	{ FOLDED_O_EVENT, 0, "event", "NAME",
	  "the samples of this event (default: the first sample's event, as "
	  "stackcollapse-perf.pl)",
	  0 },
	{ 0 },
};

int folded_option(struct folded_opts *o, int id, const char *v)
{
	static const char *const names[] = { "--count", "--comm-pid", "--comm-tid", "--annotate",
					     "--event" };
	char *end;
	long n;

	if (id >= FOLDED_O_COUNT && id <= FOLDED_O_EVENT && !o->given)
		o->given = names[id - FOLDED_O_COUNT];
	switch (id) {
	case FOLDED_O_COUNT:
		if (strcmp(v, "samples") && strcmp(v, "period")) {
			cli_error("--count: samples or period, not '%s'", v);
			return CLI_BAD;
		}
		o->period = !strcmp(v, "period");
		return 1;
	case FOLDED_O_COMM_PID:
	case FOLDED_O_COMM_TID:
		*(id == FOLDED_O_COMM_PID ? &o->comm_pid : &o->comm_tid) = true;
		return 1;
	case FOLDED_O_ANNOTATE:
		return parse_annotate(o, v);
	case FOLDED_O_EVENT:
		o->event = v;
		return 1;
	case FOLDED_O_OUTPUT:
		o->out = v;
		return 1;
	case FOLDED_O_FOLDED:
		o->on = true;
		return 1;
	case FOLDED_O_MAX_STACK:
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno || end == v || *end || n < 0 || n > INT_MAX) {
			cli_error("--max-stack needs a number of entries, not '%s'", v);
			return CLI_BAD;
		}
		o->max_stack_set = true;
		o->max_stack = (size_t)n;
		return 1;
	default:
		return 0;
	}
}

/* ------------------------------------------------------- the stack set */

void folded_init(struct folded *f)
{
	*f = (struct folded){ .unit = "samples" };
}

void folded_free(struct folded *f)
{
	for (size_t i = 0; i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	free(f->name_len);
	free(f->name_slots);
	free(f->v);
	free(f->pool);
	free(f->slots);
	free(f->event);
	folded_init(f);
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h ^ (h >> 31);
}

static int grow(void *pp, size_t *cap, size_t need, size_t size, size_t first)
{
	void **p = pp;
	size_t n = *cap ? *cap : first;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = reallocarray(*p, n, size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static int name_rehash(struct folded *f)
{
	size_t n = f->nname_slots ? 2 * f->nname_slots : 1024;
	size_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < f->nnames; i++) {
		size_t h = hash_bytes(f->names[i], f->name_len[i]) & (n - 1);

		while (s[h])
			h = (h + 1) & (n - 1);
		s[h] = i + 1;
	}
	free(f->name_slots);
	f->name_slots = s;
	f->nname_slots = n;
	return 0;
}

int64_t folded_name(struct folded *f, const char *s, size_t len)
{
	size_t h, cap = f->namecap;
	char *copy;

	if (len > UINT32_MAX || f->nnames >= UINT32_MAX) {
		errno = ENOMEM;
		return -1;
	}
	if (2 * (f->nnames + 1) > f->nname_slots && name_rehash(f))
		return -1;
	h = hash_bytes(s, len) & (f->nname_slots - 1);
	for (; f->name_slots[h]; h = (h + 1) & (f->nname_slots - 1)) {
		size_t id = f->name_slots[h] - 1;

		if (f->name_len[id] == len && !memcmp(f->names[id], s, len))
			return (int64_t)id;
	}
	if (grow(&f->names, &cap, f->nnames + 1, sizeof(*f->names), 256) ||
	    (cap = f->namecap, grow(&f->name_len, &cap, f->nnames + 1, sizeof(*f->name_len), 256)))
		goto oom;
	f->namecap = cap;
	copy = malloc(len + 1);
	if (!copy)
		goto oom;
	memcpy(copy, s, len);
	copy[len] = 0;
	f->names[f->nnames] = copy;
	f->name_len[f->nnames] = (uint32_t)len;
	f->name_slots[h] = ++f->nnames;
	return (int64_t)(f->nnames - 1);
oom:
	errno = ENOMEM;
	return -1;
}

static int stack_rehash(struct folded *f)
{
	size_t n = f->nslots ? 2 * f->nslots : 1024;
	size_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++) {
		size_t h = hash_bytes(f->pool + f->v[i].off, f->v[i].n * sizeof(uint32_t)) & (n - 1);

		while (s[h])
			h = (h + 1) & (n - 1);
		s[h] = i + 1;
	}
	free(f->slots);
	f->slots = s;
	f->nslots = n;
	return 0;
}

int folded_add(struct folded *f, const uint32_t *frames, uint32_t n, uint64_t count)
{
	size_t h, bytes = (size_t)n * sizeof(*frames);
	struct fstack *st;

	if (2 * (f->n + 1) > f->nslots && stack_rehash(f))
		return -ENOMEM;
	h = hash_bytes(frames, bytes) & (f->nslots - 1);
	for (; f->slots[h]; h = (h + 1) & (f->nslots - 1)) {
		st = &f->v[f->slots[h] - 1];
		if (st->n == n && !memcmp(f->pool + st->off, frames, bytes))
			goto add;
	}
	if (grow(&f->v, &f->cap, f->n + 1, sizeof(*f->v), 256) ||
	    grow(&f->pool, &f->poolcap, f->npool + n, sizeof(*f->pool), 4096))
		return -ENOMEM;
	memcpy(f->pool + f->npool, frames, bytes);
	f->v[f->n] = (struct fstack){ .off = f->npool, .n = n };
	f->npool += n;
	f->slots[h] = ++f->n;
	st = &f->v[f->n - 1];
add:
	/* A count past 2^64 would be a recording of 2^64 samples: saturate. */
	st->count = st->count + count < st->count ? UINT64_MAX : st->count + count;
	f->total = f->total + count < f->total ? UINT64_MAX : f->total + count;
	return 0;
}

static int stack_cmp(const void *x, const void *y, void *arg)
{
	const struct folded *f = arg;
	const struct fstack *a = &f->v[*(const size_t *)x], *b = &f->v[*(const size_t *)y];
	uint32_t n = a->n < b->n ? a->n : b->n;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t fa = f->pool[a->off + i], fb = f->pool[b->off + i];
		int c = fa == fb ? 0 : strcmp(f->names[fa], f->names[fb]);

		if (c)
			return c;
	}
	return a->n < b->n ? -1 : a->n > b->n;
}

/* The lines as strings, byte by byte (stackcollapse-perf.pl's order: a
 * frame's end is a ';', the stack's the end of the string). */
static int line_cmp(const void *x, const void *y, void *arg)
{
	const struct folded *f = arg;
	const struct fstack *a = &f->v[*(const size_t *)x], *b = &f->v[*(const size_t *)y];
	uint32_t ia = 0, ib = 0, ca = 0, cb = 0;

	for (;;) {
		int xa, xb;

		if (ia < a->n && ca == f->name_len[f->pool[a->off + ia]])
			xa = ++ia < a->n ? ';' : -1, ca = 0;
		else
			xa = ia < a->n ? (unsigned char)f->names[f->pool[a->off + ia]][ca++] : -1;
		if (ib < b->n && cb == f->name_len[f->pool[b->off + ib]])
			xb = ++ib < b->n ? ';' : -1, cb = 0;
		else
			xb = ib < b->n ? (unsigned char)f->names[f->pool[b->off + ib]][cb++] : -1;
		if (xa != xb)
			return xa < xb ? -1 : 1;
		if (xa < 0)
			return 0;
	}
}

size_t *folded_sorted(const struct folded *f, bool as_lines)
{
	size_t *ord = malloc((f->n ? f->n : 1) * sizeof(*ord));

	if (!ord)
		return NULL;
	for (size_t i = 0; i < f->n; i++)
		ord[i] = i;
	qsort_r(ord, f->n, sizeof(*ord), as_lines ? line_cmp : stack_cmp, (void *)f);
	return ord;
}

int folded_write(const struct folded *f, FILE *out)
{
	size_t *ord = folded_sorted(f, true);

	if (!ord)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++) {
		const struct fstack *st = &f->v[ord[i]];

		for (uint32_t k = 0; k < st->n; k++) {
			uint32_t id = f->pool[st->off + k];

			if (k)
				putc(';', out);
			/* only control bytes escaped: the ";" structure stays */
			ds_term_write(out, f->names[id], f->name_len[id]);
		}
		fprintf(out, " %" PRIu64 "\n", st->count);
	}
	free(ord);
	return ferror(out) ? -EIO : 0;
}

/* ---------------------------------------------------------- text input */

/* One line "FRAMES COUNT": the count is what follows the last space. */
static int parse_line(struct folded *f, const char *s, size_t len, uint32_t *ids)
{
	const char *sp = len ? memrchr(s, ' ', len) : NULL;
	uint64_t count = 0;
	uint32_t n = 0;

	if (!sp || sp == s || sp + 1 == s + len)
		goto skip;
	/* Any count up to 2^64 - 1: what folded_write() writes of summed
	 * counts (which saturate there) must read back. */
	for (const char *c = sp + 1; c < s + len; c++) {
		uint64_t d = (uint64_t)(*c - '0');

		if (*c < '0' || *c > '9' || count > (UINT64_MAX - d) / 10)
			goto skip;
		count = count * 10 + d;
	}
	for (const char *fr = s; fr <= sp;) {
		const char *end = memchr(fr, ';', (size_t)(sp - fr));
		int64_t id;

		if (!end)
			end = sp;
		if (n == FOLDED_MAX_FRAMES)
			return -EFBIG;
		id = folded_name(f, fr, (size_t)(end - fr));
		if (id < 0)
			return -ENOMEM;
		ids[n++] = (uint32_t)id;
		fr = end + 1;
	}
	return folded_add(f, ids, n, count);
skip:
	f->skipped++;
	return 0;
}

int folded_parse(struct folded *f, const char *text, size_t len)
{
	uint32_t *ids = malloc(FOLDED_MAX_FRAMES * sizeof(*ids));
	int rc = 0;

	if (!ids)
		return -ENOMEM;
	for (size_t at = 0; at < len && !rc;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;

		/* blank lines, and a CR before the newline, are no stacks */
		if (n && text[at + n - 1] == '\r')
			n--;
		if (n)
			rc = parse_line(f, text + at, n, ids);
		at += (nl ? (size_t)(nl - (text + at)) : n) + 1;
	}
	free(ids);
	return rc;
}

/* ------------------------------------------------------ from a profile */

/* The samples' stacks as the replay hands them over (the profile keeps
 * none: ds_profile_opts.stack), before their locations have names: a tree
 * of paths, the root frame (the thread's name) first, then the frames
 * perf script prints of the sample as location indexes, outermost caller
 * first.  A node is one distinct path from a root, with what the samples
 * whose stack ends there add up.  A -g recording's samples differ mostly
 * in their innermost addresses, which only their functions' names (known
 * once the locations are named) fold away; the tree keeps each caller
 * path once and nothing of a sample that its folded stack does not show
 * (raw addresses, CPU modes, pid and tid unless the root frame has them),
 * where the profile's stacks took 80 bytes a stack and 14 an address. */
#define LROOT UINT32_MAX /* the parent of a root */

struct lnode {
	uint32_t parent; /* a node's index, or LROOT */
	/* a location's index; of a root, its frame's id << 1, | 1 for the
	 * samples without a callchain (in a -g recording: no frame below
	 * the root, see collapse_tree()) */
	uint32_t key;
	uint64_t count; /* of the samples whose stack ends here */
};

struct collapse {
	struct folded *f;
	const struct folded_opts *o;
	const struct cli_recording *rec;
	/* The event (attr), known at its first sample (pick_event());
	 * no_event: --event names none of the recording's. */
	bool attr_known, no_event;
	unsigned attr;
	size_t max_stack; /* perf script's: its callchains' entries, from the sample */
	bool any; /* a sample came */
	bool callchains; /* a -g recording: some sample of the event has a callchain */
	struct lnode *nodes;
	size_t n, cap;
	uint32_t *slots; /* hash of (parent, key): index + 1, 0 empty */
	size_t nslots;
	/* the last sample's thread, and its root frame's id (-1: none yet) */
	const char *root_comm;
	int32_t root_pid, root_tid;
	int64_t root_id;
	/* Naming, once the locations are named: the profile, a location's
	 * frame id + 1 (0: not yet), per kind of thread (the java tidying
	 * depends on the thread's name; made when first needed). */
	const struct ds_profile *p;
	uint32_t *ids[2];
	char *buf;
	size_t len, bufcap;
	uint32_t *frames;
	size_t nframes_cap;
};

static int put(struct collapse *c, const char *s, size_t n)
{
	if (grow(&c->buf, &c->bufcap, c->len + n + 1, 1, 256))
		return -ENOMEM;
	memcpy(c->buf + c->len, s, n);
	c->len += n;
	c->buf[c->len] = 0;
	return 0;
}

/* A Go method name, "pkg.(*T).M": parentheses that are not parameters. */
static bool go_method(const char *s)
{
	const char *open = strstr(s, ".(");

	return open && strstr(open + 2, ").");
}

/* stackcollapse-perf.pl's tidying of a function name (in place, from
 * byte `from` of buf on). */
static void tidy(struct collapse *c, size_t from, bool java)
{
	char *s = c->buf + from, *w;

	for (char *p = s; *p; p++)
		if (*p == ';')
			*p = ':';
	if (!go_method(s)) {
		for (char *p = strchr(s, '('); p; p = strchr(p + 1, '('))
			if (strncmp(p + 1, "anonymous namespace)", 20)) {
				*p = 0;
				break;
			}
	}
	w = s;
	for (char *p = s; *p; p++)
		if (*p != '"' && *p != '\'')
			*w++ = *p;
	*w = 0;
	if (java && strchr(s, '/') && s[0] == 'L')
		memmove(s, s + 1, strlen(s));
	c->len = from + strlen(s);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* The frame id of location li, named: its id; -ENOMEM, -EINVAL. */
static int64_t loc_frame(struct collapse *c, uint32_t li, bool java)
{
	const struct ds_profile_loc *locs, *l;
	size_t nl = ds_profile_locs(c->p, &locs);
	const char *dso, *base;
	size_t from;
	int64_t id;

	if (li >= nl) /* (the profile's own indexes: cannot be) */
		return -EINVAL;
	if (!c->ids[java] && !(c->ids[java] = calloc(nl, sizeof(uint32_t))))
		return -ENOMEM;
	if (c->ids[java][li])
		return c->ids[java][li] - 1;
	l = &locs[li];
	dso = ds_profile_dso_name(c->p, l->dso);
	c->len = 0;
	if (c->o->ann_dso && (put(c, dso, strlen(dso)) || put(c, "`", 1)))
		return -ENOMEM;
	from = c->len;
	if (l->function) {
		/* The profile's names are perf's: demangled without parameters,
		 * kernel names as they are. */
		if (put(c, l->function, strlen(l->function)))
			return -ENOMEM;
	} else if (strcmp(dso, "[unknown]")) {
		base = strrchr(dso, '/') ? strrchr(dso, '/') + 1 : dso;
		if (put(c, "[", 1) || put(c, base, strlen(base)) || put(c, "]", 1))
			return -ENOMEM;
	} else if (put(c, "[unknown]", 9)) {
		return -ENOMEM;
	}
	tidy(c, from, java);
	/* stackcollapse-perf.pl --kernel: a module name in brackets or a
	 * vmlinux, [unknown] not ([vdso] is one of them). */
	if (c->o->ann_kernel && (dso[0] == '[' || ends_with(dso, "vmlinux")) &&
	    !strstr(dso, "unknown") && put(c, "_[k]", 4))
		return -ENOMEM;
	id = folded_name(c->f, c->buf, c->len);
	if (id < 0)
		return -ENOMEM;
	c->ids[java][li] = (uint32_t)id + 1;
	return id;
}

static int64_t root_frame(struct collapse *c, const struct ds_profile_sample *s)
{
	char num[48];

	c->len = 0;
	if (s->comm) {
		if (put(c, s->comm, strlen(s->comm)))
			return -1;
	} else {
		snprintf(num, sizeof(num), ":%" PRId32, s->tid);
		if (put(c, num, strlen(num)))
			return -1;
	}
	if (c->o->comm_tid)
		snprintf(num, sizeof(num), "-%" PRId32 "/%" PRId32, s->pid, s->tid);
	else if (c->o->comm_pid)
		snprintf(num, sizeof(num), "-%" PRId32, s->pid);
	else
		num[0] = 0;
	if (put(c, num, strlen(num)))
		return -1;
	for (char *p = c->buf; *p; p++)
		if (*p == ' ')
			*p = '_';
	return folded_name(c->f, c->buf, c->len);
}

static size_t lnode_hash(uint32_t parent, uint32_t key, size_t mask)
{
	uint64_t h = ((uint64_t)parent << 32 | key) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ h >> 32) & mask;
}

static int lnode_rehash(struct collapse *c)
{
	size_t n = c->nslots ? 2 * c->nslots : 4096;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		size_t h = lnode_hash(c->nodes[i].parent, c->nodes[i].key, n - 1);

		while (s[h])
			h = (h + 1) & (n - 1);
		s[h] = (uint32_t)i + 1;
	}
	free(c->slots);
	c->slots = s;
	c->nslots = n;
	return 0;
}

/* The node of the path (parent's, key), made when new: its index; -ENOMEM,
 * -EFBIG past 2^32 - 2 nodes. */
static int64_t lnode_findnew(struct collapse *c, uint32_t parent, uint32_t key)
{
	size_t h;

	if (2 * (c->n + 1) > c->nslots && lnode_rehash(c))
		return -ENOMEM;
	for (h = lnode_hash(parent, key, c->nslots - 1); c->slots[h]; h = (h + 1) & (c->nslots - 1)) {
		const struct lnode *nd = &c->nodes[c->slots[h] - 1];

		if (nd->parent == parent && nd->key == key)
			return c->slots[h] - 1;
	}
	if (c->n >= LROOT - 1) /* an index is no LROOT, and slots hold it + 1 */
		return -EFBIG;
	if (grow(&c->nodes, &c->cap, c->n + 1, sizeof(*c->nodes), 1024))
		return -ENOMEM;
	c->nodes[c->n] = (struct lnode){ .parent = parent, .key = key };
	c->slots[h] = (uint32_t)++c->n;
	return (int64_t)c->n - 1;
}

/* The event whose samples are collapsed, --event's, else the first
 * sample's (first: NULL when there was none), and perf script's
 * --max-stack: once, at the first sample or after the replay. */
static void pick_event(struct collapse *c, const struct ds_profile_sample *first)
{
	const struct ds_perf_data *pd = c->rec->pd;
	struct ds_perf_info info;

	c->attr_known = true;
	c->max_stack = c->o->max_stack_set ? c->o->max_stack : c->rec->max_stack;
	if (!c->o->event) {
		c->attr = first ? first->attr : 0;
		return;
	}
	ds_perf_data_info(pd, &info);
	for (unsigned a = 0; a < info.nr_attrs; a++) {
		const char *name = ds_perf_data_event_name(pd, a);

		if (name && !strcmp(name, c->o->event)) {
			c->attr = a;
			return;
		}
	}
	c->no_event = true;
}

/* One sample, as the replay hands it over (its locations not yet named):
 * its path in the tree, the sample added at the path's end.  0, or a
 * negative errno that stops the replay. */
static int collapse_sample(void *user, const struct ds_profile_sample *s)
{
	struct collapse *c = user;
	uint64_t add, *cnt;
	int64_t node;

	if (!c->attr_known)
		pick_event(c, s);
	c->any = true;
	if (c->no_event)
		return 0;
	if (s->attr != c->attr) {
		c->f->skipped += s->count;
		return 0;
	}
	c->callchains |= s->callchain;
	/* a thread's samples come in runs: its root frame made once a run */
	if (c->root_id < 0 || s->comm != c->root_comm || s->pid != c->root_pid ||
	    s->tid != c->root_tid) {
		c->root_id = root_frame(c, s);
		if (c->root_id < 0)
			return -ENOMEM;
		if (c->root_id > (int64_t)(UINT32_MAX >> 1))
			return -EFBIG;
		c->root_comm = s->comm;
		c->root_pid = s->pid;
		c->root_tid = s->tid;
	}
	node = lnode_findnew(c, LROOT, (uint32_t)c->root_id << 1 | !s->callchain);
	/* perf script prints the callchain, whose first entry is where the
	 * sample was taken: locs[0], then the callers, the entries it keeps
	 * (--max-stack); without a callchain, the sample's address (nlocs
	 * 1), but in a -g recording, where the kernel could not unwind at
	 * all, nothing: known at the end (collapse_tree()). */
	for (size_t i = s->nlocs; i-- > 0 && node >= 0;)
		if (!s->callchain || ds_profile_frame_kept(s, i, c->max_stack, false))
			node = lnode_findnew(c, (uint32_t)node, s->locs[i]);
	if (node < 0)
		return (int)node;
	/* A count past 2^64 would be a recording of 2^64 samples: saturate. */
	add = c->o->period ? s->period : s->count;
	cnt = &c->nodes[node].count;
	*cnt = *cnt + add < *cnt ? UINT64_MAX : *cnt + add;
	return 0;
}

/* The tree once the locations are named: each path that samples end in
 * as the frames' names, added to f, where the paths through different
 * addresses of the same functions become one stack.  0, -ENOMEM. */
static int collapse_tree(struct collapse *c)
{
	for (size_t i = 0; i < c->n; i++) {
		uint32_t at = (uint32_t)i, root;
		size_t depth = 1, k;
		bool java;
		int rc;

		if (!c->nodes[i].count)
			continue;
		for (; c->nodes[at].parent != LROOT; at = c->nodes[at].parent)
			depth++;
		root = c->nodes[at].key;
		/* a -g recording's sample the kernel could not unwind: the
		 * root frame alone (perf script prints no callchain) */
		if ((root & 1) && c->callchains)
			depth = 1;
		if (depth > UINT32_MAX)
			return -EFBIG;
		if (grow(&c->frames, &c->nframes_cap, depth, sizeof(*c->frames), 256))
			return -ENOMEM;
		c->frames[0] = root >> 1;
		java = !strncmp(c->f->names[root >> 1], "java", 4); /* as the thread's name */
		for (at = (uint32_t)i, k = depth; k > 1; at = c->nodes[at].parent) {
			int64_t id = loc_frame(c, c->nodes[at].key, java);

			if (id < 0)
				return (int)id;
			c->frames[--k] = (uint32_t)id;
		}
		rc = folded_add(c->f, c->frames, (uint32_t)depth, c->nodes[i].count);
		if (rc)
			return rc;
	}
	return 0;
}

static void collapse_release(struct collapse *c)
{
	free(c->nodes);
	free(c->slots);
	free(c->ids[0]);
	free(c->ids[1]);
	free(c->buf);
	free(c->frames);
}

/* ------------------------------------------------------- the recording */

/* The replay handed every sample over to collapse_sample(): 1 after a
 * message when there is nothing to collapse, else 0.  Nothing is added to
 * the tree now: its hash goes before the locations are named. */
static int streamed(struct collapse *c, const char *path)
{
	free(c->slots);
	c->slots = NULL;
	c->nslots = 0;
	if (!c->attr_known)
		pick_event(c, NULL);
	if (c->no_event) {
		cli_error("%s: no event '%s'", path, c->o->event);
		return 1;
	}
	if (!c->any && !c->o->event) {
		cli_error("The %s data has no samples!", path);
		return 1;
	}
	return 0;
}

/* The tree as f's stacks, with the event's name and the unit. */
static int collapsed(struct collapse *c, const char *path)
{
	struct folded *f = c->f;
	const char *ev = ds_perf_data_event_name(c->rec->pd, c->attr);
	int rc;

	f->unit = c->o->period ? "period" : "samples";
	if (ev && !(f->event = strdup(ev)))
		rc = -ENOMEM;
	else
		rc = collapse_tree(c);
	if (rc == -ENOMEM) {
		cli_error("out of memory");
		return 1;
	}
	if (rc) {
		cli_error("%s: %s", path, ds_strerror(rc));
		return 1;
	}
	/* stackcollapse-perf.pl says so too, and keeps the first event. */
	if (f->skipped)
		cli_error("%s: the stacks are of %s; %zu samples of other events left out", path,
			  ev ? ev : "the first event", f->skipped);
	if (!f->n) {
		cli_error("%s: no samples of %s", path, ev ? ev : "the event");
		return 1;
	}
	return 0;
}

int folded_of_recording(struct folded *f, const char *path, const struct cli_common *common,
			const struct folded_opts *o, bool no_fetch, bool progress)
{
	struct cli_recording rec;
	struct collapse c = { .f = f, .o = o, .rec = &rec, .root_id = -1 };
	/* Each sample folded into the tree as it is replayed; the profile
	 * keeps only the locations, which are named as always. */
	DS_OPTS(ds_profile_opts, po, .flags = DS_PROFILE_CALLCHAINS, .stack = collapse_sample,
		.stack_user = &c);
	int status = 1;

	if (!cli_recording_open(&rec, path, common, no_fetch, &po,
				o->max_stack_set ? o->max_stack : 0) &&
	    !streamed(&c, path) && !cli_recording_prefetch(&rec, progress, common->verbose)) {
		c.p = rec.prof;
		status = collapsed(&c, path);
	}
	cli_recording_close(&rec);
	collapse_release(&c);
	return status;
}

int folded_report(const struct folded_opts *o, const char *path, const char *note,
		  const struct cli_common *common, bool no_fetch, bool progress)
{
	struct cli_output out;
	struct folded f;
	int status, rc = 0;

	status = cli_output_open(&out, "report", "-o", o->out, &path, 1, note);
	if (status)
		return status;
	folded_init(&f);
	status = folded_of_recording(&f, path, common, o, no_fetch, progress);
	if (!status) {
		setvbuf(out.f, NULL, _IOFBF, 1 << 16);
		rc = folded_write(&f, out.f);
		if (rc) {
			cli_error("%s: %s", out.name, ds_strerror(rc));
			status = 1;
		}
	}
	if (cli_output_close(&out, !status))
		status = 1;
	folded_free(&f);
	return status;
}
