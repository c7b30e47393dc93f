//===- GraphBuilder.cpp - Appending nodes to an evaluation graph ----------===//

#include "passes/lowering/GraphBuilder.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <fmt/format.h>

namespace mlsc {

using graph::Node;
using graph::NodeId;
using graph::Op;

namespace {

[[noreturn]] void mismatch(const graph::Graph &G, Op Kind,
                           llvm::ArrayRef<NodeId> In, const char *Why) {
  std::string Dims;
  for (NodeId N : In)
    Dims += (Dims.empty() ? "[" : ", [") + G.node(N).Dim.str() + "]";
  llvm::report_fatal_error(llvm::Twine("lowering `") + G.Scenario +
                           "`: " + graph::opSpelling(Kind) + " of " + Dims +
                           ": " + Why);
}

} // namespace

NodeId GraphBuilder::push(Node N, double Value, llvm::ArrayRef<NodeId> In) {
  for (NodeId I : In)
    if (!I.isValid() || I.index() >= G.Nodes.size())
      llvm::report_fatal_error(llvm::Twine("lowering `") + G.Scenario +
                               "`: a node's input is not in the graph");
  N.FirstInput = static_cast<uint32_t>(G.Inputs.size());
  N.NumInputs = static_cast<uint32_t>(In.size());
  for (NodeId I : In)
    G.Inputs.push_back(I.index());
  G.Nodes.push_back(std::move(N));
  G.LeafValues.push_back(Value);
  return NodeId(static_cast<uint32_t>(G.Nodes.size() - 1));
}

NodeId GraphBuilder::leaf(double Value, Dimension D, graph::LeafOrigin O,
                          bool IsBool) {
  Node N;
  N.Kind = Op::Leaf;
  N.Dim = D;
  N.IsBool = IsBool;
  N.Origin = static_cast<uint32_t>(G.Origins.size());
  G.Origins.push_back(std::move(O));
  return push(std::move(N), Value, {});
}

NodeId GraphBuilder::constant(double V, const char *Why) {
  graph::LeafOrigin O;
  O.Spelling = fmt::format("{}", V);
  O.Notes.push_back(Why);
  return leaf(V, Dimension(), std::move(O));
}

Dimension GraphBuilder::resultOf(Op Kind, llvm::ArrayRef<NodeId> In,
                                 bool &IsBool) const {
  for (NodeId I : In)
    if (!I.isValid() || I.index() >= G.Nodes.size())
      llvm::report_fatal_error(llvm::Twine("lowering `") + G.Scenario +
                               "`: " + graph::opSpelling(Kind) +
                               ": an input is not in the graph");
  auto D = [&](unsigned I) { return G.node(In[I]).Dim; };
  auto same = [&] {
    for (NodeId N : In)
      if (G.node(N).Dim != D(0))
        mismatch(G, Kind, In, "the operands must have one dimension");
  };
  auto dimensionless = [&] {
    for (NodeId N : In)
      if (!G.node(N).Dim.isDimensionless())
        mismatch(G, Kind, In, "the operands must be dimensionless");
  };
  if (In.empty())
    mismatch(G, Kind, In, "an operator needs operands");
  IsBool = false;
  switch (Kind) {
  case Op::Leaf:
  case Op::Apply:
    break;
  case Op::Add:
  case Op::Sub:
  case Op::Min:
  case Op::Max:
    same();
    return D(0);
  case Op::Mul:
    return D(0) * D(1);
  case Op::Div:
    return D(0) / D(1);
  case Op::Pow: {
    if (!D(1).isDimensionless())
      mismatch(G, Kind, In, "an exponent is dimensionless");
    if (D(0).isDimensionless())
      return D(0);
    // check-dimensions allows a constant exponent: a number, maybe signed.
    std::optional<double> X;
    NodeId E = In[1];
    double Sign = 1;
    while (G.node(E).Kind == Op::Neg) {
      Sign = -Sign;
      E = G.inputOf(E, 0);
    }
    if (G.node(E).Kind == Op::Leaf)
      X = Sign * G.LeafValues[E.index()];
    std::optional<Dimension> R;
    if (X && *X == std::floor(*X) && std::fabs(*X) < 128)
      R = D(0).pow(static_cast<int>(*X));
    if (!R)
      mismatch(G, Kind, In,
               "a dimensioned base needs a constant whole exponent");
    return *R;
  }
  case Op::Neg:
  case Op::Ceil:
  case Op::Floor:
  case Op::Round:
  case Op::Abs:
    return D(0);
  case Op::Sqrt:
    if (std::optional<Dimension> R = D(0).root(2))
      return *R;
    mismatch(G, Kind, In, "the square root of an odd power");
  case Op::Log:
  case Op::Log2:
  case Op::Log10:
  case Op::Exp:
    dimensionless();
    return Dimension();
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
  case Op::Eq:
  case Op::Ne:
    same();
    IsBool = true;
    return Dimension();
  case Op::And:
  case Op::Or:
  case Op::Not:
    dimensionless();
    IsBool = true;
    return Dimension();
  }
  mismatch(G, Kind, In, "not an operator");
}

NodeId GraphBuilder::op(Op Kind, llvm::ArrayRef<NodeId> In) {
  Node N;
  N.Kind = Kind;
  N.Dim = resultOf(Kind, In, N.IsBool);
  return push(std::move(N), 0, In);
}

NodeId GraphBuilder::apply(FormulaId Which, llvm::ArrayRef<NodeId> In,
                           const std::string &Label) {
  const Formula &F = formula(Which);
  for (NodeId I : In)
    if (!I.isValid() || I.index() >= G.Nodes.size())
      llvm::report_fatal_error(llvm::Twine("lowering `") + G.Scenario +
                               "`: formula " + F.Name +
                               ": an input is not in the graph");
  if (In.size() != F.Arity)
    llvm::report_fatal_error(llvm::Twine("formula ") + F.Name +
                             ": wrong number of inputs");
  for (size_t I = 0; I < In.size(); ++I)
    if (dim(In[I]) != F.Params[I])
      llvm::report_fatal_error(llvm::Twine("formula ") + F.Name + ": input " +
                               llvm::Twine(I) + " is [" + dim(In[I]).str() +
                               "], expected [" + F.Params[I].str() + "]");
  Node N;
  N.Kind = Op::Apply;
  N.Formula = static_cast<uint16_t>(Which);
  N.Dim = F.Result;
  NodeId Id = push(std::move(N), 0, In);
  label(Id, Label);
  return Id;
}

void GraphBuilder::label(NodeId N, const std::string &Name) {
  if (Name.empty())
    return;
  Node &Nd = G.node(N);
  if (Nd.Name.empty())
    Nd.Name = Name;
  G.Named[Name] = N;
}

void GraphBuilder::publish(MetricId M, NodeId N) {
  const MetricInfo &Info = metricInfo(M);
  Node &Nd = G.node(N);
  if (Nd.Dim != Info.Dim || (Nd.IsBool && !Info.IsBool))
    llvm::report_fatal_error(
        llvm::Twine("lowering `") + G.Scenario + "`: metric `" + Info.Name +
        "` is [" + Info.Unit + "], the node is [" +
        (Nd.IsBool ? std::string("bool") : Nd.Dim.str()) + "]");
  // A formula that answers 0 or 1 is a condition once published as one.
  if (Info.IsBool)
    Nd.IsBool = true;
  G.MetricNodes[static_cast<unsigned>(M)] = N;
  label(N, Info.Name);
}

void GraphBuilder::publish(PhaseId P, PhaseMetricId M, NodeId N) {
  const PhaseMetricInfo &Info = phaseMetricInfo(M);
  if (dim(N) != Info.Dim)
    llvm::report_fatal_error(llvm::Twine("lowering `") + G.Scenario + "`: `" +
                             phaseMetricName(P, M) + "` is [" + Info.Unit +
                             "], the node is [" + dim(N).str() + "]");
  G.PhaseNodes[graph::Graph::phaseSlot(P, M)] = N;
  label(N, phaseMetricName(P, M));
}

} // namespace mlsc
