/* dsostore flamegraph: a recording's stacks (or folded text) drawn as an
 * interactive flame graph, one self-contained SVG file: the frames as
 * rectangles with their names, a frame's width its share of the samples,
 * callers below their callees; a script and a style sheet inside the file
 * (nothing is loaded from anywhere) for zoom on click, search, and the
 * details of the frame under the pointer.  docs/flamegraphs.md describes
 * the file. */
#define _GNU_SOURCE
#include "cli_folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { O_OUTPUT = 1, O_TITLE, O_WIDTH, O_COLORS };

static const struct cli_opt flamegraph_opts[] = {
	{ O_OUTPUT, 'o', "output", "FILE", "the SVG (default: stdout)", CLI_ARG_FILE },
	{ O_TITLE, 0, "title", "TEXT", "the title (default: \"Flame Graph\")", 0 },
	{ O_WIDTH, 0, "width", "PIXELS", "the image's width (default 1200)", 0 },
	{ O_COLORS, 0, "colors", "PALETTE",
	  "hot (default), mem, io, red, green, blue, aqua, yellow, purple, orange", 0 },
	{ FOLDED_O_MAX_STACK, 0, "max-stack", "N",
	  "N callchain entries of each sample, from the sample out (default: "
	  "kernel.perf_event_max_stack, as perf)",
	  0 },
	{ 0 },
};
/* The stacks' options are report --folded's (folded_opts_stacks). */
static const struct cli_opt *const flamegraph_tables[] = {
	flamegraph_opts,	cli_opts_no_fetch, cli_opts_progress, folded_opts_stacks,
	cli_opts_lookup,	cli_opts_kernel,	cli_opts_vmlinux,	 cli_opts_verbose,
	cli_opts_help,		NULL
};

/* Frames narrower than this many pixels are left out (flamegraph.pl's
 * default --minwidth): they could not be seen, and a big profile has
 * tens of thousands. */
#define MIN_WIDTH 0.1
#define FRAME_H 16
#define FONT_SIZE 12
#define PAD 10
#define TOP 54 /* title, subtitle, the buttons */
#define BOTTOM 30 /* the details line */
/* The width of a character of the font, in font sizes, for fitting names
 * without the script (the script measures the real font). */
#define CHAR_W 0.59
#define MAX_LEN (1u << 30) /* of folded text read */

struct palette {
	const char *name;
	/* base and span of each channel: base + span * (a hash in [0, 1)) */
	int base[3], span[3];
};

static const struct palette palettes[] = {
	{ "hot", { 205, 0, 0 }, { 50, 230, 55 } },
	{ "mem", { 0, 190, 0 }, { 0, 50, 190 } },
	{ "io", { 80, 80, 190 }, { 60, 60, 55 } },
	{ "red", { 200, 50, 50 }, { 55, 80, 80 } },
	{ "green", { 50, 200, 50 }, { 60, 55, 60 } },
	{ "blue", { 80, 80, 205 }, { 60, 60, 50 } },
	{ "aqua", { 50, 165, 165 }, { 60, 55, 55 } },
	{ "yellow", { 175, 175, 50 }, { 55, 55, 20 } },
	{ "purple", { 190, 80, 190 }, { 65, 60, 65 } },
	{ "orange", { 190, 90, 0 }, { 65, 65, 0 } },
};

struct fg_opts {
	const char *in, *out, *title;
	unsigned width;
	const struct palette *colors;
	struct folded_opts fo;
	bool no_fetch;
	bool in_default; /* no INPUT given: perf.data */
	int progress;
};

/* A frame of the graph: a node of the tree the sorted stacks make. */
struct node {
	uint32_t name, depth;
	uint64_t start, count; /* in the stacks' units */
};

struct graph {
	struct node *v;
	size_t n;
	uint32_t max_depth;
};

/* The stacks, in order, merged into a tree: each stack shares the frames
 * it has in common with the one before it (the same caller path). */
