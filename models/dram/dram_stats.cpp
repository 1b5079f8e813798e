#include "models/dram/dram_stats.h"

#include <algorithm>
#include <cmath>

namespace npusim::models {

LatencyHistogram::LatencyHistogram() : buckets_(kBuckets, 0) {}

std::uint64_t LatencyHistogram::midpoint_of(std::size_t bucket) {
  if (bucket < kLinear) return bucket;
  const unsigned e = static_cast<unsigned>((bucket - kLinear) / kSub) + kLinearBits;
  const std::uint64_t sub = (bucket - kLinear) % kSub;
  const std::uint64_t width = std::uint64_t{1} << (e - kSubBits);
  return ((kSub + sub) << (e - kSubBits)) + width / 2;
}

std::uint64_t LatencyHistogram::percentile(double fraction) const {
  if (count_ == 0) return 0;
  // Nearest rank: the ceil(fraction x count)-th smallest sample (at least the first).
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(fraction * double(count_))));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= rank) return midpoint_of(b);
  }
  return midpoint_of(buckets_.size() - 1);
}

double DramStats::row_hit_rate() const {
  return bursts() == 0 ? 0.0 : double(row_hits) / double(bursts());
}

DramEnergy dram_energy(const DramStats& s, const DramConfig& c) {
  const DramTiming& t = c.timing;
  const double tck_ns = 1e9 / c.clock.hz;
  const double devices = c.devices();
  // Rank-cycles of the run (every rank is powered from cycle 0 to the last data) and the part
  // of them with a row open: the sum of bank open times, capped (an upper bound of the union).
  const double rank_cycles = double(s.last_completion_cycle) * c.channels * c.ranks;
  const double active = std::min(rank_cycles, double(s.bank_open_cycles));
  const double pb_units = std::min<std::uint32_t>(c.banks(), 8);
  DramEnergy e;
  for (const DramRail& r : c.rails) {
    const double k = r.voltage * tck_ns * devices;  // mA x V x ns = pJ
    const double act = std::max(0.0, r.idd0 * t.tRC - (r.idd3n * t.tRAS + r.idd2n * (double(t.tRC) - t.tRAS)));
    const double ref = std::max(0.0, r.idd5 - r.idd3n) * t.tRFC;
    e.activate += k * act * double(s.activates);
    e.read += k * std::max(0.0, r.idd4r - r.idd3n) * c.burst_cycles() * double(s.reads);
    e.write += k * std::max(0.0, r.idd4w - r.idd3n) * c.burst_cycles() * double(s.writes);
    // A per-bank refresh refreshes 1 / pb_units of the rows of an all-bank one.
    e.refresh += k * ref * (double(s.refreshes) + double(s.refreshes_per_bank) / pb_units);
    e.background += k * (r.idd3n * active + r.idd2n * (rank_cycles - active));
  }
  return e;
}

nlohmann::json DramStats::to_json(const DramConfig& c) const {
  const double ns = 1e9 / c.clock.hz;  // ns per DRAM cycle
  const std::uint64_t span = bursts() == 0 ? 0 : last_completion_cycle - first_arrival_cycle;
  const double span_seconds = double(span) / c.clock.hz;
  const double bytes = double(bytes_read + bytes_written);
  const double sim_ns = double(last_completion_cycle) * ns;
  const DramEnergy e = dram_energy(*this, c);
  auto per_span = [&](std::uint64_t v) { return span == 0 ? 0.0 : double(v) / double(span); };
  return {
      {"reads", reads},
      {"writes", writes},
      {"bytes_read", bytes_read},
      {"bytes_written", bytes_written},
      {"row_hits", row_hits},
      {"row_misses", row_misses},
      {"row_conflicts", row_conflicts},
      {"row_hit_rate", row_hit_rate()},
      {"activates", activates},
      {"precharges", precharges},
      {"refreshes", refreshes},
      {"refreshes_per_bank", refreshes_per_bank},
      {"refreshes_postponed", refreshes_postponed},
      {"read_latency_avg_ns", read_latency_count == 0 ? 0.0 : double(read_latency_sum) / read_latency_count * ns},
      {"read_latency_p50_ns", double(read_latency.percentile(0.50)) * ns},
      {"read_latency_p99_ns", double(read_latency.percentile(0.99)) * ns},
      {"read_latency_max_ns", double(read_latency_max) * ns},
      {"read_latency_count", read_latency_count},
      {"write_latency_avg_ns", writes == 0 ? 0.0 : double(write_latency_sum) / writes * ns},
      {"read_queue_avg_occupancy", per_span(read_queue_cycles)},
      {"write_queue_avg_occupancy", per_span(write_queue_cycles)},
      {"read_queue_max_occupancy", read_queue_max},
      {"write_queue_max_occupancy", write_queue_max},
      {"backpressure_ns", double(backpressure_cycles) * ns},
      {"write_drains", write_drains},
      {"data_bus_busy_ns", double(data_bus_busy_cycles) * ns},
      {"data_bus_utilisation", span == 0 ? 0.0 : double(data_bus_busy_cycles) / (double(span) * c.channels)},
      {"first_arrival_ns", double(first_arrival_cycle) * ns},
      {"last_completion_ns", double(last_completion_cycle) * ns},
      {"active_ns", double(span) * ns},
      {"sim_time_ns", sim_ns},
      {"peak_bandwidth_bytes_per_s", c.peak_bandwidth().bytes_per_second},
      {"achieved_bandwidth_bytes_per_s", span == 0 ? 0.0 : bytes / span_seconds},
      {"energy_activate_nj", e.activate * 1e-3},
      {"energy_read_nj", e.read * 1e-3},
      {"energy_write_nj", e.write * 1e-3},
      {"energy_refresh_nj", e.refresh * 1e-3},
      {"energy_background_nj", e.background * 1e-3},
      {"energy_total_nj", e.total() * 1e-3},
      {"average_power_mw", sim_ns == 0 ? 0.0 : e.total() / sim_ns},  // pJ / ns = mW
      {"energy_per_bit_pj", bytes == 0 ? 0.0 : e.total() / (8.0 * bytes)},
  };
}

}  // namespace npusim::models
