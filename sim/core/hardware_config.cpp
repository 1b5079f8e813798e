#include "sim/core/hardware_config.h"

#include <boost/algorithm/string/case_conv.hpp>

namespace npusim {

std::uint32_t dtype_bytes(DType t) {
  switch (t) {
    case DType::Int8:
      return 1;
    case DType::Int16:
      return 2;
    case DType::Fp16:
      return 2;
    case DType::Bf16:
      return 2;
    case DType::Fp32:
      return 4;
  }
  return 1;
}

template <>
const EnumNames<Dataflow>& enum_names<Dataflow>() {
  static const EnumNames<Dataflow> n = {{"ws", Dataflow::WS}, {"os", Dataflow::OS}, {"is", Dataflow::IS}};
  return n;
}
template <>
const EnumNames<DType>& enum_names<DType>() {
  static const EnumNames<DType> n = {{"int8", DType::Int8},
                                     {"int16", DType::Int16},
                                     {"fp16", DType::Fp16},
                                     {"bf16", DType::Bf16},
                                     {"fp32", DType::Fp32}};
  return n;
}
template <>
const EnumNames<FoldModel>& enum_names<FoldModel>() {
  static const EnumNames<FoldModel> n = {{"reference", FoldModel::Reference}, {"overlapped", FoldModel::Overlapped}};
  return n;
}
template <>
const EnumNames<PagePolicy>& enum_names<PagePolicy>() {
  static const EnumNames<PagePolicy> n = {{"open", PagePolicy::Open},
                                          {"closed", PagePolicy::Closed},
                                          {"adaptive", PagePolicy::Adaptive},
                                          {"open_adaptive", PagePolicy::OpenAdaptive}};
  return n;
}
template <>
const EnumNames<DramScheduler>& enum_names<DramScheduler>() {
  static const EnumNames<DramScheduler> n = {{"fr_fcfs", DramScheduler::FrFcfs}, {"fcfs", DramScheduler::Fcfs}};
  return n;
}
template <>
const EnumNames<RefreshMode>& enum_names<RefreshMode>() {
  static const EnumNames<RefreshMode> n = {{"all_bank", RefreshMode::AllBank}, {"per_bank", RefreshMode::PerBank}};
  return n;
}
template <>
const EnumNames<DramWritePolicy>& enum_names<DramWritePolicy>() {
  static const EnumNames<DramWritePolicy> n = {{"shared", DramWritePolicy::Shared},
                                               {"watermarks", DramWritePolicy::Watermarks}};
  return n;
}
template <>
const EnumNames<OperandBufferMode>& enum_names<OperandBufferMode>() {
  static const EnumNames<OperandBufferMode> n = {{"shared", OperandBufferMode::Shared},
                                                 {"separate", OperandBufferMode::Separate}};
  return n;
}
template <>
const EnumNames<TileLayout>& enum_names<TileLayout>() {
  static const EnumNames<TileLayout> n = {{"row_major", TileLayout::RowMajor}, {"streamed", TileLayout::Streamed}};
  return n;
}
template <>
const EnumNames<MacArrayKind>& enum_names<MacArrayKind>() {
  static const EnumNames<MacArrayKind> n = {{"systolic", MacArrayKind::Systolic}, {"direct", MacArrayKind::Direct}};
  return n;
}
template <>
const EnumNames<DequantPath>& enum_names<DequantPath>() {
  static const EnumNames<DequantPath> n = {{"operand_path", DequantPath::OperandPath},
                                           {"vector_unit", DequantPath::VectorUnit}};
  return n;
}
template <>
const EnumNames<KvCacheHome>& enum_names<KvCacheHome>() {
  static const EnumNames<KvCacheHome> n = {{"dram", KvCacheHome::Dram}, {"sram", KvCacheHome::Sram}};
  return n;
}

std::optional<Dataflow> parse_dataflow_name(const std::string& text) {
  const std::string lower = boost::algorithm::to_lower_copy(text);
  for (const auto& [name, d] : enum_names<Dataflow>())
    if (lower == name) return d;
  return std::nullopt;
}

std::string dataflow_name(Dataflow d) {
  return boost::algorithm::to_upper_copy(to_string(d));
}

namespace {

nlohmann::json timing_json(const DramTiming& t) {
  return {{"unit", "nCK"},      {"CL", t.CL},         {"CWL", t.CWL},   {"tRCD", t.tRCD},        {"tRP", t.tRP},
          {"tRPab", t.tRPab},   {"tRAS", t.tRAS},     {"tRC", t.tRC},   {"tCCD_S", t.tCCD_S},    {"tCCD_L", t.tCCD_L},
          {"tRRD_S", t.tRRD_S}, {"tRRD_L", t.tRRD_L}, {"tFAW", t.tFAW}, {"tWR", t.tWR},          {"tWTR_S", t.tWTR_S},
          {"tWTR_L", t.tWTR_L}, {"tRTP", t.tRTP},     {"tRTW", t.tRTW}, {"tRFC", t.tRFC},        {"tRFCpb", t.tRFCpb},
          {"tREFI", t.tREFI},   {"tDQSCK", t.tDQSCK}, {"tPPD", t.tPPD}, {"tPBR2PBR", t.tPBR2PBR}};
}

nlohmann::json rails_json(const std::vector<DramRail>& rails) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& r : rails)
    out[r.name] = {{"voltage_v", r.voltage}, {"idd0_ma", r.idd0},   {"idd2n_ma", r.idd2n}, {"idd3n_ma", r.idd3n},
                   {"idd4r_ma", r.idd4r},    {"idd4w_ma", r.idd4w}, {"idd5_ma", r.idd5}};
  return out;
}

