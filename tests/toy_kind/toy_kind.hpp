// Test-only problem kinds (toy_kind.cpp).
#pragma once

namespace attnbench {
class ProblemKind;
namespace test {
const ProblemKind& toy_kind();
const ProblemKind& leaky_kind();
}  // namespace test
}  // namespace attnbench
