#pragma once
// Integer helpers shared by the models, the scheduler and the SCALE-Sim mode.
#include <type_traits>

namespace npusim {

/// ceil(a / b) for non-negative integers, b > 0, in the common type of the two.
template <class A, class B>
constexpr std::common_type_t<A, B> ceil_div(A a, B b) {
  using T = std::common_type_t<A, B>;
  return (T(a) + T(b) - 1) / T(b);
}

}  // namespace npusim
