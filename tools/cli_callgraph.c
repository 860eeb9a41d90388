/* dsostore report -g: the call graph under each row, as perf report
 * --stdio prints it (perf 6.1, ui/stdio/hist.c and util/callchain.c),
 * drawn from one ds_calltree per row.
 *
 * perf keeps a row's paths in a radix tree whose nodes are runs of frames:
 * a run goes on while a frame has one child and no path ends at it.  Its
 * graph prints each run as a block: the first frame after "--SHARE--", the
 * others under it; siblings heaviest first, runs below the threshold left
 * out (graph: a share of the event's total; fractal: of the parent's
 * children, in whole samples rounded up); a single run holding all of the
 * row's period is printed as "---" without a share.  With fractal, what the
 * shown children leave of their parent is "[...]".  Every line is perf's,
 * trailing blanks included. */
#define _GNU_SOURCE
#include "cli_callgraph.h"
#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct callgraph {
	const struct ds_profile *p;
	struct cg_opts o;
	struct ds_calltree **trees; /* per row; NULL: no paths */
	size_t nrows;
	/* --max-stack: a stack's kept frames, and where each was in it */
	struct ds_profile_sample cut;
	uint32_t *cut_locs;
	uint64_t *cut_ips;
	uint16_t *cut_modes;
	size_t *cut_frame, cut_cap;
};

static _Noreturn void cg_oom(void)
{
	cli_error("out of memory");
	exit(2);
}

/* ------------------------------------------------------------ options */

/* perf's tokens match by prefix, tried in this order (callchain.c). */
static bool prefix_of(const char *tok, const char *word)
{
	return !strncmp(tok, word, strlen(tok));
}

int cg_parse(struct cg_opts *o, const char *arg, bool quiet)
{
	static const char *const modes[] = { "graph", "flat", "fractal", "folded" };
	static const enum cg_mode mode_of[] = { CG_GRAPH, CG_FLAT, CG_FRACTAL, CG_FOLDED };
	struct cg_opts n = *o;
	bool min_set = false;
	char *dup, *save = NULL;
	int rc = -1;

	if (!arg)
		arg = "graph,0.5,caller,function,percent"; /* perf's CALLCHAIN_DEFAULT_OPT */
	if (!(dup = strdup(arg)))
		cg_oom();
	n.mode = n.mode == CG_NONE ? CG_GRAPH : n.mode;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t m;
		char *end;

		if (prefix_of(t, "none")) {
			n.mode = CG_NONE;
			break; /* perf ignores what follows */
		}
		for (m = 0; m < 4 && !prefix_of(t, modes[m]); m++)
			;
		if (m < 4) {
			n.mode = mode_of[m];
		} else if (prefix_of(t, "caller")) {
			n.order = 1;
		} else if (prefix_of(t, "callee")) {
			n.order = 0;
		} else if (prefix_of(t, "function")) {
			; /* the only key there is here */
		} else if (prefix_of(t, "address") || prefix_of(t, "srcline") ||
			   prefix_of(t, "branch")) {
			if (!quiet)
				cli_error("report: -g %s: only the function key is supported", t);
			goto out;
		} else if (prefix_of(t, "percent")) {
			n.value = CG_PERCENT;
		} else if (prefix_of(t, "period")) {
			n.value = CG_PERIOD;
		} else if (prefix_of(t, "count")) {
			n.value = CG_COUNT;
		} else if (!min_set) {
			n.min_percent = strtod(t, &end);
			if (end == t)
				goto bad;
			min_set = true;
		} else {
			n.print_limit = strtoul(t, &end, 0);
			if (end == t)
				goto bad;
		}
	}
	*o = n;
	rc = 0;
	goto out;
bad:
	if (!quiet)
		cli_error("report: -g %s: not [graph|fractal|flat|folded|none][,THRESHOLD[,LIMIT]]"
			  "[,caller|callee][,function][,percent|period|count]",
			  arg);
out:
	free(dup);
	return rc;
}

