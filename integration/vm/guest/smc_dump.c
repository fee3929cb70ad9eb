// smc_dump: what the kernel's SMC tables and sockets look like from the
// current network namespace, for VM scenarios (Debian has no smc-tools).
//
//   smc_dump pnet     the SMC pnet table (generic netlink family SMC_PNETID,
//                     SMC_PNETID_GET dump), one line per entry:
//                       pnet <ID> eth <netdev>
//                       pnet <ID> ib <device> <port>
//   smc_dump ueid     the user EIDs (family SMC_GEN_NETLINK,
//                     SMC_NETLINK_DUMP_UEID), one per line, padding trimmed
//   smc_dump diag     the SMC sockets (NETLINK_SOCK_DIAG, AF_SMC), one line each:
//                       sock family=inet state=ACTIVE mode=SMCR sport=.. dport=..
//                            src=.. dst=.. inode=.. [fallback=0x.. (NAME)]
//                            [peer_diagnosis=0x.. (NAME)] [ib=dev/port role=..]
//                            [token=.. sndbuf=.. rmbe=.. tx_sent=.. rx_prod=..]
//
// Test setup only (what a node agent would do in the root netns):
//   smc_dump pnet-add ID eth NETDEV | ID ib DEVICE PORT
//   smc_dump pnet-del ID
//
// Exit 0 on success (an empty table prints nothing), 1 with the errno text on
// stderr when the kernel refuses or lacks the family, 2 on usage.
// Built static: it needs nothing from the guest's libraries.
#include <arpa/inet.h>
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/smc.h>
#include <linux/smc_diag.h>
#include <linux/sock_diag.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_SMC
#define AF_SMC 43
#endif

#define BUF_SIZE 65536  // the kernel's dump datagrams are at most 32 KiB

static uint32_t g_seq = 1;

// --- netlink plumbing -------------------------------------------------------------

static int nl_open(int protocol) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
  if (fd < 0) {
    fprintf(stderr, "socket(AF_NETLINK, %d): %s\n", protocol, strerror(errno));
    return -1;
  }
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
  if (bind(fd, (struct sockaddr*)&sa, sizeof(sa)) < 0) {
    fprintf(stderr, "bind(AF_NETLINK): %s\n", strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

static int nl_send(int fd, const void* msg, size_t len) {
  struct sockaddr_nl to = {.nl_family = AF_NETLINK};
  if (sendto(fd, msg, len, 0, (struct sockaddr*)&to, sizeof(to)) < 0) {
    fprintf(stderr, "sendto(netlink): %s\n", strerror(errno));
    return -1;
  }
  return 0;
}

// Reads the answer to request `seq` and calls `each` on every data message.
// Returns 0 at NLMSG_DONE (or an ACK of 0), the positive errno the kernel
// answered, or -1 on a local failure.
typedef int (*msg_fn)(const struct nlmsghdr* nlh, void* ctx);

static int nl_collect(int fd, uint32_t seq, msg_fn each, void* ctx) {
  static char buf[BUF_SIZE] __attribute__((aligned(NLMSG_ALIGNTO)));
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      fprintf(stderr, "recv(netlink): %s\n", strerror(errno));
      return -1;
    }
    size_t left = (size_t)n;
    for (const struct nlmsghdr* h = (const struct nlmsghdr*)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_seq != seq) continue;  // a stale answer
      if (h->nlmsg_type == NLMSG_DONE) return 0;
      if (h->nlmsg_type == NLMSG_ERROR) {
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
          fprintf(stderr, "truncated NLMSG_ERROR\n");
          return -1;
        }
        const struct nlmsgerr* e = (const struct nlmsgerr*)NLMSG_DATA(h);
        return -e->error;  // 0: an ACK
      }
      if (each && each(h, ctx) != 0) return -1;
    }
  }
}

// Attribute walking over [data, data+len), kept inside the run.
#define ATTR_MAX 16
static void attrs_index(const void* data, size_t len, const struct nlattr* tb[ATTR_MAX]) {
  memset(tb, 0, sizeof(*tb) * ATTR_MAX);
  const char* p = data;
  while (len >= sizeof(struct nlattr)) {
    const struct nlattr* a = (const struct nlattr*)p;
    if (a->nla_len < sizeof(struct nlattr) || a->nla_len > len) break;
    uint16_t type = a->nla_type & NLA_TYPE_MASK;
    if (type < ATTR_MAX) tb[type] = a;
    size_t step = NLA_ALIGN(a->nla_len);
    if (step >= len) break;
    p += step;
    len -= step;
  }
}

