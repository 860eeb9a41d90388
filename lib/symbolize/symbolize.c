/* SPDX-License-Identifier: MIT */
/*
 * Symbolization: address -> function, file:line:column, inline frames,
 * answered from the index (symindex.c).  A lookup is two binary searches
 * and a short walk up the scope chain.  (libdw's own per-address path,
 * what eu-addr2line does, walks DIEs for every address: ~0.8 ms each with
 * inlines.)  Names as binutils or perf choose them, demangled; and the
 * request lines of `dsostore symbolize`.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <ctype.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- the arena
 *
 * A batch's strings live in chunks that never move (a frame points into
 * them as soon as it is made) and are kept from call to call: a reset
 * rewinds, a warm batch allocates nothing. */

#define CHUNK_MIN (4u << 10)
#define CHUNK_MAX (256u << 10)
/* The demangled names kept across calls: past this, dropped at a call's
 * start (a stream over many DSOs would otherwise keep them all). */
#define DEMANGLED_MAX (16u << 20)

struct chunk {
	struct chunk *next;
	size_t size;
	char data[];
};

struct arena {
	struct chunk *head, *cur; /* cur NULL: rewound, head is next */
	size_t pos; /* used bytes of cur */
	size_t bytes; /* of every chunk */
};

static char *arena_alloc(struct arena *a, size_t len)
{
	struct chunk **link, *c = a->cur;
	size_t size;

	if (c && c->size - a->pos >= len) {
		a->pos += len;
		return c->data + a->pos - len;
	}
	/* The next chunk kept from an earlier call, if it has room. */
	link = c ? &c->next : &a->head;
	while (*link && (*link)->size < len) {
		struct chunk *small = *link;

		*link = small->next;
		a->bytes -= small->size;
		free(small);
	}
	if (!*link) {
		size = a->bytes < CHUNK_MIN ? CHUNK_MIN : a->bytes < CHUNK_MAX ? a->bytes : CHUNK_MAX;
		if (size < len)
			size = len;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = NULL;
		c->size = size;
		a->bytes += size;
		*link = c;
	}
	a->cur = *link;
	a->pos = len;
	return a->cur->data;
}

static char *arena_strdup(struct arena *a, const char *s, size_t len)
{
	char *p = arena_alloc(a, len + 1);

	if (p)
		memcpy(p, s, len + 1);
	return p;
}

static void arena_free(struct arena *a)
{
	while (a->head) {
		struct chunk *c = a->head;

		a->head = c->next;
		free(c);
	}
	*a = (struct arena){ 0 };
}

/* ---------------------------------------------------------- the batch */

struct pair {
	uint64_t key; /* the virtual address */
	uint32_t idx; /* its place in the input */
	uint32_t pad;
};

/* How a name is answered: as the index has it, or demangled and spelled
 * as binutils (addr2line -C, c++filt without -v) or llvm-symbolizer 14
 * print it. */
/* How names are demangled: not, as binutils, as LLVM, as perf (no parameters). */
enum { DM_NONE, DM_GNU, DM_LLVM, DM_PERF };

/* The index's string at key, as this call answers it (copied, or
 * demangled).  The index's strings do not move while it lives, so within
 * a call one pointer is one string. */
struct pslot {
	const char *key, *val;
	uint32_t gen; /* a slot of an earlier call is empty */
	uint32_t len; /* strlen(val) */
	uint8_t how; /* DM_* */
};

/* A mangled name and its demangling in one spelling (both in the batch's
 * demangled arena), kept across calls: a hot name is demangled once. */
struct dslot {
	const char *mangled, *demangled;
	uint64_t hash;
	size_t len; /* strlen(demangled) */
	uint8_t how;
};

#define RECENT 256 /* a power of two */

struct ds_sym_batch {
	struct ds_sym_answer *ans;
	size_t *first; /* ans[i]'s first frame in frames */
	size_t n, cap; /* answers; room in ans, first, pairs, tmp, vaddrs */
	struct pair *pairs, *tmp;
	size_t npairs;
	uint64_t *vaddrs;
	struct ds_frame *frames;
	size_t nframes, frame_cap;
	struct arena strings; /* this call's */
	/* In front of ptab: the last string met at each of a few places
	 * (its address hashed), in L1 cache; most frames repeat one. */
	struct pslot recent[RECENT];
	struct pslot *ptab;
	size_t pcap, pused;
	uint32_t gen;
	struct arena dm_strings; /* across calls */
	struct dslot *dtab;
	size_t dcap, dused;
	uint8_t demangle; /* this call's DM_*, from DS_SYM_DEMANGLE and _LLVM_NAMES */
};

DS_API struct ds_sym_batch *ds_sym_batch_new(void)
{
	struct ds_sym_batch *b = calloc(1, sizeof(*b));

	if (!b)
		errno = ENOMEM;
	return b;
}

DS_API void ds_sym_batch_free(struct ds_sym_batch *b)
{
	if (!b)
		return;
	free(b->ans);
	free(b->first);
	free(b->pairs);
	free(b->tmp);
	free(b->vaddrs);
	free(b->frames);
	free(b->ptab);
	free(b->dtab);
	arena_free(&b->strings);
	arena_free(&b->dm_strings);
	free(b);
}