/* --------------------------------------------------------------- trees */

static struct ds_calltree *tree_of(struct callgraph *g, size_t row)
{
	if (!g->trees[row] &&
	    !(g->trees[row] = ds_calltree_new(g->p, g->o.order > 0 ? DS_CALLTREE_CALLER : 0)))
		cg_oom();
	return g->trees[row];
}

static void add(struct callgraph *g, size_t row, const struct ds_profile_sample *s, size_t first,
		size_t n)
{
	if (n && ds_calltree_add(tree_of(g, row), s, first, n))
		cg_oom(); /* the frames are the stack's: only memory can fail */
}

/* The frames of s that --max-stack keeps, as a stack of their own in
 * g->cut (g->cut_frame[i]: the frame of s that frame i is). */
static const struct ds_profile_sample *cut(struct callgraph *g, const struct ds_profile_sample *s)
{
	size_t n = 0;

	if (s->nlocs > g->cut_cap) {
		size_t cap = s->nlocs;

		if (!(g->cut_locs = realloc(g->cut_locs, cap * sizeof(*g->cut_locs))) ||
		    !(g->cut_ips = realloc(g->cut_ips, cap * sizeof(*g->cut_ips))) ||
		    !(g->cut_modes = realloc(g->cut_modes, cap * sizeof(*g->cut_modes))) ||
		    !(g->cut_frame = realloc(g->cut_frame, cap * sizeof(*g->cut_frame))))
			cg_oom();
		g->cut_cap = cap;
	}
	for (size_t i = 0; i < s->nlocs; i++) {
		if (!ds_profile_frame_kept(s, i, (size_t)g->o.max_stack, g->o.order > 0))
			continue;
		g->cut_locs[n] = s->locs[i];
		g->cut_ips[n] = s->ips[i];
		g->cut_modes[n] = s->cpumodes[i];
		g->cut_frame[n++] = i;
	}
	g->cut = *s;
	g->cut.nlocs = n;
	g->cut.locs = g->cut_locs;
	g->cut.ips = g->cut_ips;
	g->cut.cpumodes = g->cut_modes;
	return &g->cut;
}

/* perf's paths (util/hist.c): a sample's callchain (the profile's
 * locations: it leaves out the callchain's first entry, the sampled
 * address again, which locs[0] stands for) goes to its own row; with
 * children, each other row in the chain gets the chain from its frame on,
 * toward the callers (callee order) or toward the sample (caller order),
 * once per sample: where the row's frame comes first in that order, the
 * sample's own row counting as first.  --max-stack: of the frames it
 * keeps. */
struct callgraph *callgraph_new(const struct ds_profile *p, const struct cg_opts *o,
				bool children, size_t nrows, cg_row_fn row_of, void *user)
{
	struct callgraph *g = calloc(1, sizeof(*g));
	const struct ds_profile_sample *ps;
	size_t ns = ds_profile_samples(p, &ps);
	size_t *stamp = children ? calloc(nrows ? nrows : 1, sizeof(*stamp)) : NULL;

	if (!g || (children && !stamp) ||
	    !(g->trees = calloc(nrows ? nrows : 1, sizeof(*g->trees))))
		cg_oom();
	g->p = p;
	g->o = *o;
	g->nrows = nrows;
	for (size_t k = 0; k < ns; k++) {
		const struct ds_profile_sample *s = &ps[k];
		size_t n, self;

		if (!s->callchain || (self = row_of(user, k, 0, true)) >= nrows)
			continue; /* perf adds no chain without one */
		if (g->o.max_stack >= 0)
			s = cut(g, s);
		n = s->nlocs;
		add(g, self, s, 0, n);
		if (!children)
			continue;
		stamp[self] = k + 1;
		for (size_t j = 0; j < n; j++) {
			size_t i = g->o.order > 0 ? n - 1 - j : j;
			size_t row = row_of(user, k, g->o.max_stack >= 0 ? g->cut_frame[i] : i, false);

			if (row >= nrows || stamp[row] == k + 1)
				continue;
			stamp[row] = k + 1;
			if (g->o.order > 0)
				add(g, row, s, 0, i + 1);
			else
				add(g, row, s, i, n - i);
		}
	}
	free(stamp);
	return g;
}