static const void* attr_data(const struct nlattr* a) { return (const char*)a + NLA_HDRLEN; }
static size_t attr_len(const struct nlattr* a) { return a->nla_len - NLA_HDRLEN; }

// A string attribute copied into out (NUL-terminated, trailing blanks trimmed).
static void attr_str(const struct nlattr* a, char* out, size_t size) {
  out[0] = 0;
  if (!a || size == 0) return;
  size_t n = attr_len(a);
  if (n >= size) n = size - 1;
  memcpy(out, attr_data(a), n);
  out[n] = 0;
  n = strlen(out);
  while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t')) out[--n] = 0;
}

// Appends one attribute to the message in buf (capacity cap).
static int put_attr(struct nlmsghdr* nlh, size_t cap, uint16_t type, const void* data, size_t len) {
  size_t at = NLMSG_ALIGN(nlh->nlmsg_len);
  size_t total = NLA_HDRLEN + len;
  if (at + NLA_ALIGN(total) > cap) return -1;
  struct nlattr* a = (struct nlattr*)((char*)nlh + at);
  a->nla_type = type;
  a->nla_len = (uint16_t)total;
  memcpy((char*)a + NLA_HDRLEN, data, len);
  memset((char*)a + total, 0, NLA_ALIGN(total) - total);
  nlh->nlmsg_len = (uint32_t)(at + NLA_ALIGN(total));
  return 0;
}

static int put_str(struct nlmsghdr* nlh, size_t cap, uint16_t type, const char* s) {
  return put_attr(nlh, cap, type, s, strlen(s) + 1);
}

// --- generic netlink --------------------------------------------------------------

struct genl_req {
  struct nlmsghdr* nlh;
  char buf[512] __attribute__((aligned(NLMSG_ALIGNTO)));
};

static void genl_start(struct genl_req* r, uint16_t family, uint8_t cmd, uint16_t flags) {
  memset(r->buf, 0, sizeof(r->buf));
  r->nlh = (struct nlmsghdr*)r->buf;
  r->nlh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
  r->nlh->nlmsg_type = family;
  r->nlh->nlmsg_flags = flags;
  r->nlh->nlmsg_seq = ++g_seq;
  struct genlmsghdr* g = NLMSG_DATA(r->nlh);
  g->cmd = cmd;
  g->version = 1;
}

// The attributes after the generic netlink header of one message.
static int genl_attrs(const struct nlmsghdr* h, const struct nlattr* tb[ATTR_MAX]) {
  if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN)) return -1;
  const char* start = (const char*)NLMSG_DATA(h) + GENL_HDRLEN;
  attrs_index(start, h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), tb);
  return 0;
}

static int family_cb(const struct nlmsghdr* h, void* ctx) {
  const struct nlattr* tb[ATTR_MAX];
  if (genl_attrs(h, tb) != 0) return -1;
  if (tb[CTRL_ATTR_FAMILY_ID] && attr_len(tb[CTRL_ATTR_FAMILY_ID]) >= 2)
    memcpy(ctx, attr_data(tb[CTRL_ATTR_FAMILY_ID]), sizeof(uint16_t));
  return 0;
}

// The id of a generic netlink family, or 0 (with a message) when absent.
static uint16_t genl_family(int fd, const char* name) {
  struct genl_req r;
  genl_start(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_REQUEST | NLM_F_ACK);
  put_str(r.nlh, sizeof(r.buf), CTRL_ATTR_FAMILY_NAME, name);
  if (nl_send(fd, r.nlh, r.nlh->nlmsg_len) < 0) return 0;
  uint16_t id = 0;
  int rc = nl_collect(fd, r.nlh->nlmsg_seq, family_cb, &id);
  if (rc > 0) fprintf(stderr, "generic netlink family %s: %s\n", name, strerror(rc));
  if (rc == 0 && id == 0) fprintf(stderr, "generic netlink family %s: no id in the answer\n", name);
  return rc == 0 ? id : 0;
}

static int report(const char* what, int rc) {
  if (rc > 0) fprintf(stderr, "%s: %s\n", what, strerror(rc));
  return rc == 0 ? 0 : 1;
}

// --- pnet ---------------------------------------------------------------------------

