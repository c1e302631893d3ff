#include "racelab/controller.h"
#include "racelab/point.h"

namespace racelab {
namespace detail {

std::atomic<Controller*> g_controller{nullptr};

void point_slow(Controller* controller, const char* name) {
  if (controller->manages_current_thread()) controller->on_point(name);
}

void point_slow(Controller* controller, const char* name, const void* object, Access access) {
  if (controller->manages_current_thread()) controller->on_access(name, object, access);
}

}  // namespace detail

void attach(Controller* controller) { detail::g_controller.store(controller, std::memory_order_release); }
void detach() { detail::g_controller.store(nullptr, std::memory_order_release); }

}  // namespace racelab
