// Combinations of a sweep's axes that no axis can refuse alone, checked point by point once the
// config is read (config.cpp), each refusal a ConfigError located at its block's axis.
#pragma once

#include "config/config.hpp"

namespace attnbench {

void check_points(const SweepConfig& config);

}  // namespace attnbench
