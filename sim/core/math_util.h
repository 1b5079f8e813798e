#pragma once
// Integer helpers shared by the models, the scheduler and the SCALE-Sim mode.
#include <cstdint>
#include <type_traits>

namespace npusim {

/// ceil(a / b) for non-negative integers, b > 0, in the common type of the two.
template <class A, class B>
constexpr std::common_type_t<A, B> ceil_div(A a, B b) {
  using T = std::common_type_t<A, B>;
  return (T(a) + T(b) - 1) / T(b);
}

/// a * b / c (rounded down, c > 0) without overflowing the product: element counts near 2^63
/// times a byte or op count.
inline std::uint64_t mul_div(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(a) * b / c);
}

}  // namespace npusim
