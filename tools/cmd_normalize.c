/* dsostore normalize: absolute addresses of a live process as (build ID,
 * file offset, ELF virtual address, path), what a profiling agent sends to
 * where it symbolizes (symbolize's "pid:PID ADDR" lines: tools/cli_pid.c). */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_PID = 1, O_JSON, O_NO_PROCMAP_QUERY, O_NO_PERF_MAP };

static const struct cli_opt normalize_opts[] = {
	{ O_PID, 0, "pid", "PID", "the process", 0 },
	{ O_JSON, 0, "json", NULL, "one JSON object per address", 0 },
	{ O_NO_PROCMAP_QUERY, 0, "no-procmap-query", NULL,
	  "read /proc/PID/maps' text, not the PROCMAP_QUERY ioctl", 0 },
	{ O_NO_PERF_MAP, 0, "no-perf-map", NULL, "do not read the process's /tmp/perf-PID.map", 0 },
	{ 0 },
};
static const struct cli_opt *const normalize_tables[] = { normalize_opts, cli_opts_lookup,
							  cli_opts_verbose, cli_opts_help, NULL };

static bool parse_hex(const char *s, uint64_t *out)
{
	return ds_sym_parse_line(s, strlen(s), NULL, 0, NULL, out) == DS_SYM_LINE_ADDR;
}

static void push_addr(uint64_t **addrs, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*addrs = realloc(*addrs, *cap * sizeof(**addrs));
		if (!*addrs) {
			cli_error("out of memory");
			exit(2);
		}
	}
	(*addrs)[(*n)++] = v;
}

static void print_hex_or_dash(const char *pre, bool known, uint64_t v)
{
	if (known)
		printf("%s0x%" PRIx64, pre, v);
	else
		printf("%s-", pre);
}

static void print_one(const struct ds_norm_addr *a, bool json)
{
	char hex[2 * DS_BUILD_ID_MAX + 1] = "-";
	bool mapped = a->path != NULL;

	if (a->build_id.size)
		ds_build_id_format(&a->build_id, hex, sizeof(hex));
	if (json) {
		printf("{\"addr\":\"0x%" PRIx64 "\",\"reason\":", a->addr);
		cli_json_string(ds_norm_reason_name(a->reason));
		printf(",\"build_id\":");
		cli_json_string(a->build_id.size ? hex : NULL);
		if (mapped)
			printf(",\"file_offset\":\"0x%" PRIx64 "\"", a->file_offset);
		else
			printf(",\"file_offset\":null");
		if (a->vaddr_known)
			printf(",\"vaddr\":\"0x%" PRIx64 "\"", a->vaddr);
		else
			printf(",\"vaddr\":null");
		printf(",\"path\":");
		cli_json_string(a->path);
		if (a->reason == DS_NORM_JIT) {
			printf(",\"jit_name\":");
			cli_json_string(a->jit_name);
			printf(",\"jit_start\":\"0x%" PRIx64 "\"", a->jit_start);
		}
		if (a->reason == DS_NORM_ERROR) {
			printf(",\"error\":");
			cli_json_string(ds_strerror(a->error));
		}
		printf("}\n");
		return;
	}
	printf("0x%" PRIx64 " %s", a->addr, hex);
	print_hex_or_dash(" ", mapped, a->file_offset);
	print_hex_or_dash(" ", a->vaddr_known, a->vaddr);
	printf(" %s", a->path ? cli_t(a->path) : "-");
	if (a->reason == DS_NORM_JIT)
		printf(" jit %s", cli_t(a->jit_name));
	else if (a->reason == DS_NORM_ERROR)
		printf(" error: %s", ds_strerror(a->error));
	else if (a->reason != DS_NORM_OK)
		printf(" %s", ds_norm_reason_name(a->reason));
	putchar('\n');
}

static int cmd_normalize(int argc, char **argv)
{
	DS_OPTS(ds_normalizer_opts, no);
	struct cli_common common = { 0 };
	struct ds_normalizer *n = NULL;
	struct ds_store *store = NULL;
	struct ds_context *ctx;
	uint64_t *addrs = NULL;
	size_t naddrs = 0, cap = 0;
	bool json = false;
	int pid = 0, status = 0, rc;
	char *line = NULL;
	size_t llen = 0;

	struct cli_parse p;
	uint64_t addr;
	int id;

	cli_parse_init(&p, &cli_cmd_normalize, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id == CLI_BAD || id == CLI_HELP) {
			free(addrs);
			return id == CLI_HELP ? 0 : 2;
		}
		if (id == O_PID) {
			if (!cli_parse_pid(p.arg, &pid))
				goto bad_pid;
		} else if (id == O_JSON) {
			json = true;
		} else if (id == O_NO_PROCMAP_QUERY) {
			no.no_procmap_query = true;
		} else if (id == O_NO_PERF_MAP) {
			no.no_perf_map = true;
		} else if (parse_hex(p.arg, &addr)) {
			push_addr(&addrs, &naddrs, &cap, addr);
		} else {
			cli_error("normalize: '%s' is not an address (see --help)", p.arg);
			free(addrs);
			return 2;
		}
	}
	if (!pid) {
		cli_error("normalize: --pid PID is required");
		free(addrs);
		return 2;
	}
	ctx = cli_context(&common);
	store = ds_store_new(ctx, "host", NULL);
	ds_context_free(ctx);
	n = store ? ds_normalizer_new(store, pid, &no) : NULL;
	if (!n) {
		cli_error("normalize: process %d: %s", pid, ds_strerror(-errno));
		free(addrs);
		ds_store_free(store);
		return 1;
	}
	if (!naddrs) {
		ssize_t got;

		while ((got = getline(&line, &llen, stdin)) >= 0) {
			uint64_t v;

			line[strcspn(line, "\r\n")] = 0;
			if (!line[0])
				continue;
			if (!parse_hex(line, &v)) {
				cli_error("normalize: '%s': not a hexadecimal address", line);
				status = 1;
				continue;
			}
			push_addr(&addrs, &naddrs, &cap, v);
		}
		free(line);
	}
	{
		struct ds_norm_addr *out = calloc(naddrs ? naddrs : 1, sizeof(*out));

		if (!out) {
			cli_error("out of memory");
			return 2;
		}
		rc = ds_normalize(n, addrs, naddrs, out);
		if (rc < 0 && rc != -ESRCH) {
			cli_error("normalize: %s", ds_strerror(rc));
			status = 1;
		}
		for (size_t i = 0; i < naddrs; i++) {
			print_one(&out[i], json);
			if (out[i].reason == DS_NORM_ERROR)
				status = 1;
		}
		ds_norm_release(out, naddrs);
		free(out);
	}
	ds_normalizer_free(n);
	ds_store_free(store);
	free(addrs);
	return status;
bad_pid:
	cli_error("normalize: --pid wants a process ID");
	free(addrs);
	return 2;
}

const struct cli_command cli_cmd_normalize = {
	.name = "normalize",
	.run = cmd_normalize,
	.summary = "a live process's addresses as build ID, file offset, vaddr",
	.usage = "--pid PID [--json] [OPTIONS] [ADDR...]",
	.about = "Each ADDR (hex, 0x optional; read from stdin, one a line, when none is given),\n"
		 "an absolute address of process PID, as one line:\n"
		 "  ADDR BUILD-ID FILE-OFFSET VADDR PATH          (hex numbers, 0x-prefixed)\n"
		 "or, when it cannot be normalized, \"-\" for what is unknown and the reason\n"
		 "last (unmapped, anonymous, jit NAME, no build ID, kernel, error: ...).\n",
	.tables = normalize_tables,
};
