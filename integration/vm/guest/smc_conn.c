// smc_conn: one TCP-over-SMC connection, held open so `smc_dump diag` can see it.
//
//   smc_conn server PORT [HOLD]          listens on 0.0.0.0:PORT, accepts one client,
//                                        echoes what it sends, then holds the
//                                        connection HOLD seconds (default 10)
//   smc_conn client ADDR PORT [HOLD] [BYTES]
//                                        connects, sends BYTES (default 16384) and
//                                        reads them back, then holds HOLD seconds
//
// Sockets are socket(AF_INET, SOCK_STREAM, IPPROTO_SMC) (IPPROTO_SMC = 256,
// Linux 6.11+); SMC_CONN_AF_SMC=1 in the environment uses AF_SMC instead. The
// server prints "listening" once it listens; both print "exchanged N bytes"
// once the data went both ways. Every step has a deadline (alarm). Exit 0 on
// success, 1 with the errno text otherwise, 2 on usage. Built static.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef IPPROTO_SMC
#define IPPROTO_SMC 256
#endif
#ifndef AF_SMC
#define AF_SMC 43
#endif

static int die(const char* what) {
  printf("%s: %s\n", what, strerror(errno));
  return 1;
}

static int smc_socket(void) {
  const char* af_smc = getenv("SMC_CONN_AF_SMC");
  if (af_smc && strcmp(af_smc, "1") == 0) return socket(AF_SMC, SOCK_STREAM, 0 /* SMCPROTO_SMC */);
  return socket(AF_INET, SOCK_STREAM, IPPROTO_SMC);
}

static int write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) {
      errno = ECONNRESET;
      return -1;
    }
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "timed out\n";
  (void)!write(1, msg, sizeof(msg) - 1);
  _exit(1);
}

static int server(int port, int hold) {
  int ls = smc_socket();
  if (ls < 0) return die("socket");
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  if (bind(ls, (struct sockaddr*)&sa, sizeof(sa)) < 0) return die("bind");
  if (listen(ls, 4) < 0) return die("listen");
  printf("listening on port %d\n", port);
  alarm(120);
  int c = accept(ls, NULL, NULL);
  if (c < 0) return die("accept");
  // Echo until the client has said how much it sends: a 4-byte length first.
  uint32_t len_be = 0;
  if (read_all(c, (char*)&len_be, sizeof(len_be)) < 0) return die("read length");
  size_t n = ntohl(len_be);
  if (n > (64u << 20)) {
    printf("client announced %zu bytes: too many\n", n);
    return 1;
  }
  char* buf = malloc(n ? n : 1);
  if (!buf) return die("malloc");
  if (read_all(c, buf, n) < 0) return die("read");
  if (write_all(c, buf, n) < 0) return die("write");
  printf("exchanged %zu bytes\n", n);
  alarm(0);
  sleep((unsigned)hold);
  free(buf);
  close(c);
  close(ls);
  return 0;
}

static int client(const char* addr, int port, int hold, size_t n) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
    printf("not an IPv4 address: %s\n", addr);
    return 2;
  }
  int s = smc_socket();
  if (s < 0) return die("socket");
  alarm(120);
  if (connect(s, (struct sockaddr*)&sa, sizeof(sa)) < 0) return die("connect");
  char* out = malloc(n ? n : 1);
  char* back = malloc(n ? n : 1);
  if (!out || !back) return die("malloc");
  for (size_t i = 0; i < n; i++) out[i] = (char)('a' + i % 26);
  uint32_t len_be = htonl((uint32_t)n);
  if (write_all(s, (const char*)&len_be, sizeof(len_be)) < 0) return die("write length");
  if (write_all(s, out, n) < 0) return die("write");
  if (read_all(s, back, n) < 0) return die("read");
  if (memcmp(out, back, n) != 0) {
    printf("the echo differs from what was sent\n");
    return 1;
  }
  printf("exchanged %zu bytes\n", n);
  alarm(0);
  sleep((unsigned)hold);
  free(out);
  free(back);
  close(s);
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGALRM, on_alarm);
  if (argc >= 3 && argc <= 4 && strcmp(argv[1], "server") == 0)
    return server(atoi(argv[2]), argc == 4 ? atoi(argv[3]) : 10);
  if (argc >= 4 && argc <= 6 && strcmp(argv[1], "client") == 0)
    return client(argv[2], atoi(argv[3]), argc >= 5 ? atoi(argv[4]) : 10,
                  argc == 6 ? (size_t)strtoul(argv[5], NULL, 10) : 16384);
  fprintf(stderr, "usage: smc_conn server PORT [HOLD] | smc_conn client ADDR PORT [HOLD] [BYTES]\n");
  return 2;
}
