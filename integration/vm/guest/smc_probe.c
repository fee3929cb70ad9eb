// smc_probe: can this kernel create an SMC socket?
//
//   smc_probe inet   socket(AF_INET, SOCK_STREAM, IPPROTO_SMC)  (IPPROTO_SMC = 256, Linux 6.11+)
//   smc_probe inet6  socket(AF_INET6, SOCK_STREAM, IPPROTO_SMC)
//   smc_probe smc    socket(AF_SMC, SOCK_STREAM, SMCPROTO_SMC)  (AF_SMC = 43, the older way)
//
// Exit 0 and "ok" when the socket was created, 1 and the errno text otherwise, 2 on usage.
// Built static so it needs nothing from the guest's libraries.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef IPPROTO_SMC
#define IPPROTO_SMC 256
#endif
#ifndef AF_SMC
#define AF_SMC 43
#endif
#define SMCPROTO_SMC 0

int main(int argc, char** argv) {
  int family = 0;
  int proto = 0;
  if (argc == 2 && strcmp(argv[1], "inet") == 0) {
    family = AF_INET;
    proto = IPPROTO_SMC;
  } else if (argc == 2 && strcmp(argv[1], "inet6") == 0) {
    family = AF_INET6;
    proto = IPPROTO_SMC;
  } else if (argc == 2 && strcmp(argv[1], "smc") == 0) {
    family = AF_SMC;
    proto = SMCPROTO_SMC;
  } else {
    fprintf(stderr, "usage: smc_probe inet|inet6|smc\n");
    return 2;
  }
  int fd = socket(family, SOCK_STREAM, proto);
  if (fd < 0) {
    printf("socket(%s): %s\n", argv[1], strerror(errno));
    return 1;
  }
  close(fd);
  printf("ok\n");
  return 0;
}
