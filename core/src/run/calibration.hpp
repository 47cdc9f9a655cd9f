// The calibration file: the device's measured ceilings (measure/device/calibrate_device.hpp), stored
// once per device so that rows can report % of peak.
#pragma once

#include "measure/device/calibrate_device.hpp"

#include <optional>
#include <string>

namespace attnbench {

void save_calibration(const Calibration& c, const std::string& path);
std::optional<Calibration> load_calibration(
    const std::string& path);  // nullopt if absent; throws if broken

// results/calibration/<device name as a file name>.json
std::string default_calibration_path(const std::string& device_name);

}  // namespace attnbench