/// Base units (J, W) with the unit in the key, like the rest of the resolved config.
nlohmann::json energy_json(const EnergyConfig& e) {
  nlohmann::json mac = nlohmann::json::object();
  for (const auto& [dtype, energy] : e.mac) mac[to_string(dtype)] = energy.joules;
  return {{"mac_j", mac},
          {"vector_op_j", e.vector_op.joules},
          {"sram_read_j_per_byte", e.sram_read.joules},
          {"sram_write_j_per_byte", e.sram_write.joules},
          {"dram_j_per_byte", e.dram.joules},
          {"dram_background_w", e.dram_background.watts},
          {"static_w", e.static_power.watts}};
}

}  // namespace

nlohmann::json to_json(const HardwareConfig& c) {
  const auto& m = c.mac_array;
  const auto& d = c.dram;
  nlohmann::json cost = nlohmann::json::object();
  for (const auto& [k, v] : c.vector_unit.cost) cost[k] = v;
  nlohmann::json rate = nlohmann::json::object();
  for (const auto& [t, r] : m.rate) rate[to_string(t)] = r;
  nlohmann::json j = {
      {"name", c.name},
      {"source", c.source},
      {"core_clock_hz", c.core_clock.hz},
      {"mac_array",
       {{"kind", to_string(m.kind)},
        {"rows", m.rows},
        {"cols", m.cols},
        {"dataflow", to_string(m.dataflow)},
        {"dtype", to_string(m.dtype)},
        {"dtype_bytes", dtype_bytes(m.dtype)},
        {"fold_model", to_string(m.fold_model)},
        {"dequant", to_string(m.dequant)},
        {"accumulator_bytes", m.accumulator_bytes},
        {"rate", rate},
        {"efficiency", m.efficiency},
        {"peak_ops_per_second", c.mac_peak_ops()}}},
      {"vector_unit",
       {{"lanes", c.vector_unit.lanes},
        {"cost_cycles_per_element", cost},
        {"default_cost", c.vector_unit.default_cost},
        {"peak_ops_per_second", c.vector_peak_ops()}}},
      {"sram",
       {{"capacity_bytes", c.sram.capacity_bytes},
        {"banks", c.sram.banks},
        {"bank_width_bytes", c.sram.bank_width_bytes},
        {"ports_per_bank", c.sram.ports_per_bank},
        {"read_ports", c.sram.read_ports},
        {"write_ports", c.sram.write_ports},
        {"operand_buffers", to_string(c.sram.operand_buffers)},
        {"ifmap_bytes", c.sram.ifmap_bytes},
        {"filter_bytes", c.sram.filter_bytes},
        {"ofmap_bytes", c.sram.ofmap_bytes},
        {"tile_layout", to_string(c.sram.tile_layout)},
        {"stream_buffer", c.sram.stream_buffer},
        {"kv_cache", to_string(c.sram.kv_cache)},
        {"bandwidth_bytes_per_second", c.sram_bandwidth()}}},
      {"dma",
       {{"channels", c.dma.channels},
        {"max_outstanding_bursts", c.dma.max_outstanding_bursts},
        {"burst_bytes", c.dma.burst_bytes}}},
      {"dram",
       {{"preset", d.preset},
        {"standard", d.standard},
        {"clock_hz", d.clock.hz},
        {"data_rate_transfers_per_second", d.data_rate},
        {"channels", d.channels},
        {"ranks", d.ranks},
        {"bank_groups", d.bank_groups},
        {"banks_per_group", d.banks_per_group},
        {"rows", d.rows},
        {"columns", d.columns},
        {"device_width_bits", d.device_width},
        {"bus_width_bits", d.bus_width},
        {"burst_length", d.burst_length},
        {"mapping", d.mapping},
        {"page_policy", to_string(d.page_policy)},
        {"scheduler", to_string(d.scheduler)},
        {"read_queue_depth", d.read_queue_depth},
        {"write_queue_depth", d.write_queue_depth},
        {"peak_bandwidth_bytes_per_second", d.peak_bandwidth().bytes_per_second},
        {"xor_bank_hash", d.xor_bank_hash},
        {"write_drain_high", d.write_drain_high},
        {"write_drain_low", d.write_drain_low},
        {"refresh", to_string(d.refresh)},
        {"refresh_max_postponed", d.refresh_max_postponed},
        {"energy", rails_json(d.rails)},
        {"bank_queue_depth", d.bank_queue_depth},
        {"row_hit_cap", d.row_hit_cap},
        {"write_policy", to_string(d.write_policy)},
        {"timing", timing_json(d.timing)}}},
  };
  if (c.energy.specified()) j["energy"] = energy_json(c.energy);
  j["area"] = {{"technology_node_nm", c.area.technology_node_nm}};
  j["cores"] = c.cores;
  j["noc"] = {{"bytes_per_cycle", c.noc.bytes_per_cycle}, {"latency_cycles", c.noc.latency_cycles}};
  j["runtime"] = {{"dispatch_latency_s", c.runtime.dispatch_latency_s}, {"core_sync_s", c.runtime.core_sync_s}};
  j["host"] = {{"ops", c.host.ops},
               {"op_rate_ops_per_second", c.host.op_rate},
               {"bandwidth_bytes_per_second", c.host.bandwidth},
               {"handoff_latency_s", c.host.handoff_latency_s}};
  j["l2"] = {{"capacity_bytes", c.l2.capacity_bytes},
             {"banks", c.l2.banks},
             {"width_bytes", c.l2.width_bytes},
             {"latency_cycles", c.l2.latency_cycles}};
  return j;
}

}  // namespace npusim
