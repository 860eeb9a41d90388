/* SPDX-License-Identifier: MIT */
/* The context: configuration shared by all stores (its log, its cache,
 * its fetcher). */
#define _GNU_SOURCE
#include "debuginfod.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const default_debug_dirs[] = { "/usr/lib/debug", NULL };

static void log_stderr(void *user, enum ds_log_level level, const char *msg)
{
	(void)user;
	(void)level;
	/* messages quote paths, names and servers' words: escaped */
	fputs("dsostore: ", stderr);
	ds_term_puts(stderr, msg);
	fputc('\n', stderr);
}

/* $PERF_BUILDID_DIR (what perf sets for the tools it runs), else perf's
 * buildid.dir setting (lib/common/perfconfig.c), else $HOME/.debug. */
static char *default_perf_buildid_dir(void)
{
	const char *env = getenv("PERF_BUILDID_DIR");
	char cfg[PATH_MAX];
	const char *home;
	char *dir;

	if (env)
		return strdup(env);
	if (ds__perfconfig("buildid.dir", cfg, sizeof(cfg)) > 0 && cfg[0])
		return strdup(cfg);
	home = getenv("HOME");
	if (!home || !*home)
		return strdup("");
	if (asprintf(&dir, "%s/.debug", home) < 0)
		return NULL;
	return dir;
}

static void context_destroy(struct ds_context *ctx)
{
	if (ctx->debug_dirs) {
		for (char **d = ctx->debug_dirs; *d; d++)
			free(*d);
		free(ctx->debug_dirs);
	}
	free(ctx->perf_buildid_dir);
	free(ctx->kallsyms);
	free(ctx->kernel_root);
	ds__fetcher_free(atomic_load(&ctx->fetcher));
	ds__fetch_config_release(&ctx->fetch_cfg);
	if (ctx->cache.root)
		ds__cache_release(&ctx->cache);
	pthread_mutex_destroy(&ctx->fetcher_lock);
	free(ctx);
}

static int copy_debug_dirs(struct ds_context *ctx, const char *const *dirs)
{
	size_t n = 0;

	while (dirs[n])
		n++;
	ctx->debug_dirs = calloc(n + 1, sizeof(*ctx->debug_dirs));
	if (!ctx->debug_dirs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		ctx->debug_dirs[i] = strdup(dirs[i]);
		if (!ctx->debug_dirs[i])
			return -ENOMEM;
	}
	return 0;
}

DS_API struct ds_context *ds_context_new(const struct ds_context_opts *opts)
{
	const char *const *dirs = DS_OPT(opts, debug_dirs, NULL);
	const char *perf_dir = DS_OPT(opts, perf_buildid_dir, NULL);
	struct ds_context *ctx;
	int err;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	atomic_init(&ctx->refcnt, 1);
	ctx->dirindex = DS_OPT(opts, dirindex, NULL);
	ctx->miss_ttl_s = DS_OPT(opts, miss_ttl_s, 0);
	if (ctx->miss_ttl_s == 0)
		ctx->miss_ttl_s = DS_MISS_TTL_DEFAULT;
	ctx->log.fn = DS_OPT(opts, log_fn, NULL);
	ctx->log.user = DS_OPT(opts, log_user, NULL);
	ctx->log.level = DS_OPT(opts, log_level, DS_LOG_ERROR);
	/* As the elfutils client: DEBUGINFOD_VERBOSE asks for a trace on
	 * stderr when the caller has not taken the log. */
	if (!ctx->log.fn && getenv("DEBUGINFOD_VERBOSE")) {
		ctx->log.fn = log_stderr;
		ctx->log.level = DS_LOG_INFO;
	}
	pthread_mutex_init(&ctx->fetcher_lock, NULL);
	atomic_init(&ctx->fetcher, NULL);
	atomic_init(&ctx->cache_hits, 0);
	ctx->cancel = DS_OPT(opts, cancel, NULL);

	err = copy_debug_dirs(ctx, dirs ? dirs : default_debug_dirs);
	if (err)
		goto fail;
	ctx->perf_buildid_dir = perf_dir ? strdup(perf_dir) : default_perf_buildid_dir();
	if (!ctx->perf_buildid_dir) {
		err = -ENOMEM;
		goto fail;
	}
	if (!*ctx->perf_buildid_dir) {
		free(ctx->perf_buildid_dir);
		ctx->perf_buildid_dir = NULL;
	}
	{
		const char *ks = DS_OPT(opts, kallsyms, NULL);
		const char *root = DS_OPT(opts, kernel_root, NULL);

		if (!root)
			root = getenv("DSOSTORE_KERNEL_ROOT");
		if ((ks && *ks && !(ctx->kallsyms = strdup(ks))) ||
		    (root && *root && strcmp(root, "/") && !(ctx->kernel_root = strdup(root)))) {
			err = -ENOMEM;
			goto fail;
		}
	}
	err = ds__cache_init(&ctx->cache, DS_OPT(opts, cache_path, NULL), &ctx->log);
	if (!err)
		err = ds__cache_symindex_init(&ctx->cache, DS_OPT(opts, symindex_path, NULL),
					      DS_OPT(opts, symindex, 0));
	if (!err)
		err = ds__fetch_config_init(&ctx->fetch_cfg, opts, &ctx->log);
	if (err)
		goto fail;
	ds__elf_init();
	return ctx;
fail:
	context_destroy(ctx);
	errno = -err;
	return NULL;
}

struct ds_context *ds__context_get(struct ds_context *ctx)
{
	atomic_fetch_add_explicit(&ctx->refcnt, 1, memory_order_relaxed);
	return ctx;
}

void ds__context_put(struct ds_context *ctx)
{
	if (ctx && atomic_fetch_sub_explicit(&ctx->refcnt, 1, memory_order_acq_rel) == 1)
		context_destroy(ctx);
}

DS_API void ds_context_free(struct ds_context *ctx)
{
	ds__context_put(ctx);
}