void callgraph_free(struct callgraph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nrows; i++)
		ds_calltree_free(g->trees[i]);
	free(g->trees);
	free(g->cut_locs);
	free(g->cut_ips);
	free(g->cut_modes);
	free(g->cut_frame);
	free(g);
}

/* ------------------------------------------------------------- drawing */

struct draw {
	const struct cg_opts *o;
	const struct ds_calltree_node *v;
	uint64_t abs_min; /* graph, flat, folded: the threshold in periods */
	bool out; /* something was printed */
};

/* perf's depth mask is an int shifted by the depth: past 31 levels x86
 * takes the shift modulo 32, and so do we. */
static uint32_t bit(int i)
{
	return 1u << (i & 31);
}

/* The next frame of a run: the only child of a frame no path ends at. */
static uint32_t run_next(const struct ds_calltree_node *v, uint32_t x)
{
	return !v[x].self_count && v[x].nchildren == 1 ? v[x].children[0] : UINT32_MAX;
}

static uint32_t run_last(const struct ds_calltree_node *v, uint32_t x)
{
	for (uint32_t n; (n = run_next(v, x)) != UINT32_MAX; x = n)
		;
	return x;
}

/* The children of x that are shown: a prefix of them, heaviest first.
 * fractal: perf's threshold is ceil() of the share of the children's
 * period; the others: the event's total times the share, truncated. */
static uint32_t shown(const struct draw *d, uint32_t x)
{
	const struct ds_calltree_node *nd = &d->v[x];
	uint64_t min = d->abs_min;
	uint32_t k = 0;

	if (d->o->mode == CG_FRACTAL) {
		double want = (double)(nd->period - nd->self_period) * (d->o->min_percent / 100.0);

		min = (uint64_t)want; /* ceil() of a share >= 0, without libm */
		min += (double)min < want;
	}
	while (k < nd->nchildren && d->v[nd->children[k]].period >= min)
		k++;
	return k;
}

static void value(const struct draw *d, uint64_t period, uint64_t count, uint64_t total)
{
	switch (d->o->value) {
	case CG_PERIOD:
		printf("%" PRIu64, period);
		break;
	case CG_COUNT:
		printf("%" PRIu64, count);
		break;
	case CG_PERCENT:
		printf("%.2f%%", total ? (double)period * 100.0 / (double)total : 0.0);
		break;
	}
}

/* perf's callchain_list__sym_name(): the function, or the address. */
static void name(const struct ds_calltree_node *nd)
{
	if (nd->function)
		ds_term_puts(stdout, nd->function);
	else
		printf("%#" PRIx64, nd->addr);
}

static void margin(int left)
{
	printf("            %*s", left, "");
}

/* A run's frame: at its first, "--SHARE--" at the deepest level. */
static void frame_line(struct draw *d, const struct ds_calltree_node *nd, uint64_t period,
		       uint64_t count, uint64_t total, int depth, uint32_t mask, bool first,
		       int left)
{
	margin(left);
	for (int i = 0; i < depth; i++) {
		putchar(mask & bit(i) ? '|' : ' ');
		if (first && i == depth - 1) {
			fputs("--", stdout);
			value(d, period, count, total);
			fputs("--", stdout);
		} else {
			fputs("          ", stdout);
		}
	}
	if (nd)
		name(nd);
	else
		fputs("[...]", stdout);
	putchar('\n');
	d->out = true;
}

