#pragma once
// A list of records kept as deltas: each field is stored as the zigzag varint of its difference
// from the previous record's (wrapping 64-bit arithmetic, so every value round-trips exactly).
// For long time-ordered lists whose neighbours differ little, such as the DRAM activity of a
// run (millions of bus and row intervals: a few bytes each instead of 32-40). Appending and
// reading in order only; the last record stays unpacked so a recorder can still extend it.
//
// A record type T is described by PackedFields<T>: kCount fields as uint64_t, `split` and
// `join`. Give durations as fields (end - begin) rather than ends: they pack smaller.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace npusim {

template <class T>
struct PackedFields;  // specialised per record type: kCount, split(const T&, uint64_t*), join(const uint64_t*)

template <class T>
class PackedList {
  using Fields = PackedFields<T>;
  static constexpr std::size_t kCount = Fields::kCount;

 public:
  PackedList() = default;
  PackedList(std::initializer_list<T> records) {
    for (const T& r : records) push_back(r);
  }

  void push_back(const T& record) {
    if (size_ > 0) pack_tail();
    tail_ = record;
    ++size_;
  }
  /// The last record, still open to changes. Precondition: !empty().
  T& back() { return tail_; }
  const T& back() const { return tail_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Bytes held (the packed records and the open one).
  std::size_t bytes() const { return bytes_.capacity() + sizeof(*this); }
  /// Empties the list and frees its memory.
  void release() { *this = PackedList(); }

  /// A place in the list that stays valid while the list grows (a replay reading the record as
  /// the recorder writes it): the record at index() is packed, or the open last one.
  class Reader {
   public:
    explicit Reader(const PackedList& list) : list_(&list) {}
    std::size_t index() const { return index_; }
    bool done() const { return index_ >= list_->size_; }
    /// The record at index(). Precondition: !done().
    T get() {
      catch_up();
      if (index_ + 1 == list_->size_) return list_->tail_;
      std::uint64_t f[kCount];
      std::size_t at = at_;
      unpack(f, at);
      return Fields::join(f);
    }
    void next() {
      catch_up();
      if (index_ + 1 < list_->size_) {
        unpack(fields_, at_);
      } else {
        lagging_ = true;  // passed the open record: it is packed (as it ends up) once another comes
      }
      ++index_;
    }

   private:
    void catch_up() {
      if (!lagging_ || index_ >= list_->size_) return;
      unpack(fields_, at_);  // the record before index_, packed since the reader passed it
      lagging_ = false;
    }
    void unpack(std::uint64_t (&f)[kCount], std::size_t& at) const {
      for (std::size_t k = 0; k < kCount; ++k) f[k] = fields_[k] + unzigzag(read_varint(list_->bytes_, at));
    }
    const PackedList* list_;
    std::size_t index_ = 0, at_ = 0;     // at_: where the deltas of record index_ (lagging: index_ - 1) begin
    std::uint64_t fields_[kCount] = {};  // the record before those deltas (zeros before the first)
    bool lagging_ = false;
  };

  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    const_iterator(const PackedList* list, std::size_t index) : reader_(*list), end_(index == list->size_) {
      if (!end_ && !reader_.done()) current_ = reader_.get();
      end_ = end_ || reader_.done();
    }
    const T& operator*() const { return current_; }
    const T* operator->() const { return &current_; }
    const_iterator& operator++() {
      reader_.next();
      end_ = reader_.done();
      if (!end_) current_ = reader_.get();
      return *this;
    }
    bool operator==(const const_iterator& o) const {
      return end_ == o.end_ && (end_ || reader_.index() == o.reader_.index());
    }
    bool operator!=(const const_iterator& o) const { return !(*this == o); }

   private:
    Reader reader_;
    bool end_;
    T current_{};
  };

  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size_); }

  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  bool operator==(const PackedList& o) const {
    if (size_ != o.size_ || bytes_ != o.bytes_) return false;  // the packing is a function of the records
    if (size_ == 0) return true;
    std::uint64_t a[kCount], b[kCount];
    Fields::split(tail_, a), Fields::split(o.tail_, b);
    for (std::size_t k = 0; k < kCount; ++k)
      if (a[k] != b[k]) return false;
    return true;
  }
  bool operator!=(const PackedList& o) const { return !(*this == o); }

 private:
  static std::uint64_t zigzag(std::uint64_t delta) {
    const auto s = static_cast<std::int64_t>(delta);
    return (static_cast<std::uint64_t>(s) << 1) ^ static_cast<std::uint64_t>(s >> 63);
  }
  static std::uint64_t unzigzag(std::uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }
  static std::uint64_t read_varint(const std::vector<std::uint8_t>& bytes, std::size_t& at) {
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const std::uint8_t b = bytes[at++];
      v |= std::uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  }

  void pack_tail() {
    std::uint64_t f[kCount];
    Fields::split(tail_, f);
    for (std::size_t k = 0; k < kCount; ++k) {
      for (std::uint64_t v = zigzag(f[k] - last_[k]);; v >>= 7) {
        if (v < 0x80) {
          bytes_.push_back(static_cast<std::uint8_t>(v));
          break;
        }
        bytes_.push_back(static_cast<std::uint8_t>(v | 0x80));
      }
      last_[k] = f[k];
    }
  }

  std::vector<std::uint8_t> bytes_;  // the records before the last, packed
  std::uint64_t last_[kCount] = {};  // fields of the last packed record
  T tail_{};
  std::size_t size_ = 0;
};

}  // namespace npusim
