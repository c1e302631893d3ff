// double_checked.cpp fixed: std::call_once publishes the service only once it
// is set up, and every other caller waits for it.
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

struct Service {
  int port = 0;
  void start() {
    std::lock_guard<std::mutex> lk(registry_mutex);
    port = 8080;
  }
  static std::mutex registry_mutex;
};
std::mutex Service::registry_mutex;

static std::once_flag once;
static Service* instance = nullptr;

static Service* get() {
  std::call_once(once, [] {
    Service* s = new Service;
    s->start();
    instance = s;
  });
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