static int pnet_cb(const struct nlmsghdr* h, void* ctx) {
  (void)ctx;
  const struct nlattr* tb[ATTR_MAX];
  if (genl_attrs(h, tb) != 0) return -1;
  char id[32], eth[64], ib[128];
  attr_str(tb[SMC_PNETID_NAME], id, sizeof(id));
  attr_str(tb[SMC_PNETID_ETHNAME], eth, sizeof(eth));
  attr_str(tb[SMC_PNETID_IBNAME], ib, sizeof(ib));
  unsigned port = 0;
  if (tb[SMC_PNETID_IBPORT] && attr_len(tb[SMC_PNETID_IBPORT]) >= 1)
    port = *(const uint8_t*)attr_data(tb[SMC_PNETID_IBPORT]);
  // The kernel fills the side an entry does not use with "n/a" (and port 0xff).
  if (eth[0] && strcmp(eth, "n/a") != 0) printf("pnet %s eth %s\n", id, eth);
  if (ib[0] && strcmp(ib, "n/a") != 0) printf("pnet %s ib %s %u\n", id, ib, port);
  return 0;
}

static int do_pnet_dump(void) {
  int fd = nl_open(NETLINK_GENERIC);
  if (fd < 0) return 1;
  uint16_t fam = genl_family(fd, SMCR_GENL_FAMILY_NAME);
  if (!fam) return 1;
  struct genl_req r;
  genl_start(&r, fam, SMC_PNETID_GET, NLM_F_REQUEST | NLM_F_DUMP);
  if (nl_send(fd, r.nlh, r.nlh->nlmsg_len) < 0) return 1;
  int rc = nl_collect(fd, r.nlh->nlmsg_seq, pnet_cb, NULL);
  close(fd);
  return report("SMC_PNETID_GET", rc);
}

static int do_pnet_change(int argc, char** argv) {
  // pnet-add ID eth NAME | pnet-add ID ib DEV PORT | pnet-del ID
  int add = strcmp(argv[1], "pnet-add") == 0;
  if (argc < 3 || (add && !(argc == 5 && strcmp(argv[3], "eth") == 0) &&
                   !(argc == 6 && strcmp(argv[3], "ib") == 0)) ||
      (!add && argc != 3)) {
    fprintf(stderr, "usage: smc_dump pnet-add ID eth NETDEV | pnet-add ID ib DEVICE PORT | pnet-del ID\n");
    return 2;
  }
  int fd = nl_open(NETLINK_GENERIC);
  if (fd < 0) return 1;
  uint16_t fam = genl_family(fd, SMCR_GENL_FAMILY_NAME);
  if (!fam) return 1;
  struct genl_req r;
  genl_start(&r, fam, add ? SMC_PNETID_ADD : SMC_PNETID_DEL, NLM_F_REQUEST | NLM_F_ACK);
  put_str(r.nlh, sizeof(r.buf), SMC_PNETID_NAME, argv[2]);
  if (add && strcmp(argv[3], "eth") == 0) {
    put_str(r.nlh, sizeof(r.buf), SMC_PNETID_ETHNAME, argv[4]);
  } else if (add) {
    uint8_t port = (uint8_t)atoi(argv[5]);
    put_str(r.nlh, sizeof(r.buf), SMC_PNETID_IBNAME, argv[4]);
    put_attr(r.nlh, sizeof(r.buf), SMC_PNETID_IBPORT, &port, 1);
  }
  if (nl_send(fd, r.nlh, r.nlh->nlmsg_len) < 0) return 1;
  int rc = nl_collect(fd, r.nlh->nlmsg_seq, NULL, NULL);
  close(fd);
  return report(add ? "SMC_PNETID_ADD" : "SMC_PNETID_DEL", rc);
}

// --- ueid ---------------------------------------------------------------------------

static int ueid_cb(const struct nlmsghdr* h, void* ctx) {
  (void)ctx;
  const struct nlattr* tb[ATTR_MAX];
  if (genl_attrs(h, tb) != 0) return -1;
  if (!tb[SMC_NLA_EID_TABLE_ENTRY]) return 0;
  char eid[SMC_MAX_EID_LEN + 8];
  attr_str(tb[SMC_NLA_EID_TABLE_ENTRY], eid, sizeof(eid));
  printf("%s\n", eid);
  return 0;
}

static int do_ueid(void) {
  int fd = nl_open(NETLINK_GENERIC);
  if (fd < 0) return 1;
  uint16_t fam = genl_family(fd, SMC_GENL_FAMILY_NAME);
  if (!fam) return 1;
  struct genl_req r;
  genl_start(&r, fam, SMC_NETLINK_DUMP_UEID, NLM_F_REQUEST | NLM_F_DUMP);
  if (nl_send(fd, r.nlh, r.nlh->nlmsg_len) < 0) return 1;
  int rc = nl_collect(fd, r.nlh->nlmsg_seq, ueid_cb, NULL);
  close(fd);
  return report("SMC_NETLINK_DUMP_UEID", rc);
}