DS_API const struct ds_sym_answer *ds_sym_batch_answers(const struct ds_sym_batch *b, size_t *n)
{
	if (n)
		*n = b ? b->n : 0;
	return b && b->n ? b->ans : NULL;
}

static bool grow(void **p, size_t n, size_t size)
{
	void *q = realloc(*p, n * size);

	if (q)
		*p = q;
	return q != NULL;
}

int ds__sym_batch_start(struct ds_sym_batch *b, size_t n)
{
	b->n = b->npairs = b->nframes = 0;
	b->strings.cur = NULL;
	b->strings.pos = 0;
	if (++b->gen == 0) { /* wrapped: no slot may look current */
		if (b->ptab)
			memset(b->ptab, 0, b->pcap * sizeof(*b->ptab));
		memset(b->recent, 0, sizeof(b->recent));
		b->gen = 1;
	}
	b->pused = 0;
	if (n > INT_MAX) /* the count of found ones is an int */
		return -EINVAL;
	if (b->dm_strings.bytes > DEMANGLED_MAX) {
		arena_free(&b->dm_strings);
		if (b->dtab)
			memset(b->dtab, 0, b->dcap * sizeof(*b->dtab));
		b->dused = 0;
	}
	if (n > b->cap) {
		size_t cap = n < 2 * b->cap ? 2 * b->cap : n;

		/* An array grown stays grown; cap only counts once all are. */
		if (!grow((void **)&b->ans, cap, sizeof(*b->ans)) ||
		    !grow((void **)&b->first, cap, sizeof(*b->first)) ||
		    !grow((void **)&b->pairs, cap, sizeof(*b->pairs)) ||
		    !grow((void **)&b->tmp, cap, sizeof(*b->tmp)) ||
		    !grow((void **)&b->vaddrs, cap, sizeof(*b->vaddrs)))
			return -ENOMEM;
		b->cap = cap;
	}
	b->n = n;
	return 0;
}

static enum ds_sym_status status_of(int err)
{
	return err == -ERANGE				? DS_SYM_OUTSIDE
	       : err == -ENOENT || err == -ENODATA ? DS_SYM_NO_SYMBOLS
							: DS_SYM_ERROR;
}

static void answer_error(struct ds_sym_answer *a, uint64_t addr, int err)
{
	*a = (struct ds_sym_answer){ .addr = addr, .status = status_of(err), .error = err };
}

void ds__sym_batch_fail(struct ds_sym_batch *b, const uint64_t *addrs, int err)
{
	for (size_t i = 0; i < b->n; i++)
		answer_error(&b->ans[i], addrs[i], err);
}

/* ------------------------------------------------------------ sorting */

/* Stable LSD radix sort on key, 8 bits a pass, a pass skipped where every
 * key has the same byte (addresses of one DSO share their high bytes).
 * Returns a or tmp, whichever holds the result. */
static struct pair *radix_sort(struct pair *a, struct pair *tmp, size_t n)
{
	static const unsigned small = 32;
	uint32_t count[8][256];

	if (n < small) { /* insertion sort: stable too */
		for (size_t i = 1; i < n; i++) {
			struct pair p = a[i];
			size_t j = i;

			for (; j && a[j - 1].key > p.key; j--)
				a[j] = a[j - 1];
			a[j] = p;
		}
		return a;
	}
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < 8; d++)
			count[d][(a[i].key >> (8 * d)) & 0xff]++;
	for (unsigned d = 0; d < 8; d++) {
		uint32_t *c = count[d], sum = 0;
		struct pair *t;

		if (c[(a[0].key >> (8 * d)) & 0xff] == n)
			continue;
		for (unsigned v = 0; v < 256; v++) {
			uint32_t k = c[v];

			c[v] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			tmp[c[(a[i].key >> (8 * d)) & 0xff]++] = a[i];
		t = a;
		a = tmp;
		tmp = t;
	}
	return a;
}

size_t ds__sym_batch_sort(struct ds_sym_batch *b, const struct ds_symbols *S,
			  const struct ds__loadmap *lm, const uint64_t *addrs, unsigned flags,
			  const uint64_t **vaddrs)
{
	bool sorted = true;
	size_t np = 0, nv = 0;

	for (size_t i = 0; i < b->n; i++) {
		uint64_t v = addrs[i];

		if (flags & DS_SYM_FILE_OFFSET) {
			int err = lm ? ds__loadmap_vaddr(lm, addrs[i], &v)
				     : ds__symbols_vaddr(S, addrs[i], &v);

			if (err) {
				answer_error(&b->ans[i], addrs[i], err);
				continue;
			}
		}
		sorted &= !np || b->pairs[np - 1].key <= v;
		b->pairs[np++] = (struct pair){ .key = v, .idx = (uint32_t)i };
	}
	if (!sorted) {
		struct pair *p = radix_sort(b->pairs, b->tmp, np);

		if (p != b->pairs) {
			b->tmp = b->pairs;
			b->pairs = p;
		}
	}
	for (size_t k = 0; k < np; k++)
		if (!nv || b->vaddrs[nv - 1] != b->pairs[k].key)
			b->vaddrs[nv++] = b->pairs[k].key;
	b->npairs = np;
	*vaddrs = b->vaddrs;
	return nv;
}