static int build(const struct folded *f, uint32_t root, struct graph *g)
{
	size_t *ord = folded_sorted(f, false), *path = NULL, npath = 0;
	uint64_t at = 0;
	int rc = -ENOMEM;

	g->v = malloc((f->npool + 1) * sizeof(*g->v));
	path = malloc((FOLDED_MAX_FRAMES + 2) * sizeof(*path));
	if (!ord || !g->v || !path)
		goto out;
	g->v[0] = (struct node){ .name = root, .count = f->total };
	g->n = 1;
	g->max_depth = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct fstack *st = &f->v[ord[i]];
		const uint32_t *fr = f->pool + st->off;
		size_t k = 0;

		if (st->n > FOLDED_MAX_FRAMES) {
			rc = -EFBIG;
			goto out;
		}
		while (k < npath && k < st->n && g->v[path[k]].name == fr[k])
			k++;
		npath = k;
		for (; k < st->n; k++) {
			g->v[g->n] = (struct node){ .name = fr[k], .depth = (uint32_t)k + 1, .start = at };
			path[npath++] = g->n++;
			if (k + 1 > g->max_depth)
				g->max_depth = (uint32_t)k + 1;
		}
		for (k = 0; k < npath; k++)
			g->v[path[k]].count += st->count;
		at += st->count;
	}
	rc = 0;
out:
	free(ord);
	free(path);
	return rc;
}

/* s as XML character data: markup characters escaped, bytes that are not
 * UTF-8 (or not allowed in XML: control characters) as U+FFFD, so that a
 * symbol name of any bytes still makes a well-formed file.  At most max
 * characters, then "..". */
static void xml_text(FILE *out, const char *s, size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t chars = 0;

	while (p < end) {
		unsigned c = *p;
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
				       (c & 0xf8) == 0xf0 ? 4 : 0;
		bool ok = n && (size_t)(end - p) >= n;

		for (size_t i = 1; ok && i < n; i++)
			ok = (p[i] & 0xc0) == 0x80;
		if (ok && n > 1) {
			uint32_t cp = c & (0x7f >> n);

			for (size_t i = 1; i < n; i++)
				cp = cp << 6 | (p[i] & 0x3f);
			/* overlong forms, surrogates, past U+10FFFF, U+FFFE/F */
			ok = cp >= (n == 2 ? 0x80u : n == 3 ? 0x800u : 0x10000u) &&
			     (cp < 0xd800 || cp > 0xdfff) && cp <= 0x10ffff && cp != 0xfffe &&
			     cp != 0xffff;
		}
		if (chars == max) {
			fputs("..", out);
			return;
		}
		chars++;
		if (!ok || (c < 0x20 && c != '\t')) {
			fputs("\xef\xbf\xbd", out);
			p += ok ? n : 1;
			continue;
		}
		switch (c) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fwrite(p, 1, n, out);
		}
		p += n;
	}
}

static void xml_str(FILE *out, const char *s)
{
	xml_text(out, s, strlen(s), SIZE_MAX);
}

static uint32_t name_hash(const char *s, size_t n, uint32_t salt)
{
	uint32_t h = 2166136261u ^ salt;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	h ^= h >> 15;
	h *= 0x2c1b3c6dU;
	return h ^ (h >> 12);
}

/* A frame's color: from its name, so that a function has one color
 * everywhere and in every graph. */
static void color_of(const struct palette *pal, const char *s, size_t n, int rgb[3])
{
	for (int c = 0; c < 3; c++)
		rgb[c] = pal->base[c] +
			 (int)((double)pal->span[c] * (name_hash(s, n, (uint32_t)c) >> 8) / (1u << 24));
}

/* The script: reads each frame's place in the stacks from its data-s
 * (start), data-c (count) and data-d (depth) attributes and lays the
 * frames out again on a zoom. */
