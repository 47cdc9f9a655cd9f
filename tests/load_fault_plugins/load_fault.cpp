// Test plugin, built once per fault (ATTNBENCH_LOAD_FAULT), that takes its process down while it
// is being loaded: in a static initialiser (segv, hang) or in its factory (abort). The harness
// loads plugins in a worker first, so such a plugin costs only its own backend.
#include <attnbench/plugin.hpp>

#include <ATen/ATen.h>

#include <unistd.h>

#include <csignal>
#include <cstdlib>

#define ATTNBENCH_STR2(x) #x
#define ATTNBENCH_STR(x) ATTNBENCH_STR2(x)

namespace {

enum class LoadFault { segv, hang, abort };
constexpr LoadFault kFault = LoadFault::ATTNBENCH_LOAD_FAULT;

struct AtLoad {
  AtLoad() {
    if (kFault == LoadFault::segv) std::raise(SIGSEGV);
    if (kFault == LoadFault::hang)
      for (;;) pause();
  }
} at_load;

class LoadFaultBackend final : public attnbench::Backend {
 public:
  LoadFaultBackend() {
    if (kFault == LoadFault::abort) std::abort();
  }
  std::string name() const override { return "load_" ATTNBENCH_STR(ATTNBENCH_LOAD_FAULT); }
  std::string description() const override { return "never loads (test plugin)"; }
  attnbench::Support supports(const attnbench::Problem&) const override {
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override { return in.q.clone(); }
};

}  // namespace

ATTNBENCH_PLUGIN(LoadFaultBackend)
