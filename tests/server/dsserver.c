/* dsserver: a debuginfod-compatible server for tests, with faults that can
 * be injected per build ID or globally, from the command line or at run
 * time over /control.  See README.md for the interface.  It listens on
 * 127.0.0.1 only and exits by itself after --max-runtime seconds, so that a
 * crashed test never leaves it behind. */
#define _GNU_SOURCE
#include "dsserver.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct options {
	unsigned long port;
	const char *port_file;
	const char *log;
	unsigned long max_runtime;
	bool die_with_parent;
	bool verbose;
	bool blackhole;
};

static void usage(FILE *f)
{
	fputs("usage: dsserver [options] DIR...\n"
	      "Serves the debuginfod URL API for the ELF files under DIR... on 127.0.0.1.\n"
	      "  -p, --port N            port to listen on (default 0: any free port)\n"
	      "      --port-file FILE    write the port there (atomically) instead of\n"
	      "                          printing \"PORT <n>\" on stdout\n"
	      "  -l, --log FILE          append one line per request\n"
	      "      --log-header NAME   end each log line with that request header's\n"
	      "                          value (escaped; \"-\" when not sent)\n"
	      "  -f, --fault SPEC        KEY:KIND[=ARG][,times=N][,artifact=NAME]; repeatable\n"
	      "      --max-runtime S     exit after S seconds (default 600; 0: never)\n"
	      "      --die-with-parent   exit when the parent process dies\n"
	      "      --blackhole         serve nothing: a port where connect() never\n"
	      "                          completes (DIR... not needed)\n"
	      "  -v, --verbose           log requests and libmicrohttpd errors to stderr\n",
	      f);
}

static bool parse_ulong(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return *s && *s != '-' && !*end && !errno && *v <= max;
}

/* Returns the index of the first directory argument, or -1. */
static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
	    {"port", required_argument, NULL, 'p'},
	    {"port-file", required_argument, NULL, 'P'},
	    {"log", required_argument, NULL, 'l'},
	    {"log-header", required_argument, NULL, 'H'},
	    {"fault", required_argument, NULL, 'f'},
	    {"max-runtime", required_argument, NULL, 'm'},
	    {"die-with-parent", no_argument, NULL, 'd'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"blackhole", no_argument, NULL, 'b'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *err;
	int opt;

	*o = (struct options){.max_runtime = 600};
	while ((opt = getopt_long(argc, argv, "p:l:f:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (!parse_ulong(optarg, 65535, &o->port))
				goto bad;
			break;
		case 'P':
			o->port_file = optarg;
			break;
		case 'l':
			o->log = optarg;
			break;
		case 'H':
			http_log_header(optarg);
			break;
		case 'f':
			if (fault_add_spec(optarg, &err)) {
				fprintf(stderr, "dsserver: --fault %s: %s\n", optarg, err);
				return -1;
			}
			break;
		case 'm':
			if (!parse_ulong(optarg, 86400 * 365, &o->max_runtime))
				goto bad;
			break;
		case 'd':
			o->die_with_parent = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'b':
			o->blackhole = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			goto bad;
		}
	}
	if (optind < argc || o->blackhole)
		return optind;
bad:
	usage(stderr);
	return -1;
}

/* Written under a temporary name and renamed: a test polling for the file
 * never reads half of it. */
static int write_port_file(const char *path, unsigned port)
{
	char *tmp = NULL;
	FILE *f;
	int rc = -1;

	if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) < 0)
		return -1;
	f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "%u\n", port);
		if (!fclose(f) && !rename(tmp, path))
			rc = 0;
	}
	if (rc)
		fprintf(stderr, "dsserver: %s: %s\n", path, strerror(errno));
	free(tmp);
	return rc;
}

/* --blackhole: a listening socket whose accept queue is full of our own
 * connections and never accepted, so that the kernel drops every further
 * SYN and a client's connect() times out.  Returns the socket, or -1. */
static int blackhole_start(uint16_t port, uint16_t *bound, int filler[3])
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 0) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*bound = ntohs(sa.sin_port);
	for (int i = 0; i < 3; i++) {
		filler[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (filler[i] >= 0)
			connect(filler[i], (struct sockaddr *)&sa, sizeof(sa));
	}
	usleep(100000); /* let the handshakes fill the queue */
	return fd;
}

/* Waits for SIGTERM/SIGINT/SIGHUP or the end of the allowed run time. */
static void wait_for_stop(const sigset_t *set, unsigned long max_runtime, pid_t parent,
			  bool die_with_parent)
{
	time_t start = time(NULL);

	for (;;) {
		struct timespec ts = {.tv_sec = 1};
		int sig = sigtimedwait(set, NULL, &ts);

		if (sig > 0)
			return;
		if (die_with_parent && getppid() != parent)
			return;
		if (max_runtime && time(NULL) - start >= (time_t)max_runtime) {
			fprintf(stderr, "dsserver: --max-runtime %lu s reached, exiting\n",
				max_runtime);
			return;
		}
	}
}

/* What listens: the HTTP server, or with --blackhole a socket that never
 * accepts. */
struct listener {
	struct MHD_Daemon *d;
	int hole, filler[3];
};

static int listener_start(const struct options *o, int log_fd, struct listener *l, uint16_t *port)
{
	*l = (struct listener){.hole = -1, .filler = {-1, -1, -1}};
	if (o->blackhole)
		l->hole = blackhole_start((uint16_t)o->port, port, l->filler);
	else
		l->d = http_start((uint16_t)o->port, log_fd, o->verbose, port);
	if ((!l->d && l->hole < 0) || !*port) {
		fprintf(stderr, "dsserver: cannot listen on 127.0.0.1:%lu\n", o->port);
		return -1;
	}
	return 0;
}

static void listener_stop(struct listener *l)
{
	if (l->d)
		http_stop(l->d);
	for (int i = 0; i < 3; i++)
		if (l->filler[i] >= 0)
			close(l->filler[i]);
	if (l->hole >= 0)
		close(l->hole);
}

static int announce_port(const struct options *o, uint16_t port)
{
	if (o->port_file)
		return write_port_file(o->port_file, port);
	return printf("PORT %u\n", port) < 0 || fflush(stdout) ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct listener l;
	sigset_t set;
	size_t nfiles = 0, nbids = 0;
	uint16_t port = 0;
	pid_t parent = getppid();
	int first, rc, log_fd = -1;

	first = parse_args(argc, argv, &o);
	if (first < 0)
		return 2;
	if (o.die_with_parent)
		prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (!o.blackhole &&
	    (index_set_roots(argv + first, argc - first) || index_build(&nfiles, &nbids)))
		return 1;
	if (o.log) {
		log_fd = open(o.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (log_fd < 0) {
			fprintf(stderr, "dsserver: %s: %s\n", o.log, strerror(errno));
			return 1;
		}
	}
	/* Blocked before any thread exists, so that only sigtimedwait sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (listener_start(&o, log_fd, &l, &port))
		return 1;
	if (o.verbose)
		fprintf(stderr, "dsserver: %zu ELF files, %zu build IDs, port %u\n", nfiles, nbids,
			port);
	rc = announce_port(&o, port);
	if (!rc)
		wait_for_stop(&set, o.max_runtime, parent, o.die_with_parent);
	listener_stop(&l);
	if (log_fd >= 0)
		close(log_fd);
	index_free();
	fault_reset();
	return rc ? 1 : 0;
}
