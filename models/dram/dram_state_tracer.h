#pragma once
// DRAM bank states and data-bus activity as VCD waveforms. The engine schedules a transfer's
// commands when the transfer arrives, at cycles still in the future, so the waveforms cannot
// be written as the commands are decided: this module replays the controller's activity
// record (DramActivity) from an SC_THREAD that waits until each recorded change's time and
// sets the traced variable then (sc_trace samples variables at the end of each time step).
// See docs/dram.md, "Activity", for why no change arrives after its time in the default
// configurations and what happens if one does.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/dram/dram_controller.h"

namespace npusim::models {

class DramStateTracer : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(DramStateTracer);
  /// Turns on `dram`'s activity record (with banks) and adds to `tf`, per bank,
  /// `dram_chC_bankB_state` (0 idle/precharged, 1 row open, 2 refreshing) and
  /// `dram_chC_bankB_row` (the row last opened), and per channel `dram_chC_bus_busy` (data on
  /// the bus). With several ranks the bank names read `dram_chC_rankR_bankB_...`. Call before
  /// sc_start.
  DramStateTracer(sc_core::sc_module_name name, DramController& dram, sc_core::sc_trace_file* tf);

  /// State changes that were recorded only after their time had passed, so the waveform shows
  /// them late (at the time the replay learnt of them); 0 means the waveform is exact.
  std::uint64_t late_changes() const { return late_; }

 private:
  /// Position in one time-ordered interval list: the first interval that has not ended, read
  /// while the recorder still appends to the list.
  template <typename Reader>
  struct Cursor {
    Reader reader;
    std::size_t shown = SIZE_MAX;  // the interval the waveform shows as active
  };
  /// A Reader over a plain vector (the refreshes), like PackedList's.
  class RefreshReader {
   public:
    explicit RefreshReader(const std::vector<DramRefreshInterval>& list) : list_(&list) {}
    std::size_t index() const { return index_; }
    bool done() const { return index_ >= list_->size(); }
    const DramRefreshInterval& get() const { return (*list_)[index_]; }
    void next() { ++index_; }

   private:
    const std::vector<DramRefreshInterval>* list_;
    std::size_t index_ = 0;
  };

  void replay();
  /// Sets every traced variable to its value at DRAM cycle `cycle`; returns the next cycle at
  /// which one changes (DramEngine::kNever: none recorded yet).
  std::uint64_t update(std::uint64_t cycle);
  /// The last DRAM clock edge at or before the current simulation time.
  std::uint64_t current_cycle() const;

  DramController& dram_;
  std::vector<std::uint32_t> state_, row_;  // per flat bank
  std::unique_ptr<bool[]> busy_;            // per channel
  std::vector<Cursor<DramRowList::Reader>> row_cursor_;
  std::vector<Cursor<RefreshReader>> refresh_cursor_;
  std::vector<Cursor<DramBusList::Reader>> bus_cursor_;
  std::uint64_t late_ = 0;
};

}  // namespace npusim::models
