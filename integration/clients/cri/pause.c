/* The sandbox's one process: waits for SIGTERM or SIGINT, then exits 0.
 * Built static at test time and packed as the pause image (make-image.py),
 * so the CRI test pulls no image from a registry. It reaps children, as a
 * pod's init process should. */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>

static volatile sig_atomic_t stop;

static void on_stop(int sig) {
  (void)sig;
  stop = 1;
}

static void on_child(int sig) { (void)sig; }

int main(void) {
  sigset_t handled, during_wait;
  sigemptyset(&handled);
  sigaddset(&handled, SIGTERM);
  sigaddset(&handled, SIGINT);
  sigaddset(&handled, SIGCHLD);
  /* Blocked outside sigsuspend: a signal between the test of `stop` and the
   * wait is kept pending instead of being lost. */
  sigprocmask(SIG_BLOCK, &handled, &during_wait);
  sigdelset(&during_wait, SIGTERM);
  sigdelset(&during_wait, SIGINT);
  sigdelset(&during_wait, SIGCHLD);

  struct sigaction sa = {0};
  sa.sa_handler = on_stop;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sa.sa_handler = on_child;
  sigaction(SIGCHLD, &sa, NULL);

  while (!stop) {
    sigsuspend(&during_wait);
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
  }
  return 0;
}
