// The one definition of each report's columns: the header and every row come from here, so they
// cannot drift apart. Writers only read rows; nothing here measures.
#pragma once

#include "base/enums.hpp"
#include "records/row.hpp"
#include "write/csv.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnbench {

// Bumped whenever a column changes name or meaning; written in every row, checked by compare.
// Version 2 added `config_fingerprint`, 3 `kv_heads`, `seq_len_kv` and `direction` (a version-1 or
// 2 row is a forward problem with kv_heads = heads and seq_len_kv = seq_len), 4 the GPU's clock,
// power and temperature, 5 `repetition` (in all three files), 6 `occupancy_pct`, `expectation`,
// `device_index`, `shard` and the host columns, 7 `host_name` and `host_cpus`, 8 the fp8 scales
// (`fp8_scale_q`, `_k`, `_v`), 9 `first_call_ms` and `reserved_left_mib`, 10 the served
// variants (`seq_lens`, `seq_lens_kv`, `kv_layout`, `page_size`, `page_order`, `window`,
// `softcap`, `feed`, the token totals) and the bandwidth columns (`gbytes`, `tb_per_s`,
// `pct_of_bandwidth`, `bound`), 11 `device_mem_left_mib`, 12 the power state (`power_mode`,
// `sm_clock_mhz_median`, `_min`, `clock_dropped_samples`, `cooldown_s`) and the energy
// (`energy_j_per_call`, `energy_power_w`), 13 `clock_limited_ms`, 14 `sm_clock_mhz` in the samples
// file and the SM clocks as each sample's mean during it (sm_clock_span.hpp), 15
// `device_mem_grown_mib`, 16 `kernel_us_per_call`, 17 problem kinds (`kind`, MLA's
// `qk_nope_head_dim`, `qk_rope_head_dim`, `v_head_dim`, `kv_lora_rank`, `absorbed`) and `scale`,
// `head_dim_v`, `v_in_k`, 18 `kv_dtype`, 19 `backend_build`, 20 `device_mem_kept_mib`,
// `variant_moves` and `pass_seconds`, 21 kind dsa (`index_topk`, `index_pattern`) and `family`,
// 22 kinds gdn and kda (`linear_num_key_heads`, `linear_num_value_heads`, `linear_key_head_dim`,
// `linear_value_head_dim`, `state_dtype`, `chunk_size`);
// readers read columns by name and accept every version (a missing repetition is 0, a missing
// variant is none, a missing kind attention, a missing kv_dtype q's).
inline constexpr int kCsvSchemaVersion = 22;
bool readable_schema_version(const std::string& text);

// <output>.csv: one row per (point, backend, timing mode).
std::vector<std::string> row_header();
std::vector<std::string> row_cells(const Row& row);
// Row r of a report read back through the same table (columns it lacks, and empty cells of fields
// that cannot be empty, keep their defaults);
// throws InputError, located, on a cell that is not of its column's type.
Row row_from_cells(const CsvTable& table, size_t r);
// Every row of a report, typed: what readers read instead of cells by column name.
std::vector<Row> typed_rows(const CsvTable& table);

// <output>.kernels.csv: one row per (point, backend, kind, name, grid, block).
std::vector<std::string> kernel_row_header();
std::vector<std::string> kernel_row_cells(const KernelRow& row);

// <output>.samples.csv: one row per raw timing sample, with the SM clock it ran at where read.
std::vector<std::string> sample_header();
std::vector<std::string> sample_fields(const std::string& point_id, const std::string& backend,
                                       TimingMode mode, int repetition, size_t index,
                                       double time_ms, std::optional<double> sm_clock_mhz);

}  // namespace attnbench