/* -------------------------------------------------------------- names
 *
 * Both spellings come from libiberty, the demangler of binutils itself
 * (addr2line, c++filt, objdump), so GNU style is theirs byte for byte.
 * LLVM style picks the demangler as llvm-symbolizer 14 does and respells
 * the few constructs its Itanium demangler prints differently. */

/* Whether s may be something cplus_demangle() demangles in its "auto"
 * style: Itanium C++ (_Z..., _GLOBAL_ constructors), Rust legacy (_ZN)
 * and v0 (_R), after bfd_demangle()'s leading dots and dollars.  D (_D)
 * is not among them: auto does not try it, so addr2line -C leaves D
 * names as they are.  A cheap filter: a C name is copied, never passed
 * to the demangler nor cached. */
static bool maybe_mangled(const char *s)
{
	while (*s == '.' || *s == '$')
		s++;
	return s[0] == '_' && (s[1] == 'Z' || s[1] == 'R' || s[1] == 'G');
}

/* pre + mid + suf in one malloc()ed string; NULL: no memory. */
static char *join3(const char *pre, size_t pre_len, const char *mid, const char *suf)
{
	size_t mid_len = strlen(mid), suf_len = suf ? strlen(suf) : 0;
	char *out = malloc(pre_len + mid_len + suf_len + 1);

	if (!out)
		return NULL;
	memcpy(out, pre, pre_len);
	memcpy(out + pre_len, mid, mid_len);
	memcpy(out + pre_len + mid_len, suf ? suf : "", suf_len + 1);
	return out;
}

/* name, the part from its first '@' (a symbol version, our "@plt") cut
 * off, into buf or a malloc()ed copy (*heap, for the caller to free);
 * NULL: no memory. */
static const char *cut_at(const char *name, const char *at, char *buf, size_t size, char **heap)
{
	size_t len = (size_t)(at - name);
	char *p = len < size ? buf : (*heap = malloc(len + 1));

	if (!p)
		return NULL;
	memcpy(p, name, len);
	p[len] = 0;
	return p;
}

/* What binutils' bfd_demangle() gives for an ELF symbol (no leading
 * underscore to drop on ELF): leading '.' and '$' set aside, the name cut
 * at its first '@', the rest demangled as cplus_demangle() does with
 * addr2line's options (DMGL_PARAMS | DMGL_ANSI) in its default auto
 * style, and the pieces put back: "_Z1fv@plt" is "f()@plt".  Auto tries
 * Rust first (legacy Rust names are Itanium names too), then Itanium.
 * Those two are called here rather than cplus_demangle() itself, which
 * would pull in libiberty's xmalloc(), whose failure exits the process
 * (and whose names clash with programs that link our static library).
 * NULL: not a mangled name (printed as it is), or no memory. */
static char *demangle_gnu(const char *s, int opts)
{
	const char *pre = s, *at, *name;
	char buf[256], *heap = NULL, *res, *out;

	while (*s == '.' || *s == '$')
		s++;
	at = strchr(s, '@');
	name = at ? cut_at(s, at, buf, sizeof(buf), &heap) : s;
	if (!name)
		return NULL;
	res = rust_demangle(name, opts);
	if (!res)
		res = cplus_demangle_v3(name, opts);
	free(heap);
	if (!res || (s == pre && !at))
		return res;
	out = join3(pre, (size_t)(s - pre), res, at);
	free(res);
	return out;
}

/* d holds "#N}" (the tail of libiberty's "{lambda(...)#N}" or
 * "{unnamed type#N}"): LLVM's suffix for N (none for 1, else N - 2) into
 * num; the bytes of d used, 0 if it is not that. */
static size_t llvm_ordinal(const char *d, char num[static 24])
{
	unsigned long n = 0;
	size_t i = 1;

	num[0] = 0;
	if (d[0] != '#' || d[1] < '1' || d[1] > '9')
		return 0;
	for (; d[i] >= '0' && d[i] <= '9' && n < 100000000; i++)
		n = 10 * n + (unsigned long)(d[i] - '0');
	if (d[i] != '}')
		return 0;
	if (n > 1)
		snprintf(num, 24, "%lu", n - 2);
	return i + 1;
}

/* Where the parenthesis at p closes (NULL if it does not). */
static const char *closing(const char *p)
{
	int depth = 0;

	for (; *p; p++)
		if (*p == '(')
			depth++;
		else if (*p == ')' && !--depth)
			return p;
	return NULL;
}

/* Ends with " [clone .a] [clone .b.0]" from `from` on: LLVM's " (.a.b.0)"
 * written at from (in place: it is shorter, and written behind what is
 * read).  false: the tail is something else. */
