/* The NRI test's container: prints what the runtime gave it, then exits 0.
 * Built static at test time and packed as an image (make-image.py). Lines:
 *   memlock SOFT HARD          RLIMIT_MEMLOCK ("unlimited" or bytes)
 *   env NAME=VALUE             each NCCL_* variable
 *   topo LINE                  each line of the file NCCL_TOPO_FILE names
 *                              ("topo ERR" when it cannot be opened)
 *   topo-write ERR             what opening that file for writing gave
 *   dev PATH MAJOR:MINOR ERR   each node in /dev/infiniband, and what open()
 *                              gave: "ok", or the errno's name (ENXIO, ENODEV:
 *                              the device cgroup let it through to a number
 *                              no driver has; EPERM: the device cgroup refused)
 *   mknod MAJOR:MINOR ERR      for each argument MAJOR:MINOR, a node made
 *                              here and opened: the device cgroup's answer
 *                              for a device the container was not given */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

extern char** environ;

static const char* err_name(int e) {
  switch (e) {
    case 0: return "ok";
    case ENXIO: return "ENXIO";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENODEV: return "ENODEV";
    case ENOENT: return "ENOENT";
    case EROFS: return "EROFS";
    default: return "other";
  }
}

static int open_errno(const char* path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

static void print_limit(rlim_t v) {
  if (v == RLIM_INFINITY)
    printf(" unlimited");
  else
    printf(" %llu", (unsigned long long)v);
}

int main(int argc, char** argv) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
    printf("memlock");
    print_limit(rl.rlim_cur);
    print_limit(rl.rlim_max);
    printf("\n");
  }
  for (char** e = environ; *e; ++e)
    if (strncmp(*e, "NCCL_", 5) == 0) printf("env %s\n", *e);
  const char* topo = getenv("NCCL_TOPO_FILE");
  if (topo) {
    FILE* f = fopen(topo, "r");
    char line[512];
    if (!f) printf("topo %s\n", err_name(errno));
    while (f && fgets(line, sizeof line, f)) printf("topo %s", line);
    if (f) fclose(f);
    int fd = open(topo, O_WRONLY | O_CLOEXEC);
    printf("topo-write %s\n", fd < 0 ? err_name(errno) : "ok");
    if (fd >= 0) close(fd);
  }
  DIR* d = opendir("/dev/infiniband");
  if (d) {
    struct dirent* ent;
    while ((ent = readdir(d)) != NULL) {
      if (ent->d_name[0] == '.') continue;
      char path[300];
      struct stat st;
      snprintf(path, sizeof path, "/dev/infiniband/%s", ent->d_name);
      if (stat(path, &st) != 0 || !S_ISCHR(st.st_mode)) continue;
      printf("dev %s %u:%u %s\n", path, major(st.st_rdev), minor(st.st_rdev), err_name(open_errno(path)));
    }
    closedir(d);
  }
  for (int i = 1; i < argc; ++i) {
    unsigned maj, min;
    if (sscanf(argv[i], "%u:%u", &maj, &min) != 2) continue;
    char path[64];
    snprintf(path, sizeof path, "/tmp-node-%u-%u", maj, min);
    if (mknod(path, S_IFCHR | 0600, makedev(maj, min)) != 0) {
      printf("mknod %u:%u mknod-%s\n", maj, min, err_name(errno));
      continue;
    }
    printf("mknod %u:%u %s\n", maj, min, err_name(open_errno(path)));
    unlink(path);
  }
  fflush(stdout);
  return 0;
}
