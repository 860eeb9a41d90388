/* SPDX-License-Identifier: MIT */
/*
 * Name spelling and demangling: C++ and Rust names through libiberty, as
 * binutils (addr2line -C, c++filt), perf (no parameters) and
 * llvm-symbolizer 14 print them.  Apart from the batch queries
 * (symbolize.c), which only call these and cache what they give: the
 * spellings are pure functions of a name, with tests of their own
 * (tests/symbolize_names.sh), and nothing here knows of a batch.
 */
#define _GNU_SOURCE
#include "names.h"

#include <ctype.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
bool ds__maybe_mangled(const char *s)
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
char *ds__demangle_gnu(const char *s, int opts)
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
char *ds__demangle_llvm(const char *s)
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
