#include "measure/op_tracer.hpp"
#include "base/names.hpp"
#include "measure/callback_scope.hpp"

#include <ATen/record_function.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <mutex>

namespace attnbench {

namespace {

std::vector<CpuSpan>* g_spans = nullptr;
std::mutex g_mutex;
thread_local int t_depth = 0;

struct SpanIndex : at::ObserverContext {
  size_t index = 0;
};

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  auto ctx = std::make_unique<SpanIndex>();
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_spans) return nullptr;
    ctx->index = g_spans->size();
    g_spans->push_back({op_name(fn.name() ? fn.name() : "?"), steady_now_ns(), -1, this_thread_id(),
                        this_os_thread_id(), t_depth});
  }
  ++t_depth;
  return ctx;
}

void on_exit(const at::RecordFunction&, at::ObserverContext* ctx) {
  if (!ctx) return;
  --t_depth;
  const int64_t end = steady_now_ns();
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_spans) (*g_spans)[static_cast<SpanIndex*>(ctx)->index].end_ns = end;
}

}  // namespace

uint64_t this_thread_id() { return static_cast<uint64_t>(pthread_self()); }
uint32_t this_os_thread_id() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

std::vector<CpuSpan> record_cpu_spans(const std::function<void()>& body) {
  std::vector<CpuSpan> spans;
  auto publish = [](std::vector<CpuSpan>* s) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    g_spans = s;
  };
  publish(&spans);
  t_depth = 0;
  {
    // Global: autograd's worker threads run the backward ops.
    const CallbackScope scope(at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit)
                                                        .scopes({at::RecordScope::FUNCTION,
                                                                 at::RecordScope::BACKWARD_FUNCTION,
                                                                 at::RecordScope::USER_SCOPE})),
                              [&] { publish(nullptr); });
    body();
  }
  std::stable_sort(spans.begin(), spans.end(),
                   [](const CpuSpan& a, const CpuSpan& b) { return a.start_ns < b.start_ns; });
  return spans;
}

}  // namespace attnbench
