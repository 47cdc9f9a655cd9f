// The kind and the variant a test adds through the seams (seam/): each one file and one line.
#pragma once

namespace attnbench {
class ProblemKind;
class KindTensors;
class ProblemVariant;
class VariantTensors;
namespace test {
const ProblemKind& biased_kind();
const KindTensors& biased_kind_tensors();
const ProblemVariant& temperature_variant();
const VariantTensors& temperature_variant_tensors();
}  // namespace test
}  // namespace attnbench
