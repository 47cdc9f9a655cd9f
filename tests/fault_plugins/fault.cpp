// Test plugin, built once per fault (ATTNBENCH_FAULT): correct attention, except at the points
// whose seq_len is $ATTNBENCH_FAULT_SEQ_LEN (every point when it is unset), where it misbehaves the
// way untrusted backend code does. The harness must contain each one to its own rows.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>

#include <ATen/ATen.h>

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#define ATTNBENCH_STR2(x) #x
#define ATTNBENCH_STR(x) ATTNBENCH_STR2(x)

namespace {

enum class Fault {
  segv,
  abort,
  exit,
  hang,
  throws,
  nan,
  shape,
  garble,
  cuda_illegal_address,
  cuda_assert
};
constexpr Fault kFault = Fault::ATTNBENCH_FAULT;
constexpr bool kNeedsCuda = kFault == Fault::cuda_illegal_address || kFault == Fault::cuda_assert;

bool fires_at(const attnbench::Problem& p) {
  const char* at = std::getenv("ATTNBENCH_FAULT_SEQ_LEN");
  return !at || !*at || std::stoll(at) == p.seq_len;
}

class FaultBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "fault_" ATTNBENCH_STR(ATTNBENCH_FAULT); }
  std::string description() const override { return "misbehaves on purpose (test plugin)"; }
  attnbench::Support supports(const attnbench::Problem& p) const override {
    if (kNeedsCuda && p.device != attnbench::Device::cuda)
      return attnbench::Support::no("a CUDA fault");
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    const at::Tensor good = attnbench::textbook_attention(in, /*mask_in_place=*/true);
    attnbench::Problem p;
    p.seq_len = in.q.size(2);
    if (!fires_at(p)) return good;
    switch (kFault) {
      case Fault::segv: std::raise(SIGSEGV); break;
      case Fault::abort: std::abort();
      case Fault::exit: _exit(7);
      case Fault::hang:
        while (true) sleep(1);
      case Fault::throws: throw std::runtime_error("the backend threw");
      case Fault::nan: return good * std::numeric_limits<double>::quiet_NaN();
      case Fault::shape: return good.narrow(2, 0, good.size(2) / 2);
      case Fault::garble: {  // writes where the worker's channel to the parent was once (fd 3)
        const ssize_t written = write(3, "not a message\n", 14);
        (void)written;  // closed now, or a file of the backend's own: the channel is elsewhere
        return good;
      }
      case Fault::cuda_illegal_address: {
        // A kernel that writes 16 GiB past a 4-byte allocation, into addresses this process does
        // not own: the CUDA context is lost for good.
        const at::Tensor small = at::empty({1}, in.q.options().dtype(at::kFloat));
        at::Tensor beyond = at::from_blob(small.data_ptr(), {int64_t{1} << 32}, small.options());
        beyond.fill_(1);
        return good;
      }
      case Fault::cuda_assert: {
        // An index past the end trips ATen's device-side assert.
        const at::Tensor past_end =
            at::full({1}, in.q.numel() * 4, in.q.options().dtype(at::kLong));
        return good + in.q.flatten().index_select(0, past_end).sum();
      }
    }
    return good;
  }
};

}  // namespace

ATTNBENCH_PLUGIN(FaultBackend)