static bool llvm_clones(char *from)
{
	static const char clone[] = " [clone .";
	const size_t cl = sizeof(clone) - 2; /* up to the dot */
	char *r = from, *w = from;

	while (*r) {
		char *end;

		if (strncmp(r, clone, cl + 1))
			return false;
		end = strchr(r + cl, ']');
		if (!end || memchr(r + cl, ' ', (size_t)(end - (r + cl))))
			return false;
		r = end + 1;
	}
	r = from;
	*w++ = ' ';
	*w++ = '(';
	while (*r) {
		char *end = strchr(r + cl, ']');
		size_t len = (size_t)(end - (r + cl));

		memmove(w, r + cl, len);
		w += len;
		r = end + 1;
	}
	*w++ = ')';
	*w = 0;
	return true;
}

/* The operator spelled at s right after "operator" (libiberty puts a
 * space between "operator<" and its template arguments): its length, 0
 * for none (a conversion operator's type, "new"). */
static size_t operator_len(const char *s)
{
	static const char *const ops[] = {
		"<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->", "==", "!=", "&&",
		"||",  "++",  "--",  "+=",  "-=", "*=", "/=", "%=", "&=", "|=", "^=", "()",
		"[]",  "<",   ">",   "=",   "!",  "~",  "+",  "-",  "*",  "/",  "%",  "&",
		"|",   "^",   ",",
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(s, ops[i], strlen(ops[i])))
			return strlen(ops[i]);
	return 0;
}

/* Is s (within base) at the keyword "operator"? */
static bool at_operator(const char *base, const char *s)
{
	return !strncmp(s, "operator", 8) &&
	       (s == base || !(isalnum((unsigned char)s[-1]) || s[-1] == '_'));
}

/* libiberty's s, into w (if not NULL), with a space between two '>' that
 * close template argument lists ("f<g<int>>(...)" -> "f<g<int> >(...)"),
 * as LLVM always writes them.  libiberty does too, except after an empty
 * pack, whose ", " it takes back while still believing ' ' the last
 * character written ("std::__get_helper<1ul, std::default_delete<int
 * const>>(...)").  A '<' opens a list and a '>' closes one, unless it
 * belongs to an operator's name ("operator>>", "->") or stands inside
 * parentheses opened within the list (an expression).  Returns the
 * spaces to insert; -1 where that reading does not balance (s is then
 * better left as it is).  w, if given, has room for s and the spaces. */
static long template_closes(const char *s, char *w)
{
	char stack[64];
	size_t depth = 0;
	const char *last_close = NULL;
	long n = 0;

	for (const char *r = s; *r; r++) {
		if (at_operator(s, r)) {
			size_t k = 8 + operator_len(r + 8);

			if (w) {
				memcpy(w, r, k);
				w += k;
			}
			r += k - 1;
			continue;
		}
		if (*r == '<' || *r == '(') {
			if (depth == sizeof(stack))
				return -1;
			stack[depth++] = *r;
		} else if (*r == ')') {
			if (!depth || stack[--depth] != '(')
				return -1;
		} else if (*r == '>' && r > s && r[-1] != '-' && depth && stack[depth - 1] == '<') {
			depth--;
			if (last_close == r - 1) {
				n++;
				if (w)
					*w++ = ' ';
			}
			last_close = r;
		}
		if (w)
			*w++ = *r;
	}
	if (w)
		*w = 0;
	return depth ? -1 : n;
}

/* template_closes() of s, malloc()ed (s itself copied where there is
 * nothing to do); NULL: no memory. */
static char *llvm_template_closes(const char *s)
{
	long n = template_closes(s, NULL);
	size_t len = strlen(s);
	char *out = malloc(len + (n > 0 ? (size_t)n : 0) + 1);

	if (!out)
		return NULL;
	if (n > 0)
		template_closes(s, out);
	else
		memcpy(out, s, len + 1);
	return out;
}

/* r at libiberty's "( const&)(" (a reference or pointer to a
 * cv-qualified function type, "int ( const&)()"): LLVM's spelling of the
 * same length, " const(&)(" ("int  const(&)()"), written at w; the bytes
 * written, 0 if r is not that. */
static size_t llvm_cv_function(const char *r, char *w)
{
	static const char *const cv[] = { " const", " volatile", " restrict" };
	size_t q = 1, p;

	for (bool more = true; more;) {
		more = false;
		for (size_t i = 0; i < sizeof(cv) / sizeof(cv[0]); i++) {
			size_t n = strlen(cv[i]);

			if (!strncmp(r + q, cv[i], n)) {
				q += n;
				more = true;
			}
		}
	}
	for (p = q; r[p] == '&' || r[p] == '*'; p++)
		;
	if (q == 1 || p == q || r[p] != ')' || r[p + 1] != '(')
		return 0;
	memcpy(w, r + 1, q - 1);
	w[q - 1] = '(';
	memcpy(w + q, r + q, p - q);
	w[p] = ')';
	return p + 1;
}

/* libiberty's Itanium spelling s as LLVM 14's demangler prints it, where
 * the difference is one of spelling: clone suffixes "f() (.cold)",
 * lambdas and unnamed types "'lambda0'(int)", "'unnamed'",
 * "operator<<<int>" without libiberty's space, "std::nullptr_t", no
 * empty pack ("f<, int>"), "int  const(&)()" for "int ( const&)()".
 * Generic lambdas ("auto:1") and expressions stay as libiberty has them
 * (docs/oracles.md).  No change lengthens, so the result (malloc()ed;
 * NULL: no memory) is no longer than s. */
