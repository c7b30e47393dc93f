//===- Evaluator.cpp - Evaluate a graph on plain doubles ------------------===//

#include "runtime/Evaluator.h"

#include <algorithm>
#include <cmath>

namespace mlsc {

Evaluator::Evaluator(const graph::Graph &G) : G(G), Values(G.LeafValues) {
  uint32_t MaxArity = 0;
  for (const graph::Node &N : G.Nodes)
    MaxArity = std::max(MaxArity, N.NumInputs);
  Scratch.resize(MaxArity);
}

void Evaluator::resetLeaves() {
  for (size_t I = 0; I < G.Nodes.size(); ++I)
    if (G.Nodes[I].Kind == graph::Op::Leaf)
      Values[I] = G.LeafValues[I];
}

void Evaluator::run() {
  using graph::Op;
  const uint32_t *In = G.Inputs.data();
  double *V = Values.data();
  for (size_t I = 0, E = G.Nodes.size(); I < E; ++I) {
    const graph::Node &N = G.Nodes[I];
    const uint32_t *A = In + N.FirstInput;
    auto x = [&](unsigned K) { return V[A[K]]; };
    double R = 0;
    switch (N.Kind) {
    case Op::Leaf:
      continue;
    case Op::Add: R = x(0) + x(1); break;
    case Op::Sub: R = x(0) - x(1); break;
    case Op::Mul: R = x(0) * x(1); break;
    case Op::Div: R = x(0) / x(1); break;
    case Op::Pow: R = std::pow(x(0), x(1)); break;
    case Op::Neg: R = -x(0); break;
    case Op::Min:
    case Op::Max:
      R = x(0);
      for (unsigned K = 1; K < N.NumInputs; ++K)
        R = N.Kind == Op::Min ? std::min(R, x(K)) : std::max(R, x(K));
      break;
    case Op::Ceil: R = std::ceil(x(0)); break;
    case Op::Floor: R = std::floor(x(0)); break;
    case Op::Round: R = std::round(x(0)); break;
    case Op::Abs: R = std::fabs(x(0)); break;
    case Op::Sqrt: R = std::sqrt(x(0)); break;
    case Op::Log: R = std::log(x(0)); break;
    case Op::Log2: R = std::log2(x(0)); break;
    case Op::Log10: R = std::log10(x(0)); break;
    case Op::Exp: R = std::exp(x(0)); break;
    case Op::Lt: R = x(0) < x(1); break;
    case Op::Le: R = x(0) <= x(1); break;
    case Op::Gt: R = x(0) > x(1); break;
    case Op::Ge: R = x(0) >= x(1); break;
    case Op::Eq: R = x(0) == x(1); break;
    case Op::Ne: R = x(0) != x(1); break;
    case Op::And: R = x(0) != 0 && x(1) != 0; break;
    case Op::Or: R = x(0) != 0 || x(1) != 0; break;
    case Op::Not: R = x(0) == 0; break;
    case Op::Apply:
      for (unsigned K = 0; K < N.NumInputs; ++K)
        Scratch[K] = x(K);
      R = N.F->Eval(Scratch.data());
      break;
    }
    V[I] = R;
  }
}

} // namespace mlsc