// --- diag ---------------------------------------------------------------------------

// Socket states of net/smc (enum smc_state); not in the uapi headers.
static const char* state_name(unsigned s) {
  switch (s) {
    case 1: return "ACTIVE";
    case 2: return "INIT";
    case 7: return "CLOSED";
    case 10: return "LISTEN";
    case 20: return "PEERCLOSEWAIT1";
    case 21: return "PEERCLOSEWAIT2";
    case 22: return "APPCLOSEWAIT1";
    case 23: return "APPCLOSEWAIT2";
    case 24: return "APPFINCLOSEWAIT";
    case 25: return "PEERFINCLOSEWAIT";
    case 26: return "PEERABORTWAIT";
    case 27: return "PROCESSABORT";
    default: return "UNKNOWN";
  }
}

static const char* mode_name(unsigned m) {
  switch (m) {
    case SMC_DIAG_MODE_SMCR: return "SMCR";
    case SMC_DIAG_MODE_FALLBACK_TCP: return "TCP";
    case SMC_DIAG_MODE_SMCD: return "SMCD";
    default: return "UNKNOWN";
  }
}

// CLC decline / fallback reason codes (net/smc/smc_clc.h, SMC_CLC_DECL_*).
static const char* reason_name(uint32_t r) {
  static const struct {
    uint32_t code;
    const char* name;
  } names[] = {
      {0x01010000, "MEM"},          {0x02010000, "TIMEOUT_CL"},    {0x02020000, "TIMEOUT_AL"},
      {0x03000000, "CNFERR"},       {0x03010000, "PEERNOSMC"},     {0x03020000, "IPSEC"},
      {0x03030000, "NOSMCDEV"},     {0x03030001, "NOSMCDDEV"},     {0x03030002, "NOSMCRDEV"},
      {0x03030003, "NOISM2SUPP"},   {0x03030004, "NOV2EXT"},       {0x03030005, "NOV2DEXT"},
      {0x03030006, "NOSEID"},       {0x03030007, "NOSMCD2DEV"},    {0x03030008, "NOUEID"},
      {0x03030009, "RELEASEERR"},   {0x0303000a, "MAXCONNERR"},    {0x0303000b, "MAXLINKERR"},
      {0x03040000, "MODEUNSUPP"},   {0x03050000, "RMBE_EC"},       {0x03060000, "OPTUNSUPP"},
      {0x03070000, "DIFFPREFIX"},   {0x03080000, "GETVLANERR"},    {0x03090000, "ISMVLANERR"},
      {0x030a0000, "NOACTLINK"},    {0x030b0000, "NOSRVLINK"},     {0x030c0000, "VERSMISMAT"},
      {0x030d0000, "MAX_DMB"},      {0x030e0000, "NOROUTE"},       {0x030f0000, "NOINDIRECT"},
      {0x04000000, "SYNCERR"},      {0x05000000, "PEERDECL"},      {0x09990000, "INTERR"},
      {0x09990001, "ERR_RTOK"},     {0x09990002, "ERR_RDYLNK"},    {0x09990003, "ERR_REGBUF"},
      {0x99990000, "INTERR"},
  };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].code == r) return names[i].name;
  return "?";
}

static void print_addr(const char* key, unsigned family, const uint32_t a[4]) {
  char text[INET6_ADDRSTRLEN] = "";
  if (family == AF_INET6)
    inet_ntop(AF_INET6, a, text, sizeof(text));
  else
    inet_ntop(AF_INET, a, text, sizeof(text));
  printf(" %s=%s", key, text);
}

