//===- Render.h - The driver's renderers --------------------------*- C++
//-*-===//
//
// Each output of the driver is one renderer of a result the runtime built:
// the scorecard of a ScenarioResult as text or JSON; explanations, leaf
// lists and graph dumps of an evaluated graph; the wall list; solve and
// sweep results as text, CSV or JSON (docs/json-output.md).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_TOOLS_MLSC_RENDER_H
#define MLSC_TOOLS_MLSC_RENDER_H

#include "runtime/Fleet.h"
#include "runtime/Result.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace mlsc::driver {

/// `mlsc eval`: the three-level scorecard.
void printScorecard(const ScenarioResult &R, llvm::raw_ostream &OS);
void scorecardJSON(const ScenarioResult &R, llvm::json::OStream &J);

/// `mlsc eval` of a file with fleets: a fleet's members, sites and totals.
void printFleet(const FleetResult &F, llvm::raw_ostream &OS);
void fleetJSON(const FleetResult &F, llvm::json::OStream &J);

/// `mlsc explain`: the derivation of a value down to its literals.
void printExplain(const Evaluator &E, graph::NodeId Node, llvm::SourceMgr &SM,
                  llvm::raw_ostream &OS);
void explainJSON(const Evaluator &E, graph::NodeId Node, llvm::SourceMgr &SM,
                 llvm::json::OStream &J);

/// `explain --leaves`: the leaves a value depends on, grouped: imported
/// modules (registries), the scenario file, assumed defaults, formula
/// constants; estimates and calibrated factors marked.
void printLeaves(const Evaluator &E, graph::NodeId Node, llvm::SourceMgr &SM,
                 unsigned MainBuffer, llvm::raw_ostream &OS);
void leavesJSON(const Evaluator &E, graph::NodeId Node, llvm::SourceMgr &SM,
                unsigned MainBuffer, llvm::json::OStream &J);

/// `--emit=graph`.
void printGraph(const graph::Graph &G, llvm::SourceMgr &SM,
                llvm::raw_ostream &OS);

/// `mlsc walls`.
void printWalls(llvm::raw_ostream &OS);
void wallsJSON(llvm::json::OStream &J);

} // namespace mlsc::driver

#endif