static void level(struct draw *d, uint32_t parent, uint64_t total, int depth, uint32_t mask,
		  int left)
{
	const struct ds_calltree_node *pn = &d->v[parent];
	uint32_t n = shown(d, parent), new_mask = mask;
	uint64_t remaining = total, counted = 0;
	bool fractal = d->o->mode == CG_FRACTAL;
	unsigned long printed = 0;

	for (uint32_t k = 0; k < n; k++) {
		const struct ds_calltree_node *c = &d->v[pn->children[k]];
		uint32_t x = pn->children[k];
		bool first = true;

		remaining -= c->period; /* u64, as perf's */
		counted += c->count;
		/* The last child closes its level's pipe, unless "[...]" follows. */
		if (k + 1 == n && (!fractal || !remaining))
			new_mask &= ~bit(depth - 1);
		margin(left);
		for (int i = 0; i < depth; i++)
			fputs(mask & bit(i) ? "|          " : "           ", stdout);
		putchar('\n');
		for (uint32_t next;; x = next, first = false) {
			frame_line(d, &d->v[x], c->period, c->count, total, depth, new_mask, first,
				   left);
			if ((next = run_next(d->v, x)) == UINT32_MAX)
				break;
		}
		level(d, x, fractal ? d->v[x].period - d->v[x].self_period : total, depth + 1,
		      new_mask | bit(depth), left);
		if (++printed == d->o->print_limit)
			break;
	}
	if (fractal && remaining && remaining != total) {
		/* perf counts what is left only when a child was shown. */
		uint64_t count = n ? pn->count - pn->self_count - counted : 0;

		if (d->o->value == CG_COUNT && n && !count)
			return;
		new_mask &= ~bit(depth - 1);
		frame_line(d, NULL, remaining, count, total, depth, new_mask, true, left);
	}
}

static void draw_graph(struct draw *d, uint64_t parent, uint64_t total, bool sym_first)
{
	const struct ds_calltree_node *v = d->v;
	uint32_t start = 0, n = shown(d, 0);
	unsigned long printed = 0;
	int left = 0;

	/* One run with all of the row's period: no share, no level. */
	if (n == 1 && v[v[0].children[0]].period == parent) {
		uint32_t x = v[0].children[0];
		bool opened = false;

		for (size_t j = 0; x != UINT32_MAX; x = run_next(v, x), j++) {
			if (!j && sym_first) /* the row's own symbol */
				continue;
			if (!opened) {
				margin(left);
				fputs("|\n", stdout);
				margin(left);
				fputs("---", stdout);
				left += 3;
				opened = true;
			} else {
				margin(left);
			}
			name(&v[x]);
			putchar('\n');
			d->out = true;
			if (++printed == d->o->print_limit)
				break;
		}
		start = run_last(v, v[0].children[0]);
	}
	level(d, start, d->o->mode == CG_FRACTAL ? parent : total, 1, 1, left);
	if (d->out)
		putchar('\n');
}