static const char script[] =
	"\"use strict\";\n"
	"var svg = document.documentElement, frames = [], total = 0, pad = 0, avail = 0;\n"
	"var charW = 7, zoomed = null, term = null, details, matched, unzoomBtn, "
	"unsearchBtn;\n"
	"var HIGHLIGHT = 'rgb(230,0,230)';\n"
	"function init() {\n"
	"  total = +svg.getAttribute('data-total');\n"
	"  pad = +svg.getAttribute('data-pad');\n"
	"  avail = +svg.getAttribute('width') - 2 * pad;\n"
	"  details = document.getElementById('details');\n"
	"  matched = document.getElementById('matched');\n"
	"  unzoomBtn = document.getElementById('unzoom');\n"
	"  unsearchBtn = document.getElementById('unsearch');\n"
	"  var probe = document.getElementById('probe');\n"
	"  if (probe && probe.getComputedTextLength() > 0)\n"
	"    charW = probe.getComputedTextLength() / probe.textContent.length;\n"
	"  var gs = document.querySelectorAll('g.f');\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var g = gs[i];\n"
	"    g.fs = +g.getAttribute('data-s');\n"
	"    g.fc = +g.getAttribute('data-c');\n"
	"    g.fd = +g.getAttribute('data-d');\n"
	"    g.fn = g.getAttribute('data-n');\n"
	"    g.rect = g.querySelector('rect');\n"
	"    g.label = g.querySelector('text');\n"
	"    g.fill = g.rect.getAttribute('fill');\n"
	"    g.tip = g.querySelector('title').textContent;\n"
	"    g.addEventListener('click', onClick);\n"
	"    g.addEventListener('mouseover', onOver);\n"
	"    g.addEventListener('mouseout', onOut);\n"
	"    frames.push(g);\n"
	"  }\n"
	"  unzoomBtn.addEventListener('click', unzoom);\n"
	"  document.getElementById('search').addEventListener('click', askSearch);\n"
	"  unsearchBtn.addEventListener('click', function () { search(null); });\n"
	"  window.addEventListener('keydown', onKey);\n"
	"  layout();\n"
	"}\n"
	"function onClick(e) { e.stopPropagation(); zoom(this); }\n"
	"function onOver() { details.textContent = 'Function: ' + this.tip; }\n"
	"function onOut() { details.textContent = ' '; }\n"
	"function onKey(e) {\n"
	"  if ((e.ctrlKey && e.key === 'f') || e.key === 'F3') { e.preventDefault(); "
	"askSearch(); }\n"
	"  else if (e.key === 'Escape') { unzoom(); search(null); }\n"
	"}\n"
	"function fit(g) {\n"
	"  var w = +g.rect.getAttribute('width'), max = Math.floor((w - 6) / charW);\n"
	"  var n = g.fn;\n"
	"  g.label.textContent = max < 3 ? '' : n.length <= max ? n : n.slice(0, max - 2) + "
	"'..';\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  g.rect.setAttribute('x', (pad + x * avail).toFixed(2));\n"
	"  g.rect.setAttribute('width', (w * avail).toFixed(2));\n"
	"  g.label.setAttribute('x', (pad + x * avail + 3).toFixed(2));\n"
	"  g.classList.remove('hide');\n"
	"  fit(g);\n"
	"}\n"
	"function hide(g) { g.classList.add('hide'); }\n"
	"/* Every frame where the zoom puts it: the zoomed frame and its callees\n"
	"   across the whole width, its callers too (faded), the rest hidden. */\n"
	"function layout() {\n"
	"  var zs = zoomed ? zoomed.fs : 0, zc = zoomed ? zoomed.fc : total;\n"
	"  var zd = zoomed ? zoomed.fd : 0;\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var g = frames[i], inside = g.fs >= zs && g.fs + g.fc <= zs + zc;\n"
	"    g.classList.remove('parent');\n"
	"    if (g.fd >= zd && inside && (g.fc / zc) * avail >= 0.1)\n"
	"      place(g, (g.fs - zs) / zc, g.fc / zc);\n"
	"    else if (g.fd < zd && g.fs <= zs && g.fs + g.fc >= zs + zc) {\n"
	"      place(g, 0, 1);\n"
	"      g.classList.add('parent');\n"
	"    } else\n"
	"      hide(g);\n"
	"  }\n"
	"  unzoomBtn.classList.toggle('hide', !zoomed);\n"
	"}\n"
	"function zoom(g) { zoomed = g.fd ? g : null; layout(); }\n"
	"function unzoom() { zoomed = null; layout(); }\n"
	"function askSearch() {\n"
	"  var t = window.prompt('Search for (a regular expression)', term || '');\n"
	"  if (t !== null) search(t);\n"
	"}\n"
	"/* Highlights the frames whose names match; returns the share of the\n"
	"   samples under them (a match under a match counted once). */\n"
	"function search(t) {\n"
	"  var re = null, spans = [];\n"
	"  term = t ? t : null;\n"
	"  if (term) {\n"
	"    try { re = new RegExp(term); }\n"
	"    catch (e) { re = new RegExp(term.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&')); }\n"
	"  }\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var g = frames[i], hit = re !== null && g.fd > 0 && re.test(g.fn);\n"
	"    g.rect.setAttribute('fill', hit ? HIGHLIGHT : g.fill);\n"
	"    g.classList.toggle('match', hit);\n"
	"    if (hit) spans.push([g.fs, g.fs + g.fc]);\n"
	"  }\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  var sum = 0, end = -1;\n"
	"  for (var k = 0; k < spans.length; k++) {\n"
	"    if (spans[k][0] >= end) { sum += spans[k][1] - spans[k][0]; end = spans[k][1]; }\n"
	"    else if (spans[k][1] > end) { sum += spans[k][1] - end; end = spans[k][1]; }\n"
	"  }\n"
	"  var share = total > 0 ? 100 * sum / total : 0;\n"
	"  matched.textContent = term ? 'Matched: ' + share.toFixed(1) + '%' : ' ';\n"
	"  unsearchBtn.classList.toggle('hide', !term);\n"
	"  return share;\n"
	"}\n"
	"init();\n";

