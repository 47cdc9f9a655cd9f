// A RecordFunction callback for the length of a scope: removed, and the observers' target cleared,
// when the scope ends, whether the body returned or threw (op_counter and op_tracer share this).
#pragma once

#include <ATen/record_function.h>

#include <functional>
#include <utility>

namespace attnbench {

class CallbackScope {
 public:
  CallbackScope(at::CallbackHandle handle, std::function<void()> on_end)
      : handle_(handle), on_end_(std::move(on_end)) {}
  ~CallbackScope() {
    at::removeCallback(handle_);
    on_end_();
  }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

 private:
  at::CallbackHandle handle_;
  std::function<void()> on_end_;
};

}  // namespace attnbench