static int by_key_desc(const void *x, const void *y, void *arg)
{
	const struct ds_calltree_node *v = arg, *a = &v[*(const uint32_t *)x],
					  *b = &v[*(const uint32_t *)y];
	uint64_t da = a->dso + 1, db = b->dso + 1;

	if (da != db)
		return da > db ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr > b->addr ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* The runs that paths end at, in perf's walk: children before their
 * parent, siblings in descending (DSO, address). */
static void post_order(const struct draw *d, uint32_t x, uint32_t *out, size_t *n)
{
	const struct ds_calltree_node *nd = &d->v[x];
	if (nd->nchildren) {
		uint32_t *k = malloc(nd->nchildren * sizeof(*k));

		if (!k)
			cg_oom();
		memcpy(k, nd->children, nd->nchildren * sizeof(*k));
		qsort_r(k, nd->nchildren, sizeof(*k), by_key_desc, (void *)d->v);
		for (uint32_t i = 0; i < nd->nchildren; i++)
			post_order(d, k[i], out, n);
		free(k);
	}
	if (nd->self_period && nd->self_period >= d->abs_min)
		out[(*n)++] = x;
}

struct ranked {
	uint64_t self;
	size_t at;
	uint32_t x;
};

static int by_self(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return a->at < b->at ? -1 : 1; /* perf's ties: in walk order */
}

static void path(const struct ds_calltree_node *v, uint32_t x, const char *sep, bool lines)
{
	if (v[x].parent == UINT32_MAX)
		return;
	path(v, v[x].parent, sep, lines);
	if (lines)
		fputs("                ", stdout);
	else if (v[v[x].parent].parent != UINT32_MAX)
		fputs(sep, stdout);
	name(&v[x]);
	if (lines)
		putchar('\n');
}

/* flat: each path's chain, one frame a line; folded: one line,
 * "SHARE a;b;c"; heaviest (self) first. */
static void draw_chains(struct draw *d, size_t nnodes, uint64_t total)
{
	uint32_t *ends = malloc(nnodes * sizeof(*ends));
	struct ranked *r = malloc(nnodes * sizeof(*r));
	size_t n = 0;

	if (!ends || !r)
		cg_oom();
	post_order(d, 0, ends, &n);
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){ d->v[ends[i]].self_period, i, ends[i] };
	qsort(r, n, sizeof(*r), by_self);
	for (size_t i = 0; i < n && (!d->o->print_limit || i < d->o->print_limit); i++) {
		const struct ds_calltree_node *nd = &d->v[r[i].x];

		if (d->o->mode == CG_FOLDED) {
			value(d, nd->self_period, nd->self_count, total);
			putchar(' ');
			path(d->v, r[i].x, ";", false);
			putchar('\n');
		} else {
			fputs("           ", stdout);
			value(d, nd->period, nd->count, total);
			putchar('\n');
			path(d->v, r[i].x, NULL, true);
			putchar('\n');
		}
	}
	free(ends);
	free(r);
}

void callgraph_print(struct callgraph *g, size_t row, uint64_t parent, uint64_t total,
		     bool sym_first)
{
	struct draw d = { .o = &g->o };
	size_t n;

	if (!g || row >= g->nrows || !g->trees[row] || g->o.mode == CG_NONE)
		return;
	n = ds_calltree_nodes(g->trees[row], &d.v);
	d.abs_min = (uint64_t)((double)total * (g->o.min_percent / 100));
	if (g->o.mode == CG_GRAPH || g->o.mode == CG_FRACTAL)
		draw_graph(&d, parent, total, sym_first);
	else
		draw_chains(&d, n, total);
}

/* ---------------------------------------------------------------- JSON */

static void json_node(const struct callgraph *g, const struct draw *d, uint32_t x, uint64_t total)
{
	const struct ds_calltree_node *nd = &d->v[x];
	uint32_t n = shown(d, x);
	char hex[24];

	printf("{\"name\":");
	if (nd->function) {
		cli_json_string(nd->function);
	} else {
		snprintf(hex, sizeof(hex), "%#" PRIx64, nd->addr);
		cli_json_string(hex);
	}
	printf(",\"dso\":");
	cli_json_string(ds_profile_dso_name(g->p, nd->dso));
	printf(",\"samples\":%" PRIu64 ",\"period\":%" PRIu64 ",\"self_period\":%" PRIu64
	       ",\"share\":%.6f,\"children\":[",
	       nd->count, nd->period, nd->self_period,
	       total ? 100.0 * (double)nd->period / (double)total : 0.0);
	for (uint32_t k = 0; k < n; k++) {
		if (k)
			putchar(',');
		json_node(g, d, nd->children[k], total);
	}
	printf("]}");
}

void callgraph_json(struct callgraph *g, size_t row, uint64_t total)
{
	struct draw d = { .o = &g->o };
	uint32_t n;

	printf(",\"callchain\":[");
	if (g && row < g->nrows && g->trees[row] && g->o.mode != CG_NONE) {
		ds_calltree_nodes(g->trees[row], &d.v);
		d.abs_min = (uint64_t)((double)total * (g->o.min_percent / 100));
		n = shown(&d, 0);
		for (uint32_t k = 0; k < n; k++) {
			if (k)
				putchar(',');
			json_node(g, &d, d.v[0].children[k], total);
		}
	}
	putchar(']');
}
