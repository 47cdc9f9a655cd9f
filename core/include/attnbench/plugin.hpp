// attnbench plugin API. This is the only header a backend plugin needs.
//
// A plugin is one shared library (built with attnbench_add_plugin(), in your own repository
// against an installed attnbench or in plugins/<name>/) that defines a class derived from
// attnbench::Backend (see backend.hpp) and exports it with ATTNBENCH_PLUGIN(ClassName). The
// harness:
//   1. reads `attnbench_abi_version` and the factory's symbol from the file, before loading it (no
//      code of the plugin runs, not even static initialisers), and refuses the library if the
//      version differs from kPluginAbiVersion or the factory is missing;
//   2. calls the exported factory once and keeps the library loaded while the backend lives;
//   3. for every point of a sweep asks supports(problem); when yes, it creates the inputs
//      (q, k, v, the causal mask) outside the timed region and calls forward() many times, or, for
//      a backward point (problem.direction == Direction::bwd), calls prepare_backward() once and
//      the returned BackwardPass's run() many times.
//
// forward() does the attention and nothing else: no input allocation, no synchronization, no
// printing. If it turns out at run time that the problem cannot be run (a forced kernel refuses a
// shape), throw attnbench::Unsupported with the reason in plain words; the row says so.
// supports() sees the whole problem: refuse there what the backend never runs (grouped-query
// heads, a bottom-right causal mask, the backward pass), with the reason.
#pragma once

#include <attnbench/backend.hpp>

#include <boost/dll/alias.hpp>

#include <memory>

// Exports the ABI version and a factory named attnbench_create_backend.
#define ATTNBENCH_PLUGIN(BackendClass)                              \
  extern "C" BOOST_SYMBOL_EXPORT const int attnbench_abi_version;   \
  const int attnbench_abi_version = ::attnbench::kPluginAbiVersion; \
  namespace {                                                       \
  std::unique_ptr<::attnbench::Backend> attnbench_make_backend() {  \
    return std::make_unique<BackendClass>();                        \
  }                                                                 \
  }                                                                 \
  BOOST_DLL_ALIAS(attnbench_make_backend, attnbench_create_backend)
