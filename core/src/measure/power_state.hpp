// The GPU's power state behind the numbers: the rule that keeps a burst's samples at a rested
// clock, and the reading of a call's energy off NVML's counter. Both are decisions on readings
// (clocks, counter values, times), kept apart from the device so that tests drive them with
// readings of their own.
#pragma once

#include <functional>
#include <optional>
#include <vector>

namespace attnbench {

// power: burst. A sample whose SM clock (its mean during the sample where the GPU's counters can
// be read, else NVML's reading right after it) is more than kClockDropFlag below the GPU's maximum
// is dropped, and the GPU rests before the next. The rest grows while samples keep coming in low
// (the clock follows the power the card averaged over the last while, so a short rest may not be
// enough). A sample still low after the longest rest is as fast as a rested GPU runs the call (a
// call long enough to bring the clock down within itself never averages the maximum): it is kept,
// and its clock is the bar for the samples after it. The rests stop for good once the pass has
// rested cooldown_max_s: from then on samples are kept at whatever clock there is. The row says
// which (clock_held_by_call, clock_not_recovered).
class BurstGate {
 public:
  // `reference_mhz`: the GPU's maximum SM clock, or, once a pass gave up, the highest its samples
  // reached (a card whose clocks an administrator capped never reaches the maximum).
  BurstGate(double reference_mhz, double cooldown_max_s);

  // The seconds to rest before sampling again, the sample dropped; 0: keep it.
  double rest_after(double sample_clock_mhz);

  int dropped() const { return dropped_; }
  double rested_s() const { return rested_s_; }
  bool gave_up() const { return gave_up_; }
  double highest_mhz() const { return highest_mhz_; }
  // The bar a sample after the longest rest set, lowest first; none while the maximum held.
  std::optional<double> rested_mhz() const { return rested_mhz_; }

  static constexpr double kFirstRestS = 0.05;
  static constexpr double kLongestRestS = 1.0;

 private:
  double reference_mhz_, cooldown_max_s_;
  double highest_mhz_ = 0;
  double next_rest_s_ = kFirstRestS;
  double rested_s_ = 0;
  double last_rest_s_ = 0;  // before the sample being judged
  int dropped_ = 0;
  bool gave_up_ = false;
  std::optional<double> rested_mhz_;
};

// Each SM's cycle counter and the GPU's global timer, read at the two ends of a stretch
// (device/sm_clock_span.hpp), indexed by SM; an SM no read reached has zeros.
struct SmStamp {
  unsigned long long timer_ns = 0;
  unsigned long long cycles = 0;
};
struct SmStamps {
  std::vector<SmStamp> open, close;
};

// The mean SM clock over the stretch: cycles over nanoseconds, the median over the SMs read at
// both ends. nullopt where no SM was, or the stretch was shorter than kShortestSpanUs (the global
// timer ticks every microsecond or so).
inline constexpr double kShortestSpanUs = 200;
std::optional<double> mean_clock_mhz(const SmStamps& stamps);

// One call's energy: calls back to back between two ticks of the board's energy counter (NVML
// updates it every few to a hundred milliseconds, so a window between two reads at arbitrary
// times would miss up to one period at either end). The window opens at a tick seen while the
// GPU idles and closes at the first tick seen after window_s of calls, the calls counted up to
// the batch in which that tick fell (half of it counted: the tick came somewhere inside).
struct EnergyProbe {
  std::function<std::optional<unsigned long long>()> read_mj;  // the counter now
  std::function<void(int)> run_calls;  // this many calls, back to back, returning once done
  std::function<double()> now_s;
  std::function<void(double)> sleep_s;
};

struct EnergyReading {
  double joules_per_call = 0;
  double window_s = 0;  // between the two ticks
  double calls = 0;
};

// nullopt when the counter cannot be read or does not tick within a few seconds.
std::optional<EnergyReading> read_energy(const EnergyProbe& probe, int calls_per_batch,
                                         double window_s);

}  // namespace attnbench