static int diag_cb(const struct nlmsghdr* h, void* ctx) {
  int* count = ctx;
  if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY) return 0;
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct smc_diag_msg))) {
    fprintf(stderr, "truncated smc_diag_msg\n");
    return -1;
  }
  const struct smc_diag_msg* m = NLMSG_DATA(h);
  const struct nlattr* tb[ATTR_MAX];
  attrs_index((const char*)m + NLMSG_ALIGN(sizeof(*m)), h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)), tb);
  const char* fam = m->diag_family == AF_INET    ? "inet"
                    : m->diag_family == AF_INET6 ? "inet6"
                    : m->diag_family == AF_SMC   ? "smc"
                                                 : "?";
  printf("sock family=%s state=%s mode=%s sport=%u dport=%u", fam, state_name(m->diag_state),
         mode_name(m->diag_mode), ntohs(m->id.idiag_sport), ntohs(m->id.idiag_dport));
  print_addr("src", m->diag_family, m->id.idiag_src);
  print_addr("dst", m->diag_family, m->id.idiag_dst);
  printf(" inode=%llu", (unsigned long long)m->diag_inode);
  if (tb[SMC_DIAG_FALLBACK] && attr_len(tb[SMC_DIAG_FALLBACK]) >= sizeof(struct smc_diag_fallback)) {
    struct smc_diag_fallback fb;
    memcpy(&fb, attr_data(tb[SMC_DIAG_FALLBACK]), sizeof(fb));
    if (fb.reason) printf(" fallback=0x%08x(%s)", fb.reason, reason_name(fb.reason));
    if (fb.peer_diagnosis)
      printf(" peer_diagnosis=0x%08x(%s)", fb.peer_diagnosis, reason_name(fb.peer_diagnosis));
  }
  if (tb[SMC_DIAG_LGRINFO] && attr_len(tb[SMC_DIAG_LGRINFO]) >= sizeof(struct smc_diag_lgrinfo)) {
    struct smc_diag_lgrinfo li;
    memcpy(&li, attr_data(tb[SMC_DIAG_LGRINFO]), sizeof(li));
    li.lnk[0].ibname[sizeof(li.lnk[0].ibname) - 1] = 0;
    printf(" ib=%s/%u role=%s", (const char*)li.lnk[0].ibname, li.lnk[0].ibport,
           li.role == 0 ? "client" : "server");
  }
  if (tb[SMC_DIAG_CONNINFO] && attr_len(tb[SMC_DIAG_CONNINFO]) >= sizeof(struct smc_diag_conninfo)) {
    struct smc_diag_conninfo ci;
    memcpy(&ci, attr_data(tb[SMC_DIAG_CONNINFO]), sizeof(ci));
    printf(" token=%u sndbuf=%u rmbe=%u tx_sent=%u rx_prod=%u", ci.token, ci.sndbuf_size, ci.rmbe_size,
           ci.tx_sent.count, ci.rx_prod.count);
  }
  if (tb[SMC_DIAG_SHUTDOWN] && attr_len(tb[SMC_DIAG_SHUTDOWN]) >= 1)
    printf(" shutdown=%u", *(const uint8_t*)attr_data(tb[SMC_DIAG_SHUTDOWN]));
  printf("\n");
  (*count)++;
  return 0;
}

static int do_diag(void) {
  int fd = nl_open(NETLINK_SOCK_DIAG);
  if (fd < 0) return 1;
  struct {
    struct nlmsghdr nlh;
    struct smc_diag_req req;
  } msg;
  memset(&msg, 0, sizeof(msg));
  msg.nlh.nlmsg_len = NLMSG_LENGTH(sizeof(msg.req));
  msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.nlh.nlmsg_seq = ++g_seq;
  msg.req.diag_family = AF_SMC;
  // Extensions are asked for by bit (1 << (ext - 1)); the fallback reason comes always.
  msg.req.diag_ext = (1 << (SMC_DIAG_CONNINFO - 1)) | (1 << (SMC_DIAG_LGRINFO - 1));
  if (nl_send(fd, &msg, msg.nlh.nlmsg_len) < 0) return 1;
  int count = 0;
  int rc = nl_collect(fd, msg.nlh.nlmsg_seq, diag_cb, &count);
  close(fd);
  // ENOENT: no sock_diag handler for AF_SMC (smc_diag not loaded).
  return report("SOCK_DIAG_BY_FAMILY AF_SMC", rc);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 2 && strcmp(argv[1], "pnet") == 0) return do_pnet_dump();
  if (argc >= 2 && (strcmp(argv[1], "pnet-add") == 0 || strcmp(argv[1], "pnet-del") == 0))
    return do_pnet_change(argc, argv);
  if (argc == 2 && strcmp(argv[1], "ueid") == 0) return do_ueid();
  if (argc == 2 && strcmp(argv[1], "diag") == 0) return do_diag();
  fprintf(stderr,
          "usage: smc_dump pnet | ueid | diag\n"
          "       smc_dump pnet-add ID eth NETDEV | pnet-add ID ib DEVICE PORT | pnet-del ID\n");
  return 2;
}
