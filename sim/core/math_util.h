#pragma once
// Integer helpers shared by the models, the scheduler, the loaders and the SCALE-Sim mode.
#include <cstdint>
#include <limits>
#include <optional>
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

/// a * b, or nothing when the product does not fit in T (sizes, counts and times from user input
/// must never wrap: a wrapped shape counts as 0 elements and runs with a silently wrong answer).
template <class T>
constexpr std::optional<T> checked_mul(T a, T b) {
  static_assert(std::is_integral_v<T>, "checked_mul is for integers");
  T r{};
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a + b, or nothing when the sum does not fit in T.
template <class T>
constexpr std::optional<T> checked_add(T a, T b) {
  static_assert(std::is_integral_v<T>, "checked_add is for integers");
  T r{};
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a * b when the product is at most `limit`, else nothing (also nothing on overflow).
template <class T>
constexpr std::optional<T> checked_mul_upto(T a, T b, T limit) {
  const auto r = checked_mul(a, b);
  if (!r || *r > limit) return std::nullopt;
  return r;
}

}  // namespace npusim