static const char style[] =
	"text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; fill: #000; }\n"
	"#title { font-size: 17px; }\n"
	".btn { cursor: pointer; fill: #333; }\n"
	".btn:hover { text-decoration: underline; }\n"
	"g.f { cursor: pointer; }\n"
	"g.f text { pointer-events: none; }\n"
	"g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	".hide { display: none; }\n"
	".parent { opacity: 0.5; }\n"
	"#probe { visibility: hidden; }\n";

static void pct(char *buf, size_t len, uint64_t part, uint64_t total)
{
	snprintf(buf, len, "%.2f%%", total ? 100.0 * (double)part / (double)total : 0.0);
}

static int write_svg(FILE *out, const struct fg_opts *o, const struct folded *f,
		     const struct graph *g)
{
	double avail = (double)o->width - 2 * PAD;
	unsigned height = TOP + (g->max_depth + 1) * FRAME_H + BOTTOM;
	char share[32];

	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
		"height=\"%u\" viewBox=\"0 0 %u %u\" data-total=\"%" PRIu64 "\" data-pad=\"%d\">\n"
		"<style type=\"text/css\"><![CDATA[\n%s]]></style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f0\"/>\n",
		o->width, height, o->width, height, f->total, PAD, style, o->width, height);
	fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"22\" text-anchor=\"middle\">",
		o->width / 2.0);
	xml_str(out, o->title ? o->title : "Flame Graph");
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%.1f\" y=\"40\" text-anchor=\"middle\">",
		o->width / 2.0);
	if (f->event) {
		xml_str(out, f->event);
		fputs(", ", out);
	}
	fprintf(out, "%" PRIu64 " %s</text>\n", f->total, f->unit);
	fprintf(out,
		"<text id=\"unzoom\" class=\"btn hide\" x=\"%d\" y=\"22\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%d\" y=\"22\" text-anchor=\"end\">"
		"Search</text>\n"
		"<text id=\"unsearch\" class=\"btn hide\" x=\"%d\" y=\"40\" text-anchor=\"end\">"
		"Reset Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"probe\" x=\"0\" y=\"%u\">abcdefghijklmnopqrstuvwxyz_0123456789</text>\n",
		PAD, o->width - PAD, o->width - PAD, o->width - PAD, height - 10, PAD, height - 10,
		height);
	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; i < g->n; i++) {
		const struct node *nd = &g->v[i];
		const char *name = f->names[nd->name];
		size_t len = f->name_len[nd->name];
		double x = PAD + avail * (double)nd->start / (double)f->total;
		double w = avail * (double)nd->count / (double)f->total;
		double y = TOP + (double)(g->max_depth - nd->depth) * FRAME_H;
		long fit = (long)((w - 6) / (FONT_SIZE * CHAR_W));
		int rgb[3];

		if (w < MIN_WIDTH)
			continue;
		color_of(o->colors, name, len, rgb);
		pct(share, sizeof(share), nd->count, f->total);
		fprintf(out,
			"<g class=\"f\" data-s=\"%" PRIu64 "\" data-c=\"%" PRIu64 "\" data-d=\"%" PRIu32
			"\" data-n=\"",
			nd->start, nd->count, nd->depth);
		xml_text(out, name, len, SIZE_MAX);
		fputs("\"><title>", out);
		xml_text(out, name, len, SIZE_MAX);
		fprintf(out,
			" (%" PRIu64 " %s, %s)</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
			"height=\"%d\" rx=\"2\" fill=\"rgb(%d,%d,%d)\"/><text x=\"%.2f\" y=\"%.1f\">",
			nd->count, f->unit, share, x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2], x + 3,
			y + FRAME_H - 4.5);
		if (fit >= 3)
			xml_text(out, name, len, (size_t)fit - 2 < len ? (size_t)fit - 2 : SIZE_MAX);
		fputs("</text></g>\n", out);
	}
	fprintf(out, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
		script);
	return ferror(out) ? -EIO : 0;
}

