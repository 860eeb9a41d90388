// SPDX-License-Identifier: MIT
/*
 * serve_load: bench_serve.sh's load generator for the federated misses, a
 * libcurl multi driver: each URL read from stdin fetched once, at most
 * CONNS at a time, each body written to DIR/<the URL's last-but-one
 * component> (the build ID of /buildid/ID/debuginfo) for the bench to
 * check.  Prints a line per URL, "CODE MS ID", in the order they ended,
 * then "wall MS", from the first request to the last answer.
 *
 *   serve_load -c CONNS -o DIR <urls
 *
 * Why not `curl -Z --parallel-max CONNS -K config` (what the bench used
 * first): straight to dsserver with 50 ms of latency, 200 build IDs over
 * 32 connections took 1.15x-1.21x of the floor (7 x 50 ms) with curl's
 * tool, where the fetcher's own libcurl multi loop (bench_fetch's
 * ds_fetch_batch() row) takes 1.04x: the tool adds a few ms to each
 * transfer it starts.  A node's overhead was less than that tool's
 * spread.  This driver starts the next transfer as soon as one ends.
 */
#define _GNU_SOURCE
#include "benchutil.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct one {
	char *url, *id;
	char *body;
	size_t len, cap;
	uint64_t start_ns;
	bool failed; /* out of memory for its body */
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct one *o = arg;
	size_t len = size * n;

	if (o->len + len > o->cap) {
		size_t cap = o->cap ? o->cap : 65536;
		char *b;

		while (cap < o->len + len)
			cap *= 2;
		if (!(b = realloc(o->body, cap))) {
			o->failed = true;
			return 0;
		}
		o->body = b;
		o->cap = cap;
	}
	memcpy(o->body + o->len, p, len);
	o->len += len;
	return len;
}

/* The URL's last-but-one component: the build ID of /buildid/ID/WHAT. */
static char *id_of(const char *url)
{
	const char *end = strrchr(url, '/'), *start = end;

	while (start && start > url && start[-1] != '/')
		start--;
	if (!end || start == end || end - start > 128)
		die("no /ID/ in %s", url);
	return strndup(start, (size_t)(end - start));
}

static void start(CURLM *m, CURL *e, struct one *o)
{
	curl_easy_setopt(e, CURLOPT_URL, o->url);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, o);
	curl_easy_setopt(e, CURLOPT_PRIVATE, o);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	o->start_ns = now_ns();
	if (curl_multi_add_handle(m, e) != CURLM_OK)
		die("curl_multi_add_handle: %s", o->url);
}

int main(int argc, char **argv)
{
	struct one *all = NULL;
	size_t n = 0, cap = 0, next = 0, done = 0;
	long conns = 0;
	const char *dir = NULL;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t got;
	uint64_t t0;
	CURLM *m;
	int opt;

	bench_name = "serve_load";
	while ((opt = getopt(argc, argv, "c:o:")) != -1) {
		if (opt == 'c')
			conns = strtol(optarg, NULL, 10);
		else if (opt == 'o')
			dir = optarg;
		else
			die("usage: serve_load -c CONNS -o DIR <urls");
	}
	if (conns <= 0 || conns > 4096 || !dir)
		die("usage: serve_load -c CONNS -o DIR <urls");
	while ((got = getline(&line, &lcap, stdin)) > 0) {
		line[strcspn(line, "\r\n")] = 0;
		if (!*line)
			continue;
		if (n == cap && !(all = realloc(all, (cap = cap ? 2 * cap : 256) * sizeof(*all))))
			die("out of memory");
		all[n] = (struct one){ .url = strdup(line), .id = id_of(line) };
		n++;
	}
	free(line);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(m = curl_multi_init()))
		die("libcurl does not start");
	curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, conns);
	curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, conns);

	t0 = now_ns();
	for (; next < n && next < (size_t)conns; next++) {
		CURL *e = curl_easy_init();

		if (!e)
			die("curl_easy_init");
		start(m, e, &all[next]);
	}
	while (done < n) {
		int running, left;
		CURLMsg *msg;

		if (curl_multi_perform(m, &running) != CURLM_OK)
			die("curl_multi_perform");
		while ((msg = curl_multi_info_read(m, &left))) {
			struct one *o;
			long code = 0;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&o);
			if (msg->data.result == CURLE_OK)
				curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
			printf("%ld %.3f %s\n", o->failed ? 0 : code, (now_ns() - o->start_ns) / 1e6,
			       o->id);
			curl_multi_remove_handle(m, msg->easy_handle);
			done++;
			if (next < n) /* the handle again: its connection is kept */
				start(m, msg->easy_handle, &all[next++]);
			else
				curl_easy_cleanup(msg->easy_handle);
		}
		if (done < n && curl_multi_poll(m, NULL, 0, 1000, NULL) != CURLM_OK)
			die("curl_multi_poll");
	}
	printf("wall %.3f\n", (now_ns() - t0) / 1e6);
	/* Bodies saved after the clock: file writes are not the servers'. */
	for (size_t i = 0; i < n; i++) {
		if (all[i].len) {
			char *path = xasprintf("%s/%s", dir, all[i].id);

			write_file(path, all[i].body, all[i].len, 0644);
			free(path);
		}
		free(all[i].url);
		free(all[i].id);
		free(all[i].body);
	}
	free(all);
	curl_multi_cleanup(m);
	curl_global_cleanup();
	return 0;
}