static char *llvm_respell(const char *s)
{
	static const char lambda[] = "{lambda(", unnamed[] = "{unnamed type";
	static const char nullptr_t[] = "decltype(nullptr)";
	const char *r = s;
	char *out = malloc(strlen(s) + 1), *w = out, *tail;

	if (!out)
		return NULL;
	while (*r) {
		const char *close;
		char num[24];
		size_t used;

		if (!strncmp(r, lambda, sizeof(lambda) - 1) && (close = closing(r + 7)) &&
		    (used = llvm_ordinal(close + 1, num))) {
			/* {lambda(ARGS)#N} -> 'lambdaM'(ARGS) */
			size_t args = (size_t)(close + 1 - (r + 7));

			w += sprintf(w, "'lambda%s'", num);
			memcpy(w, r + 7, args);
			w += args;
			r = close + 1 + used;
		} else if (!strncmp(r, unnamed, sizeof(unnamed) - 1) &&
			   (used = llvm_ordinal(r + sizeof(unnamed) - 1, num))) {
			w += sprintf(w, "'unnamed%s'", num);
			r += sizeof(unnamed) - 1 + used;
		} else if (!strncmp(r, "operator<", 9) && r[9 + (r[9] == '<')] == ' ' &&
			   r[10 + (r[9] == '<')] == '<') {
			/* "operator<< <int>", "operator< <int>": no space */
			size_t op = 9 + (r[9] == '<');

			memcpy(w, r, op);
			w += op;
			r += op + 1;
		} else if (!strncmp(r, nullptr_t, sizeof(nullptr_t) - 1)) {
			memcpy(w, "std::nullptr_t", 14);
			w += 14;
			r += sizeof(nullptr_t) - 1;
		} else if (r[0] == ',' && r[1] == ' ' && w > out &&
			   (w[-1] == '<' || (w - out >= 2 && w[-2] == ',' && w[-1] == ' '))) {
			/* An empty pack: "f<, int>", "f<int, , int>" are
			 * LLVM's "f<int>", "f<int, int>". */
			r += 2;
		} else if (*r == '(' && (used = llvm_cv_function(r, w))) {
			w += used;
			r += used;
		} else {
			*w++ = *r++;
		}
	}
	*w = 0;
	for (tail = strstr(out, " [clone ."); tail && !llvm_clones(tail);
	     tail = strstr(tail + 1, " [clone ."))
		;
	return out;
}

/* name[0..len) through demangle, and " (SUFFIX)" after it for a
 * suffix from name[len] on (a '.' there), as LLVM prints suffixes it
 * does not know: "f() (.llvm.123)".  NULL: not demangled, no memory. */
static char *llvm_with_suffix(const char *name, size_t len, char *(*demangle)(const char *, int))
{
	char buf[256], *heap = NULL, *res, *out;
	const char *head = name[len] ? cut_at(name, name + len, buf, sizeof(buf), &heap) : name;

	if (!head)
		return NULL;
	res = demangle(head, DMGL_PARAMS | DMGL_ANSI);
	free(heap);
	if (!res || !name[len])
		return res;
	out = malloc(strlen(res) + strlen(name + len) + 4);
	if (out)
		sprintf(out, "%s (%s)", res, name + len);
	free(res);
	return out;
}

/* LLVM's Itanium demangler takes whatever follows the encoding after a
 * '.' as a suffix, libiberty only the clone suffixes of gcc (".cold",
 * ".constprop.0"): "_ZN...17h<hash>E.llvm.123" (Rust legacy after LTO)
 * is demangled by LLVM alone.  So where the whole name fails, each '.'
 * in turn is tried as the suffix's start (a source name may hold dots:
 * Rust's "vtable.shim"). */
/* An inheriting constructor ("CI1"/"CI2", and gcc's "CI4" in DWARF
 * linkage names, with the base class in the mangled name): libiberty
 * names it after the base ("D<T>::B(B args)"),
 * LLVM after its own class ("D<T>::D(B args)").  d (demangled) rewritten
 * in place when it has that shape: the last "::" at nesting depth 0
 * before the parameters' '(', the name before it D, template arguments
 * and ABI tags dropped.  (The new name is never longer: "D<...>" holds D.) */
static void llvm_inheriting_ctor(const char *mangled, char *d)
{
	static const char anon[] = "(anonymous namespace)";
	const char *cls = d, *sep = NULL, *open = NULL;
	size_t depth = 0, clen, blen;

	if (!strstr(mangled, "CI1") && !strstr(mangled, "CI2") && !strstr(mangled, "CI4"))
		return;
	for (const char *p = d; *p && !open; p++) {
		if (!depth && !strncmp(p, anon, sizeof(anon) - 1)) {
			p += sizeof(anon) - 2;
		} else if (*p == '<' || *p == '(' || *p == '[' || *p == '{') {
			if (!depth && *p == '(')
				open = p;
			else
				depth++;
		} else if ((*p == '>' || *p == ')' || *p == ']' || *p == '}') && depth) {
			depth--;
		} else if (!depth && p[0] == ':' && p[1] == ':') {
			if (sep)
				cls = sep + 2;
			sep = p;
			p++;
		}
	}
	if (!open || !sep)
		return;
	/* The class's own name: up to its template arguments or ABI tag. */
	for (clen = 0; cls + clen < sep && cls[clen] != '<' && cls[clen] != '['; clen++)
		;
	blen = (size_t)(open - (sep + 2));
	if (!clen || clen > blen)
		return;
	memcpy((char *)sep + 2, cls, clen);
	memmove((char *)sep + 2 + clen, open, strlen(open) + 1);
}

