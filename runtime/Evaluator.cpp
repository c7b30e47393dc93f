//===- Evaluator.cpp - Evaluate a graph on plain doubles ------------------===//

#include "runtime/Evaluator.h"
#include "runtime/walls/Formulas.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>

namespace mlsc {

Evaluator::Evaluator(const graph::Graph &Graph)
    : G(&Graph), Values(Graph.LeafValues) {
  uint32_t MaxArity = 0;
  for (uint32_t I = 0; I < Graph.Nodes.size(); ++I) {
    const graph::Node &N = Graph.Nodes[I];
    if (N.Kind == graph::Op::Leaf)
      continue;
    if (N.NumInputs > 255)
      llvm::report_fatal_error("evaluator: a node has more than 255 inputs");
    Instr In;
    In.Kind = N.Kind;
    In.NumInputs = static_cast<uint8_t>(N.NumInputs);
    In.Out = I;
    In.FirstInput = static_cast<uint32_t>(Operands.size());
    In.Eval = N.Kind == graph::Op::Apply ? formula(N).Eval : nullptr;
    for (uint32_t K = 0; K < N.NumInputs; ++K)
      Operands.push_back(Graph.Inputs[N.FirstInput + K]);
    Code.push_back(In);
    MaxArity = std::max(MaxArity, N.NumInputs);
  }
  Scratch.resize(MaxArity);
}

void Evaluator::resetLeaves() {
  for (size_t I = 0; I < G->Nodes.size(); ++I)
    if (G->Nodes[I].Kind == graph::Op::Leaf)
      Values[I] = G->LeafValues[I];
}

inline void Evaluator::exec(const Instr &In) {
  using graph::Op;
  const uint32_t *A = Operands.data() + In.FirstInput;
  double *V = Values.data();
  auto x = [&](unsigned K) { return V[A[K]]; };
  double R = 0;
  switch (In.Kind) {
  case Op::Leaf:
    return;
  case Op::Add:
    R = x(0) + x(1);
    break;
  case Op::Sub:
    R = x(0) - x(1);
    break;
  case Op::Mul:
    R = x(0) * x(1);
    break;
  case Op::Div:
    R = x(0) / x(1);
    break;
  case Op::Pow:
    R = std::pow(x(0), x(1));
    break;
  case Op::Neg:
    R = -x(0);
    break;
  case Op::Min:
  case Op::Max:
    R = x(0);
    for (unsigned K = 1; K < In.NumInputs; ++K)
      R = In.Kind == Op::Min ? std::min(R, x(K)) : std::max(R, x(K));
    break;
  case Op::Ceil:
    R = std::ceil(x(0));
    break;
  case Op::Floor:
    R = std::floor(x(0));
    break;
  case Op::Round:
    R = std::round(x(0));
    break;
  case Op::Abs:
    R = std::fabs(x(0));
    break;
  case Op::Sqrt:
    R = std::sqrt(x(0));
    break;
  case Op::Log:
    R = std::log(x(0));
    break;
  case Op::Log2:
    R = std::log2(x(0));
    break;
  case Op::Log10:
    R = std::log10(x(0));
    break;
  case Op::Exp:
    R = std::exp(x(0));
    break;
  case Op::Lt:
    R = x(0) < x(1);
    break;
  case Op::Le:
    R = x(0) <= x(1);
    break;
  case Op::Gt:
    R = x(0) > x(1);
    break;
  case Op::Ge:
    R = x(0) >= x(1);
    break;
  case Op::Eq:
    R = x(0) == x(1);
    break;
  case Op::Ne:
    R = x(0) != x(1);
    break;
  case Op::And:
    R = x(0) != 0 && x(1) != 0;
    break;
  case Op::Or:
    R = x(0) != 0 || x(1) != 0;
    break;
  case Op::Not:
    R = x(0) == 0;
    break;
  case Op::Apply:
    for (unsigned K = 0; K < In.NumInputs; ++K)
      Scratch[K] = x(K);
    R = In.Eval(Scratch.data());
    break;
  }
  V[In.Out] = R;
}

void Evaluator::run() {
  for (const Instr &In : Code)
    exec(In);
}

void Evaluator::run(const EvalPlan &P) {
  for (uint32_t I : P.Instrs)
    exec(Code[I]);
}

EvalPlan Evaluator::plan(llvm::ArrayRef<graph::NodeId> Leaves,
                         llvm::ArrayRef<graph::NodeId> Wanted) const {
  // Nodes are in topological order, so one backward sweep marks everything
  // the wanted nodes read, and one forward sweep everything downstream of
  // the leaves.
  std::vector<char> Needed(G->Nodes.size(), Wanted.empty() ? 1 : 0);
  for (graph::NodeId W : Wanted)
    Needed[W.index()] = 1;
  if (!Wanted.empty())
    for (uint32_t I = Code.size(); I-- > 0;) {
      const Instr &In = Code[I];
      if (!Needed[In.Out])
        continue;
      const uint32_t *A = Operands.data() + In.FirstInput;
      for (unsigned K = 0; K < In.NumInputs; ++K)
        Needed[A[K]] = 1;
    }
  std::vector<char> Dirty(G->Nodes.size(), 0);
  for (graph::NodeId L : Leaves)
    Dirty[L.index()] = 1;
  EvalPlan P;
  for (uint32_t I = 0; I < Code.size(); ++I) {
    const Instr &In = Code[I];
    const uint32_t *A = Operands.data() + In.FirstInput;
    for (unsigned K = 0; K < In.NumInputs; ++K)
      if (Dirty[A[K]]) {
        Dirty[In.Out] = 1;
        if (Needed[In.Out])
          P.Instrs.push_back(I);
        break;
      }
  }
  return P;
}

} // namespace mlsc
