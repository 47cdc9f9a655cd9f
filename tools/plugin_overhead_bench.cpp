// Host time per call of the same attention, called directly and through its loaded plugin. The
// difference is what the plugin boundary costs (target: under 1 us). Shapes are tiny so the GPU
// keeps up with the host and the launch queue never blocks.
//   plugin_overhead_bench [--plugin-dir DIR] [google benchmark flags]
#include <attnbench/sdpa/forced_sdpa.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>
#include "base/names.hpp"
#include "measure/device/host_info.hpp"
#include "kinds/tensors.hpp"
#include "plugins/plugin_loader.hpp"

#include <benchmark/benchmark.h>
#include <c10/core/InferenceMode.h>

#include <cstring>
#include <functional>
#include <iostream>

namespace {

using namespace attnbench;

struct Case {
  std::string backend;
  Device device;
  std::function<at::Tensor(const Inputs&)> direct;
};

void time_calls(benchmark::State& state, const Problem& p,
                const std::function<at::Tensor(const Inputs&)>& call, const HostInfo& host) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(p, 1);
  const Inputs view = in.view();
  for (int i = 0; i < 10; ++i) call(view);
  synchronize_device(host);
  for (auto _ : state) {
    at::Tensor out = call(view);
    benchmark::DoNotOptimize(out);
  }
  synchronize_device(host);
}

}  // namespace

int main(int argc, char** argv) {
  std::string plugin_dir;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--plugin-dir=", 13) == 0)
      plugin_dir = argv[i] + 13;
    else if (std::strcmp(argv[i], "--plugin-dir") == 0 && i + 1 < argc)
      plugin_dir = argv[++i];
    else
      args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;

  static const HostInfo host = query_host();
  static const PluginSet plugins = load_plugins(plugin_search_path(
      plugin_dir.empty() ? std::vector<std::string>{} : std::vector<std::string>{plugin_dir}));
  std::vector<Case> cases = {
      {"naive", Device::cpu, [](const Inputs& in) { return textbook_attention(in, false); }},
  };
  if (host.cuda_available) {
    cases.push_back(
        {"naive", Device::cuda, [](const Inputs& in) { return textbook_attention(in, false); }});
    cases.push_back({"flash", Device::cuda, [](const Inputs& in) {
                       return sdpa::forced_attention(sdpa::Kernel::flash, in);
                     }});
    cases.push_back({"cudnn", Device::cuda, [](const Inputs& in) {
                       return sdpa::forced_attention(sdpa::Kernel::cudnn, in);
                     }});
  }
  for (const auto& c : cases) {
    const LoadedBackend* loaded = plugins.find(c.backend);
    if (!loaded) {
      std::cerr << "plugin not found: " << c.backend << '\n';
      return 1;
    }
    Problem p;
    p.batch = 1, p.heads = 2, p.seq_len = 64, p.head_dim = 64;
    p.dtype = c.device == Device::cuda ? DType::bf16 : DType::f32;
    p.causal = true;
    p.device = c.device;
    const std::string stem = c.backend + "/" + to_string(c.device);
    std::shared_ptr<Backend> backend = loaded->backend;
    benchmark::RegisterBenchmark(("direct/" + stem).c_str(), [=](benchmark::State& s) {
      time_calls(s, p, c.direct, host);
    })->UseRealTime();
    benchmark::RegisterBenchmark(("plugin/" + stem).c_str(), [=](benchmark::State& s) {
      time_calls(
          s, p, [&](const Inputs& in) { return backend->forward(in); }, host);
    })->UseRealTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
