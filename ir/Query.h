//===- Query.h - Solve and sweep blocks, resolved against a graph -*- C++
//-*-===//
//
// lower-to-graph resolves each `solve` and `sweep` of the main file against
// its scenario's evaluation graph: the decision variables become leaves to
// set, the conditions and metrics become nodes to read (conditions that
// name no computed metric are diagnosed there). The runtime's solver and
// sweep executor then only set leaves and evaluate.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_IR_QUERY_H
#define MLSC_IR_QUERY_H

#include "ir/Dimension.h"
#include "ir/Graph.h"

#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlsc::query {

/// A decision variable: a leaf and the values it may take.
struct Variable {
  std::string Name;   ///< `unit_gpu.hbm.bandwidth` as written
  graph::NodeId Leaf; ///< node of the scenario graph
  Dimension Dim;
  llvm::SMRange Range;
  bool Continuous = false;    ///< `LO .. HI` without a step
  bool Integer = false;       ///< whole values only
  bool WholeValued = false;   ///< the field's domain is whole numbers
  double Lo = 0, Hi = 0;      ///< bounds in SI units
  std::vector<double> Values; ///< the grid, when not continuous
  /// An entity-valued variable (`node.accelerator in [H100_SXM, H200]`):
  /// Values are option indices 0..n-1; option i sets every leaf the graph
  /// reads from the current entity to Options[i] (Leaves[k] <- Options[i][k]).
  std::vector<graph::NodeId> Leaves;
  std::vector<std::vector<double>> Options;
  std::vector<std::string> Labels;
  /// A choice (`recompute in [none, full]`, a flag): one leaf, the options
  /// its codes, Labels the symbols.
  bool Choice = false;
  bool isEntity() const { return !Labels.empty(); }
};

/// A metric or condition read from the graph.
struct Term {
  std::string Text; ///< as written
  graph::NodeId Node;
  Dimension Dim;
  bool IsBool = false;
  bool Descending = false; ///< `sort_by { -throughput }`
  /// Added by the solver, not written: "feasible" (the scenario fits) and
  /// "queue_stable" (the serving queue has a steady state).
  bool Implicit = false;
  llvm::SMRange Range;
};

/// An anchor: a published measurement the scenario's value is checked
/// against (`mlsc validate`).
struct Anchor {
  double Published = 0;      ///< SI units
  std::string PublishedText; ///< as written
  bool Calibration = false;
  std::string Sets;      ///< a calibration anchor's factor
  std::string KnownMiss; ///< why a validation anchor misses, if it does
  std::string Source, SourceTitle, SourceUrl;
  /// An inverse anchor (`maximize`/`minimize`): the query's Vars,
  /// Direction and Conditions are a one-variable solve, run to this
  /// relative precision before Report[0] is read at the answer.
  bool Inverse = false;
  double SolvePrecision = 1e-3;
};

struct Query {
  enum class Kind { Solve, Sweep, Anchor } K = Kind::Solve;
  std::string Name;
  llvm::SMRange NameRange;
  size_t Graph = 0; ///< index into Compilation::Graphs
  std::vector<Variable> Vars;
  int Direction = -1;           ///< solve: -1 minimise, +1 maximise
  std::vector<Term> Conditions; ///< such_that / where
  std::vector<Term> Objectives; ///< solve over a grid: the Pareto metrics
  std::vector<Term> Report;     ///< sweep: the columns
  std::vector<Term> SortBy;
  double Tolerance = 1e-3; ///< relative
  double Top = 0;          ///< 0: all rows
  double MaxPoints = 1e7;
  std::string Output;        ///< sweep: file to write
  llvm::SMRange OutputRange; ///< where the file named it
  Anchor A; ///< anchor: the measurement (Report[0] is its metric)
};

/// A member of a fleet: a scenario of the main file, at its cluster's site.
struct FleetMember {
  std::string Scenario;
  std::string Workload; ///< the workload's entity name
  size_t Graph = 0;     ///< index into Compilation::Graphs
  std::string System;   ///< the system's entity name
  std::string Site;     ///< the cluster's site, "" for none
  std::string Pool;     ///< the fleet cluster it takes nodes from, "" for none
  double Nodes = 0;     ///< the cluster's nodes (0 for a node or accelerator)
  llvm::SMRange Range;  ///< where the fleet lists it
};

/// A cluster a fleet owns, and the nodes its members take from it.
struct FleetPool {
  std::string Cluster, Site;
  double Nodes = 0, Used = 0;
};

/// `fleet NAME { members { ... } clusters { ... } }`: scenarios judged
/// together (docs/language.md, "Fleets").
struct Fleet {
  std::string Name;
  llvm::SMRange NameRange;
  std::vector<FleetMember> Members;
  std::vector<FleetPool> Pools;
};

} // namespace mlsc::query

#endif
