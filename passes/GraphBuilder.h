//===- GraphBuilder.h - Appending nodes to an evaluation graph ---*- C++
//-*-===//
//
// Used by lower-to-graph: leaves with their origins, arithmetic nodes and
// wall formulas, each appended after its inputs so the graph stays in
// topological order. A formula whose inputs do not have the dimensions of
// its C++ signature is a bug in lowering and stops the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_PASSES_GRAPHBUILDER_H
#define MLSC_PASSES_GRAPHBUILDER_H

#include "ir/Graph.h"
#include "runtime/walls/Formulas.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace mlsc {

/// Appends nodes to a graph in topological order (every input exists
/// before its user), checking each formula's inputs against its signature.
class GraphBuilder {
public:
  explicit GraphBuilder(graph::Graph &G) : G(G) {}

  uint32_t leaf(double Value, Dimension D, graph::LeafOrigin O,
                const std::string &Name = "", bool IsBool = false) {
    graph::Node N;
    N.Kind = graph::Op::Leaf;
    N.Dim = D;
    N.IsBool = IsBool;
    N.Name = Name;
    N.Origin = static_cast<uint32_t>(G.Origins.size());
    G.Origins.push_back(std::move(O));
    return push(std::move(N), Value, {});
  }

  uint32_t op(graph::Op Kind, std::vector<uint32_t> In, Dimension D,
              bool IsBool = false) {
    graph::Node N;
    N.Kind = Kind;
    N.Dim = D;
    N.IsBool = IsBool;
    return push(std::move(N), 0, In);
  }

  uint32_t apply(FormulaId Which, std::vector<uint32_t> In,
                 const std::string &Name) {
    const Formula &F = formula(Which);
    if (In.size() != F.Arity)
      llvm::report_fatal_error(llvm::Twine("formula ") + F.Name +
                               ": wrong number of inputs");
    for (size_t I = 0; I < In.size(); ++I)
      if (G.Nodes[In[I]].Dim != F.Params[I])
        llvm::report_fatal_error(llvm::Twine("formula ") + F.Name + ": input " +
                                 llvm::Twine(I) + " is [" +
                                 G.Nodes[In[I]].Dim.str() + "], expected [" +
                                 F.Params[I].str() + "]");
    graph::Node N;
    N.Kind = graph::Op::Apply;
    N.Formula = static_cast<uint16_t>(Which);
    N.Dim = F.Result;
    uint32_t Id = push(std::move(N), 0, In);
    name(Id, Name);
    return Id;
  }

  void name(uint32_t Id, const std::string &Name) {
    if (Name.empty())
      return;
    if (G.Nodes[Id].Name.empty())
      G.Nodes[Id].Name = Name;
    G.Named[Name] = Id;
  }

  uint32_t constant(double V, const char *Why) {
    graph::LeafOrigin O;
    O.Spelling = fmt::format("{}", V);
    O.Notes.push_back(Why);
    return leaf(V, Dimension(), O);
  }

  graph::Graph &G;

private:
  uint32_t push(graph::Node N, double Value, const std::vector<uint32_t> &In) {
    N.FirstInput = static_cast<uint32_t>(G.Inputs.size());
    N.NumInputs = static_cast<uint32_t>(In.size());
    for (uint32_t I : In)
      G.Inputs.push_back(I);
    G.Nodes.push_back(std::move(N));
    G.LeafValues.push_back(Value);
    return static_cast<uint32_t>(G.Nodes.size() - 1);
  }
};

} // namespace mlsc

#endif