/* The input's kind: a perf.data starts with its magic, in either byte
 * order; anything else is read as folded text. */
static bool is_recording(const char *path)
{
	char magic[8];
	FILE *f;
	bool yes;

	if (!strcmp(path, "-"))
		return false;
	f = fopen(path, "rb");
	if (!f)
		return true; /* the perf.data reader says what is wrong */
	yes = fread(magic, 1, 8, f) == 8 &&
	      (!memcmp(magic, "PERFILE2", 8) || !memcmp(magic, "2ELIFREP", 8));
	fclose(f);
	return yes;
}

static int read_folded(struct folded *f, const char *path)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;

	if (!in) {
		cli_error("%s: %s", path, ds_strerror(-errno));
		return 1;
	}
	for (;;) {
		size_t got;

		if (len == cap) {
			char *nb;

			if (cap >= MAX_LEN) {
				rc = -EFBIG;
				break;
			}
			cap = cap ? 2 * cap : 1 << 16;
			nb = realloc(buf, cap);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, in);
		len += got;
		if (got == 0) {
			if (ferror(in))
				rc = -EIO;
			break;
		}
	}
	if (in != stdin)
		fclose(in);
	if (!rc)
		rc = folded_parse(f, buf, len);
	free(buf);
	if (rc) {
		cli_error("%s: %s", path, ds_strerror(rc));
		return 1;
	}
	if (!f->n) {
		cli_error("%s: no stacks (lines of \"FRAME;FRAME;... COUNT\")", path);
		return 1;
	}
	if (f->skipped)
		cli_error("%s: %zu lines are no stacks, left out", path, f->skipped);
	return 0;
}

