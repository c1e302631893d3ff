// Double-checked locking, C++: the instance pointer is published before the
// object is set up, and the fast path reads it without the lock. Setting it up
// registers it under another mutex, so a second thread can slip in between
// and use a half-built object. std::thread and std::mutex throughout.
// Fixed: double_checked_fixed.cpp (std::call_once).
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

struct Service {
  int port = 0;
  void start() {
    std::lock_guard<std::mutex> lk(registry_mutex);  // a step where another thread may run
    port = 8080;
  }
  static std::mutex registry_mutex;
};
std::mutex Service::registry_mutex;

static std::mutex instance_mutex;
static Service* volatile instance = nullptr;

static Service* get() {
  if (instance == nullptr) {  // unlocked fast path
    std::lock_guard<std::mutex> lk(instance_mutex);
    if (instance == nullptr) {
      Service* s = new Service;
      instance = s;  // published too early
      s->start();
    }
  }
  return instance;
}

int main() {
  std::vector<int> ports(2);
  std::thread a([&] { ports[0] = get()->port; });
  std::thread b([&] { ports[1] = get()->port; });
  a.join();
  b.join();
  for (int p : ports) {
    if (p != 8080) {
      std::printf("half-built service: port %d\n", p);
      std::abort();
    }
  }
  std::printf("ports %d %d\n", ports[0], ports[1]);
  return 0;
}
