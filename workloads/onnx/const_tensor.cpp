#include "workloads/onnx/const_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "sim/core/errors.h"
#include "workloads/graph_internal.h"

namespace npusim::workloads::onnx {
namespace {

using TP = ::onnx::TensorProto;

struct TypeInfo {
  int type;
  const char* name;
  int bytes;
  bool integer;
};

constexpr TypeInfo kTypes[] = {
    {TP::FLOAT, "float32", 4, false},     {TP::UINT8, "uint8", 1, true},   {TP::INT8, "int8", 1, true},
    {TP::UINT16, "uint16", 2, true},      {TP::INT16, "int16", 2, true},   {TP::INT32, "int32", 4, true},
    {TP::INT64, "int64", 8, true},        {TP::BOOL, "bool", 1, true},     {TP::FLOAT16, "float16", 2, false},
    {TP::DOUBLE, "float64", 8, false},    {TP::UINT32, "uint32", 4, true}, {TP::UINT64, "uint64", 8, true},
    {TP::BFLOAT16, "bfloat16", 2, false},
};

const TypeInfo* type_info(int type) {
  for (const auto& t : kTypes) {
    if (t.type == type) return &t;
  }
  return nullptr;
}

float half_to_float(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  const float sign = (h & 0x8000) ? -1.0f : 1.0f;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
}

float bfloat16_to_float(std::uint16_t b) {
  const std::uint32_t bits = std::uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// One little-endian element of `type` at `p`.
double read_raw(const char* p, int type) {
  const auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (type) {
    case TP::FLOAT:
      return load(float{});
    case TP::UINT8:
      return load(std::uint8_t{});
    case TP::INT8:
      return load(std::int8_t{});
    case TP::UINT16:
      return load(std::uint16_t{});
    case TP::INT16:
      return load(std::int16_t{});
    case TP::INT32:
      return load(std::int32_t{});
    case TP::INT64:
      return static_cast<double>(load(std::int64_t{}));
    case TP::BOOL:
      return load(std::uint8_t{}) != 0;
    case TP::FLOAT16:
      return half_to_float(load(std::uint16_t{}));
    case TP::DOUBLE:
      return load(double{});
    case TP::UINT32:
      return load(std::uint32_t{});
    case TP::UINT64:
      return static_cast<double>(load(std::uint64_t{}));
    case TP::BFLOAT16:
      return bfloat16_to_float(load(std::uint16_t{}));
    default:
      return 0;
  }
}

/// Values from the typed repeated fields ONNX uses when raw_data is empty.
std::vector<double> typed_values(const TP& t) {
  std::vector<double> v;
  switch (t.data_type()) {
    case TP::FLOAT:
      v.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TP::DOUBLE:
      v.assign(t.double_data().begin(), t.double_data().end());
      break;
    case TP::INT64:
      for (auto x : t.int64_data()) v.push_back(static_cast<double>(x));
      break;
    case TP::UINT32:
    case TP::UINT64:
      for (auto x : t.uint64_data()) v.push_back(static_cast<double>(x));
      break;
    case TP::FLOAT16:
      for (auto x : t.int32_data()) v.push_back(half_to_float(static_cast<std::uint16_t>(x)));
      break;
    case TP::BFLOAT16:
      for (auto x : t.int32_data()) v.push_back(bfloat16_to_float(static_cast<std::uint16_t>(x)));
      break;
    default:  // int8/16/32, uint8/16 and bool sit in int32_data
      for (auto x : t.int32_data()) v.push_back(x);
  }
  return v;
}

}  // namespace

std::int64_t ConstTensor::elements() const {
  return internal::product(shape, 0, shape.size());
}

bool ConstTensor::is_integer() const {
  return is_integer_type(elem_type);
}

std::vector<std::int64_t> ConstTensor::integers(const std::string& where, const std::string& what) const {
  if (!values) {
    throw InputError(
        where,
        "expected " + what +
            " to be known at import time (a constant, or computed from shapes only), found a value npusim cannot fold");
  }
  std::vector<std::int64_t> out;
  out.reserve(values->size());
  for (double v : *values) {
    if (std::isnan(v)) throw InputError(where, "expected " + what + " to be integers, found NaN");
    // Exporters write INT64_MAX / INT64_MIN as "to the end" (Slice ends): as doubles they
    // round to +-2^63, which no int64 holds; saturate, keeping their meaning.
    constexpr double kTwo63 = 9223372036854775808.0;
    out.push_back(v >= kTwo63   ? std::numeric_limits<std::int64_t>::max()
                  : v < -kTwo63 ? std::numeric_limits<std::int64_t>::min()
                                : static_cast<std::int64_t>(v));
  }
  return out;
}

ConstTensor decode_tensor(const TP& t, const std::string& where) {
  ConstTensor c;
  c.elem_type = t.data_type();
  for (auto d : t.dims()) {
    if (d < 0)
      throw InputError(where, "expected tensor '" + t.name() + "' to have dims >= 0, found " + std::to_string(d));
    c.shape.push_back(d);
  }
  const TypeInfo* info = type_info(c.elem_type);
  const std::int64_t n = c.elements();
  if (!info || n > kMaxFoldedValues || t.data_location() == TP::EXTERNAL) return c;
  std::vector<double> v;
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != static_cast<std::size_t>(n * info->bytes)) {
      throw InputError(where, "expected " + std::to_string(n * info->bytes) + " bytes of data for tensor '" + t.name() +
                                  "' " + format_shape(c.shape) + " " + info->name + ", found " +
                                  std::to_string(raw.size()) + " (a truncated or corrupt file?)");
    }
    for (std::int64_t i = 0; i < n; ++i) v.push_back(read_raw(raw.data() + i * info->bytes, c.elem_type));
  } else {
    v = typed_values(t);
  }
  // A tensor with dims but no stored data (weights left out of a test model) keeps its shape only.
  if (static_cast<std::int64_t>(v.size()) == n) c.values = std::move(v);
  return c;
}

std::string dtype_name(int elem_type) {
  const TypeInfo* info = type_info(elem_type);
  return info ? info->name : "type " + std::to_string(elem_type);
}

bool is_integer_type(int elem_type) {
  const TypeInfo* info = type_info(elem_type);
  return info && info->integer;
}

std::uint8_t quantized_bytes(int elem_type) {
  const TypeInfo* info = type_info(elem_type);
  if (!info || !info->integer || info->bytes > 4 || elem_type == TP::BOOL) return 0;
  return static_cast<std::uint8_t>(info->bytes);
}

}  // namespace npusim::workloads::onnx
