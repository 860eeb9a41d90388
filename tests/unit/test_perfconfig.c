/* perf's config files (lib/common/perfconfig.c) against git config, whose syntax
 * perf's parser is (perf's util/config.c is git's config.c): each case a
 * file, the value of buildid.dir (and of a second name) as
 * `git config -f FILE --get NAME` prints it, or its absence.  Then the
 * files perf reads, in its order (PERF_CONFIG alone; /etc/perfconfig then
 * ~/.perfconfig), through a context's default perf build-id dir, which
 * $PERF_BUILDID_DIR still overrides. */
#define _GNU_SOURCE
#include "testutil.h"

#include "debuginfod.h"

#include <dsostore.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cases[] = {
	"[buildid]\n\tdir = /srv/cache\n",
	"[buildid]\ndir=/a\ndir = /b\n", /* the last wins */
	"[BuildID]\n\tDIR = /upper\n",
	"[buildid]\n\tdir = \"/with space \\\"q\\\"\" ; comment\n",
	"[buildid]\n\tdir = /hash # comment\n\t# dir = /no\n",
	"[buildid] dir = /inline\n",
	"[buildid \"sub\"]\n\tdir = /sub\n[buildid]\n\tdir = /plain\n",
	"[buildid \"sub\"]\n\tdir = /subonly\n",
	"[buildid.sub]\n\tdir = /old-style\n",
	"[core]\n\tdir = /other\n",
	"[buildid]\n\tdir = /cont\\\ninued\n",
	"[buildid]\n\tdir = a\\tb\\\\c\n",
	"[buildid]\n\tdir =    trailing   \n",
	"[buildid]\n\tdir =\n",
	"\n\n  [buildid]  \n  dir = /indented  \n",
	"[buildid]\n\tdir = /crlf\r\n",
	"[buildid]\r\n\tdir = \"q\"uoted\" part\"\n",
	"[buildid]\n\tdirx = /no\n\tdi = /no2\n",
};

/* git config's value, or NULL when it has none. */
static char *git_value(const char *file, const char *name)
{
	char cmd[1024], buf[4096];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "git config -f '%s' --get %s 2>/dev/null", file, name);
	p = popen(cmd, "r");
	CHECK(p);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	if (pclose(p) != 0)
		return NULL;
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return strdup(buf);
}

static void one(const char *text, const char *name)
{
	const char *file = t_path("case.cfg");
	char out[256];
	char *want;
	int rc;

	t_write_file(file, text);
	want = git_value(file, name);
	rc = ds__perfconfig_get(text, strlen(text), name, out, sizeof(out));
	if (!want ? rc != 0 : rc != 1 || strcmp(out, want)) {
		fprintf(stderr, "case %s of <<%s>>: git config says %s%s%s, we %d '%s'\n", name, text,
			want ? "'" : "", want ? want : "(none)", want ? "'" : "", rc,
			rc == 1 ? out : "");
		CHECK(0);
	}
	free(want);
	free((char *)file);
}

static char *ctx_perf_dir(void)
{
	struct ds_context *ctx = ds_context_new(NULL);
	char *dir;

	CHECK(ctx);
	dir = ctx->perf_buildid_dir ? strdup(ctx->perf_buildid_dir) : strdup("(none)");
	ds_context_free(ctx);
	return dir;
}

int main(void)
{
	char *home, *cfg, *dir;

	if (system("git --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "SKIP: no git\n");
		return 77;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		one(cases[i], "buildid.dir");
		one(cases[i], "core.dir");
	}
	/* A value longer than the buffer is refused, not cut silently. */
	{
		char small[4];
		const char *t = "[buildid]\ndir = /long/path\n";

		CHECK_EQ_INT(ds__perfconfig_get(t, strlen(t), "buildid.dir", small, sizeof(small)),
			     -ENAMETOOLONG);
	}

	home = t_path("home");
	cfg = t_path("exclusive.cfg");
	{
		char *x = t_path("home/x"), *user = t_path("home/.perfconfig");

		t_mkdir_parents(x);
		t_write_file(user, "[buildid]\n\tdir = /from-home\n");
		free(x);
		free(user);
	}
	t_write_file(cfg, "[buildid]\n\tdir = /from-perf-config\n");
	setenv("HOME", home, 1);
	unsetenv("PERF_BUILDID_DIR");
	unsetenv("PERF_CONFIG");
	setenv("PERF_CONFIG_NOSYSTEM", "1", 1); /* not this machine's /etc/perfconfig */
	dir = ctx_perf_dir();
	CHECK(!strcmp(dir, "/from-home"));
	free(dir);
	setenv("PERF_CONFIG", cfg, 1); /* that file only */
	dir = ctx_perf_dir();
	CHECK(!strcmp(dir, "/from-perf-config"));
	free(dir);
	setenv("PERF_CONFIG", "/dev/null", 1); /* none: ~/.debug */
	dir = ctx_perf_dir();
	CHECK(!strcmp(dir + strlen(home), "/.debug") && !strncmp(dir, home, strlen(home)));
	free(dir);
	unsetenv("PERF_CONFIG");
	setenv("PERF_CONFIG_NOGLOBAL", "yes", 1);
	dir = ctx_perf_dir();
	CHECK(!strcmp(dir + strlen(home), "/.debug"));
	free(dir);
	unsetenv("PERF_CONFIG_NOGLOBAL");
	setenv("PERF_BUILDID_DIR", "/from-env", 1); /* what perf gives the tools it runs */
	dir = ctx_perf_dir();
	CHECK(!strcmp(dir, "/from-env"));
	free(dir);
	free(home);
	free(cfg);
	return t_done("test_perfconfig");
}
