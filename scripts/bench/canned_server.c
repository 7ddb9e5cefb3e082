/* The kernel floor of a cache row: a single-threaded, level-triggered epoll
 * memcached-ascii server that stores nothing and looks nothing up. Every get
 * or gets key is a hit with the same canned value of -V bytes; every storage
 * command skips its data block and answers STORED; anything else is ERROR.
 * Per readable event it does one read(), parses every complete request, and
 * one write() of all the replies: the fewest syscalls any server can spend on
 * a request, so on a one-in-flight row its ops/s is the ceiling of any real
 * server on the same core (scripts/bench/run's "kernel floor" table).
 *
 * usage: canned_server [-l HOST] [-p PORT] [-V BYTES] [-X VALUE ...]
 * -p 0 (the default) listens on an ephemeral port; any other -X VALUE pair
 * (memcached's -U 0 -t 1 -m 1024 -c 20000 ...) is accepted and ignored.
 * After listen it prints "listening on tcp HOST:PORT" (the real port). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
  kInCap = 16384,     /* a request line longer than this closes the conn */
  kOutHigh = 1 << 20, /* stop parsing while this much output waits */
  kMaxTokens = 8,     /* storage commands have at most 7 */
};

struct conn {
  int fd;
  unsigned events; /* the epoll interest now: EPOLLIN or EPOLLOUT */
  size_t in_len;
  size_t skip;           /* bytes of a data block (+ \r\n) still to drop */
  int stored_after_skip; /* answer STORED when skip reaches 0 */
  int more;              /* parse stopped at kOutHigh: input left to parse */
  char* out;
  size_t out_len, out_off, out_cap;
  char in[kInCap];
};

static int ep;
static struct conn** conns; /* indexed by fd */
static size_t nconns;
/* What follows "VALUE <key>" for get and for gets: flags, size, [cas],
 * the filler value and its \r\n. */
static char *get_tail, *gets_tail;
static size_t get_tail_len, gets_tail_len;

static void die(const char* what) {
  perror(what);
  exit(1);
}

static void append(struct conn* c, const char* p, size_t n) {
  if (c->out_len + n > c->out_cap) {
    size_t cap = c->out_cap ? c->out_cap : 4096;
    while (cap < c->out_len + n) cap *= 2;
    c->out = realloc(c->out, cap);
    if (!c->out) die("realloc");
    c->out_cap = cap;
  }
  memcpy(c->out + c->out_len, p, n);
  c->out_len += n;
}

#define APPEND_LIT(c, s) append((c), (s), sizeof(s) - 1)

static int is(const char* tok, size_t len, const char* word) {
  return strlen(word) == len && memcmp(tok, word, len) == 0;
}

/* One request line (without its \r\n). */
static void command(struct conn* c, char* line, size_t len) {
  const char* tok[kMaxTokens];
  size_t tlen[kMaxTokens];
  size_t n = 0, i = 0;
  while (i < len && line[i] == ' ') i++;
  size_t cmd_end = i;
  while (cmd_end < len && line[cmd_end] != ' ') cmd_end++;
  const char* cmd = line + i;
  size_t cmd_len = cmd_end - i;
  int gets = is(cmd, cmd_len, "gets");
  if (gets || is(cmd, cmd_len, "get")) {
    size_t keys = 0;
    for (i = cmd_end; i < len;) {
      while (i < len && line[i] == ' ') i++;
      size_t k = i;
      while (i < len && line[i] != ' ') i++;
      if (i == k) break;
      APPEND_LIT(c, "VALUE ");
      append(c, line + k, i - k);
      if (gets)
        append(c, gets_tail, gets_tail_len);
      else
        append(c, get_tail, get_tail_len);
      keys++;
    }
    if (keys == 0)
      APPEND_LIT(c, "ERROR\r\n");
    else
      APPEND_LIT(c, "END\r\n");
    return;
  }
  /* storage: <cmd> <key> <flags> <exptime> <bytes> [cas] [noreply] */
  for (i = 0; i < len && n < kMaxTokens;) {
    while (i < len && line[i] == ' ') i++;
    size_t t = i;
    while (i < len && line[i] != ' ') i++;
    if (i == t) break;
    tok[n] = line + t;
    tlen[n++] = i - t;
  }
  int cas = is(cmd, cmd_len, "cas");
  if (!cas && !is(cmd, cmd_len, "set") && !is(cmd, cmd_len, "add") && !is(cmd, cmd_len, "replace") &&
      !is(cmd, cmd_len, "append") && !is(cmd, cmd_len, "prepend")) {
    APPEND_LIT(c, "ERROR\r\n");
    return;
  }
  size_t need = cas ? 6 : 5;
  int noreply = n == need + 1 && is(tok[n - 1], tlen[n - 1], "noreply");
  if (n != need && !noreply) {
    APPEND_LIT(c, "ERROR\r\n");
    return;
  }
  size_t bytes = 0;
  for (i = 0; i < tlen[4]; i++) {
    if (tok[4][i] < '0' || tok[4][i] > '9' || bytes > (1u << 30)) {
      APPEND_LIT(c, "CLIENT_ERROR bad command line format\r\n");
      return;
    }
    bytes = bytes * 10 + (size_t)(tok[4][i] - '0');
  }
  c->skip = bytes + 2;
  c->stored_after_skip = !noreply;
}

/* Parses every complete request in c->in (until kOutHigh bytes of output
 * wait: then c->more is set) and keeps the unparsed tail. */
