// SPDX-License-Identifier: MIT
/*
 * perf's configuration files (~/.perfconfig, $PERF_CONFIG), read for the
 * one setting dsostore shares with perf: buildid.dir, the root of perf's
 * build-id cache.
 *
 * The syntax is git's (perf's util/config.c is git's config.c of 2009):
 * "[section]" or "[section "subsection"]" headers, "name = value" lines,
 * '#' and ';' comments outside quotes, values trimmed of blanks unless
 * quoted, \\ \" \n \t \b escapes, a backslash at the end of a line going
 * on to the next; section and variable names are case-insensitive.  The
 * last assignment wins, as in perf (each one overwrites its buildid_dir).
 *
 * Precedence, as perf 6.1's perf.c/config.c: $PERF_CONFIG set: that file
 * only ("" or unreadable: none); else /etc/perfconfig (unless
 * $PERF_CONFIG_NOSYSTEM) then $HOME/.perfconfig (unless
 * $PERF_CONFIG_NOGLOBAL), the later winning.
 */
#define _GNU_SOURCE
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A config file is small; one larger than this is not read. */
#define PERFCONFIG_MAX (1u << 20)

struct cfg_parser {
	const char *p, *end;
	char section[128];
	bool section_ok; /* the current section is the one asked for */
};

static int peek(const struct cfg_parser *c)
{
	return c->p < c->end ? (unsigned char)*c->p : -1;
}

static void skip_blanks(struct cfg_parser *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

static void skip_line(struct cfg_parser *c)
{
	const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));

	c->p = nl ? nl + 1 : c->end;
}

/* "[name]", "[name "sub"]" (sub is case-sensitive, escapes allowed) or the
 * old "[name.sub]": the section's full name in c->section, lower-cased
 * outside the quotes.  false: a malformed header (its line is skipped). */
static bool parse_section(struct cfg_parser *c)
{
	size_t n = 0;

	c->p++; /* '[' */
	while (c->p < c->end && (isalnum((unsigned char)*c->p) || *c->p == '-' || *c->p == '.')) {
		if (n + 1 < sizeof(c->section))
			c->section[n++] = (char)tolower((unsigned char)*c->p);
		c->p++;
	}
	if (peek(c) == ' ' || peek(c) == '\t') {
		skip_blanks(c);
		if (peek(c) != '"')
			return false;
		c->p++;
		if (n + 1 < sizeof(c->section))
			c->section[n++] = '.';
		while (c->p < c->end && *c->p != '"' && *c->p != '\n') {
			if (*c->p == '\\' && c->p + 1 < c->end && c->p[1] != '\n')
				c->p++;
			if (n + 1 < sizeof(c->section))
				c->section[n++] = *c->p;
			c->p++;
		}
		if (peek(c) != '"')
			return false;
		c->p++;
	}
	c->section[n] = 0;
	if (peek(c) != ']' || !n)
		return false;
	c->p++;
	return true;
}

/* The value after '=', unquoted and unescaped, into out (cut to outlen-1
 * bytes; *cut says so).  The line (and its continuations) consumed. */
static void parse_value(struct cfg_parser *c, char *out, size_t outlen, bool *cut)
{
	size_t n = 0, keep = 0; /* keep: length up to the last byte not to trim */
	bool quoted = false;

	skip_blanks(c);
	while (c->p < c->end) {
		char ch = *c->p++;

		if (ch == '\n' && !quoted)
			break;
		if (!quoted && (ch == '#' || ch == ';')) {
			skip_line(c);
			break;
		}
		if (ch == '"') {
			quoted = !quoted;
			keep = n;
			continue;
		}
		if (ch == '\\') {
			if (c->p >= c->end)
				break;
			ch = *c->p++;
			if (ch == '\n')
				continue; /* a continuation */
			ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'b' ? '\b' : ch;
		} else if (!quoted && (ch == ' ' || ch == '\t' || ch == '\r')) {
			if (n && n + 1 < outlen)
				out[n++] = ch;
			else if (n)
				*cut = true;
			continue; /* not kept unless something follows */
		}
		if (n + 1 < outlen)
			out[n++] = ch;
		else
			*cut = true;
		keep = n;
	}
	out[keep] = 0;
}