static int run(const struct fg_opts *o, const struct cli_common *common)
{
	struct folded f;
	struct graph g = { 0 };
	struct cli_output out;
	struct stat st;
	int64_t root;
	int status, rc;

	status = cli_output_open(&out, "flamegraph", "-o", o->out, &o->in, 1,
				 o->in_default ? "(the recording read by default: name the input, "
						 "and write to another file)"
					       : NULL);
	if (status)
		return status;
	folded_init(&f);
	/* (fopen() opens a directory; its reads fail with EISDIR, which
	 * would come out as an I/O error.) */
	if (strcmp(o->in, "-") && stat(o->in, &st) == 0 && S_ISDIR(st.st_mode)) {
		cli_error("%s: a directory, not a perf.data or folded stacks", o->in);
		status = 1;
		goto out;
	}
	if (is_recording(o->in))
		status = folded_of_recording(&f, o->in, common, &o->fo, o->no_fetch,
					     cli_want_progress(o->progress));
	else
		status = read_folded(&f, o->in);
	if (status)
		goto out;
	status = 1;
	if (!f.total) {
		cli_error("%s: every stack's count is 0", o->in);
		goto out;
	}
	root = folded_name(&f, "all", 3);
	if (root < 0 || (rc = build(&f, (uint32_t)root, &g))) {
		cli_error("%s", ds_strerror(root < 0 ? -ENOMEM : rc));
		goto out;
	}
	setvbuf(out.f, NULL, _IOFBF, 1 << 16);
	rc = write_svg(out.f, o, &f, &g);
	if (rc) {
		cli_error("%s: %s", out.name, ds_strerror(rc));
		goto out;
	}
	status = 0;
out:
	if (cli_output_close(&out, !status))
		status = 1;
	free(g.v);
	folded_free(&f);
	return status;
}

static int cmd_flamegraph(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct fg_opts o = { .width = 1200, .colors = &palettes[0], .progress = -1 };

	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_flamegraph, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		int r = id > 0 ? folded_option(&o.fo, id, p.arg) : 0;
		const char *v = p.arg;

		if (id == CLI_BAD || id == CLI_HELP || r < 0)
			return id == CLI_HELP ? 0 : 2;
		if (r > 0)
			continue;
		if (id == O_OUTPUT) {
			o.out = v;
		} else if (id == O_TITLE) {
			o.title = v;
		} else if (id == O_WIDTH) {
			char *end;
			unsigned long w = strtoul(v, &end, 10);

			if (*end || end == v || w < 100 || w > 100000) {
				cli_error("flamegraph: --width: 100 to 100000 pixels, not '%s'", v);
				return 2;
			}
			o.width = (unsigned)w;
		} else if (id == O_COLORS) {
			size_t k, n = sizeof(palettes) / sizeof(palettes[0]);

			for (k = 0; k < n && strcmp(palettes[k].name, v); k++)
				;
			if (k == n) {
				cli_error("flamegraph: no palette '%s' (--help lists them)", v);
				return 2;
			}
			o.colors = &palettes[k];
		} else if (!o.in) {
			o.in = v;
		} else {
			cli_error("flamegraph: one input at a time (%s and %s)", o.in, v);
			return 2;
		}
	}
	o.no_fetch = common.no_fetch;
	o.progress = common.progress;
	if (!o.in) {
		o.in = "perf.data";
		o.in_default = true;
	}
	return run(&o, &common);
}

const struct cli_command cli_cmd_flamegraph = {
	.name = "flamegraph",
	.run = cmd_flamegraph,
	.summary = "a recording's stacks as an interactive SVG flame graph",
	.usage = "[OPTIONS] [INPUT] [-o OUT.svg]",
	.about = "A flame graph of a recording (default: perf.data) as one self-contained SVG:\n"
		 "zoom on click, search (Ctrl-F), a frame's details under the pointer.  INPUT\n"
		 "may also be collapsed stacks (report --folded, stackcollapse-perf.pl: lines\n"
		 "of \"FRAME;FRAME;... COUNT\"), or - for those on stdin.\n",
	.tables = flamegraph_tables,
};
