// LSTM, GRU and RNN unrolled over the sequence, as an NPU compiler lowers them: per step and per
// gate a matmul of the step's input with the gate's input weights (+ the gate's bias) and one of
// the previous hidden state with its recurrent weights, then the gate activations and the state
// update on the vector unit. A gate's weights are a slice of W / R, laid out at compile time.
#include <memory>

#include "sim/core/errors.h"
#include "workloads/onnx/importer.h"

namespace npusim::workloads::onnx {
namespace {

enum class Cell { Lstm, Gru, Rnn };

int gate_count(Cell c) {
  return c == Cell::Lstm ? 4 : c == Cell::Gru ? 3 : 1;
}

}  // namespace

void Importer::map_recurrent(const Node& n) {
  const Cell cell = n.proto.op_type() == "LSTM" ? Cell::Lstm : n.proto.op_type() == "GRU" ? Cell::Gru : Cell::Rnn;
  const Value& x = n.in(0);
  const Value& w = n.in(1);
  const Value& r = n.in(2);
  if (x.shape.size() != 3) n.fail("X of rank 3 [seq, batch, input]", format_shape(x.shape));
  if (!w.is_constant() || !r.is_constant()) n.fail("W and R known at import time (weights)", "activations");
  const bool batch_first = n.attrs.integer("layout", 0) != 0;
  const std::int64_t seq = x.shape[batch_first ? 1 : 0], batch = x.shape[batch_first ? 0 : 1], in = x.shape[2];
  const std::int64_t hidden = n.attrs.integer("hidden_size", w.shape.size() == 3 ? w.shape[1] / gate_count(cell) : 0);
  const std::string direction = n.attrs.text("direction", "forward");
  const std::int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int gates = gate_count(cell);
  if (w.shape != Shape{dirs, gates * hidden, in} || r.shape != Shape{dirs, gates * hidden, hidden})
    n.fail("W " + format_shape({dirs, gates * hidden, in}) + " and R " + format_shape({dirs, gates * hidden, hidden}),
           format_shape(w.shape) + " and " + format_shape(r.shape));
  if (seq < 1 || seq > kMaxFoldedValues) n.fail("a sequence of 1 to 65536 steps", std::to_string(seq));
  const bool linear_before_reset = n.attrs.integer("linear_before_reset", 0) != 0;
  // Each step gives at least one matmul per gate (the recurrent ones and the state update more).
  check_unroll_estimate(n, seq * dirs, gates, "ops (at least one matmul per gate)");
  unrolling_.push_back({"node '" + n.name + "' (" + n.proto.op_type() + ")", seq * dirs, true});
  // A gate's slice of W, R or B: one constant, however many steps read it.
  const auto weight = [&](const Value& of, std::int64_t d, int g, Shape shape) -> const Value& {
    const std::string name = of.name + ".d" + std::to_string(d) + ".g" + std::to_string(g);
    if (!values_.count(name)) {
      auto c = std::make_shared<ConstTensor>(ConstTensor{std::move(shape), ::onnx::TensorProto::FLOAT, std::nullopt});
      bind(name, Value{name, c->shape, -1, std::move(c)});
    }
    return values_.at(name);
  };
  std::vector<std::vector<Value>> hs(static_cast<std::size_t>(dirs));  // h per step, in time order
  Value last_h[2], last_c[2];
  for (std::int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const std::string tag = n.out() + ".d" + std::to_string(d);
    std::optional<Value> h, c;
    if (n.has(5)) {  // initial_h [dirs, batch, hidden]
      OpAttrs s;
      s.axes = {0};
      s.starts = {d};
      s.ends = {d + 1};
      h = reshaped(n, emit(n, OpKind::Slice, {operand(n.in(5))}, s, tag + ".h0", ".h0"), {batch, hidden}, tag + ".h0v");
    }
    if (cell == Cell::Lstm && n.has(6)) {
      OpAttrs s;
      s.axes = {0};
      s.starts = {d};
      s.ends = {d + 1};
      c = reshaped(n, emit(n, OpKind::Slice, {operand(n.in(6))}, s, tag + ".c0", ".c0"), {batch, hidden}, tag + ".c0v");
    }
    std::vector<Value> steps(static_cast<std::size_t>(seq));
    for (std::int64_t k = 0; k < seq; ++k) {
      const std::int64_t t = reverse ? seq - 1 - k : k;
      const std::string st = tag + ".t" + std::to_string(t);
      OpAttrs s;
      s.axes = {batch_first ? 1 : 0};
      s.starts = {t};
      s.ends = {t + 1};
      const Value xt = reshaped(n, emit(n, OpKind::Slice, {operand(x)}, s, st + ".x", ".x"), {batch, in}, st + ".xv");
      // One gate's pre-activation: x W_g^T + b_g (+ h R_g^T; GRU's candidate reads r * h).
      const auto gate = [&](int g, const std::optional<Value>& state, OpKind act) {
        std::vector<int> a_in{operand(xt), operand(weight(w, d, g, {in, hidden}))};
        if (n.has(3)) a_in.push_back(operand(weight(n.in(3), d, g, {hidden})));
        Value z =
            emit(n, OpKind::MatMul, a_in, {}, st + ".g" + std::to_string(g) + ".x", ".g" + std::to_string(g) + ".x");
        if (state) {
          const Value hr = emit(n, OpKind::MatMul, {operand(*state), operand(weight(r, d, g, {hidden, hidden}))}, {},
                                st + ".g" + std::to_string(g) + ".h", ".g" + std::to_string(g) + ".h");
          z = emit(n, OpKind::Add, {z.tensor, hr.tensor}, {}, st + ".g" + std::to_string(g) + ".z",
                   ".g" + std::to_string(g) + ".z");
        }
        return emit(n, act, {z.tensor}, {}, st + ".g" + std::to_string(g), ".g" + std::to_string(g));
      };
      const auto op2 = [&](OpKind k2, const Value& a, const Value& b, const std::string& what) {
        return emit(n, k2, {operand(a), operand(b)}, {}, st + "." + what, "." + what);
      };
      Value h_new;
      if (cell == Cell::Rnn) {
        h_new = gate(0, h, OpKind::Tanh);
      } else if (cell == Cell::Lstm) {
        // ONNX gate order i, o, f, c: c' = f*c + i*g, h' = o * tanh(c').
        const Value i = gate(0, h, OpKind::Sigmoid), o = gate(1, h, OpKind::Sigmoid);
        const Value f = gate(2, h, OpKind::Sigmoid), g = gate(3, h, OpKind::Tanh);
        Value c_new = op2(OpKind::Mul, i, g, "ig");
        if (c) c_new = op2(OpKind::Add, op2(OpKind::Mul, f, *c, "fc"), c_new, "c");
        c = c_new;
        h_new = op2(OpKind::Mul, o, emit(n, OpKind::Tanh, {c->tensor}, {}, st + ".tc", ".tc"), "h");
      } else {
        // ONNX gate order z, r, h: h~ = tanh(x Wh + (r*h) Rh), h' = h~ + z * (h - h~).
        const Value z = gate(0, h, OpKind::Sigmoid), rr = gate(1, h, OpKind::Sigmoid);
        Value cand;
        if (h && linear_before_reset) {  // tanh(x Wh + r * (h Rh))
          const Value hr = emit(n, OpKind::MatMul, {operand(*h), operand(weight(r, d, 2, {hidden, hidden}))}, {},
                                st + ".g2.h", ".g2.h");
          std::vector<int> a_in{operand(xt), operand(weight(w, d, 2, {in, hidden}))};
          if (n.has(3)) a_in.push_back(operand(weight(n.in(3), d, 2, {hidden})));
          const Value xw = emit(n, OpKind::MatMul, a_in, {}, st + ".g2.x", ".g2.x");
          const Value sum = op2(OpKind::Add, xw, op2(OpKind::Mul, rr, hr, "rhr"), "g2.z");
          cand = emit(n, OpKind::Tanh, {sum.tensor}, {}, st + ".g2", ".g2");
        } else {
          std::optional<Value> reset;
          if (h) reset = op2(OpKind::Mul, rr, *h, "rh");
          cand = gate(2, reset, OpKind::Tanh);
        }
        h_new = h ? op2(OpKind::Add, cand, op2(OpKind::Mul, z, op2(OpKind::Sub, *h, cand, "dh"), "zdh"), "h")
                  : op2(OpKind::Sub, cand, op2(OpKind::Mul, z, cand, "zc"), "h");
      }
      h = h_new;
      steps[static_cast<std::size_t>(t)] = h_new;
    }
    hs[static_cast<std::size_t>(d)] = steps;
    last_h[d] = *h;
    if (c) last_c[d] = *c;
  }
  // Y [seq, dirs, batch, hidden]: every step's h written into place.
  if (!n.out(0).empty()) {
    std::vector<int> parts;
    for (std::int64_t t = 0; t < seq; ++t) {
      for (std::int64_t d = 0; d < dirs; ++d) {
        const Value& v = hs[static_cast<std::size_t>(d)][static_cast<std::size_t>(t)];
        parts.push_back(operand(reshaped(n, v, {1, 1, batch, hidden}, v.name + ".y")));
      }
    }
    OpAttrs cat;
    cat.axis = 0;
    Value y = parts.size() == 1 ? reshaped(n, hs[0][0], {1, 1, batch, hidden}, n.out())
                                : emit(n, OpKind::Concat, parts, cat, n.out() + ".steps", ".y");
    bind(n.out(), reshaped(n, y, {seq, dirs, batch, hidden}, n.out(), ".yv"));
  }
  const auto bind_last = [&](std::size_t i, Value* last) {
    if (n.proto.output_size() <= static_cast<int>(i) || n.out(i).empty()) return;
    if (dirs == 1) return bind(n.out(i), reshaped(n, last[0], {1, batch, hidden}, n.out(i)));
    OpAttrs cat;
    cat.axis = 0;
    const Value a = reshaped(n, last[0], {1, batch, hidden}, n.out(i) + ".f"),
                b = reshaped(n, last[1], {1, batch, hidden}, n.out(i) + ".b");
    bind(n.out(i), emit(n, OpKind::Concat, {operand(a), operand(b)}, cat, n.out(i), ".last" + std::to_string(i)));
  };
  bind_last(1, last_h);
  if (cell == Cell::Lstm) bind_last(2, last_c);
  unrolling_.pop_back();
}

}  // namespace npusim::workloads::onnx
