//===- Graph.h - The evaluation graph of a scenario ---------------*- C++
//-*-===//
//
// Lowering turns a scenario (a workload on a system) into a graph: leaves are
// IR values with their origins; other nodes apply an arithmetic operator or a
// wall formula (tagged with its wall, equation and citation) to earlier
// nodes. Nodes are stored in topological order, so one forward pass over
// plain doubles evaluates everything; changing a leaf and evaluating again
// needs no re-parsing or re-lowering.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_IR_GRAPH_H
#define MLSC_IR_GRAPH_H

#include "ir/Dimension.h"
#include "ir/Walls.h"

#include "llvm/Support/SMLoc.h"

#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlsc {

namespace graph {

enum class Op : uint8_t {
  Leaf,
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Neg,
  Min,
  Max,
  Ceil,
  Floor,
  Round,
  Abs,
  Sqrt,
  Log,
  Log2,
  Log10,
  Exp,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
  Not,
  Apply, ///< a Formula
};

const char *opSpelling(Op O);

/// Where a leaf's value came from: names and a source range, never a
/// pointer into the IR, so a graph outlives the IR it was lowered from.
struct LeafOrigin {
  std::string Entity;     ///< "H100_SXM"; "" for lets and formula constants
  std::string Field;      ///< "hbm.bandwidth", or a let's name
  llvm::SMRange Range;    ///< where it was written; invalid for defaults
  std::string Source;     ///< `from SOURCE`: the source record's name
  std::string SourceKind; ///< its `kind`: "datasheet", "estimate", ...
  std::vector<std::string> Notes;
  std::string Spelling;    ///< "3.35 TB/s" as written
  bool Assumed = false;    ///< a documented default, not given by the user
  bool Calibrated = false; ///< an efficiency or overlap factor
};

struct Node {
  Op Kind = Op::Leaf;
  uint32_t FirstInput = 0; ///< into Graph::Inputs
  uint32_t NumInputs = 0;
  /// Apply only: the formula's index in the runtime's formula library
  /// (runtime/walls/Formulas.h, FormulaId).
  uint16_t Formula = 0;
  Dimension Dim;
  bool IsBool = false;
  std::string Name;      ///< "decode.memory_time"; "" when anonymous
  uint32_t Origin = ~0u; ///< Leaf only: into Graph::Origins
};

/// An SLA condition or an assert, lowered to a boolean node.
struct Condition {
  std::string Text; ///< `ttft.p99 < 500 ms` as written
  llvm::SMRange Range;
  bool IsAssert = false;
  std::string Message; ///< an assert's message
  int NodeId = -1;     ///< -1: uses a metric no wall computes yet
  std::string Missing; ///< the unavailable metric, when NodeId < 0
};

struct Graph {
  std::string Scenario;
  std::vector<Node> Nodes; ///< topological: inputs precede users
  std::vector<uint32_t> Inputs;
  std::vector<LeafOrigin> Origins;
  std::vector<double> LeafValues;       ///< per node; meaningful for leaves
  llvm::StringMap<uint32_t> Named;      ///< metric and intermediate names
  std::vector<std::string> Metrics;     ///< metric names, in schema order
  std::vector<std::string> Unavailable; ///< metrics no wall computes yet
  std::vector<Condition> Conditions;
  bool Training = false;

  uint32_t inputOf(uint32_t NodeId, unsigned I) const {
    return Inputs[Nodes[NodeId].FirstInput + I];
  }
  int find(llvm::StringRef Name) const {
    auto It = Named.find(Name);
    return It == Named.end() ? -1 : static_cast<int>(It->second);
  }
};

} // namespace graph
} // namespace mlsc

#endif