/* A constructor or destructor of a closure or unnamed type (mangled
 * "...UlvE_C2E...", "...Ut_D1E..."): libiberty names it after the last
 * name it printed ("main::{lambda()#1}::main()", "Foo::{unnamed
 * type#1}::~Foo()"), LLVM gives it none ("main::'lambda'()::()",
 * "Foo::'unnamed'::~()").  d, respelled, rewritten in place where its
 * last "'lambda...'(...)" or "'unnamed...'" is followed by "::", that
 * name and '('. */
static void llvm_closure_structor(const char *mangled, char *d)
{
	static const char *const marks[] = { "_C1E", "_C2E", "_C3E", "_D0E", "_D1E", "_D2E" };
	char *name = NULL, *end;
	bool found = false;

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]) && !found; i++)
		found = strstr(mangled, marks[i]) != NULL;
	if (!found)
		return;
	/* The last closure or unnamed type that is a scope (the parameters
	 * may name closures too). */
	for (char *p = strchr(d, '\''); p; p = strchr(p + 1, '\'')) {
		if (strncmp(p, "'lambda", 7) && strncmp(p, "'unnamed", 8))
			continue;
		if (!(end = strchr(p + 1, '\'')))
			return;
		end++;
		if (*end == '(' && !(end = (char *)closing(end)))
			return;
		if (*end == ')')
			end++;
		if (!strncmp(end, "::", 2))
			name = end + 2 + (end[2] == '~');
		p = end - 1;
	}
	if (!name)
		return;
	for (end = name; isalnum((unsigned char)*end) || *end == '_'; end++)
		;
	if (end == name || *end != '(' || !strncmp(name, "operator", 8))
		return;
	memmove(name, end, strlen(end) + 1);
}

static char *llvm_itanium(const char *name)
{
	char *res = cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI), *out;

	for (const char *dot = strchr(name, '.'); !res && dot; dot = strchr(dot + 1, '.'))
		res = llvm_with_suffix(name, (size_t)(dot - name), cplus_demangle_v3);
	if (!res)
		return NULL;
	out = llvm_template_closes(res);
	free(res);
	if (!out)
		return NULL;
	res = out;
	out = llvm_respell(res);
	free(res);
	if (out) {
		llvm_inheriting_ctor(name, out);
		llvm_closure_structor(name, out);
	}
	return out;
}

/* What llvm-symbolizer 14 prints for s, where it is cheap to follow:
 * "_Z" names through the Itanium demangler alone (Rust legacy names keep
 * their "::h<hash>" and "$LT$" escapes, as LLVM's Itanium demangler
 * leaves them), respelled; "_R" through the Rust v0 demangler, a '.'
 * suffix (which v0 identifiers cannot hold) printed as LLVM does, where
 * libiberty drops it; nothing else (LLVM leaves _GLOBAL__I_ and D names
 * alone).  A part from '@' on is kept aside as in GNU style (LLVM names
 * no PLT entries at all).  NULL: not demangled, or no memory. */
static char *demangle_llvm(const char *s)
{
	const char *at = strchr(s, '@'), *name;
	char buf[256], *heap = NULL, *res = NULL, *out;

	if (s[0] != '_' || (s[1] != 'Z' && s[1] != 'R'))
		return NULL;
	name = at ? cut_at(s, at, buf, sizeof(buf), &heap) : s;
	if (!name)
		return NULL;
	if (s[1] == 'Z')
		res = llvm_itanium(name);
	else
		res = llvm_with_suffix(name, strcspn(name, "."), rust_demangle);
	free(heap);
	if (!res || !at)
		return res;
	out = join3("", 0, res, at);
	free(res);
	return out;
}

/* ------------------------------------------------------------ strings */

static size_t hash_ptr(const char *p, unsigned how)
{
	uint64_t x = ((uintptr_t)p ^ how) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x ^ x >> 29);
}

/* FNV-1a of s, then how; *len its length. */
static uint64_t hash_str(const char *s, unsigned how, size_t *len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *p = s;

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	*len = (size_t)(p - s);
	return (h ^ how) * 0x100000001b3ull;
}

/* Open addressing at half load; false: no memory (the caller goes on
 * without the cache). */
static bool ptab_grow(struct ds_sym_batch *b)
{
	size_t cap = b->pcap ? 2 * b->pcap : 1024;
	struct pslot *t = calloc(cap, sizeof(*t));

	if (!t)
		return false;
	for (size_t i = 0; i < b->pcap; i++) {
		const struct pslot *s = &b->ptab[i];
		size_t h;

		if (s->gen != b->gen)
			continue;
		for (h = hash_ptr(s->key, s->how) & (cap - 1); t[h].gen == b->gen;
		     h = (h + 1) & (cap - 1))
			;
		t[h] = *s;
	}
	free(b->ptab);
	b->ptab = t;
	b->pcap = cap;
	return true;
}

