#include "measure/op_counter.hpp"
#include "base/names.hpp"
#include "measure/callback_scope.hpp"

#include <ATen/core/function_schema.h>
#include <ATen/record_function.h>

#include <memory>
#include <mutex>

namespace attnbench {

namespace {

// Global, not thread-local: a backward call runs its ops on autograd's worker threads, which
// inherit the callback but not this thread's variables. The depth is per thread.
OpCounts* g_counts = nullptr;
std::mutex g_counts_mutex;
thread_local int t_depth = 0;

// A view returns an alias of an input without writing to it (transpose, view, expand, ...): free
// metadata changes, which the study does not count as operators.
bool is_view(const at::RecordFunction& fn) {
  const auto schema = fn.operator_schema();
  if (!schema || schema->returns().empty()) return false;
  const auto* alias = schema->returns().front().alias_info();
  return alias != nullptr && !alias->isWrite();
}

// aten::mul(Tensor, Scalar) wraps the scalar into a one-element tensor with a copy_; only copies
// of real data are the hidden copies the study is after.
bool copies_data(const at::RecordFunction& fn) {
  const auto inputs = fn.inputs();
  if (inputs.empty() || !inputs[0].isTensor()) return true;
  return inputs[0].toTensor().numel() > 1;
}

// The autograd engine wraps each backward node it runs in a record of its own; the ops the node
// calls are what the backward pass does, so the wrapper is looked through, like a scope.
bool is_autograd_node(const at::RecordFunction& fn) {
  return std::string_view(fn.name()).rfind("autograd::engine::evaluate_function:", 0) == 0;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (is_autograd_node(fn)) return nullptr;
  {
    const std::lock_guard<std::mutex> lock(g_counts_mutex);
    if (g_counts) {
      ++g_counts->nested;
      if (std::string_view(fn.name()) == "aten::copy_" && copies_data(fn)) ++g_counts->copies;
      if (t_depth == 0 && !is_view(fn))
        g_counts->top_level.push_back(op_name(fn.name() ? fn.name() : "?"));
    }
  }
  ++t_depth;
  return nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  if (!is_autograd_node(fn)) --t_depth;
}

}  // namespace

OpCounts count_aten_ops(const std::function<void()>& call) {
  OpCounts counts;
  auto publish = [](OpCounts* c) {
    const std::lock_guard<std::mutex> lock(g_counts_mutex);
    g_counts = c;
  };
  publish(&counts);
  t_depth = 0;
  {
    const CallbackScope scope(
        at::addThreadLocalCallback(at::RecordFunctionCallback(on_enter, on_exit)
                                       .scopes({at::RecordScope::FUNCTION})
                                       .needsInputs(true)),
        [&] { publish(nullptr); });
    call();
  }
  return counts;
}

}  // namespace attnbench
