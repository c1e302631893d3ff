#include "engine/zygote.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "engine/child_process.h"
#include "engine/tsan_report.h"
#include "engine/worker.h"
#include "engine/worker_channel.h"
#include "racelab/exit_code.h"

namespace racelab {

namespace {

constexpr int kZygoteSocketFd = 3;  // the zygote's end of its socket
bool g_forked_worker = false;       // this process is a worker the zygote forked
// This process is a zygote that forks trial workers (Zygote::prefork's
// kTrialWorkers), whose workers fork zygotes of their own.
bool g_serves_trial_workers = false;
constexpr int kFdsPerWorker = 4;    // WorkerFds, in order

// One request: who asks (the worker waits to be its child) and the worker's
// name; the descriptors travel beside it (SCM_RIGHTS).
struct Request {
  int32_t caller;
  char name[32];
};

bool send_request(int sock, const Request& req, const int (&fds)[kFdsPerWorker]) {
  iovec iov{const_cast<Request*>(&req), sizeof(req)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kFdsPerWorker)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * kFdsPerWorker);
  std::memcpy(CMSG_DATA(c), fds, sizeof(int) * kFdsPerWorker);
  for (;;) {
    const ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(sizeof(req))) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// 1: a request with its descriptors; 0: the caller is gone; -1: a bad message.
int receive_request(int sock, Request* req, int (&fds)[kFdsPerWorker]) {
  iovec iov{req, sizeof(*req)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kFdsPerWorker)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return 0;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (n != static_cast<ssize_t>(sizeof(*req)) || c == nullptr || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int) * kFdsPerWorker))
    return -1;
  std::memcpy(fds, CMSG_DATA(c), sizeof(int) * kFdsPerWorker);
  req->name[sizeof(req->name) - 1] = '\0';
  return 1;
}

// In the forked worker: its descriptors in place, the rest closed, then the
// worker's loop once it is the caller's child.
[[noreturn]] void become_worker(const Request& req, const int (&fds)[kFdsPerWorker]) {
  // Park the received descriptors above 5 first: one of them may sit where
  // another must go.
  int high[kFdsPerWorker];
  for (int i = 0; i < kFdsPerWorker; ++i) high[i] = ::fcntl(fds[i], F_DUPFD, 10);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(high[0], 1) < 0 || ::dup2(high[0], 2) < 0 ||
      ::dup2(high[1], kSpecFd) < 0 || ::dup2(high[2], kResultFd) < 0 || ::dup2(high[3], kTraceFd) < 0)
    ::_exit(kExitInternal);
  ::close_range(kTraceFd + 1, ~0U, 0);
  ::setpgid(0, 0);  // as a spawned worker: a Ctrl-C at the terminal is racelab's
  ::setenv(kSupervisorPidEnv, std::to_string(req.caller).c_str(), 1);
  ::prctl(PR_SET_NAME, req.name);
  // The middle process exits at once; until it has, our parent is not the
  // caller yet, and worker_main's parent-death check would end us.
  for (int i = 0; i < 5000 && ::getppid() != req.caller; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // A trial worker preforks its own zygote, for its trials' workers; theirs need none.
  g_forked_worker = !g_serves_trial_workers;
  std::exit(worker_main());
}

// Forks a worker for one request (twice, so that it is reparented to the
// caller); its pid, or -errno.
pid_t fork_one(const Request& req, const int (&fds)[kFdsPerWorker]) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return -errno;
  const pid_t middle = ::fork();
  if (middle < 0) {
    const int e = errno;
    ::close(p[0]);
    ::close(p[1]);
    return -e;
  }
  if (middle == 0) {
    ::close(p[0]);
    const pid_t worker = ::fork();
    if (worker == 0) {
      ::close(p[1]);
      become_worker(req, fds);
    }
    const int32_t v = worker < 0 ? -errno : worker;
    (void)!::write(p[1], &v, sizeof(v));
    ::_exit(0);
  }
  ::close(p[1]);
  int32_t v = -EPIPE;
  ssize_t n;
  do {
    n = ::read(p[0], &v, sizeof(v));
  } while (n < 0 && errno == EINTR);
  ::close(p[0]);
  int st = 0;
  while (::waitpid(middle, &st, 0) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(sizeof(v)) ? v : -EPIPE;
}

}  // namespace

Zygote& Zygote::shared() {
  static Zygote* z = new Zygote();  // never destroyed: it lives as long as the process
  return *z;
}

void Zygote::forget_if_inherited() {
  // A zygote is its starter's: a process forked since holds a copy of the
  // socket, but the zygote's workers are reparented to the starter, not to
  // it. Leave the zygote to its starter and start another when needed.
  if (socket_ >= 0 && owner_ != ::getpid()) {
    ::close(socket_);
    socket_ = -1;
    pid_ = -1;
  }
}