static bool dtab_grow(struct ds_sym_batch *b)
{
	size_t cap = b->dcap ? 2 * b->dcap : 256;
	struct dslot *t = calloc(cap, sizeof(*t));

	if (!t)
		return false;
	for (size_t i = 0; i < b->dcap; i++) {
		size_t h;

		if (!b->dtab[i].mangled)
			continue;
		for (h = b->dtab[i].hash & (cap - 1); t[h].mangled; h = (h + 1) & (cap - 1))
			;
		t[h] = b->dtab[i];
	}
	free(b->dtab);
	b->dtab = t;
	b->dcap = cap;
	return true;
}

/* s demangled the way how says (s itself where it is no mangled name),
 * from the cache or demangled now and kept, its length in *dlen; NULL: no
 * memory. */
static const char *demangled(struct ds_sym_batch *b, const char *s, unsigned how, size_t *dlen)
{
	size_t len, h;
	uint64_t hash = hash_str(s, how, &len);
	const char *m, *d;
	char *dm;

	if (2 * (b->dused + 1) > b->dcap && !dtab_grow(b) && !b->dcap)
		return NULL;
	for (h = hash & (b->dcap - 1); b->dtab[h].mangled; h = (h + 1) & (b->dcap - 1))
		if (b->dtab[h].hash == hash && b->dtab[h].how == how &&
		    !strcmp(b->dtab[h].mangled, s)) {
			*dlen = b->dtab[h].len;
			return b->dtab[h].demangled;
		}
	if (b->dused + 1 >= b->dcap)
		return NULL; /* full and could not grow */
	dm = how == DM_LLVM  ? demangle_llvm(s)
	     : how == DM_PERF ? demangle_gnu(s, DMGL_NO_OPTS)
			      : demangle_gnu(s, DMGL_PARAMS | DMGL_ANSI);
	m = arena_strdup(&b->dm_strings, s, len);
	if (dm)
		len = strlen(dm);
	d = !m ? NULL : dm ? arena_strdup(&b->dm_strings, dm, len) : m;
	free(dm);
	if (d) {
		b->dtab[h] = (struct dslot){ .mangled = m, .demangled = d, .hash = hash,
					     .len = len, .how = (uint8_t)how };
		b->dused++;
	}
	*dlen = len;
	return d;
}

/* The string this call answers for the index's s: a copy, or demangled
 * the way how says; its length in *len. */
static const char *answer_string(struct ds_sym_batch *b, const char *s, unsigned how,
				 unsigned *len)
{
	struct pslot *slot = NULL;
	const char *val;
	size_t n = 0;

	struct pslot *r = &b->recent[((uintptr_t)s >> 3 ^ (uintptr_t)s >> 11 ^ how) & (RECENT - 1)];

	if (r->key == s && r->gen == b->gen && r->how == how) {
		*len = r->len;
		return r->val;
	}
	if (2 * (b->pused + 1) <= b->pcap || ptab_grow(b)) {
		size_t mask = b->pcap - 1, h = hash_ptr(s, how) & mask;

		for (; b->ptab[h].gen == b->gen; h = (h + 1) & mask)
			if (b->ptab[h].key == s && b->ptab[h].how == how) {
				*r = b->ptab[h];
				*len = r->len;
				return r->val;
			}
		slot = &b->ptab[h];
	}
	if (how) {
		val = demangled(b, s, how, &n);
	} else {
		n = strlen(s);
		val = arena_strdup(&b->strings, s, n);
	}
	if (!val || n > UINT32_MAX) /* (no index holds a name of 4 GiB) */
		return NULL;
	*len = (unsigned)n;
	if (slot) {
		*slot = (struct pslot){ .key = s, .val = val, .gen = b->gen, .len = *len,
					.how = (uint8_t)how };
		*r = *slot;
		b->pused++;
	}
	return val;
}

/* ------------------------------------------------------------ lookups */

static int emit_frame(void *arg, const struct ds__raw_frame *f)
{
	struct ds_sym_batch *b = arg;
	const char *fn = NULL, *file = NULL;
	unsigned fn_len = 0, file_len = 0;

	if (b->nframes == b->frame_cap) {
		size_t cap = b->frame_cap ? 2 * b->frame_cap : 64;

		if (!grow((void **)&b->frames, cap, sizeof(*b->frames)))
			return -ENOMEM;
		b->frame_cap = cap;
	}
	if (f->function) {
		unsigned how = b->demangle && maybe_mangled(f->function) ? b->demangle : DM_NONE;

		fn = answer_string(b, f->function, how, &fn_len);
		if (!fn)
			return -ENOMEM;
	}
	if (f->file && !(file = answer_string(b, f->file, DM_NONE, &file_len)))
		return -ENOMEM;
	b->frames[b->nframes++] = (struct ds_frame){
		.function = fn,
		.function_start = f->function_start,
		.file = file,
		.line = f->line,
		.column = f->column,
		.discriminator = f->discriminator,
		.inlined = f->inlined,
		.function_len = fn_len,
		.file_len = file_len,
	};
	return 0;
}

