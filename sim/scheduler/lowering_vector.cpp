// Lowering of a vector segment (an elementwise, movement, row or reduction head): its tiles as
// vector_geometry cuts them, each input's range loaded as it changes, then the epilogue and store;
// a concat written in place only waits for its producers' stores.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/core/math_util.h"
#include "sim/scheduler/lowering_internal.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched::detail {
using workloads::Op;

/// A vector head's tiles as vector_geometry cuts them (the tiler walks the same tiles): per
/// tile, each input's range loaded when it changes, the tile's work, then (unless it is a
/// statistics pass or a reduction chunk that completes no output) the epilogue and the store.
void Lowering::lower_vector(const Segment& seg) {
  const int ho = seg.ops[0];
  const Op& head = g_.op(ho);
  if (seg.tiling.in_place) {  // the producers' stores wrote it: ready when they all are
    std::vector<std::uint32_t> stores;
    for (int t : head.inputs) add_ready_dep(t, false, stores);
    dram_ready_[head.outputs[0]] = int(barrier(std::move(stores)));
    previous_computes_.clear();
    return;
  }
  const VectorGeometry geo = vector_geometry(g_, hw_, head);
  const int passes = seg.tiling.passes;
  Stream st;
  std::map<int, OperandBuffer> in_bufs;
  std::set<int> reread;  // head inputs (base tensors) an epilogue op reads from the head's tile
  for (std::size_t k = 1; k < seg.ops.size(); ++k)
    for (int t : g_.op(seg.ops[k]).inputs)
      if (std::find(head.inputs.begin(), head.inputs.end(), t) != head.inputs.end()) reread.insert(base_tensor(g_, t));
  std::map<int, std::uint64_t> pass_done;  // driver elements done per pass
  const std::uint64_t N = std::max<std::uint64_t>(geo.elems, 1);
  for_each_vector_tile(geo, seg.tiling.tile_elems, passes, [&](const VectorTile& t) {
    std::vector<std::uint32_t> deps;
    std::uint64_t read_bytes = 0;
    for (std::size_t k = 0; k < head.inputs.size(); ++k) {
      const int in = head.inputs[k];
      const InputRange& r = t.in[k];
      // A slice's covering span is loaded whole; the vector unit reads the elements it keeps.
      const bool covered = geo.cuts[k] == InputCut::Sliced && geo.in_cover[k];
      read_bytes += workloads::elements_bytes(g_, in, covered ? t.d1 - t.d0 : r.elements(), eb_);
      if (where_.resident[base_tensor(g_, in)]) {
        add_ready_dep(in, true, deps);
        continue;
      }
      const auto key = std::make_tuple(std::int64_t(r.lo), std::int64_t(r.hi), std::int64_t(r.runs));
      deps.push_back(ensure_loaded(in_bufs[base_tensor(g_, in)], key, ho, in,
                                   at(in_bytes(in, region(0, r.lo, r.hi - r.lo, r.stride, r.runs, 1)), addr(in))));
    }
    const bool writes = t.pass != 1 && t.out1 > t.out0;
    if (writes && st.finals.size() >= 2) deps.push_back(st.finals[st.finals.size() - 2]);  // output slot
    const std::uint64_t ops = vector_pass_ops(g_, head, eb_, passes, t.pass);
    std::uint64_t& done = pass_done[t.pass];
    // A row op's output tile has the input tile's runs; a reduction's is one run.
    const std::uint64_t out_runs = geo.cls == VectorClass::Reduction ? 1 : t.runs;
    const std::uint64_t n = (t.out1 - t.out0) * out_runs;
    const std::uint64_t tile_ops = mul_div(ops, done + t.elements(), N) - mul_div(ops, done, N);
    done += t.elements();
    const std::uint32_t id =
        emit(vector_command(ho, n, tile_ops, read_bytes, n * eb(head.outputs[0]), std::move(deps)));
    for (auto& [tensor, buf] : in_bufs)
      if (!buf.users.empty()) buf.users.back().push_back(id);
    if (!writes) {
      st.computes.push_back(id);
      return;
    }
    epilogue_and_store(seg, st, id, n,
                       region(0, t.out0, t.out1 - t.out0, t.stride, out_runs, eb(segment_output(g_, seg))));
    // An epilogue op that reads the head's input tile too (SiLU's x) frees its slot last.
    for (auto& [tensor, buf] : in_bufs)
      if (!buf.users.empty() && reread.count(tensor)) buf.users.back().push_back(st.computes.back());
  });
  finish_segment(seg, st);
}

}  // namespace npusim::sched::detail
