// The lists: every problem kind and every variant, one line each. A kind's file (kinds/<kind>.cpp)
// and a variant's (kinds/variants/<variant>.cpp) define their objects; these lines put them in
// the harness. Each file is built twice (core/CMakeLists.txt): once for what a point is (every
// binary) and once, with ATTNBENCH_TENSORS, for how it is measured (the worker, with LibTorch);
// ATTNBENCH_KIND and ATTNBENCH_VARIANT at the end of each file say which half is exported.
#pragma once

// Attention first: a sweep that names no kind is attention.
#define ATTNBENCH_PROBLEM_KINDS(X) \
  X(attention)                     \
  X(mla)                           \
  X(dsa)                           \
  X(dsa_indexer)                   \
  X(gdn)                           \
  X(kda)

// In the order of their columns and id parts.
#define ATTNBENCH_PROBLEM_VARIANTS(X) \
  X(ragged)                           \
  X(paged)                            \
  X(window)                           \
  X(softcap)                          \
  X(fp8_kv)                           \
  X(sinks)                            \
  X(chunk)                            \
  X(rope)

// The end of a kind's file: `KindClass` (what the point is) is exported as <name>_kind(), and in
// the LibTorch build `TensorsClass` (how it is measured) as <name>_kind_tensors().
#ifdef ATTNBENCH_TENSORS
#define ATTNBENCH_KIND(name, KindClass, TensorsClass) \
  const KindTensors& name##_kind_tensors() {          \
    static const TensorsClass tensors;                \
    return tensors;                                   \
  }
#define ATTNBENCH_VARIANT(name, VariantClass, TensorsClass) \
  const VariantTensors& name##_variant_tensors() {          \
    static const TensorsClass tensors;                      \
    return tensors;                                         \
  }
#else
#define ATTNBENCH_KIND(name, KindClass, TensorsClass) \
  const ProblemKind& name##_kind() {                  \
    static const KindClass kind;                      \
    return kind;                                      \
  }
#define ATTNBENCH_VARIANT(name, VariantClass, TensorsClass) \
  const ProblemVariant& name##_variant() {                  \
    static const VariantClass variant;                      \
    return variant;                                         \
  }
#endif