int ds__sym_batch_lookup(struct ds_sym_batch *b, struct ds_symbols *S, unsigned flags)
{
	struct ds__find_hint hint = { 0 };
	int found = 0;

	b->demangle = !(flags & DS_SYM_DEMANGLE)  ? DM_NONE
		      : flags & DS_SYM_LLVM_NAMES ? DM_LLVM
		      : flags & DS_SYM_NO_PARAMS  ? DM_PERF
						  : DM_GNU;
	for (size_t k = 0; k < b->npairs;) {
		uint64_t v = b->pairs[k].key;
		size_t first = b->nframes;
		bool from_symtab = false;
		int err = ds__symbols_find(S, v, flags, &hint, &from_symtab, emit_frame, b);
		struct ds_sym_answer a = { .addr = v };

		if (err) { /* an error has no frames */
			b->nframes = first;
			answer_error(&a, v, err > 0 ? -EIO : err);
		} else {
			a.nframes = (uint32_t)(b->nframes - first);
			a.status = a.nframes ? DS_SYM_FOUND : DS_SYM_NOT_FOUND;
			a.from_symtab = from_symtab;
		}
		/* Repeats of v share its frames. */
		for (; k < b->npairs && b->pairs[k].key == v; k++) {
			uint32_t i = b->pairs[k].idx;

			b->ans[i] = a;
			b->first[i] = first;
			found += a.nframes > 0;
		}
	}
	/* The frames have stopped moving. */
	for (size_t i = 0; i < b->n; i++)
		b->ans[i].frames = b->ans[i].nframes ? b->frames + b->first[i] : NULL;
	return found;
}

/* s copied to *p (moved past it); NULL stays NULL. */
static const char *move_string(char **p, const char *s)
{
	size_t len = s ? strlen(s) + 1 : 0;
	char *to = *p;

	if (!s)
		return NULL;
	memcpy(to, s, len);
	*p += len;
	return to;
}

int ds__sym_result_from(const struct ds_sym_answer *a, struct ds_sym_result *out)
{
	size_t strs = 0, head = a->nframes * sizeof(struct ds_frame);
	char *p;

	*out = (struct ds_sym_result){ .addr = a->addr, .from_symtab = a->from_symtab };
	if (a->error || !a->nframes)
		return a->error;
	for (size_t i = 0; i < a->nframes; i++) {
		strs += a->frames[i].function ? strlen(a->frames[i].function) + 1 : 0;
		strs += a->frames[i].file ? strlen(a->frames[i].file) + 1 : 0;
	}
	/* Frames and strings in one block (frames first: aligned). */
	out->frames = malloc(head + strs);
	if (!out->frames)
		return -ENOMEM;
	memcpy(out->frames, a->frames, head);
	p = (char *)out->frames + head;
	for (size_t i = 0; i < a->nframes; i++) {
		struct ds_frame *f = &out->frames[i];

		f->function = move_string(&p, f->function);
		f->file = move_string(&p, f->file);
	}
	out->nframes = a->nframes;
	return 0;
}

DS_API void ds_sym_result_release(struct ds_sym_result *res)
{
	if (!res)
		return;
	free(res->frames);
	free(res->_strings);
	res->frames = NULL;
	res->_strings = NULL;
	res->nframes = 0;
}

/* ------------------------------------------------------- request lines */

static bool parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	if (!len || len > 16)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned d = c >= '0' && c <= '9'   ? c - '0'
			     : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
								       : 16;

		if (d > 15)
			return false;
		v = v << 4 | d;
	}
	*out = v;
	return true;
}

DS_API int ds_sym_parse_line(const char *line, size_t len, char *key, size_t keylen,
			     struct ds_build_id *bid, uint64_t *addr)
{
	const char *word[3];
	size_t wlen[3], n = 0, i = 0;

	if (!line || !addr)
		return -EINVAL;
	/* Up to three words; a third is an error. */
	while (i < len && n < 3) {
		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' ||
				   line[i] == '\n'))
			i++;
		if (i == len)
			break;
		word[n] = line + i;
		while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' &&
		       line[i] != '\n' && line[i] != 0)
			i++;
		if (i < len && line[i] == 0)
			return -EINVAL; /* a NUL inside the line */
		wlen[n] = (size_t)(line + i - word[n]);
		n++;
	}
	if (n == 0)
		return DS_SYM_LINE_EMPTY;
	if (n == 3 || !parse_hex(word[n - 1], wlen[n - 1], addr))
		return -EINVAL;
	if (n == 1)
		return DS_SYM_LINE_ADDR;
	if (!key || wlen[0] >= keylen)
		return -EINVAL;
	memcpy(key, word[0], wlen[0]);
	key[wlen[0]] = 0;
	/* A path has a '/'; a build ID is hex only. */
	if (!memchr(word[0], '/', wlen[0]) && bid && ds_build_id_parse(key, bid) == 0)
		return DS_SYM_LINE_BUILD_ID;
	return DS_SYM_LINE_PATH;
}