static void parse(struct conn* c) {
  size_t pos = 0;
  c->more = 0;
  while (pos < c->in_len) {
    if (c->out_len - c->out_off >= kOutHigh) {
      c->more = 1;
      break;
    }
    if (c->skip > 0) {
      size_t n = c->in_len - pos < c->skip ? c->in_len - pos : c->skip;
      pos += n;
      c->skip -= n;
      if (c->skip == 0 && c->stored_after_skip) APPEND_LIT(c, "STORED\r\n");
      continue;
    }
    char* nl = memchr(c->in + pos, '\n', c->in_len - pos);
    if (!nl) break;
    size_t end = (size_t)(nl - c->in);
    size_t len = end - pos;
    if (len > 0 && c->in[pos + len - 1] == '\r') len--;
    command(c, c->in + pos, len);
    pos = end + 1;
  }
  memmove(c->in, c->in + pos, c->in_len - pos);
  c->in_len -= pos;
}

/* Writes the waiting output: one write() unless it was partial. 0 when all
 * is written or the socket is full, -1 when the connection is gone. */
static int flush(struct conn* c) {
  while (c->out_off < c->out_len) {
    ssize_t w = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
    if (w < 0) return errno == EAGAIN ? 0 : -1;
    c->out_off += (size_t)w;
  }
  c->out_off = c->out_len = 0;
  return 0;
}

static int want(struct conn* c, unsigned events) {
  if (c->events == events) return 0;
  struct epoll_event ev = {.events = events, .data.fd = c->fd};
  c->events = events;
  return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Parses and answers what is buffered until the input is used up (then
 * waits for EPOLLIN) or the socket is full (then waits for EPOLLOUT, and
 * reads nothing more until the output is written). */
static int pump(struct conn* c) {
  for (;;) {
    parse(c);
    if (flush(c) < 0) return -1;
    if (c->out_off < c->out_len) return want(c, EPOLLOUT);
    if (!c->more) return want(c, EPOLLIN);
  }
}

static void drop(struct conn* c) {
  conns[c->fd] = NULL;
  close(c->fd);
  free(c->out);
  free(c);
}

static void on_event(struct conn* c, unsigned events) {
  if (c->events == EPOLLOUT) {
    if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
      if (pump(c) < 0) drop(c);
    }
    return;
  }
  if (c->in_len == kInCap) { /* a line that never ends */
    drop(c);
    return;
  }
  ssize_t r = read(c->fd, c->in + c->in_len, kInCap - c->in_len);
  if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
    drop(c);
    return;
  }
  if (r < 0) return;
  c->in_len += (size_t)r;
  if (pump(c) < 0) drop(c);
}

static void on_accept(int lfd) {
  int one = 1;
  int fd;
  while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if ((size_t)fd >= nconns) {
      size_t n = nconns ? nconns : 64;
      while (n <= (size_t)fd) n *= 2;
      conns = realloc(conns, n * sizeof(*conns));
      if (!conns) die("realloc");
      memset(conns + nconns, 0, (n - nconns) * sizeof(*conns));
      nconns = n;
    }
    struct conn* c = calloc(1, sizeof(*c));
    if (!c) die("calloc");
    c->fd = fd;
    c->events = EPOLLIN;
    conns[fd] = c;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) drop(c);
  }
}

static char* make_tail(size_t value_size, const char* cas, size_t* len) {
  char head[64];
  int h = snprintf(head, sizeof(head), " 0 %zu%s\r\n", value_size, cas);
  *len = (size_t)h + value_size + 2;
  char* t = malloc(*len);
  if (!t) die("malloc");
  memcpy(t, head, (size_t)h);
  memset(t + h, 'x', value_size);
  memcpy(t + h + value_size, "\r\n", 2);
  return t;
}

int main(int argc, char** argv) {
  const char* host = "127.0.0.1";
  int port = 0;
  long value_size = 100;
  for (int i = 1; i < argc; i += 2) {
    if (argv[i][0] != '-' || i + 1 >= argc) {
      fprintf(stderr, "usage: %s [-l HOST] [-p PORT] [-V BYTES] [-X VALUE ...]\n", argv[0]);
      return 2;
    }
    if (strcmp(argv[i], "-l") == 0)
      host = argv[i + 1];
    else if (strcmp(argv[i], "-p") == 0)
      port = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "-V") == 0)
      value_size = atol(argv[i + 1]);
  }
  if (value_size < 0 || value_size > (1 << 24)) {
    fprintf(stderr, "-V %ld: 0 to 16 MiB\n", value_size);
    return 2;
  }
  get_tail = make_tail((size_t)value_size, "", &get_tail_len);
  gets_tail = make_tail((size_t)value_size, " 1", &gets_tail_len);
  signal(SIGPIPE, SIG_IGN); /* a client gone mid-write is an EPIPE, not a death */

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
    fprintf(stderr, "-l %s: not an IPv4 address\n", host);
    return 2;
  }
  if (bind(lfd, (struct sockaddr*)&a, sizeof(a)) < 0 || listen(lfd, 1024) < 0) die("bind/listen");
  socklen_t alen = sizeof(a);
  getsockname(lfd, (struct sockaddr*)&a, &alen);
  printf("listening on tcp %s:%d\n", host, ntohs(a.sin_port));
  fflush(stdout);

  ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
  struct epoll_event events[256];
  for (;;) {
    int n = epoll_wait(ep, events, 256, -1);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    for (int i = 0; i < n; i++) {
      int fd = events[i].data.fd;
      if (fd == lfd)
        on_accept(lfd);
      else if ((size_t)fd < nconns && conns[fd])
        on_event(conns[fd], events[i].events);
    }
  }
}