void Zygote::prefork(Serves serves) {
  if (built_with_tsan() || g_forked_worker) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    forget_if_inherited();
    if (socket_ >= 0) return;
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return;
  // Buffered output would be written again by every worker that exits.
  std::fflush(nullptr);
  // Forked without holding mu_: the zygote's workers prefork zygotes of their
  // own, through a copy of this object whose mutex must not be held.
  const pid_t pid = ::fork();
  if (pid == 0) {
    g_serves_trial_workers = serves == Serves::kTrialWorkers;
    // The zygote: none of the worker's handlers (its last words go to the
    // worker's trace) and none of its descriptors (a pipe it held open would
    // hide the worker's death from the supervisor).
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    // Beside a campaign's shard, a process group of its own, as a spawned
    // zygote: a Ctrl-C at the terminal is the shard's to handle.
    if (g_serves_trial_workers) ::setpgid(0, 0);
    const int devnull = ::open("/dev/null", O_RDWR);
    if (::dup2(sv[1], kZygoteSocketFd) < 0 || devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(devnull, 1) < 0 ||
        ::dup2(devnull, 2) < 0)
      ::_exit(kExitInternal);
    ::close_range(kZygoteSocketFd + 1, ~0U, 0);
    ::prctl(PR_SET_NAME, "racelab: zygote");
    ::_exit(zygote_main());  // _exit: the worker's static objects are the worker's to destroy
  }
  ::close(sv[1]);
  if (pid < 0) {
    ::close(sv[0]);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (socket_ >= 0) {
    // Another thread preforked meanwhile: this zygote ends as its socket closes.
    ::close(sv[0]);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return;
  }
  socket_ = sv[0];
  pid_ = pid;
  owner_ = ::getpid();
}

bool Zygote::start(std::string* why) {
  if (built_with_tsan()) {
    *why = "not under ThreadSanitizer";
    return false;
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    *why = fmt::format("socketpair: {}", std::strerror(errno));
    return false;
  }
  // Our end for the zygote's descriptor kZygoteSocketFd: above it, so that
  // the dup2 onto it clears close-on-exec (engine/child_process.h).
  try {
    sv[1] = move_fd_high(sv[1], kZygoteSocketFd + 1, "zygote");
  } catch (const std::runtime_error& e) {
    ::close(sv[0]);
    *why = e.what();
    return false;
  }
  ChildSpec child;
  child.argv = {"/proc/self/exe", "__zygote"};
  child.shown_name = "racelab: zygote";
  child.dup2 = {{sv[1], kZygoteSocketFd}};
  child.stdin_dev_null = true;
  child.own_process_group = true;
  std::string error;
  const pid_t pid = spawn_child(child, &error);
  ::close(sv[1]);
  if (pid < 0) {
    ::close(sv[0]);
    *why = "the zygote: " + error;
    return false;
  }
  socket_ = sv[0];
  pid_ = pid;
  owner_ = ::getpid();
  return true;
}

pid_t Zygote::fork_worker(const WorkerFds& fds, const std::string& name, std::string* why) {
  std::lock_guard<std::mutex> lock(mu_);
  // A worker forked by the zygote is reparented to the nearest subreaper
  // above it: this process. (By the reply the zygote's middle process has
  // exited, so the worker is ours already.)
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    *why = fmt::format("PR_SET_CHILD_SUBREAPER: {}", std::strerror(errno));
    return -1;
  }
  // Only while this request is served: an orphan of some other process
  // below this one is left to init, not made a zombie child of ours.
  struct NoLongerSubreaper {
    ~NoLongerSubreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
  } after;
  forget_if_inherited();
  if (socket_ < 0 && !start(why)) return -1;
  Request req{};
  req.caller = static_cast<int32_t>(::getpid());
  std::snprintf(req.name, sizeof(req.name), "%s", name.c_str());
  const int v[kFdsPerWorker] = {fds.output, fds.spec, fds.result, fds.trace};
  int32_t reply = 0;
  ssize_t n = -1;
  if (send_request(socket_, req, v)) {
    do {
      n = ::recv(socket_, &reply, sizeof(reply), 0);
    } while (n < 0 && errno == EINTR);
  }
  if (n != static_cast<ssize_t>(sizeof(reply))) {
    // The zygote died (or never started): reap it; the next call starts another.
    *why = "the zygote is gone";
    ::close(socket_);
    socket_ = -1;
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return -1;
  }
  if (reply < 0) {
    *why = fmt::format("the zygote could not fork: {}", std::strerror(-reply));
    return -1;
  }
  return reply;
}

int zygote_main() {
  int type = 0;
  socklen_t len = sizeof(type);
  if (::getsockopt(kZygoteSocketFd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET) {
    std::fprintf(stderr, "racelab __zygote: internal command, started only by racelab itself\n");
    return kExitUsage;
  }
  ::signal(SIGPIPE, SIG_IGN);
  for (;;) {
    Request req{};
    int fds[kFdsPerWorker] = {-1, -1, -1, -1};
    const int got = receive_request(kZygoteSocketFd, &req, fds);
    if (got == 0) return kExitOk;  // the caller is gone
    const int32_t reply = got < 0 ? -EBADMSG : fork_one(req, fds);
    // Our copies must go: a worker's pipes reach end-of-file only when every
    // holder but the worker has closed them.
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
    if (::send(kZygoteSocketFd, &reply, sizeof(reply), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(reply)))
      return kExitOk;
  }
}

}  // namespace racelab