int ds__perfconfig_get(const char *text, size_t len, const char *name, char *out, size_t outlen)
{
	struct cfg_parser c = { .p = text, .end = text + len };
	const char *dot = strrchr(name, '.');
	size_t seclen = dot ? (size_t)(dot - name) : 0;
	int found = 0;

	if (!dot || !outlen)
		return -EINVAL;
	while (c.p < c.end) {
		const char *key;
		size_t keylen;

		skip_blanks(&c);
		if (peek(&c) == '[') {
			if (!parse_section(&c)) {
				c.section[0] = 0;
				c.section_ok = false;
				skip_line(&c);
				continue;
			}
			c.section_ok = strlen(c.section) == seclen &&
				       !strncasecmp(c.section, name, seclen);
			continue; /* "[s] key = v" on one line is allowed */
		}
		if (peek(&c) < 0)
			break;
		if (!isalpha(peek(&c))) { /* comments, blank lines, junk */
			skip_line(&c);
			continue;
		}
		key = c.p;
		while (c.p < c.end && (isalnum((unsigned char)*c.p) || *c.p == '-'))
			c.p++;
		keylen = (size_t)(c.p - key);
		skip_blanks(&c);
		if (peek(&c) != '=') {
			skip_line(&c); /* "key" alone (a boolean) or junk */
			continue;
		}
		c.p++;
		if (c.section_ok && keylen == strlen(dot + 1) && !strncasecmp(key, dot + 1, keylen)) {
			bool cut = false;

			parse_value(&c, out, outlen, &cut);
			found = cut ? -ENAMETOOLONG : 1;
		} else {
			char sink[2];
			bool cut = false;

			parse_value(&c, sink, sizeof(sink), &cut);
		}
	}
	return found;
}

/* name's value in the file at path: 1, 0 (not set, or no file), < 0. */
static int file_get(const char *path, const char *name, char *out, size_t outlen)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t len;
	int rc;

	if (!f)
		return 0;
	if (!(buf = malloc(PERFCONFIG_MAX))) {
		fclose(f);
		return -ENOMEM;
	}
	len = fread(buf, 1, PERFCONFIG_MAX, f);
	rc = len == PERFCONFIG_MAX ? -EFBIG : ds__perfconfig_get(buf, len, name, out, outlen);
	fclose(f);
	free(buf);
	return rc;
}

/* As perf's perf_env_bool(): set and not "0", "false", "no", "off". */
static bool env_bool(const char *var)
{
	const char *v = getenv(var);

	return v && strcmp(v, "0") && strcasecmp(v, "false") && strcasecmp(v, "no") &&
	       strcasecmp(v, "off");
}

int ds__perfconfig(const char *name, char *out, size_t outlen)
{
	const char *exclusive = getenv("PERF_CONFIG"), *home = getenv("HOME");
	char tmp[PATH_MAX], user[PATH_MAX];
	int found = 0, rc;

	if (exclusive)
		return *exclusive ? file_get(exclusive, name, out, outlen) : 0;
	if (!env_bool("PERF_CONFIG_NOSYSTEM")) {
		rc = file_get("/etc/perfconfig", name, out, outlen);
		if (rc < 0)
			return rc;
		found |= rc;
	}
	if (!env_bool("PERF_CONFIG_NOGLOBAL") && home && *home) {
		snprintf(user, sizeof(user), "%s/.perfconfig", home);
		rc = file_get(user, name, tmp, sizeof(tmp));
		if (rc < 0)
			return rc;
		if (rc > 0) {
			snprintf(out, outlen, "%s", tmp);
			found = 1;
		}
	}
	return found;
}
